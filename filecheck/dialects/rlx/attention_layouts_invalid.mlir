// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// A layout is a permutation of [b, h, s, d] that keeps head_dim last, and the
// operands' shapes must agree once read through their layouts.

func.func @moves_head_dim(%q: tensor<2x4x3x8xf32>, %k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op q_layout [0, 3, 1, 2] must be a permutation of [0, 1, 2, 3] that keeps head_dim last (perm[3] == 3)}}
  %0 = rlx.attention %q, %k, %k q_layout = [0, 3, 1, 2] : tensor<2x4x3x8xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

// -----

func.func @not_a_permutation(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op out_layout [0, 1, 1, 3] must be a permutation of [0, 1, 2, 3] that keeps head_dim last (perm[3] == 3)}}
  %0 = rlx.attention %q, %q, %q out_layout = [0, 1, 1, 3] : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

// -----

func.func @wrong_rank(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op k_layout [0, 1, 2] must be a permutation of [0, 1, 2, 3] that keeps head_dim last (perm[3] == 3)}}
  %0 = rlx.attention %q, %q, %q k_layout = [0, 1, 2] : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

// -----

func.func @shapes_disagree_through_layout(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op query 2x3x8x4, key 2x8x3x4 and value 2x3x8x4 disagree: batch must match, key's and value's heads must divide the query's, key's head_dim must equal query's, and key and value need the same sequence length (shapes in the logical layout)}}
  %0 = rlx.attention %q, %q, %q k_layout = [0, 2, 1, 3] : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

// -----

func.func @result_in_wrong_layout(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op result #0 has type tensor<2x3x8x4xf32>, but the operands and attributes give tensor<2x8x3x4xf32>}}
  %0 = rlx.attention %q, %q, %q out_layout = [0, 2, 1, 3] : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

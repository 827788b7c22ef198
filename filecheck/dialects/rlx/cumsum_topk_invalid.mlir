// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// cumsum and topk.

func.func @cumsum_axis(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.cumsum' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.cumsum %x axis = 2 : tensor<4x5xf32>
  func.return
}

// -----

func.func @cumsum_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.cumsum' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.cumsum %x axis = 0 : tensor<4xi1>
  func.return
}

// -----

func.func @cumsum_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'rlx.cumsum' op axis 0 is out of range for a tensor of rank 0 (expected -0 <= axis < 0)}}
  %0 = rlx.cumsum %x axis = 0 : tensor<f32>
  func.return
}

// -----

func.func @topk_k_too_large(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.topk' op k = 6 must be in [0, 5] (axis 1 of 4x5)}}
  %0, %1 = rlx.topk %x k = 6 axis = 1 : tensor<4x5xf32> -> tensor<4x6xf32>, tensor<4x6xi64>
  func.return
}

// -----

func.func @topk_k_negative(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.topk' op k = -1 must be in [0, 5] (axis 1 of 4x5)}}
  %0, %1 = rlx.topk %x k = -1 axis = 1 : tensor<4x5xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  func.return
}

// -----

func.func @topk_indices_type(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.topk' op result #1 has type tensor<4x2xi32>, but the operands and attributes give tensor<4x2xi64>}}
  %0, %1 = rlx.topk %x k = 2 axis = 1 : tensor<4x5xf32> -> tensor<4x2xf32>, tensor<4x2xi32>
  func.return
}

// -----

func.func @topk_bool(%x: tensor<4x5xi1>) {
  // expected-error @+1 {{'rlx.topk' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0, %1 = rlx.topk %x k = 2 axis = 1 : tensor<4x5xi1> -> tensor<4x2xi1>, tensor<4x2xi64>
  func.return
}

// -----

func.func @topk_axis(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.topk' op axis -3 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0, %1 = rlx.topk %x k = 2 axis = -3 : tensor<4x5xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  func.return
}

// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// matmul: floating point, one element type, rank >= 2, matching contraction,
// broadcastable batch dimensions.

func.func @lhs_rank_1(%a: tensor<8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{'rlx.matmul' op matmul operands must have rank >= 2, got 8 and 8x3}}
  %0 = rlx.matmul %a, %b : tensor<8xf32>, tensor<8x3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @rhs_rank_0(%a: tensor<4x8xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'rlx.matmul' op matmul operands must have rank >= 2, got 4x8 and scalar}}
  %0 = rlx.matmul %a, %b : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @contraction(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error @+1 {{'rlx.matmul' op matmul contraction mismatch: lhs 4x8 has 8 columns but rhs 7x3 has 7 rows}}
  %0 = rlx.matmul %a, %b : tensor<4x8xf32>, tensor<7x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @batch(%a: tensor<2x4x8xf16>, %b: tensor<3x8x5xf16>) {
  // expected-error @+1 {{'rlx.matmul' op matmul batch dimensions have shapes that do not broadcast: 2, 3 (axis -1 is 2 in one and 3 in another; each axis must match or be 1)}}
  %0 = rlx.matmul %a, %b : tensor<2x4x8xf16>, tensor<3x8x5xf16> -> tensor<2x4x5xf16>
  func.return
}

// -----

func.func @batch_rank_4(%a: tensor<2x3x4x8xf32>, %b: tensor<4x8x5xf32>) {
  // expected-error @+1 {{'rlx.matmul' op matmul batch dimensions have shapes that do not broadcast: 2x3, 4 (axis -1 is 3 in one and 4 in another; each axis must match or be 1)}}
  %0 = rlx.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<4x8x5xf32> -> tensor<2x3x4x5xf32>
  func.return
}

// -----

func.func @ints(%a: tensor<4x8xi32>, %b: tensor<8x3xi32>) {
  // expected-error @+1 {{'rlx.matmul' op lhs has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.matmul %a, %b : tensor<4x8xi32>, tensor<8x3xi32> -> tensor<4x3xi32>
  func.return
}

// -----

func.func @types_differ(%a: tensor<4x8xf32>, %b: tensor<8x3xf16>) {
  // expected-error @+1 {{'rlx.matmul' op matmul operands: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.matmul %a, %b : tensor<4x8xf32>, tensor<8x3xf16> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @int_rhs(%a: tensor<4x8xbf16>, %b: tensor<8x3xi64>) {
  // expected-error @+1 {{'rlx.matmul' op matmul operands: element types differ (bf16 vs i64); they must be equal}}
  %0 = rlx.matmul %a, %b : tensor<4x8xbf16>, tensor<8x3xi64> -> tensor<4x3xbf16>
  func.return
}

// -----

func.func @result_shape(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{'rlx.matmul' op result #0 has type tensor<3x4xf32>, but the operands and attributes give tensor<4x3xf32>}}
  %0 = rlx.matmul %a, %b : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @result_batch(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+1 {{'rlx.matmul' op result #0 has type tensor<2x1x4x5xf32>, but the operands and attributes give tensor<2x3x4x5xf32>}}
  %0 = rlx.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x1x4x5xf32>
  func.return
}

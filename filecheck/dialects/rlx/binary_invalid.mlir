// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// The binary ops' verifier: equal element types of the right kind, numpy
// broadcasting, and the result type that follows from them.

func.func @no_broadcast(%a: tensor<4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'rlx.add' op operands have shapes that do not broadcast: 4x16, 8 (axis -1 is 16 in one and 8 in another; each axis must match or be 1)}}
  %0 = rlx.add %a, %b : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @no_broadcast_leading(%a: tensor<2x3x4xi32>, %b: tensor<5x4xi32>) {
  // expected-error @+1 {{'rlx.sub' op operands have shapes that do not broadcast: 2x3x4, 5x4 (axis -2 is 3 in one and 5 in another; each axis must match or be 1)}}
  %0 = rlx.sub %a, %b : tensor<2x3x4xi32>, tensor<5x4xi32> -> tensor<2x3x4xi32>
  func.return
}

// -----

// A zero extent broadcasts only against 1.
func.func @no_broadcast_zero(%a: tensor<0x4xf16>, %b: tensor<3x4xf16>) {
  // expected-error @+1 {{'rlx.mul' op operands have shapes that do not broadcast: 0x4, 3x4 (axis -2 is 0 in one and 3 in another; each axis must match or be 1)}}
  %0 = rlx.mul %a, %b : tensor<0x4xf16>, tensor<3x4xf16> -> tensor<3x4xf16>
  func.return
}

// -----

func.func @element_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'rlx.div' op operands: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.div %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @int_widths_differ(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.maximum' op operands: element types differ (i32 vs i64); they must be equal}}
  %0 = rlx.maximum %a, %b : tensor<4xi32>, tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @bool_operands(%a: tensor<2x3xi1>) {
  // expected-error @+1 {{'rlx.add' op operands has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.add %a, %a : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  func.return
}

// -----

func.func @bool_minimum(%a: tensor<3xi1>) {
  // expected-error @+1 {{'rlx.minimum' op operands has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.minimum %a, %a : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  func.return
}

// -----

func.func @pow_on_ints(%a: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.pow' op operands has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.pow %a, %a : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @result_shape(%a: tensor<4x1xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'rlx.mul' op result #0 has type tensor<4x1xf32>, but the operands and attributes give tensor<4x8xf32>}}
  %0 = rlx.mul %a, %b : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

func.func @result_element_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.sub' op result #0 has type tensor<4xf16>, but the operands and attributes give tensor<4xf32>}}
  %0 = rlx.sub %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

// Arithmetic ops keep the operands' element type; only comparisons give i1.
func.func @result_bool(%a: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.maximum' op result #0 has type tensor<4xi1>, but the operands and attributes give tensor<4xi64>}}
  %0 = rlx.maximum %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  func.return
}

// -----

func.func @result_rank(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.pow' op result #0 has type tensor<1x3xf32>, but the operands and attributes give tensor<3xf32>}}
  %0 = rlx.pow %a, %b : tensor<f32>, tensor<3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

func.func @minimum_no_broadcast(%a: tensor<2x2xbf16>, %b: tensor<3xbf16>) {
  // expected-error @+1 {{'rlx.minimum' op operands have shapes that do not broadcast: 2x2, 3 (axis -1 is 2 in one and 3 in another; each axis must match or be 1)}}
  %0 = rlx.minimum %a, %b : tensor<2x2xbf16>, tensor<3xbf16> -> tensor<2x3xbf16>
  func.return
}

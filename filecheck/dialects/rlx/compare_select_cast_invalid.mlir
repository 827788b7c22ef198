// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// Comparisons give i1; select needs an i1 condition and equal branch types,
// all three broadcasting; cast keeps the shape.

func.func @compare_result_not_i1(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.eq' op result #0 has type tensor<4xf32>, but the operands and attributes give tensor<4xi1>}}
  %0 = rlx.eq %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @compare_types_differ(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.lt' op operands: element types differ (i32 vs i64); they must be equal}}
  %0 = rlx.lt %a, %b : tensor<4xi32>, tensor<4xi64> -> tensor<4xi1>
  func.return
}

// -----

func.func @compare_no_broadcast(%a: tensor<4x3xf16>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'rlx.ge' op operands have shapes that do not broadcast: 4x3, 4 (axis -1 is 3 in one and 4 in another; each axis must match or be 1)}}
  %0 = rlx.ge %a, %b : tensor<4x3xf16>, tensor<4xf16> -> tensor<4x3xi1>
  func.return
}

// -----

func.func @compare_result_shape(%a: tensor<4x1xi1>, %b: tensor<5xi1>) {
  // expected-error @+1 {{'rlx.ne' op result #0 has type tensor<4x1xi1>, but the operands and attributes give tensor<4x5xi1>}}
  %0 = rlx.ne %a, %b : tensor<4x1xi1>, tensor<5xi1> -> tensor<4x1xi1>
  func.return
}

// -----

func.func @le_types_differ(%a: tensor<4xbf16>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'rlx.le' op operands: element types differ (bf16 vs f16); they must be equal}}
  %0 = rlx.le %a, %b : tensor<4xbf16>, tensor<4xf16> -> tensor<4xi1>
  func.return
}

// -----

func.func @gt_result_shape(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.gt' op result #0 has type tensor<3x2xi1>, but the operands and attributes give tensor<2x3xi1>}}
  %0 = rlx.gt %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<3x2xi1>
  func.return
}

// -----

func.func @select_condition_not_i1(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.select' op condition has element type f32, expected one of i1}}
  %0 = rlx.select %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @select_branches_differ(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'rlx.select' op select branches: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @select_no_broadcast(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'rlx.select' op operands have shapes that do not broadcast: 4x1, 4x8, 5 (axis -1 is 8 in one and 5 in another; each axis must match or be 1)}}
  %0 = rlx.select %c, %a, %b : tensor<4x1xi1>, tensor<4x8xf32>, tensor<5xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// The condition's shape takes part in the broadcast, too.
func.func @select_condition_shape(%c: tensor<3x1xi1>, %a: tensor<4x8xi32>) {
  // expected-error @+1 {{'rlx.select' op operands have shapes that do not broadcast: 3x1, 4x8, 4x8 (axis -2 is 3 in one and 4 in another; each axis must match or be 1)}}
  %0 = rlx.select %c, %a, %a : tensor<3x1xi1>, tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  func.return
}

// -----

func.func @select_result(%c: tensor<4x1xi1>, %a: tensor<8xi64>) {
  // expected-error @+1 {{'rlx.select' op result #0 has type tensor<8xi64>, but the operands and attributes give tensor<4x8xi64>}}
  %0 = rlx.select %c, %a, %a : tensor<4x1xi1>, tensor<8xi64>, tensor<8xi64> -> tensor<8xi64>
  func.return
}

// -----

func.func @cast_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'rlx.cast' op result has shape 8x4, expected 4x8}}
  %0 = rlx.cast %x : tensor<4x8xf32> -> tensor<8x4xf16>
  func.return
}

// -----

func.func @cast_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'rlx.cast' op result has shape 1, expected scalar}}
  %0 = rlx.cast %x : tensor<f32> -> tensor<1xi32>
  func.return
}

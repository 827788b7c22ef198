// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// Reductions and argmax: axes in range and distinct, element types, and the
// result shape that axes and keepdims give.

func.func @no_axes(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_sum' op axes must name at least one axis}}
  %0 = rlx.reduce_sum %x axes = [] : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @axis_too_large(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_mean' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.reduce_mean %x axes = [2] : tensor<4x16xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @axis_too_negative(%x: tensor<4x16xi32>) {
  // expected-error @+1 {{'rlx.reduce_max' op axis -3 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.reduce_max %x axes = [0, -3] : tensor<4x16xi32> -> tensor<i32>
  func.return
}

// -----

func.func @axis_twice(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_min' op axes [1, -1] name an axis twice}}
  %0 = rlx.reduce_min %x axes = [1, -1] : tensor<4x16xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @same_axis_twice(%x: tensor<4x16xi64>) {
  // expected-error @+1 {{'rlx.reduce_prod' op axes [0, 0] name an axis twice}}
  %0 = rlx.reduce_prod %x axes = [0, 0] : tensor<4x16xi64> -> tensor<16xi64>
  func.return
}

// -----

func.func @mean_of_ints(%x: tensor<4x16xi32>) {
  // expected-error @+1 {{'rlx.reduce_mean' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.reduce_mean %x axes = [1] : tensor<4x16xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @sum_of_bools(%x: tensor<4x16xi1>) {
  // expected-error @+1 {{'rlx.reduce_sum' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.reduce_sum %x axes = [1] : tensor<4x16xi1> -> tensor<4xi1>
  func.return
}

// -----

func.func @result_without_keepdims(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_sum' op result #0 has type tensor<4x1xf32>, but the operands and attributes give tensor<4xf32>}}
  %0 = rlx.reduce_sum %x axes = [1] : tensor<4x16xf32> -> tensor<4x1xf32>
  func.return
}

// -----

func.func @result_with_keepdims(%x: tensor<4x16xf16>) {
  // expected-error @+1 {{'rlx.reduce_max' op result #0 has type tensor<4xf16>, but the operands and attributes give tensor<4x1xf16>}}
  %0 = rlx.reduce_max %x axes = [1] keepdims : tensor<4x16xf16> -> tensor<4xf16>
  func.return
}

// -----

func.func @result_element_type(%x: tensor<4x16xbf16>) {
  // expected-error @+1 {{'rlx.reduce_min' op result #0 has type tensor<16xf32>, but the operands and attributes give tensor<16xbf16>}}
  %0 = rlx.reduce_min %x axes = [0] : tensor<4x16xbf16> -> tensor<16xf32>
  func.return
}

// -----

func.func @prod_all_axes(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'rlx.reduce_prod' op result #0 has type tensor<1xi32>, but the operands and attributes give tensor<i32>}}
  %0 = rlx.reduce_prod %x axes = [0, 1] : tensor<2x3xi32> -> tensor<1xi32>
  func.return
}

// -----

func.func @axes_not_i64(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_sum' op Expected attribute i64 but got i32}}
  %0 = "rlx.reduce_sum"(%x) <{axes = array<i32: 1>}> : (tensor<4x16xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @axes_missing(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reduce_mean' op property 'axes' expected in operation 'rlx.reduce_mean'}}
  %0 = "rlx.reduce_mean"(%x) : (tensor<4x16xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @argmax_result_not_i64(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.argmax' op result #0 has type tensor<4xi32>, but the operands and attributes give tensor<4xi64>}}
  %0 = rlx.argmax %x axis = 1 : tensor<4x16xf32> -> tensor<4xi32>
  func.return
}

// -----

func.func @argmax_keepdims(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.argmax' op result #0 has type tensor<4xi64>, but the operands and attributes give tensor<4x1xi64>}}
  %0 = rlx.argmax %x axis = -1 keepdims : tensor<4x16xf32> -> tensor<4xi64>
  func.return
}

// -----

func.func @argmax_axis(%x: tensor<4x16xi64>) {
  // expected-error @+1 {{'rlx.argmax' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.argmax %x axis = 2 : tensor<4x16xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @argmax_bools(%x: tensor<4x16xi1>) {
  // expected-error @+1 {{'rlx.argmax' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.argmax %x axis = 0 : tensor<4x16xi1> -> tensor<16xi64>
  func.return
}

// -----

func.func @argmax_axis_not_i64(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.argmax' op Expected attribute i64 but got i32}}
  %0 = "rlx.argmax"(%x) <{axis = 1 : i32}> : (tensor<4x16xf32>) -> tensor<4xi64>
  func.return
}

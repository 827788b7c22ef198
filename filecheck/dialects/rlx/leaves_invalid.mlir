// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// rlx.param needs a non-empty string name and a static tensor type;
// rlx.constant's result type is its value's type.

func.func @param_empty_name() {
  // expected-error @+1 {{'rlx.param' op rlx.param needs a non-empty name}}
  %0 = rlx.param "" : tensor<4xf32>
  func.return
}

// -----

func.func @param_dynamic() {
  // expected-error @+1 {{'rlx.param' op result #0 must have a static shape, got tensor<?x4xf32>}}
  %0 = rlx.param "w" : tensor<?x4xf32>
  func.return
}

// -----

func.func @param_f64() {
  // expected-error @+1 {{'rlx.param' op result #0 has unsupported element type f64 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.param "w" : tensor<4xf64>
  func.return
}

// -----

func.func @param_name_not_string() {
  // expected-error @+1 {{'rlx.param' op 1 : i64 should be of base attribute string}}
  %0 = "rlx.param"() <{name = 1 : i64}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @param_no_name() {
  // expected-error @+1 {{'rlx.param' op property 'name' expected in operation 'rlx.param'}}
  %0 = "rlx.param"() : () -> tensor<4xf32>
  func.return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'rlx.constant' op attribute tensor<4xf16> expected from variable 'T', but got tensor<4xf32>}}
  %0 = "rlx.constant"() <{value = dense<1.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf16>
  func.return
}

// -----

func.func @constant_shape_mismatch() {
  // expected-error @+1 {{'rlx.constant' op attribute tensor<2x2xi32> expected from variable 'T', but got tensor<4xi32>}}
  %0 = "rlx.constant"() <{value = dense<1> : tensor<4xi32>}> : () -> tensor<2x2xi32>
  func.return
}

// -----

func.func @constant_f64() {
  // expected-error @+1 {{'rlx.constant' op result #0 has unsupported element type f64 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.constant dense<1.000000e+00> : tensor<4xf64>
  func.return
}

// -----

func.func @constant_i8() {
  // expected-error @+1 {{'rlx.constant' op result #0 has unsupported element type i8 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.constant dense<1> : tensor<4xi8>
  func.return
}

// -----

func.func @constant_not_dense() {
  // expected-error @+1 {{'rlx.constant' op 1.000000e+00 : f32 should be of base attribute dense}}
  %0 = "rlx.constant"() <{value = 1.000000e+00 : f32}> : () -> tensor<f32>
  func.return
}

// -----

func.func @constant_no_value() {
  // expected-error @+1 {{'rlx.constant' op property 'value' expected in operation 'rlx.constant'}}
  %0 = "rlx.constant"() : () -> tensor<4xf32>
  func.return
}

// Regression (found by the lit suite, fixed): rlx.elementwise_region documents its body as "region-free arith and
// math ops on scalars", but the verifier checks only the ops' dialect: an arith
// or math op on tensors (or vectors) in the body is accepted.
// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

func.func @tensor_constant_in_body(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op 'arith.constant' may not appear in an elementwise region body: only region-free arith and math ops on scalars}}
  %0 = rlx.elementwise_region ins(%a : tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: f32):
    %t = arith.constant dense<1.000000e+00> : tensor<4xf32>
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @vector_math_in_body(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op 'arith.constant' may not appear in an elementwise region body: only region-free arith and math ops on scalars}}
  %0 = rlx.elementwise_region ins(%a : tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: f32):
    %v = arith.constant dense<1.000000e+00> : vector<4xf32>
    %e = math.exp %v : vector<4xf32>
    rlx.yield %x : f32
  }
  func.return
}

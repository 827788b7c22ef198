// Regression (found by the lit suite, fixed): ops that check "x broadcasts to y" call broadcast_shapes(x, y),
// which raises its own generic message first, so the op's specific message is
// never reached when the shapes are incompatible: rlx.expand says "operands
// have shapes that do not broadcast: 3x16, 4x16" (expand has one operand), and
// rlx.elementwise_region says "inputs have shapes that do not broadcast: 3, 4x8"
// (4x8 is the result's shape, not an input's).
// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

func.func @expand_incompatible(%x: tensor<3x16xf32>) {
  // expected-error @+1 {{'rlx.expand' op cannot expand 3x16 to 4x16: each input axis must equal the result's or be 1}}
  %0 = rlx.expand %x : tensor<3x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @region_input_incompatible(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op input #1 of shape 3 does not broadcast to the result shape 4x8}}
  %0 = rlx.elementwise_region ins(%a, %b : tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    rlx.yield %s : f32
  }
  func.return
}

// Regression (found by the lit suite, fixed): rlx.conv2d checks that stride and dilation are positive but not the
// weight's kernel extents. A 0x3 kernel is accepted, and the window arithmetic
// then gives an output taller than the input (8 + 1 = 9 rows for a 1x3x8x8
// input, no padding): rlxc-opt prints the op back instead of an error.
// (max_pool2d/avg_pool2d reject a zero kernel: "kernel must be two positive integers".)
// RUN: rlxc-opt %s --verify-diagnostics

func.func @zero_height_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x0x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x0x3xf32> -> tensor<1x4x9x6xf32>
  func.return
}

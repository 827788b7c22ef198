// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Direct convolution and pools: a thread per output element.
// CHECK: float acc = bias[oc];
// CHECK: for (int ci = 0; ci < 3; ++ci)
// CHECK: const long long iy = oy * 1 - 1 + ky * 1; if (iy < 0 || iy >= 8) continue;
// CHECK: acc = rlx_maxf(acc, v)
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %c = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %p = rlx.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return %p : tensor<1x4x4x4xf32>
}

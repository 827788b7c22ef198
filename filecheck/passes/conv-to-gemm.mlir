// RUN: rlxc-opt %s --split-input-file -p rlx-conv-to-gemm | filecheck %s
// RUN: rlxc-opt %s --split-input-file -p 'rlx-conv-to-gemm{max_col_bytes=1000}' | filecheck %s --check-prefix=SMALL
// RUN: rlxc-opt %s --split-input-file -p 'rlx-optimize{target=cuda}' | filecheck %s --check-prefix=FUSED

// A 3x3 convolution with a bias, then a ReLU: the input transposed to NHWC,
// its patches channels last ([n, oh, ow, kh*kw*c]), the weight transposed to
// OHWI and reshaped to [o, kh*kw*c], one linear with the bias, and the result
// transposed back to NCHW. The transpose moves below the ReLU, which becomes
// the linear's activation (cuBLASLt's bias + ReLU epilogue).
// CHECK-LABEL: func.func @conv3x3
// CHECK-NEXT: %w = rlx.param "w" : tensor<8x4x3x3xf32>
// CHECK-NEXT: %b = rlx.param "b" : tensor<8xf32>
// CHECK-NEXT: %[[X:.*]] = rlx.transpose %x perm = [0, 2, 3, 1] : tensor<2x4x6x6xf32> -> tensor<2x6x6x4xf32>
// CHECK-NEXT: %[[P:.*]] = rlx.im2col %[[X]] kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x6x6x4xf32> -> tensor<2x6x6x36xf32>
// CHECK-NEXT: %[[T:.*]] = rlx.transpose %w perm = [0, 2, 3, 1] : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
// CHECK-NEXT: %[[W:.*]] = rlx.reshape %[[T]] : tensor<8x3x3x4xf32> -> tensor<8x36xf32>
// CHECK-NEXT: %[[L:.*]] = rlx.linear %[[P]], %[[W]] bias %b activation "relu" : tensor<2x6x6x36xf32>, tensor<8x36xf32>, tensor<8xf32> -> tensor<2x6x6x8xf32>
// CHECK-NEXT: %{{.*}} = rlx.transpose %[[L]] perm = [0, 3, 1, 2] : tensor<2x6x6x8xf32> -> tensor<2x8x6x6xf32>
// CHECK-NEXT: func.return
// The patches take 2 * 36 * 36 * 4 bytes: over a limit of 1000 the direct kernel stays.
// SMALL-LABEL: func.func @conv3x3
// SMALL: rlx.conv2d
// SMALL-NOT: rlx.linear
func.func @conv3x3(%x: tensor<2x4x6x6xf32>) -> tensor<2x8x6x6xf32> {
  %w = rlx.param "w" : tensor<8x4x3x3xf32>
  %b = rlx.param "b" : tensor<8xf32>
  %y = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32> -> tensor<2x8x6x6xf32>
  %r = rlx.relu %y : tensor<2x8x6x6xf32>
  func.return %r : tensor<2x8x6x6xf32>
}

// -----

// A residual block: conv, ReLU, a 1x1 conv (no patches: the NHWC input is the
// gemm's operand), the residual add and a ReLU. The transposes between the
// convolutions cancel (canonicalize), the add and ReLU run channels last as
// one elementwise region, and only the result is transposed back to NCHW.
// CHECK-LABEL: func.func @block
// CHECK: rlx.im2col
// CHECK: %[[A:.*]] = rlx.linear {{.*}} activation "relu" : tensor<1x5x5x36xf16>, tensor<4x36xf16>, tensor<4xf16> -> tensor<1x5x5x4xf16>
// CHECK: %[[B:.*]] = rlx.linear %[[A]], {{.*}} : tensor<1x5x5x4xf16>, tensor<4x4xf16>, tensor<4xf16> -> tensor<1x5x5x4xf16>
// CHECK-NEXT: %[[S:.*]] = rlx.add %[[B]], %[[A]] : tensor<1x5x5x4xf16>, tensor<1x5x5x4xf16> -> tensor<1x5x5x4xf16>
// CHECK-NEXT: %[[R:.*]] = rlx.relu %[[S]] : tensor<1x5x5x4xf16>
// CHECK-NEXT: %{{.*}} = rlx.transpose %[[R]] perm = [0, 3, 1, 2] : tensor<1x5x5x4xf16> -> tensor<1x4x5x5xf16>
// Under the limit of 1000 bytes only the 1x1 convolution, which needs no patches, is rewritten.
// SMALL-LABEL: func.func @block
// SMALL: rlx.conv2d %x
// SMALL-NOT: rlx.conv2d
// SMALL: rlx.linear
// FUSED-LABEL: func.func @block
// FUSED: rlx.transpose %x perm = [0, 2, 3, 1]
// FUSED-NEXT: rlx.im2col
// FUSED: rlx.linear {{.*}} activation "relu"
// FUSED: rlx.linear
// FUSED-NEXT: rlx.elementwise_region
// FUSED: arith.addf
// FUSED: arith.maximumf
// FUSED: rlx.transpose {{.*}} perm = [0, 3, 1, 2]
// FUSED-NOT: rlx.transpose
func.func @block(%x: tensor<1x4x5x5xf16>, %w1: tensor<4x4x3x3xf16>, %b1: tensor<4xf16>, %w2: tensor<4x4x1x1xf16>, %b2: tensor<4xf16>) -> tensor<1x4x5x5xf16> {
  %c1 = rlx.conv2d %x, %w1 bias %b1 stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x5x5xf16>, tensor<4x4x3x3xf16>, tensor<4xf16> -> tensor<1x4x5x5xf16>
  %r1 = rlx.relu %c1 : tensor<1x4x5x5xf16>
  %c2 = rlx.conv2d %r1, %w2 bias %b2 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x5x5xf16>, tensor<4x4x1x1xf16>, tensor<4xf16> -> tensor<1x4x5x5xf16>
  %s = rlx.add %c2, %r1 : tensor<1x4x5x5xf16>, tensor<1x4x5x5xf16> -> tensor<1x4x5x5xf16>
  %r2 = rlx.relu %s : tensor<1x4x5x5xf16>
  func.return %r2 : tensor<1x4x5x5xf16>
}

// -----

// Grouped and depthwise convolutions keep the direct kernel.
// CHECK-LABEL: func.func @grouped
// CHECK-NEXT: rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4
// CHECK-NOT: rlx.im2col
// SMALL-LABEL: func.func @grouped
// FUSED-LABEL: func.func @grouped
// FUSED: rlx.conv2d
func.func @grouped(%x: tensor<1x4x8x8xbf16>, %w: tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16> {
  %y = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16> -> tensor<1x4x8x8xbf16>
  func.return %y : tensor<1x4x8x8xbf16>
}

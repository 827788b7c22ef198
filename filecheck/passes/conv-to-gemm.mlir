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
// convolutions cancel, the residual add becomes the second linear's
// `residual` (cuBLASLt's C) and the ReLU its activation, and only the result
// is transposed back to NCHW.
// CHECK-LABEL: func.func @block
// CHECK: rlx.im2col
// CHECK: %[[A:.*]] = rlx.linear {{.*}} activation "relu" : tensor<1x5x5x72xf16>, tensor<8x72xf16>, tensor<8xf16> -> tensor<1x5x5x8xf16>
// CHECK: %[[B:.*]] = rlx.linear %[[A]], {{.*}} bias %b2 residual %[[A]] activation "relu" : tensor<1x5x5x8xf16>, tensor<8x8xf16>, tensor<8xf16>, tensor<1x5x5x8xf16> -> tensor<1x5x5x8xf16>
// CHECK-NEXT: %{{.*}} = rlx.transpose %[[B]] perm = [0, 3, 1, 2] : tensor<1x5x5x8xf16> -> tensor<1x8x5x5xf16>
// Under the limit of 1000 bytes only the 1x1 convolution, which needs no patches, is rewritten.
// SMALL-LABEL: func.func @block
// SMALL: rlx.conv2d %x
// SMALL-NOT: rlx.conv2d
// SMALL: rlx.linear
// FUSED-LABEL: func.func @block
// FUSED: rlx.transpose %x perm = [0, 2, 3, 1]
// FUSED-NEXT: rlx.im2col
// FUSED: rlx.linear {{.*}} activation "relu"
// FUSED: rlx.linear {{.*}} residual {{.*}} activation "relu"
// FUSED-NEXT: rlx.transpose {{.*}} perm = [0, 3, 1, 2]
// FUSED-NOT: rlx.transpose
// FUSED-NOT: rlx.elementwise_region
func.func @block(%x: tensor<1x8x5x5xf16>, %w1: tensor<8x8x3x3xf16>, %b1: tensor<8xf16>, %w2: tensor<8x8x1x1xf16>, %b2: tensor<8xf16>) -> tensor<1x8x5x5xf16> {
  %c1 = rlx.conv2d %x, %w1 bias %b1 stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<1x8x5x5xf16>, tensor<8x8x3x3xf16>, tensor<8xf16> -> tensor<1x8x5x5xf16>
  %r1 = rlx.relu %c1 : tensor<1x8x5x5xf16>
  %c2 = rlx.conv2d %r1, %w2 bias %b2 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x8x5x5xf16>, tensor<8x8x1x1xf16>, tensor<8xf16> -> tensor<1x8x5x5xf16>
  %s = rlx.add %c2, %r1 : tensor<1x8x5x5xf16>, tensor<1x8x5x5xf16> -> tensor<1x8x5x5xf16>
  %r2 = rlx.relu %s : tensor<1x8x5x5xf16>
  func.return %r2 : tensor<1x8x5x5xf16>
}

// -----

// An image of three channels: the patches read the NCHW input as it is (no
// transpose) and are widened with zeros from 7 * 7 * 3 = 147 to 152 columns
// (whole 16-byte rows of f16), the weight padded to match.
// CHECK-LABEL: func.func @image
// CHECK-NOT: rlx.transpose %x
// CHECK: %[[P:.*]] = rlx.im2col %x kernel = [7, 7] stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] channels_first columns = 152 : tensor<2x3x16x16xf16> -> tensor<2x8x8x152xf16>
// CHECK: %[[W:.*]] = rlx.reshape {{.*}} -> tensor<16x147xf16>
// CHECK-NEXT: %[[WP:.*]] = rlx.pad %[[W]] low = [0, 0] high = [0, 5] mode = "constant" value = 0.000000e+00 : tensor<16x147xf16> -> tensor<16x152xf16>
// CHECK-NEXT: rlx.linear %[[P]], %[[WP]] bias %b : tensor<2x8x8x152xf16>, tensor<16x152xf16>, tensor<16xf16> -> tensor<2x8x8x16xf16>
// SMALL-LABEL: func.func @image
// FUSED-LABEL: func.func @image
func.func @image(%x: tensor<2x3x16x16xf16>, %w: tensor<16x3x7x7xf16>, %b: tensor<16xf16>) -> tensor<2x16x8x8xf16> {
  %y = rlx.conv2d %x, %w bias %b stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : tensor<2x3x16x16xf16>, tensor<16x3x7x7xf16>, tensor<16xf16> -> tensor<2x16x8x8xf16>
  func.return %y : tensor<2x16x8x8xf16>
}

// -----

// A pool between convolutions runs channels last: the stem's transposes
// cancel around it, and the global average pool's [n, 1, 1, c] result goes
// back to NCHW by a transpose of unit axes (a view, after canonicalize).
// CHECK-LABEL: func.func @stem
// CHECK: %[[S:.*]] = rlx.linear {{.*}} activation "relu" : tensor<1x4x4x36xf32>, tensor<8x36xf32>, tensor<8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[P:.*]] = rlx.max_pool2d %[[S]] kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] channels_last : tensor<1x4x4x8xf32> -> tensor<1x2x2x8xf32>
// CHECK: %[[L:.*]] = rlx.linear %[[P]], {{.*}} -> tensor<1x2x2x8xf32>
// CHECK-NEXT: %[[G:.*]] = rlx.avg_pool2d %[[L]] kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] channels_last : tensor<1x2x2x8xf32> -> tensor<1x1x1x8xf32>
// CHECK-NEXT: %{{.*}} = rlx.transpose %[[G]] perm = [0, 3, 1, 2] : tensor<1x1x1x8xf32> -> tensor<1x8x1x1xf32>
// FUSED-LABEL: func.func @stem
// FUSED: rlx.avg_pool2d {{.*}} channels_last
// FUSED-NEXT: rlx.reshape {{.*}} : tensor<1x1x1x8xf32> -> tensor<1x8x1x1xf32>
// FUSED-NOT: rlx.transpose
func.func @stem(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<1x8x1x1xf32> {
  %c = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>, tensor<8xf32> -> tensor<1x8x4x4xf32>
  %r = rlx.relu %c : tensor<1x8x4x4xf32>
  %p = rlx.max_pool2d %r kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x8x4x4xf32> -> tensor<1x8x2x2xf32>
  %c2 = rlx.conv2d %p, %w2 bias %b2 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x8x2x2xf32>, tensor<8x8x1x1xf32>, tensor<8xf32> -> tensor<1x8x2x2xf32>
  %g = rlx.avg_pool2d %c2 kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x8x2x2xf32> -> tensor<1x8x1x1xf32>
  func.return %g : tensor<1x8x1x1xf32>
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

// -----

// MobileNet's inverted residual: the depthwise convolution between two 1x1
// gemms runs channels last; no activation goes back to NCHW before the
// block's output (the other transposes are the input's and the weights').
// Its weight is read HWIO (a transpose of it, of a param at compile time).
// The ReLU6s (ONNX's Clip: max with 0, then min with 6) fold into the
// depthwise convolution: the expansion's as bounds on what it reads, its
// own as bounds on its result; no elementwise op is left.
// CHECK-LABEL: func.func @depthwise_chain
// CHECK: rlx.linear
// CHECK-NOT: perm = [0, 3, 1, 2]
// CHECK: %[[W:.*]] = rlx.transpose %dw perm = [2, 3, 1, 0] : tensor<32x1x3x3xf16> -> tensor<3x3x1x32xf16>
// CHECK-NOT: perm = [0, 3, 1, 2]
// CHECK: rlx.conv2d %{{.*}}, %[[W]] stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 32 channels_last weight_hwio input_min 0.000000e+00 input_max 6.000000e+00 clamp_min 0.000000e+00 clamp_max 6.000000e+00 : tensor<1x8x8x32xf16>, tensor<3x3x1x32xf16> -> tensor<1x4x4x32xf16>
// CHECK-NOT: perm = [0, 3, 1, 2]
// CHECK-NOT: rlx.maximum
// CHECK-NOT: rlx.minimum
// CHECK: rlx.linear
// CHECK-NEXT: rlx.transpose %{{.*}} perm = [0, 3, 1, 2]
// SMALL-LABEL: func.func @depthwise_chain
// FUSED-LABEL: func.func @depthwise_chain
// FUSED-NOT: rlx.elementwise_region
// FUSED: rlx.conv2d {{.*}} channels_last weight_hwio input_min
// FUSED-NOT: rlx.elementwise_region
// FUSED: func.return
func.func @depthwise_chain(%x: tensor<1x8x8x8xf16>, %ew: tensor<32x8x1x1xf16>, %dw: tensor<32x1x3x3xf16>, %pw: tensor<8x32x1x1xf16>) -> tensor<1x8x4x4xf16> {
  %zero = rlx.constant dense<0.0> : tensor<f16>
  %six = rlx.constant dense<6.0> : tensor<f16>
  %e = rlx.conv2d %x, %ew stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x8x8x8xf16>, tensor<32x8x1x1xf16> -> tensor<1x32x8x8xf16>
  %e0 = rlx.maximum %e, %zero : tensor<1x32x8x8xf16>, tensor<f16> -> tensor<1x32x8x8xf16>
  %e6 = rlx.minimum %e0, %six : tensor<1x32x8x8xf16>, tensor<f16> -> tensor<1x32x8x8xf16>
  %d = rlx.conv2d %e6, %dw stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 32 : tensor<1x32x8x8xf16>, tensor<32x1x3x3xf16> -> tensor<1x32x4x4xf16>
  %d0 = rlx.maximum %d, %zero : tensor<1x32x4x4xf16>, tensor<f16> -> tensor<1x32x4x4xf16>
  %d6 = rlx.minimum %d0, %six : tensor<1x32x4x4xf16>, tensor<f16> -> tensor<1x32x4x4xf16>
  %p = rlx.conv2d %d6, %pw stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x32x4x4xf16>, tensor<8x32x1x1xf16> -> tensor<1x8x4x4xf16>
  func.return %p : tensor<1x8x4x4xf16>
}

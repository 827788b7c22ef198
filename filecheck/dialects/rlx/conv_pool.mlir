// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of rlx.conv2d (NCHW input, OIHW weight, optional bias, groups) and the 2-D pools.

// CHECK-LABEL: func.func @conv2d(
func.func @conv2d(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} bias %{{.*}} stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %1 = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} bias %{{.*}} stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = rlx.conv2d %x, %w bias %b stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 2] padding = [0, 1, 2, 0] dilation = [2, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x4xf32>
  %3 = rlx.conv2d %x, %w stride = [1, 2] padding = [0, 1, 2, 0] dilation = [2, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x4xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Grouped and depthwise convolutions: weight.shape[1] * groups == input channels.
// CHECK-LABEL: func.func @conv2d_groups(
func.func @conv2d_groups(%x: tensor<1x4x5x5xf16>, %wg: tensor<6x2x3x3xf16>, %bg: tensor<6xf16>, %wd: tensor<4x1x3x3xf16>, %xb: tensor<1x2x4x4xbf16>, %w1: tensor<2x2x1x1xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x5x5xf16>, tensor<6x2x3x3xf16> -> tensor<1x6x3x3xf16>
  %0 = rlx.conv2d %x, %wg stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x5x5xf16>, tensor<6x2x3x3xf16> -> tensor<1x6x3x3xf16>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} bias %{{.*}} stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 2 : tensor<1x4x5x5xf16>, tensor<6x2x3x3xf16>, tensor<6xf16> -> tensor<1x6x5x5xf16>
  %1 = rlx.conv2d %x, %wg bias %bg stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 2 : tensor<1x4x5x5xf16>, tensor<6x2x3x3xf16>, tensor<6xf16> -> tensor<1x6x5x5xf16>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x5x5xf16>, tensor<4x1x3x3xf16> -> tensor<1x4x5x5xf16>
  %2 = rlx.conv2d %x, %wd stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x5x5xf16>, tensor<4x1x3x3xf16> -> tensor<1x4x5x5xf16>
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x4x4xbf16>, tensor<2x2x1x1xbf16> -> tensor<1x2x4x4xbf16>
  %3 = rlx.conv2d %xb, %w1 stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x4x4xbf16>, tensor<2x2x1x1xbf16> -> tensor<1x2x4x4xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @max_pool2d(
func.func @max_pool2d(%x: tensor<2x3x8x8xf32>, %h: tensor<1x1x5x7xf16>, %b: tensor<1x2x4x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  %1 = rlx.max_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [2, 3] stride = [2, 2] padding = [0, 1, 1, 2] : tensor<1x1x5x7xf16> -> tensor<1x1x3x4xf16>
  %2 = rlx.max_pool2d %h kernel = [2, 3] stride = [2, 2] padding = [0, 1, 1, 2] : tensor<1x1x5x7xf16> -> tensor<1x1x3x4xf16>
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [4, 4] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x2x4x4xbf16> -> tensor<1x2x1x1xbf16>
  %3 = rlx.max_pool2d %b kernel = [4, 4] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x2x4x4xbf16> -> tensor<1x2x1x1xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// Without count_include_pad only real elements are counted; with it, the whole window.
// CHECK-LABEL: func.func @avg_pool2d(
func.func @avg_pool2d(%x: tensor<2x3x8x8xf32>, %h: tensor<1x1x5x7xf16>, %b: tensor<1x2x4x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  %0 = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  %1 = rlx.avg_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] count_include_pad : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  %2 = rlx.avg_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] count_include_pad : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [2, 3] stride = [2, 2] padding = [0, 1, 1, 2] count_include_pad : tensor<1x1x5x7xf16> -> tensor<1x1x3x4xf16>
  %3 = rlx.avg_pool2d %h kernel = [2, 3] stride = [2, 2] padding = [0, 1, 1, 2] count_include_pad : tensor<1x1x5x7xf16> -> tensor<1x1x3x4xf16>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x2x4x4xbf16> -> tensor<1x2x3x3xbf16>
  %4 = rlx.avg_pool2d %b kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x2x4x4xbf16> -> tensor<1x2x3x3xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// Dilation (printed only where not [1, 1]) and ceil_mode (ONNX: round the extent up, but the
// last window must start inside the input or its begin padding).
// CHECK-LABEL: func.func @pool_dilation_ceil(
func.func @pool_dilation_ceil(%x: tensor<1x1x4x4xf32>, %y: tensor<1x2x5x7xf16>, %z: tensor<1x1x2x2xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [0, 0, 0, 0] ceil_mode : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  %0 = rlx.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [0, 0, 0, 0] ceil_mode : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 2] : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  %1 = rlx.max_pool2d %x kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 2] : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  %2 = rlx.max_pool2d %x kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [3, 2] stride = [2, 2] padding = [1, 0, 1, 1] dilation = [1, 2] ceil_mode count_include_pad : tensor<1x2x5x7xf16> -> tensor<1x2x3x4xf16>
  %3 = rlx.avg_pool2d %y kernel = [3, 2] stride = [2, 2] padding = [1, 0, 1, 1] dilation = [1, 2] ceil_mode count_include_pad : tensor<1x2x5x7xf16> -> tensor<1x2x3x4xf16>
  // The last window would start on the end padding: one output, not two.
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [3, 3] stride = [3, 3] padding = [1, 1, 1, 1] ceil_mode : tensor<1x1x2x2xbf16> -> tensor<1x1x1x1xbf16>
  %4 = rlx.avg_pool2d %z kernel = [3, 3] stride = [3, 3] padding = [1, 1, 1, 1] ceil_mode : tensor<1x1x2x2xbf16> -> tensor<1x1x1x1xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// im2col: NHWC [n, h, w, c] -> [n, oh, ow, kh*kw*c], a convolution's patches channels last.
// CHECK-LABEL: func.func @im2col(
func.func @im2col(%x: tensor<2x8x8x3xf32>, %h: tensor<1x5x7x2xf16>, %b: tensor<3x1x9x4xbf16>, %n: tensor<2x3x8x8xf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.im2col %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x8x8x3xf32> -> tensor<2x8x8x27xf32>
  %0 = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : tensor<2x8x8x3xf32> -> tensor<2x8x8x27xf32>
  // CHECK-NEXT: %{{.*}} = rlx.im2col %{{.*}} kernel = [3, 2] stride = [2, 1] padding = [1, 0, 2, 1] dilation = [1, 2] : tensor<1x5x7x2xf16> -> tensor<1x3x6x12xf16>
  %1 = rlx.im2col %h kernel = [3, 2] stride = [2, 1] padding = [1, 0, 2, 1] dilation = [1, 2] : tensor<1x5x7x2xf16> -> tensor<1x3x6x12xf16>
  // CHECK-NEXT: %{{.*}} = rlx.im2col %{{.*}} kernel = [1, 5] stride = [1, 2] padding = [0, 2, 0, 2] dilation = [1, 1] : tensor<3x1x9x4xbf16> -> tensor<3x1x5x20xbf16>
  %2 = rlx.im2col %b kernel = [1, 5] stride = [1, 2] padding = [0, 2, 0, 2] dilation = [1, 1] : tensor<3x1x9x4xbf16> -> tensor<3x1x5x20xbf16>
  // An NCHW input, rows widened to 152 columns with zeros.
  // CHECK-NEXT: %{{.*}} = rlx.im2col %{{.*}} kernel = [7, 7] stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] channels_first columns = 152 : tensor<2x3x8x8xf16> -> tensor<2x4x4x152xf16>
  %3 = rlx.im2col %n kernel = [7, 7] stride = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] channels_first columns = 152 : tensor<2x3x8x8xf16> -> tensor<2x4x4x152xf16>
  // CHECK-NEXT: func.return
  func.return
}

// Pools channels last: NHWC in and out.
// A convolution channels last: NHWC input and result, OIHW weight (depthwise here).
// CHECK-LABEL: func.func @conv2d_channels_last(
func.func @conv2d_channels_last(%x: tensor<2x8x8x16xf16>, %w: tensor<16x1x3x3xf16>, %b: tensor<16xf16>, %wh: tensor<3x3x1x16xf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} bias %{{.*}} stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 channels_last : tensor<2x8x8x16xf16>, tensor<16x1x3x3xf16>, tensor<16xf16> -> tensor<2x4x4x16xf16>
  %0 = rlx.conv2d %x, %w bias %b stride = [2, 2] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 channels_last : tensor<2x8x8x16xf16>, tensor<16x1x3x3xf16>, tensor<16xf16> -> tensor<2x4x4x16xf16>
  // Clamps of the input (before the window reads it) and of the result (ReLU6's folded form).
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 channels_last input_min -1.000000e+00 input_max 6.000000e+00 clamp_min 0.000000e+00 clamp_max 6.000000e+00 : tensor<2x8x8x16xf16>, tensor<16x1x3x3xf16> -> tensor<2x8x8x16xf16>
  %1 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 channels_last input_min -1.0 input_max 6.0 clamp_min 0.0 clamp_max 6.0 : tensor<2x8x8x16xf16>, tensor<16x1x3x3xf16> -> tensor<2x8x8x16xf16>
  // An HWIO weight ([kh, kw, in/groups, out]).
  // CHECK-NEXT: %{{.*}} = rlx.conv2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 16 channels_last weight_hwio : tensor<2x8x8x16xf16>, tensor<3x3x1x16xf16> -> tensor<2x6x6x16xf16>
  %2 = rlx.conv2d %x, %wh stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 16 channels_last weight_hwio : tensor<2x8x8x16xf16>, tensor<3x3x1x16xf16> -> tensor<2x6x6x16xf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @pools_channels_last(
func.func @pools_channels_last(%x: tensor<2x8x8x3xf32>, %h: tensor<1x5x7x2xf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.max_pool2d %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] channels_last : tensor<2x8x8x3xf32> -> tensor<2x4x4x3xf32>
  %0 = rlx.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] channels_last : tensor<2x8x8x3xf32> -> tensor<2x4x4x3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.avg_pool2d %{{.*}} kernel = [3, 2] stride = [2, 2] padding = [1, 0, 1, 1] dilation = [1, 2] ceil_mode count_include_pad channels_last : tensor<1x5x7x2xf16> -> tensor<1x3x4x2xf16>
  %1 = rlx.avg_pool2d %h kernel = [3, 2] stride = [2, 2] padding = [1, 0, 1, 1] dilation = [1, 2] ceil_mode count_include_pad channels_last : tensor<1x5x7x2xf16> -> tensor<1x3x4x2xf16>
  // CHECK-NEXT: func.return
  func.return
}

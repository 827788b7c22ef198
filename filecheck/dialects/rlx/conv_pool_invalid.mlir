// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// conv2d and the pools: NCHW/OIHW ranks, window attributes, groups, bias, and
// windows that fit the padded input.

func.func @conv_ints(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) {
  // expected-error @+1 {{'rlx.conv2d' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32> -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @conv_weight_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'rlx.conv2d' op input and weight: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_stride_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op stride must be two positive integers, got [1]}}
  %0 = rlx.conv2d %x, %w stride = [1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op stride must be two positive integers, got [1, 0]}}
  %0 = rlx.conv2d %x, %w stride = [1, 0] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op dilation must be two positive integers, got [0, 1]}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [0, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_padding_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op padding must be four non-negative integers [top, left, bottom, right], got [1, 1]}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @conv_padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op padding must be four non-negative integers [top, left, bottom, right], got [0, -1, 0, 0]}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, -1, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x5xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op conv2d takes an NCHW input and an OIHW weight (rank 4), got 3x8x8 and 4x3x3x3}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<4x6x6xf32>
  func.return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op conv2d takes an NCHW input and an OIHW weight (rank 4), got 1x3x8x8 and 4x3x3}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_in_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight 4x2x3x3 with groups=1 does not fit 3 input channels: expected weight.shape[1] * groups == 3 and 4 divisible by groups}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight 4x4x3x3 with groups=2 does not fit 4 input channels: expected weight.shape[1] * groups == 4 and 4 divisible by groups}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_out_channels_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight 3x2x3x3 with groups=2 does not fit 4 input channels: expected weight.shape[1] * groups == 4 and 3 divisible by groups}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x6x6xf32>
  func.return
}

// -----

func.func @conv_groups_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight 4x3x3x3 with groups=0 does not fit 3 input channels: expected weight.shape[1] * groups == 3 and 4 divisible by groups}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 0 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op bias has shape 3, expected 4}}
  %0 = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'rlx.conv2d' op input and bias: element types differ (f32 vs bf16); they must be equal}}
  %0 = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xbf16> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_window_height(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op height: window 3 (dilation 1) does not fit an extent of 2 padded by 0+0}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x1x6xf32>
  func.return
}

// -----

func.func @conv_window_dilated(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op width: window 3 (dilation 4) does not fit an extent of 8 padded by 0+0}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 4] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x1xf32>
  func.return
}

// -----

func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op result #0 has type tensor<1x4x8x8xf32>, but the operands and attributes give tensor<1x4x6x6xf32>}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @conv_segment_sizes(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op Expected operandSegmentSizes property in rlx.conv2d operation.}}
  %0 = "rlx.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  func.return
}

// -----

func.func @pool_ints(%x: tensor<1x3x8x8xi64>) {
  // expected-error @+1 {{'rlx.max_pool2d' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xi64> -> tensor<1x3x4x4xi64>
  func.return
}

// -----

func.func @pool_kernel_zero(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op kernel must be two positive integers, got [0, 2]}}
  %0 = rlx.max_pool2d %x kernel = [0, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @pool_kernel_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.avg_pool2d' op kernel must be two positive integers, got [2, 2, 2]}}
  %0 = rlx.avg_pool2d %x kernel = [2, 2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @pool_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.avg_pool2d' op stride must be two positive integers, got [2, -2]}}
  %0 = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, -2] padding = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @pool_padding(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op padding must be four non-negative integers [top, left, bottom, right], got [0, 0, 0]}}
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op pooling takes an NCHW input (rank 4), got 3x8x8}}
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  func.return
}

// -----

func.func @pool_padding_vs_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.avg_pool2d' op padding [0, 0, 0, 2] must be smaller than the kernel [2, 2]}}
  %0 = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 2] : tensor<1x3x8x8xf32> -> tensor<1x3x4x5xf32>
  func.return
}

// -----

func.func @pool_window(%x: tensor<1x3x4x4xf16>) {
  // expected-error @+1 {{'rlx.max_pool2d' op height: window 5 (dilation 1) does not fit an extent of 4 padded by 0+0}}
  %0 = rlx.max_pool2d %x kernel = [5, 1] stride = [1, 1] padding = [0, 0, 0, 0] : tensor<1x3x4x4xf16> -> tensor<1x3x1x4xf16>
  func.return
}

// -----

func.func @pool_result(%x: tensor<1x3x8x8xbf16>) {
  // expected-error @+1 {{'rlx.avg_pool2d' op result #0 has type tensor<1x3x8x8xbf16>, but the operands and attributes give tensor<1x3x4x4xbf16>}}
  %0 = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] count_include_pad : tensor<1x3x8x8xbf16> -> tensor<1x3x8x8xbf16>
  func.return
}

// -----

// count_include_pad belongs to avg_pool2d only.
func.func @max_pool_count_include_pad(%x: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op property 'count_include_pad' is not defined by the operation 'rlx.max_pool2d'. Use the dictionary attribute to add arbitrary information to the operation.}}
  %0 = "rlx.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad}> : (tensor<2x3x4x4xf32>) -> tensor<2x3x2x2xf32>
  func.return
}

// -----

func.func @pool_dilation(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op dilation must be two positive integers, got [0, 1]}}
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] dilation = [0, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @pool_dilated_window(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'rlx.avg_pool2d' op width: window 2 (dilation 4) does not fit an extent of 4 padded by 0+0}}
  %0 = rlx.avg_pool2d %x kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 4] ceil_mode : tensor<1x3x4x4xf32> -> tensor<1x3x3x1xf32>
  func.return
}

// -----

// ceil_mode keeps the last window only where it starts inside the input or its begin padding.
func.func @pool_ceil_result(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'rlx.max_pool2d' op result #0 has type tensor<1x1x2x2xf32>, but the operands and attributes give tensor<1x1x1x1xf32>}}
  %0 = rlx.max_pool2d %x kernel = [1, 1] stride = [2, 2] padding = [0, 0, 0, 0] ceil_mode : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
  func.return
}

// -----

// ceil_mode is a pool property; conv2d does not have it.
func.func @conv_ceil_mode(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op property 'ceil_mode' is not defined by the operation 'rlx.conv2d'. Use the dictionary attribute to add arbitrary information to the operation.}}
  %0 = "rlx.conv2d"(%x, %w) <{stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, ceil_mode, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @im2col_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'rlx.im2col' op im2col takes an NHWC input (rank 4), got 3x8x8}}
  %0 = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<3x8x8xf32> -> tensor<3x9x36xf32>
  func.return
}

// -----

func.func @im2col_window(%x: tensor<1x2x8x3xf32>) {
  // expected-error @+1 {{'rlx.im2col' op height: window 3 (dilation 1) does not fit an extent of 2 padded by 0+0}}
  %0 = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x2x8x3xf32> -> tensor<1x1x6x27xf32>
  func.return
}

// -----

func.func @im2col_stride(%x: tensor<1x8x8x3xf32>) {
  // expected-error @+1 {{'rlx.im2col' op stride must be two positive integers, got [0, 1]}}
  %0 = rlx.im2col %x kernel = [3, 3] stride = [0, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x3xf32> -> tensor<1x6x6x27xf32>
  func.return
}

// -----

func.func @im2col_result(%x: tensor<1x8x8x3xf32>) {
  // expected-error @+1 {{'rlx.im2col' op result #0 has type tensor<1x8x8x27xf32>, but the operands and attributes give tensor<1x6x6x27xf32>}}
  %0 = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] : tensor<1x8x8x3xf32> -> tensor<1x8x8x27xf32>
  func.return
}

// -----

func.func @im2col_columns(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'rlx.im2col' op columns 20 is fewer than the patch's kh * kw * c = 27}}
  %0 = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] channels_first columns = 20 : tensor<1x3x8x8xf32> -> tensor<1x8x8x20xf32>
  func.return
}

// -----

// channels_last: the result is NHWC too (here written NCHW)
func.func @conv2d_channels_last_result(%x: tensor<1x8x8x4xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op result #0 has type tensor<1x4x8x8xf32>, but the operands and attributes give tensor<1x8x8x4xf32>}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 channels_last : tensor<1x8x8x4xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// channels_last: the input's channels are its last axis (8, where the weight wants 4 groups of 1)
func.func @conv2d_channels_last_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight 4x1x3x3 with groups=4 does not fit 8 input channels: expected weight.shape[1] * groups == 8 and 4 divisible by groups}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 channels_last : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x8x4xf32>
  func.return
}

// -----

// weight_hwio reads the weight of a channels-last convolution only
func.func @conv2d_hwio_nchw(%x: tensor<1x4x8x8xf32>, %w: tensor<3x3x1x4xf32>) {
  // expected-error @+1 {{'rlx.conv2d' op weight_hwio needs channels_last (an NHWC input)}}
  %0 = rlx.conv2d %x, %w stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 4 weight_hwio : tensor<1x4x8x8xf32>, tensor<3x3x1x4xf32> -> tensor<1x4x8x8xf32>
  func.return
}

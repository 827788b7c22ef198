// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// conv_transpose2d: element types, ranks, IOHW weight vs channels and groups, bias,
// output_padding, and padding that crops everything.

func.func @ints(%x: tensor<1x3x4x4xi32>, %w: tensor<3x2x3x3xi32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xi32>, tensor<3x2x3x3xi32> -> tensor<1x2x6x6xi32>
  func.return
}

// -----

func.func @weight_type(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xbf16>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op input and weight: element types differ (f32 vs bf16); they must be equal}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xf32>, tensor<3x2x3x3xbf16> -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @rank(%x: tensor<3x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op conv_transpose2d takes an NCHW input and an IOHW weight (rank 4), got 3x4x4 and 3x2x3x3}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<3x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<2x6x6xf32>
  func.return
}

// -----

// The weight's first axis is the input channels (ONNX's layout), not the output ones.
func.func @oihw_weight(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op weight 2x3x3x3 with groups=1 does not fit 3 input channels: expected weight.shape[0] == 3, divisible by groups}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32> -> tensor<1x3x6x6xf32>
  func.return
}

// -----

func.func @groups(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op weight 3x2x3x3 with groups=2 does not fit 3 input channels: expected weight.shape[0] == 3, divisible by groups}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// The bias has one entry per output channel: weight.shape[1] * groups.
func.func @bias(%x: tensor<1x4x4x4xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op bias has shape 3, expected 6}}
  %0 = rlx.conv_transpose2d %x, %w bias %b stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @stride(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op stride must be two positive integers, got [0, 1]}}
  %0 = rlx.conv_transpose2d %x, %w stride = [0, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @output_padding(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op output_padding must be two non-negative integers, got [1]}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [1] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @crop_all(%x: tensor<1x3x1x4xf32>, %w: tensor<3x2x1x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op height: padding 1+0 crops all 1 rows of the transposed convolution of an extent of 1 (stride 1, kernel 1, dilation 1, output_padding 0)}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [1, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x1x4xf32>, tensor<3x2x1x3xf32> -> tensor<1x2x1x6xf32>
  func.return
}

// -----

func.func @result(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'rlx.conv_transpose2d' op result #0 has type tensor<1x2x4x4xf32>, but the operands and attributes give tensor<1x2x6x6xf32>}}
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x2x4x4xf32>
  func.return
}

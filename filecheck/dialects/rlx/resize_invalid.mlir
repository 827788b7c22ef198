// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// resize: supported modes (the error lists them), element types per mode, rank, scales.

func.func @cubic(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op mode 'cubic' is not supported; expected one of nearest, linear}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "cubic" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @crop_and_resize(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op coordinate_transformation_mode 'tf_crop_and_resize' is not supported in linear mode; expected one of half_pixel, pytorch_half_pixel, align_corners, asymmetric, half_pixel_symmetric}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "linear" coordinate_transformation_mode = "tf_crop_and_resize" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @nn_mode_in_linear(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op coordinate_transformation_mode 'tf_half_pixel_for_nn' is not supported in linear mode; expected one of half_pixel, pytorch_half_pixel, align_corners, asymmetric, half_pixel_symmetric}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "linear" coordinate_transformation_mode = "tf_half_pixel_for_nn" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @nearest_mode(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op nearest_mode 'round' is not supported; expected one of round_prefer_floor, round_prefer_ceil, floor, ceil}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "nearest" nearest_mode = "round" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

// Nearest copies elements of any numeric type; linear interpolates floats only.
func.func @linear_ints(%x: tensor<1x1x4x4xi32>) {
  // expected-error @+1 {{'rlx.resize' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "linear" : tensor<1x1x4x4xi32> -> tensor<1x1x8x8xi32>
  func.return
}

// -----

func.func @nearest_bool(%x: tensor<1x1x4x4xi1>) {
  // expected-error @+1 {{'rlx.resize' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "nearest" : tensor<1x1x4x4xi1> -> tensor<1x1x8x8xi1>
  func.return
}

// -----

func.func @result_type(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op input and result: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "nearest" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf16>
  func.return
}

// -----

func.func @rank(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op result rank 3 differs from input rank 4 (1x8x8 vs 1x1x4x4)}}
  %0 = rlx.resize %x scales = [1.0, 2.0, 2.0] mode = "nearest" : tensor<1x1x4x4xf32> -> tensor<1x8x8xf32>
  func.return
}

// -----

func.func @scales_length(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op scales must be 4 positive finite numbers (one per axis), got [2.0, 2.0]}}
  %0 = rlx.resize %x scales = [2.0, 2.0] mode = "nearest" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @scales_zero(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op scales must be 4 positive finite numbers (one per axis), got [1.0, 1.0, 0.0, 2.0]}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 0.0, 2.0] mode = "nearest" : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @empty(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'rlx.resize' op resize needs non-empty input and result, got 1x1x4x4 -> 1x1x0x8}}
  %0 = rlx.resize %x scales = [1.0, 1.0, 0.1, 2.0] mode = "nearest" : tensor<1x1x4x4xf32> -> tensor<1x1x0x8xf32>
  func.return
}

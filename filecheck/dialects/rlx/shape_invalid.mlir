// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// reshape, transpose, expand, concat, slice and gather.

func.func @reshape_count(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reshape' op cannot reshape 4x16 (64 elements) to 8x9 (72 elements)}}
  %0 = rlx.reshape %x : tensor<4x16xf32> -> tensor<8x9xf32>
  func.return
}

// -----

func.func @reshape_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'rlx.reshape' op cannot reshape scalar (1 elements) to 0 (0 elements)}}
  %0 = rlx.reshape %x : tensor<f32> -> tensor<0xf32>
  func.return
}

// -----

func.func @reshape_type(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.reshape' op reshape: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.reshape %x : tensor<4x16xf32> -> tensor<64xf16>
  func.return
}

// -----

func.func @transpose_not_permutation(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.transpose' op perm [0, 0] is not a permutation of the 2 axes of 4x16}}
  %0 = rlx.transpose %x perm = [0, 0] : tensor<4x16xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @transpose_length(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.transpose' op perm [1, 0, 2] is not a permutation of the 2 axes of 4x16}}
  %0 = rlx.transpose %x perm = [1, 0, 2] : tensor<4x16xf32> -> tensor<16x4xf32>
  func.return
}

// -----

func.func @transpose_negative(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.transpose' op perm [-1, 0] is not a permutation of the 2 axes of 4x16}}
  %0 = rlx.transpose %x perm = [-1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  func.return
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xi64>) {
  // expected-error @+1 {{'rlx.transpose' op result #0 has type tensor<4x3x2xi64>, but the operands and attributes give tensor<3x4x2xi64>}}
  %0 = rlx.transpose %x perm = [1, 2, 0] : tensor<2x3x4xi64> -> tensor<4x3x2xi64>
  func.return
}

// -----

func.func @expand_to_lower_rank(%x: tensor<2x3x16xf32>) {
  // expected-error @+1 {{'rlx.expand' op cannot expand 2x3x16 to 3x16: each input axis must equal the result's or be 1}}
  %0 = rlx.expand %x : tensor<2x3x16xf32> -> tensor<3x16xf32>
  func.return
}

// -----

// Broadcasting is one way: the result may not have 1 where the input has more.
func.func @expand_shrinks(%x: tensor<4x1xf32>) {
  // expected-error @+1 {{'rlx.expand' op cannot expand 4x1 to 1x16: each input axis must equal the result's or be 1}}
  %0 = rlx.expand %x : tensor<4x1xf32> -> tensor<1x16xf32>
  func.return
}

// -----

func.func @expand_type(%x: tensor<1x16xf32>) {
  // expected-error @+1 {{'rlx.expand' op expand: element types differ (f32 vs bf16); they must be equal}}
  %0 = rlx.expand %x : tensor<1x16xf32> -> tensor<4x16xbf16>
  func.return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{'rlx.concat' op concat needs at least one input}}
  %0 = "rlx.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{'rlx.concat' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.concat %a, %a axis = 2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @concat_types(%a: tensor<2x4xf32>, %b: tensor<2x4xf16>) {
  // expected-error @+1 {{'rlx.concat' op input #1: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<2x4xf16> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @concat_other_axis(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'rlx.concat' op input #1 has shape 3x5; it must match input #0 2x4 on every axis but 0}}
  %0 = rlx.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<3x5xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @concat_rank(%a: tensor<2x4xi32>, %b: tensor<4xi32>, %c: tensor<2x4xi32>) {
  // expected-error @+1 {{'rlx.concat' op input #1 has shape 4; it must match input #0 2x4 on every axis but 1}}
  %0 = rlx.concat %a, %b, %c axis = -1 : tensor<2x4xi32>, tensor<4xi32>, tensor<2x4xi32> -> tensor<2x12xi32>
  func.return
}

// -----

func.func @concat_third_input(%a: tensor<2x4xi1>, %c: tensor<3x4xi1>) {
  // expected-error @+1 {{'rlx.concat' op input #2 has shape 3x4; it must match input #0 2x4 on every axis but 1}}
  %0 = rlx.concat %a, %a, %c axis = 1 : tensor<2x4xi1>, tensor<2x4xi1>, tensor<3x4xi1> -> tensor<2x12xi1>
  func.return
}

// -----

func.func @concat_result(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'rlx.concat' op result #0 has type tensor<6x4xf32>, but the operands and attributes give tensor<5x4xf32>}}
  %0 = rlx.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @slice_lengths(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.slice' op starts, ends and steps need one entry per axis (2), got 1, 2 and 2}}
  %0 = rlx.slice %x starts = [0] ends = [4, 16] steps = [1, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @slice_step_zero(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.slice' op step of axis 1 is 0}}
  %0 = rlx.slice %x starts = [0, 0] ends = [4, 16] steps = [1, 0] : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

// Starts and ends are absolute, not clamped: the builder normalises python-style ones.
func.func @slice_end_past_extent(%x: tensor<10xi64>) {
  // expected-error @+1 {{'rlx.slice' op axis 0: range(9, 100, 1) leaves the axis extent 10}}
  %0 = rlx.slice %x starts = [9] ends = [100] steps = [1] : tensor<10xi64> -> tensor<1xi64>
  func.return
}

// -----

func.func @slice_negative_start(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.slice' op axis 1: range(-2, 16, 1) leaves the axis extent 16}}
  %0 = rlx.slice %x starts = [0, -2] ends = [4, 16] steps = [1, 1] : tensor<4x16xf32> -> tensor<4x18xf32>
  func.return
}

// -----

// With a negative step, an end of -1 means "through index 0"; -2 goes past it.
func.func @slice_negative_step(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.slice' op axis 0: range(3, -2, -1) leaves the axis extent 4}}
  %0 = rlx.slice %x starts = [3] ends = [-2] steps = [-1] : tensor<4xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @slice_start_past_extent(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.slice' op axis 0: range(4, -1, -1) leaves the axis extent 4}}
  %0 = rlx.slice %x starts = [4] ends = [-1] steps = [-1] : tensor<4xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @slice_result(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.slice' op result #0 has type tensor<4x8xf32>, but the operands and attributes give tensor<4x7xf32>}}
  %0 = rlx.slice %x starts = [0, 2] ends = [4, 16] steps = [1, 2] : tensor<4x16xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @gather_float_indices(%t: tensor<100x16xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.gather' op indices has element type f32, expected one of i32, i64}}
  %0 = rlx.gather %t[%i] axis = 0 : tensor<100x16xf32>, tensor<4xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @gather_bool_indices(%t: tensor<100x16xf32>, %i: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.gather' op indices has element type i1, expected one of i32, i64}}
  %0 = rlx.gather %t[%i] axis = 0 : tensor<100x16xf32>, tensor<4xi1> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @gather_axis(%t: tensor<100x16xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.gather' op axis -3 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.gather %t[%i] axis = -3 : tensor<100x16xf32>, tensor<4xi64> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @gather_result(%t: tensor<100x16xf32>, %i: tensor<4x8xi32>) {
  // expected-error @+1 {{'rlx.gather' op result #0 has type tensor<32x16xf32>, but the operands and attributes give tensor<4x8x16xf32>}}
  %0 = rlx.gather %t[%i] axis = 0 : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<32x16xf32>
  func.return
}

// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// softmax / log_softmax: floating point and an axis in range. layer_norm /
// rms_norm: gamma (and beta) cover the input's trailing axes, one element type.

func.func @softmax_ints(%x: tensor<4x16xi32>) {
  // expected-error @+1 {{'rlx.softmax' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.softmax %x axis = -1 : tensor<4x16xi32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'rlx.softmax' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.softmax %x axis = 2 : tensor<4x16xf32>
  func.return
}

// -----

func.func @log_softmax_axis(%x: tensor<4x16xf16>) {
  // expected-error @+1 {{'rlx.log_softmax' op axis -3 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.log_softmax %x axis = -3 : tensor<4x16xf16>
  func.return
}

// -----

func.func @log_softmax_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.log_softmax' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.log_softmax %x axis = 0 : tensor<4xi1>
  func.return
}

// -----

func.func @softmax_result_type(%x: tensor<4x16xf32>) {
  // expected-error-re @+1 {{'rlx.softmax' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<4x16xf16>}}
  %0 = "rlx.softmax"(%x) <{axis = -1 : i64}> : (tensor<4x16xf32>) -> tensor<4x16xf16>
  func.return
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<4x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op gamma has shape 8, expected the trailing dimensions of the input 4x16 (for example 16)}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<8xf32>
  func.return
}

// -----

// gamma must cover trailing axes, not leading ones.
func.func @layer_norm_gamma_leading(%x: tensor<4x16xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op gamma has shape 4, expected the trailing dimensions of the input 4x16 (for example 16)}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<4xf32>
  func.return
}

// -----

func.func @layer_norm_gamma_rank(%x: tensor<4x16xf32>, %g: tensor<2x4x16xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op gamma has shape 2x4x16, expected the trailing dimensions of the input 4x16 (for example 16)}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<2x4x16xf32>
  func.return
}

// -----

func.func @layer_norm_gamma_scalar(%x: tensor<4x16xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'rlx.layer_norm' op gamma has shape scalar, expected the trailing dimensions of the input 4x16 (for example 16)}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<f32>
  func.return
}

// -----

func.func @layer_norm_gamma_type(%x: tensor<4x16xf32>, %g: tensor<16xf16>) {
  // expected-error @+1 {{'rlx.layer_norm' op input and gamma: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf16>
  func.return
}

// -----

func.func @layer_norm_ints(%x: tensor<4x16xi32>, %g: tensor<16xi32>) {
  // expected-error @+1 {{'rlx.layer_norm' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xi32>, tensor<16xi32>
  func.return
}

// -----

// beta has gamma's type (the custom syntax spells it once).
func.func @layer_norm_beta(%x: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<8xf32>) {
  // expected-error-re @+1 {{'rlx.layer_norm' op operand 'beta' at position 2 does not verify:{{\n}}attribute tensor<16xf32> expected from variable 'G', but got tensor<8xf32>}}
  %0 = "rlx.layer_norm"(%x, %g, %b) <{eps = 1.000000e-05 : f64}> : (tensor<4x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

func.func @layer_norm_result(%x: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error-re @+1 {{'rlx.layer_norm' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<4x8xf32>}}
  %0 = "rlx.layer_norm"(%x, %g, %g) <{eps = 1.000000e-05 : f64}> : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @layer_norm_eps_f32(%x: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'rlx.layer_norm' op f32 should be of base attribute f64}}
  %0 = "rlx.layer_norm"(%x, %g, %g) <{eps = 1.000000e-05 : f32}> : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

func.func @rms_norm_gamma_shape(%x: tensor<2x8x16xf16>, %g: tensor<16x8xf16>) {
  // expected-error @+1 {{'rlx.rms_norm' op gamma has shape 16x8, expected the trailing dimensions of the input 2x8x16 (for example 16)}}
  %0 = rlx.rms_norm %x, %g eps = 1.000000e-06 : tensor<2x8x16xf16>, tensor<16x8xf16>
  func.return
}

// -----

func.func @rms_norm_gamma_type(%x: tensor<4x16xbf16>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'rlx.rms_norm' op input and gamma: element types differ (bf16 vs f32); they must be equal}}
  %0 = rlx.rms_norm %x, %g eps = 1.000000e-06 : tensor<4x16xbf16>, tensor<16xf32>
  func.return
}

// -----

func.func @rms_norm_ints(%x: tensor<4x16xi64>, %g: tensor<16xi64>) {
  // expected-error @+1 {{'rlx.rms_norm' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.rms_norm %x, %g eps = 1.000000e-06 : tensor<4x16xi64>, tensor<16xi64>
  func.return
}

// -----

func.func @rms_norm_result(%x: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error-re @+1 {{'rlx.rms_norm' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<4x16xbf16>}}
  %0 = "rlx.rms_norm"(%x, %g) <{eps = 1.000000e-06 : f64}> : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xbf16>
  func.return
}

// -----

func.func @rms_norm_no_eps(%x: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'rlx.rms_norm' op property 'eps' expected in operation 'rlx.rms_norm'}}
  %0 = "rlx.rms_norm"(%x, %g) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return
}

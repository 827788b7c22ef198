// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// The unary ops' verifier: element types, and one type in and out.

func.func @exp_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.exp' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.exp %x : tensor<4xi32>
  func.return
}

// -----

func.func @log_on_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.log' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.log %x : tensor<4xi64>
  func.return
}

// -----

func.func @sqrt_on_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.sqrt' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.sqrt %x : tensor<4xi1>
  func.return
}

// -----

func.func @rsqrt_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.rsqrt' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.rsqrt %x : tensor<4xi32>
  func.return
}

// -----

func.func @reciprocal_on_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.reciprocal' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.reciprocal %x : tensor<4xi64>
  func.return
}

// -----

func.func @sin_on_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.sin' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.sin %x : tensor<4xi1>
  func.return
}

// -----

func.func @cos_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.cos' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.cos %x : tensor<4xi32>
  func.return
}

// -----

func.func @tanh_on_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.tanh' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.tanh %x : tensor<4xi64>
  func.return
}

// -----

func.func @sigmoid_on_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.sigmoid' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.sigmoid %x : tensor<4xi1>
  func.return
}

// -----

func.func @gelu_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.gelu' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.gelu %x : tensor<4xi32>
  func.return
}

// -----

func.func @gelu_tanh_on_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.gelu_tanh' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.gelu_tanh %x : tensor<4xi64>
  func.return
}

// -----

func.func @silu_on_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.silu' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.silu %x : tensor<4xi1>
  func.return
}

// -----

func.func @erf_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.erf' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.erf %x : tensor<4xi32>
  func.return
}

// -----

func.func @floor_on_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{'rlx.floor' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.floor %x : tensor<4xi64>
  func.return
}

// -----

func.func @ceil_on_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.ceil' op input has element type i1, expected one of f32, f16, bf16}}
  %0 = rlx.ceil %x : tensor<4xi1>
  func.return
}

// -----

func.func @round_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.round' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.round %x : tensor<4xi32>
  func.return
}

// -----

func.func @neg_on_i1(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'rlx.neg' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.neg %x : tensor<2x3xi1>
  func.return
}

// -----

func.func @abs_on_i1(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'rlx.abs' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.abs %x : tensor<2x3xi1>
  func.return
}

// -----

func.func @sign_on_i1(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'rlx.sign' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.sign %x : tensor<2x3xi1>
  func.return
}

// -----

func.func @relu_on_i1(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'rlx.relu' op input has element type i1, expected one of f32, f16, bf16, i32, i64}}
  %0 = rlx.relu %x : tensor<2x3xi1>
  func.return
}

// -----

// The result type is the input type (custom syntax cannot even spell the difference).
func.func @result_element_type(%x: tensor<4x16xf32>) {
  // expected-error-re @+1 {{'rlx.exp' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<4x16xf16>}}
  %0 = "rlx.exp"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf16>
  func.return
}

// -----

func.func @result_shape(%x: tensor<4xi32>) {
  // expected-error-re @+1 {{'rlx.neg' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<4xi32> expected from variable 'T', but got tensor<1x4xi32>}}
  %0 = "rlx.neg"(%x) : (tensor<4xi32>) -> tensor<1x4xi32>
  func.return
}

// -----

func.func @softplus_on_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.softplus' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.softplus %x : tensor<4xi32>
  func.return
}

// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// linear, the fused residual norms, swiglu, attention and rope.

func.func @linear_ints(%x: tensor<4x16xi32>, %w: tensor<8x16xi32>) {
  // expected-error @+1 {{'rlx.linear' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.linear %x, %w : tensor<4x16xi32>, tensor<8x16xi32> -> tensor<4x8xi32>
  func.return
}

// -----

func.func @linear_weight_type(%x: tensor<4x16xf32>, %w: tensor<8x16xbf16>) {
  // expected-error @+1 {{'rlx.linear' op input and weight: element types differ (f32 vs bf16); they must be equal}}
  %0 = rlx.linear %x, %w : tensor<4x16xf32>, tensor<8x16xbf16> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @linear_residual_without_bias(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %r: tensor<4x8xf32>) {
  // expected-error @+1 {{'rlx.linear' op a residual needs a bias}}
  %0 = "rlx.linear"(%x, %w, %r) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @linear_residual_type(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>, %r: tensor<1x8xf32>) {
  // expected-error @+1 {{'rlx.linear' op residual has type tensor<1x8xf32>, expected the result's tensor<4x8xf32>}}
  %0 = rlx.linear %x, %w bias %b residual %r : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// The weight is [out, in], as in PyTorch: not transposed.
func.func @linear_weight_transposed(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{'rlx.linear' op weight has shape 16x8, expected [out, 16] for an input of shape 4x16}}
  %0 = rlx.linear %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @linear_weight_rank(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{'rlx.linear' op weight has shape 16, expected [out, 16] for an input of shape 4x16}}
  %0 = rlx.linear %x, %w : tensor<4x16xf32>, tensor<16xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'rlx.linear' op weight has shape 8x16, expected [out, ?] for an input of shape scalar}}
  %0 = rlx.linear %x, %w : tensor<f32>, tensor<8x16xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @linear_bias_shape(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'rlx.linear' op bias has shape 16, expected 8}}
  %0 = rlx.linear %x, %w bias %b : tensor<4x16xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @linear_bias_type(%x: tensor<4x16xf16>, %w: tensor<8x16xf16>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'rlx.linear' op input and bias: element types differ (f16 vs f32); they must be equal}}
  %0 = rlx.linear %x, %w bias %b : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf32> -> tensor<4x8xf16>
  func.return
}

// -----

func.func @linear_activation(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'rlx.linear' op unknown activation 'swish', expected one of relu, gelu, gelu_tanh, silu, sigmoid, tanh}}
  %0 = rlx.linear %x, %w activation "swish" : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @linear_result(%x: tensor<2x4x16xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'rlx.linear' op result #0 has type tensor<8x8xf32>, but the operands and attributes give tensor<2x4x8xf32>}}
  %0 = rlx.linear %x, %w : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<8x8xf32>
  func.return
}

// -----

func.func @frln_gamma(%x: tensor<4x16xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.fused_residual_layer_norm' op gamma has shape 4, expected the trailing dimensions of the input 4x16 (for example 16)}}
  %0, %1 = rlx.fused_residual_layer_norm %x, %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<4xf32>
  func.return
}

// -----

func.func @frln_gamma_type(%x: tensor<4x16xf32>, %g: tensor<16xf16>) {
  // expected-error @+1 {{'rlx.fused_residual_layer_norm' op input and gamma: element types differ (f32 vs f16); they must be equal}}
  %0, %1 = rlx.fused_residual_layer_norm %x, %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf16>
  func.return
}

// -----

func.func @frln_ints(%x: tensor<4x16xi32>, %g: tensor<16xi32>) {
  // expected-error @+1 {{'rlx.fused_residual_layer_norm' op input has element type i32, expected one of f32, f16, bf16}}
  %0, %1 = rlx.fused_residual_layer_norm %x, %x, %g, %g eps = 1.000000e-05 : tensor<4x16xi32>, tensor<16xi32>
  func.return
}

// -----

// The residual has the input's type; it does not broadcast.
func.func @frln_residual(%x: tensor<4x16xf32>, %r: tensor<16xf32>, %g: tensor<16xf32>) {
  // expected-error-re @+1 {{'rlx.fused_residual_layer_norm' op operand 'residual' at position 1 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<16xf32>}}
  %0, %1 = "rlx.fused_residual_layer_norm"(%x, %r, %g, %g) <{eps = 1.000000e-05 : f64}> : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  func.return
}

// -----

func.func @frln_beta(%x: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf16>) {
  // expected-error-re @+1 {{'rlx.fused_residual_layer_norm' op operand 'beta' at position 3 does not verify:{{\n}}attribute tensor<16xf32> expected from variable 'G', but got tensor<16xf16>}}
  %0, %1 = "rlx.fused_residual_layer_norm"(%x, %x, %g, %b) <{eps = 1.000000e-05 : f64}> : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf16>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  func.return
}

// -----

func.func @frrms_gamma(%x: tensor<2x4x16xbf16>, %g: tensor<2x16xbf16>) {
  // expected-error @+1 {{'rlx.fused_residual_rms_norm' op gamma has shape 2x16, expected the trailing dimensions of the input 2x4x16 (for example 16)}}
  %0, %1 = rlx.fused_residual_rms_norm %x, %x, %g eps = 1.000000e-06 : tensor<2x4x16xbf16>, tensor<2x16xbf16>
  func.return
}

// -----

func.func @frrms_gamma_type(%x: tensor<4x16xf16>, %g: tensor<16xbf16>) {
  // expected-error @+1 {{'rlx.fused_residual_rms_norm' op input and gamma: element types differ (f16 vs bf16); they must be equal}}
  %0, %1 = rlx.fused_residual_rms_norm %x, %x, %g eps = 1.000000e-06 : tensor<4x16xf16>, tensor<16xbf16>
  func.return
}

// -----

func.func @frrms_normed(%x: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error-re @+1 {{'rlx.fused_residual_rms_norm' op result 'normed' at position 1 does not verify:{{\n}}attribute tensor<4x16xf32> expected from variable 'T', but got tensor<4x8xf32>}}
  %0, %1 = "rlx.fused_residual_rms_norm"(%x, %x, %g) <{eps = 1.000000e-06 : f64}> : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>)
  func.return
}

// -----

func.func @swiglu_odd(%x: tensor<4x7xf32>) {
  // expected-error @+1 {{'rlx.swiglu' op swiglu needs an even last axis, got shape 4x7}}
  %0 = rlx.swiglu %x : tensor<4x7xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @swiglu_scalar(%x: tensor<f16>) {
  // expected-error @+1 {{'rlx.swiglu' op swiglu needs an even last axis, got shape scalar}}
  %0 = rlx.swiglu %x : tensor<f16> -> tensor<f16>
  func.return
}

// -----

func.func @swiglu_ints(%x: tensor<4x8xi64>) {
  // expected-error @+1 {{'rlx.swiglu' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.swiglu %x : tensor<4x8xi64> -> tensor<4x4xi64>
  func.return
}

// -----

func.func @swiglu_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'rlx.swiglu' op result #0 has type tensor<4x8xf32>, but the operands and attributes give tensor<4x4xf32>}}
  %0 = rlx.swiglu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @attention_ints(%q: tensor<1x2x8x4xi32>) {
  // expected-error @+1 {{'rlx.attention' op query has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.attention %q, %q, %q : tensor<1x2x8x4xi32>, tensor<1x2x8x4xi32>, tensor<1x2x8x4xi32> -> tensor<1x2x8x4xi32>
  func.return
}

// -----

func.func @attention_key_type(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf16>) {
  // expected-error @+1 {{'rlx.attention' op query and key: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.attention %q, %k, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_value_type(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xbf16>) {
  // expected-error @+1 {{'rlx.attention' op query and value: element types differ (f32 vs bf16); they must be equal}}
  %0 = rlx.attention %q, %q, %v : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xbf16> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_rank(%q: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op attention takes [batch, heads, seq, head_dim] query, key and value, got 2x8x4, 2x8x4, 2x8x4}}
  %0 = rlx.attention %q, %q, %q : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  func.return
}

// -----

func.func @attention_heads(%q: tensor<1x2x8x4xf32>, %k: tensor<1x4x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op query 1x2x8x4, key 1x4x8x4 and value 1x4x8x4 disagree: batch must match, key's and value's heads must divide the query's, key's head_dim must equal query's, and key and value need the same sequence length}}
  %0 = rlx.attention %q, %k, %k : tensor<1x2x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

// grouped-query attention: key and value heads must divide the query's (3 into 2 does not)
func.func @attention_heads_do_not_divide(%q: tensor<1x3x8x4xf32>, %k: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op query 1x3x8x4, key 1x2x8x4 and value 1x2x8x4 disagree: batch must match, key's and value's heads must divide the query's, key's head_dim must equal query's, and key and value need the same sequence length}}
  %0 = rlx.attention %q, %k, %k : tensor<1x3x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x3x8x4xf32>
  func.return
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x6xf32>) {
  // expected-error @+1 {{'rlx.attention' op query 1x2x8x4, key 1x2x8x6 and value 1x2x8x4 disagree: batch must match, key's and value's heads must divide the query's, key's head_dim must equal query's, and key and value need the same sequence length}}
  %0 = rlx.attention %q, %k, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x6xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_kv_seq(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x5x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op query 1x2x8x4, key 1x2x8x4 and value 1x2x5x4 disagree: batch must match, key's and value's heads must divide the query's, key's head_dim must equal query's, and key and value need the same sequence length}}
  %0 = rlx.attention %q, %q, %v : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_mask_type(%q: tensor<1x2x8x4xf32>, %m: tensor<8x8xi1>) {
  // expected-error @+1 {{'rlx.attention' op query and mask: element types differ (f32 vs i1); they must be equal}}
  %0 = rlx.attention %q, %q, %q mask %m : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x8xi1> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x2x8x4xf32>, %m: tensor<8x7xf32>) {
  // expected-error @+1 {{'rlx.attention' op mask has shape 8x7, which does not broadcast to the scores' 1x2x8x8}}
  %0 = rlx.attention %q, %q, %q mask %m : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x7xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

// The mask broadcasts to the scores, never the other way.
func.func @attention_mask_larger(%q: tensor<1x2x8x4xf32>, %m: tensor<3x2x8x8xf32>) {
  // expected-error @+1 {{'rlx.attention' op mask has shape 3x2x8x8, which does not broadcast to the scores' 1x2x8x8}}
  %0 = rlx.attention %q, %q, %q mask %m : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3x2x8x8xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x2x8x4xf32>, %m: tensor<1x1x2x8x8xf32>) {
  // expected-error @+1 {{'rlx.attention' op mask has shape 1x1x2x8x8, which does not broadcast to the scores' 1x2x8x8}}
  %0 = rlx.attention %q, %q, %q mask %m : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x2x8x8xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_result(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x6xf32>) {
  // expected-error @+1 {{'rlx.attention' op result #0 has type tensor<1x2x8x4xf32>, but the operands and attributes give tensor<1x2x8x6xf32>}}
  %0 = rlx.attention %q, %q, %v : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x6xf32> -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @attention_scale_f32(%q: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{'rlx.attention' op f32 should be of base attribute f64}}
  %0 = "rlx.attention"(%q, %q, %q) <{scale = 5.000000e-01 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  func.return
}

// -----

func.func @rope_ints(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{'rlx.rope' op input has element type i32, expected one of f32, f16, bf16}}
  %0 = rlx.rope %x, %x, %x : tensor<2x4xi32>, tensor<2x4xi32>
  func.return
}

// -----

func.func @rope_cos_type(%x: tensor<1x2x8x4xf32>, %c: tensor<8x4xf16>) {
  // expected-error @+1 {{'rlx.rope' op input and cos: element types differ (f32 vs f16); they must be equal}}
  %0 = rlx.rope %x, %c, %c : tensor<1x2x8x4xf32>, tensor<8x4xf16>
  func.return
}

// -----

func.func @rope_odd(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'rlx.rope' op rope needs an even last axis, got 2x5}}
  %0 = rlx.rope %x, %x, %x : tensor<2x5xf32>, tensor<2x5xf32>
  func.return
}

// -----

func.func @rope_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'rlx.rope' op rope needs an even last axis, got scalar}}
  %0 = rlx.rope %x, %x, %x : tensor<f32>, tensor<f32>
  func.return
}

// -----

func.func @rope_cos_shape(%x: tensor<1x2x8x4xf32>, %c: tensor<8x2xf32>) {
  // expected-error @+1 {{'rlx.rope' op cos/sin of shape 8x2 do not broadcast to the input 1x2x8x4}}
  %0 = rlx.rope %x, %c, %c : tensor<1x2x8x4xf32>, tensor<8x2xf32>
  func.return
}

// -----

func.func @rope_cos_larger(%x: tensor<1x8x4xf32>, %c: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'rlx.rope' op cos/sin of shape 2x8x4 do not broadcast to the input 1x8x4}}
  %0 = rlx.rope %x, %c, %c : tensor<1x8x4xf32>, tensor<2x8x4xf32>
  func.return
}

// -----

func.func @rope_cos_rank(%x: tensor<8x4xf32>, %c: tensor<1x8x4xf32>) {
  // expected-error @+1 {{'rlx.rope' op cos/sin of shape 1x8x4 do not broadcast to the input 8x4}}
  %0 = rlx.rope %x, %c, %c : tensor<8x4xf32>, tensor<1x8x4xf32>
  func.return
}

// -----

// sin has cos's type (the custom syntax spells it once).
func.func @rope_sin(%x: tensor<8x4xf32>, %c: tensor<8x4xf32>, %s: tensor<4xf32>) {
  // expected-error-re @+1 {{'rlx.rope' op operand 'sin' at position 2 does not verify:{{\n}}attribute tensor<8x4xf32> expected from variable 'C', but got tensor<4xf32>}}
  %0 = "rlx.rope"(%x, %c, %s) : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @rope_result(%x: tensor<8x4xf32>) {
  // expected-error-re @+1 {{'rlx.rope' op result 'result' at position 0 does not verify:{{\n}}attribute tensor<8x4xf32> expected from variable 'T', but got tensor<8x2xf32>}}
  %0 = "rlx.rope"(%x, %x, %x) : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x2xf32>
  func.return
}

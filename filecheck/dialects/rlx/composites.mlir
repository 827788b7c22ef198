// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the composite ops: linear, the fused residual norms, swiglu,
// attention and rope.

// CHECK-LABEL: func.func @linear(
func.func @linear(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>, %x3: tensor<2x5x16xf32>, %v: tensor<16xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %0 = rlx.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = rlx.linear %x, %w bias %b : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} activation "gelu" : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %2 = rlx.linear %x, %w activation "gelu" : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %3 = rlx.linear %x, %w bias %b activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} : tensor<2x5x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  %4 = rlx.linear %x3, %w bias %b : tensor<2x5x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} : tensor<16xf32>, tensor<8x16xf32> -> tensor<8xf32>
  %5 = rlx.linear %v, %w : tensor<16xf32>, tensor<8x16xf32> -> tensor<8xf32>
  // A residual of the result's type, added before the activation.
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} residual %{{.*}} activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = rlx.linear %x, %w bias %b residual %1 activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Every activation rlx.linear accepts, on f16 and bf16.
// CHECK-LABEL: func.func @linear_activations(
func.func @linear_activations(%x: tensor<4x16xf16>, %w: tensor<8x16xf16>, %b: tensor<8xf16>, %xb: tensor<2x4xbf16>, %wb: tensor<3x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "relu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %0 = rlx.linear %x, %w bias %b activation "relu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "gelu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %1 = rlx.linear %x, %w bias %b activation "gelu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "gelu_tanh" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %2 = rlx.linear %x, %w bias %b activation "gelu_tanh" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "silu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %3 = rlx.linear %x, %w bias %b activation "silu" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "sigmoid" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %4 = rlx.linear %x, %w bias %b activation "sigmoid" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} bias %{{.*}} activation "tanh" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %5 = rlx.linear %x, %w bias %b activation "tanh" : tensor<4x16xf16>, tensor<8x16xf16>, tensor<8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.linear %{{.*}}, %{{.*}} activation "silu" : tensor<2x4xbf16>, tensor<3x4xbf16> -> tensor<2x3xbf16>
  %6 = rlx.linear %xb, %wb activation "silu" : tensor<2x4xbf16>, tensor<3x4xbf16> -> tensor<2x3xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @fused_residual_norms(
func.func @fused_residual_norms(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %h: tensor<2x3x8xf16>, %gh: tensor<3x8xf16>, %xb: tensor<2x4xbf16>, %gb: tensor<4xbf16>) {
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.fused_residual_layer_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf32>
  %0, %1 = rlx.fused_residual_layer_norm %x, %r, %g, %b eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.fused_residual_layer_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-06 : tensor<2x3x8xf16>, tensor<3x8xf16>
  %2, %3 = rlx.fused_residual_layer_norm %h, %h, %gh, %gh eps = 1.000000e-06 : tensor<2x3x8xf16>, tensor<3x8xf16>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.fused_residual_rms_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-06 : tensor<4x16xf32>, tensor<16xf32>
  %4, %5 = rlx.fused_residual_rms_norm %x, %r, %g eps = 1.000000e-06 : tensor<4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.fused_residual_rms_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<2x4xbf16>, tensor<4xbf16>
  %6, %7 = rlx.fused_residual_rms_norm %xb, %xb, %gb eps = 1.000000e-05 : tensor<2x4xbf16>, tensor<4xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @swiglu(
func.func @swiglu(%x: tensor<4x32xf32>, %h: tensor<2x3x8xf16>, %b: tensor<2xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.swiglu %{{.*}} : tensor<4x32xf32> -> tensor<4x16xf32>
  %0 = rlx.swiglu %x : tensor<4x32xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.swiglu %{{.*}} : tensor<2x3x8xf16> -> tensor<2x3x4xf16>
  %1 = rlx.swiglu %h : tensor<2x3x8xf16> -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = rlx.swiglu %{{.*}} : tensor<2xbf16> -> tensor<1xbf16>
  %2 = rlx.swiglu %b : tensor<2xbf16> -> tensor<1xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// attention over [batch, heads, seq, head_dim]: mask, causal and scale in every combination.
// CHECK-LABEL: func.func @attention(
func.func @attention(%q: tensor<1x2x8x4xf32>, %m: tensor<8x8xf32>, %m4: tensor<1x1x8x8xf32>, %mf: tensor<1x2x8x8xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %0 = rlx.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x8xf32> -> tensor<1x2x8x4xf32>
  %1 = rlx.attention %q, %q, %q mask %m : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x8xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %2 = rlx.attention %q, %q, %q causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %3 = rlx.attention %q, %q, %q scale 1.250000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x4xf32>
  %4 = rlx.attention %q, %q, %q mask %m4 causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 5.000000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x8xf32> -> tensor<1x2x8x4xf32>
  %5 = rlx.attention %q, %q, %q mask %mf scale 5.000000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x8xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale 2.000000e+00 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %6 = rlx.attention %q, %q, %q causal scale 2.000000e+00 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} causal scale 1.250000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x8xf32> -> tensor<1x2x8x4xf32>
  %7 = rlx.attention %q, %q, %q mask %m causal scale 1.250000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x8xf32> -> tensor<1x2x8x4xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Cross attention: query and key sequence lengths differ, value's head_dim differs.
// CHECK-LABEL: func.func @attention_shapes(
func.func @attention_shapes(%q: tensor<2x4x3x8xf16>, %k: tensor<2x4x5x8xf16>, %v: tensor<2x4x5x6xf16>, %m: tensor<5xf16>, %qb: tensor<1x1x2x2xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x3x8xf16>, tensor<2x4x5x8xf16>, tensor<2x4x5x6xf16> -> tensor<2x4x3x6xf16>
  %0 = rlx.attention %q, %k, %v : tensor<2x4x3x8xf16>, tensor<2x4x5x8xf16>, tensor<2x4x5x6xf16> -> tensor<2x4x3x6xf16>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} causal : tensor<2x4x3x8xf16>, tensor<2x4x5x8xf16>, tensor<2x4x5x6xf16>, tensor<5xf16> -> tensor<2x4x3x6xf16>
  %1 = rlx.attention %q, %k, %v mask %m causal : tensor<2x4x3x8xf16>, tensor<2x4x5x8xf16>, tensor<2x4x5x6xf16>, tensor<5xf16> -> tensor<2x4x3x6xf16>
  // CHECK-NEXT: %{{.*}} = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.000000e+00 : tensor<1x1x2x2xbf16>, tensor<1x1x2x2xbf16>, tensor<1x1x2x2xbf16> -> tensor<1x1x2x2xbf16>
  %2 = rlx.attention %qb, %qb, %qb scale 1.000000e+00 : tensor<1x1x2x2xbf16>, tensor<1x1x2x2xbf16>, tensor<1x1x2x2xbf16> -> tensor<1x1x2x2xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// rope: cos and sin (one type) broadcast to the input.
// CHECK-LABEL: func.func @rope(
func.func @rope(%x: tensor<1x2x8x4xf32>, %c: tensor<8x4xf32>, %c4: tensor<1x1x8x4xf32>, %h: tensor<3x6xf16>, %ch: tensor<6xf16>, %xb: tensor<2x2xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.rope %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2x8x4xf32>, tensor<8x4xf32>
  %0 = rlx.rope %x, %c, %c : tensor<1x2x8x4xf32>, tensor<8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.rope %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>
  %1 = rlx.rope %x, %c4, %c4 : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.rope %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x6xf16>, tensor<6xf16>
  %2 = rlx.rope %h, %ch, %ch : tensor<3x6xf16>, tensor<6xf16>
  // CHECK-NEXT: %{{.*}} = rlx.rope %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x2xbf16>, tensor<2x2xbf16>
  %3 = rlx.rope %xb, %xb, %xb : tensor<2x2xbf16>, tensor<2x2xbf16>
  // CHECK-NEXT: func.return
  func.return
}

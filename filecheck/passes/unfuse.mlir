// RUN: rlxc-opt %s --split-input-file -p 'rlx-unfuse{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlxc-opt %s --split-input-file -p 'rlx-unfuse{target=none}' | filecheck %s --check-prefix=NONE
// RUN: not rlxc-opt %s --split-input-file -p 'rlx-unfuse{target=tpu}' 2>&1 | filecheck %s --check-prefix=BAD

// The cuda target keeps its native composites; target=none splits them all.
// cuda's linear keeps the bias and relu / tanh-GELU epilogues that cuBLASLt
// applies; an exact (erf) GELU is split off into an elementwise op.
// CUDA-LABEL: func.func @native
// CUDA: %[[L:.*]] = rlx.linear %x, %w bias %b : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CUDA-NEXT: rlx.gelu %[[L]] : tensor<4x8xf32>
// CUDA: rlx.linear %x, %w bias %b activation "relu"
// CUDA: rlx.layer_norm
// CUDA: rlx.softmax
// NONE-LABEL: func.func @native
// NONE-NOT: rlx.linear
// NONE: %[[WT:.*]] = rlx.transpose %w perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
// NONE: %[[MM:.*]] = rlx.matmul %x, %[[WT]] : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// NONE: %[[B:.*]] = rlx.add %[[MM]], %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// NONE: rlx.gelu %[[B]] : tensor<4x8xf32>
// NONE: rlx.reduce_mean {{.*}} axes = [1] keepdims
// NONE: rlx.rsqrt
// NONE: rlx.reduce_max {{.*}} axes = [1] keepdims
// NONE: rlx.exp
// NONE: rlx.reduce_sum {{.*}} axes = [1] keepdims
// NONE: rlx.div
// NONE-NOT: rlx.layer_norm
// NONE-NOT: rlx.softmax
// BAD: unknown target 'tpu', expected one of cuda, none
func.func @native(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %l = rlx.linear %x, %w bias %b activation "gelu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %l2 = rlx.linear %x, %w bias %b activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a = rlx.add %l, %l2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %n = rlx.layer_norm %a, %b, %b eps = 1.0e-05 : tensor<4x8xf32>, tensor<8xf32>
  %s = rlx.softmax %n axis = -1 : tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}

// -----

// Swiglu has no cuda kernel: both targets split it. Rope has one where
// cos/sin's last axis is the input's (a [seq, head_dim] table): cuda keeps
// that one and splits a table of one column (slices, a negation, a
// concat). Attention has one (a fused flash-attention kernel): cuda keeps
// it, none splits it (with the softmax inside split too).
// CUDA-LABEL: func.func @split
// CUDA: %{{.*}} = rlx.attention %q, %k, %v causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
// CUDA: rlx.slice %x starts = [0, 0, 0, 0] ends = [1, 2, 8, 2] steps = [1, 1, 1, 1]
// CUDA: rlx.slice %x starts = [0, 0, 0, 2] ends = [1, 2, 8, 4] steps = [1, 1, 1, 1]
// CUDA: rlx.silu
// CUDA: rlx.rope %x, %c, %c : tensor<1x2x8x4xf32>, tensor<8x4xf32>
// CUDA: rlx.neg
// CUDA: rlx.concat {{.*}} axis = -1
// CUDA-NOT: rlx.swiglu
// CUDA-NOT: rlx.rope %x, %c1
// NONE-LABEL: func.func @split
// NONE: %[[KT:.*]] = rlx.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32>
// NONE: %[[S:.*]] = rlx.matmul %q, %[[KT]] : tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x8x8xf32>
// NONE: rlx.constant dense<5.000000e-01> : tensor<f32>
// NONE: rlx.mul
// NONE: rlx.constant dense<{{.*}}> : tensor<8x8xi1>
// NONE: rlx.select
// NONE: rlx.reduce_max
// NONE: rlx.exp
// NONE: rlx.matmul %{{.*}}, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
// NONE-NOT: rlx.softmax
// NONE-NOT: rlx.attention
func.func @split(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %x: tensor<1x2x8x4xf32>, %c: tensor<8x4xf32>, %c1: tensor<8x1xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %a = rlx.attention %q, %k, %v causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %g = rlx.swiglu %x : tensor<1x2x8x4xf32> -> tensor<1x2x8x2xf32>
  %r = rlx.rope %x, %c, %c : tensor<1x2x8x4xf32>, tensor<8x4xf32>
  %r1 = rlx.rope %x, %c1, %c1 : tensor<1x2x8x4xf32>, tensor<8x1xf32>
  func.return %a, %g, %r, %r1 : tensor<1x2x8x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// A fused residual norm becomes an add and a norm; target=none splits that too.
// CUDA-LABEL: func.func @residual
// CUDA: rlx.fused_residual_rms_norm
// NONE-LABEL: func.func @residual
// NONE: %[[S:.*]] = rlx.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// NONE: rlx.mul %[[S]], %[[S]]
// NONE: rlx.reduce_mean
// NONE: func.return %[[S]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>
func.func @residual(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s, %n = rlx.fused_residual_rms_norm %x, %r, %g eps = 1.0e-06 : tensor<4x8xf32>, tensor<8xf32>
  func.return %s, %n : tensor<4x8xf32>, tensor<4x8xf32>
}

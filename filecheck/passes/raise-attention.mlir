// RUN: rlxc-opt %s --split-input-file -p "rlx-raise-attention,canonicalize,cse,dce" | filecheck %s

// Attention as exporters write it: q·kT, a constant scale, an additive mask,
// softmax, ·v -> one rlx.attention with the scale as its property; kT's
// transpose composes with the exporter's into k's [b, h, s, d].
// CHECK-LABEL: func.func @exported
// CHECK-DAG: %[[Q:[a-z0-9_]+]] = rlx.transpose %q perm = [0, 2, 1, 3]
// CHECK-DAG: %[[K:[a-z0-9_]+]] = rlx.transpose %k perm = [0, 2, 1, 3]
// CHECK-DAG: %[[V:[a-z0-9_]+]] = rlx.transpose %v perm = [0, 2, 1, 3]
// CHECK: %[[A:[a-z0-9_]+]] = rlx.attention %[[Q]], %[[K]], %[[V]] mask %m scale 2.500000e-01
// CHECK-NEXT: func.return %[[A]]
func.func @exported(%q: tensor<2x5x3x8xf32>, %k: tensor<2x5x3x8xf32>, %v: tensor<2x5x3x8xf32>, %m: tensor<2x1x1x5xf32>) -> tensor<2x3x5x8xf32> {
  %qt = rlx.transpose %q perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
  %kt = rlx.transpose %k perm = [0, 2, 3, 1] : tensor<2x5x3x8xf32> -> tensor<2x3x8x5xf32>
  %vt = rlx.transpose %v perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
  %s = rlx.matmul %qt, %kt : tensor<2x3x5x8xf32>, tensor<2x3x8x5xf32> -> tensor<2x3x5x5xf32>
  %c = rlx.constant dense<4.0> : tensor<f32>
  %d = rlx.div %s, %c : tensor<2x3x5x5xf32>, tensor<f32> -> tensor<2x3x5x5xf32>
  %a = rlx.add %d, %m : tensor<2x3x5x5xf32>, tensor<2x1x1x5xf32> -> tensor<2x3x5x5xf32>
  %p = rlx.softmax %a axis = -1 : tensor<2x3x5x5xf32>
  %o = rlx.matmul %p, %vt : tensor<2x3x5x5xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x5x8xf32>
  func.return %o : tensor<2x3x5x8xf32>
}

// -----

// A constant lower-triangular select with a very negative fill is the op's
// causal flag; a softmax whose probabilities are also returned stays.
// CHECK-LABEL: func.func @causal
// CHECK: rlx.attention {{.*}} causal scale 1.000000e+00
// CHECK-LABEL: func.func @probabilities_used
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @causal(%q: tensor<1x2x3x4xf32>, %kt: tensor<1x2x4x3xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %s = rlx.matmul %q, %kt : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32> -> tensor<1x2x3x3xf32>
  %keep = rlx.constant dense<[[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
  %fill = rlx.constant dense<-1.0e+04> : tensor<f32>
  %m = rlx.select %keep, %s, %fill : tensor<3x3xi1>, tensor<1x2x3x3xf32>, tensor<f32> -> tensor<1x2x3x3xf32>
  %p = rlx.softmax %m axis = -1 : tensor<1x2x3x3xf32>
  %o = rlx.matmul %p, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}
func.func @probabilities_used(%q: tensor<1x2x3x4xf32>, %kt: tensor<1x2x4x3xf32>, %v: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>) {
  %s = rlx.matmul %q, %kt : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32> -> tensor<1x2x3x3xf32>
  %p = rlx.softmax %s axis = -1 : tensor<1x2x3x3xf32>
  %o = rlx.matmul %p, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  func.return %o, %p : tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>
}

// RUN: rlxc-opt %s --split-input-file -p rlx-fold-layout | filecheck %s
// RUN: rlxc-opt %s --split-input-file -p rlx-optimize | filecheck %s --check-prefix=OPT

// A BERT layer's attention: reshape [b, s, h, d] -> transpose [0, 2, 1, 3]
// on each of q, k, v, and the result transposed back. Every transpose becomes
// a layout; only views (reshapes) are left, so no transpose kernel runs.
// CHECK-LABEL: func.func @bert
// CHECK-NEXT: %[[Q:.*]] = rlx.reshape %q : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
// CHECK-NEXT: %[[K:.*]] = rlx.reshape %k : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
// CHECK-NEXT: %[[V:.*]] = rlx.reshape %v : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
// CHECK-NEXT: %[[A:.*]] = rlx.attention %[[Q]], %[[K]], %[[V]] mask %m q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x1x1x8xf32> -> tensor<2x8x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = rlx.reshape %[[A]] : tensor<2x8x3x4xf32> -> tensor<2x8x12xf32>
// CHECK-NEXT: func.return %[[R]]
// OPT-LABEL: func.func @bert
// OPT-NOT: rlx.transpose
// OPT: rlx.attention
// OPT-NOT: rlx.transpose
// OPT: func.return
func.func @bert(%q: tensor<2x8x12xf32>, %k: tensor<2x8x12xf32>, %v: tensor<2x8x12xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x8x12xf32> {
  %q4 = rlx.reshape %q : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %k4 = rlx.reshape %k : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %v4 = rlx.reshape %v : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %qt = rlx.transpose %q4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %kt = rlx.transpose %k4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %vt = rlx.transpose %v4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %a = rlx.attention %qt, %kt, %vt mask %m : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x1x1x8xf32> -> tensor<2x3x8x4xf32>
  %at = rlx.transpose %a perm = [0, 2, 1, 3] : tensor<2x3x8x4xf32> -> tensor<2x8x3x4xf32>
  %r = rlx.reshape %at : tensor<2x8x3x4xf32> -> tensor<2x8x12xf32>
  func.return %r : tensor<2x8x12xf32>
}

// -----

// Layouts compose: a transpose into an operand that already has a layout, and
// a result transpose after an out_layout.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT: %[[A:.*]] = rlx.attention %x, %y, %y causal q_layout = [2, 0, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [2, 1, 0, 3] : tensor<8x2x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<8x3x2x4xf32>
// CHECK-NEXT: func.return %[[A]]
func.func @compose(%x: tensor<8x2x3x4xf32>, %y: tensor<2x8x3x4xf32>) -> tensor<8x3x2x4xf32> {
  %xt = rlx.transpose %x perm = [1, 0, 2, 3] : tensor<8x2x3x4xf32> -> tensor<2x8x3x4xf32>
  %a = rlx.attention %xt, %y, %y causal q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<2x8x3x4xf32>
  %at = rlx.transpose %a perm = [1, 2, 0, 3] : tensor<2x8x3x4xf32> -> tensor<8x3x2x4xf32>
  func.return %at : tensor<8x3x2x4xf32>
}

// -----

// What stays: a transpose that moves head_dim (key as [b, h, d, s]); an
// operand transpose with another user (folded into the layout, but kept for
// that user); result transposes when the result has several users.
// CHECK-LABEL: func.func @stays
// CHECK-NEXT: %[[QT:.*]] = rlx.transpose %x perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[KT:.*]] = rlx.transpose %k perm = [0, 1, 3, 2]
// CHECK-NEXT: %[[A:.*]] = rlx.attention %x, %[[KT]], %[[KT]] q_layout = [0, 2, 1, 3] : tensor<2x5x3x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x5x8xf32>
// CHECK-NEXT: %[[O1:.*]] = rlx.transpose %[[A]] perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[O2:.*]] = rlx.transpose %[[A]] perm = [0, 1, 3, 2]
// CHECK-NEXT: %[[E:.*]] = rlx.exp %[[QT]]
// CHECK-NEXT: func.return %[[O1]], %[[O2]], %[[E]]
func.func @stays(%x: tensor<2x5x3x8xf32>, %k: tensor<2x3x8x5xf32>) -> (tensor<2x5x3x8xf32>, tensor<2x3x8x5xf32>, tensor<2x3x5x8xf32>) {
  %qt = rlx.transpose %x perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
  %kt = rlx.transpose %k perm = [0, 1, 3, 2] : tensor<2x3x8x5xf32> -> tensor<2x3x5x8xf32>
  %a = rlx.attention %qt, %kt, %kt : tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x5x8xf32>
  %o1 = rlx.transpose %a perm = [0, 2, 1, 3] : tensor<2x3x5x8xf32> -> tensor<2x5x3x8xf32>
  %o2 = rlx.transpose %a perm = [0, 1, 3, 2] : tensor<2x3x5x8xf32> -> tensor<2x3x8x5xf32>
  %e = rlx.exp %qt : tensor<2x3x5x8xf32>
  func.return %o1, %o2, %e : tensor<2x5x3x8xf32>, tensor<2x3x8x5xf32>, tensor<2x3x5x8xf32>
}

// -----

// A result transpose that would move head_dim stays.
// CHECK-LABEL: func.func @result_moves_head_dim
// CHECK-NEXT: %[[A:.*]] = rlx.attention %x, %x, %x : tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x5x8xf32>
// CHECK-NEXT: rlx.transpose %[[A]] perm = [0, 1, 3, 2]
func.func @result_moves_head_dim(%x: tensor<2x3x5x8xf32>) -> tensor<2x3x8x5xf32> {
  %a = rlx.attention %x, %x, %x : tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32> -> tensor<2x3x5x8xf32>
  %t = rlx.transpose %a perm = [0, 1, 3, 2] : tensor<2x3x5x8xf32> -> tensor<2x3x8x5xf32>
  func.return %t : tensor<2x3x8x5xf32>
}

// -----

// A merged Q/K/V projection [b, s, 3·h·d] sliced into q, k and v: each slice
// of whole heads becomes a head window on one [b, s, 3·h, d] view, and the
// slices (copies) are gone.
// CHECK-LABEL: func.func @merged_qkv
// CHECK-NEXT: %[[W:.*]] = rlx.reshape %qkv : tensor<2x8x36xf32> -> tensor<2x8x9x4xf32>
// CHECK-NEXT: %[[W2:.*]] = rlx.reshape %qkv : tensor<2x8x36xf32> -> tensor<2x8x9x4xf32>
// CHECK-NEXT: %[[W3:.*]] = rlx.reshape %qkv : tensor<2x8x36xf32> -> tensor<2x8x9x4xf32>
// CHECK-NEXT: %[[A:.*]] = rlx.attention %[[W]], %[[W2]], %[[W3]] q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [0, 2, 1, 3] q_heads = [0, 3] k_heads = [3, 3] v_heads = [6, 3] : tensor<2x8x9x4xf32>, tensor<2x8x9x4xf32>, tensor<2x8x9x4xf32> -> tensor<2x8x3x4xf32>
// CHECK-NOT: rlx.slice
// OPT-LABEL: func.func @merged_qkv
// OPT-NEXT: %[[W:.*]] = rlx.reshape %qkv
// OPT-NEXT: rlx.attention %[[W]], %[[W]], %[[W]] {{.*}} q_heads = [0, 3] k_heads = [3, 3] v_heads = [6, 3]
// OPT-NOT: rlx.slice
func.func @merged_qkv(%qkv: tensor<2x8x36xf32>) -> tensor<2x8x12xf32> {
  %q = rlx.slice %qkv starts = [0, 0, 0] ends = [2, 8, 12] steps = [1, 1, 1] : tensor<2x8x36xf32> -> tensor<2x8x12xf32>
  %k = rlx.slice %qkv starts = [0, 0, 12] ends = [2, 8, 24] steps = [1, 1, 1] : tensor<2x8x36xf32> -> tensor<2x8x12xf32>
  %v = rlx.slice %qkv starts = [0, 0, 24] ends = [2, 8, 36] steps = [1, 1, 1] : tensor<2x8x36xf32> -> tensor<2x8x12xf32>
  %q4 = rlx.reshape %q : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %k4 = rlx.reshape %k : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %v4 = rlx.reshape %v : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %qt = rlx.transpose %q4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %kt = rlx.transpose %k4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %vt = rlx.transpose %v4 perm = [0, 2, 1, 3] : tensor<2x8x3x4xf32> -> tensor<2x3x8x4xf32>
  %a = rlx.attention %qt, %kt, %vt : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  %at = rlx.transpose %a perm = [0, 2, 1, 3] : tensor<2x3x8x4xf32> -> tensor<2x8x3x4xf32>
  %r = rlx.reshape %at : tensor<2x8x3x4xf32> -> tensor<2x8x12xf32>
  func.return %r : tensor<2x8x12xf32>
}

// -----

// Transposes of the last two axes feeding rlx.matmul become its transpose
// flags (cuBLASLt reads the operand where it is); two cancel; a transpose with
// another user stays for that user.
// CHECK-LABEL: func.func @matmul_flags
// CHECK-NEXT: %[[S:.*]] = rlx.matmul %q, %k transpose_rhs : tensor<2x3x9x8xf32>, tensor<2x3x11x8xf32> -> tensor<2x3x9x11xf32>
// CHECK-NEXT: %[[AT:.*]] = rlx.transpose %a perm = [1, 0]
// CHECK-NEXT: %[[G:.*]] = rlx.matmul %a, %b transpose_lhs : tensor<8x5xf32>, tensor<8x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %[[B:.*]] = rlx.matmul %b, %a transpose_lhs : tensor<8x6xf32>, tensor<8x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT: %[[E:.*]] = rlx.exp %[[AT]]
// CHECK-NEXT: func.return %[[S]], %[[G]], %[[B]], %[[E]]
func.func @matmul_flags(%q: tensor<2x3x9x8xf32>, %k: tensor<2x3x11x8xf32>, %a: tensor<8x5xf32>, %b: tensor<8x6xf32>) -> (tensor<2x3x9x11xf32>, tensor<5x6xf32>, tensor<6x5xf32>, tensor<5x8xf32>) {
  %kt = rlx.transpose %k perm = [0, 1, 3, 2] : tensor<2x3x11x8xf32> -> tensor<2x3x8x11xf32>
  %s = rlx.matmul %q, %kt : tensor<2x3x9x8xf32>, tensor<2x3x8x11xf32> -> tensor<2x3x9x11xf32>
  %at = rlx.transpose %a perm = [1, 0] : tensor<8x5xf32> -> tensor<5x8xf32>
  %g = rlx.matmul %at, %b : tensor<5x8xf32>, tensor<8x6xf32> -> tensor<5x6xf32>
  %bt = rlx.transpose %b perm = [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  %att = rlx.transpose %at perm = [1, 0] : tensor<5x8xf32> -> tensor<8x5xf32>
  %both = rlx.matmul %bt, %att : tensor<6x8xf32>, tensor<8x5xf32> -> tensor<6x5xf32>
  %e = rlx.exp %at : tensor<5x8xf32>
  func.return %s, %g, %both, %e : tensor<2x3x9x11xf32>, tensor<5x6xf32>, tensor<6x5xf32>, tensor<5x8xf32>
}

// -----

// Grouped-query attention as Hugging Face's repeat_kv writes it: the key and
// value heads (2) unsqueezed, expanded 4 times and merged back to the query's
// 8. The repeat folds away: attention reads 2 key/value heads (each by 4
// query heads) and the head transposes become layouts; no expand is left.
// CHECK-LABEL: func.func @repeat_kv
// CHECK-NOT: rlx.expand
// CHECK: %[[A:.*]] = rlx.attention %{{.*}}, %{{.*}}, %{{.*}} causal q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] : tensor<1x5x8x4xf32>, tensor<1x5x2x4xf32>, tensor<1x5x2x4xf32> -> tensor<1x8x5x4xf32>
// CHECK-NOT: rlx.expand
// CHECK: func.return %[[A]]
// OPT-LABEL: func.func @repeat_kv
// OPT-NOT: rlx.expand
// OPT-NOT: rlx.transpose
// OPT: rlx.attention {{.*}} : tensor<1x5x8x4xf32>, tensor<1x5x2x4xf32>, tensor<1x5x2x4xf32> -> tensor<1x8x5x4xf32>
func.func @repeat_kv(%q: tensor<1x5x8x4xf32>, %k: tensor<1x5x2x4xf32>, %v: tensor<1x5x2x4xf32>) -> tensor<1x8x5x4xf32> {
  %qt = rlx.transpose %q perm = [0, 2, 1, 3] : tensor<1x5x8x4xf32> -> tensor<1x8x5x4xf32>
  %kt = rlx.transpose %k perm = [0, 2, 1, 3] : tensor<1x5x2x4xf32> -> tensor<1x2x5x4xf32>
  %vt = rlx.transpose %v perm = [0, 2, 1, 3] : tensor<1x5x2x4xf32> -> tensor<1x2x5x4xf32>
  %k5 = rlx.reshape %kt : tensor<1x2x5x4xf32> -> tensor<1x2x1x5x4xf32>
  %v5 = rlx.reshape %vt : tensor<1x2x5x4xf32> -> tensor<1x2x1x5x4xf32>
  %ke = rlx.expand %k5 : tensor<1x2x1x5x4xf32> -> tensor<1x2x4x5x4xf32>
  %ve = rlx.expand %v5 : tensor<1x2x1x5x4xf32> -> tensor<1x2x4x5x4xf32>
  %kr = rlx.reshape %ke : tensor<1x2x4x5x4xf32> -> tensor<1x8x5x4xf32>
  %vr = rlx.reshape %ve : tensor<1x2x4x5x4xf32> -> tensor<1x8x5x4xf32>
  %a = rlx.attention %qt, %kr, %vr causal : tensor<1x8x5x4xf32>, tensor<1x8x5x4xf32>, tensor<1x8x5x4xf32> -> tensor<1x8x5x4xf32>
  func.return %a : tensor<1x8x5x4xf32>
}

// -----

// The repeat done in the [b, s, h, d] layout (heads on physical axis 2), before
// the head transpose: the same fold, through the key's layout (the unsqueeze
// stays, viewed without its unit axis). The value's expand repeats the
// sequence, not the heads: it stays.
// CHECK-LABEL: func.func @repeat_in_layout
// CHECK: %[[V:.*]] = rlx.expand %v : tensor<1x1x8x4xf32> -> tensor<1x5x8x4xf32>
// CHECK: %[[K:.*]] = rlx.reshape %k5 : tensor<1x5x2x1x4xf32> -> tensor<1x5x2x4xf32>
// CHECK: rlx.attention %q, %[[K]], %[[V]] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] : tensor<1x8x5x4xf32>, tensor<1x5x2x4xf32>, tensor<1x5x8x4xf32> -> tensor<1x8x5x4xf32>
func.func @repeat_in_layout(%q: tensor<1x8x5x4xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x1x8x4xf32>) -> tensor<1x8x5x4xf32> {
  %k5 = rlx.reshape %k : tensor<1x5x8xf32> -> tensor<1x5x2x1x4xf32>
  %ke = rlx.expand %k5 : tensor<1x5x2x1x4xf32> -> tensor<1x5x2x4x4xf32>
  %kr = rlx.reshape %ke : tensor<1x5x2x4x4xf32> -> tensor<1x5x8x4xf32>
  %kt = rlx.transpose %kr perm = [0, 2, 1, 3] : tensor<1x5x8x4xf32> -> tensor<1x8x5x4xf32>
  %ve = rlx.expand %v : tensor<1x1x8x4xf32> -> tensor<1x5x8x4xf32>
  %vt = rlx.transpose %ve perm = [0, 2, 1, 3] : tensor<1x5x8x4xf32> -> tensor<1x8x5x4xf32>
  %a = rlx.attention %q, %kt, %vt : tensor<1x8x5x4xf32>, tensor<1x8x5x4xf32>, tensor<1x8x5x4xf32> -> tensor<1x8x5x4xf32>
  func.return %a : tensor<1x8x5x4xf32>
}

// -----

// A repeat whose copies are not of whole heads (tile order: the expanded axis
// before the heads, [h0 h1 h0 h1 ...]) is not grouped-query attention: it stays.
// CHECK-LABEL: func.func @tiled_heads_stay
// CHECK: rlx.expand
// CHECK: rlx.attention %q, %{{.*}}, %{{.*}} : tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>
func.func @tiled_heads_stay(%q: tensor<1x4x5x4xf32>, %k: tensor<1x2x5x4xf32>) -> tensor<1x4x5x4xf32> {
  %k5 = rlx.reshape %k : tensor<1x2x5x4xf32> -> tensor<1x1x2x5x4xf32>
  %ke = rlx.expand %k5 : tensor<1x1x2x5x4xf32> -> tensor<1x2x2x5x4xf32>
  %kr = rlx.reshape %ke : tensor<1x2x2x5x4xf32> -> tensor<1x4x5x4xf32>
  %a = rlx.attention %q, %kr, %kr : tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32> -> tensor<1x4x5x4xf32>
  func.return %a : tensor<1x4x5x4xf32>
}

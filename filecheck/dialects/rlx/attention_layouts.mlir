// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// rlx.attention's operand layouts round-trip; each is printed only when set.
// Physical shapes are the logical [b, h, s, d] permuted: q is [b, s, h, d].
// CHECK-LABEL: func.func @layouts(
// CHECK-NEXT: %{{.*}} = rlx.attention %q, %k, %v q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<2x8x3x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.attention %q, %t, %t mask %m causal scale 5.000000e-01 q_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x1x1x8xf32> -> tensor<2x3x8x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.attention %t, %k, %v k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [2, 1, 0, 3] : tensor<2x3x8x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<8x3x2x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.attention %t, %t, %t : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
// CHECK-NEXT: func.return
// GENERIC: "rlx.attention"(%q, %k, %v) <{q_layout = array<i64: 0, 2, 1, 3>, k_layout = array<i64: 0, 2, 1, 3>, v_layout = array<i64: 0, 2, 1, 3>, out_layout = array<i64: 0, 2, 1, 3>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
func.func @layouts(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x4xf32>, %m: tensor<2x1x1x8xf32>, %t: tensor<2x3x8x4xf32>) {
  %0 = rlx.attention %q, %k, %v q_layout = [0, 2, 1, 3] k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<2x8x3x4xf32>
  %1 = rlx.attention %q, %t, %t mask %m causal scale 5.0e-01 q_layout = [0, 2, 1, 3] : tensor<2x8x3x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x1x1x8xf32> -> tensor<2x3x8x4xf32>
  %2 = rlx.attention %t, %k, %v k_layout = [0, 2, 1, 3] v_layout = [0, 2, 1, 3] out_layout = [2, 1, 0, 3] : tensor<2x3x8x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32> -> tensor<8x3x2x4xf32>
  %3 = rlx.attention %t, %t, %t : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  func.return
}

// Grouped-query attention round-trips: 6 query heads over 2 key heads and 3
// value heads (the value in the [b, s, h, d] layout).
// CHECK-LABEL: func.func @grouped(
// CHECK-NEXT: %{{.*}} = rlx.attention %q, %k, %v causal v_layout = [0, 2, 1, 3] : tensor<1x6x5x4xf32>, tensor<1x2x7x4xf32>, tensor<1x7x3x8xf32> -> tensor<1x6x5x8xf32>
func.func @grouped(%q: tensor<1x6x5x4xf32>, %k: tensor<1x2x7x4xf32>, %v: tensor<1x7x3x8xf32>) {
  %0 = rlx.attention %q, %k, %v causal v_layout = [0, 2, 1, 3] : tensor<1x6x5x4xf32>, tensor<1x2x7x4xf32>, tensor<1x7x3x8xf32> -> tensor<1x6x5x8xf32>
  func.return
}

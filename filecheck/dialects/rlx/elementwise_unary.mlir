// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x16xf32>, %h: tensor<8xf16>, %i: tensor<3xi32>) -> tensor<4x16xf32> {
  // CHECK: %{{.*}} = rlx.exp %{{.*}} : tensor<4x16xf32>
  %0 = rlx.exp %x : tensor<4x16xf32>
  // CHECK: rlx.gelu %{{.*}} : tensor<8xf16>
  %1 = rlx.gelu %h : tensor<8xf16>
  // CHECK: rlx.neg %{{.*}} : tensor<3xi32>
  %2 = rlx.neg %i : tensor<3xi32>
  func.return %0 : tensor<4x16xf32>
}

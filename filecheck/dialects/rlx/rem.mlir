// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-optimize | filecheck %s --check-prefix=FUSED
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.rem, the exact remainder with the dividend's sign: arith.remf (upstream
// MLIR's, loaded beside xDSL's arith) on floats, C's fmodf in CUDA;
// arith.remsi on integers (rlx_rem: x % 0 is 0).

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %{{.*}} = rlx.rem %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %{{.*}} = rlx.rem %{{.*}}, %{{.*}} : tensor<6xi32>, tensor<6xi32> -> tensor<6xi32>
// FUSED:      rlx.elementwise_region
// FUSED:        arith.remf
// FUSED:      rlx.elementwise_region
// FUSED:        arith.remsi
// CUDA:       fmodf(a0, a1)
// CUDA:       rlx_rem(a0, a1)
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<6xi32>, %d: tensor<6xi32>) -> (tensor<4x8xf32>, tensor<6xi32>) {
  %y = rlx.rem %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %z = rlx.rem %c, %d : tensor<6xi32>, tensor<6xi32> -> tensor<6xi32>
  func.return %y, %z : tensor<4x8xf32>, tensor<6xi32>
}

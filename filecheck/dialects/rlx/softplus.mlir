// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-optimize | filecheck %s --check-prefix=FUSED
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// The worked example of docs/adding-an-op.md: rlx.softplus at every level.

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %{{.*}} = rlx.softplus %{{.*}} : tensor<4x8xf32>
// FUSED:      rlx.elementwise_region
// FUSED:        math.absf
// FUSED-NEXT:   arith.negf
// FUSED-NEXT:   math.exp
// FUSED-NEXT:   math.log1p
// FUSED:        arith.maximumf
// FUSED-NEXT:   arith.addf
// CUDA:       // rlx.elementwise_region
// CUDA:       fabsf(a0)
// CUDA:       log1pf(
// CUDA:       rlx_maxf(a0,
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = rlx.softplus %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}


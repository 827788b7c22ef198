// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of rlx.matmul: numpy.matmul on rank >= 2, batch dimensions broadcast.

// CHECK-LABEL: func.func @matmul(
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %ba: tensor<2x4x8xf32>, %bb: tensor<2x8x3xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %0 = rlx.matmul %a, %b : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<2x4x3xf32>
  %1 = rlx.matmul %ba, %b : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  %2 = rlx.matmul %a, %bb : tensor<4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  %3 = rlx.matmul %ba, %bb : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Batch dimensions broadcast like numpy: size-1 axes and missing leading axes.
// CHECK-LABEL: func.func @batch_broadcast(
func.func @batch_broadcast(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>, %c: tensor<1x6x8xf16>, %d: tensor<7x1x8x2xf16>, %e: tensor<1x1x2x3xbf16>, %f: tensor<3x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<2x1x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x3x4x5xf32>
  %0 = rlx.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<1x6x8xf16>, tensor<7x1x8x2xf16> -> tensor<7x1x6x2xf16>
  %1 = rlx.matmul %c, %d : tensor<1x6x8xf16>, tensor<7x1x8x2xf16> -> tensor<7x1x6x2xf16>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<1x1x2x3xbf16>, tensor<3x4xbf16> -> tensor<1x1x2x4xbf16>
  %2 = rlx.matmul %e, %f : tensor<1x1x2x3xbf16>, tensor<3x4xbf16> -> tensor<1x1x2x4xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// Degenerate extents: matrix-vector shaped as Nx1, and a zero-size batch.
// CHECK-LABEL: func.func @degenerate(
func.func @degenerate(%a: tensor<4x8xf32>, %v: tensor<8x1xf32>, %z: tensor<0x4x8xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
  %0 = rlx.matmul %a, %v : tensor<4x8xf32>, tensor<8x1xf32> -> tensor<4x1xf32>
  // CHECK-NEXT: %{{.*}} = rlx.matmul %{{.*}}, %{{.*}} : tensor<0x4x8xf32>, tensor<8x1xf32> -> tensor<0x4x1xf32>
  %1 = rlx.matmul %z, %v : tensor<0x4x8xf32>, tensor<8x1xf32> -> tensor<0x4x1xf32>
  // CHECK-NEXT: func.return
  func.return
}

// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the reductions and rlx.argmax, with and without keepdims.

// CHECK-LABEL: func.func @reduce_f32(
func.func @reduce_f32(%x: tensor<2x4x16xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [2] : tensor<2x4x16xf32> -> tensor<2x4xf32>
  %0 = rlx.reduce_sum %x axes = [2] : tensor<2x4x16xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [2] keepdims : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  %1 = rlx.reduce_sum %x axes = [2] keepdims : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_mean %{{.*}} axes = [-1] : tensor<2x4x16xf32> -> tensor<2x4xf32>
  %2 = rlx.reduce_mean %x axes = [-1] : tensor<2x4x16xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_mean %{{.*}} axes = [0, 2] keepdims : tensor<2x4x16xf32> -> tensor<1x4x1xf32>
  %3 = rlx.reduce_mean %x axes = [0, 2] keepdims : tensor<2x4x16xf32> -> tensor<1x4x1xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_max %{{.*}} axes = [1] : tensor<2x4x16xf32> -> tensor<2x16xf32>
  %4 = rlx.reduce_max %x axes = [1] : tensor<2x4x16xf32> -> tensor<2x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_max %{{.*}} axes = [1] keepdims : tensor<2x4x16xf32> -> tensor<2x1x16xf32>
  %5 = rlx.reduce_max %x axes = [1] keepdims : tensor<2x4x16xf32> -> tensor<2x1x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_min %{{.*}} axes = [0] : tensor<2x4x16xf32> -> tensor<4x16xf32>
  %6 = rlx.reduce_min %x axes = [0] : tensor<2x4x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_min %{{.*}} axes = [-3] keepdims : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
  %7 = rlx.reduce_min %x axes = [-3] keepdims : tensor<2x4x16xf32> -> tensor<1x4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_prod %{{.*}} axes = [0, 1, 2] : tensor<2x4x16xf32> -> tensor<f32>
  %8 = rlx.reduce_prod %x axes = [0, 1, 2] : tensor<2x4x16xf32> -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_prod %{{.*}} axes = [2, 0, 1] keepdims : tensor<2x4x16xf32> -> tensor<1x1x1xf32>
  %9 = rlx.reduce_prod %x axes = [2, 0, 1] keepdims : tensor<2x4x16xf32> -> tensor<1x1x1xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Axes may be listed in any order and negative; the printer keeps them as written.
// CHECK-LABEL: func.func @reduce_axes(
func.func @reduce_axes(%x: tensor<3x5x7xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [-1, 0] : tensor<3x5x7xf32> -> tensor<5xf32>
  %0 = rlx.reduce_sum %x axes = [-1, 0] : tensor<3x5x7xf32> -> tensor<5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_mean %{{.*}} axes = [2, -2] keepdims : tensor<3x5x7xf32> -> tensor<3x1x1xf32>
  %1 = rlx.reduce_mean %x axes = [2, -2] keepdims : tensor<3x5x7xf32> -> tensor<3x1x1xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @reduce_other_types(
func.func @reduce_other_types(%h: tensor<4x8xf16>, %b: tensor<4x8xbf16>, %i: tensor<4x8xi32>, %l: tensor<4x8xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.reduce_mean %{{.*}} axes = [1] : tensor<4x8xf16> -> tensor<4xf16>
  %0 = rlx.reduce_mean %h axes = [1] : tensor<4x8xf16> -> tensor<4xf16>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [0] keepdims : tensor<4x8xbf16> -> tensor<1x8xbf16>
  %1 = rlx.reduce_sum %b axes = [0] keepdims : tensor<4x8xbf16> -> tensor<1x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [1] : tensor<4x8xi32> -> tensor<4xi32>
  %2 = rlx.reduce_sum %i axes = [1] : tensor<4x8xi32> -> tensor<4xi32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_max %{{.*}} axes = [0] keepdims : tensor<4x8xi32> -> tensor<1x8xi32>
  %3 = rlx.reduce_max %i axes = [0] keepdims : tensor<4x8xi32> -> tensor<1x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_min %{{.*}} axes = [1] : tensor<4x8xi64> -> tensor<4xi64>
  %4 = rlx.reduce_min %l axes = [1] : tensor<4x8xi64> -> tensor<4xi64>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_prod %{{.*}} axes = [0, 1] keepdims : tensor<4x8xi64> -> tensor<1x1xi64>
  %5 = rlx.reduce_prod %l axes = [0, 1] keepdims : tensor<4x8xi64> -> tensor<1x1xi64>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_max %{{.*}} axes = [-1] : tensor<4x8xf16> -> tensor<4xf16>
  %6 = rlx.reduce_max %h axes = [-1] : tensor<4x8xf16> -> tensor<4xf16>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_min %{{.*}} axes = [1] keepdims : tensor<4x8xbf16> -> tensor<4x1xbf16>
  %7 = rlx.reduce_min %b axes = [1] keepdims : tensor<4x8xbf16> -> tensor<4x1xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.reduce_prod %{{.*}} axes = [0] : tensor<4x8xf16> -> tensor<8xf16>
  %8 = rlx.reduce_prod %h axes = [0] : tensor<4x8xf16> -> tensor<8xf16>
  // CHECK-NEXT: func.return
  func.return
}

// argmax: i64 indices whatever the input type.
// CHECK-LABEL: func.func @argmax(
func.func @argmax(%x: tensor<4x16xf32>, %h: tensor<2x3x5xf16>, %b: tensor<7xbf16>, %i: tensor<4x16xi32>, %l: tensor<3x3xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = 1 : tensor<4x16xf32> -> tensor<4xi64>
  %0 = rlx.argmax %x axis = 1 : tensor<4x16xf32> -> tensor<4xi64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = 1 keepdims : tensor<4x16xf32> -> tensor<4x1xi64>
  %1 = rlx.argmax %x axis = 1 keepdims : tensor<4x16xf32> -> tensor<4x1xi64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = -2 : tensor<4x16xf32> -> tensor<16xi64>
  %2 = rlx.argmax %x axis = -2 : tensor<4x16xf32> -> tensor<16xi64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = 0 keepdims : tensor<2x3x5xf16> -> tensor<1x3x5xi64>
  %3 = rlx.argmax %h axis = 0 keepdims : tensor<2x3x5xf16> -> tensor<1x3x5xi64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = 0 : tensor<7xbf16> -> tensor<i64>
  %4 = rlx.argmax %b axis = 0 : tensor<7xbf16> -> tensor<i64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = -1 : tensor<4x16xi32> -> tensor<4xi64>
  %5 = rlx.argmax %i axis = -1 : tensor<4x16xi32> -> tensor<4xi64>
  // CHECK-NEXT: %{{.*}} = rlx.argmax %{{.*}} axis = 0 keepdims : tensor<3x3xi64> -> tensor<1x3xi64>
  %6 = rlx.argmax %l axis = 0 keepdims : tensor<3x3xi64> -> tensor<1x3xi64>
  // CHECK-NEXT: func.return
  func.return
}

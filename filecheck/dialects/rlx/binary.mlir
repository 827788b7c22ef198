// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the 7 binary broadcasting ops:
// `%z = rlx.<op> %a, %b : tensor<A>, tensor<B> -> tensor<C>`.

// CHECK-LABEL: func.func @same_shape(
func.func @same_shape(%f32: tensor<4x8xf32>, %f16: tensor<4x8xf16>, %bf16: tensor<4x8xbf16>, %i32: tensor<4x8xi32>, %i64: tensor<4x8xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = rlx.add %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %1 = rlx.add %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %2 = rlx.add %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %3 = rlx.add %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %4 = rlx.add %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = rlx.sub %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %6 = rlx.sub %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %7 = rlx.sub %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %8 = rlx.sub %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %9 = rlx.sub %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %10 = rlx.mul %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %11 = rlx.mul %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %12 = rlx.mul %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %13 = rlx.mul %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %14 = rlx.mul %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %15 = rlx.div %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %16 = rlx.div %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %17 = rlx.div %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %18 = rlx.div %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %19 = rlx.div %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.pow %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %20 = rlx.pow %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.pow %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %21 = rlx.pow %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.pow %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %22 = rlx.pow %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %23 = rlx.maximum %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %24 = rlx.maximum %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %25 = rlx.maximum %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %26 = rlx.maximum %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %27 = rlx.maximum %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %28 = rlx.minimum %f32, %f32 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %29 = rlx.minimum %f16, %f16 : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %30 = rlx.minimum %bf16, %bf16 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %31 = rlx.minimum %i32, %i32 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  %32 = rlx.minimum %i64, %i64 : tensor<4x8xi64>, tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: func.return
  func.return
}

// Numpy broadcasting: trailing alignment, size-1 axes on either side, rank 0.
// CHECK-LABEL: func.func @broadcasting(
func.func @broadcasting(%a: tensor<4x16xf32>, %row: tensor<16xf32>, %col: tensor<4x1xf32>, %r1: tensor<1x16xf32>, %s: tensor<f32>, %b3: tensor<2x1x8xi64>, %c2: tensor<3x1xi64>, %h: tensor<1xf16>, %h2: tensor<5x1x7xf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %0 = rlx.add %a, %row : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sub %{{.*}}, %{{.*}} : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %1 = rlx.sub %row, %a : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  %2 = rlx.mul %col, %r1 : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.div %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %3 = rlx.div %a, %s : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.pow %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32> -> tensor<f32>
  %4 = rlx.pow %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = rlx.maximum %{{.*}}, %{{.*}} : tensor<2x1x8xi64>, tensor<3x1xi64> -> tensor<2x3x8xi64>
  %5 = rlx.maximum %b3, %c2 : tensor<2x1x8xi64>, tensor<3x1xi64> -> tensor<2x3x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.minimum %{{.*}}, %{{.*}} : tensor<1xf16>, tensor<5x1x7xf16> -> tensor<5x1x7xf16>
  %6 = rlx.minimum %h, %h2 : tensor<1xf16>, tensor<5x1x7xf16> -> tensor<5x1x7xf16>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %7 = rlx.add %col, %row : tensor<4x1xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Zero-size axes broadcast like any other extent; discardable attributes are kept.
// CHECK-LABEL: func.func @edge(
func.func @edge(%z: tensor<0x4xf32>, %r: tensor<4xf32>, %o: tensor<1x4xi32>) {
  // CHECK-NEXT: %{{.*}} = rlx.mul %{{.*}}, %{{.*}} : tensor<0x4xf32>, tensor<4xf32> -> tensor<0x4xf32>
  %0 = rlx.mul %z, %r : tensor<0x4xf32>, tensor<4xf32> -> tensor<0x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.add %{{.*}}, %{{.*}} {tag = 1 : i64} : tensor<1x4xi32>, tensor<1x4xi32> -> tensor<1x4xi32>
  %1 = rlx.add %o, %o {tag = 1 : i64} : tensor<1x4xi32>, tensor<1x4xi32> -> tensor<1x4xi32>
  // CHECK-NEXT: func.return
  func.return
}

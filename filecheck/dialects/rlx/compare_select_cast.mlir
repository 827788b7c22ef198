// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the comparisons (i1 results), rlx.select and rlx.cast.

// CHECK-LABEL: func.func @compare(
func.func @compare(%f32: tensor<2x3xf32>, %f16: tensor<2x3xf16>, %bf16: tensor<2x3xbf16>, %i32: tensor<2x3xi32>, %i64: tensor<2x3xi64>, %i1: tensor<2x3xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %0 = rlx.eq %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %1 = rlx.eq %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %2 = rlx.eq %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %3 = rlx.eq %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %4 = rlx.eq %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.eq %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %5 = rlx.eq %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %6 = rlx.ne %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %7 = rlx.ne %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %8 = rlx.ne %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %9 = rlx.ne %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %10 = rlx.ne %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %11 = rlx.ne %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %12 = rlx.lt %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %13 = rlx.lt %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %14 = rlx.lt %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %15 = rlx.lt %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %16 = rlx.lt %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %17 = rlx.lt %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %18 = rlx.le %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %19 = rlx.le %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %20 = rlx.le %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %21 = rlx.le %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %22 = rlx.le %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.le %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %23 = rlx.le %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %24 = rlx.gt %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %25 = rlx.gt %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %26 = rlx.gt %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %27 = rlx.gt %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %28 = rlx.gt %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.gt %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %29 = rlx.gt %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %30 = rlx.ge %f32, %f32 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  %31 = rlx.ge %f16, %f16 : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  %32 = rlx.ge %bf16, %bf16 : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  %33 = rlx.ge %i32, %i32 : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  %34 = rlx.ge %i64, %i64 : tensor<2x3xi64>, tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %35 = rlx.ge %i1, %i1 : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: func.return
  func.return
}

// Comparisons broadcast like the binary ops.
// CHECK-LABEL: func.func @compare_broadcast(
func.func @compare_broadcast(%a: tensor<4x1xf32>, %b: tensor<8xf32>, %s: tensor<i64>, %v: tensor<2x5xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.lt %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %0 = rlx.lt %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ge %{{.*}}, %{{.*}} : tensor<i64>, tensor<2x5xi64> -> tensor<2x5xi1>
  %1 = rlx.ge %s, %v : tensor<i64>, tensor<2x5xi64> -> tensor<2x5xi1>
  // CHECK-NEXT: %{{.*}} = rlx.ne %{{.*}}, %{{.*}} : tensor<i64>, tensor<i64> -> tensor<i1>
  %2 = rlx.ne %s, %s : tensor<i64>, tensor<i64> -> tensor<i1>
  // CHECK-NEXT: func.return
  func.return
}

// select: the condition and both branches broadcast together.
// CHECK-LABEL: func.func @select(
func.func @select(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %b: tensor<8xf32>, %cs: tensor<i1>, %h: tensor<2x3xf16>, %bf: tensor<2x3xbf16>, %i: tensor<3xi32>, %l: tensor<2x1xi64>, %m: tensor<2x3xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %0 = rlx.select %c, %a, %b : tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  %1 = rlx.select %cs, %h, %h : tensor<i1>, tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xbf16>
  %2 = rlx.select %m, %bf, %bf : tensor<2x3xi1>, tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<3xi32>, tensor<3xi32> -> tensor<2x3xi32>
  %3 = rlx.select %m, %i, %i : tensor<2x3xi1>, tensor<3xi32>, tensor<3xi32> -> tensor<2x3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x1xi64>, tensor<2x1xi64> -> tensor<2x3xi64>
  %4 = rlx.select %m, %l, %l : tensor<2x3xi1>, tensor<2x1xi64>, tensor<2x1xi64> -> tensor<2x3xi64>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  %5 = rlx.select %cs, %m, %m : tensor<i1>, tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = rlx.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %6 = rlx.select %c, %b, %b : tensor<4x1xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// cast: any element type to any other (and to itself), same shape.
// CHECK-LABEL: func.func @cast(
func.func @cast(%f32: tensor<4x8xf32>, %f16: tensor<4x8xf16>, %bf16: tensor<4x8xbf16>, %i32: tensor<4x8xi32>, %i64: tensor<4x8xi64>, %i1: tensor<4x8xi1>, %s: tensor<f32>) {
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %0 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf16>
  %1 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %2 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xi32>
  %3 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xi64>
  %4 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xi1>
  %5 = rlx.cast %f32 : tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf32>
  %6 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
  %7 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xbf16>
  %8 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xi32>
  %9 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xi64>
  %10 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xf16> -> tensor<4x8xi1>
  %11 = rlx.cast %f16 : tensor<4x8xf16> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xf32>
  %12 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xf16>
  %13 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xbf16>
  %14 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xi32>
  %15 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xi64>
  %16 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xi1>
  %17 = rlx.cast %bf16 : tensor<4x8xbf16> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xf32>
  %18 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xf16>
  %19 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xbf16>
  %20 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xi32>
  %21 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xi64>
  %22 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xi1>
  %23 = rlx.cast %i32 : tensor<4x8xi32> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xf32>
  %24 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xf16>
  %25 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xbf16>
  %26 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xi32>
  %27 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xi64>
  %28 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi64> -> tensor<4x8xi1>
  %29 = rlx.cast %i64 : tensor<4x8xi64> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xf32>
  %30 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xf16>
  %31 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xbf16>
  %32 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xi32>
  %33 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xi64>
  %34 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xi64>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<4x8xi1> -> tensor<4x8xi1>
  %35 = rlx.cast %i1 : tensor<4x8xi1> -> tensor<4x8xi1>
  // CHECK-NEXT: %{{.*}} = rlx.cast %{{.*}} : tensor<f32> -> tensor<i64>
  %36 = rlx.cast %s : tensor<f32> -> tensor<i64>
  // CHECK-NEXT: func.return
  func.return
}

// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the 30 unary elementwise ops: `%y = rlx.<op> %x : tensor<...>`.
// Float-only ops on f32, f16 and bf16; neg, abs, sign and relu also on i32 and i64.

// CHECK-LABEL: func.func @float_unary(
func.func @float_unary(%f32: tensor<4x16xf32>, %f16: tensor<8xf16>, %bf16: tensor<2x3x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.exp %{{.*}} : tensor<4x16xf32>
  %0 = rlx.exp %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.exp %{{.*}} : tensor<8xf16>
  %1 = rlx.exp %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.exp %{{.*}} : tensor<2x3x4xbf16>
  %2 = rlx.exp %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.log %{{.*}} : tensor<4x16xf32>
  %3 = rlx.log %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.log %{{.*}} : tensor<8xf16>
  %4 = rlx.log %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.log %{{.*}} : tensor<2x3x4xbf16>
  %5 = rlx.log %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.sqrt %{{.*}} : tensor<4x16xf32>
  %6 = rlx.sqrt %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sqrt %{{.*}} : tensor<8xf16>
  %7 = rlx.sqrt %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.sqrt %{{.*}} : tensor<2x3x4xbf16>
  %8 = rlx.sqrt %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.rsqrt %{{.*}} : tensor<4x16xf32>
  %9 = rlx.rsqrt %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.rsqrt %{{.*}} : tensor<8xf16>
  %10 = rlx.rsqrt %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.rsqrt %{{.*}} : tensor<2x3x4xbf16>
  %11 = rlx.rsqrt %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.reciprocal %{{.*}} : tensor<4x16xf32>
  %12 = rlx.reciprocal %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reciprocal %{{.*}} : tensor<8xf16>
  %13 = rlx.reciprocal %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.reciprocal %{{.*}} : tensor<2x3x4xbf16>
  %14 = rlx.reciprocal %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.sin %{{.*}} : tensor<4x16xf32>
  %15 = rlx.sin %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sin %{{.*}} : tensor<8xf16>
  %16 = rlx.sin %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.sin %{{.*}} : tensor<2x3x4xbf16>
  %17 = rlx.sin %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cos %{{.*}} : tensor<4x16xf32>
  %18 = rlx.cos %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cos %{{.*}} : tensor<8xf16>
  %19 = rlx.cos %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cos %{{.*}} : tensor<2x3x4xbf16>
  %20 = rlx.cos %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.tan %{{.*}} : tensor<4x16xf32>
  %t0 = rlx.tan %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.asin %{{.*}} : tensor<8xf16>
  %t1 = rlx.asin %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.acos %{{.*}} : tensor<2x3x4xbf16>
  %t2 = rlx.acos %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.atan %{{.*}} : tensor<4x16xf32>
  %t3 = rlx.atan %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sinh %{{.*}} : tensor<8xf16>
  %t4 = rlx.sinh %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.cosh %{{.*}} : tensor<2x3x4xbf16>
  %t5 = rlx.cosh %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.asinh %{{.*}} : tensor<4x16xf32>
  %t6 = rlx.asinh %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.acosh %{{.*}} : tensor<8xf16>
  %t7 = rlx.acosh %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.atanh %{{.*}} : tensor<2x3x4xbf16>
  %t8 = rlx.atanh %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.tanh %{{.*}} : tensor<4x16xf32>
  %21 = rlx.tanh %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.tanh %{{.*}} : tensor<8xf16>
  %22 = rlx.tanh %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.tanh %{{.*}} : tensor<2x3x4xbf16>
  %23 = rlx.tanh %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.sigmoid %{{.*}} : tensor<4x16xf32>
  %24 = rlx.sigmoid %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sigmoid %{{.*}} : tensor<8xf16>
  %25 = rlx.sigmoid %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.sigmoid %{{.*}} : tensor<2x3x4xbf16>
  %26 = rlx.sigmoid %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.gelu %{{.*}} : tensor<4x16xf32>
  %27 = rlx.gelu %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gelu %{{.*}} : tensor<8xf16>
  %28 = rlx.gelu %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.gelu %{{.*}} : tensor<2x3x4xbf16>
  %29 = rlx.gelu %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.gelu_tanh %{{.*}} : tensor<4x16xf32>
  %30 = rlx.gelu_tanh %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gelu_tanh %{{.*}} : tensor<8xf16>
  %31 = rlx.gelu_tanh %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.gelu_tanh %{{.*}} : tensor<2x3x4xbf16>
  %32 = rlx.gelu_tanh %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.silu %{{.*}} : tensor<4x16xf32>
  %33 = rlx.silu %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.silu %{{.*}} : tensor<8xf16>
  %34 = rlx.silu %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.silu %{{.*}} : tensor<2x3x4xbf16>
  %35 = rlx.silu %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.erf %{{.*}} : tensor<4x16xf32>
  %36 = rlx.erf %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.erf %{{.*}} : tensor<8xf16>
  %37 = rlx.erf %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.erf %{{.*}} : tensor<2x3x4xbf16>
  %38 = rlx.erf %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.floor %{{.*}} : tensor<4x16xf32>
  %39 = rlx.floor %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.floor %{{.*}} : tensor<8xf16>
  %40 = rlx.floor %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.floor %{{.*}} : tensor<2x3x4xbf16>
  %41 = rlx.floor %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.ceil %{{.*}} : tensor<4x16xf32>
  %42 = rlx.ceil %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.ceil %{{.*}} : tensor<8xf16>
  %43 = rlx.ceil %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.ceil %{{.*}} : tensor<2x3x4xbf16>
  %44 = rlx.ceil %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.round %{{.*}} : tensor<4x16xf32>
  %45 = rlx.round %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.round %{{.*}} : tensor<8xf16>
  %46 = rlx.round %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.round %{{.*}} : tensor<2x3x4xbf16>
  %47 = rlx.round %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @signed_unary(
func.func @signed_unary(%f32: tensor<4x16xf32>, %f16: tensor<8xf16>, %bf16: tensor<2x3x4xbf16>, %i32: tensor<3xi32>, %i64: tensor<2x2xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<4x16xf32>
  %0 = rlx.neg %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<8xf16>
  %1 = rlx.neg %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<2x3x4xbf16>
  %2 = rlx.neg %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<3xi32>
  %3 = rlx.neg %i32 : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<2x2xi64>
  %4 = rlx.neg %i64 : tensor<2x2xi64>
  // CHECK-NEXT: %{{.*}} = rlx.abs %{{.*}} : tensor<4x16xf32>
  %5 = rlx.abs %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.abs %{{.*}} : tensor<8xf16>
  %6 = rlx.abs %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.abs %{{.*}} : tensor<2x3x4xbf16>
  %7 = rlx.abs %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.abs %{{.*}} : tensor<3xi32>
  %8 = rlx.abs %i32 : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.abs %{{.*}} : tensor<2x2xi64>
  %9 = rlx.abs %i64 : tensor<2x2xi64>
  // CHECK-NEXT: %{{.*}} = rlx.sign %{{.*}} : tensor<4x16xf32>
  %10 = rlx.sign %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.sign %{{.*}} : tensor<8xf16>
  %11 = rlx.sign %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.sign %{{.*}} : tensor<2x3x4xbf16>
  %12 = rlx.sign %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.sign %{{.*}} : tensor<3xi32>
  %13 = rlx.sign %i32 : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.sign %{{.*}} : tensor<2x2xi64>
  %14 = rlx.sign %i64 : tensor<2x2xi64>
  // CHECK-NEXT: %{{.*}} = rlx.relu %{{.*}} : tensor<4x16xf32>
  %15 = rlx.relu %f32 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.relu %{{.*}} : tensor<8xf16>
  %16 = rlx.relu %f16 : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.relu %{{.*}} : tensor<2x3x4xbf16>
  %17 = rlx.relu %bf16 : tensor<2x3x4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.relu %{{.*}} : tensor<3xi32>
  %18 = rlx.relu %i32 : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.relu %{{.*}} : tensor<2x2xi64>
  %19 = rlx.relu %i64 : tensor<2x2xi64>
  // CHECK-NEXT: func.return
  func.return
}

// Rank 0, a zero-size tensor, a chain, and a discardable attribute.
// CHECK-LABEL: func.func @shapes_and_attrs(
func.func @shapes_and_attrs(%s: tensor<f32>, %z: tensor<0x3xf16>) -> tensor<f32> {
  // CHECK-NEXT: %{{.*}} = rlx.exp %{{.*}} : tensor<f32>
  %0 = rlx.exp %s : tensor<f32>
  // CHECK-NEXT: %{{.*}} = rlx.neg %{{.*}} : tensor<f32>
  %1 = rlx.neg %0 : tensor<f32>
  // CHECK-NEXT: %{{.*}} = rlx.rsqrt %{{.*}} : tensor<0x3xf16>
  %2 = rlx.rsqrt %z : tensor<0x3xf16>
  // CHECK-NEXT: %{{.*}} = rlx.gelu_tanh %{{.*}} {tag = "x"} : tensor<f32>
  %3 = rlx.gelu_tanh %1 {tag = "x"} : tensor<f32>
  // CHECK-NEXT: func.return %{{.*}} : tensor<f32>
  func.return %3 : tensor<f32>
}

// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the leaf ops: rlx.param and rlx.constant, on every element type.

// CHECK-LABEL: func.func @params(
func.func @params() {
  // CHECK-NEXT: %{{.*}} = rlx.param "w" : tensor<16x8xf32>
  %w = rlx.param "w" : tensor<16x8xf32>
  // CHECK-NEXT: %{{.*}} = rlx.param "layers.0.attn.q_proj.weight" : tensor<8xf16>
  %h = rlx.param "layers.0.attn.q_proj.weight" : tensor<8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.param "b" : tensor<2x3xbf16>
  %b = rlx.param "b" : tensor<2x3xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.param "i" : tensor<3xi32>
  %i = rlx.param "i" : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.param "l" : tensor<i64>
  %l = rlx.param "l" : tensor<i64>
  // CHECK-NEXT: %{{.*}} = rlx.param "mask" : tensor<1x1x4x4xi1>
  %m = rlx.param "mask" : tensor<1x1x4x4xi1>
  // CHECK-NEXT: %{{.*}} = rlx.param "empty" : tensor<0x4xf32>
  %e = rlx.param "empty" : tensor<0x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.param "with attr" {note = "kept"} : tensor<4xf32>
  %a = rlx.param "with attr" {note = "kept"} : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.param "quote\22 and backslash\\" : tensor<2xf32>
  %q = rlx.param "quote\22 and backslash\\" : tensor<2xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @constants(
func.func @constants() {
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = rlx.constant dense<1.000000e+00> : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<{{\[\[}}1.500000e+00, -2.000000e+00], [0.000000e+00, 2.500000e-01]]> : tensor<2x2xf32>
  %1 = rlx.constant dense<[[1.500000e+00, -2.000000e+00], [0.000000e+00, 2.500000e-01]]> : tensor<2x2xf32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<5.000000e-01> : tensor<3x2xf16>
  %2 = rlx.constant dense<5.000000e-01> : tensor<3x2xf16>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
  %3 = rlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<[1, -2, 3]> : tensor<3xi32>
  %4 = rlx.constant dense<[1, -2, 3]> : tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<7> : tensor<i64>
  %5 = rlx.constant dense<7> : tensor<i64>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<true> : tensor<2x2xi1>
  %6 = rlx.constant dense<true> : tensor<2x2xi1>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<[true, false]> : tensor<2xi1>
  %7 = rlx.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<0.000000e+00> : tensor<f32>
  %8 = rlx.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<-1> : tensor<2x3xi64> {note = "kept"}
  %9 = rlx.constant dense<-1> : tensor<2x3xi64> {note = "kept"}
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<> : tensor<0xf32>
  %10 = rlx.constant dense<> : tensor<0xf32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<> : tensor<2x0xi1>
  %11 = rlx.constant dense<> : tensor<2x0xi1>
  // CHECK-NEXT: func.return
  func.return
}

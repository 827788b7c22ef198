// RUN: rlxc-opt %s -p 'rlx-fuse-elementwise,cse' | filecheck %s

// Two regions whose bodies differ only in an op's result type (a cast through
// f16, one through bf16) are not common subexpressions: both stay. xDSL 0.74
// merged them (rlxc/xdsl_fixes.py); identical regions still merge.
// CHECK-LABEL: func.func @casts
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: func.return %[[A:.*]], %[[B:.*]], %[[A]] :
func.func @casts(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %h = rlx.cast %x : tensor<8xf32> -> tensor<8xf16>
  %a = rlx.cast %h : tensor<8xf16> -> tensor<8xf32>
  %b16 = rlx.cast %x : tensor<8xf32> -> tensor<8xbf16>
  %b = rlx.cast %b16 : tensor<8xbf16> -> tensor<8xf32>
  %h2 = rlx.cast %x : tensor<8xf32> -> tensor<8xf16>
  %a2 = rlx.cast %h2 : tensor<8xf16> -> tensor<8xf32>
  func.return %a, %b, %a2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

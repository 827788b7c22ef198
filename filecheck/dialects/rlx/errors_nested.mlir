// A verifier failure inside a region is reported at the innermost failing op.

// RUN: not rlxc-opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: rlxc-opt: verification failed in {{.*}}errors_nested.mlir:
// CHECK-NEXT: {{.*}}errors_nested.mlir:[[# @LINE + 10]]:5{{$}}
// CHECK-NEXT: {{^}}    rlx.yield %x : f32{{$}}
// CHECK-NEXT: {{^}}    ^^^^^^^^^{{$}}
// CHECK-NEXT: {{^}}    error: 'rlx.yield' op 'rlx.yield' must be the last operation in its parent block{{$}}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.exp %a : tensor<4xf32>
  %1 = rlx.elementwise_region ins(%0 : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
    %s = arith.addf %x, %x : f32
    rlx.yield %s : f32
  }
  func.return %1 : tensor<4xf32>
}

// An op the rlx dialect does not define is a located parse error.

// RUN: not rlxc-opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: rlxc-opt: parse error in {{.*}}errors_unknown_op.mlir:
// CHECK-NEXT: {{.*}}errors_unknown_op.mlir:[[# @LINE + 5]]:{{[0-9]+$}}
// CHECK: Operation rlx.frobnicate is not registered
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.frobnicate %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

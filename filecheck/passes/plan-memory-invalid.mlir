// A function the planner cannot handle is an error that names the op, shows
// it in context, and leaves a reproducer; nothing is printed as a result.
// RUN: not rlxc-opt %s -p rlx-plan-memory --reproducer-dir %t 2>&1 | filecheck %s

// CHECK: rlxc-opt: pass failed in {{.*}}plan-memory-invalid.mlir:
// CHECK-NEXT: pass 'rlx-plan-memory' rejected its input: rlx-plan-memory: cannot plan op #0 of @main, `%t = arith.addf %s, %s : f32`: it has a non-tensor result; only tensors live in the arena
// CHECK: reproducer (the input to that pass): {{.*}}reproducer-rlx-plan-memory.mlir
// CHECK-NOT: builtin.module
// CHECK-NOT: Traceback
func.func @main(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %t = arith.addf %s, %s : f32
  %e = rlx.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

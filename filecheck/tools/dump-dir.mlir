// --dump-dir writes the input and the IR after every pass (named pipelines
// expanded), numbered so that the files sort and diff in order.
// RUN: rm -rf %t && rlxc-opt %s -p rlx-plan --dump-dir %t > /dev/null
// RUN: ls %t | filecheck %s
// RUN: filecheck %s --input-file %t/09-rlx-fuse-elementwise.mlir --check-prefix=FUSED
// A pass that crashes leaves a reproducer and exits non-zero, without a traceback.
// RUN: not rlxc-opt %s -p 'canonicalize,test-rlx-miscompile{crash=true}' --dump-dir %t 2>&1 | filecheck %s --check-prefix=CRASH

// CHECK: 00-input.mlir
// CHECK-NEXT: 01-rlx-conv-to-gemm.mlir
// CHECK-NEXT: 02-rlx-raise-attention.mlir
// CHECK-NEXT: 03-rlx-merge-projections.mlir
// CHECK-NEXT: 04-rlx-unfuse.mlir
// CHECK-NEXT: 05-canonicalize.mlir
// CHECK-NEXT: 06-cse.mlir
// CHECK-NEXT: 07-dce.mlir
// CHECK-NEXT: 08-rlx-fold-layout.mlir
// CHECK-NEXT: 09-rlx-fuse-elementwise.mlir
// CHECK-NEXT: 10-rlx-fuse-reductions.mlir
// CHECK-NEXT: 11-canonicalize.mlir
// CHECK-NEXT: 12-cse.mlir
// CHECK-NEXT: 13-dce.mlir
// CHECK-NEXT: 14-rlx-plan-memory.mlir
// FUSED: rlx.elementwise_region
// CRASH: pass 'test-rlx-miscompile{crash=true}' crashed (RuntimeError): test-rlx-miscompile was asked to crash
// CRASH-NEXT: reproducer (the input to that pass): {{.*}}reproducer-test-rlx-miscompile.mlir
// CRASH-NOT: Traceback
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = rlx.exp %x : tensor<4x8xf32>
  %t = rlx.tanh %e : tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

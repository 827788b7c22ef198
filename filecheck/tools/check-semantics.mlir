// The semantic bisect: the first pass that changes a result is named, with a
// reproducer holding that pass's input and a command to rerun it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not rlxc-opt %s -p 'canonicalize,test-rlx-miscompile,rlx-optimize' --check-semantics --reproducer-dir %t 2>&1 | filecheck %s
// RUN: filecheck %s --input-file %t/reproducer-test-rlx-miscompile.mlir --check-prefix=REPRO
// A correct pipeline passes the same check and prints its result.
// RUN: rlxc-opt %s -p rlx-plan --check-semantics | filecheck %s --check-prefix=OK

// CHECK: rlxc-opt: pass failed in {{.*}}check-semantics.mlir:
// CHECK-NEXT: pass 'test-rlx-miscompile' changed the module's meaning: output #0: relative error {{.*}} > tolerance 0.0001
// CHECK-NEXT: (seeded random inputs, seed 0)
// CHECK-NEXT: reproducer (the input to that pass): {{.*}}reproducer-test-rlx-miscompile.mlir
// CHECK-NEXT: rerun with: rlxc-opt {{.*}}reproducer-test-rlx-miscompile.mlir -p 'test-rlx-miscompile' --check-semantics
// CHECK-NOT: Traceback
// REPRO: // RUN: rlxc-opt %s -p 'test-rlx-miscompile'
// REPRO: rlx.exp %x
// OK: rlx.arena_bytes
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = rlx.exp %x : tensor<4x8xf32>
  %a = rlx.add %e, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}

// mlir-opt's IR printing flags (also spelled --mlir-print-ir-*), on stderr.
// RUN: rlxc-opt %s -p rlx-optimize --print-ir-before=cse --print-ir-after=rlx-fuse-elementwise 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// RUN: rlxc-opt %s -p rlx-optimize --mlir-print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: rlxc-opt %s -p rlx-optimize --print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: not rlxc-opt %s -p 'canonicalize,test-rlx-miscompile{crash=true}' --print-ir-after-failure 2>&1 | filecheck %s --check-prefix=FAIL
// RUN: rm -rf %t && rlxc-opt %s -p rlx-optimize --print-ir-after-change --dump-dir %t >/dev/null && ls %t | filecheck %s --check-prefix=FILES

// NAMED: // -----// IR Dump Before cse (cse) //----- //
// NAMED-NEXT: builtin.module {
// NAMED: // -----// IR Dump After rlx-fuse-elementwise (rlx-fuse-elementwise) //----- //
// NAMED: rlx.elementwise_region
// NAMED: // -----// IR Dump Before cse (cse) //----- //
// NAMED-NOT: IR Dump

// Only the passes that changed the module: unfuse (gelu_tanh and the bias
// add stay), the fusion, and nothing from cse or dce.
// CHANGE-NOT: IR Dump After cse
// CHANGE: // -----// IR Dump After rlx-fuse-elementwise (rlx-fuse-elementwise) //----- //
// CHANGE-NOT: IR Dump After cse
// CHANGE-NOT: IR Dump After dce

// ALL-COUNT-12: // -----// IR Dump Before

// FAIL: // -----// IR Dump After test-rlx-miscompile Failed (test-rlx-miscompile{crash=true}) //----- //
// FAIL-NEXT: builtin.module {
// FAIL: rlxc-opt: pass failed

// FILES: {{^}}09-after-rlx-fuse-elementwise.mlir

func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = rlx.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = rlx.gelu_tanh %0 : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

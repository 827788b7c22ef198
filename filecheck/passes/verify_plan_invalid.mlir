// A plan that puts two tensors alive at the same op on the same bytes is
// rejected, naming both values with their live intervals and byte ranges;
// nothing is printed as a result. %b is moved onto %a, which %c still reads.
// RUN: not rlxc-opt %s -p rlx-verify-plan --reproducer-dir %t 2>&1 | filecheck %s

// CHECK: rlxc-opt: pass failed in {{.*}}verify_plan_invalid.mlir:
// CHECK-NEXT: pass 'rlx-verify-plan' rejected its input: rlx-verify-plan: @main: two tensors live at once overlap in the arena, at bytes [16384, 32768) (both live at op #2):
// CHECK-NEXT: %a (rlx.exp, op #1): live [op #1, op #3], bytes [16384, 32768)
// CHECK-NEXT: %b (rlx.add, op #2): live [op #2, op #3], bytes [16384, 32768)
// CHECK: reproducer (the input to that pass): {{.*}}reproducer-rlx-verify-plan.mlir
// CHECK-NOT: builtin.module
// CHECK-NOT: Traceback
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> attributes {rlx.arg_offsets = array<i64: 0>, rlx.arena_bytes = 49152 : i64, rlx.peak_live_bytes = 49152 : i64} {
  %w = rlx.param "w" : tensor<1024xf32>
  %a = rlx.exp %x {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>
  %b = rlx.add %x, %w {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>, tensor<1024xf32> -> tensor<4x1024xf32>
  %c = rlx.mul %a, %b {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<4x1024xf32>
  %d = rlx.tanh %c {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>
  %r = rlx.reshape %d {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32> -> tensor<4096xf32>
  func.return %r : tensor<4096xf32>
}

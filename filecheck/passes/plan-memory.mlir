// RUN: rlxc-opt %s -p rlx-plan-memory | filecheck %s
// RUN: rlxc-opt %s -p 'rlx-plan-memory{strategy=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: not rlxc-opt %s -p 'rlx-plan-memory{strategy=magic}' 2>&1 | filecheck %s --check-prefix=BAD

// 4x1024xf32 tensors are 16 KiB; three are live at once at most (x, a, b),
// so the arena is 48 KiB. %x dies at %b, %a and %b at %c: slots are reused;
// the reshape is a view of %d; params and constants stay out of the arena.
// CHECK: func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> attributes {rlx.arg_offsets = array<i64: [[X:[0-9]+]]>, rlx.arena_bytes = 49152 : i64, rlx.peak_live_bytes = 49152 : i64}
// CHECK-NEXT: %w = rlx.param "w" : tensor<1024xf32>{{$}}
// CHECK: %a = rlx.exp %x {rlx.offset = [[A:[0-9]+]] : i64, rlx.bytes = 16384 : i64}
// CHECK: %b = rlx.add %x, %w {rlx.offset = [[B:[0-9]+]] : i64, rlx.bytes = 16384 : i64}
// CHECK: %c = rlx.mul %a, %b {rlx.offset = [[C:[0-9]+]] : i64, rlx.bytes = 16384 : i64}
// CHECK: %d = rlx.tanh %c {rlx.offset = [[D:[0-9]+]] : i64, rlx.bytes = 16384 : i64}
// CHECK: %r = rlx.reshape %d {rlx.offset = [[D]] : i64, rlx.bytes = 16384 : i64}
// NAIVE: rlx.arena_bytes = 81920 : i64, rlx.peak_live_bytes = 49152 : i64
// BAD: unknown strategy 'magic', expected one of greedy, naive
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> {
  %w = rlx.param "w" : tensor<1024xf32>
  %a = rlx.exp %x : tensor<4x1024xf32>
  %b = rlx.add %x, %w : tensor<4x1024xf32>, tensor<1024xf32> -> tensor<4x1024xf32>
  %c = rlx.mul %a, %b : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<4x1024xf32>
  %d = rlx.tanh %c : tensor<4x1024xf32>
  %r = rlx.reshape %d : tensor<4x1024xf32> -> tensor<4096xf32>
  func.return %r : tensor<4096xf32>
}

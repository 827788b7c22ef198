// rlx-verify-plan proves a plan sound and changes nothing: what rlx-plan
// plans passes it (greedy and naive), and so does a hand-written plan with an
// in-place update (%c over %a, which dies at %c) and a view (%r on %d).
// RUN: rlxc-opt %s -p rlx-plan,rlx-verify-plan | filecheck %s --check-prefix=PLAN
// RUN: rlxc-opt %s -p 'rlx-plan{strategy=naive},rlx-verify-plan' | filecheck %s --check-prefix=PLAN
// RUN: rlxc-opt %s -p rlx-verify-plan | filecheck %s

// PLAN: func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> attributes {rlx.arg_offsets = array<i64: {{[0-9]+}}>, rlx.arena_bytes =
// PLAN: rlx.elementwise_region ins(%x, %w : tensor<4x1024xf32>, tensor<1024xf32>) -> tensor<4x1024xf32> attributes {rlx.offset =

// CHECK: func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> attributes {rlx.arg_offsets = array<i64: 0>, rlx.arena_bytes = 49152 : i64, rlx.peak_live_bytes = 49152 : i64}
// CHECK-NEXT: %w = rlx.param "w" : tensor<1024xf32>{{$}}
// CHECK-NEXT: %a = rlx.exp %x {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64}
// CHECK-NEXT: %b = rlx.add %x, %w {rlx.offset = 32768 : i64, rlx.bytes = 16384 : i64}
// CHECK-NEXT: %c = rlx.mul %a, %b {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64}
// CHECK-NEXT: %d = rlx.tanh %c {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64}
// CHECK-NEXT: %r = rlx.reshape %d {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64}
// CHECK-NEXT: func.return %r
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> attributes {rlx.arg_offsets = array<i64: 0>, rlx.arena_bytes = 49152 : i64, rlx.peak_live_bytes = 49152 : i64} {
  %w = rlx.param "w" : tensor<1024xf32>
  %a = rlx.exp %x {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>
  %b = rlx.add %x, %w {rlx.offset = 32768 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>, tensor<1024xf32> -> tensor<4x1024xf32>
  %c = rlx.mul %a, %b {rlx.offset = 16384 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<4x1024xf32>
  %d = rlx.tanh %c {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32>
  %r = rlx.reshape %d {rlx.offset = 0 : i64, rlx.bytes = 16384 : i64} : tensor<4x1024xf32> -> tensor<4096xf32>
  func.return %r : tensor<4096xf32>
}

// --verify-diagnostics with a pass pipeline: a pass's failure is a diagnostic
// too. rlx-plan-memory names no op, so it is expected at no location
// (@unknown); the chunk the pipeline plans is printed.
// RUN: rlxc-opt %s --split-input-file --verify-diagnostics -p rlx-plan-memory --reproducer-dir %t | filecheck %s

// CHECK-NOT: error
// CHECK: func.func @planned
// CHECK-SAME: rlx.arena_bytes
// CHECK-NOT: error

// expected-error-re @unknown {{pass 'rlx-plan-memory' rejected its input: rlx-plan-memory: cannot plan op #0 of @main, {{.*}}: it has a non-tensor result{{.*}}reproducer (the input to that pass): }}
func.func @main(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %t = arith.addf %s, %s : f32
  %e = rlx.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// The verifier runs before the pipeline: a verifier error stops the chunk.
func.func @invalid(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'rlx.exp' op input has element type i32}}
  %e = rlx.exp %x : tensor<4xi32>
  func.return %e : tensor<4xi32>
}

// -----

func.func @planned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = rlx.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

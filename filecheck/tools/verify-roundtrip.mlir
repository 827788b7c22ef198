// --verify-roundtrip prints the generic and custom forms after every pass,
// parses both back and compares; test-rlx-miscompile{roundtrip=true} names a
// result %1x, which prints but does not parse.
// RUN: rlxc-opt %s -p rlx-plan --verify-roundtrip | filecheck %s --check-prefix=OK
// RUN: not rlxc-opt %s -p 'test-rlx-miscompile{roundtrip=true}' --verify-roundtrip 2>&1 | filecheck %s

// OK: rlx.arena_bytes
// CHECK: rlxc-opt: pass failed in {{.*}}verify-roundtrip.mlir:
// CHECK-NEXT: --verify-roundtrip: the generic form after pass 'test-rlx-miscompile{roundtrip=true}' does not parse back: <generic form after test-rlx-miscompile>:4:7
// CHECK-NEXT: %1x = "rlx.exp"(%x)

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

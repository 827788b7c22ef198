// --pass-statistics attributes each rewrite to the pass that made it: the
// composite split under rlx-unfuse, the transpose composition under
// canonicalize, and no pattern line under a pass that rewrote nothing.
// RUN: rlxc-opt %s -p 'rlx-unfuse,canonicalize,cse' --pass-statistics 2>&1 >/dev/null | filecheck %s

// CHECK: rlx-unfuse (rlx-unfuse)
// CHECK-NOT: TransposeOfTranspose
// CHECK: pattern UnfuseComposite: applied 1 of
// CHECK-NEXT: canonicalize (canonicalize)
// CHECK-NOT: UnfuseComposite
// CHECK: pattern TransposeOfTranspose: applied 2 of
// CHECK-NEXT: cse (cse) (no change)
// CHECK-NEXT: ops:
// CHECK-NOT: pattern
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<8x4xf32>) {
  %s = rlx.swiglu %x : tensor<4x8xf32> -> tensor<4x4xf32>
  %t = rlx.transpose %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %u = rlx.transpose %t perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %v = rlx.transpose %u perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %s, %v : tensor<4x4xf32>, tensor<8x4xf32>
}

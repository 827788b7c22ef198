// An rlx.fusion whose softmax runs over an axis that is not the last (which
// rlx-fuse-reductions never builds: TakesPrologue accepts trailing rows only)
// is a located error, not a kernel reading the prologue's inputs as rows.
// RUN: not rlxc-opt %s -p 'rlx-plan-memory,rlx-emit-cuda' 2>&1 | filecheck %s
// CHECK: rlx-emit-cuda: rlx.fusion (op #0 of @main): an rlx.fusion prologue runs along rows over the trailing axes: its rlx.softmax is over axis 1 of a rank-3 input
// CHECK-NOT: Traceback
func.func @main(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %p = rlx.fusion ins(%x : tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  ^bb0(%a: tensor<2x8x4xf32>):
    %t = rlx.elementwise_region ins(%a : tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
    ^bb1(%u: f32):
      %w = math.exp %u : f32
      rlx.yield %w : f32
    }
    %q = rlx.softmax %t axis = 1 : tensor<2x8x4xf32>
    rlx.yield %q : tensor<2x8x4xf32>
  }
  func.return %p : tensor<2x8x4xf32>
}

// An rlx.fusion whose body codegen cannot run as one kernel (here a
// reduce_sum root) is a located error naming the body, not a traceback.
// RUN: not rlxc-opt %s -p 'rlx-plan-memory,rlx-emit-cuda' 2>&1 | filecheck %s
// CHECK: rlx-emit-cuda: rlx.fusion (op #0 of @main): an rlx.fusion body runs as one cuda kernel when it is an elementwise_region feeding the input of one of rlx.softmax, rlx.log_softmax, rlx.layer_norm, rlx.rms_norm (whose result is yielded first); this one is rlx.elementwise_region -> rlx.reduce_sum -> rlx.yield
// CHECK-NOT: Traceback
func.func @main(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %p = rlx.fusion ins(%x : tensor<2x8xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    %t = rlx.elementwise_region ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
    ^bb1(%u: f32):
      %w = math.exp %u : f32
      rlx.yield %w : f32
    }
    %q = rlx.reduce_sum %t axes = [1] : tensor<2x8xf32> -> tensor<2xf32>
    rlx.yield %q : tensor<2xf32>
  }
  func.return %p : tensor<2xf32>
}

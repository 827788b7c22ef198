// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --verify-roundtrip | filecheck %s

// rlx.fusion round-trips: a prologue region feeding a softmax, the region's
// value also yielded.
// CHECK-LABEL: func.func @fusion
// CHECK: %{{.*}}, %{{.*}} = rlx.fusion ins(%x, %m : tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>, tensor<2x8xf32> {
// CHECK: rlx.elementwise_region
// CHECK: rlx.softmax
// CHECK: rlx.yield %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>
func.func @fusion(%x: tensor<2x8xf32>, %m: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %p, %s = rlx.fusion ins(%x, %m : tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>, tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<8xf32>):
    %t = rlx.elementwise_region ins(%a, %b : tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> {
    ^bb1(%u: f32, %v: f32):
      %w = arith.addf %u, %v : f32
      rlx.yield %w : f32
    }
    %q = rlx.softmax %t axis = -1 : tensor<2x8xf32>
    rlx.yield %q, %t : tensor<2x8xf32>, tensor<2x8xf32>
  }
  func.return %p, %s : tensor<2x8xf32>, tensor<2x8xf32>
}

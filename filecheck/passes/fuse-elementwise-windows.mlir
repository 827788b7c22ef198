// RUN: rlxc-opt %s -p rlx-fuse-elementwise | filecheck %s

// The halves of a merged gate/up projection are read in place: a region input
// that is a unit-step slice of the last axis alone becomes a window on the
// sliced tensor (`windows = [input, offset, width, ...]`) and the slices go.
// CHECK-LABEL: func.func @gate_up(
// CHECK-NOT: rlx.slice
// CHECK: rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<4x128xf32>, tensor<4x128xf32>) windows = [0, 0, 64, 1, 64, 64] -> tensor<4x64xf32>
// CHECK: math.exp
// CHECK: arith.mulf
func.func @gate_up(%m: tensor<4x128xf32>) -> tensor<4x64xf32> {
  %g = rlx.slice %m starts = [0, 0] ends = [4, 64] steps = [1, 1] : tensor<4x128xf32> -> tensor<4x64xf32>
  %u = rlx.slice %m starts = [0, 64] ends = [4, 128] steps = [1, 1] : tensor<4x128xf32> -> tensor<4x64xf32>
  %e = rlx.exp %g : tensor<4x64xf32>
  %p = rlx.mul %e, %u : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  func.return %p : tensor<4x64xf32>
}

// Slices of another axis, or strided ones, stay copies; a slice also used
// elsewhere stays for that use while the region reads in place; a window may
// also be on an input that broadcasts (%h: columns 0..64 of %r).
// CHECK-LABEL: func.func @other_slices(
// CHECK: rlx.slice %{{.*}} starts = [0, 0] ends = [2, 128]
// CHECK: %[[ODD:.*]] = rlx.slice %{{.*}} starts = [0, 0] ends = [4, 128] steps = [1, 2]
// CHECK: %[[KEPT:.*]] = rlx.slice %{{.*}} starts = [0, 64] ends = [4, 128]
// CHECK: %[[R:.*]] = rlx.reduce_sum
// CHECK: rlx.elementwise_region ins(%[[ODD]], %[[R]], %m : tensor<4x64xf32>, tensor<128xf32>, tensor<4x128xf32>) windows = [1, 0, 64, 2, 64, 64] -> tensor<4x64xf32>
// CHECK: func.return %{{.*}}, %[[KEPT]]
func.func @other_slices(%m: tensor<4x128xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %rows = rlx.slice %m starts = [0, 0] ends = [2, 128] steps = [1, 1] : tensor<4x128xf32> -> tensor<2x128xf32>
  %odd = rlx.slice %m starts = [0, 0] ends = [4, 128] steps = [1, 2] : tensor<4x128xf32> -> tensor<4x64xf32>
  %u = rlx.slice %m starts = [0, 64] ends = [4, 128] steps = [1, 1] : tensor<4x128xf32> -> tensor<4x64xf32>
  %r = rlx.reduce_sum %rows axes = [0] : tensor<2x128xf32> -> tensor<128xf32>
  %h = rlx.slice %r starts = [0] ends = [64] steps = [1] : tensor<128xf32> -> tensor<64xf32>
  %a = rlx.add %odd, %h : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  %p = rlx.mul %a, %u : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  func.return %p, %u : tensor<4x64xf32>, tensor<4x64xf32>
}

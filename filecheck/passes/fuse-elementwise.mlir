// RUN: rlxc-opt %s --split-input-file -p 'rlx-fuse-elementwise,dce' | filecheck %s
// RUN: rlxc-opt %s --split-input-file -p 'rlx-fuse-elementwise{max_ops=1},dce' | filecheck %s --check-prefix=ONE

// A chain across a broadcast is one region: the expand folds in (its smaller
// input is read broadcast), the splat constant becomes an arith.constant, and
// %a, also used by the return, is an extra result.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[RA:[a-z0-9_]+]], %[[RS:[a-z0-9_]+]] = rlx.elementwise_region ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:   %[[A:.*]] = arith.addf %[[E]], %[[B]] : f32
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:   %[[S:.*]] = arith.mulf %[[M]], %[[C]] : f32
// CHECK-NEXT:   rlx.yield %[[A]], %[[S]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[RS]], %[[RA]]
// With max_ops=1 each op is its own region (the expand reads %b broadcast).
// ONE-LABEL: func.func @chain
// ONE-COUNT-5: rlx.elementwise_region
// ONE-NOT: rlx.expand
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = rlx.constant dense<2.0> : tensor<f32>
  %e = rlx.exp %x : tensor<4x8xf32>
  %a = rlx.add %e, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %be = rlx.expand %b : tensor<8xf32> -> tensor<4x8xf32>
  %m = rlx.mul %a, %be : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s = rlx.mul %m, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %s, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Opaque ops (matmul, reductions) split groups; a value used by one leaves
// the region as a result. The second region reads the matmul and the first
// region's result.
// CHECK-LABEL: func.func @opaque
// CHECK: %[[E:[a-z0-9_]+]], %[[T:[a-z0-9_]+]] = rlx.elementwise_region ins(%x : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: %[[MM:.*]] = rlx.matmul %[[E]], %w
// CHECK: rlx.elementwise_region ins(%[[MM]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: math.erf
// CHECK: arith.addf
func.func @opaque(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %e = rlx.exp %x : tensor<4x8xf32>
  %t = rlx.tanh %e : tensor<4x8xf32>
  %mm = rlx.matmul %e, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %g = rlx.gelu %mm : tensor<4x8xf32>
  %r = rlx.add %g, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// No cycles: %d reads %e and a reduction of %e, so it cannot join %e's region.
// CHECK-LABEL: func.func @no_cycle
// CHECK: %[[E:.*]] = rlx.elementwise_region ins(%x : tensor<4x8xf32>)
// CHECK: %[[S:.*]] = rlx.reduce_sum %[[E]] axes = [1] keepdims
// CHECK: rlx.elementwise_region ins(%[[E]], %[[S]] : tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK: arith.divf
func.func @no_cycle(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = rlx.exp %x : tensor<4x8xf32>
  %s = rlx.reduce_sum %e axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = rlx.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// -----

// Casts, compares and selects become scalar arith ops.
// CHECK-LABEL: func.func @select_cast
// CHECK: rlx.elementwise_region ins(%x, %y : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @select_cast(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  %c = rlx.lt %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %s = rlx.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %h = rlx.cast %s : tensor<4xf32> -> tensor<4xf16>
  func.return %h : tensor<4xf16>
}

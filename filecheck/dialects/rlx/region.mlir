// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of rlx.elementwise_region and its terminator rlx.yield: the body
// maps one scalar of each (broadcast) input to one scalar of each result.

// CHECK-LABEL: func.func @single_result(
func.func @single_result(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = rlx.elementwise_region ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
  ^bb0(%x: f32, %y: f32):
    // CHECK-NEXT: %{{.*}} = arith.addf %{{.*}}, %{{.*}} : f32
    %s = arith.addf %x, %y : f32
    // CHECK-NEXT: %{{.*}} = math.exp %{{.*}} : f32
    %e = math.exp %s : f32
    // CHECK-NEXT: rlx.yield %{{.*}} : f32
    rlx.yield %e : f32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}} : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// Inputs broadcast to the common shape: a column, a row and a rank-0 tensor.
// CHECK-LABEL: func.func @broadcasting(
func.func @broadcasting(%col: tensor<4x1xf32>, %row: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32> {
  %0 = rlx.elementwise_region ins(%col, %row, %s : tensor<4x1xf32>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  ^bb0(%x: f32, %y: f32, %z: f32):
    // CHECK-NEXT: %{{.*}} = arith.mulf %{{.*}}, %{{.*}} : f32
    %m = arith.mulf %x, %y : f32
    // CHECK-NEXT: %{{.*}} = math.tanh %{{.*}} : f32
    %t = math.tanh %m : f32
    // CHECK-NEXT: %{{.*}} = arith.maximumf %{{.*}}, %{{.*}} : f32
    %r = arith.maximumf %t, %z : f32
    // CHECK-NEXT: rlx.yield %{{.*}} : f32
    rlx.yield %r : f32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}} : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// Several results of several element types; the body's arguments follow the inputs' types.
// CHECK-LABEL: func.func @multi_result(
func.func @multi_result(%a: tensor<2x3xf32>, %i: tensor<2x1xi32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>) {
  // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32> {
  %0, %1, %2 = rlx.elementwise_region ins(%a, %i : tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: i32):
  ^bb0(%x: f32, %n: i32):
    // CHECK-NEXT: %{{.*}} = arith.sitofp %{{.*}} : i32 to f32
    %f = arith.sitofp %n : i32 to f32
    // CHECK-NEXT: %{{.*}} = arith.mulf %{{.*}}, %{{.*}} fastmath<fast> : f32
    %m = arith.mulf %x, %f fastmath<fast> : f32
    // CHECK-NEXT: %{{.*}} = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
    %c = arith.cmpf ogt, %m, %x : f32
    // CHECK-NEXT: %{{.*}} = arith.fptosi %{{.*}} : f32 to i32
    %k = arith.fptosi %m : f32 to i32
    // CHECK-NEXT: %{{.*}} = arith.addi %{{.*}}, %{{.*}} : i32
    %j = arith.addi %k, %n : i32
    // CHECK-NEXT: rlx.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, i1, i32
    rlx.yield %m, %c, %j : f32, i1, i32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>
}

// Half precision, integer and boolean bodies; constants may be defined inside the body.
// CHECK-LABEL: func.func @other_types(
func.func @other_types(%h: tensor<8xf16>, %b: tensor<8xbf16>, %l: tensor<8xi64>, %p: tensor<8xi1>) -> (tensor<8xf16>, tensor<8xbf16>, tensor<8xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<8xf16>, tensor<8xi1>) -> tensor<8xf16> {
  %0 = rlx.elementwise_region ins(%h, %p : tensor<8xf16>, tensor<8xi1>) -> tensor<8xf16> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f16, %{{.*}}: i1):
  ^bb0(%x: f16, %c: i1):
    // CHECK-NEXT: %{{.*}} = arith.constant 1.000000e+00 : f16
    %one = arith.constant 1.000000e+00 : f16
    // CHECK-NEXT: %{{.*}} = math.rsqrt %{{.*}} : f16
    %r = math.rsqrt %x : f16
    // CHECK-NEXT: %{{.*}} = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f16
    %s = arith.select %c, %r, %one : f16
    // CHECK-NEXT: rlx.yield %{{.*}} : f16
    rlx.yield %s : f16
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}} : tensor<8xbf16>) -> tensor<8xbf16> {
  %1 = rlx.elementwise_region ins(%b : tensor<8xbf16>) -> tensor<8xbf16> {
  // CHECK-NEXT: ^bb0(%{{.*}}: bf16):
  ^bb0(%x: bf16):
    // CHECK-NEXT: %{{.*}} = arith.negf %{{.*}} : bf16
    %n = arith.negf %x : bf16
    // CHECK-NEXT: %{{.*}} = math.erf %{{.*}} : bf16
    %e = math.erf %n : bf16
    // math.erfc is upstream MLIR's; rlxc's context adds it to xDSL's math dialect
    // CHECK-NEXT: %{{.*}} = math.erfc %{{.*}} : bf16
    %ec = math.erfc %e : bf16
    // CHECK-NEXT: rlx.yield %{{.*}} : bf16
    rlx.yield %ec : bf16
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}} : tensor<8xi64>) -> tensor<8xi64> {
  %2 = rlx.elementwise_region ins(%l : tensor<8xi64>) -> tensor<8xi64> {
  // CHECK-NEXT: ^bb0(%{{.*}}: i64):
  ^bb0(%x: i64):
    // CHECK-NEXT: %{{.*}} = arith.constant 3 : i64
    %c3 = arith.constant 3 : i64
    // CHECK-NEXT: %{{.*}} = arith.muli %{{.*}}, %{{.*}} : i64
    %m = arith.muli %x, %c3 : i64
    // CHECK-NEXT: %{{.*}} = arith.divsi %{{.*}}, %{{.*}} : i64
    %d = arith.divsi %m, %c3 : i64
    // CHECK-NEXT: rlx.yield %{{.*}} : i64
    rlx.yield %d : i64
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf16>, tensor<8xbf16>, tensor<8xi64>
  func.return %0, %1, %2 : tensor<8xf16>, tensor<8xbf16>, tensor<8xi64>
}

// A body that yields its argument unchanged, and discardable attributes.
// CHECK-LABEL: func.func @identity(
func.func @identity(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}} : tensor<3xf32>) -> tensor<3xf32> attributes {tag = "fused"} {
  %0 = rlx.elementwise_region ins(%a : tensor<3xf32>) -> tensor<3xf32> attributes {tag = "fused"} {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  ^bb0(%x: f32):
    // CHECK-NEXT: rlx.yield %{{.*}} : f32
    rlx.yield %x : f32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// Regions compose with the other rlx ops.
// CHECK-LABEL: func.func @with_rlx_ops(
func.func @with_rlx_ops(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}} : tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = rlx.elementwise_region ins(%a : tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  ^bb0(%x: f32):
    // CHECK-NEXT: %{{.*}} = arith.constant 5.000000e-01 : f32
    %c = arith.constant 5.000000e-01 : f32
    // CHECK-NEXT: %{{.*}} = arith.mulf %{{.*}}, %{{.*}} : f32
    %m = arith.mulf %x, %c : f32
    // CHECK-NEXT: rlx.yield %{{.*}} : f32
    rlx.yield %m : f32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: %{{.*}} = rlx.reduce_sum %{{.*}} axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %1 = rlx.reduce_sum %0 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: func.return %{{.*}} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// The result shape is the iteration space: inputs broadcast to it, and an input
// may be smaller than every result (an expand folded into the region).
// CHECK-LABEL: func.func @folded_expand(
func.func @folded_expand(%v: tensor<8xf32>, %s: tensor<i64>) -> (tensor<2x4x8xf32>, tensor<3x3xi64>) {
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}} : tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = rlx.elementwise_region ins(%v : tensor<8xf32>) -> tensor<2x4x8xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  ^bb0(%x: f32):
    // CHECK-NEXT: %{{.*}} = arith.negf %{{.*}} : f32
    %n = arith.negf %x : f32
    // CHECK-NEXT: rlx.yield %{{.*}} : f32
    rlx.yield %n : f32
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: %{{.*}} = rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>) -> tensor<3x3xi64> {
  %1 = rlx.elementwise_region ins(%s, %s : tensor<i64>, tensor<i64>) -> tensor<3x3xi64> {
  // CHECK-NEXT: ^bb0(%{{.*}}: i64, %{{.*}}: i64):
  ^bb0(%x: i64, %y: i64):
    // CHECK-NEXT: %{{.*}} = arith.maxsi %{{.*}}, %{{.*}} : i64
    %m = arith.maxsi %x, %y : i64
    // CHECK-NEXT: rlx.yield %{{.*}} : i64
    rlx.yield %m : i64
  // CHECK-NEXT: }
  }
  // CHECK-NEXT: func.return %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<3x3xi64>
  func.return %0, %1 : tensor<2x4x8xf32>, tensor<3x3xi64>
}

// A window: the body sees columns 64..128 of %m's last axis (a slice read in place).
// CHECK-LABEL: func.func @windows(
// CHECK: rlx.elementwise_region ins(%{{.*}}, %{{.*}} : tensor<4x128xf32>, tensor<4x128xf32>) windows = [0, 0, 64, 1, 64, 64] -> tensor<4x64xf32>
func.func @windows(%m: tensor<4x128xf32>) -> tensor<4x64xf32> {
  %0 = rlx.elementwise_region ins(%m, %m : tensor<4x128xf32>, tensor<4x128xf32>) windows = [0, 0, 64, 1, 64, 64] -> tensor<4x64xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    rlx.yield %s : f32
  }
  func.return %0 : tensor<4x64xf32>
}

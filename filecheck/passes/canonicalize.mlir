// RUN: rlxc-opt %s --split-input-file -p 'canonicalize,cse,dce' | filecheck %s

// x + (-0), x * 1 and x / 1 are x; so are casts and expands to x's own type.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT: func.return %x, %x, %x, %x : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
func.func @identities(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %z = rlx.constant dense<-0.0> : tensor<4x8xf32>
  %o = rlx.constant dense<1.0> : tensor<f32>
  %a = rlx.add %z, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %m = rlx.mul %x, %o : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %d = rlx.div %m, %o : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c = rlx.cast %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %e = rlx.expand %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %d, %c, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Float x + (+0) is not x (it is +0 where x is -0), nor is x - (-0); x - (+0)
// is, and on integers x + 0 is.
// CHECK-LABEL: func.func @signed_zeros
// CHECK-NEXT: %[[Z:.*]] = rlx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[N:.*]] = rlx.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[A:.*]] = rlx.add %x, %[[Z]]
// CHECK-NEXT: %[[S:.*]] = rlx.sub %x, %[[N]]
// CHECK-NEXT: func.return %[[A]], %[[S]], %x, %i
func.func @signed_zeros(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %z = rlx.constant dense<0.0> : tensor<f32>
  %n = rlx.constant dense<-0.0> : tensor<f32>
  %zi = rlx.constant dense<0> : tensor<i32>
  %a = rlx.add %x, %z : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %s = rlx.sub %x, %n : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %t = rlx.sub %x, %z : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %b = rlx.add %i, %zi : tensor<4xi32>, tensor<i32> -> tensor<4xi32>
  func.return %a, %s, %t, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// -----

// x + 0 that broadcasts x to a larger shape is not an identity.
// CHECK-LABEL: func.func @broadcasting_zero
// CHECK: rlx.add %x, %z : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
func.func @broadcasting_zero(%x: tensor<8xf32>, %z0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = rlx.constant dense<0.0> : tensor<4x8xf32>
  %a = rlx.add %x, %z : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}

// -----

// transpose∘transpose composes (and vanishes when the composition is the identity);
// reshape∘reshape is one reshape.
// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: %[[T:.*]] = rlx.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: %[[R:.*]] = rlx.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: func.return %x, %[[T]], %[[R]]
func.func @shapes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<6x4xf32>) {
  %t1 = rlx.transpose %x perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %t2 = rlx.transpose %t1 perm = [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  %t3 = rlx.transpose %t1 perm = [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %r1 = rlx.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %r2 = rlx.reshape %r1 : tensor<24xf32> -> tensor<6x4xf32>
  func.return %t2, %t3, %r2 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<6x4xf32>
}

// -----

// Ops whose inputs are all small constants fold to constants (computed by the
// reference interpreter); params are not constants.
// CHECK-LABEL: func.func @folding
// CHECK-NEXT: %[[K:.*]] = rlx.constant dense<[2.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[W:.*]] = rlx.param "w" : tensor<2xf32>
// CHECK-NEXT: %[[E:.*]] = rlx.exp %[[W]] : tensor<2xf32>
// CHECK-NEXT: func.return %[[K]], %[[E]]
func.func @folding() -> (tensor<2xf32>, tensor<2xf32>) {
  %k = rlx.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %s = rlx.sqrt %k : tensor<2xf32>
  %a = rlx.add %s, %k : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %w = rlx.param "w" : tensor<2xf32>
  %e = rlx.exp %w : tensor<2xf32>
  func.return %a, %e : tensor<2xf32>, tensor<2xf32>
}

// -----

// cse merges identical pure rlx ops; dce drops unused ones.
// CHECK-LABEL: func.func @cse_dce
// CHECK-NEXT: %[[E:.*]] = rlx.exp %x : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = rlx.add %[[E]], %[[E]]
// CHECK-NEXT: func.return %[[A]]
func.func @cse_dce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e1 = rlx.exp %x : tensor<4xf32>
  %e2 = rlx.exp %x : tensor<4xf32>
  %dead = rlx.tanh %x : tensor<4xf32>
  %a = rlx.add %e1, %e2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// A transpose that moves only size-1 axes (one head) is a reshape, a view:
// every element stays where it was. One that moves a longer axis stays.
// CHECK-LABEL: func.func @unit_axes
// CHECK-NEXT: %[[R:.*]] = rlx.reshape %x : tensor<2x5x1x8xf32> -> tensor<2x1x5x8xf32>
// CHECK-NEXT: %[[T:.*]] = rlx.transpose %y perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
// CHECK-NEXT: func.return %[[R]], %[[T]]
func.func @unit_axes(%x: tensor<2x5x1x8xf32>, %y: tensor<2x5x3x8xf32>) -> (tensor<2x1x5x8xf32>, tensor<2x3x5x8xf32>) {
  %a = rlx.transpose %x perm = [0, 2, 1, 3] : tensor<2x5x1x8xf32> -> tensor<2x1x5x8xf32>
  %b = rlx.transpose %y perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
  func.return %a, %b : tensor<2x1x5x8xf32>, tensor<2x3x5x8xf32>
}

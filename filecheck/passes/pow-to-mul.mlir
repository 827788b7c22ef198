// RUN: rlxc-opt %s --split-input-file -p rlx-pow-to-mul | filecheck %s

// CHECK-LABEL: func.func @square
// CHECK-NEXT: %{{.*}} = rlx.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[Y:.*]] = rlx.mul %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: func.return %[[Y]]
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = rlx.constant dense<2.0> : tensor<f32>
  %y = rlx.pow %x, %two : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Other exponents, and squares that broadcast x, stay pow.
// CHECK-LABEL: func.func @not_square
// CHECK: rlx.pow %x, %three
// CHECK: rlx.pow %x, %two
func.func @not_square(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %three = rlx.constant dense<3.0> : tensor<f32>
  %two = rlx.constant dense<2.0> : tensor<2x4xf32>
  %y = rlx.pow %x, %three : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %z = rlx.pow %x, %two : tensor<4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<2x4xf32>
}

// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

func.func @reduction(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.scatter_nd' op reduction must be one of none, add, mul, max, min, got 'sum'}}
  %0 = rlx.scatter_nd %x[%i] = %u reduction = "sum" : tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>
  func.return
}

// -----

func.func @updates_shape(%x: tensor<4x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'rlx.scatter_nd' op updates of shape 2x4 do not fit: indices 2x1 into input 4x5 take updates of shape 2x5}}
  %0 = rlx.scatter_nd %x[%i] = %u reduction = "none" : tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  func.return
}

// -----

func.func @tuple_length(%x: tensor<4x5xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.scatter_nd' op indices' last extent 3 must be in [1, 2] (the input's rank)}}
  %0 = rlx.scatter_nd %x[%i] = %u reduction = "none" : tensor<4x5xf32>, tensor<2x3xi64>, tensor<2xf32>
  func.return
}

// -----

func.func @float_indices(%x: tensor<4xf32>, %i: tensor<2x1xf32>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'rlx.scatter_nd' op indices has element type f32, expected one of i32, i64}}
  %0 = rlx.scatter_nd %x[%i] = %u reduction = "none" : tensor<4xf32>, tensor<2x1xf32>, tensor<2xf32>
  func.return
}

// -----

func.func @update_type(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf16>) {
  // expected-error @+1 {{'rlx.scatter_nd' op updates: element types differ (f16 vs f32); they must be equal}}
  %0 = rlx.scatter_nd %x[%i] = %u reduction = "none" : tensor<4xf32>, tensor<2x1xi64>, tensor<2xf16>
  func.return
}

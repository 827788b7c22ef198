// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// pad, gather_elements and gather_nd.

func.func @pad_mode(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op mode 'symmetric' is not one of constant, reflect, edge, wrap}}
  %0 = rlx.pad %x low = [1, 0] high = [0, 0] mode = "symmetric" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @pad_rank(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op low and high need one entry per axis (2), got 1 and 1}}
  %0 = rlx.pad %x low = [1] high = [0] mode = "constant" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op axis 1: pads (-1, 0) must be non-negative}}
  %0 = rlx.pad %x low = [1, -1] high = [0, 0] mode = "constant" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<5x4xf32>
  func.return
}

// -----

func.func @pad_reflect_too_long(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op axis 1: reflect pads (5, 0) must be shorter than the axis extent 5}}
  %0 = rlx.pad %x low = [0, 5] high = [0, 0] mode = "reflect" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<4x10xf32>
  func.return
}

// -----

func.func @pad_edge_empty(%x: tensor<0x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op axis 0: edge padding of an empty axis}}
  %0 = rlx.pad %x low = [1, 0] high = [0, 0] mode = "edge" value = 0.000000e+00 : tensor<0x5xf32> -> tensor<1x5xf32>
  func.return
}

// -----

func.func @pad_result(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'rlx.pad' op result #0 has type tensor<5x5xf32>, but the operands and attributes give tensor<5x7xf32>}}
  %0 = rlx.pad %x low = [1, 0] high = [0, 2] mode = "constant" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @pad_int_value(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.pad' op value 1.5 is not an integer, as an i32 tensor needs}}
  %0 = rlx.pad %x low = [1] high = [0] mode = "constant" value = 1.500000e+00 : tensor<4xi32> -> tensor<5xi32>
  func.return
}

// -----

func.func @pad_bool_value(%x: tensor<4xi1>) {
  // expected-error @+1 {{'rlx.pad' op value 2.0 is not 0 or 1, as an i1 tensor needs}}
  %0 = rlx.pad %x low = [1] high = [0] mode = "constant" value = 2.000000e+00 : tensor<4xi1> -> tensor<5xi1>
  func.return
}

// -----

func.func @gather_elements_index_type(%x: tensor<3x5xf32>, %i: tensor<3x2xf32>) {
  // expected-error @+1 {{'rlx.gather_elements' op indices has element type f32, expected one of i32, i64}}
  %0 = rlx.gather_elements %x[%i] axis = 1 : tensor<3x5xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @gather_elements_rank(%x: tensor<3x5xf32>, %i: tensor<6xi64>) {
  // expected-error @+1 {{'rlx.gather_elements' op indices of shape 6 do not fit input 3x5: they need its rank and extents no larger off axis 0}}
  %0 = rlx.gather_elements %x[%i] axis = 0 : tensor<3x5xf32>, tensor<6xi64> -> tensor<6xf32>
  func.return
}

// -----

func.func @gather_elements_extent(%x: tensor<3x5xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+1 {{'rlx.gather_elements' op indices of shape 4x2 do not fit input 3x5: they need its rank and extents no larger off axis 1}}
  %0 = rlx.gather_elements %x[%i] axis = 1 : tensor<3x5xf32>, tensor<4x2xi64> -> tensor<4x2xf32>
  func.return
}

// -----

func.func @gather_elements_axis(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>) {
  // expected-error @+1 {{'rlx.gather_elements' op axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)}}
  %0 = rlx.gather_elements %x[%i] axis = 2 : tensor<3x5xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<4x5xf32>, %i: tensor<4x1xi64>) {
  // expected-error @+1 {{'rlx.gather_nd' op batch_dims 2 must be in [0, 2) for input 4x5 and indices 4x1}}
  %0 = rlx.gather_nd %x[%i] batch_dims = 2 : tensor<4x5xf32>, tensor<4x1xi64> -> tensor<4xf32>
  func.return
}

// -----

func.func @gather_nd_batch_shapes(%x: tensor<4x5xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+1 {{'rlx.gather_nd' op the 1 batch axes differ: input 4x5, indices 3x1}}
  %0 = rlx.gather_nd %x[%i] batch_dims = 1 : tensor<4x5xf32>, tensor<3x1xi64> -> tensor<3xf32>
  func.return
}

// -----

func.func @gather_nd_tuple_length(%x: tensor<4x5xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{'rlx.gather_nd' op indices' last extent 3 must be in [1, 2] (the input's rank 2 less batch_dims 0)}}
  %0 = rlx.gather_nd %x[%i] batch_dims = 0 : tensor<4x5xf32>, tensor<2x3xi64> -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_nd_scalar_indices(%x: tensor<4x5xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{'rlx.gather_nd' op input 4x5 and indices scalar need rank >= 1}}
  %0 = rlx.gather_nd %x[%i] batch_dims = 0 : tensor<4x5xf32>, tensor<i64> -> tensor<5xf32>
  func.return
}

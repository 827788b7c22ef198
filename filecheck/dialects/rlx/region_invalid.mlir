// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// rlx.elementwise_region: inputs that broadcast, results of the broadcast
// shape, one scalar body argument per input, a body of arith/math ops ending
// in rlx.yield with one scalar per result; rlx.yield only inside it.

func.func @no_inputs() {
  // expected-error @+1 {{'rlx.elementwise_region' op elementwise_region needs at least one input}}
  %0 = "rlx.elementwise_region"() ({
  ^bb0:
    %c = arith.constant 1.000000e+00 : f32
    rlx.yield %c : f32
  }) : () -> tensor<4xf32>
  func.return
}

// -----

func.func @no_results(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op elementwise_region needs at least one result}}
  "rlx.elementwise_region"(%a) ({
  ^bb0(%x: f32):
    "rlx.yield"() : () -> ()
  }) : (tensor<4xf32>) -> ()
  func.return
}

// -----

// Every input broadcasts to the (common) result shape, never the other way.
func.func @input_larger_than_result(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op input #0 of shape 4x8 does not broadcast to the result shape 1x8}}
  %0 = rlx.elementwise_region ins(%a, %b : tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    rlx.yield %s : f32
  }
  func.return
}

// -----

func.func @input_rank_above_result(%a: tensor<8xf32>, %b: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op input #1 of shape 2x4x8 does not broadcast to the result shape 4x8}}
  %0 = rlx.elementwise_region ins(%a, %b : tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    rlx.yield %s : f32
  }
  func.return
}

// -----

func.func @results_differ(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op result #1 has shape 8, but result #0 has 4x8: all results share the iteration shape}}
  %0, %1 = rlx.elementwise_region ins(%a, %b : tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>, tensor<8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    rlx.yield %s, %s : f32, f32
  }
  func.return
}

// -----

func.func @argument_count(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op body has 1 arguments, expected one per input (2)}}
  %0 = rlx.elementwise_region ins(%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @argument_type(%a: tensor<4xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op body argument #1 has type f32, expected the element type i32 of input #1}}
  %0 = rlx.elementwise_region ins(%a, %i : tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    rlx.yield %s : f32
  }
  func.return
}

// -----

// Body arguments are scalars, not tensors.
func.func @argument_tensor(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op body argument #0 has type tensor<4xf32>, expected the element type f32 of input #0}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = arith.constant 1.000000e+00 : f32
    rlx.yield %c : f32
  }
  func.return
}

// -----

func.func @rlx_op_in_body(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op 'rlx.param' may not appear in an elementwise region body: only region-free arith and math ops on scalars}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %p = rlx.param "w" : tensor<4xf32>
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @builtin_op_in_body(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op 'builtin.unrealized_conversion_cast' may not appear in an elementwise region body: only region-free arith and math ops on scalars}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %y = builtin.unrealized_conversion_cast %x : f32 to f32
    rlx.yield %y : f32
  }
  func.return
}

// -----

func.func @no_yield(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op body must end with rlx.yield}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %s = arith.addf %x, %x : f32
  }
  func.return
}

// -----

func.func @empty_body(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op body must end with rlx.yield}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
  }
  func.return
}

// -----

func.func @no_block(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op Region 'body' at position 0 expected a single block, but got 0 blocks}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  }
  func.return
}

// -----

func.func @two_blocks(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op Region 'body' at position 0 expected a single block, but got 2 blocks}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  ^bb1:
    %c = arith.constant 1.000000e+00 : f32
    rlx.yield %c : f32
  }
  func.return
}

// -----

func.func @yield_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op rlx.yield gives 1 values, expected one per result (2)}}
  %0, %1 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @yield_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op yielded value #0 has type f32, expected the element type f16 of result #0}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @yield_second_type(%a: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op yielded value #1 has type i32, expected the element type i1 of result #1}}
  %0, %1 = rlx.elementwise_region ins(%a : tensor<4xi32>) -> tensor<4xi32>, tensor<4xi1> {
  ^bb0(%x: i32):
    rlx.yield %x, %x : i32, i32
  }
  func.return
}

// -----

func.func @result_element_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op result #0 has unsupported element type f64 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%x: f32):
    %d = arith.extf %x : f32 to f64
    rlx.yield %d : f64
  }
  func.return
}

// -----

func.func @value_from_above(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op Operation using value defined out of its IsolatedFromAbove parent: AddOp(%s = rlx.add %b, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>)}}
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %s = rlx.add %b, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) {
  %0 = rlx.exp %a : tensor<4xf32>
  // expected-error @+1 {{'rlx.yield' op 'rlx.yield' expects parent op to be one of 'rlx.elementwise_region', 'rlx.fusion'}}
  rlx.yield %0 : tensor<4xf32>
}

// -----

func.func @yield_not_last(%a: tensor<4xf32>) {
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{'rlx.yield' op 'rlx.yield' must be the last operation in its parent block}}
    rlx.yield %x : f32
    %s = arith.addf %x, %x : f32
    rlx.yield %s : f32
  }
  func.return
}

// -----

// windows: (input, offset, width) triples, one per input, inside its last axis.
func.func @window_past_the_axis(%a: tensor<4x64xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op window of input #0 (offset 40, width 32) does not fit its last axis (4x64)}}
  %0 = rlx.elementwise_region ins(%a : tensor<4x64xf32>) windows = [0, 40, 32] -> tensor<4x32xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @window_not_a_triple(%a: tensor<4x64xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op windows holds 2 values: (input, offset, width) triples expected}}
  %0 = rlx.elementwise_region ins(%a : tensor<4x64xf32>) windows = [0, 32] -> tensor<4x32xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @window_twice(%a: tensor<4x64xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op window #1 names input 0: one window per input, 0 <= input < 1}}
  %0 = rlx.elementwise_region ins(%a : tensor<4x64xf32>) windows = [0, 0, 32, 0, 32, 32] -> tensor<4x32xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// -----

func.func @window_shape(%a: tensor<4x64xf32>) {
  // expected-error @+1 {{'rlx.elementwise_region' op input #0 of shape 4x16 does not broadcast to the result shape 4x32}}
  %0 = rlx.elementwise_region ins(%a : tensor<4x64xf32>) windows = [0, 0, 16] -> tensor<4x32xf32> {
  ^bb0(%x: f32):
    rlx.yield %x : f32
  }
  func.return
}

// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// rlx.fusion's verifier: the body's arguments take the inputs' types, the
// yield gives the results' types, and only rlx tensor ops of a fusible kind
// appear in the body.

func.func @arg_types(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'rlx.fusion' op body arguments must take the inputs' types, got (tensor<2x4xf32>) for inputs (tensor<2x8xf32>)}}
  %p = rlx.fusion ins(%x : tensor<2x8xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %q = rlx.softmax %a axis = -1 : tensor<2x4xf32>
    rlx.yield %q : tensor<2x4xf32>
  }
  func.return
}

// -----

func.func @yield_types(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'rlx.fusion' op rlx.yield gives (tensor<2x8xf32>), expected the results' types (tensor<2x8xf16>)}}
  %p = rlx.fusion ins(%x : tensor<2x8xf32>) -> tensor<2x8xf16> {
  ^bb0(%a: tensor<2x8xf32>):
    %q = rlx.softmax %a axis = -1 : tensor<2x8xf32>
    rlx.yield %q : tensor<2x8xf32>
  }
  func.return
}

// -----

func.func @opaque_inside(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'rlx.fusion' op 'rlx.matmul' may not appear in an rlx.fusion body: only rlx elementwise, broadcast, injective and reduction ops}}
  %p = rlx.fusion ins(%x : tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<8x8xf32>):
    %m = rlx.matmul %a, %a : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    %q = rlx.softmax %m axis = -1 : tensor<8x8xf32>
    rlx.yield %q : tensor<8x8xf32>
  }
  func.return
}

// Regression (found by the lit suite, fixed): rlx values are static ranked builtin tensors, but check_tensor_type
// ignores a tensor's encoding. Ops whose result type is the operand's type
// (rlx.exp here) accept `tensor<4xf32, "enc">` silently; ops that infer their
// result type reject the same IR with a misleading message ("result #0 has type
// tensor<4xf32, "enc">, but the operands and attributes give tensor<4xf32>").
// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

func.func @unary_with_encoding(%x: tensor<4xf32, "enc">) {
  // expected-error @+1 {{'rlx.exp' op operand #0}}
  %0 = rlx.exp %x : tensor<4xf32, "enc">
  func.return
}

// -----

func.func @binary_with_encoding(%x: tensor<4xf32, "enc">) {
  // expected-error @+1 {{'rlx.add' op operand #0}}
  %0 = rlx.add %x, %x : tensor<4xf32, "enc">, tensor<4xf32, "enc"> -> tensor<4xf32, "enc">
  func.return
}

// --verify-diagnostics, as mlir-opt does it: every `expected-*` annotation is
// produced on its line, nothing else is, and the tool exits 0; a chunk that
// succeeds is printed as usual, one that fails prints nothing.
// RUN: rlxc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK-NOT: error
// CHECK: func.func @fine
// CHECK-NOT: error

// The line below the annotation: @+1.
func.func @plus(%a: tensor<4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'rlx.add' op operands have shapes that do not broadcast: 4x16, 8}}
  %0 = rlx.add %a, %b : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  func.return
}

// -----

// A parse error, at its token's line, with the annotation under it: @-1.
func.func @minus(%x: tensor<4xf32>) {
  %0 = rlx.exp %x tensor<4xf32>
  // expected-error @-1 {{Expected ':'}}
  func.return
}

// -----

// @above: the nearest line above that is not an annotation.
func.func @above(%x: tensor<4xi32>) {
  %0 = rlx.exp %x : tensor<4xi32>
  // expected-error @above {{'rlx.exp' op input has element type i32}}
  func.return
}

// -----

// @below: the nearest line below that is not an annotation.
func.func @below(%x: tensor<4xi64>) {
  // expected-error @below {{'rlx.log' op input has element type i64, expected one of f32, f16, bf16}}
  %0 = rlx.log %x : tensor<4xi64>
  func.return
}

// -----

// No designator: the annotation's own line.
func.func @same_line(%x: tensor<4xi1>) {
  %0 = rlx.sqrt %x : tensor<4xi1>  // expected-error {{expected one of f32, f16, bf16}}
  func.return
}

// -----

// -re: the {{...}} parts of the text are regular expressions.
func.func @regex(%t: tensor<100x16xf32>, %i: tensor<4xi64>) {
  // expected-error-re @+1 {{'rlx.gather' op axis {{-?[0-9]+}} is out of range for a tensor of rank {{[0-9]}}}}
  %0 = rlx.gather %t[%i] axis = -3 : tensor<100x16xf32>, tensor<4xi64> -> tensor<4x16xf32>
  func.return
}

// -----

// A message of several lines is matched as a whole (with -re, `.` and `\n`
// match its line breaks).
func.func @two_lines(%x: memref<4xf32>) {
  // expected-error-re @+1 {{'rlx.exp' op operand 'input' at position 0 does not verify:{{\n}}memref<4xf32> should be of base attribute tensor}}
  %0 = "rlx.exp"(%x) : (memref<4xf32>) -> memref<4xf32>
  func.return
}

// -----

// A failure inside a region is at the innermost failing op.
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{'rlx.yield' op 'rlx.yield' must be the last operation in its parent block}}
    rlx.yield %x : f32
    %s = arith.addf %x, %x : f32
    rlx.yield %s : f32
  }
  func.return %0 : tensor<4xf32>
}

// -----

// A chunk without errors is printed.
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

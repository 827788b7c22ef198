// RUN: rlxc-opt %s --split-input-file --verify-diagnostics

// The checks every rlx op shares: operands and results are static ranked
// builtin tensors of f32, f16, bf16, i32, i64 or i1.

func.func @dynamic_operand(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{'rlx.exp' op operand #0 must have a static shape, got tensor<?x16xf32>}}
  %0 = rlx.exp %x : tensor<?x16xf32>
  func.return
}

// -----

func.func @dynamic_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.cast' op result #0 must have a static shape, got tensor<?xf32>}}
  %0 = rlx.cast %x : tensor<4xf32> -> tensor<?xf32>
  func.return
}

// -----

func.func @dynamic_second_operand(%a: tensor<4xf32>, %b: tensor<?xf32>) {
  // expected-error @+1 {{'rlx.add' op operand #1 must have a static shape, got tensor<?xf32>}}
  %0 = rlx.add %a, %b : tensor<4xf32>, tensor<?xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @f64_operand(%x: tensor<4xf64>) {
  // expected-error @+1 {{'rlx.exp' op operand #0 has unsupported element type f64 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.exp %x : tensor<4xf64>
  func.return
}

// -----

func.func @i8_second_operand(%a: tensor<4xi32>, %b: tensor<4xi8>) {
  // expected-error @+1 {{'rlx.mul' op operand #1 has unsupported element type i8 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.mul %a, %b : tensor<4xi32>, tensor<4xi8> -> tensor<4xi32>
  func.return
}

// -----

func.func @signed_integer(%x: tensor<4xsi32>) {
  // expected-error @+1 {{'rlx.neg' op operand #0 has unsupported element type si32 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.neg %x : tensor<4xsi32>
  func.return
}

// -----

func.func @index_elements(%x: tensor<4xindex>) {
  // expected-error @+1 {{'rlx.reshape' op operand #0 has unsupported element type index (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.reshape %x : tensor<4xindex> -> tensor<2x2xindex>
  func.return
}

// -----

func.func @f64_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.cast' op result #0 has unsupported element type f64 (expected f32, f16, bf16, i32, i64 or i1)}}
  %0 = rlx.cast %x : tensor<4xf32> -> tensor<4xf64>
  func.return
}

// -----

func.func @memref_operand(%x: memref<4xf32>) {
  // expected-error-re @+1 {{'rlx.exp' op operand 'input' at position 0 does not verify:{{\n}}memref<4xf32> should be of base attribute tensor}}
  %0 = "rlx.exp"(%x) : (memref<4xf32>) -> memref<4xf32>
  func.return
}

// -----

func.func @unranked_operand(%x: tensor<*xf32>) {
  // expected-error-re @+1 {{'rlx.cast' op operand 'input' at position 0 does not verify:{{\n}}tensor<*xf32> should be of base attribute tensor}}
  %0 = "rlx.cast"(%x) : (tensor<*xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @scalar_result() {
  // expected-error-re @+1 {{'rlx.param' op result 'result' at position 0 does not verify:{{\n}}f32 should be of base attribute tensor}}
  %0 = "rlx.param"() <{name = "w"}> : () -> f32
  func.return
}

// -----

func.func @operand_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.exp' op Expected 1 operand, but got 2}}
  %0 = "rlx.exp"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @result_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx.add' op Expected 1 result, but got 2}}
  %0, %1 = "rlx.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return
}

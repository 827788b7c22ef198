// --verify-diagnostics fails (exit status 1) when an expected diagnostic is
// not produced or one is produced that was not expected, and says where.
// RUN: not rlxc-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback

// The text differs: the error is unexpected, the annotation not produced.
func.func @wrong_text(%x: tensor<4xi32>) {
  // expected-error @+1 {{input has element type i64}}
  %0 = rlx.exp %x : tensor<4xi32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 3]]:3: error: unexpected error: 'rlx.exp' op input has element type i32, expected one of f32, f16, bf16{{$}}
// CHECK-NEXT: {{^}}  %0 = rlx.exp %x : tensor<4xi32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 7]]:6: error: expected error "input has element type i64" was not produced{{$}}

// -----

// Nothing goes wrong here.
func.func @nothing_wrong(%x: tensor<4xf32>) {
  // expected-error @+1 {{input has element type}}
  %0 = rlx.exp %x : tensor<4xf32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 4]]:6: error: expected error "input has element type" was not produced{{$}}

// -----

// An error that no annotation expects.
func.func @unannotated(%a: tensor<4x16xf32>, %b: tensor<8xf32>) {
  %0 = rlx.add %a, %b : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 3]]:3: error: unexpected error: 'rlx.add' op operands have shapes that do not broadcast: 4x16, 8 {{.*}}

// -----

// The right text on the wrong line.
func.func @wrong_line(%x: tensor<4xi32>) {
  // expected-error @+2 {{input has element type i32}}
  %0 = rlx.exp %x : tensor<4xi32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 3]]:3: error: unexpected error: 'rlx.exp' op input has element type i32
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 5]]:6: error: expected error "input has element type i32" was not produced{{$}}

// -----

// The right text and line, the wrong kind.
func.func @wrong_kind(%x: tensor<4xi32>) {
  // expected-warning @+1 {{input has element type i32}}
  %0 = rlx.exp %x : tensor<4xi32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 3]]:3: error: 'error' diagnostic emitted when expecting a 'warning': 'rlx.exp' op input has element type i32

// -----

// A parse error where the annotation expects it one line too early.
func.func @parse(%x: tensor<4xf32>) {
  // expected-error @+2 {{Expected ':'}}
  %0 = rlx.exp %x tensor<4xf32>
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 3]]:19: error: unexpected error: Expected ':'{{$}}
// CHECK-NEXT: {{^}}  %0 = rlx.exp %x tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}                  ^{{$}}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 7]]:6: error: expected error "Expected ':'" was not produced{{$}}

// -----

// An annotation without its {{...}}, and a -re text that is not a regex.
func.func @malformed(%x: tensor<4xf32>) {
  // expected-error @+1 no braces
  // expected-error-re @+1 {{unbalanced {{(}}}}
  func.return
}
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 4]]:6: error: malformed expected-* annotation
// CHECK: {{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE - 4]]:6: error: invalid regex: {{.*}}

// CHECK-NOT: Traceback

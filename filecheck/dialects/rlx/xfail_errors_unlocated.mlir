// XFAIL: *
// Known bug: rlxc-opt promises a located diagnostic for every bad input, but a
// type that violates an rlx op's type constraint in the *custom* syntax (here a
// non-tensor result type) is rejected while parsing, and the tool prints only
// "rlxc-opt: verification failed in <file>:" and "f32 should be of base
// attribute tensor": no file:line:col, no op name. (The generic form of the same
// op is located.) An out-of-range integer attribute (`rlx.argmax ... axis =
// 99999999999999999999999`) and a non-ASCII rlx.param name are reported the
// same unlocated way.
// RUN: not rlxc-opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: {{.*}}xfail_errors_unlocated.mlir:[[# @LINE + 4]]:{{[0-9]+$}}
// CHECK: f32 should be of base attribute tensor
// CHECK-NOT: Traceback
func.func @scalar_param() {
  %0 = rlx.param "w" : f32
  func.return
}

// XFAIL: *
// Known bug (from xDSL's parser, surfaced by rlxc-opt): a use of an undefined
// value is reported at the end of the input ("<file>:<last line + 1>:1 values
// used but not defined: [%y]"), not at the line that uses it.
// RUN: not rlxc-opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: {{.*}}xfail_errors_parse_locations.mlir:[[# @LINE + 4]]:{{[0-9]+$}}
// CHECK: %y
// CHECK-NOT: Traceback
func.func @undefined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.add %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

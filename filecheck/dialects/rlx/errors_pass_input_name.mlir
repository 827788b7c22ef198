// Regression (found by the lit suite, fixed): an unknown pass is reported as "rlxc-opt: error in <stdin>:" even
// when an input file is given: the pipeline is parsed in RlxcOptMain's
// constructor, before main() learns the input's name.
// RUN: not rlxc-opt %s -p no-such-pass 2>&1 | filecheck %s

// CHECK: rlxc-opt: error in {{.*}}errors_pass_input_name.mlir:
// CHECK-NEXT: Unrecognized passes: ['no-such-pass']
func.func @f() {
  func.return
}

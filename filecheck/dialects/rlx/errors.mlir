// rlxc-opt reports a bad input as a located diagnostic on stderr and exits
// non-zero, without a Python traceback and without printing a module.

// A syntax error (the `:` before the type is missing).
// RUN: not rlxc-opt %s 2>&1 | filecheck %s

// An unknown pass, or an unknown pass option, is reported before parsing.
// RUN: not rlxc-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not rlxc-opt %s -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION

// A missing input file.
// RUN: not rlxc-opt %s.does-not-exist 2>&1 | filecheck %s --check-prefix=NOFILE

// CHECK-NOT: Traceback
// CHECK: rlxc-opt: parse error in {{.*}}errors.mlir:
// CHECK-NEXT: {{.*}}errors.mlir:[[# @LINE + 6]]:19{{$}}
// CHECK-NEXT: {{^}}  %0 = rlx.exp %x tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}                  ^^^^^^{{$}}
// CHECK-NEXT: {{^}}                  Expected ':'{{$}}
// CHECK-NOT: Traceback
func.func @syntax_error(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.exp %x tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// PASS-NOT: Traceback
// PASS: Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback

// OPTION-NOT: Traceback
// OPTION: Provided arguments ["bogus"] not found in expected arguments
// OPTION-NOT: Traceback

// NOFILE-NOT: Traceback
// NOFILE: rlxc-opt: error in {{.*}}errors.mlir.does-not-exist:
// NOFILE-NEXT: No such file or directory
// NOFILE-NOT: Traceback

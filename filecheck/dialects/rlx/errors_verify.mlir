// A verifier failure without --verify-diagnostics: a located diagnostic on
// stderr naming the op, exit status 1, no traceback and no partial module, with
// or without a pass pipeline (the input is verified before any pass runs).

// RUN: not rlxc-opt %s 2>&1 | filecheck %s
// RUN: not rlxc-opt %s -p canonicalize,cse 2>&1 | filecheck %s
// RUN: not rlxc-opt %s --print-op-generic 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
// CHECK: rlxc-opt: verification failed in {{.*}}errors_verify.mlir:
// CHECK-NEXT: {{.*}}errors_verify.mlir:[[# @LINE + 8]]:3{{$}}
// CHECK-NEXT: {{^}}  %1 = rlx.add %0, %y : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>{{$}}
// CHECK-NEXT: {{^}}  ^^{{$}}
// CHECK-NEXT: {{^}}  error: 'rlx.add' op operands have shapes that do not broadcast: 4x16, 8 (axis -1 is 16 in one and 8 in another; each axis must match or be 1){{$}}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
func.func @verify_error(%x: tensor<4x16xf32>, %y: tensor<8xf32>) -> tensor<4x16xf32> {
  %0 = rlx.exp %x : tensor<4x16xf32>
  %1 = rlx.add %0, %y : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}

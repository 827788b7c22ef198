// A kernel op whose source does not compile (input of cuda-resources.mlir).
builtin.module {
  rlx_cuda.kernel @k0 entry "f" arch "sm_90" source "extern \22C\22 __global__ void f() { oops; }"
}

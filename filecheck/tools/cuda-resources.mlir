// What each generated kernel costs (`-t cuda-resources`): NVRTC compiles it
// with ptxas' report; one line per kernel with its registers per thread,
// spilled bytes, stack frame, static shared memory and the form its source
// names. A kernel that fails to compile is reported with NVRTC's log and the
// path of the saved source, exit status 1, no traceback.
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-resources | filecheck %s
// RUN: rlxc-opt %s -p 'rlx-cuda{arch=sm_80}' -t cuda-resources | filecheck %s --check-prefix=SM80
// RUN: not rlxc-opt %S/Inputs/broken-kernel.mlir -t cuda-resources 2>&1 | filecheck %s --check-prefix=BROKEN
// RUN: rlxc-opt %s -t cuda-resources | filecheck %s --check-prefix=UNLOWERED

// CHECK: // kernel | entry | arch | registers | spill stores | spill loads | stack | smem | form
// CHECK-NEXT: @k0 | rlx_softmax_{{[0-9a-f]+}} | sm_90 | {{[1-9][0-9]*}} | {{[0-9]+}} | {{[0-9]+}} | {{[0-9]+}} | {{[0-9]+}} | row form: stream (a block of 1024 threads per row, read twice, 8 elements per access, 2 loads in flight per thread)
// CHECK-NEXT: @k1 | rlx_norm_{{[0-9a-f]+}} | sm_90 | {{[1-9][0-9]*}} | {{.*}} | row form: block (256 threads per row, 8 elements per access between the row's 16-byte boundaries, the rest one each, 17 per thread)
// CHECK-NOT: @k2

// SM80: @k0 | rlx_softmax_{{[0-9a-f]+}} | sm_80 | {{[1-9][0-9]*}} | {{.*}} | row form: smem (131072 bytes of shared memory as f32, 1024 threads per row, 8 elements per access, 32 per thread)

// BROKEN: rlxc-opt: NVRTC failed in {{.*}}broken-kernel.mlir:
// BROKEN-NEXT: NVRTC failed to compile k0.cu for sm_90
// BROKEN: error: identifier "oops" is undefined
// BROKEN: source saved at {{.*}}k0.cu
// BROKEN-NOT: Traceback

// UNLOWERED: // no rlx_cuda.kernel in this module (lower it with -p rlx-cuda)

func.func @main(%x: tensor<4x32768xf16>, %y: tensor<4x4097xbf16>, %g: tensor<4097xbf16>) -> (tensor<4x32768xf16>, tensor<4x4097xbf16>) {
  %s = rlx.softmax %x axis = -1 : tensor<4x32768xf16>
  %n = rlx.rms_norm %y, %g eps = 1.0e-06 : tensor<4x4097xbf16>, tensor<4097xbf16>
  func.return %s, %n : tensor<4x32768xf16>, tensor<4x4097xbf16>
}

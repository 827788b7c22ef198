// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s
// RUN: rlxc-opt %s -p 'rlx-cuda{gemm=kernel}' | filecheck %s --check-prefix=KERNEL
// RUN: rlxc-opt %s -p 'rlx-cuda{gemm=kernel}' -t cuda-source | filecheck %s --check-prefix=SRC

// linear is one cuBLASLt matmul with the bias and relu in its epilogue
// (W stored [out, in]: trans_b); a batched matmul whose rhs has no batch
// dimensions broadcasts it with batch stride 0. Params get parameter-buffer
// offsets, 256-byte aligned.
// CHECK: rlx.param_bytes = 1024 : i64
// CHECK: %w = rlx.param "w" {rlx.param_offset = 0 : i64} : tensor<8x16xf32>
// CHECK: %bias = rlx.param "bias" {rlx.param_offset = 512 : i64} : tensor<8xf32>
// CHECK: rlx_cuda.gemm %x, %w bias %bias m 4 n 8 k 16 batch 1 trans_a 0 trans_b 1 strides [0, 0, 0] locations [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<param 512>, #rlx_cuda.arg<arena {{[0-9]+}}>] epilogue "bias_relu" dtype "f32"
// CHECK: rlx_cuda.gemm %q, %w2 m 5 n 6 k 7 batch 6 trans_a 0 trans_b 0 strides [35, 0, 30]

// With gemm=kernel (no cuBLASLt) the same gemms are launches of generated
// tiled kernels: a 16x16 block per tile of C, one z-block per batch entry,
// params A, B, [bias], C at the same locations.
// KERNEL-NOT: rlx_cuda.gemm
// KERNEL: rlx_cuda.kernel @k0 entry "[[LIN:rlx_gemm_[0-9a-f]+]]" arch "sm_90"
// KERNEL: rlx_cuda.kernel @k1 entry "rlx_gemm_{{[0-9a-f]+}}" arch "sm_90"
// KERNEL: %y = rlx_cuda.launch @k0 grid [1, 1, 1] block [16, 16, 1] smem 0 args [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<param 512>, #rlx_cuda.arg<arena {{[0-9]+}}>](%x, %w, %bias)
// KERNEL: %z = rlx_cuda.launch @k1 grid [1, 1, 6] block [16, 16, 1] smem 0 args [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<param 768>, #rlx_cuda.arg<arena {{[0-9]+}}>](%q, %w2)
// KERNEL-NOT: rlx_cuda.gemm

// The header comes once, then each kernel names its op; linear's weight is
// read transposed, and its relu is rlx.relu's own scalar expression
// (NaN-propagating max), applied after the bias.
// SRC: // ===== rlx_kernels.cuh
// SRC: // ===== @k0: entry [[LIN:rlx_gemm_[0-9a-f]+]], sm_90
// SRC-NEXT: #include "rlx_kernels.cuh"
// SRC-NEXT: // rlx.linear (op #2 of @main)
// SRC-NEXT: #define M 4
// SRC-NEXT: #define N 8
// SRC-NEXT: #define K 16
// SRC-NEXT: extern "C" __global__ void __launch_bounds__(256) [[LIN]](const float* __restrict__ A0, const float* __restrict__ B0, const float* __restrict__ bias, float* __restrict__ C0) {
// SRC: B[(long long)col * K + kk]
// SRC: float v = acc + bias[col];
// SRC-NEXT: const float v0 = 0.0f;
// SRC-NEXT: const float v1 = rlx_maxf(v, v0);
// SRC-NEXT: v = v1;
// SRC-NEXT: C[(long long)row * N + col] = v;
// SRC: // ===== @k1: entry [[MM:rlx_gemm_[0-9a-f]+]], sm_90
// SRC-NEXT: #include "rlx_kernels.cuh"
// SRC-NEXT: // rlx.matmul (op #4 of @main)
// SRC: const float* A = A0 + b * 35LL;
// SRC-NEXT: const float* B = B0 + b * 0LL;
// SRC-NEXT: float* C = C0 + b * 30LL;
// SRC: B[(long long)kk * N + col]
func.func @main(%x: tensor<4x16xf32>, %q: tensor<2x3x5x7xf32>) -> (tensor<4x8xf32>, tensor<2x3x5x6xf32>) {
  %w = rlx.param "w" : tensor<8x16xf32>
  %bias = rlx.param "bias" : tensor<8xf32>
  %y = rlx.linear %x, %w bias %bias activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %w2 = rlx.param "w2" : tensor<7x6xf32>
  %z = rlx.matmul %q, %w2 : tensor<2x3x5x7xf32>, tensor<7x6xf32> -> tensor<2x3x5x6xf32>
  func.return %y, %z : tensor<4x8xf32>, tensor<2x3x5x6xf32>
}

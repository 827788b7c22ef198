// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s
// RUN: rlxc-opt %s -p 'rlx-cuda{gemm=kernel}' -t cuda-source | filecheck %s --check-prefix=SRC

// A linear with a residual is one cuBLASLt matmul that reads the residual as
// its C matrix (beta 1, C's layout): locations a, b, bias, residual, c.
// CHECK: rlx_cuda.gemm %x, %w bias %bias residual %r m 4 n 8 k 16 batch 1 trans_a 0 trans_b 1 strides [0, 0, 0] locations [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<param 512>, #rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<arena {{[0-9]+}}>] epilogue "bias_relu" dtype "f32"

// The generated fallback gemm adds the residual, then the bias, then applies relu.
// SRC: const float* __restrict__ bias, const float* __restrict__ R0, float* __restrict__ C0)
// SRC: float v = acc + R0[b * 0LL + (long long)row * N + col] + bias[col];
func.func @main(%x: tensor<4x16xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = rlx.param "w" : tensor<8x16xf32>
  %bias = rlx.param "bias" : tensor<8xf32>
  %y = rlx.linear %x, %w bias %bias residual %r activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

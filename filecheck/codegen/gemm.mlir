// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s

// linear is one cuBLASLt matmul with the bias and relu in its epilogue
// (W stored [out, in]: trans_b); a batched matmul whose rhs has no batch
// dimensions broadcasts it with batch stride 0. Params get parameter-buffer
// offsets, 256-byte aligned.
// CHECK: rlx.param_bytes = 1024 : i64
// CHECK: %w = rlx.param "w" {rlx.param_offset = 0 : i64} : tensor<8x16xf32>
// CHECK: %bias = rlx.param "bias" {rlx.param_offset = 512 : i64} : tensor<8xf32>
// CHECK: rlx_cuda.gemm %x, %w bias %bias m 4 n 8 k 16 batch 1 trans_a 0 trans_b 1 strides [0, 0, 0] locations [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<param 512>, #rlx_cuda.arg<arena {{[0-9]+}}>] epilogue "bias_relu" dtype "f32"
// CHECK: rlx_cuda.gemm %q, %w2 m 5 n 6 k 7 batch 6 trans_a 0 trans_b 0 strides [35, 0, 30]
func.func @main(%x: tensor<4x16xf32>, %q: tensor<2x3x5x7xf32>) -> (tensor<4x8xf32>, tensor<2x3x5x6xf32>) {
  %w = rlx.param "w" : tensor<8x16xf32>
  %bias = rlx.param "bias" : tensor<8xf32>
  %y = rlx.linear %x, %w bias %bias activation "relu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %w2 = rlx.param "w2" : tensor<7x6xf32>
  %z = rlx.matmul %q, %w2 : tensor<2x3x5x7xf32>, tensor<7x6xf32> -> tensor<2x3x5x6xf32>
  func.return %y, %z : tensor<4x8xf32>, tensor<2x3x5x6xf32>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=IR

// Reducing a leading axis with the innermost axis kept and outputs enough to
// fill the device (9000 / 32 >= 2 * 132 blocks): the column kernel, 32
// adjacent outputs per block (one per lane, so loads are coalesced), each of
// the 8 warps walking every 8th reduced element, combined through shared
// memory.
// CHECK: rlx_reduce_cols_{{[0-9a-f]+}}(const float* __restrict__ x, float* __restrict__ y)
// CHECK: __shared__ float part[8][33];
// CHECK: const long long r = rb + lane;
// CHECK: for (long long k = warp; k < 3LL; k += 8)
// CHECK: acc = RlxSum()(acc, (float)x[base + (k * 9000LL)]);
// CHECK: for (int j = 1; j < 8; ++j) acc = RlxSum()(acc, part[j][lane]);
// CHECK: y[r] = (float)(acc / (float)3);

// Few outputs (64): a block per output, as for trailing axes.
// CHECK: rlx_reduce_{{[0-9a-f]+}}(const float* __restrict__ x, float* __restrict__ y)
// CHECK: rlx_block_reduce(acc, RlxSum()

// IR: rlx_cuda.launch @k0 grid [282, 1, 1] block [256, 1, 1]
// IR: rlx_cuda.launch @k1 grid [64, 1, 1] block [256, 1, 1]
func.func @main(%x: tensor<3x9000xf32>, %y: tensor<1000x64xf32>) -> (tensor<9000xf32>, tensor<64xf32>) {
  %a = rlx.reduce_mean %x axes = [0] : tensor<3x9000xf32> -> tensor<9000xf32>
  %b = rlx.reduce_sum %y axes = [0] : tensor<1000x64xf32> -> tensor<64xf32>
  func.return %a, %b : tensor<9000xf32>, tensor<64xf32>
}

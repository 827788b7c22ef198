// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=IR

// Reducing a leading axis, the innermost axis kept: the columns form. Each
// thread owns an item of 4 adjacent outputs (a float4: every load is
// coalesced) and walks the reduced axis; the threads of a column combine
// through shared memory, pairwise. With 3 reduced elements, 2 threads per
// column and 128 items per block.
// CHECK: // reduce form: columns: 128 items of 4 adjacent outputs per block, 2 threads apart along the 3 reduced elements
// CHECK: rlx_reduce_cols_{{[0-9a-f]+}}(const float* __restrict__ x_, float* __restrict__ y_)
// CHECK: const uint4* __restrict__ x = reinterpret_cast<const uint4*>(x_);
// CHECK: if (k < 3LL) p[j] = x[base + (k * 2250LL)];
// CHECK: acc[3] = RlxSum()(acc[3], (float)pk.e[3]);
// CHECK: for (int e = 0; e < 4; ++e) acc[e] = RlxSum()(acc[e], part[rk][c * 4 + e]);
// CHECK: pk.e[0] = (float)(acc[0] / (float)3);
// CHECK: y[r] = item;

// Few outputs (64: 16 items) and a long reduced axis: fewer items per block
// (down to 4, 64 bytes of each row), more threads along the reduced axis
// (64), so that more blocks share the work.
// CHECK: // reduce form: columns: 4 items of 4 adjacent outputs per block, 64 threads apart along the 1000 reduced elements

// IR: rlx_cuda.launch @k0 grid [18, 1, 1] block [256, 1, 1]
// IR: rlx_cuda.launch @k1 grid [4, 1, 1] block [256, 1, 1]
func.func @main(%x: tensor<3x9000xf32>, %y: tensor<1000x64xf32>) -> (tensor<9000xf32>, tensor<64xf32>) {
  %a = rlx.reduce_mean %x axes = [0] : tensor<3x9000xf32> -> tensor<9000xf32>
  %b = rlx.reduce_sum %y axes = [0] : tensor<1000x64xf32> -> tensor<64xf32>
  func.return %a, %b : tensor<9000xf32>, tensor<64xf32>
}

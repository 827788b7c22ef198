// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=IR

// Reducing a leading axis, the innermost axis kept: the columns form. Each
// thread owns an item of 4 adjacent outputs (a float4: every load is
// coalesced) and walks the reduced axis; the threads of a column combine
// through shared memory, pairwise. With 3 reduced elements, 1 thread per
// column (threads along the axis keep 8 elements each or more) and 256
// items per block.
// CHECK: // reduce form: columns: 256 items of 4 adjacent outputs per block, 1 threads apart along the 3 reduced elements
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

// Still too few blocks for the GPU and a long reduced axis: the reduced axis
// is split in chunks, a block each (grid.y), over tiles of 128 bytes of
// outputs (8 items). Each block writes its
// partials into the kernel's own scratch (a __device__ array: no arena
// space); the last block of a tile to arrive, counted atomically, folds the
// chunks in order (the same bits every run) and resets its counter.
// CHECK: // reduce form: columns: 8 items of 4 adjacent outputs per block, 32 threads apart along the 20000 reduced elements, 4 loads in flight per thread, the reduced axis split in 39 chunks of 513 (grid.y)
// CHECK-NEXT: __device__ float [[K:rlx_reduce_cols_[0-9a-f]+]]_part[4992];
// CHECK-NEXT: __device__ unsigned int [[K]]_count[4];
// CHECK: const long long k_lo = (long long)blockIdx.y * 513LL, k_hi = k_lo + 513LL < 20000LL ? k_lo + 513LL : 20000LL;
// CHECK: for (long long k0 = k_lo + rk; k0 < k_hi; k0 += 128) {
// CHECK: [[K]]_part[at + 3] = acc[3];
// CHECK: __threadfence();
// CHECK: rlx_last = atomicAdd(&[[K]]_count[blockIdx.x], 1u) == 38u;
// CHECK: if (!rlx_last) return;
// CHECK: #pragma unroll 8
// CHECK-NEXT: for (int s = rk; s < 39; s += 32) {
// CHECK: acc[e] = RlxSum()(acc[e], __ldcg(&[[K]]_part[((long long)s * 32LL + r) * 4 + e]));
// CHECK: y[r] = item;
// CHECK: [[K]]_count[blockIdx.x] = 0u;

// A few long rows: the block form splits each row the same way.
// CHECK: // reduce form: block: a block per row of 200000 elements, 8 elements per item, 4 loads in flight per thread, each row split in 6 chunks of 4167 items (grid.y)
// CHECK-NEXT: __device__ float [[R:rlx_reduce_[0-9a-f]+]]_part[18];
// CHECK: rlx_last = atomicAdd(&[[R]]_count[r], 1u) == 5u;
// CHECK: for (int s = threadIdx.x; s < 6; s += 256) acc = RlxMax()(acc, __ldcg(&[[R]]_part[(long long)s * 3LL + r]));

// IR: rlx_cuda.launch @k0 grid [9, 1, 1] block [256, 1, 1]
// IR: rlx_cuda.launch @k1 grid [4, 1, 1] block [256, 1, 1]
// IR: rlx_cuda.launch @k2 grid [4, 39, 1] block [256, 1, 1]
// IR: rlx_cuda.launch @k3 grid [3, 6, 1] block [256, 1, 1]
func.func @main(%x: tensor<3x9000xf32>, %y: tensor<1000x64xf32>, %z: tensor<2x20000x64xf32>, %w: tensor<3x200000xf16>)
    -> (tensor<9000xf32>, tensor<64xf32>, tensor<2x64xf32>, tensor<3xf16>) {
  %a = rlx.reduce_mean %x axes = [0] : tensor<3x9000xf32> -> tensor<9000xf32>
  %b = rlx.reduce_sum %y axes = [0] : tensor<1000x64xf32> -> tensor<64xf32>
  %c = rlx.reduce_sum %z axes = [1] : tensor<2x20000x64xf32> -> tensor<2x64xf32>
  %d = rlx.reduce_max %w axes = [1] : tensor<3x200000xf16> -> tensor<3xf16>
  func.return %a, %b, %c, %d : tensor<9000xf32>, tensor<64xf32>, tensor<2x64xf32>, tensor<3xf16>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=LAUNCH

// bf16 softmax over the middle axis of [4, 8192, 128]: one block cannot hold
// an axis of 8192, so each outer index's 128 rows are cut into groups of 64
// (8 threads of 16 bytes, 8 rows each: a warp reads four runs of 128 bytes)
// spread over 32 blocks of 32 positions x 8 items a thread
// (rows.COLUMN_GRID_VECTORS). 32 blocks a group take the lagged form
// (rows.COLUMN_GRID_VECTOR_LAG): the blocks take tickets in the order they
// start; ticket T folds the (max, sum) of its items' rows in shared memory,
// then the last of each 16 blocks to arrive folds theirs and the last of the
// 2 groups folds the groups' (in order of rank), nobody waiting; then it
// reads the items of ticket T - 264 again (the lag: 2 x 132 blocks; tickets
// 256-263 have nothing to do here), all 8 loads in flight while thread 0
// waits for their rows' statistics, and writes them.
// CHECK: // row form: columns over blocks in 16-byte items (8 threads of 8 rows x 32 positions per block, 32 blocks per 64 rows, 8 items per thread read for the statistics, read again 264 blocks later for the output, met in groups of 16)
// CHECK-NEXT: __device__ unsigned long long [[K:.*]]_ticket = 0;
// CHECK-NEXT: __device__ unsigned long long [[K]]_arrived[512] = {};
// CHECK-NEXT: __device__ RlxMS [[K]]_part0[16384];
// CHECK-NEXT: __device__ RlxMS [[K]]_part1[1024];
// CHECK-NEXT: __device__ RlxMS [[K]]_final[512];
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256, 4)
// CHECK: const long long g_at = (long long)(g_ticket % 520ull);
// CHECK: const unsigned long long g_launch = g_ticket / 520ull;
// CHECK: if (g_at < 256) {
// CHECK: const long long base = (g / 2) * 1048576LL + (g % 2) * 64 + threadIdx.x * 8 + at * 128LL;
// CHECK: { q[7] = *reinterpret_cast<const uint4*>(x + base + 28672LL); }
// CHECK: m[7] = rlx_maxf(m[7], p7_3.y);
// CHECK: s[7] += rlx_ex2f((p7_3.y - m[7]) * 1.44269504f);
// CHECK: if (threadIdx.y % 4 == 0) red[(threadIdx.y / 4 * 8 + e) * 8 + threadIdx.x] = st;
// CHECK: const unsigned long long n = atomicAdd(&[[K]]_arrived[(g * 2 + sub) * 16], 1ull);
// CHECK: g_last = atomicAdd(&[[K]]_arrived[(16 + g) * 16], 1ull) % 2 == 1;
// CHECK: if (t == 0) atomicAdd(&[[K]]_arrived[(24 + g) * 16], 1ull);
// CHECK-NOT: rlx_wait_count
// CHECK: if (g_at >= 264) {
// CHECK: const long long g = (g_at - 264) / 32;
// CHECK: { q[7] = __ldcs(reinterpret_cast<const uint4*>(x + base + 28672LL)); }
// CHECK-NEXT: if (t == 0)
// CHECK-NEXT: rlx_wait_count(&[[K]]_arrived[(24 + g) * 16], g_launch + 1ull, 64);
// CHECK: __stcs(reinterpret_cast<uint4*>(y + base + 28672LL), make_uint4(rlx_st2_bf16(
// The blocks wait only for blocks that started before them: no co-residency.
// LAUNCH-NOT: rlx.co_resident
// LAUNCH: rlx_cuda.launch @k0 grid [520, 1, 1] block [8, 32, 1]

func.func @main(%x: tensor<4x8192x128xbf16>) -> tensor<4x8192x128xbf16> {
  %a = rlx.softmax %x axis = 1 : tensor<4x8192x128xbf16>
  func.return %a : tensor<4x8192x128xbf16>
}

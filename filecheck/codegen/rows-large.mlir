// RUN: rlxc-opt %s -p 'rlx-cuda{arch=sm_80}' -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=SM90

// The row form follows the row's length (rlxc/codegen/rows.py, ROW_FORMS):
// a block per row up to 16384 elements (on sm_90 softmax further, below; past 8192 in up to 512 threads of
// 32 elements), the row in registers, 16 bytes per access where the length
// allows (4096 = 256 threads x 4 x 4):
// CHECK: // row form: block (256 threads per row, 4 elements per access, 16 per thread)
// CHECK: union { uint4 raw; float e[4]; } pk; pk.raw = reinterpret_cast<const uint4*>(x + base)[c * 256 + threadIdx.x];
// Longer rows up to 160 KB, on parts without thread-block clusters (sm_80):
// a block of 1024 threads, the row cached in dynamic shared memory (one
// read from global memory):
// (20000 is no multiple of 1024 x 2: one element per access, guarded, never
// past the row):
// The shared row is thread-major (element j of thread l at j * 1024 + l):
// consecutive threads, consecutive banks.
// CHECK: // row form: smem (80000 bytes of shared memory as f32, 1024 threads per row, one element per access, 20 per thread)
// CHECK: extern __shared__ __align__(16) float srow[];
// CHECK: if (k < 20000LL) srow[(j) * 1024 + threadIdx.x] = x[base + k];
// CHECK: m = rlx_maxf(m, srow[(j) * 1024 + threadIdx.x]);
// CHECK: // row form: smem (80004 bytes of shared memory as f32, 1024 threads per row, one element per access, 20 per thread)
// Longer still (50000 f32 = 1563 threads of 128 bytes): the grid form, the
// row over 4 blocks that meet through global memory; each block takes its
// (row, part) from a ticket, its block's (max, sum) goes to a slot per part,
// the row's arrivals are counted and waited for, the slots folded in order:
// CHECK: // row form: grid (4 blocks of 416 threads per row, 1664 threads per row, 4 elements per access, 32 per thread)
// CHECK-NEXT: __device__ unsigned long long [[K:rlx_softmax_[0-9a-f]+]]_ticket = 0;
// CHECK-NEXT: __device__ unsigned long long [[K]]_arrived[32] = {};
// CHECK-NEXT: __device__ RlxMS [[K]]_part0[8];
// CHECK: if (threadIdx.x == 0) g_ticket = atomicAdd(&[[K]]_ticket, 1ull);
// CHECK: const long long g_at = (long long)(g_ticket % 8ull);
// CHECK-NEXT: const int rank = (int)(g_at % 4);
// CHECK-NEXT: const int lane = rank * 416 + threadIdx.x;
// CHECK-NEXT: const long long r = g_at / 4;
// CHECK: const RlxMS st = rlx_grid_reduce<4>(RlxMS{m, s}, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem, [[K]]_part0 + r * 4, [[K]]_arrived + r * 16, rank);
// A non-trailing axis: the looping form, element by element.
// On sm_90 softmax keeps the block form further (rows.block_row_max: f32
// rows up to 30720 elements in up to 960 threads, f16/bf16 rows up to
// 22528 in up to 704), so 20000 f32 takes 640 threads of 32 elements:
// SM90: // row form: block (256 threads per row, 4 elements per access, 16 per thread)
// SM90: // row form: block (640 threads per row, 4 elements per access, 32 per thread)
// SM90-NEXT: extern "C" __global__ void __launch_bounds__(640)
// SM90: if ((long long)(c * 640 + threadIdx.x) * 4 < 20000LL) {
// (20001 f32: peeled, the elements before the row's first 16-byte boundary
// and after its last one at a time, one a thread)
// SM90: // row form: block (640 threads per row, 4 elements per access between the row's 16-byte boundaries, the rest one each, 33 per thread)
// SM90: const int h = (int)((4 - (base & 3)) & 3);
// Past it a row is split over the 2-8 blocks of a thread-block cluster (128
// bytes of it per thread, in registers); the first reduction waits on the
// opening arrive (every block of the cluster has started), each then pushes
// its block's value into every block's slot row and folds the slots in
// order after one cluster barrier. 50000 f32 = 1563 threads: 8 blocks of
// 224; 4 divides the row, 1792 x 4 does not: 16 bytes per access, the last
// ones past the row skipped whole:
// SM90: // row form: cluster (8 blocks of 224 threads per row, 1792 threads per row, 4 elements per access, 28 per thread)
// Softmax over the middle axis of [2, 4, 3] (an inner axis of 3): the slab
// form, an outer index's 12 elements in shared memory (a block each: the
// outer indices are fewer than the multiprocessors), read and written in
// order as 16-byte items (12 f32 fill three), 4 threads per column:
// SM90: // row form: columns slab (1 outer indices per block: 1 x 4 x 3 consecutive elements in shared memory, read and written in order, 16-byte items (4 elements); 4 threads per column)
// CHECK: // row form: columns slab (1 outer indices per block
// CHECK: *reinterpret_cast<float4*>(slab + p4 * 4) = f;
// CHECK: m = rlx_group_reduce<4>(m, RlxMax());
// CHECK: const int cb = (p4 * 4 / 12) * 3, r = p4 * 4 % 3;  // an item lies in one outer index
// CHECK: reinterpret_cast<float4*>(y + base)[p4] = make_float4(r0, r1, r2, r3);
// f16 20000: the block form, 8 elements per access:
// SM90: // row form: block (640 threads per row, 8 elements per access, 32 per thread)
// Rows past what the grid form holds (2000000 f32 on sm_80: 62 blocks of 1024
// over 108 / 2), f32 of a length 4 divides: online max and sum in one read,
// then the write, as float4. Two rows would fill two multiprocessors, so each
// is split over 108 / 2 blocks (rows.STREAM_GRID: about 2 blocks per
// multiprocessor in all, at most half the multiprocessors per row) whose
// threads take the row's float4s in turn and meet through global memory as
// the grid form's do:
// CHECK: // row form: float4 (54 blocks of 512 threads per row, read twice)
// CHECK: extern "C" __global__ void __launch_bounds__(512, 2)
// CHECK: const int lane = rank * 512 + threadIdx.x;
// CHECK: for (long long k4 = lane; k4 < 500000LL; k4 += 27648) {
// CHECK-NEXT: const float4 q = reinterpret_cast<const float4*>(x + base)[k4];
// CHECK-NEXT: rlx_ms_add(st, q.x); rlx_ms_add(st, q.y); rlx_ms_add(st, q.z); rlx_ms_add(st, q.w);
// CHECK: st = rlx_grid_reduce<54>(st, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem, [[S:rlx_softmax_[0-9a-f]+]]_part0 + r * 54, [[S]]_arrived + r * 16, rank);
// CHECK: reinterpret_cast<float4*>(y + base)[k4] = make_float4(expf(q.x - m) * inv, expf(q.y - m) * inv, expf(q.z - m) * inv, expf(q.w - m) * inv);
// On sm_90 (132 / 2 blocks) the same row takes the grid form:
// SM90: // row form: grid (62 blocks of 1024 threads per row, 63488 threads per row, 4 elements per access, 32 per thread)
// f32 rows past the block form (32000 = 1000 threads of 128 bytes: 4
// blocks of 256; 16 bytes per access, a thread's accesses past the row's
// end skipped whole, one test per access in each pass):
// SM90: // row form: cluster (4 blocks of 256 threads per row, 1024 threads per row, 4 elements per access, 32 per thread)
// SM90-NEXT: extern "C" __global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(256)
// SM90: __shared__ RlxMS cl_slots0[4];
// SM90-NEXT: rlx_cluster_arrive();
// SM90-NEXT: const int lane = (int)rlx_cluster_rank() * 256 + threadIdx.x;
// SM90-NEXT: const long long r = blockIdx.x / 4;
// SM90: float m = -RLX_INF;
// SM90: if ((long long)(c * 1024 + lane) * 4 < 32000LL) {
// SM90-NEXT: #pragma unroll
// SM90-NEXT: for (int i = 0; i < 4; ++i) { const int j = c * 4 + i; {{.*}} { m = rlx_maxf(m, v[j]); } }
// (each thread's max and the sum of its exponentials from it, merged over the
// cluster in one reduction: rows.MERGED_STATS_CLUSTER)
// SM90: const RlxMS st = rlx_cluster_reduce<4, true>(RlxMS{m, s}, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem, cl_slots0);
// An odd length (32001 f32) takes the windowed form: 16-byte accesses from
// the boundary before each row's start, 64 bytes per thread (8 blocks of
// 256), registers capped at 48 (5 blocks per SM):
// SM90: // row form: cluster (8 blocks of 256 threads per row, 2048 threads per row, 4 elements per access over the row's 16-byte-aligned window, 16 per thread)
// SM90-NEXT: extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(256, 5)
// SM90: const int h = (int)(base & 3);
// 16-bit rows past the block form moved 16 bytes per access (24000 f16: 2
// blocks of 192; aligned rows from 30000 take the stream form): each
// thread's max and sum of exponentials from it, merged over the cluster in
// one reduction of (max, sum) pairs, then each thread's exponentials
// rescaled:
// SM90: // row form: cluster (2 blocks of 192 threads per row, 384 threads per row, 8 elements per access, 64 per thread)
// SM90: __shared__ RlxMS cl_slots0[2];
// SM90-NEXT: rlx_cluster_arrive();
// SM90: m = rlx_maxf(m, v[j]);
// SM90: const float mz = m == -RLX_INF ? 0.0f : m;
// SM90: v[j] = rlx_ex2f((v[j] - mz) * 1.44269504f); s += v[j];
// SM90: const RlxMS st = rlx_cluster_reduce<2, true>(RlxMS{m, s}, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem, cl_slots0);
// SM90-NEXT: const float inv = expf(m - st.m) / st.s, ls = logf(st.s) + (st.m - mz);
// SM90: pk.w[i] = rlx_st2_f16(v[j] * inv, v[j + 1] * inv);
func.func @main(%x: tensor<8x4096xf32>, %y: tensor<2x20000xf32>, %w: tensor<2x20001xf32>, %v: tensor<2x50000xf32>, %z: tensor<2x4x3xf32>, %h: tensor<2x20000xf16>, %u: tensor<2x2000000xf32>, %y2: tensor<2x32000xf32>, %w2: tensor<2x32001xf32>, %h2: tensor<2x24000xf16>) -> (tensor<8x4096xf32>, tensor<2x20000xf32>, tensor<2x20001xf32>, tensor<2x50000xf32>, tensor<2x4x3xf32>, tensor<2x20000xf16>, tensor<2x2000000xf32>, tensor<2x32000xf32>, tensor<2x32001xf32>, tensor<2x24000xf16>) {
  %a = rlx.softmax %x axis = -1 : tensor<8x4096xf32>
  %b = rlx.softmax %y axis = -1 : tensor<2x20000xf32>
  %d = rlx.softmax %w axis = -1 : tensor<2x20001xf32>
  %e = rlx.softmax %v axis = -1 : tensor<2x50000xf32>
  %c = rlx.softmax %z axis = 1 : tensor<2x4x3xf32>
  %f = rlx.softmax %h axis = -1 : tensor<2x20000xf16>
  %g = rlx.softmax %u axis = -1 : tensor<2x2000000xf32>
  %b2 = rlx.softmax %y2 axis = -1 : tensor<2x32000xf32>
  %d2 = rlx.softmax %w2 axis = -1 : tensor<2x32001xf32>
  %f2 = rlx.softmax %h2 axis = -1 : tensor<2x24000xf16>
  func.return %a, %b, %d, %e, %c, %f, %g, %b2, %d2, %f2 : tensor<8x4096xf32>, tensor<2x20000xf32>, tensor<2x20001xf32>, tensor<2x50000xf32>, tensor<2x4x3xf32>, tensor<2x20000xf16>, tensor<2x2000000xf32>, tensor<2x32000xf32>, tensor<2x32001xf32>, tensor<2x24000xf16>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=LAUNCH

// Softmax over a non-contiguous axis (channels of [n, c, h, w], or axis -2)
// with enough rows (positions of the kept axes): the columns form. A block
// is 256 / Y consecutive rows (threadIdx.x: neighbouring elements, so a warp's
// reads are coalesced) x Y slices of the reduced axis (threadIdx.y); threads
// past the last row take the last row, so every thread meets the barrier.
// Short slices (here 3 of 21 channels) are held in registers: the row is read
// once, the max and the exponentials' sum come from the registers, and the
// slices' (max, sum) pairs meet in shared memory, folded in slice order by
// threads y == 0, the max first (rlx_column_ms_reduce).
// CHECK: // row form: columns (32 rows x 8 slices of the reduced axis per block, 3 elements per slice held in registers)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256)
// CHECK: __shared__ RlxMS col_slots0[256];
// CHECK-NEXT: const long long r = min((long long)blockIdx.x * 32 + threadIdx.x, 8191LL);
// CHECK-NEXT: const long long base = (r / 4096LL) * 86016LL + ((r / 64LL) % 64LL) * 64LL + (r % 64LL);
// CHECK-NEXT: float v[3];  // this thread's slice, in registers
// 8 slices do not divide 21: only a slice's last element is guarded.
// CHECK: for (int j = 0; j < 2; ++j) { const long long k = threadIdx.y + j * 8; { const long long o = base + (k * 4096LL); v[j] = rlx_ld_f16(x[o]); } }
// CHECK-NEXT: { const int j = 2; const long long k = threadIdx.y + j * 8; if (k < 21LL) { const long long o = base + (k * 4096LL); v[j] = rlx_ld_f16(x[o]); } }
// f16 results: the exponentials as approximate 2^x (rows.CACHED_APPROX).
// CHECK: for (int j = 0; j < 2; ++j) { v[j] = rlx_ex2f((v[j] - mz) * 1.44269504f); s += v[j]; }
// CHECK-NEXT: { const int j = 2; const long long k = threadIdx.y + j * 8; if (k < 21LL) { v[j] = rlx_ex2f((v[j] - mz) * 1.44269504f); s += v[j]; } }
// CHECK-NEXT: const RlxMS st = rlx_column_ms_reduce<8, 1, 1>(RlxMSN<1>{{[{][{]}}RlxMS{m, s}{{[}][}]}}, col_slots0, nullptr, nullptr, 0).a[0];
// CHECK: y[o] = rlx_st_f16(v[j] * inv);
// An axis of 4 elements: 4 slices of one, 64 rows per block; no guard (4 divides 4).
// CHECK: // row form: columns (64 rows x 4 slices of the reduced axis per block, 1 element per slice held in registers)
// CHECK: for (int j = 0; j < 1; ++j) { v[j] = v[j] - mz; s += expf(v[j]); }
// CHECK: rlx_column_ms_reduce<4, 1, 1>(
// An f16 axis of 1000 over 8192 rows: the packed columns form
// (rows.COLUMN_PACKED). A thread takes 2 neighbouring rows as one 4-byte item
// per element of its slice (32 threads: a 128-byte run of the inner axis),
// held raw in registers; a group of 64 rows' 32 slices is spread over 4
// blocks of 8. A block takes its group of rows and its rank from a ticket.
// The max, then the exponentials' sum come from the registers; the two rows'
// (max, sum) pairs meet over the block in shared memory (threads y < 2 fold a
// row each, the max first), then over the group's 4 blocks through global
// slots and an arrival counter; the output's exponential is taken again from
// the registers, less the row's max.
// CHECK: // row form: packed columns (32 threads of 2 rows x 8 slices of the reduced axis per block, 4 blocks per 64 rows, 32 items of 4 bytes per slice held in registers)
// CHECK-NEXT: __device__ unsigned long long [[K:.*]]_ticket = 0;
// CHECK-NEXT: __device__ unsigned long long [[K]]_arrived[2048] = {};
// CHECK-NEXT: __device__ RlxMS [[K]]_part0[32768];
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256, 4)
// CHECK: if (threadIdx.x == 0 && threadIdx.y == 0) g_ticket = atomicAdd(&[[K]]_ticket, 1ull);
// CHECK: const long long g_at = (long long)(g_ticket % 512ull);
// CHECK-NEXT: const int rank = (int)(g_at % 4);
// CHECK-NEXT: const long long g = g_at / 4;
// CHECK-NEXT: const int sl = rank * 8 + threadIdx.y;  // this thread's slice, of 32
// CHECK-NEXT: const long long r = min(g * 32 + threadIdx.x, 4095LL) * 2;
// CHECK: unsigned int q[32];  // this thread's slice of its 2 rows, in registers as loaded
// CHECK: for (int j = 0; j < 31; ++j) { const long long k = sl + j * 32; { const long long o = base + (k * 4096LL); q[j] = *reinterpret_cast<const unsigned int*>(x + o); } }
// CHECK: const RlxMSN<2> st = rlx_column_ms_reduce<8, 4, 2>(RlxMSN<2>{{[{][{]}}RlxMS{m0, s0}, RlxMS{m1, s1}{{[}][}]}}, col_slots, [[K]]_part0 + g * 256, [[K]]_arrived + g * 16, rank);
// CHECK: { const int j = 31; const long long k = sl + j * 32; if (k < 1000LL) { const long long o = base + (k * 4096LL); const float2 u0 = rlx_ld2v_f16(q[j]); *reinterpret_cast<unsigned int*>(y + o) = rlx_st2_f16(rlx_ex2f((u0.x - mr0) * 1.44269504f) * inv0, rlx_ex2f((u0.y - mr1) * 1.44269504f) * inv1); } }
// Too few rows (384) to fill the GPU this way: the looping form, a block per row.
// CHECK: // row form: looping
// CHECK: for (long long k = threadIdx.x; k < 100LL; k += blockDim.x) { const long long o = base + (k * 128LL);
// A short inner axis 16 does not divide (40): a block takes all of it and 6
// slices, so thread (x, y) reads element k * 40 + x and a block's reads at
// each step are one run of 240 consecutive elements (rows of 32 consecutive
// ones would straddle the inner axis's ends).
// CHECK: // row form: columns (40 rows (all of the inner axis: one read of consecutive elements) x 6 slices of the reduced axis per block, 17 elements per slice held in registers)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(240)
// CHECK: const long long r = min((long long)blockIdx.x * 40 + threadIdx.x, 119LL);
// LAUNCH: rlx_cuda.kernel @k2 {{.*}} {rlx.co_resident = 4 : i64}
// LAUNCH: %a = rlx_cuda.launch @k0 grid [256, 1, 1] block [32, 8, 1]
// LAUNCH: %b = rlx_cuda.launch @k1 grid [128, 1, 1] block [64, 4, 1]
// LAUNCH: %c = rlx_cuda.launch @k2 grid [512, 1, 1] block [32, 8, 1]
// LAUNCH: %d = rlx_cuda.launch @k3 grid [384, 1, 1] block [256, 1, 1]
// LAUNCH: %e = rlx_cuda.launch @k4 grid [3, 1, 1] block [40, 6, 1]
func.func @main(%x: tensor<2x21x64x64xf16>, %w: tensor<8x4x1024xf32>, %v: tensor<2x1000x4096xf16>, %y: tensor<3x100x128xf32>, %z: tensor<3x100x40xf32>) -> (tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<2x1000x4096xf16>, tensor<3x100x128xf32>, tensor<3x100x40xf32>) {
  %a = rlx.softmax %x axis = 1 : tensor<2x21x64x64xf16>
  %b = rlx.log_softmax %w axis = 1 : tensor<8x4x1024xf32>
  %c = rlx.softmax %v axis = 1 : tensor<2x1000x4096xf16>
  %d = rlx.log_softmax %y axis = 1 : tensor<3x100x128xf32>
  %e = rlx.softmax %z axis = 1 : tensor<3x100x40xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<2x1000x4096xf16>, tensor<3x100x128xf32>, tensor<3x100x40xf32>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=LAUNCH

// Softmax over a non-contiguous axis (channels of [n, c, h, w], or axis -2)
// with enough rows (positions of the kept axes): the columns form. A block
// is 256 / Y consecutive rows (threadIdx.x: neighbouring elements, so a warp's
// reads are coalesced) x Y slices of the reduced axis (threadIdx.y); threads
// past the last row take the last row, so every thread meets the barrier.
// Short slices (here 3 of 21 channels) are held in registers: the row is read
// once, the max and the exponentials' sum come from the registers, and the
// slices' (max, sum) pairs are merged in shared memory in slice order.
// CHECK: // row form: columns (32 rows x 8 slices of the reduced axis per block, 3 elements per slice held in registers)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256)
// CHECK: __shared__ RlxMS col_slots0[256];
// CHECK-NEXT: const long long r = min((long long)blockIdx.x * 32 + threadIdx.x, 8191LL);
// CHECK-NEXT: const long long base = (r / 4096LL) * 86016LL + ((r / 64LL) % 64LL) * 64LL + (r % 64LL);
// CHECK-NEXT: float v[3];  // this thread's slice, in registers
// CHECK: for (int j = 0; j < 3; ++j) { const long long k = threadIdx.y + j * 8; if (k < 21LL) { const long long o = base + (k * 4096LL); v[j] = rlx_ld_f16(x[o]); } }
// CHECK: for (int j = 0; j < 3; ++j) { const long long k = threadIdx.y + j * 8; if (k < 21LL) { v[j] = expf(v[j] - mz); s += v[j]; } }
// CHECK-NEXT: const RlxMS st = rlx_column_reduce<8>(RlxMS{m, s}, RlxMSMerge(), col_slots0);
// CHECK: y[o] = rlx_st_f16(v[j] * inv);
// An axis of 4 elements: 4 slices of one, 64 rows per block; no guard (4 divides 4).
// CHECK: // row form: columns (64 rows x 4 slices of the reduced axis per block, 1 element per slice held in registers)
// CHECK: for (int j = 0; j < 1; ++j) { v[j] = v[j] - mz; s += expf(v[j]); }
// CHECK: rlx_column_reduce<4>(
// An f16 axis of 1000 over 8192 rows: slices of 63 are too long to hold, so the
// row is read twice (online statistics, then the output), 4 loads in flight.
// CHECK: // row form: columns (16 rows x 16 slices of the reduced axis per block, an element at a time)
// CHECK: for (long long k0 = threadIdx.y; k0 < 1000LL; k0 += 4 * 16) {  // 4 loads in flight
// CHECK: if (k < 1000LL) { const float v = vs[j]; rlx_ms_add(st, v); } }
// CHECK: st = rlx_column_reduce<16>(st, RlxMSMerge(), col_slots0);
// CHECK: for (long long k0 = threadIdx.y; k0 < 1000LL; k0 += 4 * 16) {  // 4 loads in flight
// CHECK: { const long long o = base + (k * 4096LL); const float v = vs[j]; y[o] = rlx_st_f16(expf(v - m) * inv); } }
// Too few rows (120) to fill the GPU this way: the looping form, a block per row.
// CHECK: // row form: looping
// CHECK: for (long long k = threadIdx.x; k < 100LL; k += blockDim.x) { const long long o = base + (k * 40LL);
// LAUNCH: %a = rlx_cuda.launch @k0 grid [256, 1, 1] block [32, 8, 1]
// LAUNCH: %b = rlx_cuda.launch @k1 grid [128, 1, 1] block [64, 4, 1]
// LAUNCH: %c = rlx_cuda.launch @k2 grid [512, 1, 1] block [16, 16, 1]
// LAUNCH: %d = rlx_cuda.launch @k3 grid [120, 1, 1] block [256, 1, 1]
func.func @main(%x: tensor<2x21x64x64xf16>, %w: tensor<8x4x1024xf32>, %v: tensor<2x1000x4096xf16>, %y: tensor<3x100x40xf32>) -> (tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<2x1000x4096xf16>, tensor<3x100x40xf32>) {
  %a = rlx.softmax %x axis = 1 : tensor<2x21x64x64xf16>
  %b = rlx.log_softmax %w axis = 1 : tensor<8x4x1024xf32>
  %c = rlx.softmax %v axis = 1 : tensor<2x1000x4096xf16>
  %d = rlx.log_softmax %y axis = 1 : tensor<3x100x40xf32>
  func.return %a, %b, %c, %d : tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<2x1000x4096xf16>, tensor<3x100x40xf32>
}

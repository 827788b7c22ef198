// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=LAUNCH

// Softmax over a non-contiguous axis (channels of [n, c, h, w], or axis -2)
// with enough rows (positions of the kept axes): the columns form. A block
// is 256 / Y consecutive rows (threadIdx.x: neighbouring elements, so a warp's
// reads are coalesced) x Y = 8 slices of the reduced axis (threadIdx.y), the
// slices' online (max, sum) merged in shared memory in slice order; threads
// past the last row take the last row, so every thread meets the barrier.
// CHECK: // row form: columns (32 rows x 8 slices of the reduced axis per block, an element at a time)
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256)
// CHECK: __shared__ RlxMS col_slots0[256];
// CHECK-NEXT: const long long r = min((long long)blockIdx.x * 32 + threadIdx.x, 8191LL);
// CHECK-NEXT: const long long base = (r / 4096LL) * 86016LL + ((r / 64LL) % 64LL) * 64LL + (r % 64LL);
// The statistics' read: slices of at most 32 elements issue 4 loads before folding them in.
// CHECK: for (long long k0 = threadIdx.y; k0 < 21LL; k0 += 4 * 8) {  // 4 loads in flight
// CHECK: for (int j = 0; j < 4; ++j) { const long long k = k0 + j * 8; if (k < 21LL) { const long long o = base + (k * 4096LL); vs[j] = rlx_ld_f16(x[o]); } }
// CHECK: for (int j = 0; j < 4; ++j) { const long long k = k0 + j * 8; if (k < 21LL) { const float v = vs[j]; rlx_ms_add(st, v); } }
// CHECK: st = rlx_column_reduce<8>(st, RlxMSMerge(), col_slots0);
// CHECK: for (long long k = threadIdx.y; k < 21LL; k += 8) { const long long o = base + (k * 4096LL); const float v = rlx_ld_f16(x[o]); y[o] = rlx_st_f16(expf(v - m) * inv); }
// An axis of 4 elements: 4 slices, 64 rows per block.
// CHECK: // row form: columns (64 rows x 4 slices of the reduced axis per block, an element at a time)
// CHECK: rlx_column_reduce<4>(
// Too few rows (120) to fill the GPU this way: the looping form, a block per row.
// CHECK: // row form: looping
// CHECK: for (long long k = threadIdx.x; k < 100LL; k += blockDim.x) { const long long o = base + (k * 40LL);
// LAUNCH: %a = rlx_cuda.launch @k0 grid [256, 1, 1] block [32, 8, 1]
// LAUNCH: %b = rlx_cuda.launch @k1 grid [128, 1, 1] block [64, 4, 1]
// LAUNCH: %c = rlx_cuda.launch @k2 grid [120, 1, 1] block [256, 1, 1]
func.func @main(%x: tensor<2x21x64x64xf16>, %w: tensor<8x4x1024xf32>, %y: tensor<3x100x40xf32>) -> (tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<3x100x40xf32>) {
  %a = rlx.softmax %x axis = 1 : tensor<2x21x64x64xf16>
  %b = rlx.log_softmax %w axis = 1 : tensor<8x4x1024xf32>
  %c = rlx.log_softmax %y axis = 1 : tensor<3x100x40xf32>
  func.return %a, %b, %c : tensor<2x21x64x64xf16>, tensor<8x4x1024xf32>, tensor<3x100x40xf32>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Warp-form f16/bf16 rows of odd lengths (here 1001: one element per
// access) are staged through shared memory (rows.WARP_STAGED): a block's
// 8 rows (a row per warp: a span of about WARP_STAGE_BYTES takes more
// rows a warp where rows are shorter) are one span of 8 x 1001 halves
// starting on a 16-byte boundary, copied in with 16-byte loads (all in
// flight before the first store to shared memory), worked on there by the
// block's warps (`x` and `y` point at the stage), and copied out with
// 16-byte stores; a last block of fewer rows (1000 = 125 x 8 + 0 here, so
// only the guard) copies the elements past its whole 16 bytes one at a time.
// CHECK: // row form: warp (32 threads per row, one element per access, 32 per thread, staged: the block's 8 rows through shared memory, 16-byte copies)
// CHECK-NEXT: __launch_bounds__(256) rlx_norm_{{[0-9a-f]+}}(const unsigned short* __restrict__ x_, const unsigned short* __restrict__ g, const unsigned short* __restrict__ b, unsigned short* __restrict__ y_)
// CHECK: __shared__ __align__(16) unsigned short stage[8008];
// CHECK-NEXT: const long long r0 = (long long)blockIdx.x * 8;
// CHECK-NEXT: const int stage_n = (int)(r0 + 8 <= 1000LL ? 8008LL : (1000LL - r0) * 1001LL);
// CHECK: const uint4* __restrict__ s4 = reinterpret_cast<const uint4*>(x_ + r0 * 1001LL);
// CHECK: uint4 t[4];
// CHECK: if (i < stage_nv) t[j] = s4[i];
// CHECK: if (i < stage_nv) d4[i] = t[j];
// CHECK: __syncthreads();
// CHECK: const unsigned short* x = stage;
// CHECK-NEXT: unsigned short* y = stage;
// CHECK: for (int u = threadIdx.x / 32; u < 8; u += 8) {  // the group's rows
// CHECK: const long long base = (long long)u * 1001LL;
// CHECK: y[base + k] = rlx_st_f16(
// CHECK: __syncthreads();
// CHECK: uint4* __restrict__ d4 = reinterpret_cast<uint4*>(y_ + r0 * 1001LL);
// CHECK: if (i < stage_nv) d4[i] = s4[i];

// Rows of 16-byte accesses (f16 rows of 1000) are not staged:
// CHECK: // row form: warp (32 threads per row, 8 elements per access,
// CHECK-NOT: staged
// CHECK: extern
func.func @main(%x: tensor<1000x1001xf16>, %g: tensor<1001xf16>, %b: tensor<1001xf16>, %w: tensor<1000x1000xf16>) -> (tensor<1000x1001xf16>, tensor<1000x1000xf16>) {
  %y = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<1000x1001xf16>, tensor<1001xf16>
  %z = rlx.softmax %w axis = -1 : tensor<1000x1000xf16>
  func.return %y, %z : tensor<1000x1001xf16>, tensor<1000x1000xf16>
}

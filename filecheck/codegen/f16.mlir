// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// f16 and bf16 are stored as 16-bit patterns, computed in float and rounded
// to their type after every op (a value that is only stored is rounded by
// the store alone); no CUDA header is needed. 7 elements, fewer than a
// vector of 8: the scalar form, single elements, 2 per thread.
// CHECK: __device__ __forceinline__ float rlx_ld_f16(unsigned short h)
// CHECK: unsigned short rlx_st_bf16(float f)
// CHECK: // elementwise form: scalar: one element per access, 2 trips per thread, 128 threads a block
// CHECK: (const unsigned short* __restrict__ in0, unsigned short* __restrict__ out0)
// CHECK: p0[u] = in0[w];
// CHECK: if (w >= 7u) break;
// CHECK: const float a0 = rlx_ld_f16(p0[u]);
// CHECK: const float v0 = rlx_round_f16(expf(a0));
// CHECK: out0[w] = rlx_st_bf16(
func.func @main(%x: tensor<7xf16>) -> tensor<7xbf16> {
  %e = rlx.exp %x : tensor<7xf16>
  %c = rlx.cast %e : tensor<7xf16> -> tensor<7xbf16>
  func.return %c : tensor<7xbf16>
}

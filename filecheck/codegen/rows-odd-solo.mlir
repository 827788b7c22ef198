// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// f16/bf16 rows of odd length from 32 elements up to 176 bytes (rows of
// 33-87: one element an access, over 4-16 lanes otherwise) are staged a
// thread a row (rows.WARP_STAGED_ODD_SOLO): the block copies its 128 rows
// (9856 halves) into shared memory with 16-byte loads, each thread takes
// one row there with no shuffles, and the block copies them back.
// CHECK: // row form: warp (a thread per row, one element per access, 77 per thread, 32 rows per warp, staged: the block's 128 rows through shared memory, 16-byte copies)
// CHECK-NEXT: rlx_softmax_
// CHECK: __shared__ __align__(16) unsigned short stage[9856];
// CHECK: for (int u = threadIdx.x / 1; u < 128; u += 128) {  // the group's rows
// CHECK: const long long base = (long long)u * 77LL;
// CHECK: float v[77];

// layer_norm takes the same form, its params read from global memory 16
// bytes at a time (rows.WARP_SOLO_VECTOR_PARAMS): 10 reads of each, the
// elements past 77 not written.
// CHECK: // row form: warp (a thread per row, one element per access, 77 per thread, 32 rows per warp, staged: the block's 128 rows through shared memory, 16-byte copies)
// CHECK-NEXT: rlx_norm_
// CHECK: for (int c = 0; c < 10; ++c) {
// CHECK-NEXT: union { uint4 raw; unsigned short e[8]; } pc_g; pc_g.raw = __ldg(reinterpret_cast<const uint4*>(g) + c);
// CHECK-NEXT: union { uint4 raw; unsigned short e[8]; } pc_b; pc_b.raw = __ldg(reinterpret_cast<const uint4*>(b) + c);
// CHECK: for (int i = 0; i < 8; ++i) { const int j = c * 8 + i; const long long k = j; if (j < 77) y[base + k] = rlx_st_f16(v[j] * inv * rlx_ld_f16(pc_g.e[i]) + rlx_ld_f16(pc_b.e[i])); }

// Rows of 89 (178 bytes) keep their lanes.
// CHECK: // row form: warp (16 threads per row, one element per access, 6 per thread, 2 rows per warp, 4 rows per group)
func.func @main(%x: tensor<1000x77xf16>, %g: tensor<77xf16>, %b: tensor<77xf16>, %w: tensor<500x89xbf16>)
    -> (tensor<1000x77xf16>, tensor<1000x77xf16>, tensor<500x89xbf16>) {
  %s = rlx.softmax %x axis = -1 : tensor<1000x77xf16>
  %n = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<1000x77xf16>, tensor<77xf16>
  %t = rlx.softmax %w axis = -1 : tensor<500x89xbf16>
  func.return %s, %n, %t : tensor<1000x77xf16>, tensor<1000x77xf16>, tensor<500x89xbf16>
}

// RUN: rlxc-opt %s -p "rlx-cuda{arch=sm_90 sm_count=132}" -t cuda-source | filecheck %s

// f16 softmax over rows of 32768 (8 divides, 64 KB) takes the stream form:
// a block of 1024 threads per row (2 per multiprocessor), the row read twice
// with 2 16-byte loads in flight per thread, the online (max, sum) of 8
// elements at a time with approximate 2^x, the output from the second read:
// CHECK: // row form: stream (a block of 1024 threads per row, read twice, 8 elements per access, 2 loads in flight per thread)
// CHECK-NEXT: __launch_bounds__(1024, 2)
// CHECK: for (int k0 = threadIdx.x; k0 < 4096; k0 += 2 * blockDim.x) {  // 2 loads in flight
// CHECK: uint4 pv[2];
// CHECK: rlx_ms_add_n_afn(st, {f0.x, f0.y, f1.x, f1.y, f2.x, f2.y, f3.x, f3.y});
// CHECK: st = rlx_block_reduce(st, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem);
// (x - max first: a rounded max * log2e would shift every exponent of a row
// masked with -1e9 by up to 64)
// CHECK: const float m = st.m, ls = logf(st.s), inv = 1.0f / st.s;
// CHECK: reinterpret_cast<uint4*>(y + base)[k8] = make_uint4(rlx_st2_f16(rlx_ex2f((f0.x - m) * 1.44269504f) * inv
// log_softmax: the same reads, the output (x - m) - log(s):
// CHECK: // row form: stream
// CHECK: rlx_st2_bf16((f0.x - m) - ls
// Rows of 16384 (under STREAM_ROW_MIN) take the block form (rows.BLOCK_ROW_MAX:
// 512 threads of 32 elements):
// CHECK: // row form: block (512 threads per row
// Rows of 32001 (8 does not divide) go through their 16-byte-aligned
// windows: the window's first and last accesses (threads 0 and 1) masked
// and written an element at a time, the accesses between as above:
// CHECK: // row form: stream
// CHECK: const int h = (int)(base & 7);
// CHECK-NEXT: const int nb = (h + 32001 + 7) / 8;
// CHECK: if (threadIdx.x < 2) {  // the window's first and last accesses
// CHECK: rlx_ms_add_n_afn(st, {((unsigned)(k8 * 8 + 0 - h) < 32001u ? f0.x : -RLX_INF),
// CHECK: for (int k0 = threadIdx.x + 1; k0 < nb - 1; k0 += 2 * blockDim.x) {
// CHECK: rlx_ms_add_n_afn(st, {f0.x, f0.y, f1.x, f1.y, f2.x, f2.y, f3.x, f3.y});
// CHECK: if ((unsigned)(k8 * 8 + 7 - h) < 32001u) y[base - h + k8 * 8 + 7] = rlx_st_f16(
// CHECK: reinterpret_cast<uint4*>(y + (base - h))[k8] = make_uint4(
// f32 rows keep the cluster form:
// CHECK: // row form: cluster
func.func @main(%x: tensor<4x32768xf16>, %y: tensor<4x32768xbf16>, %z: tensor<4x16384xf16>, %w: tensor<4x32001xf16>, %v: tensor<4x32768xf32>) -> (tensor<4x32768xf16>, tensor<4x32768xbf16>, tensor<4x16384xf16>, tensor<4x32001xf16>, tensor<4x32768xf32>) {
  %a = rlx.softmax %x axis = 1 : tensor<4x32768xf16>
  %b = rlx.log_softmax %y axis = 1 : tensor<4x32768xbf16>
  %c = rlx.softmax %z axis = 1 : tensor<4x16384xf16>
  %d = rlx.softmax %w axis = 1 : tensor<4x32001xf16>
  %e = rlx.softmax %v axis = 1 : tensor<4x32768xf32>
  func.return %a, %b, %c, %d, %e : tensor<4x32768xf16>, tensor<4x32768xbf16>, tensor<4x16384xf16>, tensor<4x32001xf16>, tensor<4x32768xf32>
}

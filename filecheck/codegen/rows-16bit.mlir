// RUN: rlxc-opt %s -p 'rlx-cuda{arch=sm_80}' -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=SM90

// f16/bf16 norm rows in the shared-memory form (sm_80) are kept as themselves (half
// the bytes of f32: two 1024-thread blocks per SM), so the statistics leave
// them unchanged: the variance recomputes x - mean, as does the output.
// CHECK: // row form: smem (65536 bytes of shared memory as f16, 1024 threads per row, 8 elements per access, 32 per thread)
// CHECK: extern __shared__ __align__(16) unsigned short srow[];
// CHECK: srow[(j) * 1024 + threadIdx.x] = pk.e[i];
// CHECK: s += rlx_ld_f16(srow[(j) * 1024 + threadIdx.x]);
// CHECK: const float d_ = rlx_ld_f16(srow[(j) * 1024 + threadIdx.x]) - mean; q += d_ * d_;
// CHECK: pk.w[i] = rlx_st2_f16((rlx_ld_f16(srow[(j) * 1024 + threadIdx.x]) - mean) * inv *
// Softmax keeps an f32 row: its statistics store exp(x - m) in place.
// On sm_90 layer_norm takes the cluster form: 32768 halves over 2 blocks of 256
// threads, 64 per thread in registers, 16 bytes per access. The norm keeps
// its row in registers as halves too (32 registers, not 64; at most 64 in
// all, 4 blocks per SM), converted again in every pass: an empty asm
// between passes marks the registers changed, so the compiler cannot keep
// the first pass's floats live instead. The halves are held two per 32-bit
// register, as loaded (32 registers of row, not 64 of 16 bits: bf16 rows
// needed more). Gamma and beta are read as 16-byte vectors beside the
// output's:
// SM90: // row form: cluster (2 blocks of 256 threads per row, 512 threads per row, 8 elements per access, 64 per thread)
// SM90-NEXT: extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(256, 4)
// SM90: unsigned int v[32] = {};
// SM90: for (int i = 0; i < 4; ++i) v[c * 4 + i] = pk.w[i];
// SM90: s += rlx_half_f16(v[(j) >> 1], (j) & 1);
// SM90: for (int j = 0; j < 32; ++j) asm volatile("" : "+r"(v[j]));
// SM90-NEXT: float q = 0.0f;
// SM90: const float d_ = rlx_half_f16(v[(j) >> 1], (j) & 1) - mean; q += d_ * d_;
// SM90: for (int j = 0; j < 32; ++j) asm volatile("" : "+r"(v[j]));
// SM90: union { uint4 raw; unsigned short e[8]; unsigned int w[4]; } pc_g; pc_g.raw = reinterpret_cast<const uint4*>(g + 0)[c * 512 + lane];
// SM90-NEXT: union { uint4 raw; unsigned short e[8]; unsigned int w[4]; } pc_b; pc_b.raw = reinterpret_cast<const uint4*>(b + 0)[c * 512 + lane];
// (two elements rounded per instruction, rlx_st2_f16: cvt.rn.f16x2.f32)
// SM90: pk.w[i] = rlx_st2_f16((rlx_half_f16(v[(j) >> 1], (j) & 1) - mean) * inv * rlx_ld_f16(pc_g.e[2 * i]) + rlx_ld_f16(pc_b.e[2 * i]), (rlx_half_f16(v[(j + 1) >> 1], (j + 1) & 1) - mean) * inv * rlx_ld_f16(pc_g.e[2 * i + 1]) + rlx_ld_f16(pc_b.e[2 * i + 1]));
// Softmax takes the stream form there (rows.STREAM_ROWS: no row in
// registers, read twice, the second read from L2):
// SM90: // row form: stream (a block of 1024 threads per row, read twice, 8 elements per access, 2 loads in flight per thread)
// SM90-NEXT: extern "C" __global__ void __launch_bounds__(1024, 2)
// CHECK: // row form: smem (131072 bytes of shared memory as f32, 1024 threads per row, 8 elements per access, 32 per thread)
// CHECK: extern __shared__ __align__(16) float srow[];
// A row of 32000 halves (a vocabulary): 8 divides it, 512 x 8 does not. In
// registers (sm_90) it still moves 16 bytes per access, each thread's
// accesses past the row's end skipped whole (registers set to 0, left out
// of the statistics by one test per access); the shared row (sm_80) has
// room for whole rounds only, so there it moves an element at a time.
// SM90: // row form: cluster (2 blocks of 256 threads per row, 512 threads per row, 8 elements per access, 64 per thread)
// SM90: if ((long long)(c * 512 + lane) * 8 < 32000LL) {
// SM90-NEXT: union { uint4 raw; unsigned short e[8]; unsigned int w[4]; } pk; pk.raw = reinterpret_cast<const uint4*>(x + base)[c * 512 + lane];
// SM90: } else {
// SM90-NEXT: #pragma unroll
// SM90-NEXT: for (int i = 0; i < 4; ++i) v[c * 4 + i] = 0u;
// SM90: if ((long long)(c * 512 + lane) * 8 < 32000LL) {
// SM90-NEXT: #pragma unroll
// SM90-NEXT: for (int i = 0; i < 8; ++i) { const int j = c * 8 + i; {{.*}} { s += rlx_half_f16(v[(j) >> 1], (j) & 1); } }
// SM90: if ((long long)(c * 512 + lane) * 8 < 32000LL) {
// SM90: reinterpret_cast<uint4*>(y + base)[c * 512 + lane] = pk.raw;
// CHECK: // row form: smem (64000 bytes of shared memory as f16, 1024 threads per row, one element per access, 32 per thread)
// An odd length (4097) in the block form: each row starts at its own
// alignment, so the row is peeled: the h elements before its first 16-byte
// boundary and the tl after its last whole vector are held one each by the
// first h + tl threads (one more register, v[16]); the nb whole vectors
// between move 16 bytes per access. The statistics' loops test each access
// once (inside the whole vectors or not), then the head/tail element.
// CHECK: // row form: block (256 threads per row, 8 elements per access between the row's 16-byte boundaries, the rest one each, 17 per thread)
// CHECK: const int h = (int)((8 - (base & 7)) & 7);
// CHECK-NEXT: const int nb = (4097 - h) / 8, tl = 4097 - h - nb * 8;
// CHECK: if (c * 256 + threadIdx.x < nb) {
// CHECK-NEXT: union { uint4 raw; unsigned short e[8]; unsigned int w[4]; } pk; pk.raw = reinterpret_cast<const uint4*>(x + base + h)[c * 256 + threadIdx.x];
// CHECK: { const long long k = (threadIdx.x < h ? (long long)threadIdx.x : threadIdx.x < h + tl ? (long long)nb * 8 + threadIdx.x : 4097LL); v[16] = k < 4097LL ? rlx_ld_f16(x[base + k]) : 0.0f; }
// CHECK: float m = -RLX_INF;
// CHECK: if (c * 256 + threadIdx.x < nb) {
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int i = 0; i < 8; ++i) { const int j = c * 8 + i; const long long k = h + (long long)(c * 256 + threadIdx.x) * 8 + i; { m = rlx_maxf(m, v[j]); } }
// CHECK: { const int j = 16; const long long k = (threadIdx.x < h ? (long long)threadIdx.x : threadIdx.x < h + tl ? (long long)nb * 8 + threadIdx.x : 4097LL); if (k < 4097LL) { m = rlx_maxf(m, v[j]); } }
// CHECK: reinterpret_cast<uint4*>(y + base + h)[c * 256 + threadIdx.x] = pk.raw;
// CHECK: if (k < 4097LL) y[base + k] = rlx_st_f16(v[16] * inv); }
func.func @main(%x: tensor<2x32768xf16>, %g: tensor<32768xf16>, %b: tensor<32768xf16>, %y: tensor<2x32000xf16>,
                %g2: tensor<32000xf16>, %b2: tensor<32000xf16>, %o: tensor<2x4097xf16>)
    -> (tensor<2x32768xf16>, tensor<2x32768xf16>, tensor<2x32000xf16>, tensor<2x4097xf16>) {
  %n = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<2x32768xf16>, tensor<32768xf16>
  %s = rlx.softmax %x axis = -1 : tensor<2x32768xf16>
  %m = rlx.layer_norm %y, %g2, %b2 eps = 1.0e-05 : tensor<2x32000xf16>, tensor<32000xf16>
  %p = rlx.softmax %o axis = -1 : tensor<2x4097xf16>
  func.return %n, %s, %m, %p : tensor<2x32768xf16>, tensor<2x32768xf16>, tensor<2x32000xf16>, tensor<2x4097xf16>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// sm_90, f16 rows whose length 8 does not divide take the cluster form's
// windowed access: each row's window runs from the 16-byte boundary at or
// before its start (h elements before it, per row) to the one at or after
// its end, read 16 bytes at a time; 64 bytes of it per thread.
// An odd length (70001, past the stream form's 64K elements): softmax's f32
// row, 8 blocks of 288 threads (16-bit rows 8 does not divide of 8193-65536
// take the stream form: rows-stream.mlir).
// CHECK: // row form: cluster (8 blocks of 288 threads per row, 2304 threads per row, 8 elements per access over the row's 16-byte-aligned window, 32 per thread)
// CHECK: const int h = (int)(base & 7);
// CHECK-NEXT: const int nb = (h + 70001 + 7) / 8;
// Accesses c = 0 .. 2 lie in the window for every h and lane (K = 70001 / 8 /
// 2304 - 1 = 2), so they load without a test (rows.WINDOW_WHOLE_CHUNKS):
// CHECK: if (c <= 2 || c * 2304 + lane < nb) {
// CHECK-NEXT: union { uint4 raw; unsigned short e[8]; unsigned int w[4]; } pk; pk.raw = reinterpret_cast<const uint4*>(x + base - h)[c * 2304 + lane];
// Whole accesses inside the row fold without a test, c = 1 .. 2 wholly
// inside it for every h; the window's edges element by element, columns
// before the row's start negative, in the accesses that can hold an edge
// only (the window's first, c = 0 of lane 0, and its last, access 8750 =
// c 3 of lane 1838 for every h: rows.WINDOW_EDGE_CHUNKS):
// CHECK: const long long k0 = (long long)(c * 2304 + lane) * 8 - h;
// CHECK-NEXT: if ((c >= 1 && c <= 2) || (k0 >= 0 && k0 + 8 <= 70001LL)) {
// CHECK: for (int i = 0; i < 8; ++i) { const int j = c * 8 + i; const long long k = k0 + i; { m = rlx_maxf(m, v[j]); } }
// CHECK-NEXT: } else if (c == 0 || c == 3) {
// CHECK: if (k >= 0 && k < 70001LL) { m = rlx_maxf(m, v[j]); }
// The write: whole accesses as vectors, the edges an element at a time
// (never a neighbouring row's element):
// CHECK: if ((c >= 1 && c <= 2) || (k0 >= 0 && k0 + 8 <= 70001LL)) reinterpret_cast<uint4*>(y + base - h)[c * 2304 + lane] = pk.raw;
// CHECK-NEXT: else for (int i = 0; i < 8; ++i) { const long long k = k0 + i; if (k >= 0 && k < 70001LL) y[base + k] = pk.e[i]; }
// An even length 8 does not divide (30522): the norm's row, kept as halves
// two per 32-bit register (the loaded words as they are), 128 bytes of it
// per thread, is windowed too. Inside the row, gamma and beta are 16-byte
// reads realigned to the row's start (rlx_ld_window: two aligned vectors
// and a funnel shift by h elements); at the window's edges an element at a
// time:
// CHECK: // row form: cluster (2 blocks of 256 threads per row, 512 threads per row, 8 elements per access over the row's 16-byte-aligned window, 64 per thread)
// CHECK: unsigned int v[32] = {};
// CHECK: const int nb = (h + 30522 + 7) / 8;
// CHECK: for (int i = 0; i < 4; ++i) v[c * 4 + i] = pk.w[i];
// CHECK: s += rlx_half_f16(v[(j) >> 1], (j) & 1);
// CHECK: pc_g.raw = rlx_ld_window(g, (k0 + h) * 2, h * 2);
// CHECK-NEXT: pc_b.raw = rlx_ld_window(b, (k0 + h) * 2, h * 2);
// CHECK: pk.e[i] = rlx_st_f16((rlx_half_f16(v[(j) >> 1], (j) & 1) - mean) * inv * rlx_ld_f16(pc_g.e[i]) + rlx_ld_f16(pc_b.e[i]));
// CHECK: rlx_st_f16((rlx_half_f16(v[(j) >> 1], (j) & 1) - mean) * inv * rlx_ld_f16(g[k]) + rlx_ld_f16(b[k]))
// ... where softmax's f32 row keeps 4-byte accesses (its window lost there;
// rows of 8193-65536 take the stream form):
// CHECK: // row form: cluster (8 blocks of 160 threads per row, 1280 threads per row, 2 elements per access, 56 per thread)
func.func @main(%x: tensor<3x70001xf16>, %y: tensor<3x30522xf16>, %g: tensor<30522xf16>, %b: tensor<30522xf16>,
                %z: tensor<3x70002xf16>)
    -> (tensor<3x70001xf16>, tensor<3x30522xf16>, tensor<3x70002xf16>) {
  %s = rlx.softmax %x axis = -1 : tensor<3x70001xf16>
  %n = rlx.layer_norm %y, %g, %b eps = 1.0e-05 : tensor<3x30522xf16>, tensor<30522xf16>
  %t = rlx.softmax %z axis = -1 : tensor<3x70002xf16>
  func.return %s, %n, %t : tensor<3x70001xf16>, tensor<3x30522xf16>, tensor<3x70002xf16>
}

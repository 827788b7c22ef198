// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// argmax by row length: a warp per row up to 4096 elements or 1024 16-byte
// accesses (8 rows per block, shuffles only, two accesses in flight a lane),
// a block beyond; 16-byte reads where the row allows, peeled where 16 bytes
// do not divide it. Rows whose lanes would take fewer than 4 accesses each
// take a group of fewer lanes (75 accesses: 16 lanes), shuffling within the
// group's mask. Rows read 16 bytes at a time (f32 ones in the warp and
// lane-group forms: rows.ARGMAX_HELD_F32_MAX) take the held-best form: a
// group of items' largest element by NaN-propagating maxima (packed pairs
// for f16/bf16), the best group's items held, the index found in them
// after the scan.
// CHECK: // argmax form: lane groups (16 lanes per row, 16 rows per block), 4 elements per 16-byte access, the best of 2 items held (their largest element by packed maxima, its index found after the scan)
// CHECK: for (long long k0 = lane; k0 < 75LL; k0 += 32LL) {
// CHECK: for (int j = 1; j < 2; ++j) { const long long k4 = k0 + j * 16LL; raw[j] = k4 < 75LL ? reinterpret_cast<const uint4*>(x + base)[k4] : raw[0]; }
// CHECK: const float m0 = rlx_maxf(__uint_as_float(raw[0].x), __uint_as_float(raw[0].y));
// CHECK: oi = (gk + j * 16LL) * 4LL + i; }
// CHECK: const unsigned int gmask = 65535u << ((threadIdx.x & 31) & ~15);  // this row's lanes
// CHECK: for (int s = 8; s > 0; s >>= 1) {
// CHECK: if (lane == 0) y[r] = bi;
// CHECK: // argmax form: warp (8 rows per block), 8 elements per 16-byte access, the best of 4 items held (their largest element by packed maxima, its index found after the scan)
// CHECK: for (long long k0 = lane; k0 < 512LL; k0 += 128LL) {
// CHECK: oi = (gk + j * 32LL) * 8LL + i; }
// Three rows of 2048 accesses: a block per row, each split in two (grid.y).
// CHECK: // argmax form: block, 8 elements per 16-byte access, the best of 4 items held ({{.*}}), each row split in 2 chunks of 1024 items (grid.y)
// CHECK: for (long long k0 = k_lo + threadIdx.x; k0 < k_hi; k0 += 1024LL) {
// CHECK: const unsigned int m0 = rlx_max2_bf16(raw[0].x, raw[0].y);
// Rows of 1001: the head before the first 16-byte boundary, the aligned
// middle (accesses counted from the buffer's start), the tail, in that order.
// CHECK: // argmax form: lane groups (8 lanes per row, 32 rows per block), 8 elements per 16-byte access, peeled
// CHECK: const long long va = (base + 7LL) / 8LL, vb = (base + 1001LL) / 8LL;  // peeled
// CHECK: for (int e = lane; e < hc; e += 8) { const long long k = 0LL + e;
// CHECK: for (long long k0 = va + lane; k0 < vb; k0 += 32LL) {
// CHECK: oi = (gk + j * 8LL) * 8LL + i - base; }
// CHECK: for (int e = lane; e < tc; e += 8) { const long long k = (vb * 8LL - base) + e;
// A middle axis of 6 over 20 rows (too few for the columns form): a lane per row, element by element.
// CHECK: // argmax form: lane groups (1 lane per row, 256 rows per block), one element per access
func.func @main(%x: tensor<7x300xf32>, %y: tensor<3x4096xf16>, %w: tensor<3x16384xbf16>, %v: tensor<5x1001xf16>, %z: tensor<4x6x5xbf16>) -> (tensor<7xi64>, tensor<3xi64>, tensor<3xi64>, tensor<5xi64>, tensor<4x5xi64>) {
  %a = rlx.argmax %x axis = -1 : tensor<7x300xf32> -> tensor<7xi64>
  %b = rlx.argmax %y axis = -1 : tensor<3x4096xf16> -> tensor<3xi64>
  %d = rlx.argmax %w axis = -1 : tensor<3x16384xbf16> -> tensor<3xi64>
  %e = rlx.argmax %v axis = -1 : tensor<5x1001xf16> -> tensor<5xi64>
  %c = rlx.argmax %z axis = 1 : tensor<4x6x5xbf16> -> tensor<4x5xi64>
  func.return %a, %b, %d, %e, %c : tensor<7xi64>, tensor<3xi64>, tensor<3xi64>, tensor<5xi64>, tensor<4x5xi64>
}

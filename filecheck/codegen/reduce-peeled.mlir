// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Rows whose length 8 halves do not divide (1001): each row's 16-byte
// aligned middle is read as uint4 items (items va .. vb, counted from the
// buffer's start), the fewer than 8 elements before and after it one at a
// time, by the row's lanes.
// CHECK: // reduce form: group: 32 lanes per row of 1001 elements, 8 elements per item, 4 items per lane, 1 rows per group, peeled
// CHECK: const unsigned long long va = (rs + 7ULL) / 8ULL, vb = (rs + 1001ULL) / 8ULL;
// CHECK: if (r < 64LL && it < (int)(vb - va)) p[s * 4 + c] = x[va + it];
// CHECK: const int hc = (int)(va * 8ULL - rs), ht = hc + (int)(rs + 1001ULL - vb * 8ULL);
// CHECK: if (r < 64LL) for (int e = lane; e < ht; e += 32) acc = RlxSum()(acc, (float)rlx_ld_f16(x_[e < hc ? rs + e : vb * 8ULL + (e - hc)]));

// f32 rows of 4097 in the block form: float4 items; a thread's edge element
// (fewer than 2 x 4 a row: one a thread at most) is loaded before the
// vectors (rows.PEEL_EDGE_PRELOAD) and folded once per row, before the
// block's reduction.
// CHECK: // reduce form: block: a block per row of 4097 elements, 4 elements per item, 4 loads in flight per thread, peeled
// CHECK: const uint4* __restrict__ xr = x + va;
// CHECK: const float edge = (int)threadIdx.x < ht ? (float)x_[threadIdx.x < hc ? rs + threadIdx.x : vb * 4ULL + (threadIdx.x - hc)] : (float)-RLX_INF;
// CHECK-NEXT: for (int i0 = threadIdx.x; i0 < (int)(vb - va); i0 += 1024) {
// CHECK: acc = RlxMax()(acc, edge);
// CHECK-NEXT: acc = rlx_block_reduce(acc, RlxMax(), (float)-RLX_INF, smem);

// Split rows fold their edges in chunk 0 only.
// CHECK: // reduce form: block: a block per row of 99999 elements, 8 elements per item, 4 loads in flight per thread, each row split in 3 chunks of 4167 items (grid.y), peeled
// CHECK: hi = lo + 4167 < (int)(vb - va) ? lo + 4167 : (int)(vb - va);
// CHECK: const float edge = blockIdx.y == 0 && (int)threadIdx.x < ht ?

// Lengths the full width divides, and rows under 4 vectors, are not peeled.
// CHECK: // reduce form: group: 32 lanes per row of 1000 elements, 8 elements per item, 4 items per lane, 1 rows per group
// CHECK-NOT: peeled
// CHECK: // reduce form: group: 16 lanes per row of 31 elements, 1 elements per item
// CHECK-NOT: peeled
func.func @main(%x: tensor<64x1001xf16>, %y: tensor<40x4097xf32>, %z: tensor<2x99999xbf16>, %w: tensor<64x1000xf16>, %v: tensor<64x31xf16>)
    -> (tensor<64xf16>, tensor<40xf32>, tensor<2xbf16>, tensor<64xf16>, tensor<64xf16>) {
  %a = rlx.reduce_sum %x axes = [1] : tensor<64x1001xf16> -> tensor<64xf16>
  %b = rlx.reduce_max %y axes = [1] : tensor<40x4097xf32> -> tensor<40xf32>
  %c = rlx.reduce_sum %z axes = [1] : tensor<2x99999xbf16> -> tensor<2xbf16>
  %d = rlx.reduce_sum %w axes = [1] : tensor<64x1000xf16> -> tensor<64xf16>
  %e = rlx.reduce_sum %v axes = [1] : tensor<64x31xf16> -> tensor<64xf16>
  func.return %a, %b, %c, %d, %e : tensor<64xf16>, tensor<40xf32>, tensor<2xbf16>, tensor<64xf16>, tensor<64xf16>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=IR

// Reductions, softmax and norms: f32 accumulation, reductions through warp
// shuffles. A short row of a reduction takes a group of lanes (here 4, one
// float4 each).
// IR-COUNT-4: rlx_cuda.launch
// CHECK: // reduce form: group: 4 lanes per row of 16 elements, 4 elements per item, 1 items per lane, 4 rows per group
// CHECK: for (int o = 2; o > 0; o >>= 1) acc = RlxSum()(acc, rlx_shfl(acc, o));
// Short rows (up to 1024 elements) take a warp each, the row in registers,
// reduced with shuffles alone: one read, one write. Rows this short (16
// f32 = 64 bytes) take a group of 4 lanes, one 16-byte access each, 8 rows
// a warp, 4 warps a block (rows of at most 512 bytes:
// rows.WARP_SHORT_THREADS); a group's shuffles involve its own lanes only.
// CHECK: // row form: warp (4 threads per row, 4 elements per access, 4 per thread, 8 rows per warp)
// CHECK-NEXT: __launch_bounds__(128)
// CHECK: const int lane = threadIdx.x & 3;
// CHECK-NEXT: for (long long r = (long long)blockIdx.x * 32 + (threadIdx.x / 4); r < 4LL; r += (long long)gridDim.x * 32) {
// CHECK: pk.raw = reinterpret_cast<const uint4*>(x + base)[c * 4 + lane];
// CHECK: m = rlx_maxf(m, v[j]);
// CHECK: m = rlx_group_reduce<4>(m, RlxMax());
// CHECK: v[j] = expf(v[j] - m); s += v[j];
// CHECK: pk.e[i] = v[j] * inv;
// CHECK: const float mean = rlx_group_reduce<4>(s, RlxSum()) / 16.0f;
// CHECK: rsqrtf(
// gamma and beta are read as vectors beside the output's:
// CHECK: pc_g.raw = reinterpret_cast<const uint4*>(g + 0)[c * 4 + lane];
// CHECK: pk.e[i] = v[j] * inv * pc_g.e[i] + pc_b.e[i];
// CHECK: rlx_argmax_better
func.func @main(%x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xi64>) {
  %s = rlx.reduce_sum %x axes = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %m = rlx.softmax %x axis = -1 : tensor<4x16xf32>
  %n = rlx.layer_norm %x, %g, %g eps = 1.0e-05 : tensor<4x16xf32>, tensor<16xf32>
  %i = rlx.argmax %x axis = 1 : tensor<4x16xf32> -> tensor<4xi64>
  func.return %s, %m, %n, %i : tensor<4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xi64>
}

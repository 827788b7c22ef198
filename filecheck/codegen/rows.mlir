// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s --check-prefix=IR

// Reductions, softmax and norms: f32 accumulation, reductions through warp
// shuffles. A short row of a reduction takes a group of lanes (here 4, one
// float4 each).
// IR-COUNT-4: rlx_cuda.launch
// CHECK: // reduce form: group: 4 lanes per row of 16 elements, 4 elements per item, 1 items per lane, 4 rows per group
// CHECK: for (int o = 2; o > 0; o >>= 1) acc = RlxSum()(acc, rlx_shfl(acc, o));
// Short rows (up to 1024 elements) take a warp each, the row in registers
// (16 f32 over 32 lanes: one guarded element per lane), reduced with
// shuffles alone: one read, one write.
// CHECK: // row form: warp (32 threads per row, one element per access, 1 per thread)
// CHECK: const int lane = threadIdx.x & 31;
// CHECK: v[j] = k < 16LL ? x[base + k] : 0.0f;
// CHECK: m = rlx_maxf(m, v[j]);
// CHECK: m = rlx_warp_reduce(m, RlxMax());
// CHECK: v[j] = expf(v[j] - m); s += v[j];
// CHECK: y[base + k] = v[j] * inv;
// CHECK: const float mean = rlx_warp_reduce(s, RlxSum()) / 16.0f;
// CHECK: rsqrtf(
// CHECK: y[base + k] = v[j] * inv * g[k] + b[k];
// CHECK: rlx_argmax_better
func.func @main(%x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xi64>) {
  %s = rlx.reduce_sum %x axes = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %m = rlx.softmax %x axis = -1 : tensor<4x16xf32>
  %n = rlx.layer_norm %x, %g, %g eps = 1.0e-05 : tensor<4x16xf32>, tensor<16xf32>
  %i = rlx.argmax %x axis = 1 : tensor<4x16xf32> -> tensor<4xi64>
  func.return %s, %m, %n, %i : tensor<4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4xi64>
}

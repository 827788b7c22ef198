// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// f32 rows whose length is a multiple of 1024 move as float4 in registers;
// rows longer than 8192 elements (and non-trailing axes) take the looping
// form: online max and sum in one read, then the write.
// CHECK: const float4 q = reinterpret_cast<const float4*>(x + base)[threadIdx.x + j * 256];
// CHECK: reinterpret_cast<float4*>(y + base)[threadIdx.x + j * 256] = make_float4(
// Long f32 rows of a length divisible by 4 move as float4, 4 trips unrolled:
// CHECK: for (long long k4 = threadIdx.x; k4 < 2500LL; k4 += blockDim.x) {
// CHECK-NEXT: const float4 q = reinterpret_cast<const float4*>(x + base)[k4];
// CHECK-NEXT: rlx_ms_add(st, q.x); rlx_ms_add(st, q.y); rlx_ms_add(st, q.z); rlx_ms_add(st, q.w);
// CHECK: st = rlx_block_reduce(st, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem);
// CHECK: reinterpret_cast<float4*>(y + base)[k4] = make_float4(expf(q.x - m) * inv, expf(q.y - m) * inv, expf(q.z - m) * inv, expf(q.w - m) * inv);
// Other lengths, one element at a time:
// CHECK: for (long long k = threadIdx.x; k < 10001LL; k += blockDim.x) { const long long o = base + (k); rlx_ms_add(st, x[o]); }
// CHECK: for (long long k = threadIdx.x; k < 10001LL; k += blockDim.x) { const long long o = base + (k); const float v = x[o]; y[o] = expf(v - m) * inv; }
// CHECK: const long long base = (r / 3LL) * 12LL + (r % 3LL);
func.func @main(%x: tensor<8x4096xf32>, %y: tensor<2x10000xf32>, %w: tensor<2x10001xf32>, %z: tensor<2x4x3xf32>) -> (tensor<8x4096xf32>, tensor<2x10000xf32>, tensor<2x10001xf32>, tensor<2x4x3xf32>) {
  %a = rlx.softmax %x axis = -1 : tensor<8x4096xf32>
  %b = rlx.softmax %y axis = -1 : tensor<2x10000xf32>
  %d = rlx.softmax %w axis = -1 : tensor<2x10001xf32>
  %c = rlx.softmax %z axis = 1 : tensor<2x4x3xf32>
  func.return %a, %b, %d, %c : tensor<8x4096xf32>, tensor<2x10000xf32>, tensor<2x10001xf32>, tensor<2x4x3xf32>
}

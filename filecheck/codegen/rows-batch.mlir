// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Short f16/bf16 rows reduced twice (softmax: max, then sum) take 2 rows a
// group of lanes (rows.WARP_BATCH), both rows' 16-byte accesses loaded
// before the first row is reduced; the grid halves. Rows of at most 512
// bytes take blocks of 128 threads (rows.WARP_SHORT_THREADS), 16 rows a
// block here:
// CHECK: // row form: warp (8 threads per row, 8 elements per access, 8 per thread, 4 rows per warp, 2 rows per group)
// CHECK-NEXT: __launch_bounds__(128)
// CHECK: const long long r0 = (long long)blockIdx.x * 32 + (threadIdx.x / 8);
// CHECK-NEXT: uint4 nx[2][1];  // the group's 2 rows' accesses
// CHECK: for (int c = 0; c < 1; ++c) if (r < 1000LL) nx[u][c] = reinterpret_cast<const uint4*>(x + base)[c * 8 + lane];
// CHECK: if (r >= 1000LL) break;
// CHECK: pk.raw = nx[u][c];
// CHECK: m = rlx_group_reduce<8>(m, RlxMax());
// rms_norm reduces once, f32 rows are wider: one row a group, as before:
// CHECK: // row form: warp (8 threads per row, 8 elements per access, 8 per thread, 4 rows per warp)
// CHECK-NEXT: extern
// CHECK: for (long long r = (long long)blockIdx.x * 16 + (threadIdx.x / 8); r < 1000LL;
// CHECK: // row form: warp (16 threads per row, 4 elements per access, 4 per thread, 2 rows per warp)
// CHECK-NEXT: extern
func.func @main(%x: tensor<1000x64xf16>, %g: tensor<64xf16>, %y: tensor<1000x64xf32>) -> (tensor<1000x64xf16>, tensor<1000x64xf16>, tensor<1000x64xf32>) {
  %a = rlx.softmax %x axis = -1 : tensor<1000x64xf16>
  %b = rlx.rms_norm %x, %g eps = 1.000000e-06 : tensor<1000x64xf16>, tensor<64xf16>
  %c = rlx.softmax %y axis = -1 : tensor<1000x64xf32>
  func.return %a, %b, %c : tensor<1000x64xf16>, tensor<1000x64xf16>, tensor<1000x64xf32>
}

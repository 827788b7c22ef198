// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Warp-form rows whose accesses are narrower than 16 bytes take several
// rows a group (rows.warp_batch, WARP_BATCH_NARROW_*): here f16 rows of 99
// (one element per access, 7 a lane of 16: 14 bytes), softmax up to 64
// bytes a lane (4 rows), loaded together before the first is reduced; the
// loads of a lane past the row's end are left out (the access guard), and a
// group's rows past the last are not loaded. (Softmax's rows of 101-255 are
// staged: rows-staged-short.mlir.)
// CHECK: // row form: warp (16 threads per row, one element per access, 7 per thread, 2 rows per warp, 4 rows per group)
// CHECK-NEXT: __launch_bounds__(128)
// CHECK: const long long r0 = (long long)blockIdx.x * 32 + (threadIdx.x / 16);
// CHECK-NEXT: unsigned short nx[4][7];  // the group's 4 rows' accesses
// CHECK: const long long r = r0 + u * 8, base = r * 99LL;
// CHECK: for (int c = 0; c < 7; ++c) if (r < 1000LL && ((long long)(c * 16 + lane) * 1 < 99LL)) nx[u][c] = x[base + c * 16 + lane];
// CHECK: if (r >= 1000LL) break;
// CHECK: v[j] = k < 99LL ? rlx_ld_f16(nx[u][j]) : 0.0f;

// layer_norm (per-column params) up to 32 bytes a lane: 2 rows of 197.
// CHECK: // row form: warp (32 threads per row, one element per access, 7 per thread, 2 rows per group)

// f16 rms_norm over odd rows (one statistic) keeps a row a group.
// CHECK: // row form: warp (16 threads per row, one element per access, 7 per thread, 2 rows per warp)
// CHECK-NEXT: extern

// 16-bit rows of 5-7 elements (a thread each) are staged through shared
// memory instead (rows.WARP_STAGED_TINY): 128 threads of 9 rows each.
// CHECK: // row form: warp (a thread per row, one element per access, 7 per thread, 32 rows per warp, staged: the block's 1152 rows through shared memory, 16-byte copies)
// CHECK: __shared__ __align__(16) unsigned short stage[8064];
// CHECK: for (int u = threadIdx.x / 1; u < 1152; u += 128) {  // the group's rows

// So are the odd rows of 9 elements and more, a thread each too
// (WARP_STAGED_ODD_SOLO_MIN; before, rows of 9-31 over 2-4 lanes, staged or
// in registers): rows of 15 and of 9.
// CHECK: // row form: warp (a thread per row, one element per access, 15 per thread, 32 rows per warp, staged: the block's 512 rows through shared memory, 16-byte copies)
// CHECK: for (int u = threadIdx.x / 1; u < 512; u += 128) {  // the group's rows
// CHECK: // row form: warp (a thread per row, one element per access, 9 per thread, 32 rows per warp, staged: the block's 896 rows through shared memory, 16-byte copies)

// f32 rows of one element an access from 32 elements take as few lanes as
// hold 8 each (WARP_NARROW_ITEMS): rows of 33 over 8 lanes, not 16.
// CHECK: // row form: warp (8 threads per row, one element per access, 5 per thread, 4 rows per warp)
func.func @main(%q: tensor<1000x99xf16>, %x: tensor<1000x197xf16>, %g: tensor<197xf16>, %b: tensor<197xf16>,
                %h: tensor<99xf16>, %t: tensor<5000x7xf16>, %u: tensor<3000x15xf16>, %w: tensor<3000x9xf16>,
                %f: tensor<999x33xf32>)
    -> (tensor<1000x99xf16>, tensor<1000x197xf16>, tensor<1000x99xf16>, tensor<5000x7xf16>, tensor<3000x15xf16>,
        tensor<3000x9xf16>, tensor<999x33xf32>) {
  %s = rlx.softmax %q axis = -1 : tensor<1000x99xf16>
  %n = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<1000x197xf16>, tensor<197xf16>
  %r = rlx.rms_norm %q, %h eps = 1.0e-05 : tensor<1000x99xf16>, tensor<99xf16>
  %y = rlx.softmax %t axis = -1 : tensor<5000x7xf16>
  %v = rlx.softmax %u axis = -1 : tensor<3000x15xf16>
  %z = rlx.softmax %w axis = -1 : tensor<3000x9xf16>
  %e = rlx.softmax %f axis = -1 : tensor<999x33xf32>
  func.return %s, %n, %r, %y, %v, %z, %e : tensor<1000x99xf16>, tensor<1000x197xf16>, tensor<1000x99xf16>, tensor<5000x7xf16>,
                                         tensor<3000x15xf16>, tensor<3000x9xf16>, tensor<999x33xf32>
}

// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// softmax over f16/bf16 rows of odd length of 101-255 elements (ViT's 197
// tokens; over 200 bytes up to 512) is staged through shared memory
// (rows.WARP_STAGED_ROW_BYTES): the block's 16 rows (3152 halves, about
// WARP_STAGE_SHORT_BYTES) copied in with 16-byte loads, the rows' lanes
// working there, the outputs copied back.
// CHECK: // row form: warp (32 threads per row, one element per access, 7 per thread, staged: the block's 16 rows through shared memory, 16-byte copies)
// CHECK-NEXT: rlx_softmax_
// CHECK: __shared__ __align__(16) unsigned short stage[3152];

// layer_norm's rows (two per-column params: WARP_STAGED_SHORT_PARAMS) keep
// their lanes, two rows a group, gamma and beta held in registers
// (rows.WARP_HELD_PARAMS_16_ITEMS: 7 elements a thread).
// CHECK: // row form: warp (32 threads per row, one element per access, 7 per thread, 2 rows per group)
// CHECK-NEXT: rlx_norm_
// CHECK: float ph_g[7];  // g at this thread's columns, the same in each of its rows
// CHECK: y[base + k] = rlx_st_bf16(v[j] * inv * ph_g[j] + ph_b[j]);
func.func @main(%x: tensor<1000x197xf16>, %w: tensor<500x197xbf16>, %g: tensor<197xbf16>, %b: tensor<197xbf16>)
    -> (tensor<1000x197xf16>, tensor<500x197xbf16>) {
  %s = rlx.softmax %x axis = -1 : tensor<1000x197xf16>
  %n = rlx.layer_norm %w, %g, %b eps = 1.0e-05 : tensor<500x197xbf16>, tensor<197xbf16>
  func.return %s, %n : tensor<1000x197xf16>, tensor<500x197xbf16>
}

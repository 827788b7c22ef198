// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=SRC

// rows.PARAM_COPIES: layer_norm's gamma and beta, where they are params read
// by a windowed cluster row (16-bit rows 8 does not divide) or a peeled block
// row (odd 16-bit rows of 1025-8192), come from shifted copies of the param:
// copy s holds it s elements later, so a row's 16 bytes of gamma at any start
// offset are one aligned read (`rlx_ld_copy`), where they were two reads and
// a shift (`rlx_ld_window`, rows-window.mlir) or an element at a time.
// rlx-emit-cuda lays the copies out after the params (8 copies of a 16-bit
// param, each rounded up to 16 bytes and padded by one vector: 50257 f16
// elements -> 100544 bytes a copy) and records them on the function, six
// integers each (offset, source, elements, element bytes, copies, bytes a
// copy); the runtime fills them once at load. rms_norm's one param keeps
// the realignment (rows.PARAM_COPIES_MIN_COLUMNS = 2).
// CHECK: rlx.param_bytes = 1958400 : i64
// CHECK-SAME: rlx.param_copies = array<i64: 218112, 0, 50257, 2, 8, 100544, 1022464, 100608, 50257, 2, 8, 100544, 1826816, 201216, 4097, 2, 8, 8224, 1892608, 209664, 4097, 2, 8, 8224>
// The kernels take the copies as two more params, after the others:
// CHECK: rlx_cuda.launch @k0 {{.*}} args [#rlx_cuda.arg<arena 0>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<param 100608>, #rlx_cuda.arg<arena 301568>, #rlx_cuda.arg<param 218112>, #rlx_cuda.arg<param 1022464>]
// CHECK: rlx_cuda.launch @k1 {{.*}} #rlx_cuda.arg<param 1826816>, #rlx_cuda.arg<param 1892608>]
// CHECK: rlx_cuda.launch @k2 {{.*}} args [#rlx_cuda.arg<arena 0>, #rlx_cuda.arg<param 0>, #rlx_cuda.arg<arena 603136>]

// The windowed cluster row: copy h of each param at the access's column.
// SRC: // rlx.layer_norm (op #4 of @main)
// SRC: // row form: cluster
// SRC-NEXT: extern "C" {{.*}}, const unsigned short* __restrict__ g_c, const unsigned short* __restrict__ b_c) {
// SRC: pc_g.raw = rlx_ld_copy(g_c, h, 100544LL, (k0 + h) * 2);
// SRC-NEXT: pc_b.raw = rlx_ld_copy(b_c, h, 100544LL, (k0 + h) * 2);
// The window's edges still read the param itself, an element at a time:
// SRC: rlx_ld_f16(g[k]) + rlx_ld_f16(b[k])
// The peeled block row (vectors start h elements into the row): copy
// (8 - h) & 7, one vector further in where h > 0.
// SRC: // rlx.layer_norm (op #5 of @main)
// SRC: // row form: block
// SRC: pc_g.raw = rlx_ld_copy(g_c, (8 - h) & 7, 8224LL, (long long)(c * 256 + threadIdx.x) * 16 + (h ? 16 : 0));
// rms_norm's gamma alone: realigned.
// SRC: // rlx.rms_norm (op #6 of @main)
// SRC-NOT: rlx_ld_copy
// SRC: pc_g.raw = rlx_ld_window(g, (k0 + h) * 2, h * 2);
func.func @main(%x: tensor<3x50257xf16>, %y: tensor<3x4097xbf16>)
    -> (tensor<3x50257xf16>, tensor<3x4097xbf16>, tensor<3x50257xf16>) {
  %g = rlx.param "g" : tensor<50257xf16>
  %b = rlx.param "b" : tensor<50257xf16>
  %w = rlx.param "w" : tensor<4097xbf16>
  %c = rlx.param "c" : tensor<4097xbf16>
  %n = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<3x50257xf16>, tensor<50257xf16>
  %m = rlx.layer_norm %y, %w, %c eps = 1.0e-05 : tensor<3x4097xbf16>, tensor<4097xbf16>
  %r = rlx.rms_norm %x, %g eps = 1.0e-05 : tensor<3x50257xf16>, tensor<50257xf16>
  func.return %n, %m, %r : tensor<3x50257xf16>, tensor<3x4097xbf16>, tensor<3x50257xf16>
}

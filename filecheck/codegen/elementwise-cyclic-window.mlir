// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// A row of 24577 f16 elements expanded over 1365 rows: the region only moves
// its elements, so the row (read cyclically: no vector divides it) comes as
// one 16-byte vector per thread and trip, shifted to column c = (w * 8) %
// 24577 from the two aligned vectors around it (elementwise.CYCLIC_WINDOW,
// rlx_ld_window), where those 8 columns do not wrap; the vector that wraps
// loads its 8 columns one at a time and packs them.
// CHECK: uint4 p0[2];  // input 0, cyclic: 24577 elements, shifted 16-byte vectors
// CHECK: unsigned c0 = (w * 8u) % 24577u;
// CHECK-NEXT: if (c0 + 8u <= 24577u) {  // columns c..c+7: no wrap, one shifted vector
// CHECK-NEXT: const long long s = (long long)c0 * 2, a = (s + 15) & ~15LL;
// CHECK-NEXT: const uint4 v = rlx_ld_window(in0, a, (int)(a - s));
// CHECK-NEXT: p0[u] = v;
// CHECK-NEXT: } else {
// CHECK: for (int l = 0; l < 8; ++l) { e[l] = in0[c0]; c0 = c0 + 1u == 24577u ? 0u : c0 + 1u; }
// CHECK-NEXT: p0[u] = make_uint4((unsigned)e[0] | ((unsigned)e[1] << 16),
// CHECK: rlx_ld8_f16(p0[u], q0);
// CHECK: reinterpret_cast<uint4*>(out0)[w] = rlx_st8_f16(r0);
func.func @main(%x: tensor<24577xf16>) -> tensor<1365x24577xf16> {
  %y = rlx.expand %x : tensor<24577xf16> -> tensor<1365x24577xf16>
  func.return %y : tensor<1365x24577xf16>
}

// A bias+gelu region computes, so its bias row keeps 8 loads of one element
// (CYCLIC_WINDOW "move": the shifted vector measured 4-13% slower there).
// CHECK-LABEL: rlx.elementwise_region (op #0 of @bias)
// CHECK: unsigned short b1[2][8];  // input 1, cyclic: 8191 elements
// CHECK-NOT: rlx_ld_window
func.func @bias(%x: tensor<33x8191xf16>, %b: tensor<8191xf16>) -> tensor<33x8191xf16> {
  %a = rlx.add %x, %b : tensor<33x8191xf16>, tensor<8191xf16> -> tensor<33x8191xf16>
  %g = rlx.gelu %a : tensor<33x8191xf16>
  func.return %g : tensor<33x8191xf16>
}

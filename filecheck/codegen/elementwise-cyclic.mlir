// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// A bias row of 8191 f16 elements (no 8-element vector divides it) is read
// cyclically (elementwise.CYCLIC_PRELOAD): each thread loads its vector's 8
// columns from c = (w * 8) % 8191 with x's vector, before any math. Where
// those columns do not wrap past the row's end (all but one vector a row),
// the loads have no wrap test (elementwise.CYCLIC_SPLIT); the vector that
// wraps tests each column. The last 7 elements are the tail.
// CHECK: // elementwise form: vector: 8 elements per thread and trip, 16-byte accesses, a tail of 7 elements, 2 trips per thread, 128 threads a block
// CHECK: unsigned short b1[2][8];  // input 1, cyclic: 8191 elements
// CHECK: p0[u] = reinterpret_cast<const uint4*>(in0)[w];
// CHECK-NEXT: unsigned c1 = (w * 8u) % 8191u;
// CHECK-NEXT: if (c1 + 8u <= 8191u) {  // columns c..c+7: no wrap
// CHECK: for (int l = 0; l < 8; ++l) b1[u][l] = in1[c1 + l];
// CHECK-NEXT: } else {
// CHECK: for (int l = 0; l < 8; ++l) { b1[u][l] = in1[c1]; c1 = c1 + 1u == 8191u ? 0u : c1 + 1u; }
// CHECK: const float a1 = rlx_ld_f16(in1[(i % 8191u)]);
// CHECK: const float a1 = rlx_ld_f16(b1[u][l]);
func.func @main(%x: tensor<33x8191xf16>, %b: tensor<8191xf16>) -> tensor<33x8191xf16> {
  %a = rlx.add %x, %b : tensor<33x8191xf16>, tensor<8191xf16> -> tensor<33x8191xf16>
  %g = rlx.gelu %a : tensor<33x8191xf16>
  func.return %g : tensor<33x8191xf16>
}

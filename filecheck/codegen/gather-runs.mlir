// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// A gather of rows no vector divides (77 bf16 elements, CLIP's token rows)
// takes the staged form's runs (injective.STAGED_RUNS, STAGED_RUN_BYTES):
// each thread reads two runs of 8 consecutive output elements; a run spans
// at most two output rows, so it reads those two rows' ids once (not an id
// per element), and writes its 8 as one 16-byte vector packed in registers. Along the first axis there is
// no outer slice: the row is the id, with no division or modulo for it.
// CHECK: // injective form: gather along axis 0, staged: 16 elements per thread read 8 at a time in a run, written as 16-byte vectors packed in registers
// CHECK: const unsigned w0 = e / 77u, c0 = e - w0 * 77u;
// CHECK-NEXT: const unsigned w1 = c0 + 8u > 77u && e + (77u - c0) < 4697u ? w0 + 1u : w0;
// CHECK-NEXT: long long q0 = (long long)ids[w0]; if (q0 < 0) q0 += 1000LL;
// CHECK-NEXT: const unsigned short* __restrict__ s0 = x + q0 * 77LL;
// CHECK-NEXT: long long q1 = (long long)ids[w1];
// CHECK: if (e + u < 4697u) v[u] = *(c < 77u ? s0 + c : s1 + (c - 77u));
// CHECK: if (e + 8u <= 4697u) *reinterpret_cast<uint4*>(y + e) = make_uint4((unsigned)v[0] | ((unsigned)v[1] << 16),
// CHECK-NEXT: else if (e < 4697u) for (int u = 0; u < 1; ++u) y[e + u] = v[u];
// Along a later axis the id is the output row's modulo the id count and
// the input row its outer slice's.
// CHECK: // injective form: gather along axis 1, staged: 16 elements per thread read 8 at a time in a run
// CHECK: long long q0 = (long long)ids[w0 % 2u];
// CHECK: const unsigned short* __restrict__ s0 = x + ((w0 / 2u) * 3LL + q0) * 21LL;
func.func @main(%x: tensor<1000x77xbf16>, %ids: tensor<61xi64>, %z: tensor<5x3x21xbf16>, %j: tensor<2xi64>) -> (tensor<61x77xbf16>, tensor<5x2x21xbf16>) {
  %a = rlx.gather %x[%ids] axis = 0 : tensor<1000x77xbf16>, tensor<61xi64> -> tensor<61x77xbf16>
  %b = rlx.gather %z[%j] axis = 1 : tensor<5x3x21xbf16>, tensor<2xi64> -> tensor<5x2x21xbf16>
  func.return %a, %b : tensor<61x77xbf16>, tensor<5x2x21xbf16>
}

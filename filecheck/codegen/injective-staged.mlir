// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Moves of elements no vector divides the rows of (here a slice of 19 f16
// columns at an odd start, 37 rows: 703 elements) read an element a lane,
// as the one-trip form does, and write the output as 16-byte vectors
// through a warp's slice of shared memory (injective.STAGED_MAX_BYTES); the
// last vector, 703 % 8 = 7 elements, element by element.
// CHECK: // injective form: strided slice, staged: 8 elements per thread read a lane each, written as 16-byte vectors (8 elements) through shared memory
// CHECK: __shared__ __align__(16) unsigned short stage[2048];
// CHECK: const unsigned i = e0 + u * 32u + lane;
// CHECK: v[u] = x[3u + (i / 19u) * 25u + (i % 19u)];
// CHECK: for (int u = 0; u < 8; ++u) s[u * 32 + lane] = v[u];
// CHECK-NEXT: __syncwarp();
// CHECK: if (e + 8u <= 703u) *reinterpret_cast<uint4*>(y + e) = *reinterpret_cast<const uint4*>(s + at);
// CHECK-NEXT: else if (e < 703u) for (int k = 0; k < 7; ++k) y[e + k] = s[at + k];
// Rows a vector divides keep 16-byte items.
// CHECK: // injective form: strided slice, 8 elements per 16-byte item
func.func @main(%x: tensor<37x25xf16>, %y: tensor<4x32xf16>) -> (tensor<37x19xf16>, tensor<4x16xf16>) {
  %a = rlx.slice %x starts = [0, 3] ends = [37, 22] steps = [1, 1] : tensor<37x25xf16> -> tensor<37x19xf16>
  %b = rlx.slice %y starts = [0, 8] ends = [4, 24] steps = [1, 1] : tensor<4x32xf16> -> tensor<4x16xf16>
  func.return %a, %b : tensor<37x19xf16>, tensor<4x16xf16>
}

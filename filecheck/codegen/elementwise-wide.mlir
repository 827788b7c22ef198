// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Over 2^31 elements the indices are 64-bit (constants typed LL); the grid
// still gives each thread 2 float4s: 2^31 / 4 / 256 = 2097152 blocks of 128.
// CHECK: const long long w0 = (long long)blockIdx.x * 256LL + threadIdx.x;
// CHECK: p1[u] = reinterpret_cast<const float4*>(in1)[((w % 2LL))];
// CHECK: if (w >= 536870912LL) break;
func.func @main(%x: tensor<268435456x8xf32>, %b: tensor<8xf32>) -> tensor<268435456x8xf32> {
  %a = rlx.add %x, %b : tensor<268435456x8xf32>, tensor<8xf32> -> tensor<268435456x8xf32>
  func.return %a : tensor<268435456x8xf32>
}

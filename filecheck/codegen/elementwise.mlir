// RUN: rlxc-opt %s -p rlx-cuda | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=SRC

// A fused chain is one kernel launch on arena offsets; the full-shape
// tensors move as float4s, 2 per thread in blocks of 128, one trip (no
// grid-stride loop);
// the bias row is read as float4s too, at its broadcast index (w % 2 in
// float4s); 32-bit indices.
// CHECK: rlx_cuda.kernel @k0 entry "[[E:rlx_ew_[0-9a-f]+]]" arch "sm_90" source
// CHECK: func.func @main
// CHECK: rlx_cuda.launch @k0 grid [{{[0-9]+}}, 1, 1] block [128, 1, 1] smem 0 args [#rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<arena {{[0-9]+}}>, #rlx_cuda.arg<arena {{[0-9]+}}>](%x, %b) {rlx.offset = {{[0-9]+}} : i64, rlx.bytes = 128 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// SRC: // elementwise form: vector: 4 elements per thread and trip, 16-byte accesses, 2 trips per thread, 128 threads a block
// SRC: extern "C" __global__ void __launch_bounds__(128) rlx_ew_{{[0-9a-f]+}}(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out0)
// SRC: const unsigned w0 = (unsigned)blockIdx.x * 256u + threadIdx.x;
// SRC: p0[u] = reinterpret_cast<const float4*>(in0)[w];
// SRC: p1[u] = reinterpret_cast<const float4*>(in1)[((w % 2u))];
// SRC: if (w >= 8u) break;
// SRC: const float q1[4] = {p1[u].x, p1[u].y, p1[u].z, p1[u].w};
// SRC: const float a1 = q1[l];
// GELU is x/2 erfc(-x/sqrt 2) everywhere, straight-line (no branch, no
// erff):
// SRC-NOT: if (v
// SRC: const float v{{[0-9]+}} = -0.7071067690849304f;
// SRC: = rlx_erfcf(v{{[0-9]+}});
// SRC-NOT: erff(
// SRC: rintf(
// SRC: reinterpret_cast<float4*>(out0)[w] = make_float4(r0[0], r0[1], r0[2], r0[3]);
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = rlx.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %g = rlx.gelu %a : tensor<4x8xf32>
  %r = rlx.round %g : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

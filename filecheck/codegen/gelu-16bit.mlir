// RUN: rlxc-opt %s -p rlx-fuse-elementwise | filecheck %s --check-prefix=IR
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=SRC

// f16/bf16 GELU computes x/2 erfc(-x/sqrt 2) in f32 everywhere, its erfc
// marked `fastmath<afn>` (an approximate function is allowed: the value is
// rounded to 16 bits after), with no select and no branch:
// IR: ^bb0(%{{.*}}: f16):
// IR-NEXT: arith.extf %{{.*}} : f16 to f32
// IR-NEXT: arith.constant -0.707106769 : f32
// IR-NEXT: arith.mulf
// IR-NEXT: math.erfc %{{.*}} fastmath<afn> : f32
// IR-NOT: arith.select
// IR: arith.truncf %{{.*}} : f32 to f16
// The f32 GELU takes the same form with the exact erfc (no flag):
// IR: ^bb0(%{{.*}}: f32):
// IR-NEXT: arith.constant -0.707106769 : f32
// IR-NEXT: arith.mulf
// IR-NEXT: math.erfc %{{[0-9]+}} : f32
// IR-NOT: math.erf
// IR-NOT: arith.select

// The header's rlx_erfc_afn (an approximate reciprocal, from the erfcc
// helper it shares with rlx_erfcf, and 2^x), called in the 16-bit kernel's
// body (no if/else), and rlx_erfcf in f32's; both 2 trips a thread in
// blocks of 128 (elementwise.BLOCK_THREADS, UNROLL):
// SRC: __device__ __forceinline__ float rlx_ex2f(float x) { float y; asm("ex2.approx.ftz.f32
// SRC-NEXT: __device__ __forceinline__ float rlx_erfcc_t(float a)
// SRC-NEXT: rcp.approx.ftz.f32
// SRC: __device__ __forceinline__ float rlx_erfc_afn(float x)
// SRC-NEXT: rlx_erfcc_t(a)
// SRC: rlx_ex2f(fmaf(a * -1.442695f, a, p))
// SRC: // elementwise form: vector: 8 elements per thread and trip, 16-byte accesses, 2 trips per thread, 128 threads a block
// SRC-NOT: if (v
// SRC: = rlx_erfc_afn(v{{[0-9]+}});
// SRC: rlx_st8_f16(r0)
// SRC: // elementwise form: vector: 4 elements per thread and trip, 16-byte accesses, 2 trips per thread, 128 threads a block
// SRC-NOT: if (v
// SRC: = rlx_erfcf(v{{[0-9]+}});
// SRC-NOT: erff(
func.func @main(%h: tensor<64x64xf16>, %x: tensor<64x64xf32>) -> (tensor<64x64xf16>, tensor<64x64xf32>) {
  %a = rlx.gelu %h : tensor<64x64xf16>
  %b = rlx.gelu %x : tensor<64x64xf32>
  func.return %a, %b : tensor<64x64xf16>, tensor<64x64xf32>
}

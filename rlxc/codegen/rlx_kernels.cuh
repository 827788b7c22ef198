// rlx_kernels.cuh: the helpers every kernel rlxc generates includes (NVRTC gets
// it as a named header; rlxc.codegen.HEADERS). No CUDA header is needed.
// RLX_EMULATE (rlxc.runtime.emulator: the kernels compiled by a host C++
// compiler, a thread per CUDA thread) takes the plain C++ branches below in
// place of inline PTX; NVRTC never defines it.
#pragma once

// Element types: f16/bf16 are stored as 16-bit patterns and computed in float.
#define RLX_INF __int_as_float(0x7f800000)
#define RLX_NAN __int_as_float(0x7fc00000)
#ifdef RLX_EMULATE
__device__ __forceinline__ float rlx_ld_f16(unsigned short h) { return rlx_emu_f16_to_float(h); }
__device__ __forceinline__ unsigned short rlx_st_f16(float f) { return rlx_emu_float_to_f16(f); }
#else
__device__ __forceinline__ float rlx_ld_f16(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short rlx_st_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#endif
__device__ __forceinline__ float rlx_ld_bf16(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
__device__ __forceinline__ unsigned short rlx_st_bf16(float f) {
#if __CUDA_ARCH__ >= 800
  // one instruction: round to nearest even, NaN stays NaN (the quiet NaN 0x7fff)
  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
#else
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
#endif
}
__device__ __forceinline__ float rlx_round_f16(float f) { return rlx_ld_f16(rlx_st_f16(f)); }
__device__ __forceinline__ float rlx_round_bf16(float f) { return rlx_ld_bf16(rlx_st_bf16(f)); }
// Numerical Recipes' erfcc, for rlx_erfcf and rlx_erfc_afn: erfc|x| = t exp(P(t) - x^2)
// with t = 1 / (1 + |x|/2) (`rlx_erfcc_t`: an approximate reciprocal, within 1
// ulp) and P a Chebyshev fit of degree 9 (relative error under 1.2e-7), each
// caller's coefficients (unscaled, or scaled by log2(e)) through `rlx_horner`:
// c0 + t (c1 + t (c2 + ...)), one fmaf a coefficient, from the last one in.
// 2^x, approximate (PTX ex2.approx.ftz: within 2 ulp, subnormal results 0).
#ifdef RLX_EMULATE
__device__ __forceinline__ float rlx_ex2f(float x) { return exp2f(x); }
__device__ __forceinline__ float rlx_erfcc_t(float a) { return 1.0f / fmaf(0.5f, a, 1.0f); }
#else
__device__ __forceinline__ float rlx_ex2f(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ float rlx_erfcc_t(float a) {
  float t; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(fmaf(0.5f, a, 1.0f)));
  return t;
}
#endif
__device__ __forceinline__ float rlx_horner(float, float c) { return c; }
template <typename... C>
__device__ __forceinline__ float rlx_horner(float t, float c0, float c1, C... cs) { return fmaf(t, rlx_horner(t, c1, cs...), c0); }

// erfc in f32 (`math.erfc`, exact GELU's f32 form; cuda_c.OWN_ERFCF):
// the erfcc above, with exp(-x^2) split as expf(-hi) * 2^(log2(e) (P - lo)): hi = x*x rounded, lo = fmaf(x, x, -hi) its exact
// remainder, so the exponent's rounding (up to 4e-6 relative at |x| = 9) is
// not in the result. Within 6.4 ulp of erfc in a float32 emulation of it over
// [-10, 10] with a correctly rounded reciprocal and 2^x (tests/test_erfcf.py;
// with their 1 and 2 ulp errors, up to about 15 there; within 8 ulp over GELU's
// tail on an H200, and of GELU over [-13.5, 8) on an H100, test_f32_gelu_erfc_within_ulps_on_gpu;
// CUDA's erfcf: 4), 28 SASS instructions where
// erfcf takes 46. 0 past |x| = 10.1 (erfc < 1e-45), 2 below -10.1; NaN stays NaN.
// Its polynomial is rlx_erfc_afn's unscaled: the coefficients scaled by
// log2(e) in f32 (one multiply less) took it to 7.3 ulp and erfc(0) to 1 + 1 ulp.
__device__ __forceinline__ float rlx_erfcf(float x) {
  const float a = fabsf(x), t = rlx_erfcc_t(a);
  const float p = rlx_horner(t, -1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f,
                             0.27886807f, -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f);
  const float hi = a * a, lo = fmaf(a, a, -hi);
  const float f = rlx_ex2f((p - lo) * 1.44269504f);
  float e = t * expf(-hi) * f;
  e = a > 10.1f ? 0.0f : e;
  return x >= 0.0f ? e : 2.0f - e;
}

// erfc for results rounded to f16/bf16 (`math.erfc fastmath<afn>`; exact GELU's
// 16-bit form): the erfcc above, P's coefficients scaled by log2(e) for one
// ex2 of log2(e) (P(t) - x^2). With the approximate reciprocal
// and 2^x (each within 2 ulp) the result stays within 1e-5 relative of erfc
// over [-9, 9] (2e-6 over [-4, 4]), and GELU's f16 and bf16 results differ
// from the correctly rounded ones by 1 ulp in 7 and 64 of the 65536 inputs
// (tests/test_gelu16.py), where erff's 1 + erf form missed 331 f16 ones by
// up to 2 and was 0 below x = -5.5. 2^x flushes results under 2^-126 to zero
// (erfc|x| under t 2^-126, about 2.1e-39, from |x| = 9.29: 6 bf16 GELU inputs from x = -13.19
// give 0 where the exact value is under 6.8e-39): the unflushed form costs 2
// more instructions than these 17, where erff takes 25 (both its arms when a warp's inputs straddle
// |x| = 0.93).
__device__ __forceinline__ float rlx_erfc_afn(float x) {
  const float a = fabsf(x), t = rlx_erfcc_t(a);
  const float p = rlx_horner(t, -1.8257482f, 1.4427292f, 0.5397006f, 0.13963005f, -0.26875687f,
                             0.40232158f, -1.6377531f, 2.1474745f, -1.1861149f, 0.2465173f);
  float e = rlx_ex2f(fmaf(a * -1.442695f, a, p));
  e *= t;
  return x >= 0.0f ? e : 2.0f - e;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// NaN if either is NaN (fmaxf would drop it): max.NaN / min.NaN, one instruction (sm_80+)
__device__ __forceinline__ float rlx_maxf(float a, float b) { float d; asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float rlx_minf(float a, float b) { float d; asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
#else
__device__ __forceinline__ float rlx_maxf(float a, float b) { return (a != a || b != b) ? RLX_NAN : fmaxf(a, b); }
__device__ __forceinline__ float rlx_minf(float a, float b) { return (a != a || b != b) ? RLX_NAN : fminf(a, b); }
#endif
template <typename T> __device__ __forceinline__ T rlx_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T rlx_min(T a, T b) { return a < b ? a : b; }
template <typename T> __device__ __forceinline__ T rlx_div(T a, T b) { return b == 0 ? (T)0 : a / b; }
template <typename T> __device__ __forceinline__ T rlx_rem(T a, T b) { return b == 0 ? (T)0 : a % b; }

// log2(e) x an additive attention mask's value (the fused attention kernels
// keep their scores in log2 units), kept finite where the mask is: a mask of
// the type's lowest (Hugging Face's finfo(dtype).min, f32 or bf16) overflows
// to -inf there, and a row masked so throughout (a left-padded query) would
// come out NaN where the reference's is uniform (-3.4e38 + score rounds to
// -3.4e38 for every key), and its NaN would reach every row that reads it
// as a key in the next layer.
__device__ __forceinline__ float rlx_mask_log2(float m) {
  const float t = 1.44269504f * m;  // the float nearest log2(e), as the kernels' LOG2E
  return t == -RLX_INF && m != -RLX_INF ? -3.40282347e38f : t;
}

// Reductions of the row kernels (reduce, softmax, norms).
struct RlxSum { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct RlxProd { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct RlxMax {
  __device__ __forceinline__ float operator()(float a, float b) const { return rlx_maxf(a, b); }
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }
};
struct RlxMin {
  __device__ __forceinline__ float operator()(float a, float b) const { return rlx_minf(a, b); }
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? a : b; }
};
// Online softmax state: the running max and the sum of exp(x - max).
struct RlxMS { float m, s; };
// The rescale takes __expf: its error grows with |a.m - m|, as the term's weight
// exp(a.m - m) shrinks, so it stays under 1e-7 of the sum; expf's longer code took
// the merged softmax rows from 80 to 128 registers (H100: 77% -> 63% of copy
// bandwidth at rows of 32768). A state at the max is kept as it is (no
// exp(-inf - -inf) for the identity or an all -inf part).
struct RlxMSMerge {
  __device__ __forceinline__ RlxMS operator()(RlxMS a, RlxMS b) const {
    const float m = fmaxf(a.m, b.m);  // never NaN: NaN inputs go into s
    return {m, (a.m == m ? a.s : a.s * __expf(a.m - m)) + (b.m == m ? b.s : b.s * __expf(b.m - m))};
  }
};
// N rows' online softmax states at once (the packed columns form: a thread
// takes N neighbouring rows; rlx_column_ms_reduce).
template <int N> struct RlxMSN { RlxMS a[N]; };
__device__ __forceinline__ void rlx_ms_add(RlxMS& a, float v) {
  // NaN makes s NaN (below); so does +inf, as in two passes (exp(inf - inf)):
  // the rescale alone would give s = 1 and leave the row's other outputs 0
  if (v > a.m) { a.s = v == RLX_INF ? RLX_NAN : a.s * expf(a.m - v) + 1.0f; a.m = v; }
  else if (v != -RLX_INF) a.s += expf(v - a.m);
}
// rlx_ms_add of N elements at once (the stream form's 16-byte accesses): one
// rescale to their max, no branch per element, and exp(v - m) as
// 2^((v - m) log2(e)) (a subtraction, a product and an approximate 2^x each):
// for results rounded to f16/bf16 only, where expf's full range reduction costs
// about twice the instructions.
// NaN or +inf makes s NaN, as rlx_ms_add; elements of -inf add nothing.
template <int N> __device__ __forceinline__ void rlx_ms_add_n_afn(RlxMS& a, const float (&v)[N]) {
  float mx = v[0];
  #pragma unroll
  for (int i = 1; i < N; ++i) mx = fmaxf(mx, v[i]);
  const float nm = fmaxf(a.m, mx);
  if (nm == -RLX_INF) {
    #pragma unroll
    for (int i = 0; i < N; ++i) if (v[i] != v[i]) a.s = RLX_NAN;
    return;
  }
  // x - max first: fmaf(x, log2e, -fl(max * log2e)) would leave the rounding of
  // max * log2e in every exponent (half an ulp of 1.4e9 for a row masked with
  // -1e9: a factor of up to 2^64), differently for threads whose maxima differ
  float t = 0.0f;
  #pragma unroll
  for (int i = 0; i < N; ++i) t += rlx_ex2f((v[i] - nm) * 1.44269504f);  // +inf: inf - inf, NaN
  a.s = fmaf(a.s, rlx_ex2f((a.m - nm) * 1.44269504f), t);
  a.m = nm;
}
// Welford state: count, mean, sum of squared deviations (Chan's merge).
struct RlxWelford { float n, mean, m2; };
struct RlxWelfordMerge {
  __device__ __forceinline__ RlxWelford operator()(RlxWelford a, RlxWelford b) const {
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    const float n = a.n + b.n, d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
  }
};
__device__ __forceinline__ void rlx_welford_add(RlxWelford& a, float v) {
  a.n += 1.0f;
  const float d = v - a.mean;
  a.mean += d / a.n;
  a.m2 += d * (v - a.mean);
}
template <typename T> __device__ __forceinline__ T rlx_shfl(T v, int o, unsigned int mask = 0xffffffffu) {
  return __shfl_xor_sync(mask, v, o);
}
__device__ __forceinline__ RlxMS rlx_shfl(RlxMS v, int o, unsigned int mask = 0xffffffffu) {
  return {rlx_shfl(v.m, o, mask), rlx_shfl(v.s, o, mask)};
}
__device__ __forceinline__ RlxWelford rlx_shfl(RlxWelford v, int o, unsigned int mask = 0xffffffffu) {
  return {rlx_shfl(v.n, o, mask), rlx_shfl(v.mean, o, mask), rlx_shfl(v.m2, o, mask)};
}
// Reduces v over the block; every thread gets the result. smem holds 32 T.
template <typename T, typename Op>
__device__ __forceinline__ T rlx_block_reduce(T v, Op op, T identity, T* smem) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nw ? smem[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o));
    if (lane == 0) smem[0] = v;
  }
  __syncthreads();
  return smem[0];
}
// Reduces v over the Y threads of a block column (threadIdx.y, the same
// threadIdx.x of an X x Y block) through slots of X x Y T, folded in order of
// threadIdx.y (the same bits in every column); every thread gets its column's.
template <int Y, typename T, typename Op>
__device__ __forceinline__ T rlx_column_reduce(T v, Op op, T* slots) {
  if (Y == 1) return v;
  __syncthreads();  // the slots' last use is over
  slots[threadIdx.y * blockDim.x + threadIdx.x] = v;
  __syncthreads();
  T r = slots[threadIdx.x];
#pragma unroll
  for (int y = 1; y < Y; ++y) r = op(r, slots[y * blockDim.x + threadIdx.x]);
  return r;
}
// Reduces v over the warp; every lane gets the result (the warp form of the
// row kernels: no shared memory, no barrier).
template <typename T, typename Op>
__device__ __forceinline__ T rlx_warp_reduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o));
  return v;
}

// Thread-block clusters (sm_90+): the cluster form of the row kernels splits
// a row over the C blocks of a cluster (`__cluster_dims__(C, 1, 1)`), and
// combines their statistics through distributed shared memory. The kernel
// opens with rlx_cluster_arrive(); the first rlx_cluster_reduce waits on
// it (no block writes into another before every block of the cluster has
// started), each reduction then ends in a full cluster barrier, so no block
// leaves while another may still write into its shared memory.
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned int rlx_cluster_rank() {
  unsigned int r; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ void rlx_cluster_arrive() { asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); }
// Reduces v over the cluster: over the block, then block b's value is
// written to slot b of every block's `slots` (C of them), then each block
// folds slots 0..C-1 in order: every thread of the cluster gets the same bits.
template <int C, bool First, typename T, typename Op>
__device__ __forceinline__ T rlx_cluster_reduce(T v, Op op, T identity, T* smem, T* slots) {
  v = rlx_block_reduce(v, op, identity, smem);
  if (First) asm volatile("barrier.cluster.wait;" ::: "memory");
  if (threadIdx.x < C) {
    unsigned long long remote;
    asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(slots + rlx_cluster_rank()), "r"((unsigned int)threadIdx.x));
    *reinterpret_cast<T*>(remote) = v;
  }
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
  T r = slots[0];
#pragma unroll
  for (int b = 1; b < C; ++b) r = op(r, slots[b]);
  return r;
}
#elif defined(RLX_EMULATE)
// The same on the host emulator (emulator_prelude.h: a cluster's blocks run
// at once, each with its own shared memory; the blocks' slots found through
// a table each block fills before the writes).
__device__ __forceinline__ unsigned int rlx_cluster_rank() { return rlx_emu_rank; }
__device__ __forceinline__ void rlx_cluster_arrive() { rlx_emu_cluster_arrive(); }
template <int C, bool First, typename T, typename Op>
__device__ __forceinline__ T rlx_cluster_reduce(T v, Op op, T identity, T* smem, T* slots) {
  v = rlx_block_reduce(v, op, identity, smem);
  if (First) rlx_emu_cluster_wait();
  T* const* all = rlx_emu_cluster_slots(slots);
  if (threadIdx.x < C) all[threadIdx.x][rlx_cluster_rank()] = v;
  rlx_emu_cluster_sync();
  T r = slots[0];
  for (int b = 1; b < C; ++b) r = op(r, slots[b]);
  return r;
}
#endif

// The grid form of the row kernels: a row split over C blocks that are not a
// cluster, whose statistics meet through global memory. Loads of another
// block's slots go through L2 (ld.global.cg), past this SM's L1.
__device__ __forceinline__ float rlx_ldcg(const float* p) { return __ldcg(p); }
__device__ __forceinline__ RlxMS rlx_ldcg(const RlxMS* p) {
  const float* f = reinterpret_cast<const float*>(p);
  return {__ldcg(f), __ldcg(f + 1)};
}
__device__ __forceinline__ RlxWelford rlx_ldcg(const RlxWelford* p) {
  const float* f = reinterpret_cast<const float*>(p);
  return {__ldcg(f), __ldcg(f + 1), __ldcg(f + 2)};
}
// Waits until the counter *count (which only grows) reaches `target`,
// sleeping `ns` between reads, and makes what was written before it counted
// visible to this thread.
__device__ __forceinline__ void rlx_wait_count(const unsigned long long* count, unsigned long long target,
                                               unsigned int ns) {
  for (;;) {
    unsigned long long seen;
#ifdef RLX_EMULATE
    seen = __atomic_load_n(count, __ATOMIC_ACQUIRE);
#else
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(seen) : "l"(count) : "memory");
#endif
    if (seen >= target) break;
    __nanosleep(ns);
  }
  __threadfence();
}
// Counts this block's arrival at *arrived and waits for the C arrivals of its
// round (the counter only grows: the round of an arrival is its count / C).
template <int C>
__device__ __forceinline__ void rlx_arrive_and_wait(unsigned long long* arrived) {
  rlx_wait_count(arrived, (atomicAdd(arrived, 1ull) / C + 1ull) * C, 100);
}
// Reduces v over the C blocks of a row: over the block, then block `rank`'s
// value to parts[rank], made visible before its arrival is counted at
// *arrived; thread 0 waits for the row's C arrivals of this round (the
// counter only grows: the round of an arrival is its count / C), then the
// first warp folds parts[0..C-1] (lane l those at l, l + 32, ..., then the
// lanes by shuffles) and hands the result to the block through smem[0]. Every
// block folds the same values the same way, so all of the row's threads get
// the same bits. One warp per block reads the slots: with every thread
// reading them, the row's blocks sent C × blockDim.x / 32 requests each to
// the same few L2 lines. The row's blocks must be resident together (see
// `_grid_row`).
template <int C, typename T, typename Op>
__device__ __forceinline__ T rlx_grid_reduce(T v, Op op, T identity, T* smem, T* parts,
                                             unsigned long long* arrived, int rank) {
  v = rlx_block_reduce(v, op, identity, smem);
  if (threadIdx.x == 0) {
    parts[rank] = v;
    __threadfence();
    rlx_arrive_and_wait<C>(arrived);
  }
  __syncthreads();  // also: every thread has read the block reduction's smem[0]
  if (threadIdx.x < 32) {
    T r = threadIdx.x < C ? rlx_ldcg(parts + threadIdx.x) : identity;
#pragma unroll
    for (int b = 32; b < C; b += 32)
      if (b + threadIdx.x < C) r = op(r, rlx_ldcg(parts + b + threadIdx.x));
    r = rlx_warp_reduce(r, op);
    if (threadIdx.x == 0) smem[0] = r;
  }
  __syncthreads();
  return smem[0];
}

// Scatter updates (rlx.scatter_nd): *p = op(*p, v) atomically, for the
// element types without a native atomic of that op: a compare-and-swap loop
// on the 32- or 64-bit word (a 16-bit element's word is the aligned 32 bits
// around it; its neighbour is left as it is).
template <typename Op> __device__ __forceinline__ void rlx_atomic(float* p, float v, Op op) {
  unsigned int* a = reinterpret_cast<unsigned int*>(p);
  unsigned int old = *a, seen;
  do { seen = old; old = atomicCAS(a, seen, __float_as_uint(op(__uint_as_float(seen), v))); } while (old != seen);
}
template <typename Op> __device__ __forceinline__ void rlx_atomic(int* p, int v, Op op) {
  int old = *p, seen;
  do { seen = old; old = atomicCAS(p, seen, op(seen, v)); } while (old != seen);
}
template <typename Op> __device__ __forceinline__ void rlx_atomic(long long* p, long long v, Op op) {
  unsigned long long* a = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *a, seen;
  do {
    seen = old;
    old = atomicCAS(a, seen, (unsigned long long)op((long long)seen, v));
  } while (old != seen);
}
// A 16-bit float element (f16 or bf16, by Bf16) combined with v in f32 and
// rounded back.
template <bool Bf16, typename Op> __device__ __forceinline__ void rlx_atomic16(unsigned short* p, float v, Op op) {
  unsigned int* a = reinterpret_cast<unsigned int*>(reinterpret_cast<size_t>(p) & ~(size_t)3);
  const int sh = (reinterpret_cast<size_t>(p) & 2) ? 16 : 0;
  unsigned int old = *a, seen;
  do {
    seen = old;
    const unsigned short h = (unsigned short)(seen >> sh);
    const float f = Bf16 ? rlx_ld_bf16(h) : rlx_ld_f16(h);
    const unsigned short r = Bf16 ? rlx_st_bf16(op(f, v)) : rlx_st_f16(op(f, v));
    old = atomicCAS(a, seen, (seen & ~(0xffffu << sh)) | ((unsigned int)r << sh));
  } while (old != seen);
}

// The columns form over blocks: a group of X rows (threadIdx.x) whose
// slices are spread over the Y threads (threadIdx.y) of C blocks. Reduces v
// over the block column (rlx_column_reduce), then block `rank`'s column
// values go to parts[rank * X + x], made visible before the block's arrival
// is counted at *arrived; thread (0, 0) waits for the group's C arrivals of
// this round (as rlx_grid_reduce), then the threads of slice row 0 fold
// parts[x], parts[X + x], ... in order of rank (every block of the group the
// same bits) and hand their column's result over through slots[x]. The
// group's blocks must be resident together.
template <int Y, int C, typename T, typename Op>
__device__ __forceinline__ T rlx_column_grid_reduce(T v, Op op, T* slots, T* parts, unsigned long long* arrived,
                                                    int rank) {
  v = rlx_column_reduce<Y>(v, op, slots);
  if (threadIdx.y == 0) {
    parts[rank * blockDim.x + threadIdx.x] = v;
    __threadfence();
  }
  __syncthreads();  // also: every thread has read its column's slots
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    rlx_arrive_and_wait<C>(arrived);
  }
  __syncthreads();
  if (threadIdx.y == 0) {
    T r = rlx_ldcg(parts + threadIdx.x);
#pragma unroll
    for (int b = 1; b < C; ++b) r = op(r, rlx_ldcg(parts + b * blockDim.x + threadIdx.x));
    slots[threadIdx.x] = r;
  }
  __syncthreads();
  return slots[threadIdx.x];
}

// The packed columns form's meeting (COLUMN_PACKED): each thread of an X x Y
// block holds the (max, sum)s of its W rows over its slice. They go to
// slots[y][x][w] (Y * X * W RlxMS); thread (x, w) for w < W folds row w of
// column x over the Y slices, the max first and then each sum rescaled to it
// once (Y exponentials, where a chain of merges took 2 (Y - 1) in every
// thread); over C blocks (C > 1) block `rank`'s go to parts[rank][x][w],
// made visible before its arrival is counted at *arrived, and threads
// (x, w) fold the C blocks' in order of rank (every block of the group the
// same bits). Every thread gets its W rows' states. The group's blocks must
// be resident together.
__device__ __forceinline__ RlxMS rlx_ms_fold(const RlxMS* p, int n, int stride) {
  float m = -RLX_INF;
  for (int i = 0; i < n; ++i) m = fmaxf(m, p[i * stride].m);  // never NaN: NaN inputs are in the sums
  float s = 0.0f;
  for (int i = 0; i < n; ++i) {
    const RlxMS t = p[i * stride];
    s += t.m == m ? t.s : t.s * __expf(t.m - m);
  }
  return {m, s};
}
template <int Y, int C, int W>
__device__ __forceinline__ RlxMSN<W> rlx_column_ms_reduce(const RlxMSN<W>& v, RlxMS* slots, RlxMS* parts,
                                                          unsigned long long* arrived, int rank) {
  const int X = blockDim.x, x = threadIdx.x, w = threadIdx.y;
  __syncthreads();  // the slots' last use is over
#pragma unroll
  for (int i = 0; i < W; ++i) slots[(threadIdx.y * X + x) * W + i] = v.a[i];
  __syncthreads();
  if (w < W) {
    const RlxMS r = rlx_ms_fold(slots + x * W + w, Y, X * W);
    if (C > 1) {
      parts[(rank * X + x) * W + w] = r;
      __threadfence();
    } else {
      slots[x * W + w] = r;  // slot (0, x, w): read above by this thread only
    }
  }
  if (C > 1) {
    __syncthreads();
    if (x == 0 && threadIdx.y == 0) rlx_arrive_and_wait<C>(arrived);
    __syncthreads();
    if (w < W) {
      float m = -RLX_INF;
#pragma unroll
      for (int b = 0; b < C; ++b) m = fmaxf(m, rlx_ldcg(parts + (b * X + x) * W + w).m);
      float s = 0.0f;
#pragma unroll
      for (int b = 0; b < C; ++b) {
        const RlxMS t = rlx_ldcg(parts + (b * X + x) * W + w);
        s += t.m == m ? t.s : t.s * __expf(t.m - m);
      }
      slots[x * W + w] = {m, s};
    }
  }
  __syncthreads();
  RlxMSN<W> r;
#pragma unroll
  for (int i = 0; i < W; ++i) r.a[i] = slots[x * W + i];
  return r;
}
// Reduces v over an aligned group of G lanes (a power of two under 32); every
// lane of the group gets it. Only the group's lanes shuffle, so a group may
// leave its loop while the warp's others go on.
template <int G, typename T, typename Op>
__device__ __forceinline__ T rlx_group_reduce(T v, Op op) {
  const unsigned int mask = ((1u << G) - 1u) << ((threadIdx.x & 31) & ~(G - 1));
  for (int o = G / 2; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o, mask));
  return v;
}

// Paired f16/bf16 conversions for 16-byte accesses: a 32-bit word holds
// element 2k in its low half and element 2k+1 in its high half; a uint4
// holds 8 elements. Two floats are converted by one instruction on sm_80+.
__device__ __forceinline__ float2 rlx_ld2_f16(unsigned int v) {
#ifdef RLX_EMULATE
  return make_float2(rlx_ld_f16((unsigned short)(v & 0xffffu)), rlx_ld_f16((unsigned short)(v >> 16)));
#else
  float2 f;
  asm("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.f32.f16 %0, lo; cvt.f32.f16 %1, hi;}" : "=f"(f.x), "=f"(f.y) : "r"(v));
  return f;
#endif
}
__device__ __forceinline__ float2 rlx_ld2_bf16(unsigned int v) {
  return make_float2(__uint_as_float(v << 16), __uint_as_float(v & 0xffff0000u));
}
// 16 bytes from global to shared memory without a register on the way
// (cp.async, sm_80+; a plain copy before), in flight until
// rlx_cp_async_wait_all; the copies a thread waits for are its own.
__device__ __forceinline__ void rlx_cp_async16(void* s, const void* g) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g)
               : "memory");
#else
  *reinterpret_cast<uint4*>(s) = *reinterpret_cast<const uint4*>(g);
#endif
}
__device__ __forceinline__ void rlx_cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
// The same as volatile asm: converted again at each use, never kept as two
// floats from one use to the next (a form holding 16-byte items in registers
// across passes, whose converted copies would not fit: COLUMN_GRID_VECTORS).
__device__ __forceinline__ float2 rlx_ld2v_f16(unsigned int v) {
#ifdef RLX_EMULATE
  return rlx_ld2_f16(v);
#else
  float2 f;
  asm volatile("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.f32.f16 %0, lo; cvt.f32.f16 %1, hi;}"
               : "=f"(f.x), "=f"(f.y) : "r"(v));
  return f;
#endif
}
__device__ __forceinline__ float2 rlx_ld2v_bf16(unsigned int v) {
#ifdef RLX_EMULATE
  return rlx_ld2_bf16(v);
#else
  unsigned int lo, hi;  // early-clobber: lo is written before v is read again
  asm volatile("{shl.b32 %0, %2, 16; and.b32 %1, %2, 0xffff0000;}" : "=&r"(lo), "=&r"(hi) : "r"(v));
  return make_float2(__uint_as_float(lo), __uint_as_float(hi));
#endif
}
__device__ __forceinline__ unsigned int rlx_st2_f16(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned int v; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(v) : "f"(hi), "f"(lo)); return v;
#else
  return (unsigned int)rlx_st_f16(lo) | ((unsigned int)rlx_st_f16(hi) << 16);
#endif
}
__device__ __forceinline__ unsigned int rlx_st2_bf16(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned int v; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(v) : "f"(hi), "f"(lo)); return v;
#else
  return (unsigned int)rlx_st_bf16(lo) | ((unsigned int)rlx_st_bf16(hi) << 16);
#endif
}
// The 16 bytes at byte a - h of p (a 16-byte aligned, 0 <= h < 16, h a
// multiple of the element size; a - h >= 0): the aligned vectors at a - 16
// (where h > 0) and a, shifted by h bytes (funnel shifts of 32-bit words).
// The windowed row form's per-column params, realigned to the row's start
// (h is uniform across a row there, so its selects do not diverge), and
// the elementwise form's cyclic rows in regions that only move their
// elements (elementwise.CYCLIC_WINDOW: h differs from thread to thread).
__device__ __forceinline__ uint4 rlx_ld_window(const void* p, long long a, int h) {
  const uint4* v = reinterpret_cast<const uint4*>(static_cast<const char*>(p) + a);
  const uint4 hi = __ldg(v);
  if (h == 0) return hi;
  const uint4 lo = __ldg(v - 1);
  const unsigned int u[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int sb = 16 - h, q = sb >> 2, sh = (sb & 3) * 8;
  unsigned int w[5];
#pragma unroll
  for (int j = 0; j < 5; ++j) w[j] = q == 0 ? u[j] : q == 1 ? u[j + 1] : q == 2 ? u[j + 2] : u[j + 3];
  return make_uint4(__funnelshift_r(w[0], w[1], sh), __funnelshift_r(w[1], w[2], sh),
                    __funnelshift_r(w[2], w[3], sh), __funnelshift_r(w[3], w[4], sh));
}
// The same 16 bytes from a param's shifted copies (rows.PARAM_COPIES): copy
// s, `copy_bytes` long, holds the param s elements later (zeros before and
// after it), so the bytes at a - s * element size of the param are one
// aligned read at byte a of copy s.
__device__ __forceinline__ uint4 rlx_ld_copy(const void* w, int s, long long copy_bytes, long long a) {
  return __ldg(reinterpret_cast<const uint4*>(static_cast<const char*>(w) + s * copy_bytes + a));
}
// Element i (0: the low half, 1: the high) of a word of two f16/bf16
// elements, as f32; the word with element i replaced (the 16-bit rows held
// two elements per register).
__device__ __forceinline__ float rlx_half_f16(unsigned int w, int i) {
  return rlx_ld_f16((unsigned short)(i ? w >> 16 : w & 0xffffu));
}
__device__ __forceinline__ float rlx_half_bf16(unsigned int w, int i) {
  return __uint_as_float(i ? w & 0xffff0000u : w << 16);
}
__device__ __forceinline__ unsigned int rlx_with_half(unsigned int w, int i, unsigned short e) {
  return i ? (w & 0xffffu) | ((unsigned int)e << 16) : (w & 0xffff0000u) | e;
}
// The larger of each pair of f16 (bf16) elements of two words, NaN where
// either is NaN: max.NaN.f16x2 / .bf16x2, one instruction (sm_80+); before,
// through floats (a 16-bit value is exact as a float and back). argmax's
// held-best form (rows.ARGMAX_HELD_DTYPES) takes an item's largest element
// with these.
__device__ __forceinline__ unsigned int rlx_max2_f16(unsigned int a, unsigned int b) {
#if __CUDA_ARCH__ >= 800
  unsigned int d; asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
#else
  const float2 x = rlx_ld2_f16(a), y = rlx_ld2_f16(b);
  return rlx_st2_f16(rlx_maxf(x.x, y.x), rlx_maxf(x.y, y.y));
#endif
}
__device__ __forceinline__ unsigned int rlx_max2_bf16(unsigned int a, unsigned int b) {
#if __CUDA_ARCH__ >= 800
  unsigned int d; asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
#else
  const float2 x = rlx_ld2_bf16(a), y = rlx_ld2_bf16(b);
  return rlx_st2_bf16(rlx_maxf(x.x, y.x), rlx_maxf(x.y, y.y));
#endif
}
// Per pair of f16 (bf16) elements of two words: 0xffff in each half where
// a > b (ordered: 0 where either is NaN), and where a is NaN. set.gt/.nan
// .u32.f16x2 (sm_53+) and .bf16x2 (sm_90), one instruction a pair; before,
// through floats. argmax's packed columns form (rows.ARGMAX_COLUMN_PACKED).
__device__ __forceinline__ unsigned int rlx_gt2_f16(unsigned int a, unsigned int b) {
#if __CUDA_ARCH__ >= 800
  unsigned int d; asm("set.gt.u32.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
#else
  const float2 x = rlx_ld2_f16(a), y = rlx_ld2_f16(b);
  return (x.x > y.x ? 0xffffu : 0u) | (x.y > y.y ? 0xffff0000u : 0u);
#endif
}
__device__ __forceinline__ unsigned int rlx_nan2_f16(unsigned int a) {
#if __CUDA_ARCH__ >= 800
  unsigned int d; asm("set.nan.u32.f16x2 %0, %1, %1;" : "=r"(d) : "r"(a)); return d;
#else
  const float2 x = rlx_ld2_f16(a);
  return (x.x != x.x ? 0xffffu : 0u) | (x.y != x.y ? 0xffff0000u : 0u);
#endif
}
__device__ __forceinline__ unsigned int rlx_gt2_bf16(unsigned int a, unsigned int b) {
#if __CUDA_ARCH__ >= 900
  unsigned int d; asm("set.gt.u32.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
#else
  const float2 x = rlx_ld2_bf16(a), y = rlx_ld2_bf16(b);
  return (x.x > y.x ? 0xffffu : 0u) | (x.y > y.y ? 0xffff0000u : 0u);
#endif
}
__device__ __forceinline__ unsigned int rlx_nan2_bf16(unsigned int a) {
#if __CUDA_ARCH__ >= 900
  unsigned int d; asm("set.nan.u32.bf16x2 %0, %1, %1;" : "=r"(d) : "r"(a)); return d;
#else
  const float2 x = rlx_ld2_bf16(a);
  return (x.x != x.x ? 0xffffu : 0u) | (x.y != x.y ? 0xffff0000u : 0u);
#endif
}
// 8 elements of a uint4 to floats f[0..7], and back (rounded to nearest even).
__device__ __forceinline__ void rlx_ld8_f16(uint4 v, float* f) {
  float2 t;
  t = rlx_ld2_f16(v.x); f[0] = t.x; f[1] = t.y; t = rlx_ld2_f16(v.y); f[2] = t.x; f[3] = t.y;
  t = rlx_ld2_f16(v.z); f[4] = t.x; f[5] = t.y; t = rlx_ld2_f16(v.w); f[6] = t.x; f[7] = t.y;
}
__device__ __forceinline__ void rlx_ld8_bf16(uint4 v, float* f) {
  float2 t;
  t = rlx_ld2_bf16(v.x); f[0] = t.x; f[1] = t.y; t = rlx_ld2_bf16(v.y); f[2] = t.x; f[3] = t.y;
  t = rlx_ld2_bf16(v.z); f[4] = t.x; f[5] = t.y; t = rlx_ld2_bf16(v.w); f[6] = t.x; f[7] = t.y;
}
__device__ __forceinline__ uint4 rlx_st8_f16(const float* f) {
  return make_uint4(rlx_st2_f16(f[0], f[1]), rlx_st2_f16(f[2], f[3]), rlx_st2_f16(f[4], f[5]), rlx_st2_f16(f[6], f[7]));
}
__device__ __forceinline__ uint4 rlx_st8_bf16(const float* f) {
  return make_uint4(rlx_st2_bf16(f[0], f[1]), rlx_st2_bf16(f[2], f[3]), rlx_st2_bf16(f[4], f[5]), rlx_st2_bf16(f[6], f[7]));
}
// f rounded to bf16 (nearest even; NaN stays NaN), as a float: one
// instruction on sm_80+ (the rounded value packed into the high half of a
// word whose low half is bf16 zero), where rlx_round_bf16 takes three.
__device__ __forceinline__ float rlx_round_bf16_cvt(float f) {
#if __CUDA_ARCH__ >= 800
  unsigned int u; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(f), "f"(0.0f)); return __uint_as_float(u);
#else
  return rlx_round_bf16(f);
#endif
}

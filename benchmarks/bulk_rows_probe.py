"""A probe, not part of rlxc: long-row layer_norm, softmax and rms_norm by
hand-written kernels that bring each row into shared memory with one bulk copy
(`cp.async.bulk`, Hopper's 1-D TMA, completing on an mbarrier), then take the
statistics and the output from shared memory (16-byte accesses, f32 math, the
params from shifted copies as rlxc's `_with_copies`). Configurations
THREADS:NBUF:BPS: blocks of THREADS, NBUF row buffers per block (NBUF - 1 rows
copied ahead of the one computed), BPS blocks per multiprocessor in a
persistent grid (0: a block per row). Prints each case's device time (CUDA
events, gpu.py's torch_time), its fraction of the copy bandwidth at the same
size, and the largest difference from PyTorch. Needs CuPy (the device machine
has it) and sm_90. RESULTS.md, session 52, has what it measured.

    python3 benchmarks/bulk_rows_probe.py OPS DTYPES ROWS [MIB] [CONFIGS]
    python3 benchmarks/bulk_rows_probe.py layer_norm,softmax,rms_norm f32,f16,bf16 \
        16385,20001,24577,28001,32768 64 512:1:0,512:2:2,256:2:4,512:2:1,512:3:1,1024:2:1,256:3:2
"""
import sys
import numpy as np
import torch
import cupy as cp
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from gpu import torch_time  # noqa

SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef unsigned long long u64;
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float* red) {
  #pragma unroll
  for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < THREADS / 32 ? red[threadIdx.x] : 0.f;
  if (threadIdx.x < 32) {
    #pragma unroll
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) red[32] = v;
  }
  __syncthreads();
  return red[32];
}
template <int THREADS>
__device__ __forceinline__ float block_max(float v, float* red) {
  #pragma unroll
  for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < THREADS / 32 ? red[threadIdx.x] : __int_as_float(0xff800000);
  if (threadIdx.x < 32) {
    #pragma unroll
    for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (threadIdx.x == 0) red[32] = v;
  }
  __syncthreads();
  return red[32];
}


template <typename T> struct V { static constexpr int N = 16 / sizeof(T); };
__device__ __forceinline__ void unpack4(const uint4& u, float* f, float) { f[0] = __uint_as_float(u.x); f[1] = __uint_as_float(u.y); f[2] = __uint_as_float(u.z); f[3] = __uint_as_float(u.w); }
__device__ __forceinline__ float2 h2f(unsigned w, __half) { return __half22float2(*(const __half2*)&w); }
__device__ __forceinline__ float2 h2f(unsigned w, __nv_bfloat16) { return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u)); }
__device__ __forceinline__ unsigned f2h(float a, float b, __half) { __half2 h = __floats2half2_rn(a, b); return *(unsigned*)&h; }
__device__ __forceinline__ unsigned f2h(float a, float b, __nv_bfloat16) { __nv_bfloat162 h = __floats2bfloat162_rn(a, b); return *(unsigned*)&h; }
template <typename T>
__device__ __forceinline__ void unpack(const uint4& u, float* f) {
  if constexpr (sizeof(T) == 4) { unpack4(u, f, 0.f); }
  else {
    float2 a = h2f(u.x, T()), b = h2f(u.y, T()), c = h2f(u.z, T()), d = h2f(u.w, T());
    f[0] = a.x; f[1] = a.y; f[2] = b.x; f[3] = b.y; f[4] = c.x; f[5] = c.y; f[6] = d.x; f[7] = d.y;
  }
}
template <typename T>
__device__ __forceinline__ uint4 pack(const float* f) {
  if constexpr (sizeof(T) == 4) return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
  else return make_uint4(f2h(f[0], f[1], T()), f2h(f[2], f[3], T()), f2h(f[4], f[5], T()), f2h(f[6], f[7], T()));
}

// Row r's aligned span [floor16(start), ceil16(end)) into buffer `s` by one bulk copy
// (bytes outside the row share a 16-byte block, so a page, with a byte of it).
template <typename T>
__device__ __forceinline__ void issue(const T* x, long long r, int n, unsigned char* s, u64* bar) {
  const size_t A = (size_t)(x + r * n), E = A + (size_t)n * sizeof(T);
  const size_t lo = A & ~(size_t)15, hi = (E + 15) & ~(size_t)15;
  unsigned bytes = (unsigned)(hi - lo);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(sa(s)), "l"(lo), "r"(bytes), "r"(sa(bar)) : "memory");
}
__device__ __forceinline__ void wait(u64* bar, unsigned parity) {
  unsigned ok;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok) : "r"(sa(bar)), "r"(parity) : "memory");
  } while (!ok);
}

// OP 0 layer_norm, 1 softmax, 2 rms_norm. Blocks take rows blockIdx.x, + gridDim.x, ...;
// NBUF row buffers (NBUF - 1 rows in flight ahead of the one computed).
template <typename T, int THREADS, int NBUF, int OP>
__global__ void __launch_bounds__(THREADS) rowk(const T* __restrict__ x, const T* __restrict__ gs,
    const T* __restrict__ bs, T* __restrict__ y, long long rows, int n, float eps, int pstride, int bufbytes) {
  extern __shared__ __align__(128) unsigned char sm[];
  __shared__ __align__(8) u64 bars[NBUF];
  __shared__ float red[33];
  constexpr int W = V<T>::N;
  const long long G = gridDim.x;
  if (threadIdx.x == 0) {
    #pragma unroll
    for (int b = 0; b < NBUF; b++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bars[b])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    #pragma unroll
    for (int k = 0; k < NBUF - 1; k++)
      if (blockIdx.x + k * G < rows) issue(x, blockIdx.x + k * G, n, sm + k * bufbytes, &bars[k]);
  }
  __syncthreads();
  int it = 0;
  for (long long r = blockIdx.x; r < rows; r += G, it++) {
    const int buf = it % NBUF;
    if (threadIdx.x == 0 && r + (NBUF - 1) * G < rows)
      issue(x, r + (NBUF - 1) * G, n, sm + ((it + NBUF - 1) % NBUF) * bufbytes, &bars[(it + NBUF - 1) % NBUF]);
    const size_t A = (size_t)(x + r * n);
    const int d = (int)((A & 15) / sizeof(T));
    const int nv = (int)((((A + (size_t)n * sizeof(T) + 15) & ~(size_t)15) - (A & ~(size_t)15)) >> 4);
    const uint4* sv = (const uint4*)(sm + buf * bufbytes);
    wait(&bars[buf], (it / NBUF) & 1);
    float s1 = OP == 1 ? __int_as_float(0xff800000) : 0.f;
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      float f[W]; unpack<T>(sv[v], f);
      const bool edge = v == 0 || v == nv - 1;
      #pragma unroll
      for (int j = 0; j < W; j++) {
        const int k = v * W + j - d;
        if (!edge || (k >= 0 && k < n)) { if (OP == 0) s1 += f[j]; else if (OP == 1) s1 = fmaxf(s1, f[j]); else s1 += f[j] * f[j]; }
      }
    }
    float a1, a2 = 0.f;
    if (OP == 1) a1 = block_max<THREADS>(s1, red); else a1 = block_sum<THREADS>(s1, red) / n;
    if (OP != 2) {
      float s2 = 0.f;
      for (int v = threadIdx.x; v < nv; v += THREADS) {
        float f[W]; unpack<T>(sv[v], f);
        const bool edge = v == 0 || v == nv - 1;
        #pragma unroll
        for (int j = 0; j < W; j++) {
          const int k = v * W + j - d;
          if (!edge || (k >= 0 && k < n)) { if (OP == 0) s2 += (f[j] - a1) * (f[j] - a1); else s2 += __expf(f[j] - a1); }
        }
      }
      a2 = block_sum<THREADS>(s2, red);
    }
    const float scale = OP == 0 ? rsqrtf(a2 / n + eps) : OP == 1 ? 1.f / a2 : rsqrtf(a1 + eps);
    const uint4* g4 = (const uint4*)(gs + (size_t)d * pstride);
    const uint4* b4 = (const uint4*)(bs + (size_t)d * pstride);
    T* yr = y + r * n;
    uint4* y4 = (uint4*)((size_t)yr & ~(size_t)15);
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      float f[W], o[W], g[W], b[W];
      unpack<T>(sv[v], f);
      if (OP != 1) unpack<T>(__ldg(g4 + v), g);
      if (OP == 0) unpack<T>(__ldg(b4 + v), b);
      #pragma unroll
      for (int j = 0; j < W; j++) o[j] = OP == 0 ? (f[j] - a1) * scale * g[j] + b[j] : OP == 1 ? __expf(f[j] - a1) * scale : f[j] * scale * g[j];
      if (v == 0 || v == nv - 1) {
        uint4 p = pack<T>(o); const T* pe = (const T*)&p;
        #pragma unroll
        for (int j = 0; j < W; j++) { int k = v * W + j - d; if (k >= 0 && k < n) yr[k] = pe[j]; }
      } else {
        y4[v] = pack<T>(o);
      }
    }
    __syncthreads();  // buffer `buf` free for the copy issued next iteration
  }
}
"""

TY = {"f32": ("float", torch.float32), "f16": ("__half", torch.float16), "bf16": ("__nv_bfloat16", torch.bfloat16)}


def stride(n, w):
    return -(-(n + 2 * w) // w) * w


def shifted(p: torch.Tensor, w: int) -> torch.Tensor:
    n = p.numel()
    out = torch.zeros(w, stride(n, w), dtype=p.dtype, device=p.device)
    for s in range(w):
        out[s, s:s + n] = p
    return out.contiguous()


OPS = {"layer_norm": 0, "softmax": 1, "rms_norm": 2}
CFG = [(int(a), int(b), int(c)) for a, b, c in (v.split(":") for v in (sys.argv[5] if len(sys.argv) > 5 else "512:1:0,512:2:2,512:3:1,1024:2:1").split(","))]


def main():
    ops = sys.argv[1].split(",")
    dts = sys.argv[2].split(",")
    ns = [int(v) for v in sys.argv[3].split(",")]
    mb = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    names = sorted({f"rowk<{TY[dt][0]}, {th}, {nb}, {OPS[op]}>" for op in ops for dt in dts for th, nb, _ in CFG})
    mod = cp.RawModule(code=SRC, options=("--std=c++17", "-arch=sm_90"), name_expressions=names)
    nbytes = mb * 2**20
    a = torch.empty(nbytes // 4, device="cuda").uniform_(); b = torch.empty_like(a)
    copy_ms = torch_time(b.copy_, (a,), 30, inner=10, warmup=3)
    copy_bw = 2 * nbytes / copy_ms / 1e6
    print(f"copy {mb} MiB: {copy_ms * 1e3:.1f} us, {copy_bw:.0f} GB/s")
    del a, b
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for op in ops:
        for dt in dts:
            cty, tdt = TY[dt]
            sz = torch.tensor([], dtype=tdt).element_size()
            w = 16 // sz
            for n in ns:
                rows = max(1, nbytes // (n * sz))
                x = torch.randn(rows, n, device="cuda", dtype=tdt)
                y = torch.empty_like(x)
                g = torch.randn(n, device="cuda", dtype=tdt); bb = torch.randn(n, device="cuda", dtype=tdt)
                gs, bs = shifted(g, w), shifted(bb, w)
                bufbytes = -(-((n * sz + 30) // 16 * 16) // 128) * 128
                if op == "layer_norm":
                    ref = lambda: torch.nn.functional.layer_norm(x, (n,), g, bb, 1e-5)
                elif op == "softmax":
                    ref = lambda: torch.softmax(x, -1)
                else:
                    ref = lambda: torch.nn.functional.rms_norm(x, (n,), g, 1e-5)
                peer_ms = torch_time(ref, (), 30, inner=10, warmup=3)
                want = ref().float()
                line = f"{op} {dt} {rows}x{n}: torch {peer_ms * 1e3:.1f} us"
                for th, nb, bps in CFG:
                    smem = nb * bufbytes
                    if smem * max(bps, 1) + max(bps, 1) * 1024 > 232448 or smem > 232448 - 1024:
                        line += f" | {th}:{nb}:{bps} -"
                        continue
                    k = mod.get_function(f"rowk<{cty}, {th}, {nb}, {OPS[op]}>")
                    k.max_dynamic_shared_size_bytes = smem
                    grid = rows if bps == 0 else min(rows, sms * bps)
                    args = (np.uint64(x.data_ptr()), np.uint64(gs.data_ptr()), np.uint64(bs.data_ptr()),
                            np.uint64(y.data_ptr()), np.int64(rows), np.int32(n), np.float32(1e-5),
                            np.int32(stride(n, w)), np.int32(bufbytes))
                    call = lambda: k((grid,), (th,), args, shared_mem=smem)
                    y.zero_(); call(); torch.cuda.synchronize()
                    err = (y.float() - want).abs().max().item()
                    ms = torch_time(call, (), 30, inner=10, warmup=3)
                    line += f" | {th}:{nb}:{bps} {ms * 1e3:.1f} us {2 * x.numel() * sz / ms / 1e6 / copy_bw * 100:.0f}% e{err:.1g}"
                print(line, flush=True)
                del x, y
                torch.cuda.empty_cache()


main()

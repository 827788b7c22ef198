"""Streaming patterns of a one-trip f32 kernel, beside torch's copy and GELU
(session 27: how elementwise.BLOCK_THREADS x UNROLL was chosen).

    python3 benchmarks/stream_patterns.py [OUT.json]    # on the GPU machine

For 64 and 512 MiB of f32 input, times (CUDA events, a median of 25
samples of 10 back-to-back launches) an exact-GELU map (rlx_erfcf, as
rlxc's f32 GELU) and an identity map, each in blocks of T threads moving U
float4s a thread (one trip, all loads first), with plain, `__ldcs`
(evict-first), `__ldg`, `__ldlu` or `ld.global.nc.L1::no_allocate` loads
and plain, `__stcs` or `__stwt` stores; beside torch's `copy_` and
`F.gelu`. Each output is checked (GELU against float64 torch, within 1e-5
of its largest value; the copy exactly). Prints µs and GB/s (read + write)
per variant; with OUT.json writes them there.
"""

import json
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from cuda.bindings import driver as cu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rlxc.codegen import HEADERS
from rlxc.runtime.driver_api import check
from rlxc.runtime.nvrtc import compile_cubin

#: The kernel, its shape and accesses given as macros (`source`): TH threads
#: a block, U float4s a thread, LD(p) a load, ST(p, v) a store, BODY(a) the
#: map of one element.
SRC = r'''
extern "C" __global__ void __launch_bounds__(TH) k(const float* __restrict__ in0, float* __restrict__ out0, unsigned n4) {
  const unsigned w0 = (unsigned)blockIdx.x * (TH * U) + threadIdx.x;
  float4 p0[U];
  #pragma unroll
  for (int u = 0; u < U; ++u) { const unsigned w = w0 + u * TH; if (w < n4) p0[u] = LD(reinterpret_cast<const float4*>(in0) + w); }
  #pragma unroll
  for (int u = 0; u < U; ++u) {
    const unsigned w = w0 + u * TH; if (w >= n4) break;
    float q[4] = {p0[u].x, p0[u].y, p0[u].z, p0[u].w};
    #pragma unroll
    for (int l = 0; l < 4; ++l) { float a = q[l]; q[l] = BODY(a); }
    ST(reinterpret_cast<float4*>(out0) + w, make_float4(q[0], q[1], q[2], q[3]));
  }
}
'''
GELU = "(a * 0.5f) * rlx_erfcf(a * -0.7071067690849304f)"
LOADS = {
 "plain": "(*(p))",
 "cs": "__ldcs(p)",
 "nc": "__ldg(p)",
 "lu": "__ldlu(p)",
 "na": "rlx_ld_na(p)",
}
STORES = {"plain": "(*(p) = (v))", "cs": "__stcs(p, v)", "wt": "__stwt(p, v)"}
PRE = r'''
__device__ __forceinline__ float4 rlx_ld_na(const float4* p) { float4 v; asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p)); return v; }
'''


def source(th, u, ld, st, body):
    """The kernel for `th` threads a block, `u` float4s a thread, load `ld`
    and store `st` (LOADS, STORES), `body` the map of element `a`."""
    return ('#include "rlx_kernels.cuh"\n' + PRE + f"#define TH {th}\n#define U {u}\n#define LD(p) {LOADS[ld]}\n"
            f"#define ST(p, v) {STORES[st]}\n#define BODY(a) ({body})\n" + SRC)


def build(th, u, ld, st, body):
    cub = compile_cubin(source(th, u, ld, st, body), "sm_90", "s.cu", headers=HEADERS)
    mod = check(cu.cuModuleLoadData(cub), "load")
    return check(cu.cuModuleGetFunction(mod, b"k"), "fn")


def timeit(fn, reps=10, samples=25):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3): fn()
    ts = []
    for _ in range(samples):
        s.record()
        for _ in range(reps): fn()
        e.record(); e.synchronize(); ts.append(s.elapsed_time(e) * 1000 / reps)
    return statistics.median(ts)

torch.zeros(1, device="cuda")
stream = torch.cuda.current_stream().cuda_stream
res = {}
variants = [(256,2,"plain","plain"),(128,2,"plain","plain"),(128,4,"plain","plain"),(256,4,"plain","plain"),(512,2,"plain","plain"),(256,1,"plain","plain"),(512,1,"plain","plain"),
            (256,2,"cs","plain"),(256,2,"plain","cs"),(256,2,"cs","cs"),(256,2,"nc","plain"),(256,2,"na","plain"),(256,2,"lu","plain"),(256,2,"na","cs"),(128,4,"cs","cs"),(256,2,"plain","wt")]
bodies = (("gelu", GELU), ("copy", "a"))
kernels = {(name, v): build(*v, body) for name, body in bodies for v in variants}  # compiled once, for both sizes
for mb in (64, 512):
    n = mb * 2**20 // 4
    x = torch.randn(n, device="cuda"); y = torch.empty_like(x)
    ref = torch.nn.functional.gelu(x.double()).float()
    row = {}
    row["torch_copy"] = timeit(lambda: y.copy_(x))
    row["torch_gelu"] = timeit(lambda: torch.nn.functional.gelu(x))
    for body_name, _ in bodies:
        for th, u, ld, st in variants:
            fn = kernels[body_name, (th, u, ld, st)]
            n4 = n // 4
            grid = (n4 + th * u - 1) // (th * u)
            a1 = np.array([x.data_ptr()], np.uint64); a2 = np.array([y.data_ptr()], np.uint64); a3 = np.array([n4], np.uint32)
            ptrs = np.array([a1.ctypes.data, a2.ctypes.data, a3.ctypes.data], np.uint64)
            launch = lambda: cu.cuLaunchKernel(fn, grid, 1, 1, th, 1, 1, 0, stream, ptrs.ctypes.data, 0)
            y.zero_(); launch(); torch.cuda.synchronize()
            if body_name == "gelu":
                err = ((y - ref).abs().max() / ref.abs().max()).item(); assert err < 1e-5, err
            else:
                assert torch.equal(y, x)
            row[f"{body_name} t{th} u{u} ld-{ld} st-{st}"] = timeit(launch)
    res[mb] = row
    print(f"== {mb} MiB")
    for k, v in row.items():
        print(f"{k:34s} {v:8.2f} us  {2*mb*2**20/v/1e3:7.0f} GB/s")
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(res, indent=1))

"""Elementwise-kernel design study: which loop shape, index width, unroll,
occupancy and cache hints get a streaming f32 kernel closest to the
device-to-device copy. Run on the GPU machine:

    python benchmarks/ew_variants.py [--n 67108864] [--repeat 100] [--sass DIR]

Each variant is a hand-written kernel around one of three bodies (identity,
the 10-op arithmetic chain and the tanh/sigmoid/exp chain of
`benchmarks/gpu.py`), compiled by rlxc's NVRTC wrapper and timed with CUDA
events (median). Results decide the shape `rlxc/codegen/elementwise.py` emits;
this script is the record of why (see benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rlxc.codegen.common import HEADER as PREAMBLE  # noqa: E402
from rlxc.runtime import nvrtc  # noqa: E402
from rlxc.runtime.driver_api import _driver, device_arch, check as _check  # noqa: E402

BODIES = {
    "copy": "return x;",
    "arith": (
        "x = x * 0.5f; x = x + 0.6f; x = rlx_maxf(x, -0.7f); x = x - 0.8f; x = x * 0.9f; x = fabsf(x);"
        " x = x + 1.1f; x = x * 1.2f; x = rlx_minf(x, 2.5f); return x + 1.4f;"
    ),
    "trans": (
        "x = x * 0.5f; x = x + 0.6f; x = tanhf(x); x = x * 0.8f; x = x - 0.9f;"
        " x = 1.0f / (1.0f + expf(-x)); x = x * 1.1f; x = x + 1.2f; x = expf(x); return x * 1.4f;"
    ),
}

LOADS = {
    "plain": "in4[w]",
    "cs": "__ldcs(&in4[w])",
    "nc256": "ld_nc256(&in4[w])",
}
STORES = {"plain": "out4[w] = r;", "cs": "__stcs(&out4[w], r);"}

HELPERS = r"""
__device__ __forceinline__ float4 ld_nc256(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
"""


def source(body: str, nv: int, loop: str, idx: str, unroll: int, minblocks: int, load: str, store: str) -> str:
    lb = f"256, {minblocks}" if minblocks else "256"
    head = PREAMBLE + HELPERS + f"__device__ __forceinline__ float f(float x) {{ {BODIES[body]} }}\n"
    lanes = "r.x = f(p[u].x); r.y = f(p[u].y); r.z = f(p[u].z); r.w = f(p[u].w);"
    ld, st = LOADS[load], STORES[store]
    sig = f'extern "C" __global__ void __launch_bounds__({lb}) k(const float4* __restrict__ in4, float4* __restrict__ out4) {{\n'
    if loop.startswith("persist"):
        return head + sig + f"""
  const {idx} stride = ({idx})gridDim.x * blockDim.x;
  for ({idx} w0 = ({idx})blockIdx.x * blockDim.x + threadIdx.x; w0 < {nv}; w0 += stride * {unroll}) {{
    float4 p[{unroll}];
    #pragma unroll
    for (int u = 0; u < {unroll}; ++u) {{ const {idx} w = w0 + u * stride; if (w < {nv}) p[u] = {ld}; }}
    #pragma unroll
    for (int u = 0; u < {unroll}; ++u) {{
      const {idx} w = w0 + u * stride; if (w >= {nv}) break;
      float4 r; {lanes} {st}
    }}
  }}
}}
"""
    # blocked: each block owns 256 * unroll consecutive float4s, one trip.
    return head + sig + f"""
  const {idx} w0 = ({idx})blockIdx.x * (256 * {unroll}) + threadIdx.x;
  float4 p[{unroll}];
  #pragma unroll
  for (int u = 0; u < {unroll}; ++u) {{ const {idx} w = w0 + u * 256; if (w < {nv}) p[u] = {ld}; }}
  #pragma unroll
  for (int u = 0; u < {unroll}; ++u) {{
    const {idx} w = w0 + u * 256; if (w >= {nv}) break;
    float4 r; {lanes} {st}
  }}
}}
"""


def reference(body: str, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    if body == "arith":
        x = np.minimum((np.abs((np.maximum(x * 0.5 + 0.6, -0.7) - 0.8) * 0.9) + 1.1) * 1.2, 2.5) + 1.4
    elif body == "trans":
        x = np.tanh(x * 0.5 + 0.6) * 0.8 - 0.9
        x = np.exp((1 / (1 + np.exp(-x))) * 1.1 + 1.2) * 1.4
    return x


def compile_with_log(src: str, arch: str) -> tuple[bytes, str]:
    nv = nvrtc._nvrtc()
    opts = [*nvrtc.DEFAULT_OPTIONS, f"--gpu-architecture={arch}", "-Xptxas", "-v"]
    err, prog = nv.nvrtcCreateProgram(src.encode(), b"k.cu", 0, [], [])
    (res,) = nv.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
    _, size = nv.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nv.nvrtcGetProgramLog(prog, log)
    if res != nv.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(log.decode() + "\n" + src)
    _, size = nv.nvrtcGetCUBINSize(prog)
    cubin = b" " * size
    nv.nvrtcGetCUBIN(prog, cubin)
    nv.nvrtcDestroyProgram(prog)
    return cubin, log.decode()


def regs(log: str) -> int:
    for line in log.splitlines():
        if "Used" in line and "registers" in line:
            return int(line.split("Used")[1].split()[0])
    return -1


def variant_list() -> list[tuple]:
    variants = []
    for body in BODIES:
        for idx in ("long long", "unsigned"):
            variants.append((body, "persist8", idx, 4, 0, "plain", "plain"))
            variants.append((body, "persistent", idx, 4, 0, "plain", "plain"))
            variants.append((body, "persistent", idx, 4, 8, "plain", "plain"))
        for u in (2, 4, 8):
            variants.append((body, "blocked", "unsigned", u, 0, "plain", "plain"))
        for ld, st in (("cs", "plain"), ("plain", "cs"), ("cs", "cs"), ("nc256", "plain"), ("nc256", "cs")):
            variants.append((body, "blocked", "unsigned", 4, 0, ld, st))
            variants.append((body, "persistent", "unsigned", 4, 8, ld, st))
    return variants


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64 * 2**20)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--dry", action="store_true", help="compile every variant for sm_90 and stop (no GPU)")
    ap.add_argument("--sass", default=None, help="directory for cubins and SASS instruction counts")
    args = ap.parse_args()
    if args.dry:
        for v in variant_list():
            print(v, regs(compile_with_log(source(v[0], args.n // 4, *v[1:]), "sm_90")[1]))
        return 0
    cu = _driver()
    arch, sms = device_arch()
    ctx = _check(cu.cuDevicePrimaryCtxRetain(_check(cu.cuDeviceGet(0), "cuDeviceGet")), "retain")
    _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
    n = args.n
    nv = n // 4
    nbytes = 4 * n
    big = 1 << 30
    a = _check(cu.cuMemAlloc(big), "cuMemAlloc")
    b = _check(cu.cuMemAlloc(big), "cuMemAlloc")
    x = np.random.default_rng(0).standard_normal(big // 4).astype(np.float32)
    _check(cu.cuMemcpyHtoD(a, x.ctypes.data, big), "cuMemcpyHtoD")
    e0 = _check(cu.cuEventCreate(0), "cuEventCreate")
    e1 = _check(cu.cuEventCreate(0), "cuEventCreate")

    def timed(fn) -> float:
        for _ in range(5):
            fn()
        out = []
        for _ in range(args.repeat):
            _check(cu.cuEventRecord(e0, stream), "rec")
            fn()
            _check(cu.cuEventRecord(e1, stream), "rec")
            _check(cu.cuEventSynchronize(e1), "sync")
            out.append(_check(cu.cuEventElapsedTime(e0, e1), "elapsed"))
        return statistics.median(out)

    copy_big = 2 * big / (timed(lambda: cu.cuMemcpyDtoDAsync(b, a, big, stream)) * 1e-3) / 1e9
    copy_same = 2 * nbytes / (timed(lambda: cu.cuMemcpyDtoDAsync(b, a, nbytes, stream)) * 1e-3) / 1e9
    print(f"{arch}, {sms} SMs; cuMemcpyDtoD: 1 GiB {copy_big:.0f} GB/s, {nbytes >> 20} MiB {copy_same:.0f} GB/s (read + write)")
    print(f"{'body':<6}{'loop':<11}{'idx':<10}{'U':>2}{'minB':>5}{'ld':>6}{'st':>6}{'regs':>5}{'occ':>4}{'grid':>7}{'ms':>9}{'%1G':>7}{'%same':>7}{'sass':>6}{'err':>9}")

    ptr_a = np.array([int(a)], dtype=np.uint64)
    ptr_b = np.array([int(b)], dtype=np.uint64)
    argv = np.array([ptr_a.ctypes.data, ptr_b.ctypes.data], dtype=np.uint64)
    variants = variant_list()
    sass_dir = Path(args.sass) if args.sass else Path(tempfile.mkdtemp())
    sass_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (body, loop, idx, u, minb, ld, st) in enumerate(variants):
        src = source(body, nv, loop, idx, u, minb, ld, st)
        cubin, log = compile_with_log(src, arch)
        mod = _check(cu.cuModuleLoadData(cubin), "cuModuleLoadData")
        fn = _check(cu.cuModuleGetFunction(mod, b"k"), "cuModuleGetFunction")
        occ = _check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 256, 0), "occupancy")
        grid = min(-(-nv // (256 * u)), sms * occ) if loop.startswith("persist") else -(-nv // (256 * u))
        # the persistent grid as rlxc sized it before this study: 8 blocks per SM
        if loop == "persist8":
            grid = min(-(-nv // (256 * u)), sms * 8)

        def launch():
            _check(cu.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, stream, argv.ctypes.data, 0), "cuLaunchKernel")

        launch()
        _check(cu.cuStreamSynchronize(stream), "sync")
        got = np.empty(min(n, 1 << 20), dtype=np.float32)
        _check(cu.cuMemcpyDtoH(got.ctypes.data, b, got.nbytes), "DtoH")
        ref = reference(body, x[: got.size])
        err = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-30)))
        ms = timed(launch)
        gbs = 2 * nbytes / (ms * 1e-3) / 1e9
        path = sass_dir / f"v{i:02d}.cubin"
        path.write_bytes(cubin)
        count = ""
        try:
            sass = subprocess.run(["cuobjdump", "-sass", str(path)], capture_output=True, text=True, timeout=60).stdout
            count = str(sum(1 for line in sass.splitlines() if line.strip().startswith("/*") and "*/" in line and ";" in line))
            (sass_dir / f"v{i:02d}.sass").write_text(sass)
        except Exception:
            pass
        rows.append((body, loop, idx, u, minb, ld, st, regs(log), occ, grid, ms, gbs))
        print(f"{body:<6}{loop:<11}{idx:<10}{u:>2}{minb:>5}{ld:>6}{st:>6}{regs(log):>5}{occ:>4}{grid:>7}{ms:>9.4f}"
              f"{100 * gbs / copy_big:>6.1f}%{100 * gbs / copy_same:>6.1f}%{count:>6}{err:>9.1e}", flush=True)
        _check(cu.cuModuleUnload(mod), "cuModuleUnload")
    return 0


if __name__ == "__main__":
    sys.exit(main())

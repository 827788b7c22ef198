"""Kernel sweep: rlxc's single-op kernels against PyTorch eager and
torch.compile, side by side in one run, device time with CUDA events.

    python3 benchmarks/kernels.py [--out DIR] [--quick] [--ops a,b] [--dtypes f16,bf16]
                                  [--rows 128,4096 | --rows model] [--sizes 64,512] [--repeat N]
                                  [--compile-sizes 64,512] [--no-clusters]
    python3 benchmarks/kernels.py --dry-run [--nvrtc]   # no GPU, no torch

Cases: op x dtype x row length x size.

* ops: softmax, layer_norm, rms_norm (weights in x's dtype), reduce_sum over
  the last axis (`reduce_sum_last`) and over a middle axis
  (`reduce_sum_mid`), gelu (exact, erf), bias+gelu (`bias_gelu`,
  gelu(x + b)), and the attention head transpose [b, s, h, d] -> [b, h, s, d]
  (`transpose_heads`).
* row lengths N: 64, 128, 512, 768, 4096, 32768 elements.
* dtypes: f32, f16, bf16.
* sizes: the input x holds about 64 MiB or 512 MiB ("MB" below is MiB).

Shapes, for E = size / itemsize elements of x:

* softmax, layer_norm, rms_norm, reduce_sum_last, gelu, bias_gelu:
  x [E / N, N]; the norms' gamma/beta and the bias are [N] params.
* reduce_sum_mid: x [E / (N * 128), N, 128], summed over the middle axis (N
  elements) to [E / (N * 128), 128]: a contiguous inner axis of 128.
  `softmax_mid` and `argmax_mid` (not in the default list): softmax and
  argmax over that middle axis (channels of [n, c, h, w], or axis -2 of
  attention scores; a segmentation model's last op).
* rope (not in the default list): rotary embedding, rotate-half form, of x
  [E / (N * 512), 512, N] (heads folded into the first axis, N the head
  dimension) with cos/sin [512, N] params; PyTorch's is the usual
  `x * cos + cat(-x2, x1) * sin`.
* the other row and injective kernels the issue names (not in the default
  list): `log_softmax`; `residual_layer_norm` / `residual_rms_norm` (h = x + r
  and norm(h), both outputs, as a transformer's residual stream keeps h);
  `concat` of x [M, N/2] and r [M, N - N/2] along the last axis; `slice`,
  the middle half of each row (columns N/4 to N/4 + N/2, as q/k/v splits
  take a window of a row; only that half counts as read); `gather`, an embedding lookup of M random row ids
  (int64, a permutation: each row read once, so the bytes moved are exact;
  repeated ids would be L2 hits counted as bandwidth) from a table x
  [M, N]; `expand` of one row [1, N] to [M, N] (a
  position embedding broadcast over the batch; it only writes); and
  `transpose_merge`, the heads' merge [b, h, s, d] -> [b, s, h, d].
* transpose_heads: d = 64, h = N / 64, s = 512 and b = E / (N * 512)
  (b = 1 and s = E / N where that is under 512); x [b, s, h, 64] ->
  [b, h, s, 64]. At N = 64 (h = 1) the layout does not change: torch's
  `.contiguous()` returns the input itself (no copy), so those cases
  measure whether a compiler sees that the transpose is a view.

Timing: rlxc compiles each case (`rlxc.compile(..., mode="graph")`), runs it
once (inputs: torch tensors handed over as device arrays) and then replays
its CUDA graph. Every time is a median of `--repeat` samples, each a pair of
CUDA events. `--timing batched` (the default) puts back-to-back calls inside
each pair (10 at 64 MiB, 4 at 512 MiB) and divides: device time with the
host's per-call overhead hidden, as it is in a busy program (torch.compile's
Python wrapper costs tens of µs a call, as much as a 64 MiB kernel).
`--timing single` times each call alone with gpu.py's `torch_time` and
`exe.time_launches`. `--timing wall` is what a user sees a call take: the
host's clock around each call (rlxc: `run()` with device inputs and
outputs, waited for, which reads and writes them in place where the plan
allows and copies the others; torch: the call and a synchronize), the
median of 200. The copy ceiling is taken
the same way as the cases (batched for wall; gpu.py's `copy_bandwidth`
figure is printed beside it). torch.compile is the default mode with `dynamic=False`, a fresh
compile (after `torch._dynamo.reset()`) for each case; by default it runs at
every size (`--compile-sizes 64` keeps it to the 64 MiB cases, and the
512 MiB cases are then compared with eager only). Compile time is not timed
as device time but printed in the JSON.

Bytes moved = every input read once + every output written once (params
included). "% copy" is rlxc's GB/s over the device-to-device copy bandwidth
(read + write) measured at 512 MiB at the start of the run (the goal's
ceiling); "% copy@size" the same over a copy of the case's own size (a
64 MiB copy is itself slower per byte than a 512 MiB one); "vs peer" is
(faster peer's time) / (rlxc's time): above 1.0 rlxc is faster. The last
column marks a miss of the goal: `slow` when rlxc is slower than the faster
peer, `bw` when a case of 64 MiB or more moves under 80% of the copy
bandwidth; a check column marks a mismatch of rlxc's output against torch
eager's (float64 comparison, max |diff| / max |ref| over tolerances of 1e-4
for f32, 2e-3 for f16, 2e-2 for bf16).

A case that fails (a compile error, out of memory) prints its error in its
row and the sweep goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import platform
import statistics
import sys
import time
import traceback
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from gpu import copy_bandwidth, torch_time, wall_ms

import rlxc

OPS = ["softmax", "layer_norm", "rms_norm", "reduce_sum_last", "reduce_sum_mid",
       "gelu", "bias_gelu", "transpose_heads"]
#: Ops outside the issue's sweep, timed when named in --ops.
EXTRA_OPS = ["argmax_last", "softmax_mid", "argmax_mid", "rope", "log_softmax", "residual_layer_norm",
             "residual_rms_norm", "concat", "slice", "gather", "expand", "transpose_merge"]
DTYPES = ["f32", "f16", "bf16"]
ROWS = [64, 128, 512, 768, 4096, 32768]
SIZES_MB = [64, 512]
QUICK_ROWS = [128, 4096, 32768]
#: `--rows model`: lengths real models have beyond the issue's list: MiniLM's hidden size,
#: lengths no 16-byte access divides (odd, or 2 mod 8), vocabularies (BERT, LLaMA, GPT-2).
MODEL_ROWS = [384, 1000, 1001, 4097, 30522, 32000, 50257]
#: `--rows long`: rows past what a cluster of 8 blocks holds in registers (the grid form)
#: and a vocabulary near its edge (Qwen's 151936), few rows each.
LONG_ROWS = [151936, 300001, 524288, 1048576, 2000000]
#: `--rows broad`: 25 lengths from short odd rows to vocabularies, odd and even, that no
#: other list has most of (session 53's sweep of the row ops at 64 MiB).
BROAD_ROWS = [7, 13, 27, 50, 77, 130, 197, 257, 577, 1001, 1500, 2049, 3000, 4097, 6001, 8193, 10001, 12289,
              16385, 20001, 24577, 30522, 50257, 65536, 128256]
QUICK_SIZES_MB = [64]
ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8}
#: max |rlxc - torch| / max |torch| allowed, per dtype.
TOLERANCE = {"f32": 1e-4, "f16": 2e-3, "bf16": 2e-2}
#: `__cuda_array_interface__` typestr rlxc accepts for each dtype (bf16: raw 16-bit words).
TYPESTR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i64": "<i8"}
MID_INNER = 128  # reduce_sum_mid: the contiguous axis after the reduced one
HEAD_DIM = 64  # transpose_heads: d
SEQ = 512  # transpose_heads: s (when the size allows)
LN_EPS, RMS_EPS = 1e-5, 1e-6
BW_GOAL = 0.80


@dataclass
class Case:
    op: str
    dtype: str
    n: int  # the row length
    mb: float  # the nominal size of x in MiB
    shape: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.op} {self.dtype} N={self.n} {self.mb:g}MB"


def case_shape(op: str, dtype: str, n: int, mb: float) -> list[int]:
    elems = int(mb * 2**20) // ITEMSIZE[dtype]
    if op in ("reduce_sum_mid", "softmax_mid", "argmax_mid"):
        return [max(1, elems // (n * MID_INNER)), n, MID_INNER]
    if op == "rope":
        rows = max(1, elems // n)
        return [max(1, rows // SEQ), min(rows, SEQ), n]
    if op in ("transpose_heads", "transpose_merge"):
        rows = max(1, elems // n)
        b, s = (rows // SEQ, SEQ) if rows >= SEQ else (1, rows)
        return [b, s, n // HEAD_DIM, HEAD_DIM] if op == "transpose_heads" else [b, n // HEAD_DIM, s, HEAD_DIM]
    return [max(1, elems // n), n]


def cases(ops, dtypes, rows, sizes) -> list[Case]:
    out = []
    for op in ops:
        for dt in dtypes:
            for n in rows:
                if op in ("transpose_heads", "transpose_merge") and n % HEAD_DIM:
                    continue
                for mb in sizes:
                    out.append(Case(op, dt, n, mb, case_shape(op, dt, n, mb)))
    return out


def param_shapes(case: Case) -> dict[str, list[int]]:
    n = case.shape[-1]
    return {"layer_norm": {"gamma": [n], "beta": [n]}, "rms_norm": {"gamma": [n]},
            "residual_layer_norm": {"gamma": [n], "beta": [n]}, "residual_rms_norm": {"gamma": [n]},
            "bias_gelu": {"bias": [n]}, "rope": {"cos": case.shape[-2:], "sin": case.shape[-2:]}}.get(case.op, {})


def input_shapes(case: Case) -> dict[str, tuple[list[int], str]]:
    """The runtime inputs of a case, name -> (shape, dtype): `x` of the case's
    shape, and a second input for the two-input ops."""
    s, dt = case.shape, case.dtype
    m, n = s[0], s[-1]
    if case.op in ("residual_layer_norm", "residual_rms_norm"):
        return {"x": (s, dt), "r": (s, dt)}
    if case.op == "concat":
        return {"x": ([m, n // 2], dt), "r": ([m, n - n // 2], dt)}
    if case.op == "gather":
        return {"x": (s, dt), "ids": ([m], "i64")}
    if case.op == "expand":
        return {"x": ([1, n], dt)}
    return {"x": (s, dt)}


def build_module(case: Case):
    """The rlxc graph of one case: inputs per `input_shapes`, params per `param_shapes`."""
    g = rlxc.GraphBuilder()
    ins = {k: g.input(k, s, dt) for k, (s, dt) in input_shapes(case).items()}
    x = ins["x"]
    p = {k: g.param(k, s, case.dtype) for k, s in param_shapes(case).items()}
    op = case.op
    n = case.shape[-1]
    if op == "softmax":
        y = g.softmax(x, axis=-1)
    elif op == "layer_norm":
        y = g.layer_norm(x, p["gamma"], p["beta"], LN_EPS)
    elif op == "rms_norm":
        y = g.rms_norm(x, p["gamma"], RMS_EPS)
    elif op == "reduce_sum_last":
        y = g.reduce_sum(x, axes=[x.ndim - 1])
    elif op == "reduce_sum_mid":
        y = g.reduce_sum(x, axes=[1])
    elif op == "softmax_mid":
        y = g.softmax(x, axis=1)
    elif op == "argmax_mid":
        y = g.argmax(x, axis=1)
    elif op == "gelu":
        y = g.gelu(x)
    elif op == "bias_gelu":
        y = g.gelu(g.add(x, p["bias"]))
    elif op == "transpose_heads":
        y = g.transpose(x, [0, 2, 1, 3])
    elif op == "argmax_last":
        y = g.argmax(x, axis=-1)
    elif op == "rope":
        y = g.rope(x, p["cos"], p["sin"])
    elif op == "log_softmax":
        y = g.log_softmax(x, axis=-1)
    elif op == "residual_layer_norm":
        return g.build(list(g.fused_residual_layer_norm(x, ins["r"], p["gamma"], p["beta"], LN_EPS)))
    elif op == "residual_rms_norm":
        return g.build(list(g.fused_residual_rms_norm(x, ins["r"], p["gamma"], RMS_EPS)))
    elif op == "concat":
        y = g.concat([x, ins["r"]], axis=1)
    elif op == "slice":
        y = g.slice(x, [n // 4], [n // 4 + n // 2], axes=[1])
    elif op == "gather":
        y = g.gather(x, ins["ids"], axis=0)
    elif op == "expand":
        y = g.expand(x, case.shape)
    elif op == "transpose_merge":
        y = g.transpose(x, [0, 2, 1, 3])
    else:
        raise ValueError(f"unknown op {op}")
    return g.build([y])


def output_shapes(case: Case) -> list[list[int]]:
    s = case.shape
    if case.op in ("reduce_sum_last", "argmax_last"):
        return [s[:-1]]
    if case.op in ("reduce_sum_mid", "argmax_mid"):
        return [[s[0], s[2]]]
    if case.op in ("transpose_heads", "transpose_merge"):
        return [[s[0], s[2], s[1], s[3]]]
    if case.op in ("residual_layer_norm", "residual_rms_norm"):
        return [list(s), list(s)]
    if case.op == "slice":
        return [[s[0], s[1] // 2]]
    return [list(s)]


def bytes_moved(case: Case) -> int:
    """Inputs (params included) read once + the outputs written once."""
    it = ITEMSIZE[case.dtype]
    n_in = sum(ITEMSIZE[dt] * math.prod(s) for s, dt in input_shapes(case).values())
    if case.op == "slice":  # only the slice is read
        n_in = it * sum(math.prod(s) for s in output_shapes(case))
    n_in += it * sum(math.prod(s) for s in param_shapes(case).values())
    out_it = 8 if case.op in ("argmax_last", "argmax_mid") else it  # int64 indices
    return n_in + out_it * sum(math.prod(s) for s in output_shapes(case))


def torch_fn(case: Case):
    """The PyTorch function of a case: fn(x, *params in `param_shapes` order)."""
    import torch
    import torch.nn.functional as F

    n = case.shape[-1]
    op = case.op
    if op == "softmax":
        return lambda x: torch.softmax(x, -1)
    if op == "layer_norm":
        return lambda x, g, b: F.layer_norm(x, (n,), g, b, LN_EPS)
    if op == "rms_norm":
        if hasattr(F, "rms_norm"):
            return lambda x, g: F.rms_norm(x, (n,), g, RMS_EPS)

        def rms(x, g):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + RMS_EPS) * g.float()).to(x.dtype)

        return rms
    if op == "reduce_sum_last":
        return lambda x: x.sum(dim=-1)
    if op == "reduce_sum_mid":
        return lambda x: x.sum(dim=1)
    if op == "softmax_mid":
        return lambda x: torch.softmax(x, 1)
    if op == "argmax_mid":
        return lambda x: torch.argmax(x, 1)
    if op == "gelu":
        return lambda x: F.gelu(x, approximate="none")
    if op == "bias_gelu":
        return lambda x, b: F.gelu(x + b, approximate="none")
    if op == "transpose_heads":
        return lambda x: x.transpose(1, 2).contiguous()
    if op == "argmax_last":
        return lambda x: torch.argmax(x, -1)
    if op == "rope":
        return lambda x, c, s: x * c + torch.cat((-x[..., n // 2:], x[..., : n // 2]), -1) * s
    if op == "log_softmax":
        return lambda x: torch.log_softmax(x, -1)
    if op == "residual_layer_norm":
        def res_ln(x, r, g, b):
            h = x + r
            return h, F.layer_norm(h, (n,), g, b, LN_EPS)

        return res_ln
    if op == "residual_rms_norm":
        rms = torch_fn(Case("rms_norm", case.dtype, case.n, case.mb, case.shape))

        def res_rms(x, r, g):
            h = x + r
            return h, rms(h, g)

        return res_rms
    if op == "concat":
        return lambda x, r: torch.cat((x, r), 1)
    if op == "slice":
        return lambda x: x[:, n // 4: n // 4 + n // 2].contiguous()
    if op == "gather":
        return lambda x, ids: x[ids]
    if op == "expand":
        return lambda x: x.expand(case.shape).contiguous()
    if op == "transpose_merge":
        return lambda x: x.transpose(1, 2).contiguous()
    raise ValueError(op)


# ---------------------------------------------------------------- timing


def inner_calls(mb: float) -> int:
    """Back-to-back calls per timed sample in batched timing: enough that the
    host's launch overhead of the first call hides behind the device work."""
    return max(4, int(640 // max(mb, 1)))


def batched_copy_bandwidth(nbytes: int, repeat: int) -> float:
    """gpu.py's `copy_bandwidth` timed like the cases (batched), so that
    "% copy" compares like with like: GB/s counting read + write."""
    import torch

    a = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_()
    b = torch.empty_like(a)
    ms = torch_time(b.copy_, (a,), repeat, inner=inner_calls(nbytes // 2**20), warmup=3)
    del a, b
    torch.cuda.empty_cache()
    return 2 * nbytes / (ms * 1e-3) / 1e9


def time_rlxc(exe, case: Case, args, dev_inputs=None) -> float:
    if args.timing == "wall":  # run() as a user calls it: device inputs and outputs, waited for
        return wall_ms(lambda: exe.run(dev_inputs, device_outputs=True), args.repeat, args.warmup)
    if args.timing == "single":
        return statistics.median(exe.time_launches(repeat=args.repeat, warmup=args.warmup))
    return statistics.median(exe.time_launches(repeat=args.repeat, warmup=args.warmup, inner=inner_calls(case.mb)))


def time_torch(fn, targs, case: Case, args) -> float:
    if args.timing == "wall":
        import torch

        def call():
            fn(*targs)
            torch.cuda.synchronize()

        return wall_ms(call, args.repeat, max(args.warmup, 3))
    if args.timing == "single":
        return torch_time(fn, targs, args.repeat)
    return torch_time(fn, targs, args.repeat, inner=inner_calls(case.mb), warmup=3)


# ---------------------------------------------------------------- rlxc <-> torch


class _DeviceView:
    """A torch CUDA tensor as rlxc takes it: `__cuda_array_interface__` with
    the typestr rlxc expects (torch gives none for bf16). The caller
    synchronises before handing it over (no stream named)."""

    def __init__(self, t, dtype: str):
        assert t.is_contiguous()
        self._t = t  # keeps the memory alive
        self.__cuda_array_interface__ = {
            "shape": tuple(t.shape), "typestr": TYPESTR[dtype],
            "data": (t.data_ptr(), False), "version": 3, "strides": None,
        }


def host_param(t, dtype: str) -> np.ndarray:
    """A torch param as rlxc's numpy carrier (bf16: float32 holding the bf16 values)."""
    return (t.float() if dtype == "bf16" else t).cpu().numpy()


def to_torch(out, tdtype):
    """An rlxc `DeviceArray` output copied into a fresh torch tensor."""
    import torch

    from rlxc.runtime.driver_api import _driver, check

    t = torch.empty(out.shape, dtype=tdtype, device="cuda")
    if out.nbytes:
        check(_driver().cuMemcpyDtoD(t.data_ptr(), out.ptr, out.nbytes), "cuMemcpyDtoD(output -> torch)")
    return t


def release(exe) -> None:
    """Frees what a CudaExecutable holds on the device (it has no close of its
    own at the time of writing, and the sweep builds hundreds of them)."""
    for name in ("close", "release", "free"):
        if callable(getattr(exe, name, None)):
            getattr(exe, name)()
            return
    from rlxc.runtime.driver_api import _driver

    cu = _driver()

    def quietly(call, *a):  # best effort: a failed free must not end the sweep
        with contextlib.suppress(Exception):
            call(*a)

    quietly(cu.cuStreamSynchronize, exe.stream)
    for attr, fn in (("graph_exec", cu.cuGraphExecDestroy), ("graph", cu.cuGraphDestroy)):
        if getattr(exe, attr, None) is not None:
            quietly(fn, getattr(exe, attr))
            setattr(exe, attr, None)
    for mod in getattr(exe, "modules", {}).values():
        quietly(cu.cuModuleUnload, mod)
    exe.modules = {}
    for attr in ("arena", "params", "workspace"):
        if getattr(exe, attr, None) is not None:
            quietly(cu.cuMemFree, getattr(exe, attr))
            setattr(exe, attr, None)
    quietly(cu.cuStreamDestroy, exe.stream)


def rel_err(a, b) -> float:
    """max |a - b| / max |b| in float64, chunked; inf on a NaN/inf mismatch."""
    a, b = a.reshape(-1), b.reshape(-1)
    err, scale, step = 0.0, 0.0, 1 << 24
    for i in range(0, b.numel(), step):
        ab, bb = a[i:i + step].double(), b[i:i + step].double()
        err = max(err, (ab - bb).abs().max().item())
        scale = max(scale, bb.abs().max().item())
    if not math.isfinite(err):
        return math.inf
    return err / max(scale, 1e-30)


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= 160 else text[:157] + "..."


# ---------------------------------------------------------------- one case


def run_case(case: Case, args, compile_peer: bool) -> dict:
    import torch

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    row = dict(asdict(case), bytes=bytes_moved(case), rlxc_ms=None, eager_ms=None, compile_ms=None,
               errors={}, rel_err=None)
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(case.name.encode()))
    rows_in = case.shape[0]
    inputs = {k: (torch.randperm(rows_in, dtype=torch.int64, device="cuda", generator=gen) if dt == "i64"
                  else torch.randn(s, dtype=tdt, device="cuda", generator=gen))
              for k, (s, dt) in input_shapes(case).items()}
    params = {k: torch.randn(s, dtype=tdt, device="cuda", generator=gen) for k, s in param_shapes(case).items()}
    targs = (*inputs.values(), *params.values())
    fn = torch_fn(case)
    y_r = y_e = None

    # rlxc
    exe = None
    try:
        t0 = time.perf_counter()
        exe = rlxc.compile(build_module(case), target="cuda",
                           params={k: host_param(v, case.dtype) for k, v in params.items()}, mode="graph")
        row["rlxc_compile_s"] = time.perf_counter() - t0
        row["rlxc_kernels"] = len(getattr(exe, "launches", []))
        torch.cuda.synchronize()
        dts = {k: dt for k, (_, dt) in input_shapes(case).items()}
        dev_inputs = {k: _DeviceView(t, dts[k]) for k, t in inputs.items()}
        outs = exe.run(dev_inputs, device_outputs=True)
        y_r = [to_torch(o, torch.int64 if case.op.startswith("argmax") else tdt) for o in outs]
        del outs
        row["rlxc_ms"] = time_rlxc(exe, case, args, dev_inputs)
    except Exception as e:  # noqa: BLE001 - report and go on
        row["errors"]["rlxc"] = _short(e)
        if args.verbose:
            traceback.print_exc()
    finally:
        if exe is not None:
            release(exe)
        del exe

    # PyTorch eager (and the reference for the check)
    try:
        with torch.no_grad():
            y_e = fn(*targs)
            y_e = list(y_e) if isinstance(y_e, tuple) else [y_e]
            if not args.no_eager_timing:
                row["eager_ms"] = time_torch(fn, targs, case, args)
    except Exception as e:  # noqa: BLE001
        row["errors"]["eager"] = _short(e)
    if y_r is not None and y_e is not None:
        try:
            if len(y_r) != len(y_e):
                raise ValueError(f"{len(y_r)} outputs from rlxc, {len(y_e)} from torch")
            row["rel_err"] = max(rel_err(a, b) for a, b in zip(y_r, y_e))
            row["ok"] = row["rel_err"] <= TOLERANCE[case.dtype]
            if case.op.startswith("argmax"):  # indices: exactly the same (ties go to the first in both)
                row["ok"] = all(torch.equal(a, b) for a, b in zip(y_r, y_e))
        except Exception as e:  # noqa: BLE001
            row["errors"]["check"] = _short(e)
    del y_r, y_e
    torch.cuda.empty_cache()

    # torch.compile (default mode, static shapes), compiled afresh for this case
    if compile_peer:
        try:
            torch._dynamo.reset()
            cfn = torch.compile(fn, dynamic=False)
            with torch.no_grad():
                t0 = time.perf_counter()
                cfn(*targs)
                torch.cuda.synchronize()
                row["compile_s"] = time.perf_counter() - t0
                row["compile_ms"] = time_torch(cfn, targs, case, args)
            del cfn
        except Exception as e:  # noqa: BLE001
            row["errors"]["torch.compile"] = _short(e)
    del inputs, params, targs
    gc.collect()
    torch.cuda.empty_cache()
    return row


def finish_row(row: dict, copy_gbs: float, size_copy_gbs: float | None = None) -> dict:
    """Derived figures: GB/s, % of copy bandwidth (the goal's, against the
    512 MiB copy; and against a copy of the case's own size, where given),
    speed vs the faster peer, misses."""
    r, peers = row["rlxc_ms"], [t for t in (row["eager_ms"], row["compile_ms"]) if t]
    # an executable that launches nothing (a relabelling: a one-head transpose) moves no
    # bytes, so it has no bandwidth to compare with the copy's
    moves = row.get("rlxc_kernels") != 0
    row["rlxc_GBps"] = row["bytes"] / (r * 1e-3) / 1e9 if r and moves else None
    row["copy_frac"] = row["rlxc_GBps"] / copy_gbs if row["rlxc_GBps"] else None
    row["size_copy_frac"] = row["rlxc_GBps"] / size_copy_gbs if row["rlxc_GBps"] and size_copy_gbs else None
    row["vs_peer"] = min(peers) / r if r and peers else None
    miss = []
    if row["vs_peer"] is not None and row["vs_peer"] < 1.0:
        miss.append("slow")
    if row["copy_frac"] is not None and row["mb"] >= 64 and row["copy_frac"] < BW_GOAL:
        miss.append("bw")
    if not r:
        miss.append("fail")
    row["miss"] = miss
    return row


HEADER = ("| op | dtype | row | MB | shape | rlxc µs | eager µs | compile µs | rlxc GB/s | % copy "
          "| % copy@size | vs peer | check | miss |")


def format_row(row: dict) -> str:
    def us(ms):
        return f"{1e3 * ms:.1f}" if ms else "—"

    mb = math.prod(row["shape"]) * ITEMSIZE[row["dtype"]] / 2**20
    check = "" if row.get("rel_err") is None else (
        f"ok ({row['rel_err']:.0e})" if row.get("ok") else f"**MISMATCH** ({row['rel_err']:.1e})")
    miss = " ".join(f"**{m}**" for m in row["miss"])
    cells = [row["op"], row["dtype"], str(row["n"]), f"{mb:.3g}", "×".join(map(str, row["shape"])),
             us(row["rlxc_ms"]), us(row["eager_ms"]), us(row["compile_ms"]),
             f"{row['rlxc_GBps']:.0f}" if row["rlxc_GBps"] else "—",
             f"{100 * row['copy_frac']:.0f}%" if row["copy_frac"] else "—",
             f"{100 * row['size_copy_frac']:.0f}%" if row.get("size_copy_frac") else "—",
             f"{row['vs_peer']:.2f}" if row["vs_peer"] else "—", check, miss]
    line = "| " + " | ".join(cells) + " |"
    for who, err in row["errors"].items():
        line += f"\n|  ↳ {who} error: {err} ||||||||||||||"
    return line


# ---------------------------------------------------------------- dry run (no GPU)


def dry_run(case_list: list[Case], nvrtc: bool) -> int:
    """Builds and lowers every case's module for sm_90 (132 SMs, as H100 and
    H200 have); with `nvrtc`, compiles the kernels to cubins too."""
    from rlxc.codegen import HEADERS
    from rlxc.dialects import rlx_cuda

    pipeline = "rlx-cuda{arch=sm_90 sm_count=132}"
    print(f"dry run: {len(case_list)} cases, pipeline {pipeline}" + (", NVRTC to cubins" if nvrtc else ""))
    print("| case | shape | bytes moved | kernels | lower s | status |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    failed, t_all = 0, time.perf_counter()
    for case in case_list:
        t0 = time.perf_counter()
        try:
            lowered = rlxc.run_pipeline(build_module(case), pipeline)
            launches = [op for op in lowered.walk() if isinstance(op, rlx_cuda.LaunchOp)]
            status = "ok"
            if nvrtc:
                from rlxc.runtime.nvrtc import compile_module_kernels

                cubins = compile_module_kernels(lowered, "sm_90", headers=HEADERS)
                status = f"ok, {len(cubins)} cubin(s)"
            kernels = str(len(launches))
        except Exception as e:  # noqa: BLE001
            failed += 1
            kernels, status = "—", f"**FAILED** {_short(e)}"
        print(f"| {case.name} | {'×'.join(map(str, case.shape))} | {bytes_moved(case):,} | {kernels} "
              f"| {time.perf_counter() - t0:.2f} | {status} |")
    print(f"\n{len(case_list) - failed}/{len(case_list)} cases built and lowered in "
          f"{time.perf_counter() - t_all:.1f} s; {failed} failed")
    return 1 if failed else 0


# ---------------------------------------------------------------- main


def main() -> int:
    global MID_INNER
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="write kernels.json here (rewritten after every case)")
    ap.add_argument("--quick", action="store_true",
                    help="64 MB only, rows 128/4096/32768, fewer repeats")
    ap.add_argument("--ops", default=None, help=f"comma list of {','.join(OPS)} (the default), {','.join(EXTRA_OPS)}")
    ap.add_argument("--dtypes", default=None, help="comma list of f32,f16,bf16")
    ap.add_argument("--rows", default=None,
                    help="comma list of row lengths, 'model' for MODEL_ROWS, 'long' for LONG_ROWS or 'broad' for BROAD_ROWS")
    ap.add_argument("--sizes", default=None, help="comma list of sizes in MiB (default 64,512; fractions allowed: 0.1 is a row or a few of a vocabulary)")
    ap.add_argument("--compile-sizes", default=None,
                    help="sizes (MiB) at which torch.compile is timed (default: every size; 'none' for none)")
    ap.add_argument("--repeat", type=int, default=None, help="timed repetitions per measurement")
    ap.add_argument("--no-eager-timing", action="store_true",
                    help="eager's output only checks rlxc's, untimed (variants of slow eager cases: softmax_mid)")
    ap.add_argument("--warmup", type=int, default=3, help="rlxc warm-up launches (the torch timers do 3 or 5)")
    ap.add_argument("--timing", choices=("batched", "single", "wall"), default="batched",
                    help="batched (default): events around back-to-back calls (10 at 64 MB, 4 at 512 MB); "
                         "single: events around each call (gpu.py's torch_time and exe.time_launches); "
                         "wall: the host's clock around each call, as a user calls it (rlxc: run() with device "
                         "inputs and outputs; torch: the call and a synchronize), median of --repeat (default 200)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: build and lower every case's module (rlx-cuda for sm_90)")
    ap.add_argument("--nvrtc", action="store_true", help="with --dry-run: also compile the kernels with NVRTC")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failing cases")
    ap.add_argument("--inner", type=int, default=MID_INNER,
                    help=f"the middle-axis ops' contiguous axis after the reduced one (default {MID_INNER})")
    ap.add_argument("--no-clusters", action="store_true",
                    help="never pick the cluster row form (rows.USE_CLUSTERS off): the forms it displaces")
    args = ap.parse_args()
    MID_INNER = args.inner
    if args.no_clusters:
        from rlxc.codegen import rows as row_forms

        row_forms.USE_CLUSTERS = False

    def pick(text, default, cast=str, allowed=None):
        if text is None:
            return default
        vals = [cast(v) for v in text.split(",") if v]
        bad = [v for v in vals if allowed is not None and v not in allowed]
        if bad:
            ap.error(f"unknown value(s) {bad}; expected some of {allowed}")
        return vals

    ops = pick(args.ops, OPS, allowed=OPS + EXTRA_OPS)
    dtypes = pick(args.dtypes, DTYPES, allowed=DTYPES)
    rows = {"model": MODEL_ROWS, "long": LONG_ROWS, "broad": BROAD_ROWS}.get(args.rows) or pick(args.rows, QUICK_ROWS if args.quick else ROWS, int)
    sizes = pick(args.sizes, QUICK_SIZES_MB if args.quick else SIZES_MB, float)
    compile_sizes = sizes if args.compile_sizes is None else (
        [] if args.compile_sizes == "none" else pick(args.compile_sizes, sizes, float))
    if args.repeat is None:
        args.repeat = 200 if args.timing == "wall" else 10 if args.quick else 20
    case_list = cases(ops, dtypes, rows, sizes)
    if args.dry_run:
        return dry_run(case_list, args.nvrtc)

    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 4096)
    t_start = time.perf_counter()
    copy_repeat = max(args.repeat, 20)
    copy_single = copy_bandwidth(512 * 2**20, copy_repeat)  # gpu.py's: events around each copy
    copy_gbs = copy_single if args.timing == "single" else batched_copy_bandwidth(512 * 2**20, copy_repeat)
    report = {
        "device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "host": platform.node(), "torch": torch.__version__, "copy_GBps": copy_gbs,
        "copy_GBps_single": copy_single,
        "repeat": args.repeat, "timing": args.timing, "compile_sizes_MB": compile_sizes, "argv": sys.argv[1:], "rows": [],
    }
    print(f"# rlxc kernel sweep: {report['device']}, {report['date']}, torch {torch.__version__}")
    print(f"\ndevice-to-device copy (512 MiB, read + write): **{copy_gbs:.0f} GB/s** "
          f"({args.timing} timing; gpu.py's copy_bandwidth, events around each copy: {copy_single:.0f} GB/s); "
          f"{len(case_list)} cases; median of {args.repeat} "
          + ("calls each by the host's clock (wall timing: rlxc's run() with device inputs and outputs, torch's "
             "call and a synchronize; the copy is timed batched" if args.timing == "wall"
             else f"CUDA-event-timed samples each ({args.timing} timing")
          + (", a sample = back-to-back calls: 10 at 64 MB, 4 at 512 MB" if args.timing == "batched" else "")
          + "); "
          f"torch.compile (default, dynamic=False) at sizes {compile_sizes or 'none'} MiB\n")
    # a copy of each case size too, timed as the cases are: the ceiling a kernel of that size can
    # reach (a 64 MiB copy is itself below the 512 MiB one: its ramp and tail are a larger part)
    timed_copy = copy_bandwidth if args.timing == "single" else batched_copy_bandwidth
    size_copy = {mb: copy_gbs if mb == 512 else timed_copy(int(mb * 2**20), copy_repeat)
                 for mb in sorted({c.mb for c in case_list})}
    report["copy_GBps_by_size"] = {f"{mb:g}": g for mb, g in size_copy.items()}
    print(f"copy at each case size ({args.timing}, GB/s): "
          + ", ".join(f"{mb:g} MiB {g:.0f}" for mb, g in size_copy.items()) + "\n")
    print(HEADER)
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for case in case_list:
        try:
            row = run_case(case, args, case.mb in compile_sizes)
        except Exception as e:  # noqa: BLE001 - e.g. out of memory making the inputs
            row = dict(asdict(case), bytes=bytes_moved(case), rlxc_ms=None, eager_ms=None,
                       compile_ms=None, errors={"case": _short(e)}, rel_err=None)
            gc.collect()
            torch.cuda.empty_cache()
        row = finish_row(row, copy_gbs, size_copy.get(case.mb))
        row["elapsed_s"] = time.perf_counter() - t_start
        report["rows"].append(row)
        print(format_row(row), flush=True)
        if args.out:  # after every case, so that a run cut short keeps what it measured
            write_json(args.out, report)

    rs = report["rows"]
    timed = [r for r in rs if r["vs_peer"]]
    summary = {
        "cases": len(rs),
        "failed": sum(1 for r in rs if not r["rlxc_ms"]),
        "slower_than_peer": sum(1 for r in rs if "slow" in r["miss"]),
        "under_80pct_copy": sum(1 for r in rs if "bw" in r["miss"]),
        "mismatches": sum(1 for r in rs if r.get("ok") is False),
        "geomean_vs_peer": math.exp(statistics.fmean(math.log(r["vs_peer"]) for r in timed)) if timed else None,
        "min_vs_peer": min((r["vs_peer"] for r in timed), default=None),
        "wall_s": time.perf_counter() - t_start,
    }
    report["summary"] = summary
    print(f"\n{summary['cases']} cases in {summary['wall_s']:.0f} s: {summary['failed']} failed, "
          f"{summary['slower_than_peer']} slower than the faster peer, {summary['under_80pct_copy']} under "
          f"80% of copy bandwidth, {summary['mismatches']} mismatches; speed vs the faster peer: "
          + (f"geomean {summary['geomean_vs_peer']:.2f}, min {summary['min_vs_peer']:.2f}" if timed else "—"))
    if args.out:
        print(f"wrote {write_json(args.out, report)}")
    return 0


def write_json(out_dir: str, report: dict) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "kernels.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=1))
    tmp.replace(path)
    return path


if __name__ == "__main__":
    sys.exit(main())

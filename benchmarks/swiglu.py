"""A LLaMA-style SwiGLU MLP block through rlxc against PyTorch, side by side
in one run (issue 12's merged gate/up projections). Run on the GPU machine:

    python benchmarks/swiglu.py [--hidden 4096] [--ffn 11008] [--rows 1,32,512]
                                [--dtypes f16,bf16] [--out DIR]
    python benchmarks/swiglu.py --dry-run      # CPU only: build, lower, interpret small

The block: y = x + down(silu(gate(h)) * up(h)), h = rms_norm(x), weights
without biases, written with `rlxc.GraphBuilder`. rlxc merges gate and up
into one gemm (rows up to rlx-merge-projections' max_rows) and reads its two
halves in place (`rlx.elementwise_region` windows); "rlxc, unmerged" is the
same graph without rlx-merge-projections (two gemms, no windows). PyTorch runs
the same weights eagerly and under torch.compile.

Per system: device ms (rlxc: `time_runs`, CUDA events around the whole
`run()`; PyTorch: events around the call), wall ms (perf_counter around a
synchronised call with device inputs and outputs), and the largest relative
error against a float64 PyTorch run. Timing helpers are encoders.py's.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import rlxc  # noqa: E402
from encoders import bench_rlxc_system, bench_torch, compile_unmerged, rlxc_params  # noqa: E402


def build(rows: int, hidden: int, ffn: int, dtype: str):
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, hidden], dtype)
    h = g.rms_norm(x, g.param("norm", [hidden], dtype), eps=1e-6)
    gate = g.linear(h, g.param("gate", [ffn, hidden], dtype))
    up = g.linear(h, g.param("up", [ffn, hidden], dtype))
    y = g.linear(g.mul(g.silu(gate), up), g.param("down", [hidden, ffn], dtype))
    return g.build([g.add(x, y)])


def weights(hidden: int, ffn: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "norm": (1.0 + 0.1 * rng.standard_normal(hidden)).astype(np.float32),
        "gate": (rng.standard_normal((ffn, hidden)) / np.sqrt(hidden)).astype(np.float32),
        "up": (rng.standard_normal((ffn, hidden)) / np.sqrt(hidden)).astype(np.float32),
        "down": (rng.standard_normal((hidden, ffn)) / np.sqrt(ffn)).astype(np.float32),
    }


def torch_block(x, w):
    import torch.nn.functional as F

    h = x * (x.float().pow(2).mean(-1, keepdim=True) + 1e-6).rsqrt().to(x.dtype) * w["norm"]
    return x + F.linear(F.silu(F.linear(h, w["gate"])) * F.linear(h, w["up"]), w["down"])


def run_case(rows: int, dtype: str, ws, args) -> dict:
    import torch

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    case = {"rows": rows, "dtype": dtype, "systems": {}, "errors": {}}
    x = torch.randn(rows, args.hidden, generator=torch.Generator().manual_seed(rows)).to(tdt).cuda()
    w = {k: torch.from_numpy(v).to(tdt).cuda() for k, v in ws.items()}
    with torch.no_grad():
        ref = torch_block(x.double(), {k: v.double() for k, v in w.items()})
    module = build(rows, args.hidden, args.ffn, dtype)
    params = rlxc_params(ws, dtype)
    for label, make in (("rlxc", lambda: rlxc.compile(module, target="cuda", params=params)),
                        ("rlxc, unmerged", lambda: compile_unmerged(module, params))):
        bench_rlxc_system(case, label, make, x, ref, args)
    with torch.no_grad():
        for label, compiled in (("torch eager", False), ("torch.compile", True)):
            try:
                fn = (lambda t, _w=w: torch_block(t, _w))
                if compiled:
                    torch._dynamo.reset()
                    c = torch.compile(torch_block)
                    fn = (lambda t, _c=c, _w=w: _c(t, _w))
                    fn(x)
                case["systems"][label] = bench_torch(fn, x, ref, args)
            except Exception as e:  # noqa: BLE001
                case["errors"][label] = f"{type(e).__name__}: {e}"[:400]
                traceback.print_exc()
    return case


def dry_run(args) -> int:
    """CPU only: each selected graph through the cuda pipeline (no GPU), and a
    small block interpreted against float64."""
    from rlxc.dialects import rlx, rlx_cuda
    from rlxc.driver import cuda_pipeline
    from rlxc.passes.fold_params import fold_params

    ws = weights(args.hidden, args.ffn)
    for dtype in args.dtypes:
        for rows in args.rows:
            module = build(rows, args.hidden, args.ffn, dtype)
            carried = {k: v.astype(np.float16) for k, v in ws.items()} if dtype == "f16" else ws
            merged, _ = fold_params(rlxc.run_pipeline(module, "rlx-merge-projections"), carried)
            lowered = rlxc.run_pipeline(merged, cuda_pipeline("sm_90", 132, "cublaslt"))
            ops = list(lowered.walk())
            fused = rlxc.run_pipeline(module, "rlx-optimize")
            windows = sum(isinstance(o, rlx.ElementwiseRegionOp) and o.windows is not None for o in fused.walk())
            print(f"rows {rows} {dtype}: {sum(isinstance(o, rlx_cuda.LaunchOp) for o in ops)} kernel launches, "
                  f"{sum(isinstance(o, rlx_cuda.GemmOp) for o in ops)} gemms, {windows} windowed region(s)")
    small = build(3, 32, 48, "f32")
    sw = weights(32, 48)
    x = np.random.default_rng(0).standard_normal((3, 32)).astype(np.float32)
    (got,) = rlxc.compile(small, target="numpy", params=sw).run({"x": x})
    (want,) = rlxc.interpret(small, {"x": x}, sw, float64=True)
    err = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"small block, numpy target vs float64: max rel err {err:.2e}")
    return 0 if err < 1e-5 else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--rows", default="1,32,512")
    ap.add_argument("--dtypes", default="f16,bf16")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--wall-repeat", type=int, default=200)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    args.rows = [int(r) for r in args.rows.split(",")]
    args.dtypes = args.dtypes.split(",")
    if args.dry_run:
        return dry_run(args)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    ws = weights(args.hidden, args.ffn)
    report = {"device": torch.cuda.get_device_name(), "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "torch": torch.__version__, "python": platform.python_version(), "hidden": args.hidden,
              "ffn": args.ffn, "cases": []}
    print(f"# SwiGLU MLP block: {report['device']}, {report['date']}, hidden {args.hidden}, ffn {args.ffn}")
    print("| rows | dtype | system | device ms | wall ms | err | launches |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for dtype in args.dtypes:
        for rows in args.rows:
            t0 = time.perf_counter()
            case = run_case(rows, dtype, ws, args)
            report["cases"].append(case)
            for label, row in case["systems"].items():
                print(f"| {rows} | {dtype} | {label} | {row['device_ms']:.4f} | {row['wall_ms']:.4f} | "
                      f"{row['err']:.1e} | {row.get('launches', '')} |", flush=True)
            for label, e in case["errors"].items():
                print(f"| {rows} | {dtype} | {label} | error: {e} | | | |", flush=True)
            print(f"<!-- case took {time.perf_counter() - t0:.0f} s -->", flush=True)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "swiglu.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

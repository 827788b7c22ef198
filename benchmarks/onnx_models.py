"""Exported ONNX models through rlxc on the GPU, against ONNX Runtime and
PyTorch. Run on the GPU machine after benchmarks/export_models.py:

    python benchmarks/export_models.py --out build/onnx_models
    python benchmarks/onnx_models.py --models build/onnx_models [--batches 1,8,32] [--seq 128] [--quick]

For each model that export_models.py exported (its manifest.json), at each
batch size (sequence length --seq for the text models, 224x224 images for
ResNet-50):

* imports it with `rlxc.frontends.onnx.from_onnx`, compiles it with
  `rlxc.compile(target="cuda")` (graph mode, full f32: TF32 off) and checks
  its outputs against ONNX Runtime on the CPU (max |error| / max |reference|);
* times rlxc: the device time of one launch of the whole graph (CUDA events
  around `launch()`: `CudaExecutable.time_launches`), and the wall time of
  one `run()` call with device-resident inputs and outputs (torch CUDA
  tensors in, rlxc DeviceArrays out: the input copies into the arena, the
  graph launch, the synchronisation and the output copies);
* times ONNX Runtime (CPU; and its CUDA provider where installed) per
  `InferenceSession.run` on host arrays, wall time;
* times the source PyTorch model (rebuilt from the same config and seed):
  eager and `torch.compile`, with CUDA events like benchmarks/gpu.py (TF32 off).

All figures are medians of many repetitions after warm-up. The table is
printed as markdown with the device and date; --out writes it and a JSON
report there too.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import rlxc  # noqa: E402
from export_models import IMAGE_MODELS, example_inputs, make_model  # noqa: E402
from gpu import torch_time  # noqa: E402  (CUDA-event timing, as the other GPU benchmarks)
from rlxc.frontends.onnx import from_onnx  # noqa: E402


def bind_shapes(model, batch: int, seq: int) -> dict[str, list[int]]:
    """Each graph input's shape: fixed dimensions kept, symbolic ones bound by
    name ('batch', 'seq'), else by position (0: batch, 1: sequence)."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        shape = []
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append({"batch": batch, "seq": seq}.get(d.dim_param, batch if k == 0 else seq))
        out[i.name] = shape
    return out


def wall_median(fn, repeat: int, budget_s: float, warmup: int = 2) -> tuple[float, int]:
    """Median wall milliseconds of fn() over up to `repeat` calls or `budget_s` seconds."""
    for _ in range(warmup):
        fn()
    times, t_end = [], time.perf_counter() + budget_s
    while len(times) < repeat and (len(times) < 3 or time.perf_counter() < t_end):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times)


def errors(got, want) -> float:
    """The largest max |got - want| / max |want| over the outputs."""
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            return float("inf")
        worst = max(worst, float(np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)))
    return worst


class Bench:
    def __init__(self, args):
        import onnxruntime as ort
        import torch

        self.args = args
        self.ort = ort
        self.torch = torch
        self.rows: list[dict] = []
        self.torch_models: dict = {}

    def row(self, **kw):
        self.rows.append(kw)
        if self.args.out:  # as it goes, so an interrupted run keeps what it measured
            self.args.out.mkdir(parents=True, exist_ok=True)
            (self.args.out / "onnx_models.partial.json").write_text(json.dumps(self.rows, indent=1, default=str))
        ms = kw.get("device_ms")
        wall = kw.get("wall_ms")
        err = kw.get("max_err")
        print(f"  {kw['impl']:<34}"
              f"{'' if ms is None else f'{ms:10.3f} ms device'}"
              f"{'' if wall is None else f'{wall:10.3f} ms wall'}"
              f"{'' if err is None else f'   err {err:.1e}'}"
              f"{'  ' + kw['note'] if kw.get('note') else ''}", flush=True)

    # -- one exported file at one batch size
    def onnx_file(self, rec: dict, path: Path, model, batch: int, ort_out_cache: dict):
        a = self.args
        seq = a.seq
        key = dict(model=rec["model"], size=rec["size"], batch=batch, seq=seq if rec["model"] not in IMAGE_MODELS else None)
        feeds = example_inputs(rec["model"], rec["size"], batch, seq, np.random.default_rng(batch))
        # ONNX Runtime (CPU) on the host arrays: the reference and a timing
        sess = self.ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        want = sess.run(None, feeds)
        ms, n = wall_median(lambda: sess.run(None, feeds), a.ort_repeat, a.ort_budget_s)
        self.row(**key, impl=f"onnxruntime CPU ({rec['exporter']})", wall_ms=ms, runs=n)
        if a.ort_cuda and "CUDAExecutionProvider" in self.ort.get_available_providers():
            cs = self.ort.InferenceSession(str(path), providers=["CUDAExecutionProvider"])
            ms, n = wall_median(lambda: cs.run(None, feeds), a.repeat, a.ort_budget_s, warmup=5)
            self.row(**key, impl=f"onnxruntime CUDA ({rec['exporter']})", wall_ms=ms, runs=n, max_err=errors(cs.run(None, feeds), want))
        ort_out_cache[(rec["model"], batch)] = (feeds, want)

        impl = f"rlxc ({rec['exporter']} export)"
        stage = "import"
        try:
            t0 = time.perf_counter()
            module, params = from_onnx(model, bind_shapes(model, batch, seq))
            t_import = time.perf_counter() - t0
            stage = "compile"
            t0 = time.perf_counter()
            exe = rlxc.compile(module, target="cuda", params=params, mode="graph")
            t_compile = time.perf_counter() - t0
            stage = "run"
            got = exe.run(feeds)
            err = errors(got, want)
            dev_ms = statistics.median(exe.time_launches(repeat=a.repeat))
            torch = self.torch
            dev_feeds = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
            torch.cuda.synchronize()
            wall, n = wall_median(lambda: exe.run(dev_feeds), a.repeat, a.budget_s, warmup=3)
            self.row(**key, impl=impl, device_ms=dev_ms, wall_ms=wall, max_err=err, runs=n,
                     import_s=round(t_import, 2), compile_s=round(t_compile, 2),
                     gemm=getattr(exe, "gemm_backend", None),
                     note=f"import {t_import:.1f} s, compile {t_compile:.1f} s, gemm {getattr(exe, 'gemm_backend', None)}")
            del exe
        except Exception as e:
            msg = f"{stage} failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            self.row(**key, impl=impl, note=msg, error=traceback.format_exc()[-3000:])

    # -- the source model in PyTorch
    def torch_peers(self, rec: dict, batch: int, feeds, want):
        a, torch = self.args, self.torch
        seq = a.seq
        key = dict(model=rec["model"], size=rec["size"], batch=batch, seq=seq if rec["model"] not in IMAGE_MODELS else None)
        m = self.torch_models.get((rec["model"], rec["size"]))
        if m is None:
            m = make_model(rec["model"], rec["size"]).cuda()
            self.torch_models = {(rec["model"], rec["size"]): m}  # one on the GPU at a time
        args = tuple(torch.from_numpy(feeds[k]).cuda() for k in rec["io"]["inputs"])
        with torch.no_grad():
            out = m(*args)
            out = [out] if isinstance(out, torch.Tensor) else list(out)
            err = errors([o.float().cpu().numpy() for o in out], want)
            self.row(**key, impl="torch eager", device_ms=torch_time(m, args, a.repeat), max_err=err)
            if not a.no_compile:
                try:
                    torch._dynamo.reset()
                    compiled = torch.compile(m)
                    t0 = time.perf_counter()
                    compiled(*args)
                    t_c = time.perf_counter() - t0
                    self.row(**key, impl="torch.compile", device_ms=torch_time(compiled, args, a.repeat),
                             note=f"compile {t_c:.1f} s")
                except Exception as e:
                    self.row(**key, impl="torch.compile", note=f"failed: {type(e).__name__}: {str(e)[:200]}")

    def run(self, records: list[dict], root: Path):
        import onnx

        batches = [int(b) for b in self.args.batches.split(",")]
        by_model: dict[tuple[str, str], list[dict]] = {}
        for rec in records:
            by_model.setdefault((rec["model"], rec["size"]), []).append(rec)
        for (name, size), recs in by_model.items():
            loaded = []
            for rec in recs:
                path = root / rec["file"]
                t0 = time.perf_counter()
                loaded.append((rec, path, onnx.load(str(path))))
                print(f"{rec['file']}: loaded in {time.perf_counter() - t0:.1f} s", flush=True)
            for batch in batches:
                print(f"== {name} ({size}) batch {batch}" + ("" if name in IMAGE_MODELS else f", seq {self.args.seq}"), flush=True)
                cache: dict = {}
                for rec, path, model in loaded:
                    self.onnx_file(rec, path, model, batch, cache)
                if not self.args.no_torch and (name, batch) in cache:
                    self.torch_peers(recs[0], batch, *cache[(name, batch)])
            self.torch_models = {}
            self.torch.cuda.empty_cache()


def markdown(report: dict) -> str:
    lines = [
        f"**Device:** {report['device']}; **date:** {report['date']}; host {report['host']}; "
        f"torch {report['torch']}, onnxruntime {report['onnxruntime']}; TF32 off everywhere.",
        "",
        "rlxc device ms: one graph launch, CUDA events. rlxc wall ms: one `run()` with device-resident "
        "inputs and outputs. onnxruntime: wall ms per `run()` on host arrays. torch: CUDA events around "
        "one call (benchmarks/gpu.py's `torch_time`). Medians. err: max |error| / max |ONNX Runtime CPU output|.",
        "",
        "| model | batch | seq | implementation | device ms | wall ms | err | note |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for r in report["rows"]:
        f = lambda v, p=3: "" if v is None else f"{v:.{p}f}"  # noqa: E731
        err = "" if r.get("max_err") is None else f"{r['max_err']:.1e}"
        name = {"bert": "BERT-base", "gpt2": "GPT-2 small", "resnet": "ResNet-50", "mobilenet": "MobileNetV2"}.get(r["model"], r["model"])
        if r["size"] != "full":
            name += f" ({r['size']})"
        lines.append(f"| {name} | {r['batch']} | {r['seq'] or ''} | {r['impl']} | {f(r.get('device_ms'))} | "
                     f"{f(r.get('wall_ms'))} | {err} | {r.get('note', '')} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=Path, default=Path("build/onnx_models"), help="export_models.py's output directory")
    ap.add_argument("--only", default="", help="comma-separated substrings of file names to run")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=10.0, help="wall-time cap for one wall-clock measurement")
    ap.add_argument("--ort-repeat", type=int, default=30)
    ap.add_argument("--ort-budget-s", type=float, default=10.0)
    ap.add_argument("--ort-cuda", action="store_true", help="also ONNX Runtime's CUDA provider, where installed")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat, args.ort_repeat, args.budget_s, args.ort_budget_s = 20, 5, 3.0, 3.0
    import onnxruntime as ort
    import torch

    if not rlxc.cuda.is_available():
        print("no NVIDIA GPU and driver: rlxc target='cuda' cannot run here", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    manifest = args.models / "manifest.json"
    if not manifest.exists():
        print(f"{manifest}: missing; run benchmarks/export_models.py --out {args.models} first", file=sys.stderr)
        return 2
    records = [r for r in json.loads(manifest.read_text()) if r.get("status") == "ok"]
    failed = [r for r in json.loads(manifest.read_text()) if r.get("status") != "ok"]
    if args.only:
        records = [r for r in records if any(s in r["file"] for s in args.only.split(","))]
    report = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"), "host": platform.node(),
              "torch": torch.__version__, "onnxruntime": ort.__version__, "rows": [],
              "export_failures": [{k: r.get(k) for k in ("file", "error")} for r in failed]}
    print(f"device {report['device']}, {report['date']}; {len(records)} exported model(s)", flush=True)
    for r in failed:
        print(f"(not exported: {r['file']}: {str(r.get('error', ''))[:200]})")
    bench = Bench(args)
    bench.run(records, args.models)
    report["rows"] = bench.rows
    md = markdown(report)
    print()
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "onnx_models.json").write_text(json.dumps(report, indent=1, default=str))
        (args.out / "onnx_models.md").write_text(md + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

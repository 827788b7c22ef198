"""Transformer encoder stacks through rlxc against PyTorch, side by side in
one run. Run on the GPU machine:

    python benchmarks/encoders.py [--quick] [--models bert-base,minilm] [--dtypes f32,f16,bf16]
                                  [--batches 1,32] [--seq 128] [--mask] [--pre-norm] [--out DIR]
    python benchmarks/encoders.py --dry-run      # CPU only: build, lower, interpret small

Models (post-norm BERT layers, exact-erf GELU, layer_norm eps 1e-12):

* bert-base: 12 layers, hidden 768, 12 heads, ffn 3072;
* minilm: 6 layers, hidden 384, 12 heads, ffn 1536;
* bert-large: 24 layers, hidden 1024, 16 heads, ffn 4096.

Variants of the layer (both sides): `--mask` adds a padding mask, a second
input [batch, 1, 1, seq] in the model's dtype holding 0 for kept keys and
the dtype's most negative finite value for padded ones (as Hugging Face
builds it), with batch element i padded by (i mod 4) · seq / 8 keys;
`--pre-norm` puts the norms before attention and the MLP (x + f(norm(x)),
GPT-2 / ViT style) instead of after the residual add.

rlxc's graph is written with `rlxc.GraphBuilder` the way a user writes it:
`linear`, `reshape` + `transpose` to heads, `attention`, `add` +
`layer_norm`, `gelu`; compiled with `rlxc.compile`'s default pipeline (TF32
off). PyTorch runs the same weights with `F.scaled_dot_product_attention`:
eager, `torch.compile` and `torch.compile(mode="reduce-overhead")`, TF32 off.

For each (model, batch, dtype) and each system:

* device ms: median of CUDA-event-timed calls; for rlxc the whole work of a
  `run()` (`CudaExecutable.time_runs`: input copy, kernels, output copy);
  "kernels" is the launch list alone (`time_launches`);
* wall ms: median of `perf_counter` around one call that returns device
  outputs and is synchronised (rlxc: `exe.run({"x": torch_tensor})`, which
  synchronises; PyTorch: the call and `torch.cuda.synchronize()`); inputs
  and outputs stay on the device;
* err: max |y - ref| / max |ref| against a float64 PyTorch run of the same
  (rounded) weights and input;
* rlxc overhead µs: `CudaExecutable.host_overhead`, the median over calls of
  `run()`'s wall time minus the same call's device time (events around its
  graph launch).

"rlxc, unmerged" is the same graph lowered without rlx-merge-projections
(Q/K/V as three gemms), to measure that pass's trade-off (--no-ab skips it);
"rlxc, untuned" (--untuned) runs cuBLASLt's first proposed algorithm for
every gemm (`gemm_autotune=False`) where rlxc times the proposals at load.
`--out DIR` writes encoders.json and encoders.md there.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import rlxc  # noqa: E402
from gpu import torch_time, wall_ms  # noqa: E402


@dataclass(frozen=True)
class Config:
    layers: int
    hidden: int
    heads: int
    ffn: int


MODELS = {
    "bert-base": Config(12, 768, 12, 3072),
    "minilm": Config(6, 384, 12, 1536),
    "bert-large": Config(24, 1024, 16, 4096),
}


def model_config(name: str) -> Config:
    """A model of MODELS, or a stack by its sizes, LAYERSxHIDDENxHEADSxFFN
    (2x4096x32x11008), added to MODELS; ValueError naming what is wrong."""
    if name in MODELS:
        return MODELS[name]
    try:
        layers, hidden, heads, ffn = (int(v) for v in name.split("x"))
    except ValueError:
        raise ValueError(f"unknown model '{name}': expected {', '.join(MODELS)} "
                         "or LAYERSxHIDDENxHEADSxFFN (2x4096x32x11008)") from None
    if min(layers, hidden, heads, ffn) < 1:
        raise ValueError(f"model '{name}': every size must be 1 or more")
    if hidden % heads:
        raise ValueError(f"model '{name}': {heads} heads do not divide hidden {hidden}")
    MODELS[name] = Config(layers, hidden, heads, ffn)
    return MODELS[name]


EPS = 1e-12
SYSTEMS = ("rlxc", "rlxc, unmerged", "rlxc, untuned", "torch eager", "torch.compile", "torch.compile reduce-overhead")


# --------------------------------------------------------------------------- the model


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    h, f = cfg.hidden, cfg.ffn
    out: dict[str, tuple[int, ...]] = {}
    for i in range(cfg.layers):
        p = f"l{i}."
        for name in ("q", "k", "v", "o"):
            out[p + name + ".w"], out[p + name + ".b"] = (h, h), (h,)
        out[p + "fc1.w"], out[p + "fc1.b"] = (f, h), (f,)
        out[p + "fc2.w"], out[p + "fc2.b"] = (h, f), (h,)
        for ln in ("ln1", "ln2"):
            out[p + ln + ".g"], out[p + ln + ".b"] = (h,), (h,)
    return out


def make_weights(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """BERT-like initialisation (float32): N(0, 0.02) weights, small biases,
    layer-norm gains near 1."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith(".w"):
            out[name] = 0.02 * rng.standard_normal(shape)
        elif name.endswith(".g"):
            out[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            out[name] = 0.02 * rng.standard_normal(shape)
    return {k: v.astype(np.float32) for k, v in out.items()}


def build_rlxc(cfg: Config, batch: int, seq: int, dtype: str, mask: bool = False, pre_norm: bool = False):
    """The encoder as a user writes it with GraphBuilder (`mask`: a padding
    mask input; `pre_norm`: norms before attention and the MLP)."""
    g = rlxc.GraphBuilder()
    h, nh = cfg.hidden, cfg.heads
    hd = h // nh
    x = g.input("x", [batch, seq, h], dtype)
    m = g.input("mask", [batch, 1, 1, seq], dtype) if mask else None

    def param(name):
        return g.param(name, list(param_shapes(cfg)[name]), dtype)

    def heads(t):  # [b, s, h] -> [b, heads, s, hd]
        return g.transpose(g.reshape(t, [batch, seq, nh, hd]), [0, 2, 1, 3])

    for i in range(cfg.layers):
        p = f"l{i}."

        def norm(t, ln):
            return g.layer_norm(t, param(p + ln + ".g"), param(p + ln + ".b"), eps=EPS)

        hx = norm(x, "ln1") if pre_norm else x
        q = heads(g.linear(hx, param(p + "q.w"), param(p + "q.b")))
        k = heads(g.linear(hx, param(p + "k.w"), param(p + "k.b")))
        v = heads(g.linear(hx, param(p + "v.w"), param(p + "v.b")))
        a = g.attention(q, k, v, mask=m)
        a = g.reshape(g.transpose(a, [0, 2, 1, 3]), [batch, seq, h])
        a = g.linear(a, param(p + "o.w"), param(p + "o.b"))
        x1 = g.add(a, x) if pre_norm else norm(g.add(a, x), "ln1")
        f = g.gelu(g.linear(norm(x1, "ln2") if pre_norm else x1, param(p + "fc1.w"), param(p + "fc1.b")))
        f = g.linear(f, param(p + "fc2.w"), param(p + "fc2.b"))
        x = g.add(f, x1) if pre_norm else norm(g.add(f, x1), "ln2")
    return g.build([x])


def torch_encoder(cfg: Config, pre_norm: bool = False):
    """The same encoder in PyTorch (weights as a dict argument; `mask` the
    additive padding mask or None)."""
    import torch.nn.functional as F  # noqa: N812

    h, nh = cfg.hidden, cfg.heads
    hd = h // nh

    def forward(x, w, mask=None):
        b, s, _ = x.shape
        for i in range(cfg.layers):
            p = f"l{i}."

            def heads(t):
                return t.view(b, s, nh, hd).transpose(1, 2)

            def norm(t, ln, _p=p):
                return F.layer_norm(t, (h,), w[_p + ln + ".g"], w[_p + ln + ".b"], EPS)

            hx = norm(x, "ln1") if pre_norm else x
            q = heads(F.linear(hx, w[p + "q.w"], w[p + "q.b"]))
            k = heads(F.linear(hx, w[p + "k.w"], w[p + "k.b"]))
            v = heads(F.linear(hx, w[p + "v.w"], w[p + "v.b"]))
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            a = a.transpose(1, 2).reshape(b, s, h)
            a = F.linear(a, w[p + "o.w"], w[p + "o.b"])
            x1 = a + x if pre_norm else norm(a + x, "ln1")
            f = F.linear(F.gelu(F.linear(norm(x1, "ln2") if pre_norm else x1, w[p + "fc1.w"], w[p + "fc1.b"])),
                         w[p + "fc2.w"], w[p + "fc2.b"])
            x = f + x1 if pre_norm else norm(f + x1, "ln2")
        return x

    return forward


def padding_mask(batch: int, seq: int, dtype):
    """The additive padding mask [batch, 1, 1, seq] (torch, on the GPU):
    batch element i keeps seq - (i mod 4) · seq / 8 keys; padded keys hold
    the dtype's most negative finite value."""
    import torch

    m = torch.zeros(batch, 1, 1, seq, dtype=dtype)
    for i in range(batch):
        keep = seq - (i % 4) * (seq // 8)
        m[i, ..., keep:] = torch.finfo(dtype).min
    return m.cuda()


# --------------------------------------------------------------------------- timing


def events_ms(fn, repeat: int, warmup: int = 3) -> float:
    """Median device milliseconds of fn(), CUDA events on torch's current stream."""
    return torch_time(fn, (), repeat, warmup=warmup)


def max_rel(y, ref) -> float:
    y64, r64 = y.double(), ref.double()
    return float((y64 - r64).abs().max() / r64.abs().max().clamp_min(1e-30))


# --------------------------------------------------------------------------- rlxc


def compile_unmerged(module, params):
    """rlxc.compile's steps without rlx-merge-projections (the A/B baseline)."""
    from rlxc.codegen import HEADERS
    from rlxc.driver import cuda_pipeline
    from rlxc.passes.pipelines import expand_pipeline
    from rlxc.runtime import cublaslt
    from rlxc.runtime.driver_api import device_arch
    from rlxc.runtime.executable import CudaExecutable
    from rlxc.runtime.nvrtc import compile_module_kernels
    from rlxc.context import make_context

    arch, sms = device_arch()
    gemm = "cublaslt" if cublaslt.available() else "kernel"
    lowered = module.clone()
    ctx = make_context()
    for p in expand_pipeline(cuda_pipeline(arch, sms, gemm)):
        if p.name != "rlx-merge-projections":
            p.apply(ctx, lowered)
    lowered.verify()
    cubins = compile_module_kernels(lowered, arch, headers=HEADERS)
    return CudaExecutable(lowered, params, cubins, "graph")


def rlxc_params(weights: dict[str, np.ndarray], dtype: str) -> dict[str, np.ndarray]:
    """The weights as rlxc's carriers: f16 arrays, bf16 as float32 holding bf16 values."""
    import torch

    if dtype == "f32":
        return weights
    if dtype == "f16":
        return {k: v.astype(np.float16) for k, v in weights.items()}
    return {k: torch.from_numpy(v).bfloat16().float().numpy() for k, v in weights.items()}


def bench_rlxc(exe, inputs, ref, args) -> dict:
    import torch

    x = inputs["x"]
    (out,) = exe.run(inputs)
    y = torch.as_tensor(out, device="cuda") if x.dtype != torch.bfloat16 else _bf16_view(out)
    row = {"err": max_rel(y, ref)}
    row["device_ms"] = statistics.median(exe.time_runs(inputs, repeat=args.repeat))
    row["kernels_ms"] = statistics.median(exe.time_launches(repeat=args.repeat))
    row["wall_ms"] = wall_ms(lambda: exe.run(inputs), args.wall_repeat)
    # paired: alternate plain runs (wall) and event-timed runs (device)
    row["overhead_us"] = exe.host_overhead(inputs, repeat=args.wall_repeat)["overhead_us"]
    row["launches"] = len(exe.launches)
    row["io_graph"] = exe.io_graph_error or "yes"
    return row


def record_system(case: dict, label: str, measure) -> None:
    """`measure()`'s row into case["systems"][label], or its error under
    case["errors"][label] (the traceback printed), so the run goes on."""
    try:
        case["systems"][label] = measure()
    except Exception as e:  # noqa: BLE001 - report and go on
        case["errors"][label] = f"{type(e).__name__}: {e}"[:400]
        traceback.print_exc()


def bench_rlxc_system(case: dict, label: str, make, inputs, ref, args) -> None:
    """Compiles with `make()` (timed), benchmarks the executable into
    case["systems"][label] (`bench_rlxc`), or records the error
    (`record_system`); closes the executable."""

    def measure() -> dict:
        t0 = time.perf_counter()
        exe = make()
        try:
            compile_s = time.perf_counter() - t0
            return {**bench_rlxc(exe, inputs, ref, args), "compile_s": compile_s}
        finally:
            exe.close()

    record_system(case, label, measure)


def _bf16_view(out):
    """An rlxc bf16 DeviceArray as a torch bfloat16 tensor (a copy: the CUDA
    array interface has no bfloat16)."""
    import torch

    from rlxc.runtime.driver_api import _driver, check

    t = torch.empty(out.shape, dtype=torch.bfloat16, device="cuda")
    check(_driver().cuMemcpyDtoD(t.data_ptr(), out.ptr, out.nbytes), "cuMemcpyDtoD")
    return t


# --------------------------------------------------------------------------- torch


def bench_torch(fn, x, ref, args) -> dict:
    import torch

    y = fn(x)
    torch.cuda.synchronize()
    row = {"err": max_rel(y, ref)}
    row["device_ms"] = events_ms(lambda: fn(x), args.repeat)

    def call():
        fn(x)
        torch.cuda.synchronize()

    row["wall_ms"] = wall_ms(call, args.wall_repeat)
    return row


def bench_torch_systems(case: dict, modes, forward, x, ref, args, extra: tuple = ()) -> None:
    """`forward(x, *extra)` as each of `modes` ((label, torch.compile keyword
    arguments, or None for eager); `extra` are arguments of the compiled
    function, not constants baked into it), benchmarked (`bench_torch`, the
    compile time included) into case["systems"][label], or the error
    recorded (`record_system`) and the rest run."""
    import torch

    def measure(kw) -> dict:
        t0 = time.perf_counter()
        compiled = forward
        if kw is not None:
            torch._dynamo.reset()
            compiled = torch.compile(forward, **kw)

        def fn(t):
            return compiled(t, *extra)

        if kw is not None:
            fn(x)
            fn(x)
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        return {**bench_torch(fn, x, ref, args), "compile_s": compile_s}

    with torch.no_grad():
        for label, kw in modes:
            record_system(case, label, lambda kw=kw: measure(kw))


# --------------------------------------------------------------------------- the run


def run_case(name: str, cfg: Config, batch: int, dtype: str, weights, args) -> dict:
    import torch

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    case = {"model": name, "batch": batch, "seq": args.seq, "dtype": dtype, "systems": {}, "errors": {}}
    gen = torch.Generator().manual_seed(1000 + batch)
    x32 = torch.randn(batch, args.seq, cfg.hidden, generator=gen)
    x = x32.to(tdt).cuda()
    mask = padding_mask(batch, args.seq, tdt) if args.mask else None
    w = {k: torch.from_numpy(v).to(tdt).cuda() for k, v in weights.items()}
    encoder = torch_encoder(cfg, args.pre_norm)

    def forward(t, weights_, _mask=mask):
        return encoder(t, weights_, _mask)

    with torch.no_grad():
        ref = encoder(x.double(), {k: v.double() for k, v in w.items()}, None if mask is None else mask.double())
    torch.cuda.synchronize()

    module = build_rlxc(cfg, batch, args.seq, dtype, args.mask, args.pre_norm)
    params = rlxc_params(weights, dtype)
    inputs = {"x": x, **({"mask": mask} if mask is not None else {})}
    for label, make in (("rlxc", lambda: rlxc.compile(module, target="cuda", params=params)),
                        ("rlxc, unmerged", lambda: compile_unmerged(module, params)),
                        ("rlxc, untuned", lambda: rlxc.compile(module, target="cuda", params=params, gemm_autotune=False))):
        if (label == "rlxc, unmerged" and args.no_ab) or (label == "rlxc, untuned" and not args.untuned):
            continue
        bench_rlxc_system(case, label, make, inputs, ref, args)

    modes = [("torch eager", None), ("torch.compile", {}), ("torch.compile reduce-overhead", {"mode": "reduce-overhead"})]
    bench_torch_systems(case, modes, forward, x, ref, args, extra=(w,))
    del w, x, ref
    torch.cuda.empty_cache()
    return case


def markdown(report: dict) -> str:
    lines = [
        f"# Encoder stacks: rlxc against PyTorch ({report['device']}, {report['date']})",
        "",
        f"seq {report['seq']}{'; padding mask' if report.get('mask') else ''}"
        f"{'; pre-norm layers' if report.get('pre_norm') else ''}; device ms (CUDA events, median of {report['repeat']}), "
        f"wall ms (one synchronised call, device in and out, median of {report['wall_repeat']}), "
        "err = max|y - ref| / max|ref| against float64 PyTorch. rlxc device time is the whole "
        "run (input copy, kernels, output copy); rlxc overhead = median of wall - device "
        "of the same call (`host_overhead`).",
        "",
    ]
    systems = [s for s in SYSTEMS if any(s in c["systems"] for c in report["cases"])]
    head = "| model | batch | dtype | " + " | ".join(f"{s} device / wall" for s in systems) + \
        " | rlxc overhead µs | " + " | ".join(f"{s} err" for s in systems) + " |"
    lines += [head, "|" + "---|" * (3 + 2 * len(systems) + 1)]
    for c in report["cases"]:
        cells = []
        for s in systems:
            r = c["systems"].get(s)
            cells.append(f"{r['device_ms']:.3f} / {r['wall_ms']:.3f}" if r else "—")
        r = c["systems"].get("rlxc")
        over = f"{r['overhead_us']:.1f}" if r else "—"
        errs = [f"{c['systems'][s]['err']:.1e}" if s in c["systems"] else "—" for s in systems]
        lines.append(f"| {c['model']} | {c['batch']} | {c['dtype']} | " + " | ".join(cells) + f" | {over} | "
                     + " | ".join(errs) + " |")
    errors = [(c, s, e) for c in report["cases"] for s, e in c["errors"].items()]
    if errors:
        lines += ["", "Failures:", ""]
        lines += [f"- {c['model']} b{c['batch']} {c['dtype']} {s}: {e}" for c, s, e in errors]
    comp = [(c, s, r["compile_s"]) for c in report["cases"] for s, r in c["systems"].items() if "compile_s" in r]
    if comp:
        lines += ["", "Compile seconds: " + "; ".join(
            f"{c['model']} b{c['batch']} {c['dtype']} {s} {t:.1f}" for c, s, t in comp)]
    return "\n".join(lines) + "\n"


def dry_run(args) -> int:
    """CPU only: builds every selected graph, lowers it with the cuda pipeline
    (no GPU needed), and interprets a 2-layer, seq-16 version of each model
    against the float64 interpretation."""
    from rlxc.driver import cuda_pipeline
    from rlxc.dialects import rlx_cuda
    from rlxc.passes.fold_params import fold_params

    for name in args.models:
        cfg = MODELS[name]
        weights = make_weights(cfg)
        for dtype in args.dtypes:
            for batch in args.batches:
                t0 = time.perf_counter()
                module = build_rlxc(cfg, batch, args.seq, dtype, args.mask, args.pre_norm)
                # the params' carriers (bf16's is float32; lowering needs no rounding)
                carried = {k: v.astype(np.float16) for k, v in weights.items()} if dtype == "f16" else weights
                merged, params = fold_params(rlxc.run_pipeline(module, "rlx-merge-projections"), carried)
                lowered = rlxc.run_pipeline(merged, cuda_pipeline("sm_90", 132, "cublaslt"))
                ops = list(lowered.walk())
                kernels = sum(isinstance(o, rlx_cuda.LaunchOp) for o in ops)
                gemms = sum(isinstance(o, rlx_cuda.GemmOp) for o in ops)
                print(f"{name} b{batch} {dtype}: {kernels} kernel launches, {gemms} gemms, "
                      f"lowered in {time.perf_counter() - t0:.1f} s", flush=True)
        small = Config(2, cfg.hidden, cfg.heads, cfg.ffn)
        module = build_rlxc(small, 2, 16, "f32", args.mask, args.pre_norm)
        exe = rlxc.compile(module, target="numpy", params=make_weights(small))
        x = np.random.default_rng(0).standard_normal((2, 16, cfg.hidden)).astype(np.float32)
        inputs = {"x": x}
        if args.mask:
            m = np.zeros((2, 1, 1, 16), np.float32)
            m[1, ..., 14:] = np.finfo(np.float32).min
            inputs["mask"] = m
        (got,) = exe.run(inputs)
        (want,) = rlxc.interpret(module, inputs, make_weights(small), float64=True)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        print(f"{name} (2 layers, seq 16) numpy target vs float64: max rel err {err:.2e}")
        if not err < 1e-4:
            return 1
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert-base,minilm")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--mask", action="store_true", help="a padding mask input [batch, 1, 1, seq]")
    ap.add_argument("--pre-norm", action="store_true", help="pre-norm layers (x + f(norm(x)))")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--no-ab", action="store_true", help="skip the rlxc build without rlx-merge-projections")
    ap.add_argument("--untuned", action="store_true", help="also rlxc with cuBLASLt's first algorithm (gemm_autotune=False)")
    ap.add_argument("--dry-run", action="store_true", help="CPU only: build, lower and interpret")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    args.batches = [int(b) for b in args.batches.split(",") if b]
    for m in args.models:
        try:
            model_config(m)
        except ValueError as e:
            ap.error(str(e))
    if args.dry_run:
        return dry_run(args)
    args.repeat = 20 if args.quick else 100
    args.wall_repeat = 50 if args.quick else 300

    import torch

    from rlxc.runtime.driver_api import device_name

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    report = {
        "device": device_name(), "date": datetime.date.today().isoformat(), "seq": args.seq,
        "mask": args.mask, "pre_norm": args.pre_norm, "argv": sys.argv[1:],
        "repeat": args.repeat, "wall_repeat": args.wall_repeat, "torch": torch.__version__,
        "python": platform.python_version(), "models": {m: asdict(MODELS[m]) for m in args.models}, "cases": [],
    }
    for name in args.models:
        cfg = MODELS[name]
        weights = make_weights(cfg)
        for batch in args.batches:
            for dtype in args.dtypes:
                t0 = time.perf_counter()
                case = run_case(name, cfg, batch, dtype, weights, args)
                report["cases"].append(case)
                summary = ", ".join(f"{s} {r['device_ms']:.3f}/{r['wall_ms']:.3f} ms err {r['err']:.1e}"
                                    for s, r in case["systems"].items())
                print(f"[{time.perf_counter() - t0:.0f} s] {name} b{batch} {dtype}: {summary}", flush=True)
                if args.out:  # partial results survive a time limit
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / "encoders.json").write_text(json.dumps(report, indent=1))
    text = markdown(report)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "encoders.json").write_text(json.dumps(report, indent=1))
        (args.out / "encoders.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

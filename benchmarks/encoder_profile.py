"""Per-kernel device time of one encoder stack, rlxc beside torch.compile
(GPU machine): where a row of benchmarks/encoders.py is lost or won.

rlxc: the executable in stream mode, each launch (kernel or cuBLASLt gemm)
between its own pair of CUDA events, median of `--repeat` passes, summed by
launch name (the kernel's entry and the line naming its form, or the
gemm's m x n x k). Each launch is enqueued from Python between its events,
so a kernel shorter than the enqueueing shows the host's gaps too: short
kernels read long beside torch.profiler's kernel durations. PyTorch: the
same stack under torch.compile, kernels' device time from torch.profiler
over `--repeat` calls, per call, summed by kernel name.

    python benchmarks/encoder_profile.py [--model bert-base] [--seq 77] [--batch 32] [--dtype f32] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoders import build_rlxc, model_config, make_weights, rlxc_params, torch_encoder

import rlxc


def rlxc_kernels(exe, repeat: int) -> dict[str, float]:
    """µs per call summed by launch name (each launch timed on its own)."""
    from cuda.bindings import driver as cu

    launches = list(exe.launches)
    events = [cu.cuEventCreate(0)[1] for _ in range(len(launches) + 1)]
    samples: list[list[float]] = [[] for _ in launches]
    try:
        for rep in range(repeat + 3):
            for i, launch in enumerate(launches):
                cu.cuEventRecord(events[i], exe.stream)
                exe.launches = [launch]
                exe._launch_list()
            cu.cuEventRecord(events[-1], exe.stream)
            cu.cuEventSynchronize(events[-1])
            if rep >= 3:
                for i in range(len(launches)):
                    samples[i].append(cu.cuEventElapsedTime(events[i], events[i + 1])[1] * 1e3)
    finally:
        exe.launches = launches
        for e in events:
            cu.cuEventDestroy(e)
    by_name: dict[str, float] = defaultdict(float)
    for launch, s in zip(launches, samples):
        by_name[launch.name.split("(")[0]] += statistics.median(s)
    return dict(by_name)


def torch_kernels(fn, x, repeat: int) -> dict[str, float]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeat):
            fn(x)
        torch.cuda.synchronize()
    out: dict[str, float] = {}
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t:
            out[ev.key[:90]] = t / repeat
    return out


def table(title: str, times: dict[str, float], top: int) -> list[str]:
    total = sum(times.values())
    lines = [f"### {title}: {total:.1f} µs of kernels per call", "", "| µs | share | kernel |", "| ---: | ---: | --- |"]
    for name, t in sorted(times.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {t:.1f} | {100 * t / total:.1f}% | `{name}` |")
    return lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base", help="a name of encoders.MODELS or LAYERSxHIDDENxHEADSxFFN")
    ap.add_argument("--seq", type=int, default=77)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cfg = model_config(args.model)
    weights = make_weights(cfg)
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    x = torch.randn(args.batch, args.seq, cfg.hidden, device="cuda", dtype=tdt)
    module = build_rlxc(cfg, args.batch, args.seq, args.dtype)
    exe = rlxc.compile(module, target="cuda", params=rlxc_params(weights, args.dtype), mode="stream")
    exe.run({"x": x})
    ours = rlxc_kernels(exe, args.repeat)
    # what each kernel is: the first line of its source (after the op's name) in the executable's module
    from rlxc.dialects import rlx_cuda

    def describe(source: str) -> str:
        notes = [ln for ln in source.splitlines() if ln.startswith("// ")]
        return next((ln for ln in notes if "form" in ln), notes[0] if notes else "")[:100]

    first = {k.entry.data: describe(k.source.data) for k in exe.module.walk() if isinstance(k, rlx_cuda.KernelOp)}
    ours = {f"{n} {first.get(n, '')}".strip(): t for n, t in ours.items()}
    w = {k: torch.from_numpy(v).to(tdt).cuda() for k, v in weights.items()}
    encoder = torch_encoder(cfg)
    compiled = torch.compile(lambda t: encoder(t, w))
    with torch.no_grad():
        theirs = torch_kernels(compiled, x, args.repeat)
    lines = [f"## {args.model} seq {args.seq} batch {args.batch} {args.dtype} "
             f"({torch.cuda.get_device_name()}, torch {torch.__version__})", "",
             *table("rlxc (each launch on its own)", ours, args.top),
             *table("torch.compile (torch.profiler)", theirs, args.top)]
    print("\n".join(lines))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "encoder_profile.json").write_text(json.dumps({"args": vars(args) | {"out": str(args.out)},
                                                                  "rlxc": ours, "torch_compile": theirs}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

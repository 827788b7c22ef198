"""What a CUDA graph's launch costs the host, and `exe.run`'s overhead beyond
the device time (GPU machine), with the captured graph's memset nodes kept
or replaced by fill kernels (`executable.MEMSETS_AS_KERNELS`), and
optionally cuBLASLt's split-K schemes limited (`cublaslt.REDUCTION_SCHEMES`).

For each encoder (benchmarks/encoders.py's builder, seq 128, device-resident
torch inputs) and variant, one line of JSON: the I/O graph's nodes by kind,
the device time per call (events, median), `host_overhead()` in `--rounds`
rounds (each the median over `--per` calls of wall less that call's device
time), and the host time of the `cuGraphLaunch` call alone on an idle
stream (median of 60). The variants are compiled and measured in turns
within one process, so they share the card's state.

    python benchmarks/host_launch.py [--cases bert-base:32:f32,...] [--variants kernels,memsets,nosplitk] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rlxc  # noqa: E402
from encoders import build_rlxc, make_weights, model_config, rlxc_params  # noqa: E402

#: variant -> (MEMSETS_AS_KERNELS, REDUCTION_SCHEMES)
VARIANTS = {"kernels": (True, None), "memsets": (False, None), "nosplitk": (True, 0)}


def measure(name: str, batch: int, dtype: str, variant: str, rounds: int, per: int) -> dict:
    import torch
    from cuda.bindings import driver as cu

    from rlxc.runtime import cublaslt, executable

    executable.MEMSETS_AS_KERNELS, cublaslt.REDUCTION_SCHEMES = VARIANTS[variant]
    try:
        cfg = model_config(name)
        tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        x = torch.randn(batch, 128, cfg.hidden, device="cuda", dtype=tdt)
        inputs = {"x": x}
        exe = rlxc.compile(build_rlxc(cfg, batch, 128, dtype), target="cuda", params=rlxc_params(make_weights(cfg), dtype))
        (y,) = exe.run(inputs)
        torch.cuda.synchronize()
        kinds: dict[str, int] = {}
        for node in executable._graph_nodes(exe._io.graph):
            kind = str(cu.cuGraphNodeGetType(node)[1]).split(".")[-1].split(":")[0].replace("CU_GRAPH_NODE_TYPE_", "").lower()
            kinds[kind] = kinds.get(kind, 0) + 1
        device_us = statistics.median(exe.time_runs(inputs, repeat=30)) * 1e3
        overhead = [round(exe.host_overhead(inputs, repeat=per)["overhead_us"], 1) for _ in range(rounds)]
        launch = []
        pc = time.perf_counter
        for _ in range(60):
            cu.cuStreamSynchronize(exe.stream)
            t0 = pc()
            cu.cuGraphLaunch(exe._io.exec, exe.stream)
            launch.append((pc() - t0) * 1e6)
        cu.cuStreamSynchronize(exe.stream)
        out = torch.as_tensor(y, device="cuda") if dtype != "bf16" else None
        row = {"model": name, "batch": batch, "dtype": dtype, "variant": variant, "nodes": kinds,
               "memsets_as_kernels": exe.memsets_as_kernels, "device_us": round(device_us, 1),
               "host_overhead_us": overhead, "launch_call_us": round(statistics.median(launch), 2),
               "checksum": None if out is None else float(out.float().abs().sum())}
        exe.close()
        return row
    finally:
        executable.MEMSETS_AS_KERNELS, cublaslt.REDUCTION_SCHEMES = True, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="bert-base:32:f32,12x384x12x1536:32:f32,bert-base:32:f16,bert-base:1:f32",
                    help="MODEL:BATCH:DTYPE,... (models as encoders.py --models)")
    ap.add_argument("--variants", default="memsets,kernels", help=f"of {','.join(VARIANTS)}")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--per", type=int, default=60)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows = []
    for case in args.cases.split(","):
        name, batch, dtype = case.split(":")
        for variant in args.variants.split(","):
            row = measure(name, int(batch), dtype, variant, args.rounds, args.per)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "host_launch.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where `exe.run` spends its time beyond the device work (GPU machine).

For each encoder (benchmarks/encoders.py's builder, seq 128, batch 1, with
device-resident torch inputs), prints `host_overhead()` (median over runs of
the wall time minus the same run's event-timed device time), the number of nodes in
the I/O graph, and the host-side cost of the pieces of the fast path, each
the median of many calls: the Python work before the launch, the
`cuGraphLaunch` call itself, and the wait (`cuStreamSynchronize`) after the
work is done (a launch, a sleep well past the device time, then the sync).

    python benchmarks/host_path.py [--models bert-base,minilm] [--dtypes f16] [--out DIR]
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
from encoders import MODELS, build_rlxc, make_weights, rlxc_params  # noqa: E402
from gpu import wall_ms  # noqa: E402


def median_us(fn, n=400) -> float:
    """Median wall microseconds of fn(), no warm-up (gpu.wall_ms)."""
    return wall_ms(fn, n, warmup=0) * 1e3


def profile(name: str, dtype: str, batch: int) -> dict:
    import torch
    from cuda.bindings import driver as cu

    cfg = MODELS[name]
    module = build_rlxc(cfg, batch, 128, dtype)
    exe = rlxc.compile(module, target="cuda", params=rlxc_params(make_weights(cfg), dtype))
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    x = torch.randn(batch, 128, cfg.hidden, device="cuda", dtype=tdt)
    inputs = {"x": x}
    exe.run(inputs)
    torch.cuda.synchronize()
    oh = exe.host_overhead(inputs, repeat=300)
    io = exe._io
    nodes = cu.cuGraphGetNodes(io.graph)[2] if io is not None else None

    def prep():  # everything run() does before the launch
        exe._device_sources(inputs)
        exe._destinations(None)

    def launch_then_sync():
        cu.cuGraphLaunch(io.exec, exe.stream)
        cu.cuStreamSynchronize(exe.stream)

    prep_us = median_us(prep)
    launches = []
    for _ in range(200):
        t0 = time.perf_counter()
        cu.cuGraphLaunch(io.exec, exe.stream)
        launches.append((time.perf_counter() - t0) * 1e6)
        cu.cuStreamSynchronize(exe.stream)
    waits = []
    sleep_s = 2 * oh["device_us"] * 1e-6 + 200e-6
    for _ in range(200):
        cu.cuGraphLaunch(io.exec, exe.stream)
        time.sleep(sleep_s)
        t0 = time.perf_counter()
        cu.cuStreamSynchronize(exe.stream)
        waits.append((time.perf_counter() - t0) * 1e6)
    spin = []
    for _ in range(300):  # launch + a poll loop instead of a blocking sync
        t0 = time.perf_counter()
        cu.cuGraphLaunch(io.exec, exe.stream)
        while cu.cuStreamQuery(exe.stream)[0] != cu.CUresult.CUDA_SUCCESS:
            pass
        spin.append((time.perf_counter() - t0) * 1e6)
    sync_total = median_us(launch_then_sync, 300)
    exe.close()
    return {
        "model": name, "dtype": dtype, "batch": batch, "graph_nodes": nodes,
        **{k: round(v, 2) for k, v in oh.items()},
        "prep_us": round(prep_us, 2),
        "cuGraphLaunch_us": round(statistics.median(launches), 2),
        "sync_after_done_us": round(statistics.median(waits), 2),
        "launch+sync_us": round(sync_total, 2),
        "launch+poll_us": round(statistics.median(spin), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert-base,minilm")
    ap.add_argument("--dtypes", default="f16")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    each_case(args, profile, "host_path.json")
    return 0


def each_case(args, profile, filename: str) -> list[dict]:
    """`profile(model, dtype, batch)` for every combination of the comma
    lists `args.models`, `args.dtypes` and `args.batches`, each row printed
    as JSON as it comes; all of them written to `args.out / filename`
    where `args.out` is set."""
    rows = []
    for m in args.models.split(","):
        for d in args.dtypes.split(","):
            for b in args.batches.split(","):
                r = profile(m, d, int(b))
                print(json.dumps(r), flush=True)
                rows.append(r)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / filename).write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())

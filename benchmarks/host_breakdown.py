"""Where `exe.run`'s wall time beyond the device time goes, piece by piece
(GPU machine). Companion of host_path.py, with interleaved rounds so that
every variant sees the same clocks:

* run: `exe.run(inputs)` as a user calls it;
* launch+sync: `cuGraphLaunch` + `cuStreamSynchronize` of the I/O graph;
* stamps: run()'s steps replayed with perf_counter stamps (prep, the launch
  call, the wait);
* device: CUDA events around the graph launch;
* the same launch+sync on a non-blocking stream, and with the context's
  scheduling flag set to spin (where the driver takes cuCtxSetFlags).

    python benchmarks/host_breakdown.py [--models minilm,bert-base] [--dtypes f16,f32] [--out DIR]
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


def med(xs):
    return round(statistics.median(xs), 2)


def profile(name: str, dtype: str, batch: int, rounds: int, per: int) -> dict:
    import torch
    from cuda.bindings import driver as cu

    cfg = MODELS[name]
    exe = rlxc.compile(build_rlxc(cfg, batch, 128, dtype), target="cuda",
                       params=rlxc_params(make_weights(cfg), dtype))
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    x = torch.randn(batch, 128, cfg.hidden, device="cuda", dtype=tdt)
    inputs = {"x": x}
    for _ in range(10):
        exe.run(inputs)
    io = exe._io
    s_block = exe.stream
    s_nb = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING)[1]
    ev0, ev1 = cu.cuEventCreate(0)[1], cu.cuEventCreate(0)[1]
    pc = time.perf_counter
    out = {k: [] for k in ("run", "launch_sync", "launch_sync_nb", "launch_poll", "device",
                           "prep", "launch_call", "wait", "run_nb", "prep_run_io", "ctx_prep_run_io", "run_io_only")}

    def run_nb():
        exe.stream = s_nb
        try:
            t0 = pc()
            exe.run(inputs)
            return pc() - t0
        finally:
            exe.stream = s_block

    srcs0 = exe._device_sources(inputs)
    dsts0, _ = exe._destinations(None)
    for _ in range(rounds):
        for _ in range(per):
            t0 = pc()
            exe.run(inputs)
            out["run"].append(pc() - t0)
        for _ in range(per):  # run()'s pieces without its entry checks
            t0 = pc()
            srcs = exe._device_sources(inputs)
            dsts, _ = exe._destinations(None)
            exe._run_io(exe._io, srcs, dsts)
            out["prep_run_io"].append(pc() - t0)
        for _ in range(per):
            t0 = pc()
            cu.cuCtxGetCurrent()
            srcs = exe._device_sources(inputs)
            dsts, _ = exe._destinations(None)
            exe._run_io(exe._io, srcs, dsts)
            out["ctx_prep_run_io"].append(pc() - t0)
        for _ in range(per):
            t0 = pc()
            exe._run_io(exe._io, srcs0, dsts0)
            out["run_io_only"].append(pc() - t0)
        for _ in range(per):
            out["run_nb"].append(run_nb())
        for _ in range(per):
            t0 = pc()
            cu.cuGraphLaunch(io.exec, s_block)
            cu.cuStreamSynchronize(s_block)
            out["launch_sync"].append(pc() - t0)
        for _ in range(per):
            t0 = pc()
            cu.cuGraphLaunch(io.exec, s_nb)
            cu.cuStreamSynchronize(s_nb)
            out["launch_sync_nb"].append(pc() - t0)
        for _ in range(per):
            t0 = pc()
            cu.cuGraphLaunch(io.exec, s_block)
            while cu.cuStreamQuery(s_block)[0] != cu.CUresult.CUDA_SUCCESS:
                pass
            out["launch_poll"].append(pc() - t0)
        for _ in range(per):
            cu.cuEventRecord(ev0, s_block)
            cu.cuGraphLaunch(io.exec, s_block)
            cu.cuEventRecord(ev1, s_block)
            cu.cuEventSynchronize(ev1)
            out["device"].append(cu.cuEventElapsedTime(ev0, ev1)[1] * 1e-3)
        for _ in range(per):
            t0 = pc()
            srcs = exe._device_sources(inputs)
            dsts, _ = exe._destinations(None)
            t1 = pc()
            cu.cuGraphLaunch(io.exec, s_block)
            t2 = pc()
            cu.cuStreamSynchronize(s_block)
            t3 = pc()
            out["prep"].append(t1 - t0)
            out["launch_call"].append(t2 - t1)
            out["wait"].append(t3 - t2)
    flags = cu.cuCtxGetFlags()
    spin_flag = int(cu.CUctx_flags.CU_CTX_SCHED_SPIN)
    spin, runs = [], []
    if hasattr(cu, "cuCtxSetFlags"):  # spin scheduling, where the driver lets a context change it
        for _ in range(rounds):
            cu.cuCtxSetFlags(spin_flag)
            for _ in range(per):
                t0 = pc()
                cu.cuGraphLaunch(io.exec, s_block)
                cu.cuStreamSynchronize(s_block)
                spin.append(pc() - t0)
            for _ in range(per):
                t0 = pc()
                exe.run(inputs)
                runs.append(pc() - t0)
            cu.cuCtxSetFlags(int(flags[1]))
            for _ in range(per):
                t0 = pc()
                exe.run(inputs)
                out["run"].append(pc() - t0)
    r = {k: med([v * 1e6 for v in vs]) for k, vs in out.items()}
    r.update(model=name, dtype=dtype, batch=batch, nodes=cu.cuGraphGetNodes(io.graph)[2],
             ctx_flags=int(flags[1]) if flags[0] == cu.CUresult.CUDA_SUCCESS else None)
    if spin:
        r["launch_sync_spin"] = med([v * 1e6 for v in spin])
        r["run_spin"] = med([v * 1e6 for v in runs])
    r["overhead_run"] = round(r["run"] - r["device"], 2)
    r["overhead_launch_sync"] = round(r["launch_sync"] - r["device"], 2)
    r["host_overhead"] = {k: round(v, 2) for k, v in exe.host_overhead(inputs, repeat=300).items()}
    exe.close()
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="minilm,bert-base")
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--per", type=int, default=30)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = []
    for m in args.models.split(","):
        for d in args.dtypes.split(","):
            for b in args.batches.split(","):
                r = profile(m, d, int(b), args.rounds, args.per)
                print(json.dumps(r), flush=True)
                rows.append(r)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "host_breakdown.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

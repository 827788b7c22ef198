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
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoders import MODELS, build_rlxc, make_weights, rlxc_params
from host_path import each_case

import rlxc


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
                           "prep", "launch_call", "wait", "run_nb", "prep_run_io", "ctx_prep_run_io", "run_io_only",
                           "launch_sync_spin", "run_spin")}

    def run_nb():
        exe.stream = s_nb
        try:
            exe.run(inputs)
        finally:
            exe.stream = s_block

    def pieces(ctx: bool, prep: bool):  # run()'s steps without its entry checks
        def call():
            if ctx:
                cu.cuCtxGetCurrent()
            srcs, dsts = ((exe._device_sources(inputs), exe._destinations(None)[0]) if prep else (srcs0, dsts0))
            exe._run_io(exe._io, srcs, dsts)
        return call

    def launch_sync(stream):
        def call():
            cu.cuGraphLaunch(io.exec, stream)
            cu.cuStreamSynchronize(stream)
        return call

    def launch_poll():
        cu.cuGraphLaunch(io.exec, s_block)
        while cu.cuStreamQuery(s_block)[0] != cu.CUresult.CUDA_SUCCESS:
            pass

    def timed(key, fn):
        for _ in range(per):
            t0 = pc()
            fn()
            out[key].append(pc() - t0)

    srcs0 = exe._device_sources(inputs)
    dsts0, _ = exe._destinations(None)
    variants = {"run": lambda: exe.run(inputs), "prep_run_io": pieces(False, True), "ctx_prep_run_io": pieces(True, True),
                "run_io_only": pieces(False, False), "run_nb": run_nb, "launch_sync": launch_sync(s_block),
                "launch_sync_nb": launch_sync(s_nb), "launch_poll": launch_poll}
    for _ in range(rounds):
        for key, fn in variants.items():
            timed(key, fn)
        for _ in range(per):
            cu.cuEventRecord(ev0, s_block)
            cu.cuGraphLaunch(io.exec, s_block)
            cu.cuEventRecord(ev1, s_block)
            cu.cuEventSynchronize(ev1)
            out["device"].append(cu.cuEventElapsedTime(ev0, ev1)[1] * 1e-3)
        for _ in range(per):
            t0 = pc()
            exe._device_sources(inputs)  # run()'s steps before the launch
            exe._destinations(None)
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
    if hasattr(cu, "cuCtxSetFlags"):  # spin scheduling, where the driver lets a context change it
        for _ in range(rounds):
            cu.cuCtxSetFlags(spin_flag)
            timed("launch_sync_spin", launch_sync(s_block))
            timed("run_spin", variants["run"])
            cu.cuCtxSetFlags(int(flags[1]))
            timed("run", variants["run"])
    r = {k: med([v * 1e6 for v in vs]) for k, vs in out.items() if vs}
    r.update(model=name, dtype=dtype, batch=batch, nodes=cu.cuGraphGetNodes(io.graph)[2],
             ctx_flags=int(flags[1]) if flags[0] == cu.CUresult.CUDA_SUCCESS else None)
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
    each_case(args, lambda m, d, b: profile(m, d, b, args.rounds, args.per), "host_breakdown.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

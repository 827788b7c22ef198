"""One row op (softmax, layer_norm or rms_norm) over rows of COLS elements,
about MB MiB of input, compiled by rlxc and run 4 times with device
inputs: a program for Nsight Compute to profile one of its kernels.

    ncu --clock-control none -k regex:rlx_ -s 2 -c 1 \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis \\
        --section InstructionStats \\
        python3 benchmarks/ncu_rows.py layer_norm f16 50257 512

(`-s 2 -c 1`: the third launch, after two warm-up runs; the device tool's
machines read the counters on Firecracker, METHOD.md: leave the clocks
alone.) Session 25's reports are in `benchmarks/sweeps/ncu-*`.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op", choices=("softmax", "layer_norm", "rms_norm"))
    ap.add_argument("dtype", choices=("f32", "f16", "bf16"))
    ap.add_argument("cols", type=int)
    ap.add_argument("mb", type=int, nargs="?", default=512)
    args = ap.parse_args()

    import torch

    import rlxc

    op, dt, cols = args.op, args.dtype, args.cols
    rows = max(1, args.mb * 2**20 // (cols * (4 if dt == "f32" else 2)))
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, cols], dt)
    carrier = np.float16 if dt == "f16" else np.float32  # bf16 params come as f32 and are rounded
    params = {}
    if op == "layer_norm":
        y = g.layer_norm(x, g.param("w", [cols], dt), g.param("b", [cols], dt))
        params = {"w": rng.random(cols).astype(carrier), "b": rng.random(cols).astype(carrier)}
    elif op == "rms_norm":
        y = g.rms_norm(x, g.param("w", [cols], dt))
        params = {"w": rng.random(cols).astype(carrier)}
    else:
        y = g.softmax(x)
    exe = rlxc.compile(g.build([y]), target="cuda", params=params)
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dt]
    xin = torch.randn(rows, cols, device="cuda").to(tdt)
    for _ in range(4):
        exe.run({"x": xin})
    torch.cuda.synchronize()
    print(f"{op} {dt} [{rows}, {cols}]: 4 runs")


if __name__ == "__main__":
    main()

"""The host-side pieces of `exe.run` timed one by one (GPU machine): each
statement of the I/O-graph path in a tight timeit loop, for one small
encoder with a torch CUDA input, to see where run()'s Python time goes.

    python benchmarks/host_pieces.py [--model minilm] [--dtype f16]
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoders import MODELS, build_rlxc, make_weights, rlxc_params

import rlxc


def main() -> int:
    import torch
    from cuda.bindings import driver as cu

    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="minilm")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    cfg = MODELS[args.model]
    exe = rlxc.compile(build_rlxc(cfg, 1, 128, args.dtype), target="cuda",
                       params=rlxc_params(make_weights(cfg), args.dtype))
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    x = torch.randn(1, 128, cfg.hidden, device="cuda", dtype=tdt)
    inputs = {"x": x}
    exe.run(inputs)
    slot = exe._in_slots[0]
    io = exe._io
    from rlxc.runtime.executable import _device_pointer

    pieces = {
        "cuCtxGetCurrent": lambda: cu.cuCtxGetCurrent(),
        "int(ctx)": (lambda c=cu.cuCtxGetCurrent()[1]: int(c)),
        "v.is_cuda": lambda: x.is_cuda,
        "v.dtype": lambda: x.dtype,
        "v.shape == shape": lambda: x.shape == slot.shape,
        "v.is_contiguous()": lambda: x.is_contiguous(),
        "v.get_device()": lambda: x.get_device(),
        "v.data_ptr()": lambda: x.data_ptr(),
        "v.device": lambda: x.device,
        "_device_pointer": lambda: _device_pointer(slot, x, exe.stream),
        "_device_sources": lambda: exe._device_sources(inputs),
        "_destinations": lambda: exe._destinations(None),
        "cuStreamQuery(idle)": lambda: cu.cuStreamQuery(exe.stream),
        "cuStreamSynchronize(idle)": lambda: cu.cuStreamSynchronize(exe.stream),
        "empty python call": lambda: None,
    }
    rows = {}
    for name, fn in pieces.items():
        n = 20000
        best = min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6
        rows[name] = round(best, 3)
    # the launch alone (then wait outside the timing)
    import time
    ts = []
    for _ in range(300):
        t0 = time.perf_counter()
        cu.cuGraphLaunch(io.exec, exe.stream)
        ts.append(time.perf_counter() - t0)
        cu.cuStreamSynchronize(exe.stream)
    ts.sort()
    rows["cuGraphLaunch (median)"] = round(ts[len(ts) // 2] * 1e6, 3)
    rows["nodes"] = cu.cuGraphGetNodes(io.graph)[2]
    print(json.dumps(rows, indent=1))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"host_pieces_{args.model}_{args.dtype}.json").write_text(json.dumps(rows, indent=1))
    exe.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

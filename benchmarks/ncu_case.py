"""One case of benchmarks/kernels.py (op, dtype, row length, size in MiB),
compiled by rlxc and run 4 times with device inputs: a program for Nsight
Compute to read one of its kernels' counters, e.g. the DRAM bytes a slice
really reads:

    ncu --clock-control none -k regex:rlx_slice_ -s 2 -c 1 \\
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \\
        python3 benchmarks/ncu_case.py slice f16 96 64

(`-k`: the kernel's family, as its name starts: rlx_ew_, rlx_norm_, rlx_slice_
...; a bare `rlx_` also matches the runtime's own kernels, rlx_signal and
rlx_fill*. `-s 2 -c 1`: the third launch, after two warm-up runs; leave
the clocks alone on the device tool's machines, METHOD.md.) Params (gamma,
bias, ...) are random, as kernels.py's. It prints the case's shape
and the bytes kernels.py counts for it (inputs read once, outputs written
once), to set against the counters. benchmarks/ncu_rows.py does the same
for the row ops with its own shapes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op")
    ap.add_argument("dtype", choices=("f32", "f16", "bf16"))
    ap.add_argument("cols", type=int)
    ap.add_argument("mb", type=float, nargs="?", default=64)
    args = ap.parse_args()

    import torch

    import rlxc

    sys.path.insert(0, str(Path(__file__).parent))
    import kernels as K

    found = K.cases([args.op], [args.dtype], [args.cols], [args.mb])
    if not found:
        raise SystemExit(f"kernels.py has no case {args.op} {args.dtype} of rows of {args.cols} "
                         f"(the transposes need a multiple of {K.HEAD_DIM})")
    case = found[0]
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i64": torch.int64}
    params = {k: K.host_param(torch.randn(s, dtype=tdt[case.dtype], device="cuda"), case.dtype)
              for k, s in K.param_shapes(case).items()}
    exe = rlxc.compile(K.build_module(case), target="cuda", params=params)
    ins = {}
    for k, (s, d) in K.input_shapes(case).items():
        ins[k] = (torch.randperm(s[0], device="cuda") if d == "i64"  # distinct rows, as kernels.py
                  else torch.randn(*s, device="cuda").to(tdt[d]))
    for _ in range(4):
        exe.run(ins)
    torch.cuda.synchronize()
    print(f"{case.op} {case.dtype} {case.shape}: 4 runs, {K.bytes_moved(case)} bytes moved as kernels.py counts them")


if __name__ == "__main__":
    main()

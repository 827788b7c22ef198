"""One case of benchmarks/kernels.py (op, dtype, row length, size in MiB),
compiled by rlxc and run 4 times with device inputs: a program for Nsight
Compute to read one of its kernels' counters, e.g. the DRAM bytes a slice
really reads:

    ncu --clock-control none -k regex:rlx_ -s 2 -c 1 \\
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \\
        python3 benchmarks/ncu_case.py slice f16 96 64

(`-s 2 -c 1`: the third launch, after two warm-up runs; leave the clocks
alone on the device tool's machines, METHOD.md.) It prints the case's shape
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

    case = K.cases([args.op], [args.dtype], [args.cols], [args.mb])[0]
    exe = rlxc.compile(K.build_module(case), target="cuda")
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i64": torch.int64}
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

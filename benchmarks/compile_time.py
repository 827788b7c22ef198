"""NVRTC compile time of every kernel of the transformer-layer example: cold
(empty cache) and warm (cached), on this machine's CPUs.

    python benchmarks/compile_time.py [--arch sm_90]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "examples")]

import rlxc  # noqa: E402
from models import EXAMPLES  # noqa: E402
from rlxc.codegen import HEADERS  # noqa: E402
from rlxc.runtime import nvrtc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"NVRTC {nvrtc.nvrtc_version()}, {os.cpu_count()} CPUs, arch {args.arch}")
    print(f"{'example':<14}{'kernels':>8}{'cold s (median)':>17}{'warm s (median)':>17}{'kernels before/after fusion':>30}")
    for name in ("transformer", "mlp", "cnn"):
        module, _ = EXAMPLES[name]()
        lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={args.arch}}}")
        n = sum(1 for _ in nvrtc_kernels(lowered))
        cold, warm = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as d:
                os.environ["RLXC_CACHE_DIR"] = d
                t = time.perf_counter()
                nvrtc.compile_module_kernels(lowered, args.arch, headers=HEADERS)
                cold.append(time.perf_counter() - t)
                t = time.perf_counter()
                nvrtc.compile_module_kernels(lowered, args.arch, headers=HEADERS)
                warm.append(time.perf_counter() - t)
        launches = sum(1 for op in lowered.walk() if op.name in ("rlx_cuda.launch", "rlx_cuda.gemm"))
        before = sum(1 for op in module.walk() if op.name.startswith("rlx.") and op.name not in ("rlx.param", "rlx.constant", "rlx.reshape"))
        print(f"{name:<14}{n:>8}{statistics.median(cold):>17.2f}{statistics.median(warm):>17.4f}{f'{before} -> {launches}':>30}")
    return 0


def nvrtc_kernels(module):
    from rlxc.dialects.rlx_cuda import KernelOp

    return [o for o in module.ops if isinstance(o, KernelOp)]


if __name__ == "__main__":
    sys.exit(main())

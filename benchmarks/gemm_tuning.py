"""cuBLASLt's proposals for an encoder's gemms, each timed (GPU machine):
what `gemm_autotune` chooses from, and by how much the fastest beats the
heuristic's first proposal.

    python benchmarks/gemm_tuning.py [--model bert-base] [--seq 77] [--batch 32] [--dtypes f32,f16] [--candidates 8]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoders import build_rlxc, model_config, make_weights, rlxc_params

import rlxc
from rlxc.runtime import cublaslt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base")
    ap.add_argument("--seq", type=int, default=77)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--dtypes", default="f32,f16")
    ap.add_argument("--candidates", type=int, default=cublaslt.AUTOTUNE_CANDIDATES)
    ap.add_argument("--repeat", type=int, default=cublaslt.AUTOTUNE_REPEAT)
    ap.add_argument("--floor", type=float, default=0.0,
                    help="AUTOTUNE_MIN_US for this run (default 0: every gemm's proposals timed)")
    ap.add_argument("--no-epilogue", action="store_true",
                    help="time the gemms without their bias epilogue (outputs wrong: timing only)")
    args = ap.parse_args()
    if args.no_epilogue:
        from nvmath.bindings import cublasLt as lt

        set_attribute = lt.matmul_desc_set_attribute
        skipped = (lt.MatmulDescAttribute.EPILOGUE, lt.MatmulDescAttribute.BIAS_POINTER)

        def without_epilogue(desc, attr, buf, size):
            if attr not in skipped:
                set_attribute(desc, attr, buf, size)

        lt.matmul_desc_set_attribute = without_epilogue
    cublaslt.AUTOTUNE_CANDIDATES, cublaslt.AUTOTUNE_REPEAT = args.candidates, args.repeat
    cublaslt.AUTOTUNE_MIN_US = args.floor
    cfg = model_config(args.model)
    weights = make_weights(cfg)
    for dtype in args.dtypes.split(","):
        cublaslt._TUNED.clear()
        exe = rlxc.compile(build_rlxc(cfg, args.batch, args.seq, dtype), target="cuda",
                           params=rlxc_params(weights, dtype))
        gemms = [g for g in exe.launches if isinstance(g, cublaslt.LtGemm)]
        print(f"## {args.model} seq {args.seq} batch {args.batch} {dtype}{' without epilogues' if args.no_epilogue else ''}: "
              "µs per proposal (first = heuristic's pick)")
        for g, times in zip(gemms, exe.gemm_tuning):
            if len(times) > 1:
                print(f"{g.name}: chose {g.choice} of {g.candidates}, {times[0] / times[g.choice]:.3f}x the first: "
                      + " ".join(f"{t:.1f}" for t in times))
        exe.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The mma attention form's tile shapes side by side (GPU machine): for
each case, rlxc's kernel with every (key rows per tile, m-tiles per warp)
pair forced, its error against SDPA, and SDPA's time, in one run.

    python benchmarks/attention_variants.py [--dtypes f16,bf16] [--variants 128:1:r,64:2:s,...]
                                            [--cases 0,1] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from attention import build, time_rlxc, time_torch

import rlxc

CASES = [("bert-base b=32", 32, 12, 128, 64), ("s=512 d=64 b=8", 8, 12, 512, 64), ("s=384 d=64 b=16", 16, 12, 384, 64),
         ("s=1024 d=128 b=4", 4, 16, 1024, 128), ("s=2048 d=64 b=2", 2, 16, 2048, 64), ("s=1024 d=64 b=4 causal", 4, 16, 1024, 64),
         ("s=512 d=128 b=8", 8, 16, 512, 128), ("s=1024 d=64 b=4", 4, 16, 1024, 64), ("s=1024 d=128 b=4 causal", 4, 16, 1024, 128),
         ("s=4096 d=64 b=1", 1, 16, 4096, 64), ("s=256 d=128 b=16", 16, 16, 256, 128), ("s=2048 d=128 b=1 causal", 1, 32, 2048, 128),
         ("s=256 d=128 b=16 causal", 16, 16, 256, 128), ("s=512 d=128 b=8 causal", 8, 16, 512, 128),
         ("s=512 d=64 b=8 causal", 8, 16, 512, 64), ("s=4096 d=64 b=1 causal", 1, 16, 4096, 64),
         ("s=128 d=64 b=32 causal", 32, 12, 128, 64), ("s=384 d=64 b=16 causal", 16, 12, 384, 64)]
#: Variants as "keys:m-tiles:q[:warps]" (q: r = query fragments in
#: registers, s = read from shared memory each step; warps per block, 4 by
#: default), optionally "+N" for N blocks per SM asked of __launch_bounds__;
#: "auto" for the codegen's own choice.
SHAPES = ["64:1:r", "128:1:r", "64:2:r", "128:2:r"]


def parse_variant(v: str) -> tuple[int | None, int | None, bool | None, int | None, int | None]:
    """(bn, m-tiles, q in smem, blocks per SM, warps); "auto": the codegen's
    own choice, nothing forced."""
    if v == "auto":
        return None, None, None, None, None
    shape, _, blocks = v.partition("+")
    bn, mt, q, *warps = shape.split(":")
    return int(bn), int(mt), q == "s", int(blocks) if blocks else None, int(warps[0]) if warps else None


def main() -> int:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from rlxc.codegen import attention as codegen

    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="f16")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--variants", default=",".join(SHAPES), help=f"comma list (default {','.join(SHAPES)})")
    ap.add_argument("--cases", default=None, help="comma list of case indices (default: all)")
    args = ap.parse_args()
    rows = []
    variants = [v for v in args.variants.split(",") if v]
    picked = CASES if args.cases is None else [CASES[int(i)] for i in args.cases.split(",")]
    for name, b, h, s, d in picked:
        causal = "causal" in name
        for dtype in args.dtypes.split(","):
            tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
            module = build(b, h, s, d, dtype, False, causal)
            torch.manual_seed(0)
            xs = [torch.randn([b, h, s, d], dtype=tdt, device="cuda") for _ in range(3)]
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                want = torch.nn.functional.scaled_dot_product_attention(*xs, is_causal=causal).float()
                t_torch = time_torch(lambda: torch.nn.functional.scaled_dot_product_attention(*xs, is_causal=causal))
            row = {"case": name, "dtype": dtype, "sdpa_us": round(t_torch, 2)}
            for variant in variants:
                bn, mt, q_smem, blocks, warps = parse_variant(variant)
                codegen.FORCE_BN, codegen.FORCE_M_TILES = bn, mt
                codegen.FORCE_Q_SMEM, codegen.FORCE_MIN_BLOCKS, codegen.FORCE_WARPS = q_smem, blocks, warps
                try:
                    exe = rlxc.compile(module, target="cuda", mode="graph")
                    (out,) = exe.run(dict(zip("qkv", xs)), device_outputs=True)
                    got = torch.as_tensor(out, device="cuda").float() if dtype == "f16" else None
                    err = float((got - want).norm() / want.norm()) if got is not None else float("nan")
                    t = time_rlxc(exe)
                    row[variant] = f"{t:.2f} ({t_torch / t:.2f}x, err {err:.1e})"
                    exe.close()
                except Exception as e:  # noqa: BLE001
                    row[variant] = f"failed: {type(e).__name__}: {str(e)[:120]}"
                finally:
                    codegen.FORCE_BN = codegen.FORCE_M_TILES = codegen.FORCE_Q_SMEM = codegen.FORCE_MIN_BLOCKS = None
                    codegen.FORCE_WARPS = None
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "attention_variants.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

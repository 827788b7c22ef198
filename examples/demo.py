"""rlxc's main job, end to end: build a transformer encoder layer, inspect it
with `rlxc-opt`, run it on the best available backend, check it against an
independent numpy implementation.

    python examples/demo.py [--seq 32] [--hidden 64] [--heads 4]

Backends: CUDA (generated kernels through NVRTC) where a GPU exists, the
numpy reference interpreter otherwise.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import transformer_encoder_layer  # noqa: E402

import rlxc  # noqa: E402


def reference_encoder(x, p, heads):
    """The same layer written directly in float64 numpy (independent of rlxc)."""
    x = x.astype(np.float64)
    p = {k: v.astype(np.float64) for k, v in p.items()}
    b, s, h = x.shape
    d = h // heads

    def lin(t, n):
        return t @ p[f"{n}.w"].T + p[f"{n}.bias"]

    def ln(t, n, eps=1e-5):
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + eps) * p[f"{n}.gamma"] + p[f"{n}.beta"]

    def split(t):
        return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    q, k, v = split(lin(x, "q")), split(lin(x, "k")), split(lin(x, "v"))
    sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    a = (sc / sc.sum(-1, keepdims=True)) @ v
    a = lin(a.transpose(0, 2, 1, 3).reshape(b, s, h), "o")
    h1 = ln(a + x, "ln1")
    f = lin(h1, "fc1")
    f = 0.5 * f * (1 + np.vectorize(math.erf)(f / math.sqrt(2)))
    return ln(lin(f, "fc2") + h1, "ln2")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--out", default="build/demo", help="where the IR files go")
    args = ap.parse_args()

    module, params = transformer_encoder_layer(args.batch, args.seq, args.hidden, args.heads)
    ops = Counter(op.name for op in module.walk() if op.name.startswith("rlx."))
    print(f"[1] built a transformer encoder layer: {sum(ops.values())} rlx ops")
    print("    " + ", ".join(f"{n.removeprefix('rlx.')} x{c}" for n, c in sorted(ops.items())))

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    src = out / "transformer.mlir"
    src.write_text(str(module) + "\n")
    cmd = ["rlxc-opt", str(src), "-p", "canonicalize,cse,dce"]
    opt = subprocess.run(  # the same tool, run as a module so no install is needed
        [sys.executable, "-m", "rlxc.tools.opt", *cmd[1:]], capture_output=True, text=True
    )
    if opt.returncode != 0:
        print(opt.stderr, file=sys.stderr)
        return 1
    (out / "transformer.opt.mlir").write_text(opt.stdout)
    print(f"[2] {' '.join(cmd)} -> {out / 'transformer.opt.mlir'}")
    for line in opt.stdout.splitlines()[1:5]:
        print("    " + line[:110])

    rng = np.random.default_rng()
    x = rng.standard_normal((args.batch, args.seq, args.hidden)).astype(np.float32)
    optimized = rlxc.parse_module(opt.stdout)
    target = "cuda" if rlxc.cuda.is_available() else "numpy"
    exe = rlxc.compile(optimized, target=target, params=params)
    exe.run({"x": x})  # first run: loads kernels (and warms the device)
    t0 = time.perf_counter()
    (y,) = exe.run({"x": x})
    ms = (time.perf_counter() - t0) * 1e3
    where = "the GPU (CUDA backend)" if target == "cuda" else "the numpy reference backend (no GPU here)"
    print(f"[3] ran on {where} in {ms:.1f} ms")

    ref = reference_encoder(x, params, args.heads)
    err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
    ok = err < (1e-4 if target == "cuda" else 1e-5) and np.isfinite(y).all()
    print(f"[4] output {list(y.shape)}: relative error vs independent float64 numpy = {err:.2e}"
          f" -> {'OK' if ok else 'MISMATCH'}")
    # The same model from the command line: `rlxc run` on the optimized IR.
    run = subprocess.run(
        [sys.executable, "-m", "rlxc.tools.cli", "run", str(out / "transformer.opt.mlir"),
         "--backend", target], capture_output=True, text=True,
    )  # fmt: skip
    print(f"[5] rlxc run {out / 'transformer.opt.mlir'} --backend {target}  (seeded random inputs)")
    for line in run.stdout.splitlines()[-2:]:
        print("    " + line)
    return 0 if ok and run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

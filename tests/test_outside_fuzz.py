"""tests/outside_fuzz.py, the random-graph checker written apart from
rlxc.testing.strategies (its own generator over every GraphBuilder op, real
and awkward shapes, f32/f16/bf16), kept working without a GPU: a fresh seed
each run through the numpy backend plus the CUDA path's weight passes,
fold_params and memory plan (against the interpreter), and through lowering
with every kernel compiled by NVRTC. On the GPU machine it runs as
`python3 tests/outside_fuzz.py --seed S --graphs N --dtypes f32,f16,bf16
--time-budget 300 --also-graph` (RESULTS.md, session 52)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("mode,graphs", [("--numpy-only", 40), ("--lower-only", 12)])
def test_outside_fuzz_finds_nothing(mode, graphs):
    seed = int(np.random.default_rng().integers(1 << 30))
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "outside_fuzz.py"), "--seed", str(seed), "--graphs",
                           str(graphs), "--dtypes", "f32,f16,bf16", mode], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=900)
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, f"seed {seed} ({mode}; replay one graph with --only I):\n{tail}"
    assert f"graphs tried {graphs}," in done.stdout and "FAILED 0" in done.stdout, tail

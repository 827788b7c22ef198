"""tests/outside_fuzz.py and tests/outside_onnx_fuzz.py: a random-graph and a
random-ONNX-model checker written apart from rlxc.testing.strategies (their
own generators), kept working without a GPU on a fresh seed each run.
outside_fuzz.py draws every GraphBuilder op over real and awkward shapes in
f32/f16/bf16 and runs them through the numpy backend plus the CUDA path's
weight passes, fold_params and memory plan (against the interpreter), and
through lowering with every kernel compiled by NVRTC, and with every kernel run
on the CPU (`--emulate`, rlxc.runtime.emulator); on the GPU machine it
runs as `python3 tests/outside_fuzz.py --seed S --graphs N --dtypes
f32,f16,bf16 --time-budget 300 --also-graph` (RESULTS.md, session 52)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _fuzz(script: str, *args: str) -> tuple[int, subprocess.CompletedProcess, str]:
    """(seed, the finished run, the end of its output) of tests/`script` on a fresh seed."""
    seed = int(np.random.default_rng().integers(1 << 30))
    done = subprocess.run([sys.executable, str(ROOT / "tests" / script), "--seed", str(seed), *args], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=900)
    return seed, done, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.parametrize("mode,graphs", [("--numpy-only", 40), ("--lower-only", 12), ("--emulate", 6)])
def test_outside_fuzz_finds_nothing(mode, graphs):
    if mode == "--emulate":
        from rlxc.runtime import emulator

        if not emulator.available():
            pytest.skip("no host C++ compiler that builds the emulator")
    extra = ["--graph-timeout", "60"] if mode == "--emulate" else []  # a slow graph counts as a timeout
    seed, done, tail = _fuzz("outside_fuzz.py", "--graphs", str(graphs), "--dtypes", "f32,f16,bf16", mode, *extra)
    assert done.returncode == 0, f"seed {seed} ({mode}; replay one graph with --only I):\n{tail}"
    assert f"graphs tried {graphs}," in done.stdout and "FAILED 0" in done.stdout, tail


def test_outside_onnx_fuzz_finds_nothing():
    """outside_onnx_fuzz.py: random ONNX models (its own generator, opsets
    13-21, what exporters emit) on rlxc's numpy backend against onnxruntime,
    each also lowered for CUDA; a fresh seed each run. Where onnxruntime
    departs from the ONNX reference and rlxc follows the reference, it is
    not counted (the script names those)."""
    pytest.importorskip("onnxruntime")
    seed, done, tail = _fuzz("outside_onnx_fuzz.py", "--models", "150")
    assert done.returncode == 0 and "FAILURES" not in done.stdout, f"seed {seed} (replay with --only I):\n{tail}"
    assert "150 models in" in done.stdout, tail

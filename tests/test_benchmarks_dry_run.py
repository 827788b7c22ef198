"""The GPU benchmarks' harnesses build and lower their cases on the CPU
(`--dry-run`), so a change that breaks a benchmark shows in CI, not on the
device: kernels.py over a few ops at the issue's and real models' row
lengths (kernels compiled by NVRTC), encoders.py for one small stack
(lowered, and run on the numpy target against float64)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def test_kernel_sweep_builds_every_case():
    out = _run("benchmarks/kernels.py", "--dry-run", "--nvrtc", "--ops", "softmax,layer_norm,reduce_sum_mid,transpose_heads",
               "--rows", "1001,32000", "--sizes", "64")
    assert "21/21 cases built and lowered" in out and "0 failed" in out, out[-2000:]


def test_encoder_benchmark_builds_and_matches_float64():
    out = _run("benchmarks/encoders.py", "--dry-run", "--models", "minilm", "--dtypes", "f16", "--batches", "1")
    assert "minilm b1 f16:" in out, out[-2000:]
    err = float(out.rsplit("max rel err", 1)[1].split()[0])
    assert err < 1e-5, out[-2000:]


def test_encoder_benchmark_with_a_mask_and_pre_norm_layers():
    """The padding mask input and pre-norm layers: lowered, and the small
    stack (a padded batch element) on the numpy target within 1e-5 of
    float64."""
    out = _run("benchmarks/encoders.py", "--dry-run", "--models", "minilm", "--dtypes", "bf16", "--batches", "2",
               "--mask", "--pre-norm")
    assert "minilm b2 bf16:" in out, out[-2000:]
    err = float(out.rsplit("max rel err", 1)[1].split()[0])
    assert err < 1e-5, out[-2000:]


def test_attention_variants_parse():
    """attention_variants.py's variant names: keys, m-tiles, where the query
    fragments live, an optional register cap; "auto" forces nothing."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from attention_variants import parse_variant
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert parse_variant("128:1:r") == (128, 1, False, None)
    assert parse_variant("64:2:s+3") == (64, 2, True, 3)
    assert parse_variant("auto") == (None, None, None, None)

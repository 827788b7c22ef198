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
    fragments live, optionally warps per block and a register cap; "auto"
    forces nothing."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from attention_variants import parse_variant
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert parse_variant("128:1:r") == (128, 1, False, None, None)
    assert parse_variant("64:2:s+3") == (64, 2, True, 3, None)
    assert parse_variant("128:1:r:8") == (128, 1, False, None, 8)
    assert parse_variant("auto") == (None, None, None, None, None)


def test_variant_runs_every_value_in_one_process(tmp_path):
    """variant.py NAME=A,B (and MODULE.NAME=A,B): kernels.py once per value
    (here dry runs, which write no results: said so, not a failure); a bad
    name or value is a clear error."""
    out = _run("benchmarks/variant.py", "GUARDED_BELOW_BYTES=4,8", "--", "--dry-run", "--ops", "softmax",
               "--dtypes", "f32", "--rows", "32000", "--sizes", "64", "--out", str(tmp_path))
    assert "# rows.GUARDED_BELOW_BYTES = 4" in out and "# rows.GUARDED_BELOW_BYTES = 8" in out, out[-2000:]
    assert out.count("1/1 cases built and lowered") == 2 and "no results to compare" in out, out[-2000:]
    done = subprocess.run([sys.executable, "benchmarks/variant.py", "NO_SUCH_KNOB=1", "--", "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "rlxc.codegen.rows has no NO_SUCH_KNOB" in done.stderr
    done = subprocess.run([sys.executable, "benchmarks/variant.py", "PEEL_ROWS=maybe", "--", "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "is a bool" in done.stderr
    # another codegen module's switch, as MODULE.NAME
    out = _run("benchmarks/variant.py", "elementwise.UNROLL=4,2", "--", "--dry-run", "--ops", "gelu",
               "--dtypes", "f32", "--rows", "1280", "--sizes", "64", "--out", str(tmp_path / "ew"))
    assert "# elementwise.UNROLL = 4" in out and "# elementwise.UNROLL = 2" in out, out[-2000:]
    done = subprocess.run([sys.executable, "benchmarks/variant.py", "elementwise.NO_SUCH=1", "--", "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "rlxc.codegen.elementwise has no NO_SUCH" in done.stderr
    # a tuple of strings, its items joined by + (`,` separates the values)
    out = _run("benchmarks/variant.py", "STREAM_DTYPES=f16+bf16,f32+f16+bf16", "--", "--dry-run", "--ops", "softmax",
               "--dtypes", "f32", "--rows", "32768", "--sizes", "64", "--out", str(tmp_path / "tuple"))
    assert "# rows.STREAM_DTYPES = ('f16', 'bf16')" in out and "# rows.STREAM_DTYPES = ('f32', 'f16', 'bf16')" in out, out[-2000:]
    assert "STREAM_DTYPES-f32+f16+bf16" in out, out[-2000:]  # the run's directory, as the command line spells it
    # a table of int tuples, `:` inside an item (`+` alone: the empty table)
    out = _run("benchmarks/variant.py", "STREAM_WINDOW_THREADS=+,1400:256+3200:512", "--", "--dry-run", "--ops", "softmax",
               "--dtypes", "f16", "--rows", "10001", "--sizes", "64", "--out", str(tmp_path / "table"))
    assert "# rows.STREAM_WINDOW_THREADS = ()" in out and "# rows.STREAM_WINDOW_THREADS = ((1400, 256), (3200, 512))" in out, out[-2000:]
    assert "STREAM_WINDOW_THREADS-1400:256+3200:512" in out, out[-2000:]
    done = subprocess.run([sys.executable, "benchmarks/variant.py", "STREAM_DTYPES=1:2", "--", "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "not a table of tuples" in done.stderr


def test_variant_compare_table(tmp_path):
    """variant.py --compare: rlxc's µs per case under each run, the change
    against the first (+: faster), cases missing from a run left out."""
    import json

    def run(us: dict, frac: float) -> dict:
        return {"rows": [{"op": "softmax", "dtype": "f16", "n": n, "mb": 64, "rlxc_ms": t / 1e3, "copy_frac": frac}
                         for n, t in us.items()]}

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "kernels.json").write_text(json.dumps(run({1000: 50.0, 5000: 60.0, 7: 1.0}, 0.8)))
    (tmp_path / "b" / "kernels.json").write_text(json.dumps(run({1000: 40.0, 5000: 75.0}, 0.9)))
    out = _run("benchmarks/variant.py", "--compare", str(tmp_path / "a" / "kernels.json"), str(tmp_path / "b" / "kernels.json"))
    assert "| softmax | f16 | 1000 | 64 | 50.0 | 40.0 | +25.0% | 90% |" in out, out
    assert "| softmax | f16 | 5000 | 64 | 60.0 | 75.0 | -20.0% | 90% |" in out, out
    assert "| 7 |" not in out, out
    # a case that moves nothing (no kernel launched) has no % of copy
    (tmp_path / "b" / "kernels.json").write_text(json.dumps(run({1000: 40.0}, None)))
    out = _run("benchmarks/variant.py", "--compare", str(tmp_path / "a" / "kernels.json"), str(tmp_path / "b" / "kernels.json"))
    assert "| softmax | f16 | 1000 | 64 | 50.0 | 40.0 | +25.0% | — |" in out, out


def test_kernel_sweep_bandwidth_of_a_case_that_launches_nothing():
    """kernels.py's derived figures: GB/s and % of copy from the bytes a case
    moves over rlxc's time; none where rlxc launched no kernel (a
    relabelling moves no bytes), so no bandwidth miss either."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernels_bench", ROOT / "benchmarks" / "kernels.py")
    kernels = importlib.util.module_from_spec(spec)
    sys.modules["kernels_bench"] = kernels  # its dataclasses look their module up
    try:
        spec.loader.exec_module(kernels)
    finally:
        del sys.modules["kernels_bench"]

    def row(kernels_launched):
        return {"rlxc_ms": 0.0005, "eager_ms": 0.004, "compile_ms": None, "bytes": 2 * 64 * 2**20,
                "mb": 64, "rlxc_kernels": kernels_launched}

    moved = kernels.finish_row(row(1), copy_gbs=4000.0)
    assert moved["rlxc_GBps"] > 0 and moved["copy_frac"] == moved["rlxc_GBps"] / 4000.0 and "bw" not in moved["miss"]
    relabel = kernels.finish_row(row(0), copy_gbs=4000.0)
    assert relabel["rlxc_GBps"] is None and relabel["copy_frac"] is None and relabel["miss"] == []
    assert relabel["vs_peer"] == 0.004 / relabel["rlxc_ms"]


def test_encoder_benchmark_takes_a_stack_by_its_sizes():
    """`--models LAYERSxHIDDENxHEADSxFFN`: a stack the table does not name
    (odd hidden and sequence), lowered and within 1e-5 of float64; a spec
    whose heads do not divide hidden is refused by name."""
    out = _run("benchmarks/encoders.py", "--dry-run", "--models", "2x320x5x700", "--dtypes", "f32", "--batches", "3")
    assert "2x320x5x700 b3 f32:" in out, out[-2000:]
    assert float(out.rsplit("max rel err", 1)[1].split()[0]) < 1e-5, out[-2000:]
    done = subprocess.run([sys.executable, "benchmarks/encoders.py", "--dry-run", "--models", "2x320x7x700"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "7 heads do not divide hidden 320" in done.stderr, done.stderr[-2000:]


def test_gpu_only_harnesses_import_and_parse_without_a_gpu():
    """encoder_profile.py, gemm_tuning.py and ncu_rows.py need a GPU to
    measure, but import and parse their arguments without one (a broken
    import shows in CI)."""
    for script, flag in (("benchmarks/encoder_profile.py", "--model"), ("benchmarks/gemm_tuning.py", "--floor"),
                         ("benchmarks/ncu_rows.py", "layer_norm")):
        assert flag in _run(script, "--help"), script

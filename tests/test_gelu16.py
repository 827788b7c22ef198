"""f16/bf16 GELU's erfc (`math.erfc fastmath<afn>`, rendered as
`rlx_kernels.cuh`'s `rlx_erfc_afn`): the function as the header writes it,
emulated in float32 (each fmaf as a float64 product and sum rounded once),
over every 16-bit input against float64 `math.erfc`; and where the compiler
emits it (only for results rounded to 16 bits)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import rlxc
from rlxc.dialects import rlx_cuda
from rlxc.values import round_bf16

HEADER = Path(rlxc.__file__).parent / "codegen" / "rlx_kernels.cuh"
F32 = np.float32


def _body(name: str = "rlx_erfc_afn") -> str:
    """The body of the header's device function `name`."""
    src = HEADER.read_text()
    start = src.index(f"__device__ __forceinline__ float {name}(float x) {{")
    return src[start:src.index("\n}\n", start)]


def _fma(a, b, c) -> np.ndarray:
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(F32)


def horner(body: str, t: np.ndarray) -> np.ndarray:
    """The `rlx_horner(t, c0, ..., c9)` call of a function's `body`, its
    coefficients read from the header, one fmaf each from c9 in."""
    call = re.search(r"rlx_horner\(t, ([-0-9.ef,\s]+)\)", body)
    assert call, body
    cs = [F32(c.strip().rstrip("f")) for c in call.group(1).split(",")]
    assert len(cs) == 10, cs
    p = np.full_like(t, cs[-1])
    for c in reversed(cs[:-1]):
        p = _fma(t, p, c)
    return p


def erfcc_t(a: np.ndarray) -> np.ndarray:
    """`rlx_erfcc_t`, correctly rounded (rcp.approx is within 1 ulp)."""
    return (1.0 / _fma(F32(0.5), a, F32(1.0)).astype(np.float64)).astype(F32)


def erfc_afn(x: np.ndarray) -> np.ndarray:
    """`rlx_erfc_afn` as the header writes it: its polynomial, then the
    exponent's scale, with ex2.approx.ftz flushing subnormal results."""
    body = _body()
    scale = re.search(r"fmaf\(a \* ([-0-9.e]+)f, a, p\)", body)
    assert scale, body
    x = np.asarray(x, F32)
    a = np.abs(x)
    t = erfcc_t(a)
    p = horner(body, t)
    with np.errstate(over="ignore", under="ignore"):
        arg = _fma((a * F32(scale.group(1))).astype(F32), a, p)
        two = np.exp2(arg.astype(np.float64)).astype(F32)
        two[two < 2.0**-126] = 0  # ex2.approx.ftz flushes subnormal results
        e = (t * two).astype(F32)
    return np.where(x >= 0, e, (F32(2.0) - e).astype(F32)).astype(F32)


def gelu16(x: np.ndarray) -> np.ndarray:
    """GeluOp.scalar_16 in f32: x/2 * erfc(x * -1/sqrt 2), unrounded."""
    x = np.asarray(x, F32)
    z = (x * F32(-0.7071067811865476)).astype(F32)
    return ((x * F32(0.5)).astype(F32) * erfc_afn(z)).astype(F32)


_ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def _every(dtype: str) -> np.ndarray:
    """Every finite value of the 16-bit type, as float32."""
    bits = np.arange(65536, dtype=np.uint32)
    x = bits.astype(np.uint16).view(np.float16).astype(F32) if dtype == "f16" else (bits << 16).view(F32)
    return x[np.isfinite(x)]


def _round(dtype: str, y) -> np.ndarray:
    y = np.asarray(y, F32)
    return y.astype(np.float16).astype(F32) if dtype == "f16" else round_bf16(y)


def _ulps(dtype: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many 16-bit values apart a and b (both of the type) are."""
    def key(v):
        i = (v.astype(np.float16).view(np.int16) if dtype == "f16" else (v.view(np.int32) >> 16).astype(np.int16)).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFF), i)  # ordered: -0 and +0 both 0
    return np.abs(key(a) - key(b))


def test_erfc_afn_relative_error():
    """Within 1e-5 of erfc where GELU's 16-bit results need it: |x| to 9
    (erfc(9) = 4e-37, a normal f32), 2e-6 to |x| = 4."""
    x = np.linspace(-9.0, 9.0, 400001).astype(F32)
    want = _ERFC(x.astype(np.float64))
    rel = np.abs(erfc_afn(x) - want) / want
    assert rel.max() < 1e-5, (rel.max(), x[np.argmax(rel)])
    assert rel[np.abs(x) <= 4].max() < 2e-6, rel[np.abs(x) <= 4].max()


def check_every_input(dtype: str, x: np.ndarray, got: np.ndarray, most: int) -> None:
    """`got` (GELU of every finite 16-bit `x`, rounded to the type) against
    GELU computed in float64 and rounded once: equal but for at most `most`
    1-ulp misses, and 0 where the erfc's 2^x flushed a subnormal (6 bf16
    inputs from x = -13.19, whose GELU is under 6.8e-39)."""
    xd = x.astype(np.float64)
    erfc = _ERFC(-xd / math.sqrt(2.0))
    with np.errstate(invalid="ignore", over="ignore"):
        want = _round(dtype, (0.5 * xd * erfc).astype(F32))
    assert not (np.isnan(want) ^ np.isnan(got)).any()
    flushed = (got == 0) & (want != 0)
    assert (erfc[flushed] < 2.0**-126).all() and (np.abs(want[flushed]) < 1e-38).all(), x[flushed]
    keep = ~np.isnan(want) & ~flushed
    off = _ulps(dtype, got[keep], want[keep])
    assert off.max() <= 1, x[keep][np.argmax(off)]
    assert np.count_nonzero(off) <= most, np.count_nonzero(off)


@pytest.mark.parametrize("dtype,most", [("f16", 16), ("bf16", 128)])
def test_gelu16_over_every_input_is_within_one_ulp(dtype, most):
    """Every finite f16/bf16 input: the 16-bit GELU (f32 math, one rounding)
    equals GELU computed in float64 and rounded once, except 1-ulp misses at
    rounding ties (7 f16, 64 bf16 inputs: bf16 ones at f32 subnormals), and
    bf16 results under 1e-38 (from x = -13.19), which are 0."""
    x = _every(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        got = _round(dtype, gelu16(x))
    check_every_input(dtype, x, got, most)


def test_only_16bit_gelu_takes_the_approximate_erfc():
    """f16/bf16 GELU's region holds `math.erfc fastmath<afn>` and no select
    (no branch, 4 trips; the vector body and the tail); f32 GELU takes
    the exact erfc, rlx_erfcf, in the same straight-line form."""
    g = rlxc.GraphBuilder()
    outs = [g.gelu(g.input(f"x{d}", [63, 131], d)) for d in ("f32", "f16", "bf16")]
    module = g.build(outs)
    fused = str(rlxc.run_pipeline(module, "rlx-fuse-elementwise"))
    assert fused.count("fastmath<afn>") == 2 and fused.count("math.erfc") == 3
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}")
    f32, f16, bf16 = (op.source.data for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp))
    assert "erff(" not in f32 and f32.count("rlx_erfcf(") == 2 and "rlx_erfc_afn" not in f32
    assert "if (" not in f32.split("for (int l")[-1]
    for src in (f16, bf16):
        assert src.count("rlx_erfc_afn(") == 2 and "erff(" not in src and "if (" not in src.split("for (int l")[-1]
        assert "2 trips per thread, 128 threads a block" in src


def test_afn_erfc_parses_and_renders_only_in_f32():
    """`math.erfc ... fastmath<afn>` round-trips through the parser; an f32
    one renders as rlx_erfc_afn, one without the flag as rlx_erfcf (the f32
    erfc: tests/test_erfcf.py)."""
    from rlxc.codegen.cuda_c import render_scalar
    from rlxc.context import parse_module

    m = parse_module("""
      func.func @f(%a: f32) -> (f32, f32) {
        %0 = math.erfc %a fastmath<afn> : f32
        %1 = math.erfc %a : f32
        func.return %0, %1 : f32, f32
      }""")
    ops = [op for op in m.walk() if op.name == "math.erfc"]
    assert "fastmath<afn>" in str(m)
    assert [render_scalar(op, ["x"]) for op in ops] == ["rlx_erfc_afn(x)", "rlx_erfcf(x)"]

"""f32 erfc (`math.erfc`, exact GELU's tail), rendered as `rlx_kernels.cuh`'s
`rlx_erfcf` (cuda_c.OWN_ERFCF): the function as the header writes it,
emulated in float32 (fmaf as a float64 product and sum rounded once, the
approximate reciprocal and 2^x and expf as correctly rounded), against
float64 `math.erfc` in ulps of the float32 result."""

from __future__ import annotations

import math
import re

import numpy as np

import rlxc
from rlxc.dialects import rlx_cuda
from test_gelu16 import _body, _fma, erfcc_t, horner

F32 = np.float32


def erfcf(x: np.ndarray) -> np.ndarray:
    body = _body("rlx_erfcf")
    scale = re.search(r"\(p - lo\) \* ([0-9.e]+)f", body)
    cut = re.search(r"a > ([0-9.]+)f \? 0.0f : e", body)
    assert scale and cut, body
    x = np.asarray(x, F32)
    a = np.abs(x)
    t = erfcc_t(a)
    p = horner(body, t)
    hi = (a * a).astype(F32)
    lo = _fma(a, a, -hi)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        f = np.exp2(((p - lo).astype(F32) * F32(scale.group(1))).astype(F32).astype(np.float64)).astype(F32)
        e = ((t * np.exp(-hi.astype(np.float64)).astype(F32)).astype(F32) * f).astype(F32)
    e = np.where(a > F32(cut.group(1)), F32(0.0), e).astype(F32)
    return np.where(x >= 0, e, (F32(2.0) - e).astype(F32)).astype(F32)


_ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def test_erfcf_within_7_ulp():
    """Over [-10, 10] (2e6 float32 points): within 7 ulp of erfc rounded to
    float32 where the result is a normal float (6.4 at most when written);
    the NR fit alone is within 1.2e-7 (about 2 ulp)."""
    x = np.linspace(-10.0, 10.0, 2_000_001).astype(F32)
    want = _ERFC(x.astype(np.float64))
    got = erfcf(x).astype(np.float64)
    normal = want > 2.0**-126
    ulp = np.spacing(want.astype(F32)).astype(np.float64)
    err = np.abs(got - want)[normal] / ulp[normal]
    assert err.max() < 7.0, (err.max(), x[normal][np.argmax(err)])
    assert np.median(err) < 1.5, np.median(err)


def test_erfcf_edges():
    """0 and 2 at the infinities and past |x| = 10.1 (erfc under 1e-45), NaN
    for NaN, 1 at 0, and subnormal results near the cut kept (not flushed)."""
    x = np.array([np.inf, -np.inf, 10.2, -10.2, 0.0, -0.0, np.nan, 9.5], F32)
    with np.errstate(invalid="ignore"):
        y = erfcf(x)
    assert list(y[:6]) == [0.0, 2.0, 0.0, 2.0, 1.0, 1.0] and np.isnan(y[6])
    assert 0 < y[7] < 2.0**-126 and abs(y[7] / math.erfc(9.5) - 1) < 1e-3


def test_f32_gelu_tail_renders_rlx_erfcf():
    """f32 GELU's tail arm calls rlx_erfcf (cuda_c.OWN_ERFCF); with the
    switch off, CUDA's erfcf."""
    from rlxc.codegen import cuda_c

    def source() -> str:
        g = rlxc.GraphBuilder()
        lowered = rlxc.run_pipeline(g.build([g.gelu(g.input("x", [64, 64]))]), "rlx-cuda{arch=sm_90}")
        (k,) = [op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]
        return k.source.data.split("ENTRY")[-1] if "ENTRY" in k.source.data else k.source.data.split("__global__")[-1]

    assert "rlx_erfcf(" in source() and "erfcf(" not in source().replace("rlx_erfcf(", "")
    old = cuda_c.OWN_ERFCF
    try:
        cuda_c.OWN_ERFCF = False
        assert "rlx_erfcf(" not in source() and "erfcf(" in source()
    finally:
        cuda_c.OWN_ERFCF = old

"""Independent float64 reference implementations for testing rlxc's interpreter.

Everything here is written from the mathematical definitions of the ops (as
documented in `rlxc/dialects/rlx/`), deliberately *not* from rlxc's own
numpy interpreter: transcendental functions go through Python's `math`
module element by element, convolution and pooling are explicit loops with
bounds checks instead of padded strided views, matmul is an explicit sum of
outer products, and rounding to bf16 uses frexp/ldexp instead of bit tricks.

Nothing in this file imports from `rlxc`.
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------- dtypes

#: numpy dtype that carries each rlx element type (bf16 is a float32 array
#: holding bf16-representable values; i1 is bool).
CARRIER = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.float32),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
}

FLOATS = ("f32", "f16", "bf16")
INTS = ("i32", "i64")

#: Relative-error tolerances ||out - ref|| / ||ref||. The reference is exact
#: float64 math on the (already rounded) inputs, and rlxc computes in float64
#: and rounds once to the result type, so the only error is one rounding per
#: element: unit roundoff 2**-24 (f32), 2**-11 (f16), 2**-8 (bf16). The bounds
#: below leave a factor ~2 of headroom over that, and much more for f32 (to
#: allow a few float64 ulps of difference in intermediate evaluation order).
RTOL = {"f32": 1e-6, "f16": 1e-3, "bf16": 8e-3}


def round_bf16(x) -> np.ndarray:
    """Nearest bf16 value (8 significant bits, ties to even) of float64 values,
    returned as float32. Uses frexp/ldexp (normal range only; inf/nan kept)."""
    x = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(x)  # x = m * 2**e, 0.5 <= |m| < 1
    r = np.ldexp(np.rint(np.ldexp(m, 8)), e - 8)  # np.rint: ties to even
    r = np.where(np.isfinite(x), r, x)
    return r.astype(np.float32)


def to_dtype(x, dtype: str) -> np.ndarray:
    """Rounds/converts float64 (or int) values to the carrier of `dtype`."""
    x = np.asarray(x)
    if dtype == "bf16":
        return round_bf16(x)
    if dtype == "i1":
        return x != 0
    if dtype in INTS:
        if x.dtype.kind == "f":
            x = np.trunc(x)
        return x.astype(CARRIER[dtype])
    return x.astype(CARRIER[dtype])


def random_array(rng: np.random.Generator, shape, dtype: str, lo=-3.0, hi=3.0) -> np.ndarray:
    """Uniform random values in [lo, hi) as the carrier of `dtype` (ints in [lo, hi])."""
    shape = tuple(shape)
    if dtype in FLOATS:
        return to_dtype(rng.uniform(lo, hi, size=shape), dtype)
    if dtype in INTS:
        return rng.integers(int(lo), int(hi) + 1, size=shape).astype(CARRIER[dtype])
    if dtype == "i1":
        return rng.random(size=shape) < 0.5
    raise ValueError(dtype)


def wide(a) -> np.ndarray:
    """Carrier array to float64 (floats) / int64 (ints) / bool, for references."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    if a.dtype.kind == "b":
        return a.copy()
    return a.astype(np.int64)


def assert_close(out, ref, dtype: str, rtol: float | None = None, what: str = "") -> None:
    """Checks dtype/shape and ||out - ref|| / ||ref|| < rtol (exact for ints/bools).

    Non-finite entries of `ref` must be matched exactly (same inf / nan positions).
    """
    out = np.asarray(out)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, expected {ref.shape}"
    assert out.dtype == CARRIER[dtype], f"{what}: dtype {out.dtype}, expected {CARRIER[dtype]}"
    if dtype not in FLOATS:
        exp = ref.astype(CARRIER[dtype])
        bad = np.argwhere(out != exp)
        assert bad.size == 0, (
            f"{what}: {len(bad)} mismatches, first at {tuple(bad[0])}: "
            f"got {out[tuple(bad[0])]}, expected {exp[tuple(bad[0])]}"
        )
        return
    if dtype == "bf16":
        assert np.array_equal(round_bf16(out), out, equal_nan=True), (
            f"{what}: bf16 result holds values that are not bf16-representable"
        )
    o = out.astype(np.float64)
    r = ref.astype(np.float64)
    fin = np.isfinite(r)
    assert np.array_equal(np.isnan(o), np.isnan(r)), f"{what}: NaN positions differ"
    assert np.array_equal(o[~fin & ~np.isnan(r)], r[~fin & ~np.isnan(r)]), (
        f"{what}: infinities differ"
    )
    o, r = o[fin], r[fin]
    tol = RTOL[dtype] if rtol is None else rtol
    denom = np.linalg.norm(r)
    err = np.linalg.norm(o - r)
    if denom == 0:
        assert err == 0, f"{what}: expected all zeros, got |out| = {err}"
        return
    rel = err / denom
    assert rel < tol, f"{what}: relative error {rel:.3g} >= {tol:g} ({dtype})"


# --------------------------------------------------------------------------- scalar math


def _vec(fn):
    v = np.vectorize(fn, otypes=[np.float64])

    def run(x):
        x = np.asarray(x, dtype=np.float64)
        return v(x).reshape(x.shape) if x.size else x.copy()

    return run


erf = _vec(math.erf)
exp = _vec(math.exp)
log = _vec(math.log)
sqrt = _vec(math.sqrt)
sin = _vec(math.sin)
cos = _vec(math.cos)
tanh = _vec(math.tanh)
floor = _vec(lambda v: float(math.floor(v)))
ceil = _vec(lambda v: float(math.ceil(v)))


def _round_half_even(v: float) -> float:
    # Python's round() on a float rounds half to even; keep the sign of zero.
    return math.copysign(float(round(v)), v)


round_even = _vec(_round_half_even)


def _sigmoid(v: float) -> float:
    # Stable in both directions.
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


sigmoid = _vec(_sigmoid)


def _sign(v: float) -> float:
    if math.isnan(v):
        return v
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)


def sign(x):
    x = np.asarray(x)
    if x.dtype.kind in "iu":
        return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)
    return _vec(_sign)(x)


def gelu(x):
    """Exact GELU: x/2 (1 + erf(x / sqrt 2))."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def silu(x):
    x = np.asarray(x, dtype=np.float64)
    return x * sigmoid(x)


def softplus(x):
    """log(1 + e**x), each element with math.log1p/math.exp in float64."""
    def one(v):
        return max(v, 0.0) + math.log1p(math.exp(-abs(v))) if v == v else v
    return _vec(one)(np.asarray(x, dtype=np.float64))


def relu(x):
    x = np.asarray(x)
    return np.where(x > 0, x, np.zeros_like(x))


UNARY = {
    "neg": lambda x: -x,
    "abs": lambda x: np.where(x < 0, -x, x),
    "exp": exp,
    "log": log,
    "sqrt": sqrt,
    "rsqrt": lambda x: 1.0 / sqrt(x),
    "reciprocal": lambda x: 1.0 / np.asarray(x, dtype=np.float64),
    "sin": sin,
    "cos": cos,
    "tanh": tanh,
    "sigmoid": sigmoid,
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": silu,
    "softplus": softplus,
    "erf": erf,
    "floor": floor,
    "ceil": ceil,
    "round": round_even,
    "sign": sign,
}

ACTIVATIONS = {
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": silu,
    "sigmoid": sigmoid,
    "tanh": tanh,
}


def int_div(a, b):
    """Integer division truncating toward zero (b != 0)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    out = np.empty(a.shape, dtype=np.int64)
    for idx in np.ndindex(a.shape):
        x, y = int(a[idx]), int(b[idx])
        q = abs(x) // abs(y)
        out[idx] = q if (x < 0) == (y < 0) else -q
    return out


# --------------------------------------------------------------------------- reductions / norms


def softmax(x, axis):
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis):
    """x - logsumexp(x); logsumexp with the max factored out."""
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=axis, keepdims=True)
    lse = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return x - lse


def layer_norm(x, gamma, beta, eps, naxes):
    x = np.asarray(x, dtype=np.float64)
    axes = tuple(range(x.ndim - naxes, x.ndim))
    n = int(np.prod([x.shape[a] for a in axes]))
    mean = x.sum(axis=axes, keepdims=True) / n
    var = ((x - mean) ** 2).sum(axis=axes, keepdims=True) / n  # biased
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rms_norm(x, gamma, eps, naxes):
    x = np.asarray(x, dtype=np.float64)
    axes = tuple(range(x.ndim - naxes, x.ndim))
    n = int(np.prod([x.shape[a] for a in axes]))
    ms = (x * x).sum(axis=axes, keepdims=True) / n
    return x / np.sqrt(ms + eps) * gamma


# --------------------------------------------------------------------------- matmul & friends


def matmul(a, b):
    """Batched matmul with broadcast batch dims, as a sum of rank-1 products."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.zeros(batch + (a.shape[-2], b.shape[-1]))
    for k in range(a.shape[-1]):
        out += a[..., :, k, None] * b[..., None, k, :]
    return out


def linear(x, w, b=None, activation=None):
    y = matmul(x, np.swapaxes(np.asarray(w, np.float64), 0, 1))
    if b is not None:
        y = y + np.asarray(b, np.float64)
    if activation is not None:
        y = ACTIVATIONS[activation](y)
    return y


def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Direct cross-correlation by explicit loops over output pixels, skipping
    taps that fall in the (zero) padding. NCHW input, OIHW weight."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    pt, pl, pb, pr = padding
    dh, dw = dilation
    oh = (h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
    ow = (wd + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for oc in range(o):
        g = oc // og
        chans = slice(g * cg, (g + 1) * cg)
        for y in range(oh):
            for xo in range(ow):
                acc = np.zeros(n)
                for i in range(kh):
                    iy = y * sh - pt + i * dh
                    if not 0 <= iy < h:
                        continue
                    for j in range(kw):
                        ix = xo * sw - pl + j * dw
                        if not 0 <= ix < wd:
                            continue
                        acc += x[:, chans, iy, ix] @ w[oc, :, i, j]
                out[:, oc, y, xo] = acc + (0.0 if b is None else b[oc])
    return out


def _pool(x, kernel, stride, padding, reduce):
    x = np.asarray(x, dtype=np.float64)
    n, c, h, wd = x.shape
    kh, kw = kernel
    sh, sw = stride
    pt, pl, pb, pr = padding
    oh = (h + pt + pb - kh) // sh + 1
    ow = (wd + pl + pr - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xo in range(ow):
            y0, x0 = y * sh - pt, xo * sw - pl
            ys = [r for r in range(y0, y0 + kh) if 0 <= r < h]
            xs = [q for q in range(x0, x0 + kw) if 0 <= q < wd]
            win = x[:, :, ys][:, :, :, xs]
            out[:, :, y, xo] = reduce(win.reshape(n, c, -1), len(ys) * len(xs))
    return out


def max_pool2d(x, kernel, stride, padding):
    return _pool(x, kernel, stride, padding, lambda win, cnt: win.max(axis=-1))


def avg_pool2d(x, kernel, stride, padding, count_include_pad):
    k = kernel[0] * kernel[1]
    return _pool(
        x, kernel, stride, padding,
        lambda win, cnt: win.sum(axis=-1) / (k if count_include_pad else cnt),
    )  # fmt: skip


def attention(q, k, v, mask=None, causal=False, scale=None):
    """Per (batch, head, query) loop: scores, additive mask, causal, softmax, sum."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    b, h, sq, d = q.shape
    sk = k.shape[2]
    s = 1.0 / math.sqrt(d) if scale is None else scale
    m = None
    if mask is not None:
        m = np.broadcast_to(np.asarray(mask, np.float64), (b, h, sq, sk))
    out = np.zeros((b, h, sq, v.shape[3]))
    for bi in range(b):
        for hi in range(h):
            for i in range(sq):
                scores = np.array([float(q[bi, hi, i] @ k[bi, hi, j]) * s for j in range(sk)])
                if m is not None:
                    scores = scores + m[bi, hi, i]
                keep = np.ones(sk, bool)
                if causal:
                    keep[i + 1 :] = False
                mx = scores[keep].max()
                p = np.where(keep, np.exp(np.where(keep, scores - mx, 0.0)), 0.0)
                p /= p.sum()
                out[bi, hi, i] = p @ v[bi, hi]
    return out


def rope(x, cos_, sin_):
    """Pairwise rotation: (x_j, x_{j+D/2}) for j < D/2, rotate-half convention."""
    x = np.asarray(x, dtype=np.float64)
    c = np.broadcast_to(np.asarray(cos_, np.float64), x.shape)
    s = np.broadcast_to(np.asarray(sin_, np.float64), x.shape)
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    for j in range(half):
        a, b = x[..., j], x[..., j + half]
        out[..., j] = a * c[..., j] - b * s[..., j]
        out[..., j + half] = b * c[..., j + half] + a * s[..., j + half]
    return out


def swiglu(x):
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    return silu(x[..., :half]) * x[..., half:]


def python_slice(x, starts, ends, steps):
    """Python slicing semantics per axis (the builder's documented contract)."""
    idx = tuple(slice(s, e, st) for s, e, st in zip(starts, ends, steps))
    return np.asarray(x)[idx]


def assert_exact(out, expected, dtype: str, what: str = "") -> None:
    """Bit-for-bit value equality (NaN matches NaN; -0.0 equals 0.0), dtype and shape."""
    out = np.asarray(out)
    exp = to_dtype(expected, dtype) if np.asarray(expected).dtype != CARRIER[dtype] else np.asarray(expected)
    assert out.shape == exp.shape, f"{what}: shape {out.shape}, expected {exp.shape}"
    assert out.dtype == CARRIER[dtype], f"{what}: dtype {out.dtype}, expected {CARRIER[dtype]}"
    eq = (out == exp)
    if out.dtype.kind == "f":
        eq |= np.isnan(out) & np.isnan(exp)
    bad = np.argwhere(~eq)
    assert bad.size == 0, (
        f"{what}: {len(bad)} of {out.size} differ, first at {tuple(bad[0])}: "
        f"got {out[tuple(bad[0])]!r}, expected {exp[tuple(bad[0])]!r}"
    )


def reduce(x, op: str, axes, keepdims: bool) -> np.ndarray:
    """Reductions row by row with math.fsum / max / min / math.prod (exact sums)."""
    x = wide(x)
    nd = x.ndim
    ax = list(range(nd)) if axes is None else sorted(a % nd for a in axes)
    keep = [a for a in range(nd) if a not in ax]
    rows = np.transpose(x, keep + ax).reshape(int(np.prod([x.shape[a] for a in keep])), -1)
    is_int = x.dtype.kind in "iu"
    fns = {
        "sum": (lambda r: sum(int(v) for v in r)) if is_int else (lambda r: math.fsum(r)),
        "mean": lambda r: math.fsum(r) / len(r),
        "max": lambda r: max(r.tolist()),
        "min": lambda r: min(r.tolist()),
        "prod": (lambda r: math.prod(int(v) for v in r)) if is_int else (lambda r: math.prod(r.tolist())),
    }
    vals = np.array([fns[op](r) for r in rows], dtype=np.int64 if is_int else np.float64)
    if keepdims:
        shape = [1 if a in ax else d for a, d in enumerate(x.shape)]
    else:
        shape = [x.shape[a] for a in keep]
    return vals.reshape(shape)


def argmax(x, axis: int, keepdims: bool) -> np.ndarray:
    """First index of the maximum, by an explicit scan along `axis`."""
    x = wide(x)
    axis %= x.ndim
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape[:-1], dtype=np.int64)
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx]
        best = 0
        for j in range(1, len(row)):
            if row[j] > row[best]:
                best = j
        out[idx] = best
    return np.expand_dims(out, axis) if keepdims else out

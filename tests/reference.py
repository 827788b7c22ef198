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
erfc = _vec(math.erfc)
exp = _vec(math.exp)
log = _vec(math.log)
sqrt = _vec(math.sqrt)
sin = _vec(math.sin)
cos = _vec(math.cos)
tan = _vec(math.tan)
asin = _vec(math.asin)
acos = _vec(math.acos)
atan = _vec(math.atan)
sinh = _vec(math.sinh)
cosh = _vec(math.cosh)
asinh = _vec(math.asinh)
acosh = _vec(math.acosh)
atanh = _vec(math.atanh)
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
    """Exact GELU: x/2 (1 + erf(x / sqrt 2)) = x/2 erfc(-x / sqrt 2), the second
    form exact in float64 for negative x too (1 + erf cancels there)."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * erfc(-x / math.sqrt(2.0))


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
    "tan": tan,
    "asin": asin,
    "acos": acos,
    "atan": atan,
    "sinh": sinh,
    "cosh": cosh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
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


def _pool_extent(size, k, s, p0, p1, d, ceil_mode):
    span = d * (k - 1) + 1
    if not ceil_mode:
        return (size + p0 + p1 - span) // s + 1
    n = math.ceil((size + p0 + p1 - span) / s) + 1
    return n - 1 if (n - 1) * s >= size + p0 else n  # the last window starts inside


def _pool(x, kernel, stride, padding, reduce, dilation=(1, 1), ceil_mode=False):
    """reduce(window values, taps inside the padded input) per output pixel,
    by loops over the window's taps with bounds checks."""
    x = np.asarray(x, dtype=np.float64)
    n, c, h, wd = x.shape
    kh, kw = kernel
    sh, sw = stride
    dh, dw = dilation
    pt, pl, pb, pr = padding
    oh = _pool_extent(h, kh, sh, pt, pb, dh, ceil_mode)
    ow = _pool_extent(wd, kw, sw, pl, pr, dw, ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xo in range(ow):
            y0, x0 = y * sh - pt, xo * sw - pl
            rows = [y0 + i * dh for i in range(kh)]
            cols = [x0 + j * dw for j in range(kw)]
            ys = [r for r in rows if 0 <= r < h]
            xs = [q for q in cols if 0 <= q < wd]
            padded = sum(r < h + pb for r in rows) * sum(q < wd + pr for q in cols)
            win = x[:, :, ys][:, :, :, xs]
            out[:, :, y, xo] = reduce(win.reshape(n, c, -1), padded)
    return out


def max_pool2d(x, kernel, stride, padding, dilation=(1, 1), ceil_mode=False):
    return _pool(x, kernel, stride, padding, lambda win, cnt: win.max(axis=-1), dilation, ceil_mode)


def avg_pool2d(x, kernel, stride, padding, count_include_pad, dilation=(1, 1), ceil_mode=False):
    """Mean over the window's taps in the input; with count_include_pad the
    divisor counts every tap inside the padded input instead."""
    return _pool(
        x, kernel, stride, padding,
        lambda win, cnt: win.sum(axis=-1) / (cnt if count_include_pad else win.shape[-1]),
        dilation, ceil_mode,
    )  # fmt: skip


def conv_transpose2d(x, w, b=None, stride=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1):
    """Transposed convolution by explicit scatter loops: input pixel (iy, ix)
    of channel ci adds x * w[ci, o, ky, kx] to output (iy*sh - top + ky*dh,
    ix*sw - left + kx*dw) of each output channel o of its group, where that
    lies inside the output. NCHW input, weight [in, out/groups, kh, kw]."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    sh, sw = stride
    pt, pl, pb, pr = padding
    dh, dw = dilation
    oh = sh * (h - 1) + output_padding[0] + dh * (kh - 1) + 1 - pt - pb
    ow = sw * (wd - 1) + output_padding[1] + dw * (kw - 1) + 1 - pl - pr
    cg = c // groups
    out = np.zeros((n, og * groups, oh, ow))
    for ci in range(c):
        g = ci // cg
        for iy in range(h):
            for ix in range(wd):
                for ky in range(kh):
                    oy = iy * sh - pt + ky * dh
                    if not 0 <= oy < oh:
                        continue
                    for kx in range(kw):
                        ox = ix * sw - pl + kx * dw
                        if not 0 <= ox < ow:
                            continue
                        out[:, g * og : (g + 1) * og, oy, ox] += x[:, ci, iy, ix][:, None] * w[ci, :, ky, kx]
    if b is not None:
        out += np.asarray(b, dtype=np.float64)[None, :, None, None]
    return out


def _resize_coord(ctm, y, n_in, n_out, scale):
    """The input coordinate output index y samples (ONNX Resize's formulas;
    the resized length is scale * n_in, unrounded)."""
    length = scale * n_in
    if ctm == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if ctm == "pytorch_half_pixel":
        return (y + 0.5) / scale - 0.5 if length != 1 else -0.5
    if ctm == "align_corners":
        return y * (n_in - 1) / (length - 1) if length != 1 else 0.0
    if ctm == "asymmetric":
        return y / scale
    if ctm == "half_pixel_symmetric":
        return n_in / 2 * (1 - n_out / length) + (y + 0.5) / scale - 0.5
    if ctm == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    raise ValueError(ctm)


def _nearest(c, mode, n_in):
    f = math.floor(c)
    frac = c - f
    i = {
        "round_prefer_floor": f + 1 if frac > 0.5 else f,
        "round_prefer_ceil": f + 1 if frac >= 0.5 else f,
        "floor": f,
        "ceil": math.ceil(c),
    }[mode]
    return min(max(i, 0), n_in - 1)


def resize(x, out_shape, scales, mode="nearest", ctm="half_pixel", nearest_mode="round_prefer_floor"):
    """ONNX Resize per output element: each resized axis (extent changed or
    scale not 1) maps the output index to an input coordinate; nearest reads
    the element at the rounded coordinates, linear sums the 2^k corners of the
    k resized axes, each weighted by its product of 1-D weights."""
    x = np.asarray(x)
    axes = [a for a in range(x.ndim) if not (x.shape[a] == out_shape[a] and math.isclose(scales[a], 1.0))]
    out = np.zeros(out_shape, dtype=np.float64 if mode == "linear" else x.dtype)
    for idx in np.ndindex(*out_shape):
        coords = {a: _resize_coord(ctm, idx[a], x.shape[a], out_shape[a], scales[a]) for a in axes}
        if mode == "nearest":
            src = list(idx)
            for a in axes:
                src[a] = _nearest(coords[a], nearest_mode, x.shape[a])
            out[idx] = x[tuple(src)]
            continue
        acc = 0.0
        for corner in range(1 << len(axes)):
            src, wgt = list(idx), 1.0
            for j, a in enumerate(axes):
                f = math.floor(coords[a])
                t = coords[a] - f
                hi = (corner >> j) & 1
                src[a] = min(max(f + hi, 0), x.shape[a] - 1)
                wgt *= t if hi else 1.0 - t
            if wgt != 0.0:
                acc += wgt * float(x[tuple(src)])
        out[idx] = acc
    return out


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


# --------------------------------------------------------------------------- pad, gathers, cumsum, topk


def pad(x, low, high, mode="constant", value=0.0):
    """ONNX Pad per output element: each coordinate minus `low`, brought back
    into the axis by reflecting (repeatedly), clamping or wrapping; in
    constant mode an outside coordinate gives `value`."""
    x = np.asarray(x)
    shape = tuple(d + lo + hi for d, lo, hi in zip(x.shape, low, high))
    out = np.empty(shape, dtype=x.dtype)
    for idx in np.ndindex(*shape):
        src, outside = [], False
        for c, lo, d in zip(idx, low, x.shape):
            j = c - lo
            if mode == "constant":
                outside = outside or not 0 <= j < d
            elif mode == "reflect":
                while not 0 <= j < d:
                    j = -j if j < 0 else 2 * (d - 1) - j
            elif mode == "edge":
                j = min(max(j, 0), d - 1)
            elif mode == "wrap":
                j = j - d * math.floor(j / d)
            src.append(j)
        out[idx] = value if outside else x[tuple(src)]
    return out


def cumsum(x, axis, exclusive=False, reverse=False):
    """ONNX CumSum by its definition: element j of a line sums the elements
    k <= j (k < j exclusive; k >= j, k > j reversed), exactly (math.fsum for
    floats, Python ints wrapped to the width for integers)."""
    x = np.asarray(x)
    axis %= x.ndim
    out = np.empty(x.shape, dtype=np.float64 if x.dtype.kind == "f" else object)
    n = x.shape[axis]
    for idx in np.ndindex(*x.shape):
        j = idx[axis]
        ks = [k for k in range(n) if (k >= j if reverse else k <= j) and not (exclusive and k == j)]
        terms = [x[idx[:axis] + (k,) + idx[axis + 1 :]].item() for k in ks]
        out[idx] = math.fsum(terms) if x.dtype.kind == "f" else sum(int(t) for t in terms)
    if x.dtype.kind != "f":
        bits = x.dtype.itemsize * 8
        wrap = np.vectorize(lambda v: (v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1), otypes=[object])
        return wrap(out).astype(x.dtype)
    return out


def gather_elements(x, idx, axis):
    """out[i] = x[i with coordinate `axis` replaced by idx[i] (negative from the end)]."""
    x, idx = np.asarray(x), np.asarray(idx)
    axis %= x.ndim
    out = np.empty(idx.shape, dtype=x.dtype)
    for i in np.ndindex(*idx.shape):
        q = int(idx[i])
        src = list(i)
        src[axis] = q + x.shape[axis] if q < 0 else q
        out[i] = x[tuple(src)]
    return out


def gather_nd(x, idx, batch_dims=0):
    """ONNX GatherND: for each index tuple idx[b..., t..., :] read the slice
    x[b..., *tuple] (negative entries from the end)."""
    x, idx = np.asarray(x), np.asarray(idx)
    b, m = batch_dims, idx.shape[-1]
    out = np.empty(idx.shape[:-1] + x.shape[b + m :], dtype=x.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        tup = [int(v) for v in idx[pos]]
        tup = [q + x.shape[b + t] if q < 0 else q for t, q in enumerate(tup)]
        out[pos] = x[tuple(pos[:b]) + tuple(tup)]
    return out



def scatter_nd(x, idx, upd, reduction="none"):
    """ONNX ScatterND by its definition: a copy of x, each index tuple's slice
    set to (or combined with) its updates in order, one tuple at a time, in
    float64 (floats) / int64 (ints)."""
    out = wide(x).copy()
    idx = np.asarray(idx, dtype=np.int64)
    u = wide(upd)
    for t in np.ndindex(*idx.shape[:-1]):
        at = tuple(int(i) + (out.shape[a] if i < 0 else 0) for a, i in enumerate(idx[t]))
        if reduction == "none":
            out[at] = u[t]
        elif reduction == "add":
            out[at] = out[at] + u[t]
        elif reduction == "mul":
            out[at] = out[at] * u[t]
        elif reduction == "max":
            out[at] = np.maximum(out[at], u[t])
        else:
            out[at] = np.minimum(out[at], u[t])
    return out


def topk(x, k, axis, largest=True):
    """ONNX TopK per line: indices sorted best first (NaN the largest, equal
    values by index), the first k of them and their values."""
    x = np.asarray(x)
    axis %= x.ndim
    moved = np.moveaxis(x, axis, -1)
    vals = np.empty(moved.shape[:-1] + (k,), dtype=x.dtype)
    ids = np.empty(moved.shape[:-1] + (k,), dtype=np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        line = [v.item() for v in moved[pos]]

        def key(i, line=line):
            v = line[i]
            nan = isinstance(v, float) and math.isnan(v)
            if largest:
                return (0 if nan else 1, 0 if nan else -v, i)
            return (1 if nan else 0, 0 if nan else v, i)

        order = sorted(range(len(line)), key=key)[:k]
        ids[pos] = order
        vals[pos] = [moved[pos][i] for i in order]
    return np.moveaxis(vals, -1, axis), np.moveaxis(ids, -1, axis)

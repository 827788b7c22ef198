"""Every rlx op, run by `rlxc.interpret` on fresh random inputs, against an
independent float64 reference (`tests/reference.py`).

Tolerances (see `reference.RTOL`): the interpreter computes in float64 and
rounds once to the result type, and the reference is exact float64 math on the
same (already rounded) inputs, so the only expected error is one rounding per
element: ||out - ref|| / ||ref|| < 1e-6 for f32, 1e-3 for f16 (unit roundoff
4.9e-4), 8e-3 for bf16 (unit roundoff 3.9e-3). Integer and boolean results,
and float results that are exactly representable (floor, round, casts, data
movement, ...), must match exactly.

Random inputs come from an unseeded generator; the seed is printed (shown by
pytest on failure) so that a failure can be replayed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rlxc

try:
    import reference as R
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests import reference as R

FLOATS = R.FLOATS
INTS = R.INTS
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("i1",)


@pytest.fixture
def rng() -> np.random.Generator:
    seed = np.random.SeedSequence().entropy
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)


def run(build, inputs=None, params=None) -> list[np.ndarray]:
    """Builds a graph from `inputs`/`params` ({name: (array, dtype)}) and `build(g, t)`
    (t maps names to Tensors; returns a Tensor or a sequence), then interprets it."""
    inputs = inputs or {}
    params = params or {}
    g = rlxc.GraphBuilder()
    t = {n: g.input(n, a.shape, dt) for n, (a, dt) in inputs.items()}
    t.update({n: g.param(n, a.shape, dt) for n, (a, dt) in params.items()})
    outs = build(g, t)
    outs = [outs] if isinstance(outs, rlxc.Tensor) else list(outs)
    module = g.build(outs)
    return rlxc.interpret(
        module,
        {n: a for n, (a, _) in inputs.items()},
        {n: a for n, (a, _) in params.items()},
    )


def run1(build, inputs=None, params=None) -> np.ndarray:
    (out,) = run(build, inputs, params)
    return out


def nonzero(rng, shape, dtype, lo, hi):
    """Random values with magnitude in [lo, hi] and random sign."""
    mag = rng.uniform(lo, hi, size=shape)
    sgn = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return R.to_dtype(mag * sgn, dtype)


# =========================================================================== unary

UNARY_OPS = [
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf", "floor", "ceil", "round",
    "sign", "softplus",
]  # fmt: skip
INT_UNARY_OPS = ["neg", "abs", "sign", "relu"]
#: Ops whose float results are exactly representable: compared bit for bit.
EXACT_UNARY = {"neg", "abs", "relu", "floor", "ceil", "round", "sign"}


def unary_input(rng, op, shape, dtype):
    if op in ("log", "rsqrt"):
        return R.random_array(rng, shape, dtype, 0.05, 6.0)
    if op == "sqrt":
        x = R.random_array(rng, shape, dtype, 0.0, 6.0)
        x.flat[0] = 0.0
        return x
    if op == "reciprocal":
        return nonzero(rng, shape, dtype, 0.2, 4.0)
    if op in ("asin", "acos", "atanh"):  # inside (-1, 1)
        return R.random_array(rng, shape, dtype, -0.95, 0.95)
    if op == "acosh":
        x = R.random_array(rng, shape, dtype, 1.0, 6.0)
        x.flat[0] = 1.0
        return x
    if op == "tan":  # away from the poles at ±pi/2
        return R.random_array(rng, shape, dtype, -1.4, 1.4)
    if op in ("floor", "ceil", "round", "sign"):
        x = rng.uniform(-6, 6, size=shape)
        quarters = rng.integers(-24, 25, size=shape) / 4.0  # exact integers and ties
        x = np.where(rng.random(size=shape) < 0.5, quarters, x)
        x.flat[0] = 0.0
        return R.to_dtype(x, dtype)
    return R.random_array(rng, shape, dtype, -5.0, 5.0)


def test_unary_op_list_is_complete():
    from rlxc.dialects import rlx

    assert sorted(op.name.removeprefix("rlx.") for op in rlx.UNARY_OPS) == sorted(UNARY_OPS)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_float(op, dtype, rng):
    x = unary_input(rng, op, (3, 7), dtype)
    out = run1(lambda g, t: getattr(g, op)(t["x"]), {"x": (x, dtype)})
    ref = R.UNARY[op](R.wide(x))
    if op in EXACT_UNARY:
        R.assert_exact(out, ref, dtype, what=f"{op} {dtype}")
    else:
        R.assert_close(out, ref, dtype, what=f"{op} {dtype}")


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", INT_UNARY_OPS)
def test_unary_int(op, dtype, rng):
    x = R.random_array(rng, (4, 6), dtype, -50, 50)
    x.flat[0] = 0
    out = run1(lambda g, t: getattr(g, op)(t["x"]), {"x": (x, dtype)})
    R.assert_exact(out, R.UNARY[op](R.wide(x)), dtype, what=f"{op} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_half_to_even(dtype):
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 0.25, -0.75, 0.0, 4.0, 5.5])
    want = np.array([0.0, 2.0, 2.0, 4.0, -0.0, -2.0, -2.0, -4.0, 0.0, -1.0, 0.0, 4.0, 6.0])
    out = run1(lambda g, t: g.round(t["x"]), {"x": (R.to_dtype(x, dtype), dtype)})
    R.assert_exact(out, want, dtype, what="round")
    # -0.5 rounds to -0 (numpy.rint / CUDA rintf keep the sign of zero).
    assert np.signbit(out[4]) and np.signbit(out[0]) == False  # noqa: E712


def test_round_near_half_f32():
    # The f32 neighbours of 0.5 and 2.5 round away from the tie.
    below = np.nextafter(np.float32(0.5), np.float32(0))
    above = np.nextafter(np.float32(2.5), np.float32(3))
    x = np.array([below, above], dtype=np.float32)
    out = run1(lambda g, t: g.round(t["x"]), {"x": (x, "f32")})
    R.assert_exact(out, np.array([0.0, 3.0]), "f32")


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sin_cos_large_arguments(op):
    x = np.array([1e4, -1e4, 12345.678, 1e5 + 0.25, 1e6, -3e7, 1e9], dtype=np.float32)
    out = run1(lambda g, t: getattr(g, op)(t["x"]), {"x": (x, "f32")})
    ref = R.UNARY[op](R.wide(x))
    R.assert_close(out, ref, "f32", what=op)
    # Element by element too: full-range reduction, not a fast approximation.
    assert np.max(np.abs(out.astype(np.float64) - ref)) < 1e-7


@pytest.mark.parametrize("dtype", FLOATS)
def test_inverse_trig_domains_and_small_arguments(dtype):
    """Outside their domains asin, acos and acosh are NaN and atanh too;
    atanh(±1) = ±inf; asin/atan/sinh/asinh/atanh/tan keep their relative
    precision near 0 (they are ops, not compositions of exp and log)."""
    x = R.to_dtype(np.array([-2.0, -1.0, 1.0, 1.5, 0.0]), dtype)
    outs = run(lambda g, t: [g.asin(t["x"]), g.acos(t["x"]), g.atanh(t["x"]), g.acosh(t["x"])], {"x": (x, dtype)})
    asin, acos, atanh, acosh = (o.astype(np.float64) for o in outs)
    assert np.isnan(asin[[0, 3]]).all() and np.isnan(acos[[0, 3]]).all() and np.isnan(atanh[[0, 3]]).all()
    assert atanh[1] == -np.inf and atanh[2] == np.inf and np.isnan(acosh[[0, 1, 4]]).all() and acosh[2] == 0.0
    assert asin[1] == R.to_dtype(np.array([-np.pi / 2]), dtype).astype(np.float64)[0] and acos[2] == 0.0
    tiny = R.to_dtype(np.array([1e-4, -3e-5, 2e-3]), dtype)
    for op in ("asin", "atan", "sinh", "asinh", "atanh", "tan"):
        out = run1(lambda g, t: getattr(g, op)(t["x"]), {"x": (tiny, dtype)})
        R.assert_close(out, R.UNARY[op](R.wide(tiny)), dtype, what=f"{op} near 0")


def test_gelu_is_the_exact_erf_form():
    x = np.array([-3.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0], dtype=np.float32)
    out = run1(lambda g, t: g.gelu(t["x"]), {"x": (x, "f32")})
    exact = R.gelu(R.wide(x))
    approx = R.gelu_tanh(R.wide(x))
    rel = np.abs(out - exact) / np.abs(exact)
    assert np.all(rel < 1e-6), rel
    # The tanh form is measurably different here (e.g. gelu(-3) = -0.00405 vs -0.00364).
    assert np.max(np.abs(out - approx) / np.abs(exact)) > 1e-2
    out_t = run1(lambda g, t: g.gelu_tanh(t["x"]), {"x": (x, "f32")})
    assert np.all(np.abs(out_t - approx) / np.abs(approx) < 1e-6)


def test_gelu_keeps_its_relative_precision_for_negative_x():
    """gelu(x) = x Phi(x) is tiny, not 0, for x far below 0 (gelu(-10) is
    -7.6e-23, a normal f32): 1 + erf(x / sqrt 2) cancels there, in float64
    too past about -8, so the reference and the kernels use erfc."""
    x = np.array([-3.5, -5.0, -6.0, -8.0, -10.0, -12.5], dtype=np.float32)
    out = run1(lambda g, t: g.gelu(t["x"]), {"x": (x, "f32")})
    # Phi(x) from its own series: the tail's asymptotic expansion, independent
    # of math.erfc (terms (2k-1)!! / x^2k to k = 12; from -8 down its error is
    # under 1e-10 relative)
    xd = x.astype(np.float64)
    series = sum((-1) ** k * np.prod(np.arange(1, 2 * k, 2)) / xd ** (2 * k) for k in range(13))
    phi = np.exp(-xd * xd / 2) / (-xd * np.sqrt(2 * np.pi)) * series
    tail = xd <= -8
    rel = np.abs(out.astype(np.float64)[tail] - xd[tail] * phi[tail]) / np.abs(xd[tail] * phi[tail])
    assert np.all(rel < 1e-6), rel
    # and against math.erfc everywhere
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in xd.tolist()])
    assert np.all(np.abs(out - want) / np.abs(want) < 1e-6)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_sign_of_zero_is_zero(dtype):
    x = np.array([0, -3, 5, 0], dtype=np.float64)
    if dtype in FLOATS:
        x[3] = -0.0
    out = run1(lambda g, t: g.sign(t["x"]), {"x": (R.to_dtype(x, dtype), dtype)})
    R.assert_exact(out, np.array([0, -1, 1, 0]), dtype)


def test_sign_nan_stays_nan():
    x = np.array([np.nan, 2.0], dtype=np.float32)
    out = run1(lambda g, t: g.sign(t["x"]), {"x": (x, "f32")})
    assert np.isnan(out[0]) and out[1] == 1.0


def test_sigmoid_silu_extreme_arguments():
    x = np.array([-1000.0, -80.0, 80.0, 1000.0], dtype=np.float32)
    s, si = run(lambda g, t: [g.sigmoid(t["x"]), g.silu(t["x"])], {"x": (x, "f32")})
    R.assert_close(s, R.sigmoid(R.wide(x)), "f32")
    assert np.all(np.isfinite(s)) and np.all(np.isfinite(si))
    R.assert_close(si, R.silu(R.wide(x)), "f32")


# =========================================================================== binary

BINARY_OPS = ["add", "sub", "mul", "div", "rem", "pow", "maximum", "minimum"]
BCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((3, 1, 4), (2, 1)),
    ((), (2, 3)),
    ((4, 1), (1, 5)),
]


def binary_ref(op, a, b):
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "div":
        return a / b if a.dtype.kind == "f" else R.int_div(a, b)
    if op == "rem":  # C's fmod and %: the dividend's sign, exact
        a, b = np.broadcast_arrays(a, b)
        one = (lambda x, y: math.fmod(x, y)) if a.dtype.kind == "f" else (lambda x, y: int(math.fmod(x, y)))
        return np.array([one(x, y) for x, y in zip(a.ravel(), b.ravel())]).reshape(a.shape)
    if op == "pow":
        a, b = np.broadcast_arrays(a, b)
        return np.array([math.pow(x, y) for x, y in zip(a.ravel(), b.ravel())]).reshape(a.shape)
    if op == "maximum":
        return np.where(a > b, a, b)
    if op == "minimum":
        return np.where(a < b, a, b)
    raise ValueError(op)


def binary_inputs(rng, op, sa, sb, dtype):
    if dtype in INTS:
        a = R.random_array(rng, sa, dtype, -50, 50)
        if op in ("div", "rem"):
            b = R.random_array(rng, sb, dtype, 1, 9) * np.where(rng.random(sb) < 0.5, -1, 1).astype(R.CARRIER[dtype])
        elif op == "mul":
            b = R.random_array(rng, sb, dtype, -20, 20)
        else:
            b = R.random_array(rng, sb, dtype, -50, 50)
        return a, b
    if op in ("div", "rem"):
        return R.random_array(rng, sa, dtype), nonzero(rng, sb, dtype, 0.25, 3.0)
    if op == "pow":
        return R.random_array(rng, sa, dtype, 0.25, 3.0), R.random_array(rng, sb, dtype, -2, 2)
    a = R.random_array(rng, sa, dtype)
    b = R.random_array(rng, sb, dtype)
    if op in ("maximum", "minimum") and a.size and b.size:
        b.flat[0] = a.flat[0]  # a tie
    return a, b


def _binary_cases():
    for op in BINARY_OPS:
        for dtype in NUMERIC:
            if op == "pow" and dtype in INTS:
                continue
            for sa, sb in BCAST_SHAPES:
                yield pytest.param(op, dtype, sa, sb, id=f"{op}-{dtype}-{sa}-{sb}")


@pytest.mark.parametrize("op,dtype,sa,sb", list(_binary_cases()))
def test_binary(op, dtype, sa, sb, rng):
    a, b = binary_inputs(rng, op, sa, sb, dtype)
    out = run1(lambda g, t: getattr(g, op)(t["a"], t["b"]), {"a": (a, dtype), "b": (b, dtype)})
    ref = binary_ref(op, R.wide(a), R.wide(b))
    if dtype in INTS or op in ("maximum", "minimum", "rem"):  # fmod's result is exact in the operands' type
        R.assert_exact(out, ref, dtype, what=f"{op} {dtype}")
    else:
        R.assert_close(out, ref, dtype, what=f"{op} {dtype}")


@pytest.mark.parametrize("dtype", INTS)
def test_int_div_truncates_toward_zero(dtype):
    a = np.array([7, -7, 7, -7, 1, -1, 0, 9], dtype=R.CARRIER[dtype])
    b = np.array([2, 2, -2, -2, 3, 3, 5, -4], dtype=R.CARRIER[dtype])
    out = run1(lambda g, t: g.div(t["a"], t["b"]), {"a": (a, dtype), "b": (b, dtype)})
    R.assert_exact(out, np.array([3, -3, -3, 3, 0, 0, 0, -2]), dtype)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan(op):
    a = np.array([np.nan, 1.0, np.nan, 2.0], dtype=np.float32)
    b = np.array([1.0, np.nan, np.nan, 3.0], dtype=np.float32)
    out = run1(lambda g, t: getattr(g, op)(t["a"], t["b"]), {"a": (a, "f32"), "b": (b, "f32")})
    assert np.isnan(out[:3]).all()
    assert out[3] == (3.0 if op == "maximum" else 2.0)


def test_tensor_operators():
    rng = np.random.default_rng()
    a = R.random_array(rng, (3, 4), "f32")
    b = nonzero(rng, (4,), "f32", 0.5, 2)
    m = R.random_array(rng, (4, 2), "f32")
    outs = run(
        lambda g, t: [t["a"] + t["b"], t["a"] - t["b"], t["a"] * t["b"], t["a"] / t["b"],
                      -t["a"], t["a"] @ t["m"]],
        {"a": (a, "f32"), "b": (b, "f32"), "m": (m, "f32")},
    )  # fmt: skip
    A, B, M = R.wide(a), R.wide(b), R.wide(m)
    for out, ref in zip(outs, [A + B, A - B, A * B, A / B, -A, R.matmul(A, M)]):
        R.assert_close(out, ref, "f32")


# =========================================================================== compare / select

COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def discrete(rng, shape, dtype):
    """Values from a small set so that ties are common."""
    if dtype == "i1":
        return rng.random(size=shape) < 0.5
    v = rng.integers(-2, 3, size=shape)
    return R.to_dtype(v * 0.5 if dtype in FLOATS else v, dtype)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 1, 4), (3, 1))], ids=["same", "bcast"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", list(COMPARE))
def test_compare(op, dtype, shapes, rng):
    sa, sb = shapes
    a, b = discrete(rng, sa, dtype), discrete(rng, sb, dtype)
    out = run1(lambda g, t: getattr(g, op)(t["a"], t["b"]), {"a": (a, dtype), "b": (b, dtype)})
    ref = COMPARE[op](R.wide(a), R.wide(b))
    if dtype == "i1":  # bool order: False < True
        ref = COMPARE[op](a.astype(np.int64), b.astype(np.int64))
    R.assert_exact(out, np.asarray(ref), "i1", what=f"{op} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_compare_nan_is_unordered(dtype):
    a = R.to_dtype(np.array([np.nan, 1.0, np.nan, 1.0]), dtype)
    b = R.to_dtype(np.array([1.0, np.nan, np.nan, 1.0]), dtype)
    outs = run(
        lambda g, t: [getattr(g, op)(t["a"], t["b"]) for op in COMPARE],
        {"a": (a, dtype), "b": (b, dtype)},
    )
    want = {
        "eq": [0, 0, 0, 1], "ne": [1, 1, 1, 0], "lt": [0, 0, 0, 0],
        "le": [0, 0, 0, 1], "gt": [0, 0, 0, 0], "ge": [0, 0, 0, 1],
    }  # fmt: skip
    for op, out in zip(COMPARE, outs):
        R.assert_exact(out, np.array(want[op]), "i1", what=op)


@pytest.mark.parametrize(
    "shapes", [((4, 1), (4, 5), (5,)), ((5,), (), (4, 5)), ((2, 3), (2, 3), (2, 3))],
    ids=["c41-a45-b5", "c5-a0-b45", "same"],
)
@pytest.mark.parametrize("dtype", ALL)
def test_select(dtype, shapes, rng):
    sc, sa, sb = shapes
    c = R.random_array(rng, sc, "i1")
    a = R.random_array(rng, sa, dtype, -9, 9)
    b = R.random_array(rng, sb, dtype, -9, 9)
    out = run1(
        lambda g, t: g.select(t["c"], t["a"], t["b"]),
        {"c": (c, "i1"), "a": (a, dtype), "b": (b, dtype)},
    )
    shape = np.broadcast_shapes(sc, sa, sb)
    C, A, B = (np.broadcast_to(v, shape) for v in (c, a, b))
    ref = np.empty(shape, dtype=a.dtype)
    for idx in np.ndindex(shape):
        ref[idx] = A[idx] if C[idx] else B[idx]
    R.assert_exact(out, ref, dtype)


# =========================================================================== cast


def cast_source(rng, dtype):
    if dtype in FLOATS:
        specials = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -2.7, 2.7, 0.3, -0.99, 99.75])
        x = np.concatenate([specials, rng.uniform(-100, 100, size=14)]).reshape(4, 6)
        return R.to_dtype(x, dtype)
    if dtype in INTS:
        x = R.random_array(rng, (4, 6), dtype, -100, 100)
        x.flat[:3] = [0, 1, -1]
        return x
    x = R.random_array(rng, (4, 6), "i1")
    x.flat[:2] = [True, False]
    return x


@pytest.mark.parametrize("dst", ALL)
@pytest.mark.parametrize("src", ALL)
def test_cast(src, dst, rng):
    x = cast_source(rng, src)
    out = run1(lambda g, t: g.cast(t["x"], dst), {"x": (x, src)})
    w = R.wide(x)
    if src == "i1":
        w = w.astype(np.int64)
    # float -> int truncates toward zero; -> i1 is x != 0; floats round to nearest even.
    R.assert_exact(out, R.to_dtype(w, dst), dst, what=f"cast {src}->{dst}")


def test_cast_f32_to_i32_truncates():
    x = np.array([2.7, -2.7, 0.999, -0.999, 1000000.5, -123.9, -0.5, 7.0], dtype=np.float32)
    out = run1(lambda g, t: g.cast(t["x"], "i32"), {"x": (x, "f32")})
    R.assert_exact(out, np.array([2, -2, 0, 0, 1000000, -123, 0, 7]), "i32")


def test_cast_f32_to_i1_is_nonzero():
    x = np.array([0.0, -0.0, 0.3, -1e-30, np.nan, np.inf, -2.0], dtype=np.float32)
    out = run1(lambda g, t: g.cast(t["x"], "i1"), {"x": (x, "f32")})
    R.assert_exact(out, np.array([False, False, True, True, True, True, True]), "i1")


@pytest.mark.parametrize(
    "dst,ulp_bits",
    [("f16", 10), ("bf16", 7)],
)
def test_cast_f32_to_half_rounds_to_nearest_even(dst, ulp_bits):
    u = 2.0**-ulp_bits  # spacing of the target type at 1.0
    # Ties go to the even neighbour; 2 + u and 2 + 3u are ties at twice the spacing.
    x = np.array([1 + u / 2, 1 + 3 * u / 2, 1 + u / 2 + u / 8, -(1 + u / 2), 2 + u, 2 + 3 * u,
                  1 + u / 4], dtype=np.float32)  # fmt: skip
    want = np.array([1.0, 1 + 2 * u, 1 + u, -1.0, 2.0, 2 + 4 * u, 1.0])
    out = run1(lambda g, t: g.cast(t["x"], dst), {"x": (x, "f32")})
    R.assert_exact(out, want, dst, what=f"f32->{dst}")


def test_cast_random_f32_to_f16_and_bf16(rng):
    x = R.random_array(rng, (64,), "f32", -300, 300)
    a, b = run(lambda g, t: [g.cast(t["x"], "f16"), g.cast(t["x"], "bf16")], {"x": (x, "f32")})
    R.assert_exact(a, x.astype(np.float64).astype(np.float16), "f16")
    R.assert_exact(b, R.round_bf16(x), "bf16")


@pytest.mark.parametrize(
    "src,dst,vals,want",
    [
        ("i64", "f32", [2**24 + 1, 2**24 + 3, -(2**24 + 1)], [2**24, 2**24 + 4, -(2**24)]),
        ("i32", "f16", [2049, 2051, -2049], [2048, 2052, -2048]),
        ("i32", "bf16", [257, 259, -257], [256, 260, -256]),
        ("i64", "i32", [2**31 - 1, -(2**31), 5], [2**31 - 1, -(2**31), 5]),
    ],
)
def test_cast_int_rounding(src, dst, vals, want):
    x = np.array(vals, dtype=R.CARRIER[src])
    out = run1(lambda g, t: g.cast(t["x"], dst), {"x": (x, src)})
    R.assert_exact(out, np.array(want, dtype=np.float64 if dst in FLOATS else np.int64), dst)


# =========================================================================== reductions

REDUCE_OPS = ["sum", "mean", "max", "min", "prod"]
AXES = [[0], [-1], [1], [0, 2], [-1, 0], None]


def reduce_input(rng, op, shape, dtype):
    if op == "prod":
        if dtype in INTS:
            return rng.choice(np.array([1, -1, 2], dtype=R.CARRIER[dtype]), size=shape, p=[0.6, 0.3, 0.1])
        return R.random_array(rng, shape, dtype, 0.6, 1.5)
    if dtype in INTS:
        return R.random_array(rng, shape, dtype, -50, 50)
    return R.random_array(rng, shape, dtype)


def _reduce_cases():
    for op in REDUCE_OPS:
        for dtype in NUMERIC:
            if op == "mean" and dtype in INTS:
                continue
            for axes in AXES:
                for keepdims in (False, True):
                    yield pytest.param(
                        op, dtype, axes, keepdims, id=f"{op}-{dtype}-{axes}-{keepdims}"
                    )


@pytest.mark.parametrize("op,dtype,axes,keepdims", list(_reduce_cases()))
def test_reduce(op, dtype, axes, keepdims, rng):
    x = reduce_input(rng, op, (3, 4, 5), dtype)
    out = run1(
        lambda g, t: getattr(g, f"reduce_{op}")(t["x"], axes, keepdims=keepdims),
        {"x": (x, dtype)},
    )
    ref = R.reduce(x, op, axes, keepdims)
    if dtype in INTS or op in ("max", "min"):
        R.assert_exact(out, ref, dtype, what=f"reduce_{op}")
    else:
        R.assert_close(out, ref, dtype, what=f"reduce_{op}")


@pytest.mark.parametrize("case", ["reduce_all", "scalar_add", "scalar_exp", "argmax_1d"])
def test_rank0_results_keep_rank0_shape(case, rng):
    x = R.random_array(rng, (3, 4), "f32")
    s = R.random_array(rng, (), "f32")
    v = R.random_array(rng, (5,), "f32")
    build = {
        "reduce_all": lambda g, t: g.reduce_sum(t["x"]),
        "scalar_add": lambda g, t: g.add(t["s"], t["s"]),
        "scalar_exp": lambda g, t: g.exp(t["s"]),
        "argmax_1d": lambda g, t: g.argmax(t["v"], 0),
    }[case]
    ref = {
        "reduce_all": lambda: np.array(math.fsum(R.wide(x).ravel())),
        "scalar_add": lambda: R.wide(s) * 2,
        "scalar_exp": lambda: R.exp(R.wide(s)),
        "argmax_1d": lambda: R.argmax(v, 0, False),
    }[case]()
    out = run1(build, {"x": (x, "f32"), "s": (s, "f32"), "v": (v, "f32")})
    assert out.shape == (), f"shape {out.shape}, expected ()"
    if case == "argmax_1d":
        R.assert_exact(out, ref, "i64")
    else:
        R.assert_close(out, ref, "f32")


def test_reduce_int_axis_argument(rng):
    x = R.random_array(rng, (3, 4), "f32")
    out = run1(lambda g, t: g.reduce_sum(t["x"], 1), {"x": (x, "f32")})
    R.assert_close(out, R.reduce(x, "sum", [1], False), "f32")


def test_reduce_f16_accumulates_wide():
    # 2048 + 1 + 1 + ... in f16 would stick at 2048 with f16 accumulation.
    x = np.array([2048.0] + [1.0] * 64, dtype=np.float16)
    out = run1(lambda g, t: g.reduce_sum(t["x"], [0]), {"x": (x, "f16")})
    assert out == np.float16(2112.0)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_argmax(dtype, axis, keepdims, rng):
    x = discrete(rng, (3, 4, 5), dtype)  # many ties
    out = run1(lambda g, t: g.argmax(t["x"], axis, keepdims=keepdims), {"x": (x, dtype)})
    R.assert_exact(out, R.argmax(x, axis, keepdims), "i64", what="argmax")


def test_argmax_ties_give_first():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, -1, -5], [0, 0, 0, 9]], dtype=np.float32)
    out = run1(lambda g, t: g.argmax(t["x"], -1), {"x": (x, "f32")})
    R.assert_exact(out, np.array([1, 0, 0, 3]), "i64")


# =========================================================================== softmax / norms


@pytest.mark.parametrize("magnitude", [1.0, 1000.0], ids=["unit", "large"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax(op, dtype, axis, magnitude, rng):
    x = R.random_array(rng, (3, 4, 6), dtype, -3 * magnitude, 3 * magnitude)
    out = run1(lambda g, t: getattr(g, op)(t["x"], axis), {"x": (x, dtype)})
    ref = getattr(R, op)(R.wide(x), axis)
    assert np.all(np.isfinite(out))
    R.assert_close(out, ref, dtype, what=f"{op} axis={axis}")


def test_softmax_huge_inputs_no_overflow():
    x = np.array([[1e30, 1e30, -1e30], [88.0, 89.0, 90.0]], dtype=np.float32)
    s, ls = run(lambda g, t: [g.softmax(t["x"]), g.log_softmax(t["x"])], {"x": (x, "f32")})
    R.assert_close(s, R.softmax(R.wide(x), -1), "f32")
    assert s[0, 2] == 0.0 and abs(s[0, 0] - 0.5) < 1e-7
    R.assert_close(ls[1], R.log_softmax(R.wide(x), -1)[1], "f32")
    assert abs(ls[0, 0] + math.log(2)) < 1e-6


@pytest.mark.parametrize("eps", [1e-5, 0.5])
@pytest.mark.parametrize("gamma_rank", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm(dtype, gamma_rank, eps, rng):
    x = R.random_array(rng, (2, 3, 4, 6), dtype, -2, 4)
    gshape = (4, 6)[-gamma_rank:]
    gamma = R.random_array(rng, gshape, dtype, 0.5, 2)
    beta = R.random_array(rng, gshape, dtype, -1, 1)
    out = run1(
        lambda g, t: g.layer_norm(t["x"], t["g"], t["b"], eps=eps),
        {"x": (x, dtype)},
        {"g": (gamma, dtype), "b": (beta, dtype)},
    )
    ref = R.layer_norm(R.wide(x), R.wide(gamma), R.wide(beta), eps, gamma_rank)
    R.assert_close(out, ref, dtype, what="layer_norm")


@pytest.mark.parametrize("eps", [1e-6, 0.5])
@pytest.mark.parametrize("gamma_rank", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm(dtype, gamma_rank, eps, rng):
    x = R.random_array(rng, (2, 3, 4, 6), dtype, -2, 4)
    gshape = (4, 6)[-gamma_rank:]
    gamma = R.random_array(rng, gshape, dtype, 0.5, 2)
    out = run1(lambda g, t: g.rms_norm(t["x"], t["g"], eps=eps), {"x": (x, dtype), "g": (gamma, dtype)})
    ref = R.rms_norm(R.wide(x), R.wide(gamma), eps, gamma_rank)
    R.assert_close(out, ref, dtype, what="rms_norm")


@pytest.mark.parametrize("gamma_rank", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS)
def test_fused_residual_layer_norm(dtype, gamma_rank, rng):
    x = R.random_array(rng, (3, 4, 8), dtype)
    r = R.random_array(rng, (3, 4, 8), dtype)
    gshape = (4, 8)[-gamma_rank:]
    gamma = R.random_array(rng, gshape, dtype, 0.5, 2)
    beta = R.random_array(rng, gshape, dtype, -1, 1)
    s, y = run(
        lambda g, t: g.fused_residual_layer_norm(t["x"], t["r"], t["g"], t["b"], eps=1e-5),
        {"x": (x, dtype), "r": (r, dtype), "g": (gamma, dtype), "b": (beta, dtype)},
    )
    exact_sum = R.wide(x) + R.wide(r)
    if dtype != "bf16":
        R.assert_exact(s, exact_sum, dtype, what="sum")  # one rounding of the exact sum
    R.assert_close(s, exact_sum, dtype, what="sum")
    # The normalised result is layer_norm of the sum (the returned, rounded one).
    ref = R.layer_norm(R.wide(s), R.wide(gamma), R.wide(beta), 1e-5, gamma_rank)
    R.assert_close(y, ref, dtype, what="normed")


@pytest.mark.parametrize("gamma_rank", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS)
def test_fused_residual_rms_norm(dtype, gamma_rank, rng):
    x = R.random_array(rng, (3, 4, 8), dtype)
    r = R.random_array(rng, (3, 4, 8), dtype)
    gshape = (4, 8)[-gamma_rank:]
    gamma = R.random_array(rng, gshape, dtype, 0.5, 2)
    s, y = run(
        lambda g, t: g.fused_residual_rms_norm(t["x"], t["r"], t["g"], eps=1e-6),
        {"x": (x, dtype), "r": (r, dtype), "g": (gamma, dtype)},
    )
    exact_sum = R.wide(x) + R.wide(r)
    if dtype != "bf16":
        R.assert_exact(s, exact_sum, dtype, what="sum")
    R.assert_close(s, exact_sum, dtype, what="sum")
    ref = R.rms_norm(R.wide(s), R.wide(gamma), 1e-6, gamma_rank)
    R.assert_close(y, ref, dtype, what="normed")


# =========================================================================== matmul / linear

MATMUL_SHAPES = [
    ((4, 5), (5, 3)),
    ((2, 4, 5), (2, 5, 3)),
    ((2, 4, 5), (5, 3)),
    ((4, 5), (2, 5, 3)),
    ((3, 1, 4, 5), (2, 5, 3)),
    ((1, 1), (1, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul(dtype, sa, sb, rng):
    a, b = R.random_array(rng, sa, dtype), R.random_array(rng, sb, dtype)
    out = run1(lambda g, t: g.matmul(t["a"], t["b"]), {"a": (a, dtype), "b": (b, dtype)})
    R.assert_close(out, R.matmul(R.wide(a), R.wide(b)), dtype, what=f"matmul {sa}@{sb}")


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_linear(dtype, activation, bias, rng):
    x = R.random_array(rng, (2, 3, 6), dtype, -2, 2)
    w = R.random_array(rng, (5, 6), dtype, -1, 1)
    b = R.random_array(rng, (5,), dtype, -1, 1)
    params = {"w": (w, dtype)}
    if bias:
        params["b"] = (b, dtype)
    out = run1(
        lambda g, t: g.linear(t["x"], t["w"], t.get("b"), activation=activation),
        {"x": (x, dtype)},
        params,
    )
    ref = R.linear(R.wide(x), R.wide(w), R.wide(b) if bias else None, activation)
    R.assert_close(out, ref, dtype, what=f"linear {activation}")


def test_linear_gelu_is_exact_form():
    x = np.array([[-3.0], [-2.0], [2.5]], dtype=np.float32)
    w = np.ones((1, 1), np.float32)
    out = run1(lambda g, t: g.linear(t["x"], t["w"], activation="gelu"), {"x": (x, "f32"), "w": (w, "f32")})
    R.assert_close(out, R.gelu(R.wide(x)), "f32")
    assert abs(out[0, 0] - R.gelu_tanh(np.array(-3.0))) > 1e-4


# =========================================================================== shape ops


@pytest.mark.parametrize("new", [(4, -1), (-1,), (6, 4), (2, -1, 2), (1, 24, 1)])
@pytest.mark.parametrize("dtype", ALL)
def test_reshape(dtype, new, rng):
    x = R.random_array(rng, (2, 3, 4), dtype, -9, 9)
    out = run1(lambda g, t: g.reshape(t["x"], new), {"x": (x, dtype)})
    flat = [x[i] for i in np.ndindex(x.shape)]  # row-major order
    known = math.prod(d for d in new if d != -1)
    shape = tuple(24 // known if d == -1 else d for d in new)
    R.assert_exact(out, np.array(flat, dtype=x.dtype).reshape(shape), dtype)


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 1, 2), None])
@pytest.mark.parametrize("dtype", ALL)
def test_transpose(dtype, perm, rng):
    x = R.random_array(rng, (2, 3, 4), dtype, -9, 9)
    out = run1(lambda g, t: g.transpose(t["x"], perm), {"x": (x, dtype)})
    p = perm if perm is not None else (2, 1, 0)
    shape = tuple(x.shape[k] for k in p)
    ref = np.empty(shape, dtype=x.dtype)
    for idx in np.ndindex(shape):
        src = [0] * 3
        for i, k in enumerate(p):
            src[k] = idx[i]
        ref[idx] = x[tuple(src)]
    R.assert_exact(out, ref, dtype)


@pytest.mark.parametrize("src,dst", [((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((1, 1), (2, 5)), ((2, 3), (2, 3))])
@pytest.mark.parametrize("dtype", ALL)
def test_expand(dtype, src, dst, rng):
    x = R.random_array(rng, src, dtype, -9, 9)
    out = run1(lambda g, t: g.expand(t["x"], dst), {"x": (x, dtype)})
    ref = np.empty(dst, dtype=x.dtype)
    off = len(dst) - len(src)
    for idx in np.ndindex(dst):
        ref[idx] = x[tuple(0 if src[k] == 1 else idx[k + off] for k in range(len(src)))]
    R.assert_exact(out, ref, dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL)
def test_concat(dtype, axis, rng):
    shapes = []
    for n in (2, 1, 3):
        s = [2, 3, 4]
        s[axis] = n
        shapes.append(tuple(s))
    xs = [R.random_array(rng, s, dtype, -9, 9) for s in shapes]
    out = run1(
        lambda g, t: g.concat([t["a"], t["b"], t["c"]], axis=axis),
        {k: (v, dtype) for k, v in zip("abc", xs)},
    )
    # Reference: walk the output index and find which input it falls in.
    ax = axis % 3
    shape = list(shapes[0])
    shape[ax] = sum(s[ax] for s in shapes)
    ref = np.empty(shape, dtype=xs[0].dtype)
    for idx in np.ndindex(*shape):
        pos = idx[ax]
        for x in xs:
            if pos < x.shape[ax]:
                ref[idx] = x[idx[:ax] + (pos,) + idx[ax + 1 :]]
                break
            pos -= x.shape[ax]
    R.assert_exact(out, ref, dtype)


SLICE_CASES = [
    # starts, ends, axes, steps
    ([1], [4], None, None),
    ([-3], [-1], None, None),
    ([0, 2], [100, -2], [1, 2], None),  # end clamps
    ([-100], [100], [-1], [3]),  # start clamps
    ([0], [7], [2], [2]),
    ([-1], [-100], [0], [-1]),  # full reverse, end clamps through index 0
    ([4], [0], [1], [-2]),
    ([5], [-8], [2], [-3]),
    ([6], [0], [2], [-1]),
    ([1, -1, 0], [-1, -7, 7], [0, 1, 2], [1, -2, 3]),
    ([3], [1], [0], [1]),  # empty
    ([-9], [-8], [0], [-1]),  # empty, the start before the axis: normalised to range(-1, -1, -1)
    ([7], [9], [1], [1]),  # empty, past the end
    ([-9], [0], [0], [-1]),  # empty, both before the axis
    ([2**62], [-(2**62)], [1], [-1]),  # huge ONNX-style bounds
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICE_CASES)
def test_slice(starts, ends, axes, steps, rng):
    x = R.random_array(rng, (5, 6, 7), "f32")
    out = run1(lambda g, t: g.slice(t["x"], starts, ends, axes=axes, steps=steps), {"x": (x, "f32")})
    # Python slicing on each named axis.
    ax = list(range(len(starts))) if axes is None else [a % 3 for a in axes]
    st = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * 3
    for s, e, a, k in zip(starts, ends, ax, st):
        index[a] = slice(s, e, k)
    R.assert_exact(out, x[tuple(index)], "f32")


@pytest.mark.parametrize("dtype", ALL)
def test_slice_dtypes(dtype, rng):
    x = R.random_array(rng, (4, 5), dtype, -9, 9)
    out = run1(lambda g, t: g.slice(t["x"], [-1, 1], [-5, 5], steps=[-1, 2]), {"x": (x, dtype)})
    R.assert_exact(out, x[-1:-5:-1, 1:5:2], dtype)


@pytest.mark.parametrize("idx_dtype", INTS)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL)
def test_gather(dtype, axis, idx_dtype, rng):
    x = R.random_array(rng, (5, 4), dtype, -9, 9)
    ax = axis % 2
    n = x.shape[ax]
    idx = rng.integers(-n, n, size=(2, 3)).astype(R.CARRIER[idx_dtype])
    idx.flat[0], idx.flat[1] = -1, -n  # negative indices count from the end
    out = run1(lambda g, t: g.gather(t["x"], t["i"], axis=axis), {"x": (x, dtype), "i": (idx, idx_dtype)})
    if ax == 0:
        shape = (2, 3, 4)
        ref = np.empty(shape, dtype=x.dtype)
        for i, j, k in np.ndindex(shape):
            ref[i, j, k] = x[int(idx[i, j]) % n, k]
    else:
        shape = (5, 2, 3)
        ref = np.empty(shape, dtype=x.dtype)
        for r, i, j in np.ndindex(shape):
            ref[r, i, j] = x[r, int(idx[i, j]) % n]
    R.assert_exact(out, ref, dtype)


@pytest.mark.parametrize("bad", [5, -6, 100])
def test_gather_out_of_range_raises(bad):
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    idx = np.array([0, bad, 1], dtype=np.int64)
    with pytest.raises(Exception, match=r"out of range"):
        run1(lambda g, t: g.gather(t["x"], t["i"], axis=0), {"x": (x, "f32"), "i": (idx, "i64")})


# =========================================================================== pad, gathers, cumsum, topk

PAD_CASES = [
    # low, high (of a 3x4x5 input)
    ([1, 0, 2], [0, 3, 1]),
    ([0, 0, 0], [0, 0, 0]),
    ([2, 3, 4], [2, 3, 4]),  # reflect's longest pads
    ([0, 1, 0], [1, 0, 0]),
]


def _pad_value(dtype):
    return {"i1": 1.0}.get(dtype, -7.0 if dtype in INTS else -2.5)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("low,high", PAD_CASES)
@pytest.mark.parametrize("dtype", ALL)
def test_pad(dtype, low, high, mode, rng):
    x = R.random_array(rng, (3, 4, 5), dtype, -9, 9)
    v = _pad_value(dtype)
    out = run1(lambda g, t: g.pad(t["x"], low, high, mode, v), {"x": (x, dtype)})
    R.assert_exact(out, R.pad(x, low, high, mode, v), dtype)


@pytest.mark.parametrize("mode", ["edge", "wrap", "constant"])
def test_pad_longer_than_the_axis(mode, rng):
    x = R.random_array(rng, (2, 3), "f32")
    out = run1(lambda g, t: g.pad(t["x"], [5, 0], [1, 7], mode, float("-inf")), {"x": (x, "f32")})
    R.assert_exact(out, R.pad(x, [5, 0], [1, 7], mode, float("-inf")), "f32")


def test_pad_value_rounds_to_the_type():
    x = np.zeros((2,), np.float16)
    out = run1(lambda g, t: g.pad(t["x"], [1], [1], value=0.1), {"x": (x, "f16")})
    assert out.dtype == np.float16 and out[0] == np.float16(0.1) and out[-1] == np.float16(0.1)


def test_pad_rank0_and_empty_axes():
    s = np.array(3.5, np.float32)
    assert run1(lambda g, t: g.pad(t["s"], [], [], "edge"), {"s": (s, "f32")}).shape == ()
    z = np.zeros((0, 3), np.float32)
    out = run1(lambda g, t: g.pad(t["z"], [1, 0], [1, 1], value=2.0), {"z": (z, "f32")})
    assert out.shape == (2, 4) and (out == 2.0).all()


@pytest.mark.parametrize("bad,match", [
    (([0, 4], [0, 0], "reflect"), "axis 1: reflect pads \\(4, 0\\) must be shorter than the axis extent 4"),
    (([0, -1], [0, 0], "constant"), "axis 1: pads \\(-1, 0\\) must be non-negative"),
    (([1], [1], "constant"), "low and high need one entry per axis \\(2\\), got 1 and 1"),
    (([0, 0], [0, 0], "symmetric"), "mode 'symmetric' is not one of constant, reflect, edge, wrap"),
])
def test_pad_errors(bad, match):
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 4])
    with pytest.raises(rlxc.GraphError, match="pad: " + match):
        g.pad(x, *bad)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_cumsum(dtype, axis, exclusive, reverse, rng):
    x = R.random_array(rng, (3, 4, 6), dtype, -9, 9)
    out = run1(lambda g, t: g.cumsum(t["x"], axis, exclusive, reverse), {"x": (x, dtype)})
    R.assert_close(out, R.to_dtype(R.cumsum(x, axis, exclusive, reverse), dtype), dtype)


def test_cumsum_rounds_once():
    # 1 + 2**-11 + 2**-11 in f16: two roundings would lose both halves of an ulp
    x = np.array([1.0, 2.0**-11, 2.0**-11], np.float16)
    out = run1(lambda g, t: g.cumsum(t["x"], 0), {"x": (x, "f16")})
    assert out.tolist() == [1.0, 1.0, 1.0 + 2.0**-10]


def test_cumsum_int32_wraps():
    x = np.array([2**31 - 1, 1, 5, -(2**31)], np.int32)
    out = run1(lambda g, t: g.cumsum(t["x"], 0), {"x": (x, "i32")})
    R.assert_exact(out, R.cumsum(x, 0), "i32")
    assert out.tolist() == [2**31 - 1, -(2**31), -(2**31) + 5, 5]


@pytest.mark.parametrize("idx_dtype", INTS)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL)
def test_gather_elements(dtype, axis, idx_dtype, rng):
    x = R.random_array(rng, (4, 5, 3), dtype, -9, 9)
    ax = axis % 3
    ishape = [3, 4, 2]  # no larger than x off the axis
    ishape[ax] = 7
    n = x.shape[ax]
    idx = rng.integers(-n, n, size=ishape).astype(R.CARRIER[idx_dtype])
    out = run1(lambda g, t: g.gather_elements(t["x"], t["i"], axis), {"x": (x, dtype), "i": (idx, idx_dtype)})
    R.assert_exact(out, R.gather_elements(x, idx, axis), dtype)


GATHER_ND_CASES = [
    # x shape, indices shape, batch_dims
    ((4, 5, 6), (3, 2), 0),
    ((4, 5, 6), (2, 3, 3), 0),
    ((4, 5, 6), (7, 1), 0),
    ((4, 5, 6), (4, 2, 1), 1),
    ((4, 5, 6), (4, 2), 1),
    ((4, 5, 6), (4, 5, 1), 2),
    ((2, 3, 4, 5), (2, 3, 6, 2), 2),
    ((5,), (3, 1), 0),
]


@pytest.mark.parametrize("idx_dtype", INTS)
@pytest.mark.parametrize("xs,ids,b", GATHER_ND_CASES)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "i64", "i1"])
def test_gather_nd(dtype, xs, ids, b, idx_dtype, rng):
    x = R.random_array(rng, xs, dtype, -9, 9)
    m = ids[-1]
    cols = [rng.integers(-xs[b + t], xs[b + t], size=ids[:-1]) for t in range(m)]
    idx = np.stack(cols, axis=-1).astype(R.CARRIER[idx_dtype])
    out = run1(lambda g, t: g.gather_nd(t["x"], t["i"], b), {"x": (x, dtype), "i": (idx, idx_dtype)})
    R.assert_exact(out, R.gather_nd(x, idx, b), dtype)


SCATTER_ND_CASES = [  # input shape, index tuples' shape (the last axis: the tuple length)
    ((6,), (4, 1)),
    ((4, 5, 3), (2, 6, 2)),  # slices of 3
    ((4, 5), (7, 1)),  # rows of 5
    ((3, 4, 2), (5, 3)),  # single elements
]


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("xs,ids", SCATTER_ND_CASES)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "i32", "i64"])
def test_scatter_nd(dtype, xs, ids, reduction, rng):
    """Against ONNX's definition applied tuple by tuple (reference.scatter_nd):
    negative indices, duplicate tuples where a reduction combines them
    (with "none", distinct tuples: ONNX leaves duplicates undefined)."""
    k = ids[-1]
    tuples = int(np.prod(ids[:-1]))
    if reduction == "none":  # distinct tuples
        flat = rng.choice(int(np.prod(xs[:k])), size=min(tuples, int(np.prod(xs[:k]))), replace=False)
        tuples = flat.size
        ids = (tuples, k)
        idx = np.stack(np.unravel_index(flat, xs[:k]), axis=-1)
    else:
        idx = np.stack([rng.integers(0, xs[t], size=ids[:-1]) for t in range(k)], axis=-1)
    idx = np.where(rng.random(idx.shape) < 0.5, idx - np.array(xs[:k]), idx).astype(np.int64)  # half counted from the end
    x = R.random_array(rng, xs, dtype, -4, 4)
    u = R.random_array(rng, (*ids[:-1], *xs[k:]), dtype, -4, 4)
    out = run1(lambda g, t: g.scatter_nd(t["x"], t["i"], t["u"], reduction),
               {"x": (x, dtype), "i": (idx, "i64"), "u": (u, dtype)})
    want = R.to_dtype(R.scatter_nd(x, idx, u, reduction), dtype)
    R.assert_close(out, want, dtype) if dtype in FLOATS else R.assert_exact(out, want, dtype)


def test_scatter_nd_out_of_range_raises():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    with pytest.raises(Exception, match=r"rlx.scatter_nd: index 4 is out of range for axis 0 of extent 4"):
        run1(lambda g, t: g.scatter_nd(t["x"], t["i"], t["u"]),
             {"x": (x, "f32"), "i": (np.array([[1], [4]], np.int64), "i64"), "u": (np.ones((2, 5), np.float32), "f32")})


@pytest.mark.parametrize("op,idx", [
    ("gather_elements", np.array([[0, 5]])),
    ("gather_elements", np.array([[-6, 0]])),
    ("gather_nd", np.array([[1, 5]])),
    ("gather_nd", np.array([[-5, 0]])),
])
def test_gathers_out_of_range_raise(op, idx):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    call = (lambda g, t: g.gather_elements(t["x"], t["i"], 1)) if op == "gather_elements" else (lambda g, t: g.gather_nd(t["x"], t["i"]))
    with pytest.raises(Exception, match=rf"rlx.{op}: index -?\d+ is out of range for axis \d of extent \d"):
        run1(call, {"x": (x, "f32"), "i": (idx.astype(np.int64), "i64")})


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis,k", [(-1, 3), (0, 2), (1, 5), (-1, 7), (1, 0)])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_topk(dtype, axis, k, largest, rng):
    x = R.random_array(rng, (3, 5, 7), dtype, -4, 4)
    if dtype in FLOATS:  # ties
        x = R.to_dtype(np.round(R.wide(x)), dtype)
    vals, ids = run(lambda g, t: g.topk(t["x"], k, axis, largest), {"x": (x, dtype)})
    want_vals, want_ids = R.topk(x, k, axis, largest)
    R.assert_exact(ids, want_ids, "i64", what="indices")
    R.assert_exact(vals, want_vals, dtype, what="values")


@pytest.mark.parametrize("largest", [True, False])
def test_topk_nan_is_largest_and_ties_go_by_index(largest):
    x = np.array([[1.0, np.nan, 3.0, 3.0, np.nan, -np.inf, 0.0, -0.0]], np.float32)
    vals, ids = run(lambda g, t: g.topk(t["x"], 8, -1, largest, sorted=False), {"x": (x, "f32")})
    want = [1, 4, 2, 3, 0, 6, 7, 5] if largest else [5, 6, 7, 0, 2, 3, 1, 4]
    assert ids.tolist() == [want]
    np.testing.assert_array_equal(vals, x[:, want])
    R.assert_exact(ids, R.topk(x, 8, -1, largest)[1], "i64")


def test_topk_folds_to_two_constants():
    g = rlxc.GraphBuilder()
    v, i = g.topk(g.constant(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)), 2)
    module = g.build([v, i])
    folded = rlxc.run_pipeline(module, "canonicalize")
    assert [op.name for op in folded.walk()].count("rlx.topk") == 0
    got = rlxc.interpret(folded, {})
    assert got[0].tolist() == [[3.0, 2.0], [5.0, 4.0]] and got[1].tolist() == [[0, 2], [1, 2]]


# =========================================================================== conv / pool

CONV_CASES = [
    # (C, O, kh, kw), kwargs
    pytest.param((3, 4, 3, 3), {}, id="basic"),
    pytest.param((3, 4, 3, 3), {"stride": 2, "padding": 1}, id="stride2-pad1"),
    pytest.param((3, 2, 3, 3), {"padding": (1, 2)}, id="pad-pair"),
    pytest.param((3, 2, 3, 2), {"padding": (1, 0, 2, 1)}, id="pad-asym"),
    pytest.param((2, 3, 3, 3), {"dilation": 2, "padding": 2}, id="dilation2"),
    pytest.param((3, 2, 2, 3), {"stride": (2, 1), "dilation": (1, 2)}, id="rect"),
    pytest.param((4, 6, 3, 3), {"groups": 2, "padding": 1}, id="groups2"),
    pytest.param((4, 4, 3, 3), {"groups": 4, "padding": 1}, id="depthwise"),
    pytest.param((4, 8, 3, 3), {"groups": 4, "stride": 2}, id="depthwise-x2"),
]


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("spec,kw", CONV_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d(dtype, spec, kw, bias, rng):
    c, o, kh, kwd = spec
    groups = kw.get("groups", 1)
    x = R.random_array(rng, (2, c, 6, 7), dtype)
    w = R.random_array(rng, (o, c // groups, kh, kwd), dtype, -1, 1)
    b = R.random_array(rng, (o,), dtype, -1, 1)
    inputs = {"x": (x, dtype), "w": (w, dtype)}
    if bias:
        inputs["b"] = (b, dtype)
    out = run1(lambda g, t: g.conv2d(t["x"], t["w"], t.get("b"), **kw), inputs)

    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)

    pad = kw.get("padding", 0)
    pad = (pad,) * 4 if isinstance(pad, int) else (pad * 2 if len(pad) == 2 else pad)
    ref = R.conv2d(
        R.wide(x), R.wide(w), R.wide(b) if bias else None,
        stride=pair(kw.get("stride", 1)), padding=pad,
        dilation=pair(kw.get("dilation", 1)), groups=groups,
    )  # fmt: skip
    R.assert_close(out, ref, dtype, what="conv2d")


POOL_CASES = [
    pytest.param(2, None, 0, id="k2"),
    pytest.param(3, 1, 1, id="k3-s1-p1"),
    pytest.param(3, 2, 1, id="k3-s2-p1"),
    pytest.param((2, 3), (1, 2), (1, 0, 0, 2), id="rect-asym"),
    pytest.param(3, 2, (0, 1), id="pad-pair"),
]


def _pool_args(kernel, stride, padding):
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    s = k if stride is None else ((stride, stride) if isinstance(stride, int) else stride)
    p = (padding,) * 4 if isinstance(padding, int) else (padding * 2 if len(padding) == 2 else padding)
    return k, s, p


@pytest.mark.parametrize("negative", [False, True], ids=["mixed", "allneg"])
@pytest.mark.parametrize("kernel,stride,padding", POOL_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d(dtype, kernel, stride, padding, negative, rng):
    lo, hi = (-5, -1) if negative else (-3, 3)  # all negative: padding must never win
    x = R.random_array(rng, (2, 3, 6, 7), dtype, lo, hi)
    out = run1(lambda g, t: g.max_pool2d(t["x"], kernel, stride, padding), {"x": (x, dtype)})
    R.assert_exact(out, R.max_pool2d(R.wide(x), *_pool_args(kernel, stride, padding)), dtype)


@pytest.mark.parametrize("count_include_pad", [False, True], ids=["excl", "incl"])
@pytest.mark.parametrize("kernel,stride,padding", POOL_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_avg_pool2d(dtype, kernel, stride, padding, count_include_pad, rng):
    x = R.random_array(rng, (2, 3, 6, 7), dtype, 0.5, 3)
    out = run1(
        lambda g, t: g.avg_pool2d(t["x"], kernel, stride, padding, count_include_pad=count_include_pad),
        {"x": (x, dtype)},
    )
    ref = R.avg_pool2d(R.wide(x), *_pool_args(kernel, stride, padding), count_include_pad)
    R.assert_close(out, ref, dtype, what="avg_pool2d")


def test_avg_pool2d_count_include_pad_differs_at_border():
    x = np.ones((1, 1, 2, 2), np.float32)
    a, b = run(
        lambda g, t: [g.avg_pool2d(t["x"], 2, 1, 1), g.avg_pool2d(t["x"], 2, 1, 1, count_include_pad=True)],
        {"x": (x, "f32")},
    )
    R.assert_exact(a, np.ones((1, 1, 3, 3)), "f32")
    R.assert_exact(b, np.array([[[[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]]]]), "f32")


CONV_T_CASES = [
    # (C, O/groups, kh, kw), kwargs
    pytest.param((3, 4, 3, 3), {}, id="basic"),
    pytest.param((3, 2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, id="s2-p1-op1"),
    pytest.param((2, 3, 2, 3), {"stride": (3, 2), "padding": (1, 2, 0, 1)}, id="rect-asym"),
    pytest.param((2, 2, 3, 3), {"dilation": 2, "padding": (2, 1, 1, 2)}, id="dilation2"),
    pytest.param((2, 2, 3, 2), {"stride": 2, "dilation": (1, 2), "output_padding": (1, 0)}, id="s2-d12-op"),
    pytest.param((4, 3, 3, 3), {"groups": 2, "stride": 2, "padding": 1}, id="groups2"),
    pytest.param((4, 1, 4, 4), {"groups": 4, "stride": 2, "padding": 1}, id="depthwise-x2"),
    pytest.param((3, 2, 1, 1), {"stride": 3, "output_padding": 2}, id="k1-s3-op2"),
]


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("spec,kw", CONV_T_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_transpose2d(dtype, spec, kw, bias, rng):
    c, og, kh, kwd = spec
    groups = kw.get("groups", 1)
    x = R.random_array(rng, (2, c, 4, 5), dtype)
    w = R.random_array(rng, (c, og, kh, kwd), dtype, -1, 1)
    b = R.random_array(rng, (og * groups,), dtype, -1, 1)
    inputs = {"x": (x, dtype), "w": (w, dtype)}
    if bias:
        inputs["b"] = (b, dtype)
    out = run1(lambda g, t: g.conv_transpose2d(t["x"], t["w"], t.get("b"), **kw), inputs)

    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)

    pad = kw.get("padding", 0)
    pad = (pad,) * 4 if isinstance(pad, int) else (pad * 2 if len(pad) == 2 else pad)
    ref = R.conv_transpose2d(
        R.wide(x), R.wide(w), R.wide(b) if bias else None, stride=pair(kw.get("stride", 1)),
        padding=pad, output_padding=pair(kw.get("output_padding", 0)),
        dilation=pair(kw.get("dilation", 1)), groups=groups,
    )  # fmt: skip
    R.assert_close(out, ref, dtype, what="conv_transpose2d")


def test_conv_transpose2d_is_the_adjoint_of_conv2d(rng):
    """<conv2d(x, w), y> == <x, conv_transpose2d(y, w)> for the same stride,
    padding, dilation and groups (conv2d's OIHW weight is conv_transpose2d's
    IOHW one), with output_padding making the shapes meet."""
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    kw = {"stride": (2, 2), "padding": (1, 0, 1, 1), "dilation": (1, 2), "groups": 2}
    cx = R.conv2d(x, w, **kw)
    y = rng.standard_normal(cx.shape).astype(np.float32)
    ty = run1(lambda g, t: g.conv_transpose2d(t["y"], t["w"], output_padding=(1, 0), **kw),
              {"y": (y, "f32"), "w": (w, "f32")})  # fmt: skip
    assert ty.shape == x.shape
    lhs = float(np.sum(R.conv2d(R.wide(x), R.wide(w), **kw) * R.wide(y)))
    terms = R.wide(x) * R.wide(ty)
    rhs = float(np.sum(terms))
    # ty is f32: its rounding is relative to the terms' size, not to the sum, which can cancel
    # to far less (a relative bound on the sum failed now and then: 1.3030e-3 against 1.3013e-3)
    assert abs(lhs - rhs) <= 1e-5 * float(np.sum(np.abs(terms))), (lhs, rhs)


POOL_DC_CASES = [
    # kernel, stride, padding, dilation, ceil_mode
    pytest.param(3, 2, 0, 1, True, id="ceil-extra-window"),
    pytest.param(2, 2, 1, 1, True, id="ceil-pad"),
    pytest.param(3, 3, 1, 1, True, id="ceil-last-starts-on-pad"),
    pytest.param(2, 1, 0, 2, False, id="dilation2"),
    pytest.param((2, 3), (2, 1), (1, 0, 0, 2), (2, 1), True, id="rect-dil-ceil"),
    pytest.param(3, 2, 1, 2, True, id="dil2-ceil-pad"),
    pytest.param(1, 2, 0, 1, True, id="k1-ceil-reduced"),
    pytest.param(3, 4, (2, 1), 1, True, id="ceil-past-end-pad"),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", POOL_DC_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_pools_with_dilation_and_ceil_mode(dtype, kernel, stride, padding, dilation, ceil_mode, rng):
    x = R.random_array(rng, (2, 3, 6, 7), dtype, 0.5, 3)
    kw = {"dilation": dilation, "ceil_mode": ceil_mode}
    mx, ex, inc = run(
        lambda g, t: [g.max_pool2d(t["x"], kernel, stride, padding, **kw),
                      g.avg_pool2d(t["x"], kernel, stride, padding, **kw),
                      g.avg_pool2d(t["x"], kernel, stride, padding, count_include_pad=True, **kw)],
        {"x": (x, dtype)},
    )  # fmt: skip
    k, s, p = _pool_args(kernel, stride, padding)
    d = (dilation, dilation) if isinstance(dilation, int) else dilation
    R.assert_exact(mx, R.max_pool2d(R.wide(x), k, s, p, d, ceil_mode), dtype, what="max_pool2d")
    R.assert_close(ex, R.avg_pool2d(R.wide(x), k, s, p, False, d, ceil_mode), dtype, what="avg_pool2d")
    R.assert_close(inc, R.avg_pool2d(R.wide(x), k, s, p, True, d, ceil_mode), dtype, what="avg_pool2d incl")


def test_avg_pool2d_ceil_mode_divisor_stops_at_the_padded_end():
    """A 4-wide row, kernel 3, stride 2, padding 1 and ceil mode: the last
    window starts at 3 and hangs one past the padded end (5), so with
    count_include_pad it divides by 2 (one real tap, one padding tap), and
    without it by 1 (ONNX's reference and PyTorch agree)."""
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 1, 4)
    kw = {"kernel": (1, 3), "stride": (1, 2), "padding": (0, 1, 0, 1), "ceil_mode": True}
    a, b = run(lambda g, t: [g.avg_pool2d(t["x"], **kw), g.avg_pool2d(t["x"], **kw, count_include_pad=True)],
               {"x": (x, "f32")})  # fmt: skip
    R.assert_exact(a, np.array([[[[1.5, 3.0, 4.0]]]]), "f32")
    R.assert_exact(b, np.array([[[[1.0, 3.0, 2.0]]]]), "f32")


RESIZE_COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]
RESIZE_SHAPES = [
    # input shape, output shape, scales (None: out/in)
    pytest.param(((2, 3, 4, 5), (2, 3, 8, 10), None), id="up2"),
    pytest.param(((1, 2, 5, 7), (1, 2, 3, 4), None), id="down-sizes"),
    pytest.param(((1, 2, 4, 4), (1, 2, 9, 2), (1.0, 1.0, 2.3, 0.6)), id="scales-fractional"),
    pytest.param(((1, 1, 3, 6), (1, 1, 1, 6), None), id="to-one-row"),
    pytest.param(((3, 4, 5), (3, 7, 5), None), id="rank3-middle"),
    pytest.param(((2, 3, 2, 3, 4), (2, 3, 3, 5, 2), None), id="rank5"),
    pytest.param(((2, 6), (2, 6), (1.0, 1.2)), id="same-extent-scaled"),
]


def _scales(xs, ys, scales):
    return [o / i for o, i in zip(ys, xs)] if scales is None else list(scales)


@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
@pytest.mark.parametrize("ctm", RESIZE_COORDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_resize_linear(dtype, ctm, shapes, rng):
    xs, ys, scales = shapes
    sc = _scales(xs, ys, scales)
    x = R.random_array(rng, xs, dtype)
    out = run1(lambda g, t: g.resize(t["x"], ys, sc, "linear", ctm), {"x": (x, dtype)})
    R.assert_close(out, R.resize(R.wide(x), ys, sc, "linear", ctm), dtype, what=f"resize linear {ctm}")


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("shapes", RESIZE_SHAPES)
@pytest.mark.parametrize("ctm", RESIZE_COORDS + ["tf_half_pixel_for_nn"])
def test_resize_nearest(ctm, shapes, nearest_mode, rng):
    xs, ys, scales = shapes
    sc = _scales(xs, ys, scales)
    for dtype in ("f32", "bf16", "i64"):
        x = R.random_array(rng, xs, dtype, -50, 50)
        out = run1(lambda g, t: g.resize(t["x"], ys, sc, "nearest", ctm, nearest_mode), {"x": (x, dtype)})
        R.assert_exact(out, R.resize(x, ys, sc, "nearest", ctm, nearest_mode), dtype, what=f"resize {ctm} {nearest_mode}")


def test_resize_nearest_rounding_ties():
    """Downsampling 4 -> 2 with asymmetric coordinates lands on x.0 (no
    tie), half_pixel by 2 on 0.5 and 2.5: the four nearest modes split
    there."""
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    got = {m: run1(lambda g, t, m=m: g.resize(t["x"], [1, 2], [1.0, 0.5], "nearest", "half_pixel", m), {"x": (x, "f32")})
           for m in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")}  # fmt: skip
    assert got["round_prefer_floor"].tolist() == [[0.0, 2.0]]
    assert got["round_prefer_ceil"].tolist() == [[1.0, 3.0]]
    assert got["floor"].tolist() == [[0.0, 2.0]]
    assert got["ceil"].tolist() == [[1.0, 3.0]]


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("ctm", RESIZE_COORDS)
def test_resize_matches_onnx_reference(mode, ctm, rng):
    """Against ONNX's own reference implementation (onnx.reference), in
    float64, with ONNX's scales input (the output extent floor(in * scale))."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    x = R.random_array(rng, (1, 2, 5, 6), "f32")
    scales = np.array([1.0, 1.0, 1.7, 0.55], np.float32)
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode=mode,
                            coordinate_transformation_mode=ctm)  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
                      helper.make_tensor_value_info("scales", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (want,) = ReferenceEvaluator(model).run(None, {"X": x.astype(np.float64), "scales": scales})
    ys = [math.floor(i * float(s)) for i, s in zip(x.shape, scales)]
    out = run1(lambda g, t: g.resize(t["x"], ys, [float(s) for s in scales], mode, ctm), {"x": (x, "f32")})
    assert out.shape == want.shape
    R.assert_close(out, want, "f32", what=f"resize {mode} {ctm} vs onnx.reference")
    del onnx


def _onnx_case_graph(case):
    """A 2-D ONNX node case of ConvTranspose/MaxPool/AveragePool/Resize built
    with the GraphBuilder from the node's attributes (None where the case
    needs something the builder method does not take: auto_pad, output_shape,
    3-D, cubic, ...)."""
    from onnx import helper

    node = case.model.graph.node[0]
    a = {p.name: helper.get_attribute_value(p) for p in node.attribute}
    a = {k: v.decode() if isinstance(v, bytes) else v for k, v in a.items()}
    ins = [np.asarray(v) for v in case.data_sets[0][0]]
    names = [i.name for i in case.model.graph.input]
    if ins[0].ndim != 4 or ins[0].dtype != np.float32 or len(node.output) > 1:
        return None
    if a.get("auto_pad", "NOTSET") != "NOTSET" or "output_shape" in a or "axes" in a or a.get("antialias"):
        return None
    g = rlxc.GraphBuilder()
    x = g.input("x", ins[0].shape)
    feeds = {"x": ins[0]}
    op = node.op_type
    if op in ("MaxPool", "AveragePool"):
        kw = {"stride": a.get("strides", [1, 1]), "padding": a.get("pads", [0] * 4),
              "dilation": a.get("dilations", [1, 1]), "ceil_mode": bool(a.get("ceil_mode", 0))}  # fmt: skip
        if op == "MaxPool":
            y = g.max_pool2d(x, a["kernel_shape"], **kw)
        else:
            y = g.avg_pool2d(x, a["kernel_shape"], count_include_pad=bool(a.get("count_include_pad", 0)), **kw)
    elif op == "ConvTranspose":
        w = g.input("w", ins[1].shape)
        feeds["w"] = ins[1]
        y = g.conv_transpose2d(x, w, None, stride=a.get("strides", [1, 1]), padding=a.get("pads", [0] * 4),
                               dilation=a.get("dilations", [1, 1]), output_padding=a.get("output_padding", [0, 0]),
                               groups=a.get("group", 1))  # fmt: skip
    else:
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        if a.get("mode", "nearest") not in ("nearest", "linear") or ctm == "tf_crop_and_resize":
            return None
        if "sizes" in names:
            ys = [int(v) for v in ins[names.index("sizes")]]
            sc = [o / i for o, i in zip(ys, ins[0].shape)]
        else:
            s32 = ins[names.index("scales")].astype(np.float32)
            sc = [float(v) for v in s32]
            ys = [math.floor(i * v) for i, v in zip(ins[0].shape, sc)]
        y = g.resize(x, ys, sc, a.get("mode", "nearest"), ctm, a.get("nearest_mode", "round_prefer_floor"))
    return g.build([y]), feeds


#: The ONNX node cases of the ops above that the builder methods express.
ONNX_CASES = """
averagepool_2d_ceil averagepool_2d_ceil_last_window_starts_on_pad averagepool_2d_default
averagepool_2d_dilations averagepool_2d_pads averagepool_2d_pads_count_include_pad
averagepool_2d_precomputed_pads averagepool_2d_precomputed_pads_count_include_pad
averagepool_2d_precomputed_strides averagepool_2d_strides
convtranspose convtranspose_dilations convtranspose_group_2 convtranspose_group_2_image_3
convtranspose_pad convtranspose_pads
maxpool_2d_ceil maxpool_2d_ceil_output_size_reduce_by_one maxpool_2d_default maxpool_2d_dilations
maxpool_2d_pads maxpool_2d_precomputed_pads maxpool_2d_precomputed_strides maxpool_2d_strides
resize_downsample_scales_linear resize_downsample_scales_linear_align_corners
resize_downsample_scales_linear_half_pixel_symmetric resize_downsample_scales_nearest
resize_downsample_sizes_linear_pytorch_half_pixel resize_downsample_sizes_nearest
resize_upsample_scales_linear resize_upsample_scales_linear_align_corners
resize_upsample_scales_linear_half_pixel_symmetric resize_upsample_scales_nearest
resize_upsample_sizes_nearest resize_upsample_sizes_nearest_ceil_half_pixel
resize_upsample_sizes_nearest_floor_align_corners resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric
""".split()


@pytest.fixture(scope="module")
def onnx_node_cases():
    pytest.importorskip("onnx")
    import warnings

    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name.removeprefix("test_"): c for c in load_model_tests(kind="node")}


@pytest.mark.parametrize("name", ONNX_CASES)
def test_spatial_ops_match_onnx_node_cases(name, onnx_node_cases):
    """ONNX's own test cases (inputs and expected outputs) for these ops."""
    built = _onnx_case_graph(onnx_node_cases[name])
    assert built is not None, name
    module, feeds = built
    (got,) = rlxc.interpret(module, feeds, {})
    want = np.asarray(onnx_node_cases[name].data_sets[0][1][0])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)


# =========================================================================== composites


@pytest.mark.parametrize("shape", [(3, 8), (2, 3, 6)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_swiglu(dtype, shape, rng):
    x = R.random_array(rng, shape, dtype)
    out = run1(lambda g, t: g.swiglu(t["x"]), {"x": (x, dtype)})
    R.assert_close(out, R.swiglu(R.wide(x)), dtype, what="swiglu")


ATTN_CASES = [
    # q_seq, k_seq, mask shape or None, causal, scale
    pytest.param(5, 5, None, False, None, id="plain"),
    pytest.param(4, 6, None, False, None, id="plain-rect"),
    pytest.param(5, 5, "k", False, None, id="mask-k"),  # mask of shape [k_seq]
    pytest.param(5, 6, (1, 1, 5, 6), False, None, id="mask-11qk"),
    pytest.param(5, 6, (2, 1, 1, 6), False, None, id="mask-b11k"),
    pytest.param(5, 6, (5, 6), False, None, id="mask-qk"),
    pytest.param(5, 5, None, True, None, id="causal"),
    pytest.param(3, 6, None, True, None, id="causal-q<k"),
    pytest.param(6, 3, None, True, None, id="causal-q>k"),
    pytest.param(4, 6, None, False, 0.3, id="scale"),
    pytest.param(4, 6, (1, 2, 4, 6), True, 0.7, id="mask-causal-scale"),
]


@pytest.mark.parametrize("sq,sk,mask_shape,causal,scale", ATTN_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_attention(dtype, sq, sk, mask_shape, causal, scale, rng):
    if mask_shape == "k":
        mask_shape = (sk,)
    q = R.random_array(rng, (2, 2, sq, 4), dtype, -2, 2)
    k = R.random_array(rng, (2, 2, sk, 4), dtype, -2, 2)
    v = R.random_array(rng, (2, 2, sk, 3), dtype, -2, 2)
    inputs = {"q": (q, dtype), "k": (k, dtype), "v": (v, dtype)}
    m = None
    if mask_shape is not None:
        m = R.random_array(rng, mask_shape, dtype, -2, 0)
        m[..., -1] = -30.0  # a strongly masked key (never a whole row)
        inputs["m"] = (m, dtype)
    out = run1(
        lambda g, t: g.attention(t["q"], t["k"], t["v"], t.get("m"), causal=causal, scale=scale),
        inputs,
    )
    ref = R.attention(R.wide(q), R.wide(k), R.wide(v), None if m is None else R.wide(m), causal, scale)
    R.assert_close(out, ref, dtype, what="attention")


@pytest.mark.parametrize("kh,vh", [(2, 2), (1, 1), (3, 6), (6, 1)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_grouped_query_attention(dtype, kh, vh, rng):
    """Key and value with fewer heads than query (each dividing its 6): query
    head h reads key head h // (6 / kh), as if repeated in place; the same
    through the op's decomposition (rlx-unfuse, the numpy target)."""
    b, hq, sq, sk = 2, 6, 5, 7
    q = R.random_array(rng, (b, hq, sq, 8), dtype, -2, 2)
    k = R.random_array(rng, (b, kh, sk, 8), dtype, -2, 2)
    v = R.random_array(rng, (b, vh, sk, 3), dtype, -2, 2)
    m = R.random_array(rng, (b, 1, 1, sk), dtype, -2, 0)
    inputs = {"q": (q, dtype), "k": (k, dtype), "v": (v, dtype), "m": (m, dtype)}
    outs = run(lambda g, t: [g.attention(t["q"], t["k"], t["v"], t["m"]), g.attention(t["q"], t["k"], t["v"], causal=True)],
               inputs)
    kr, vr = np.repeat(R.wide(k), hq // kh, axis=1), np.repeat(R.wide(v), hq // vh, axis=1)
    R.assert_close(outs[0], R.attention(R.wide(q), kr, vr, R.wide(m), False, None), dtype, what="gqa, mask")
    R.assert_close(outs[1], R.attention(R.wide(q), kr, vr, None, True, None), dtype, what="gqa, causal")
    g = rlxc.GraphBuilder()
    t = {n: g.input(n, a.shape, dt) for n, (a, dt) in inputs.items()}
    module = g.build([g.attention(t["q"], t["k"], t["v"], t["m"])])
    split = rlxc.run_pipeline(module, "rlx-unfuse{target=none}")
    assert "rlx.attention" not in str(split) and ("rlx.expand" in str(split)) == (kh < hq or vh < hq)
    (got,) = rlxc.interpret(split, {n: a for n, (a, _) in inputs.items()})
    R.assert_close(got, R.attention(R.wide(q), kr, vr, R.wide(m), False, None), dtype, what="gqa decomposed")


def test_grouped_query_attention_heads_must_divide():
    g = rlxc.GraphBuilder()
    q, k, v = g.input("q", [1, 6, 4, 8]), g.input("k", [1, 4, 4, 8]), g.input("v", [1, 4, 4, 8])
    with pytest.raises(Exception, match="key's and value's heads must divide the query's"):
        g.attention(q, k, v)


def test_attention_causal_first_row_sees_only_first_key():
    q = np.ones((1, 1, 3, 2), np.float32)
    k = np.ones((1, 1, 3, 2), np.float32)
    v = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2)
    out = run1(lambda g, t: g.attention(t["q"], t["k"], t["v"], causal=True),
               {"q": (q, "f32"), "k": (k, "f32"), "v": (v, "f32")})  # fmt: skip
    R.assert_close(out[0, 0], np.array([[0, 1], [1, 2], [2, 3]]), "f32")


@pytest.mark.parametrize("cs_shape", [(5, 8), (8,), (1, 1, 5, 8)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_rope(dtype, cs_shape, rng):
    x = R.random_array(rng, (1, 2, 5, 8), dtype)
    ang = rng.uniform(-3, 3, size=cs_shape)
    # cos and sin are used as given (not recomputed from each other), so sin is scaled.
    c = R.to_dtype(R.cos(ang), dtype)
    s = R.to_dtype(0.9 * R.sin(ang), dtype)
    out = run1(lambda g, t: g.rope(t["x"], t["c"], t["s"]), {"x": (x, dtype), "c": (c, dtype), "s": (s, dtype)})
    R.assert_close(out, R.rope(R.wide(x), R.wide(c), R.wide(s)), dtype, what="rope")


# =========================================================================== leaves


@pytest.mark.parametrize("dtype", ALL)
def test_constant_and_param(dtype, rng):
    c = R.random_array(rng, (2, 3), dtype, -9, 9)
    p = R.random_array(rng, (2, 3), dtype, -9, 9)
    oc, op_ = run(lambda g, t: [g.constant(c, dtype), t["p"]], params={"p": (p, dtype)})
    R.assert_exact(oc, c, dtype)
    R.assert_exact(op_, p, dtype)


def test_constant_infers_dtype_from_numpy():
    vals = {
        "f": np.array([1.5, -2.25]),  # float64 -> f32
        "h": np.array([1.5], np.float16),
        "i": np.array([3, -4], np.int32),
        "l": np.array([2**40], np.int64),
        "b": np.array([True, False]),
    }
    outs = run(lambda g, t: [g.constant(v) for v in vals.values()])
    for (k, v), out, dt in zip(vals.items(), outs, ["f32", "f16", "i32", "i64", "i1"]):
        R.assert_exact(out, v, dt, what=k)


def test_same_param_used_twice(rng):
    w = R.random_array(rng, (3,), "f32")
    x = R.random_array(rng, (3,), "f32")
    g = rlxc.GraphBuilder()
    xt = g.input("x", [3])
    y = g.add(g.mul(xt, g.param("w", [3])), g.param("w", [3]))
    (out,) = rlxc.interpret(g.build([y]), {"x": x}, {"w": w})
    R.assert_close(out, R.wide(x) * R.wide(w) + R.wide(w), "f32")


# =========================================================================== elementwise_region


def test_region_single_result_broadcast(rng):
    text = """
builtin.module {
  func.func @main(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
    %r = rlx.elementwise_region ins(%a, %b : tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      %c = arith.constant 0.5 : f32
      %m = arith.mulf %s, %c : f32
      %e = math.exp %m : f32
      rlx.yield %e : f32
    }
    func.return %r : tensor<3x4xf32>
  }
}
"""
    module = rlxc.parse_module(text)
    a = R.random_array(rng, (3, 4), "f32")
    b = R.random_array(rng, (4,), "f32")
    (out,) = rlxc.interpret(module, {"a": a, "b": b})
    R.assert_close(out, R.exp((R.wide(a) + R.wide(b)) * 0.5), "f32")


def test_region_multi_result_mixed_types(rng):
    text = """
builtin.module {
  func.func @main(%a: tensor<3x1x4xf32>, %b: tensor<5x4xf32>, %c: tensor<f32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xi1>) {
    %r:3 = rlx.elementwise_region ins(%a, %b, %c : tensor<3x1x4xf32>, tensor<5x4xf32>, tensor<f32>) -> tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xi1> {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %gt = arith.cmpf ogt, %x, %y : f32
      %sel = arith.select %gt, %x, %y : f32
      %ex = math.erf %x : f32
      %ty = math.tanh %y : f32
      %p = arith.mulf %ex, %ty : f32
      %q = arith.addf %p, %z : f32
      rlx.yield %sel, %q, %gt : f32, f32, i1
    }
    func.return %r#0, %r#1, %r#2 : tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xi1>
  }
}
"""
    module = rlxc.parse_module(text)
    a = R.random_array(rng, (3, 1, 4), "f32")
    b = R.random_array(rng, (5, 4), "f32")
    b[0, 0] = a[0, 0, 0]  # a tie for ogt
    c = R.random_array(rng, (), "f32")
    sel, q, gt = rlxc.interpret(module, {"a": a, "b": b, "c": c})
    A, B, C = np.broadcast_arrays(R.wide(a), R.wide(b), R.wide(c))
    R.assert_exact(gt, A > B, "i1")
    R.assert_exact(sel, np.where(A > B, A, B), "f32")
    R.assert_close(q, R.erf(A) * R.tanh(B) + C, "f32")


def test_region_f16_body(rng):
    text = """
builtin.module {
  func.func @main(%a: tensor<4x6xf16>, %b: tensor<6xf16>) -> tensor<4x6xf16> {
    %r = rlx.elementwise_region ins(%a, %b : tensor<4x6xf16>, tensor<6xf16>) -> tensor<4x6xf16> {
    ^bb0(%x: f16, %y: f16):
      %m = arith.mulf %x, %y : f16
      %t = math.tanh %m : f16
      %c = arith.constant 1.0 : f16
      %s = arith.addf %t, %c : f16
      rlx.yield %s : f16
    }
    func.return %r : tensor<4x6xf16>
  }
}
"""
    module = rlxc.parse_module(text)
    a = R.random_array(rng, (4, 6), "f16")
    b = R.random_array(rng, (6,), "f16")
    (out,) = rlxc.interpret(module, {"a": a, "b": b})
    # Each scalar f16 op rounds to f16: model that in the reference.
    h = lambda v: R.wide(R.to_dtype(v, "f16"))  # noqa: E731
    ref = h(h(R.tanh(h(R.wide(a) * R.wide(b)))) + 1.0)
    R.assert_close(out, ref, "f16")


def test_region_i32_body(rng):
    text = """
builtin.module {
  func.func @main(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
    %r:2 = rlx.elementwise_region ins(%a, %b : tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>, tensor<2x3xi32> {
    ^bb0(%x: i32, %y: i32):
      %k = arith.constant 3 : i32
      %m = arith.muli %x, %y : i32
      %s = arith.addi %m, %k : i32
      %t = arith.addi %x, %y : i32
      rlx.yield %s, %t : i32, i32
    }
    func.return %r#0, %r#1 : tensor<2x3xi32>, tensor<2x3xi32>
  }
}
"""
    module = rlxc.parse_module(text)
    a = R.random_array(rng, (2, 3), "i32", -1000, 1000)
    b = R.random_array(rng, (3,), "i32", -1000, 1000)
    s, t = rlxc.interpret(module, {"a": a, "b": b})
    A, B = np.broadcast_arrays(R.wide(a), R.wide(b))
    R.assert_exact(s, A * B + 3, "i32")
    R.assert_exact(t, A + B, "i32")


@pytest.mark.parametrize("dt", ["f32", "bf16", "i32", "i64"])
def test_reductions_of_no_elements(dt):
    """Over an empty axis: sum 0, prod 1, max / min -inf / +inf (integers:
    the type's least / greatest, as ONNX defines them; numpy refuses max and
    min of nothing), mean NaN."""
    carrier = {"f32": np.float32, "bf16": np.float32, "i32": np.int32, "i64": np.int64}[dt]
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 0], dt)
    names = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"] + (["reduce_mean"] if dt[0] != "i" else [])
    module = g.build([getattr(g, n)(x, axes=[1]) for n in names])
    got = dict(zip(names, rlxc.interpret(module, {"x": np.zeros((3, 0), carrier)})))
    if dt[0] == "i":
        lo, hi = np.iinfo(carrier).min, np.iinfo(carrier).max
    else:
        lo, hi = -np.inf, np.inf
    want = {"reduce_sum": 0, "reduce_prod": 1, "reduce_max": lo, "reduce_min": hi, "reduce_mean": np.nan}
    for n in names:
        np.testing.assert_array_equal(got[n], np.full(3, want[n]), err_msg=n)

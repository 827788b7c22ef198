"""Emitters of elementwise ONNX ops: arithmetic, activations, compares and
logic, casts, Identity and Dropout."""

from __future__ import annotations

import numpy as np

from rlxc.dialects.types import dtype
from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    LARGEST_FINITE,
    Const,
    Node,
    Value,
    _dtype_of,
    as_type,
    cast_const,
    emitter,
    in_f32,
)

_UNARY = {
    "Sqrt": "sqrt", "Reciprocal": "reciprocal", "Neg": "neg", "Abs": "abs", "Exp": "exp",
    "Log": "log", "Erf": "erf", "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "relu",
    "Floor": "floor", "Ceil": "ceil", "Round": "round", "Sign": "sign", "Sin": "sin",
    "Cos": "cos", "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan", "Sinh": "sinh",
    "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh",
}  # fmt: skip


@emitter(*_UNARY)
def _unary(n: Node) -> list[Value]:
    return [getattr(n.g, _UNARY[n.op_type])(n.tensor(0))]


_BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Equal": "eq", "Less": "lt",
    "LessOrEqual": "le", "Greater": "gt", "GreaterOrEqual": "ge",
}  # fmt: skip


@emitter(*_BINARY)
def _binary(n: Node) -> list[Value]:
    return [getattr(n.g, _BINARY[n.op_type])(n.tensor(0), n.tensor(1))]


@emitter("Pow")
def _pow(n: Node) -> list[Value]:
    x, y = n.tensor(0), n.tensor(1)
    if x.dtype in ("i32", "i64"):
        return [_int_pow(n, x, y)]
    if y.dtype != x.dtype:  # ONNX allows an exponent of another type
        y = n.g.cast(y, x.dtype)
    return [n.g.pow(x, y)]


def _int_pow(n: Node, x: Tensor, y: Tensor) -> Tensor:
    """Pow of an integer base (rlx.pow is defined on floats). A float
    exponent: the f32 power truncated to the base's type (as ONNX's
    reference casts numpy's float power; exact while the power fits f32's
    24 bits). An integer one: exponentiation by squaring, a step per bit of
    the exponent's type (or of the largest constant exponent), products
    wrapping as the type's; a negative exponent gives what the float power
    truncates to: 1 for a base of 1, ±1 for -1 (the exponent's parity), 0
    for any other base."""
    g = n.g
    if y.dtype not in ("i32", "i64"):
        return g.cast(g.pow(g.cast(x, "f32"), as_type(g, y, "f32")), x.dtype)
    e = as_type(g, y, x.dtype)
    given = n.input(1)
    known = given.array if isinstance(given, Const) else None
    bits = (max(1, int(np.max(np.abs(np.asarray(known, np.int64)))).bit_length()) if known is not None and np.size(known)
            else 63 if x.dtype == "i64" else 31)
    one, zero, two = (n.imp.scalar(v, x.dtype) for v in (1, 0, 2))
    k, b, result = g.maximum(e, zero), x, None
    for i in range(bits):
        odd = g.eq(g.rem(k, two), one)
        result = g.select(odd, b, one) if result is None else g.select(odd, g.mul(result, b), result)
        if i < bits - 1:
            k, b = g.div(k, two), g.mul(b, b)
    parity = g.select(g.ne(g.rem(e, two), zero), n.imp.scalar(-1, x.dtype), one)
    negative = g.select(g.eq(x, one), one, g.select(g.eq(x, n.imp.scalar(-1, x.dtype)), parity, zero))
    return g.select(g.lt(e, zero), negative, result)


@emitter("Max", "Min", "Sum", "Mean")
def _variadic(n: Node) -> list[Value]:
    xs = [n.tensor(i) for i in range(len(n.inputs))]
    fn = {"Max": n.g.maximum, "Min": n.g.minimum, "Sum": n.g.add, "Mean": n.g.add}[n.op_type]
    out = xs[0]
    for x in xs[1:]:
        out = fn(out, x)
    if n.op_type == "Mean" and len(xs) > 1:
        out = n.g.div(out, n.imp.scalar(len(xs), out.dtype))
    return [out]


@emitter("And", "Or", "Xor")
def _logical(n: Node) -> list[Value]:
    a, b = n.tensor(0), n.tensor(1)
    if n.op_type == "And":
        return [n.g.select(a, b, n.imp.scalar(False, "i1"))]
    if n.op_type == "Or":
        return [n.g.select(a, n.imp.scalar(True, "i1"), b)]
    return [n.g.ne(a, b)]


@emitter("Not")
def _not(n: Node) -> list[Value]:
    return [n.g.eq(n.tensor(0), n.imp.scalar(False, "i1"))]


@emitter("Where")
def _where(n: Node) -> list[Value]:
    return [n.g.select(n.tensor(0), n.tensor(1), n.tensor(2))]


@emitter("Gelu")
def _gelu(n: Node) -> list[Value]:
    approx = n.attr("approximate", "none")
    if approx not in ("none", "tanh"):
        raise n.unsupported(f"approximate='{approx}'", "none, tanh")
    x = n.tensor(0)
    return [n.g.gelu(x) if approx == "none" else n.g.gelu_tanh(x)]


@emitter("LeakyRelu")
def _leaky_relu(n: Node) -> list[Value]:
    x = n.tensor(0)
    s = n.imp.scalar(n.attr("alpha", 0.01), x.dtype)
    return [n.g.select(n.g.lt(x, n.imp.scalar(0, x.dtype)), n.g.mul(x, s), x)]


@emitter("Elu")
def _elu(n: Node) -> list[Value]:
    x = n.tensor(0)
    one, zero = n.imp.scalar(1, x.dtype), n.imp.scalar(0, x.dtype)
    neg = n.g.mul(n.imp.scalar(n.attr("alpha", 1.0), x.dtype), n.g.sub(n.g.exp(x), one))
    return [n.g.select(n.g.lt(x, zero), neg, x)]


def _hard_sigmoid(n: Node, x: Tensor, alpha: float, beta: float) -> Tensor:
    y = n.g.add(n.g.mul(x, n.imp.scalar(alpha, x.dtype)), n.imp.scalar(beta, x.dtype))
    return n.g.minimum(n.g.maximum(y, n.imp.scalar(0, x.dtype)), n.imp.scalar(1, x.dtype))


@emitter("HardSigmoid")
def _hardsigmoid(n: Node) -> list[Value]:
    return [_hard_sigmoid(n, n.tensor(0), n.attr("alpha", 0.2), n.attr("beta", 0.5))]


@emitter("HardSwish")
def _hardswish(n: Node) -> list[Value]:
    x = n.tensor(0)
    return [n.g.mul(x, _hard_sigmoid(n, x, 1.0 / 6.0, 0.5))]


@emitter("Softplus")
def _softplus(n: Node) -> list[Value]:
    return [n.g.softplus(n.tensor(0))]


@emitter("Clip")
def _clip_attrs(n: Node) -> list[Value]:
    """Clip-1/6: bounds as attributes."""
    x = n.tensor(0)
    lo, hi = n.attrs.get("min"), n.attrs.get("max")
    lo = None if lo is None else n.imp.scalar(lo, x.dtype)
    hi = None if hi is None else n.imp.scalar(hi, x.dtype)
    return [_clamp(n, x, lo, hi)]


@emitter("Clip", since=11)
def _clip(n: Node) -> list[Value]:
    """Clip-11: bounds as optional inputs. A bound known at import (an
    initializer too: exporters write ReLU6's 0 and 6 as such) is a
    constant, not a param, so passes see its value (rlx-conv-to-gemm folds
    ReLU6 into a convolution's clamps)."""
    x = n.tensor(0)

    def bound(i: int) -> Tensor | None:
        v = n.input(i)
        if v is None:
            return None
        return n.imp.constant(v.array, v.dtype) if isinstance(v, Const) else n.tensor(i)

    return [_clamp(n, x, bound(1), bound(2))]


def _clamp(n: Node, x: Tensor, lo: Tensor | None, hi: Tensor | None) -> Tensor:
    if lo is not None:
        x = n.g.maximum(x, lo)
    if hi is not None:
        x = n.g.minimum(x, hi)
    return x


@emitter("Cast")
def _cast(n: Node) -> list[Value]:
    to = _dtype_of(n.attr("to"), f"{n.where}: the target type")
    x = n.tensor(0)
    return [as_type(n.g, x, to)]


#: CastLike of an import-time value takes only its target's type from the
#: other input, so it stays an import-time value (a Pad's fill, say) up to
#: this many elements (larger ones, weights, stay params cast at run time).
CAST_LIKE_FOLD_MAX = 4096


@emitter("CastLike")
def _cast_like(n: Node) -> list[Value]:
    x0, like = n.input(0), n.input(1)
    to = like.dtype if like is not None else n.tensor(0).dtype
    if isinstance(x0, Const) and x0.array.size <= CAST_LIKE_FOLD_MAX:
        return [cast_const(n, x0, to)]
    x = n.tensor(0)
    return [as_type(n.g, x, to)]


@emitter("Identity", "Dropout")
def _identity(n: Node) -> list[Value]:
    """Dropout at inference: the input, and a mask of all true (before
    Dropout-10 the mask has the input's type: all ones)."""
    v = n.input(0)
    assert v is not None
    if n.op_type == "Dropout":
        training = n.const(2, "training_mode") if n.input(2) is not None else None
        if n.attrs.get("is_test", 1) == 0 or (training is not None and bool(np.ravel(training)[0])):
            raise n.unsupported("training mode", "inference (training_mode false)")
        if len(n.proto.output) > 1 and n.proto.output[1]:
            if n.opset < 10:
                return [v, Const(np.ones(v.shape, dtype=dtype(v.dtype).carrier), v.dtype)]
            return [v, Const(np.ones(v.shape, dtype=bool), "i1")]
    return [v]


@emitter("PRelu", since=7)
def _prelu(n: Node) -> list[Value]:
    """x where x >= 0, slope * x below (the slope broadcast to x, numpy-style:
    PRelu-7 on; earlier forms broadcast per channel and are not taken)."""
    x, slope = n.tensor(0), n.tensor(1)
    if slope.dtype != x.dtype:
        slope = n.g.cast(slope, x.dtype)
    return [n.g.select(n.g.lt(x, n.imp.scalar(0, x.dtype)), n.g.mul(x, slope), x)]


@emitter("Mish")
def _mish(n: Node) -> list[Value]:
    """x tanh(softplus(x))."""
    return [in_f32(n, n.tensor(0), lambda x: n.g.mul(x, n.g.tanh(n.g.softplus(x))))]


@emitter("Selu")
def _selu(n: Node) -> list[Value]:
    """gamma x above 0, gamma alpha (e^x - 1) at or below."""
    alpha, gamma = n.attr("alpha", 1.67326319217681884765625), n.attr("gamma", 1.05070102214813232421875)

    def selu(x: Tensor) -> Tensor:
        s = lambda v: n.imp.scalar(v, x.dtype)  # noqa: E731
        neg = n.g.mul(s(gamma * alpha), n.g.sub(n.g.exp(x), s(1)))
        return n.g.select(n.g.gt(x, s(0)), n.g.mul(x, s(gamma)), neg)
    return [in_f32(n, n.tensor(0), selu)]


@emitter("Celu")
def _celu(n: Node) -> list[Value]:
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""
    alpha = n.attr("alpha", 1.0)

    def celu(x: Tensor) -> Tensor:
        s = lambda v: n.imp.scalar(v, x.dtype)  # noqa: E731
        neg = n.g.mul(s(alpha), n.g.sub(n.g.exp(n.g.div(x, s(alpha))), s(1)))
        return n.g.add(n.g.maximum(x, s(0)), n.g.minimum(neg, s(0)))
    return [in_f32(n, n.tensor(0), celu)]


@emitter("ThresholdedRelu")
def _thresholded_relu(n: Node) -> list[Value]:
    """x above alpha, 0 elsewhere."""
    x = n.tensor(0)
    zero = n.imp.scalar(0, x.dtype)
    return [n.g.select(n.g.gt(x, n.imp.scalar(n.attr("alpha", 1.0), x.dtype)), x, zero)]


@emitter("Softsign")
def _softsign(n: Node) -> list[Value]:
    """x / (1 + |x|)."""
    return [in_f32(n, n.tensor(0), lambda x: n.g.div(x, n.g.add(n.g.abs(x), n.imp.scalar(1, x.dtype))))]


@emitter("Shrink")
def _shrink(n: Node) -> list[Value]:
    """x + bias below -lambd, x - bias above lambd, 0 between; integer
    inputs computed in f32 (lambd and bias are floats) and cast back,
    truncating, as ONNX's reference does."""
    x = n.tensor(0)
    lambd, bias = n.attr("lambd", 0.5), n.attr("bias", 0.0)

    def shrink(x: Tensor) -> Tensor:
        s = lambda v: n.imp.scalar(v, x.dtype)  # noqa: E731
        above = n.g.select(n.g.gt(x, s(lambd)), n.g.sub(x, s(bias)), s(0))
        return n.g.select(n.g.lt(x, s(-lambd)), n.g.add(x, s(bias)), above)
    if x.dtype in ("i32", "i64"):
        return [n.g.cast(shrink(n.g.cast(x, "f32")), x.dtype)]
    return [shrink(x)]


@emitter("IsNaN")
def _isnan(n: Node) -> list[Value]:
    """x != x: true for NaN alone."""
    x = n.tensor(0)
    return [n.g.ne(x, x)]


@emitter("IsInf")
def _isinf(n: Node) -> list[Value]:
    """Past the type's largest finite value (NaN compares false), on the sides
    detect_positive / detect_negative ask for."""
    x = n.tensor(0)
    if x.dtype not in ("f32", "f16", "bf16"):
        raise n.unsupported(f"an input of {x.dtype}", "f32, f16, bf16")
    big = LARGEST_FINITE[x.dtype]
    pos, neg = n.attr("detect_positive", 1), n.attr("detect_negative", 1)
    if pos and neg:
        return [n.g.gt(n.g.abs(x), n.imp.scalar(big, x.dtype))]
    if pos:
        return [n.g.gt(x, n.imp.scalar(big, x.dtype))]
    if neg:
        return [n.g.lt(x, n.imp.scalar(-big, x.dtype))]
    return [Const(np.zeros(x.shape, dtype=bool), "i1")]


@emitter("Mod")
def _mod(n: Node) -> list[Value]:
    """rlx.rem, the exact remainder with the dividend's sign (fmod=1: C's
    fmod and %), moved by b where it is not 0 and its sign differs from b's
    (fmod=0: the divisor's sign, Python's and numpy's mod; a finite a over
    an infinite b of the other sign gives that infinity, as numpy's does)."""
    a, b = n.tensor(0), n.tensor(1)
    if a.dtype == "i1":
        raise n.unsupported("bool inputs", "integers and floats")
    g, zero = n.g, n.imp.scalar(0, a.dtype)
    r = g.rem(a, b)
    if n.attr("fmod", 0):
        return [r]
    wrong_sign = g.select(g.ne(r, zero), g.ne(g.lt(r, zero), g.lt(b, zero)), n.imp.scalar(False, "i1"))
    return [g.select(wrong_sign, g.add(r, b), r)]


def _swish(n: Node, a: Tensor) -> Tensor:
    """a · sigmoid(alpha · a): silu(a) where alpha is 1."""
    alpha = float(n.attr("alpha", 1.0))
    return n.g.silu(a) if alpha == 1.0 else n.g.mul(a, n.g.sigmoid(n.g.mul(a, n.imp.scalar(alpha, a.dtype))))


@emitter("Swish")
def _swish_op(n: Node) -> list[Value]:
    return [_swish(n, n.tensor(0))]


@emitter("SwiGLU")
def _swiglu(n: Node) -> list[Value]:
    """Swish(A) · B, the gate A and value B of one shape."""
    a, b = n.tensor(0), n.tensor(1)
    if a.shape != b.shape:
        raise n.error(f"A {list(a.shape)} and B {list(b.shape)} must have one shape (SwiGLU does not broadcast)")
    return [n.g.mul(_swish(n, a), b)]

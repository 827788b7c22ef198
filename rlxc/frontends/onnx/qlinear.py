"""ONNX Runtime's quantized contrib ops (domain com.microsoft), as its
`quantize_static(..., quant_format=QuantFormat.QOperator)` writes them
beside QLinearConv and QLinearMatMul (quantize.py): QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearConcat, QLinearSoftmax and QGemm.

Each is what its definition says (ONNX Runtime's
core/graph/contrib_ops/quantization_defs.cc): the quantized inputs
dequantized (`(x - zero point) * scale`, in f32), the ai.onnx op's own
emitter on those floats (Add, Sigmoid, AveragePool, Softmax, Concat, ...:
one definition of each op's semantics), and the result quantized to the
output's scale and zero point as QuantizeLinear does (divided by the
scale, rounded half to even, plus the zero point, saturated to the inputs'
type, which every zero point of the node shares): a quantized value, read by a DequantizeLinear or
another quantized op. QGemm is QLinearMatMul's exact int32 product (plus
its int32 C), times alpha and the scales, requantized, or as f32 where it
has no y_scale.

ONNX Runtime computes several of them other ways (lookup tables of the 256
inputs for sigmoid, leaky relu and softmax; scale ratios for add and mul),
so a result within f32's rounding of a half step may land one step apart.
Scales and zero points must be known at import and per tensor (QGemm's
b_scale and b_zero_point may be per column).
"""

from __future__ import annotations

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import QUANT_RANGES, Const, Node, OpView, Value, as_type, emitter
from rlxc.frontends.onnx.quantize import _FLOATS, _exact_matmul, _integer_operand, _requantize, _scaled

MS = "com.microsoft"
_EIGHT_BIT = ("INT8", "UINT8")


def _scale(n: Node, k: int, what: str) -> float:
    """A per-tensor scale known at import (input k), as f32."""
    v = n.input(k)
    if not isinstance(v, Const):
        raise n.error(f"{what} (input #{k}) must be known at import")
    if v.dtype not in _FLOATS:
        raise n.unsupported(f"a {what} of type {v.dtype}", "FLOAT, FLOAT16, BFLOAT16 scales")
    if v.array.size != 1:
        raise n.error(f"{what} (input #{k}) of shape {list(v.array.shape)} must be a scalar")
    return float(np.float32(v.array.reshape(())))


def _zero_point(n: Node, k: int, what: str, q: str | None) -> tuple[int, str]:
    """A per-tensor zero point known at import (input k; absent: 0 of type
    `q`) and its 8-bit type, which must be `q` where `q` is given."""
    v = n.input(k)
    if v is None:
        assert q is not None
        return 0, q
    if not isinstance(v, Const) or v.narrow not in _EIGHT_BIT or v.array.size != 1:
        raise n.error(f"{what} (input #{k}) must be a scalar INT8 or UINT8 known at import")
    if q is not None and v.narrow != q:
        raise n.error(f"{what}'s type {v.narrow} differs from its input's {q}")
    return int(v.array.reshape(())), v.narrow


def _dequantized(n: Node, k: int, what: str) -> tuple[Tensor, str]:
    """Input k (an 8-bit quantized value; its scale and zero point inputs
    k + 1 and k + 2) as f32: (x - zero point) * scale; a constant one
    computed at import. Also its type."""
    v = n.input(k)
    q = n.imp.quantized(n.proto.input[k]) if v is not None else None
    if q not in _EIGHT_BIT:
        raise n.unsupported(f"{what} of type {q or (v.dtype if v is not None else 'none')}",
                            "INT8 and UINT8 (quantized) inputs")
    s = _scale(n, k + 1, f"{what}'s scale")
    z, _ = _zero_point(n, k + 2, f"{what}'s zero point", q)
    f32 = np.float32
    if isinstance(v, Const):
        return n.imp.constant((v.array.astype(f32) - f32(z)) * f32(s), "f32"), q
    g = n.g
    x = n.tensor(k)
    x = as_type(g, x, "f32")
    if z:
        x = g.sub(x, n.imp.scalar(float(z), "f32"))
    return g.mul(x, n.imp.scalar(s, "f32")), q


def _quantized(n: Node, y: Tensor, k: int, q: str) -> Tensor:
    """f32 `y` quantized to the scale and zero point at inputs k and k + 1
    (of the inputs' type `q`), as QuantizeLinear: rint(y / scale) + zero
    point, saturated (NaN: the lowest value)."""
    s = _scale(n, k, "the output's scale")
    z, out = _zero_point(n, k + 1, "the output's zero point", q)
    lo, hi = QUANT_RANGES[out]
    g, c = n.g, n.imp.scalar
    y = g.add(g.round(g.div(y, c(s, "f32"))), c(float(z), "f32"))
    lo_, hi_ = c(float(lo), "f32"), c(float(hi), "f32")
    y = g.minimum(g.maximum(y, lo_), hi_)
    y = g.select(g.ne(y, y), lo_, y)
    n.imp.carried[y.value] = out
    return y


def _channels_first(n: Node, x: Tensor, back: bool = False) -> Tensor:
    """x from channels last (NHWC) to first (NCHW), or back, where the node says `channels_last`."""
    if not n.attr("channels_last", 0):
        return x
    r = x.ndim
    perm = [0, r - 1, *range(1, r - 1)] if not back else [0, *range(2, r), 1]
    return n.g.transpose(x, perm)


#: Quantized op -> (the float op, the quantized inputs' positions, the
#: output's scale position); each input's scale and zero point follow it.
_UNARY_BINARY = {
    "QLinearAdd": ("Add", (0, 3), 6),
    "QLinearMul": ("Mul", (0, 3), 6),
    "QLinearSigmoid": ("Sigmoid", (0,), 3),
    "QLinearLeakyRelu": ("LeakyRelu", (0,), 3),
    "QLinearAveragePool": ("AveragePool", (0,), 3),
    "QLinearGlobalAveragePool": ("GlobalAveragePool", (0,), 3),
    "QLinearSoftmax": ("Softmax", (0,), 3),
}


@emitter(*(f"{MS}:{t}" for t in _UNARY_BINARY))
def _qlinear(n: Node) -> list[Value]:
    op, at, out = _UNARY_BINARY[n.op_type]
    names = ("A", "B") if len(at) == 2 else ("X",)
    xs, qs = zip(*(_dequantized(n, k, what) for k, what in zip(at, names)))
    if op in ("AveragePool", "GlobalAveragePool"):
        y = OpView(n, op, [_channels_first(n, xs[0])], drop=("channels_last",)).run()
        y = _channels_first(n, y, back=True)
    elif op == "Softmax":  # the Softmax of opset `opset` (its axis's meaning changed at 13)
        y = OpView(n, op, list(xs), drop=("opset",), opset=int(n.attr("opset", n.imp.opset))).run()
    else:
        y = OpView(n, op, list(xs)).run()
    return [_quantized(n, y, out, qs[0])]


@emitter(f"{MS}:QLinearConcat")
def _qlinear_concat(n: Node) -> list[Value]:
    """Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input:
    each dequantized, concatenated along `axis`, quantized to Y's."""
    if len(n.inputs) < 5 or (len(n.inputs) - 2) % 3:
        raise n.error(f"{len(n.inputs)} inputs: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples")
    xs, qs = zip(*(_dequantized(n, k, f"input #{k}") for k in range(2, len(n.inputs), 3)))
    y = OpView(n, "Concat", list(xs)).run()
    return [_quantized(n, y, 0, qs[0])]


@emitter(f"{MS}:QGemm")
def _qgemm(n: Node) -> list[Value]:
    """alpha * a_scale * b_scale * (A' B' + C) (A' = A or its transpose by
    transA, minus a_zero_point; B' likewise, by transB, b's scale and zero
    point per tensor or column): A' B' exactly in int32 (as MatMulInteger),
    C (int32) added there; then requantized to y_scale and y_zero_point as
    QLinearMatMul, or as f32 without a y_scale."""
    g = n.g
    ta, tb = int(n.attr("transA", 0)), int(n.attr("transB", 0))
    alpha = float(n.attr("alpha", 1.0))
    for k, what in ((0, "A"), (3, "B")):
        v = n.input(k)
        if v is not None and len(v.shape) != 2:
            raise n.error(f"{what} of rank {len(v.shape)}: QGemm's operands are 2-D")
    a, amax = _integer_operand(n, 0, 2, "A", None)
    b, bmax = _integer_operand(n, 3, 5, "B", 0 if tb else -1)  # a zero point per column of B'
    a = g.transpose(a, [1, 0]) if ta else a
    b = g.transpose(b, [1, 0]) if tb else b
    c = _exact_matmul(n, a, amax, b, bmax)
    if n.input(6) is not None:
        bias = n.tensor(6)
        if bias.dtype != "i32":
            raise n.unsupported(f"a C of type {bias.dtype}", "INT32")
        c = g.add(c, bias)
    scales = (1, "a_scale", []), (4, "b_scale", [-1])
    if n.input(7) is not None:
        return [_requantize(n, c, scales, y_at=(7, 8), alpha=alpha)]
    if n.input(8) is not None:
        raise n.error("y_zero_point without a y_scale")
    return [_scaled(n, c, scales, alpha)]

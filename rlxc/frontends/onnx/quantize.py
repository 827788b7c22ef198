"""QuantizeLinear and DequantizeLinear (the QDQ form of quantized models),
DynamicQuantizeLinear, MatMulInteger and ConvInteger (dynamic quantization,
as ONNX Runtime's `quantize_dynamic` writes it), QLinearMatMul and
QLinearConv (the QOperator form).

rlx has no 8-bit (or 16-, 4-, 2-bit) integer type, so a quantized value is
held as another type carrying the same integers exactly: an INT8/UINT8/...
initializer as i32 (`Const.narrow`), a QuantizeLinear's output as f32
(`OnnxImporter.carried`: integers of at most 16 bits are exact in f32).
Only a DequantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
QLinearConv or one of ONNX Runtime's quantized contrib ops (qlinear.py) may
read such a value (and a QuantizeLinear its zero point); anything else
reading one, or a graph output of one, is an error
naming the type. So a QDQ model imports as what it computes in floating
point: a weight's DequantizeLinear of an initializer folds at import into a
float param, and an activation's QuantizeLinear -> DequantizeLinear pair is
the rounding and clamping it stands for (`y = (clamp(rint(x / s) + z, lo,
hi) - z) * s`), elementwise ops that fuse with their neighbours.

Semantics as ONNX's reference (onnx/reference/ops/op_quantize_linear.py and
op_dequantize_linear.py): QuantizeLinear divides in x's type (or in
`precision`'s), rounds half to even and saturates to the output type's
range (the zero point's type, else `output_dtype`, else UINT8);
DequantizeLinear subtracts the zero point and multiplies by the scale in
f32, then rounds once to the scale's type (or `output_dtype`). Scales and
zero points must be known at import: per tensor, per axis (`axis`) or per
block (`block_size`, repeated along the axis at import). Float8/float4
quantization is not imported (rlx has no such types).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    ONNX_DTYPES,
    QUANT_RANGES,
    Const,
    Node,
    OnnxImportError,
    Value,
    as_type,
    emitter,
    onnx_type_name,
)

_FLOATS = ("f32", "f16", "bf16")


def _rlx_float(n: Node, code: int, what: str) -> str:
    """The rlx float type of ONNX type `code` (an output_dtype or precision attribute)."""
    d = ONNX_DTYPES.get(code)
    if d not in _FLOATS:
        raise n.unsupported(f"{what}={onnx_type_name(code)}", "FLOAT, FLOAT16, BFLOAT16")
    return d


def _broadcast(n: Node, a: np.ndarray, shape: tuple[int, ...], axis: int, block: int, what: str) -> np.ndarray:
    """A scale or zero point as ONNX's reference shapes it against x
    (`_quant_utils.reshape_input`): a scalar or one element as a scalar,
    per axis a vector along `axis`, per block repeated along it."""
    if a.ndim == 0 or a.size == 1:
        return a.reshape(())
    try:
        return _shaped(n, a, shape, axis, block, what)
    except OnnxImportError:
        raise
    except (ValueError, IndexError) as e:  # numpy's AxisError is both
        raise n.error(f"{what} of shape {list(a.shape)} does not fit x {list(shape)} (axis {axis}, "
                      f"block_size {block}): {e}") from None


def _shaped(n: Node, a: np.ndarray, shape: tuple[int, ...], axis: int, block: int, what: str) -> np.ndarray:
    if not block:
        if a.ndim != 1 or a.size != shape[axis]:
            raise n.error(f"{what} of shape {list(a.shape)} does not match axis {axis} of x {list(shape)}")
        dims = [1] * len(shape)
        dims[axis] = a.size
        return a.reshape(dims)
    if block < 0:
        raise n.error(f"block_size {block} must be positive")
    r = np.repeat(a, block, axis=axis).take(range(shape[axis]), axis=axis)
    if r.shape != tuple(shape):
        raise n.error(f"{what} of shape {list(a.shape)} does not block x {list(shape)} by {block} along axis {axis}")
    return r


def _params(n: Node, shape: tuple[int, ...]) -> tuple[Const, Const | None, int, int]:
    """(scale, zero point or None, axis, block_size) of a quantization node;
    the scale of a float type."""
    scale = n.input(1)
    zp = n.input(2)
    for v, what in ((scale, "the scale"), (zp, "the zero point")):
        if v is not None and not isinstance(v, Const):
            raise n.error(f"{what} must be known at import")
    if scale is None:
        raise n.error("input #1 (the scale) is required")
    if scale.dtype not in _FLOATS:
        raise n.unsupported(f"a scale of type {scale.dtype}", "FLOAT, FLOAT16, BFLOAT16 scales")
    axis = int(n.attr("axis", 1))
    if any(v is not None and v.array.size > 1 for v in (scale, zp)):  # per axis or per block
        if not -len(shape) <= axis < len(shape):
            raise n.error(f"axis {axis} is out of range for rank {len(shape)}")
        axis %= len(shape)
    return scale, zp, axis, int(n.attr("block_size", 0))  # pyright: ignore[reportReturnType]


@emitter("QuantizeLinear", since=10)
def quantize_linear(n: Node) -> list[Value]:
    x = n.tensor(0)
    if x.dtype not in _FLOATS:
        raise n.unsupported(f"an input of type {x.dtype}", "FLOAT, FLOAT16, BFLOAT16 inputs")
    scale, zp, axis, block = _params(n, x.shape)
    out_code = n.attr("output_dtype", 0)
    if zp is not None:
        out = zp.narrow
        if out is None:
            raise n.unsupported(f"a zero point of type {zp.dtype}", ", ".join(QUANT_RANGES))
        if out_code and onnx_type_name(out_code) != out:
            raise n.error(f"output_dtype {onnx_type_name(out_code)} differs from the zero point's type {out}")
    else:
        out = onnx_type_name(out_code) if out_code else "UINT8"
    if out not in QUANT_RANGES:
        raise n.unsupported(f"quantizing to {out}", ", ".join(QUANT_RANGES))
    lo, hi = QUANT_RANGES[out]
    precision = n.attr("precision", 0)
    d = _rlx_float(n, precision, "precision") if precision else x.dtype
    if not precision and scale.dtype != x.dtype:
        raise n.error(f"the scale's type {scale.dtype} differs from x's {x.dtype}")
    g = n.g
    s = n.imp.constant(_broadcast(n, scale.array, x.shape, axis, block, "the scale"), d)
    q = g.round(g.div(as_type(g, x, d), s))  # in x's type (or precision's), as the reference
    q = g.cast(q, "f32") if d != "f32" else q
    # + the zero point (+0 without one: an integer has no -0, rint(-0.3) has)
    z = n.imp.constant(_broadcast(n, zp.array, x.shape, axis, block, "the zero point"), "f32") if zp is not None \
        else n.imp.scalar(0.0, "f32")
    q = g.add(q, z)
    lo_, hi_ = n.imp.scalar(float(lo), "f32"), n.imp.scalar(float(hi), "f32")
    q = g.minimum(g.maximum(q, lo_), hi_)
    q = g.select(g.ne(q, q), lo_, q)  # NaN (x NaN, or 0 / 0): the lowest value, as the reference's int cast gives
    n.imp.carried[q.value] = out
    return [q]


@emitter("DequantizeLinear", since=10)
def dequantize_linear(n: Node) -> list[Value]:
    x = n.tensor(0)
    q = n.imp.quantized(n.proto.input[0])
    if q is None:
        if x.dtype != "i32":  # float8 and the like: rlx has no such types; a float input is not quantized
            raise n.unsupported(f"an input of type {x.dtype}", ", ".join([*QUANT_RANGES, "INT32"]))
        q = "INT32"
    scale, zp, axis, block = _params(n, x.shape)
    out_code = n.attr("output_dtype", 0)
    out = _rlx_float(n, out_code, "output_dtype") if out_code else scale.dtype
    g = n.g
    y = as_type(g, x, "f32")
    if zp is not None:
        zq = zp.narrow or ("INT32" if zp.dtype == "i32" else zp.dtype)
        if zq != q:
            raise n.error(f"the zero point's type {zq} differs from x's {q}")
        y = g.sub(y, n.imp.constant(_broadcast(n, zp.array, x.shape, axis, block, "the zero point"), "f32"))
    y = g.mul(y, n.imp.constant(_broadcast(n, scale.array, x.shape, axis, block, "the scale"), "f32"))
    return [g.cast(y, out) if out != "f32" else y]


@emitter("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(n: Node) -> list[Value]:
    """UINT8 quantization with a scale and zero point computed from x's range
    at run time (ONNX's reference, op_dynamic_quantize_linear.py): the range
    [min(0, min x), max(0, max x)] over 255 steps (1/255 when it is empty),
    the zero point rint(clamp(-min / scale, 0, 255)), then QuantizeLinear's
    rounding and clamping. y and the zero point are carried as f32 integers
    (`carried`, UINT8), the scale is an f32 scalar."""
    x = n.tensor(0)
    if x.dtype != "f32":
        raise n.unsupported(f"an input of type {x.dtype}", "FLOAT inputs")
    g, s = n.g, n.imp.scalar
    zero, one = s(0.0, "f32"), s(1.0, "f32")
    hi = s(255.0, "f32")
    mx = g.maximum(g.reduce_max(x), zero)
    mn = g.minimum(g.reduce_min(x), zero)
    scale = g.div(g.select(g.eq(mx, mn), one, g.sub(mx, mn)), hi)
    zp = g.round(g.minimum(g.maximum(g.sub(zero, g.div(mn, scale)), zero), hi))
    q = g.minimum(g.maximum(g.add(g.round(g.div(x, scale)), zp), zero), hi)
    q = g.select(g.ne(q, q), zero, q)  # NaN: the lowest value, as the reference's uint8 cast gives
    n.imp.carried[q.value] = "UINT8"
    n.imp.carried[zp.value] = "UINT8"
    return [q, scale, zp]


#: f32 sums of integers are exact below 2**24: MatMulInteger's products are
#: summed in f32 over chunks of the reduced axis short enough for that.
_EXACT_F32 = 2**24


def _integer_operand(n: Node, k: int, zk: int, what: str, along: int | None) -> tuple[Tensor, int]:
    """Operand k of MatMulInteger or ConvInteger minus its zero point (input
    zk: a scalar, or where `along` is an axis one value per index of that
    axis) as f32 integers, and the largest magnitude those can have. A
    constant operand (a weight) with a constant zero point is subtracted at
    import into an f32 param named after the operand."""
    v, zp = n.input(k), n.input(zk)
    q = n.imp.quantized(n.proto.input[k])
    if v is None or q not in ("INT8", "UINT8"):
        raise n.unsupported(f"{what} of type {q or (v.dtype if v is not None else 'none')}",
                            "INT8 and UINT8 (quantized) operands")
    zq = n.imp.quantized(n.proto.input[zk]) if zp is not None else q
    if zq != q:
        raise n.error(f"{what}'s zero point of type {zq or zp.dtype} differs from {what}'s {q}")  # pyright: ignore[reportOptionalMemberAccess]
    shape = v.shape
    if len(shape) < 2:
        raise n.error(f"{what} of rank {len(shape)}: a 1-D operand is not imported")
    zs = zp.shape if zp is not None else ()
    per = zs[0] if len(zs) == 1 else 1
    axis = None if along is None else along % len(shape)
    if len(zs) > 1 or per > 1 and (axis is None or per != shape[axis]):
        raise n.error(f"{what}'s zero point of shape {list(zs)} is neither a scalar"
                      + ("" if axis is None else f" nor one per index of axis {axis} of {what} {list(shape)}"))
    z_shape = [per] + [1] * (len(shape) - 1 - axis) if per > 1 and axis is not None else []
    if isinstance(v, Const) and (zp is None or isinstance(zp, Const)):
        z = zp.array.reshape(z_shape).astype(np.int64) if zp is not None else np.int64(0)
        d = v.array.astype(np.int64) - z
        name = n.imp._fold_name(f"{n.proto.input[k]}_f32")  # pyright: ignore[reportPrivateUsage]
        return n.imp.tensor(Const(d.astype(np.float32), "f32", name)), int(np.abs(d).max(initial=0))
    lo, hi = QUANT_RANGES[q]
    g = n.g
    t = n.imp.tensor(v)
    y = as_type(g, t, "f32")
    if zp is None:
        return y, max(hi, -lo)
    z = n.imp.tensor(zp)
    z = as_type(g, z, "f32")
    y = g.sub(y, g.reshape(z, z_shape) if list(zp.shape) != z_shape else z)
    if isinstance(zp, Const):
        return y, int(max(hi - zp.array.min(), zp.array.max() - lo))
    return y, hi - lo  # a zero point known only at run time


@emitter("MatMulInteger", since=10)
def matmul_integer(n: Node) -> list[Value]:
    """(A - a_zero_point) @ (B - b_zero_point) in int32, exactly: the
    operands as f32 integers, multiplied in f32 over chunks of the reduced
    axis whose sums stay below 2**24 (bounded by the types' ranges, or by the
    values of a constant operand), each chunk's result cast to i32 and the
    chunks added in i32. 8-bit operands whose zero point is known only at
    run time take chunks of 258; a constant int8 weight with |w - z| <= 127
    and a uint8 activation, of 518."""
    a, amax = _integer_operand(n, 0, 2, "A", -2)  # a zero point per row of A
    b, bmax = _integer_operand(n, 1, 3, "B", -1)  # ... per column of B
    return [_exact_matmul(n, a, amax, b, bmax)]


def _exact_sum(n: Node, extent: int, term: int, part: Callable[[int, int], Tensor]) -> Tensor:
    """The sum over `extent` (a reduced axis) of terms of magnitude at most
    `term`, as i32, exactly: part(k0, k1) (the f32 sum over [k0, k1)) over
    chunks short enough that it stays below 2**24, each cast to i32, the
    chunks added in i32."""
    g = n.g
    chunk = max(1, _EXACT_F32 // max(1, term))
    out = None
    for k0 in range(0, extent, chunk):
        p = g.cast(part(k0, min(extent, k0 + chunk)), "i32")
        out = p if out is None else g.add(out, p)
    assert out is not None
    return out


def _exact_matmul(n: Node, a: Tensor, amax: int, b: Tensor, bmax: int) -> Tensor:
    """a @ b of f32 integers of magnitudes at most amax and bmax, as i32,
    exactly (see MatMulInteger)."""
    g, ka = n.g, a.shape[-1]

    def part(k0: int, k1: int) -> Tensor:
        if k1 - k0 == ka:
            return g.matmul(a, b)
        return g.matmul(g.slice(a, [k0], [k1], [len(a.shape) - 1]), g.slice(b, [k0], [k1], [len(b.shape) - 2]))

    return _exact_sum(n, ka, amax * bmax, part)


@emitter("QLinearMatMul", since=10)
def qlinear_matmul(n: Node) -> list[Value]:
    """The QOperator form's quantized matmul: the exact int32 product of
    (a - a_zero_point) and (b - b_zero_point) (as MatMulInteger), times
    a_scale b_scale / y_scale (per tensor, per row of a, per column of b;
    computed at import in f32, as ONNX Runtime does), rounded half to even,
    plus y_zero_point, saturated to its type. The product is converted to
    f32 before the multiply (ONNX's reference multiplies in float64: a
    result within f32's rounding of a half step may round the other way).
    The scales and y's zero point must be known at import; the result is a
    quantized value (for a DequantizeLinear or another quantized op)."""
    a, amax = _integer_operand(n, 0, 2, "A", -2)
    b, bmax = _integer_operand(n, 3, 5, "B", -1)
    return [_requantize(n, _exact_matmul(n, a, amax, b, bmax), ((1, "a_scale", [-1, 1]), (4, "b_scale", [-1])))]


def _scaled(n: Node, c: Tensor, scales_at: tuple[tuple[int, str, list[int]], ...], alpha: float = 1.0,
            y_scale_at: int | None = None) -> Tensor:
    """int32 `c` as f32 times (alpha times) the product of the scales at
    `scales_at` (input, name, shape of a per-index scale; known at import),
    over y_scale (input `y_scale_at`) where given: f32, in the reference's
    order."""
    scales = []
    for k, what, z_shape in (*scales_at, *(((y_scale_at, "y_scale", []),) if y_scale_at is not None else ())):
        v = n.input(k)
        if not isinstance(v, Const):
            raise n.error(f"{what} (input #{k}) must be known at import")
        if v.dtype not in _FLOATS:
            raise n.unsupported(f"a {what} of type {v.dtype}", "FLOAT, FLOAT16, BFLOAT16 scales")
        arr = v.array.astype(np.float32)
        if arr.size > 1 and not z_shape:
            raise n.error(f"{what} of shape {list(arr.shape)} must be a scalar")
        scales.append(arr.reshape(z_shape) if arr.size > 1 else arr.reshape(()))
    mult = scales[0] * scales[1] if alpha == 1.0 else np.float32(alpha) * scales[0] * scales[1]
    if y_scale_at is not None:
        mult = mult / scales[2]
    try:
        fits = np.broadcast_shapes(mult.shape, tuple(c.shape)) == tuple(c.shape)
    except ValueError:
        fits = False
    if not fits:
        raise n.error(f"the scales of shapes {[list(v.shape) for v in scales]} do not fit the result {list(c.shape)}")
    return n.g.mul(n.g.cast(c, "f32"), n.imp.constant(mult, "f32") if mult.ndim else n.imp.scalar(float(mult), "f32"))


def _requantize(n: Node, c: Tensor, scales_at: tuple[tuple[int, str, list[int]], ...],
                y_at: tuple[int, int] = (6, 7), alpha: float = 1.0) -> Tensor:
    """The QOperator ops' output: int32 `c` times (alpha times) the product
    of the scales at `scales_at` (input, name, shape of a per-index scale)
    over y_scale (input y_at[0]), in f32 (`_scaled`), rounded half to even,
    plus y_zero_point (input y_at[1]), saturated to its type; a quantized
    value."""
    yk, zk = y_at
    zy = n.input(zk)
    out = zy.narrow if isinstance(zy, Const) else None
    if out not in ("INT8", "UINT8") or zy.array.size != 1:  # ONNX allows 8-bit y only
        raise n.error(f"y_zero_point (input #{zk}) must be a scalar INT8 or UINT8 known at import")
    y = _scaled(n, c, scales_at, alpha, yk)
    lo, hi = QUANT_RANGES[out]
    g, s = n.g, n.imp.scalar
    y = g.add(g.round(y), s(float(zy.array.reshape(())), "f32"))
    y = g.minimum(g.maximum(y, s(float(lo), "f32")), s(float(hi), "f32"))
    n.imp.carried[y.value] = out
    return y


@emitter("QLinearConv", since=10)
def qlinear_conv(n: Node) -> list[Value]:
    """The QOperator form's convolution: ConvInteger's exact int32 result,
    plus the int32 bias B (input 8, scale x_scale w_scale), requantized as
    QLinearMatMul's (w_scale per tensor or output channel)."""
    x, xmax = _integer_operand(n, 0, 2, "x", None)
    w, wmax = _integer_operand(n, 3, 5, "w", 0)
    c = _exact_conv(n, x, xmax, w, wmax)
    per_channel = [-1] + [1] * (len(c.shape) - 2)
    if n.input(8) is not None:
        b = n.tensor(8)
        if b.dtype != "i32" or list(b.shape) != [c.shape[1]]:
            raise n.error(f"the bias must be INT32 of shape [{c.shape[1]}] (one per output channel)")
        c = n.g.add(c, n.g.reshape(b, [c.shape[1], *per_channel[1:]]))
    return [_requantize(n, c, ((1, "x_scale", []), (4, "w_scale", per_channel)))]


@emitter("ConvInteger", since=10)
def conv_integer(n: Node) -> list[Value]:
    """Conv of (X - x_zero_point) by (W - w_zero_point, one per output
    channel or one) in int32, exactly, as MatMulInteger: f32 integers
    convolved over chunks of the input channels whose f32 sums (channels x
    taps terms) stay below 2**24, each chunk's result cast to i32 and the
    chunks added in i32. A grouped convolution whose groups need chunks is
    not imported (a depthwise one never does)."""
    x, xmax = _integer_operand(n, 0, 2, "X", None)
    w, wmax = _integer_operand(n, 1, 3, "W", 0)  # a zero point per output channel
    return [_exact_conv(n, x, xmax, w, wmax)]


def _exact_conv(n: Node, x: Tensor, xmax: int, w: Tensor, wmax: int) -> Tensor:
    """n's convolution of f32 integers of magnitudes at most xmax and wmax,
    as i32, exactly (see ConvInteger)."""
    from rlxc.frontends.onnx.spatial import conv

    g = n.g
    cin = w.shape[1]  # input channels per group
    term = xmax * wmax * int(np.prod(w.shape[2:]))  # a channel's taps
    chunk = max(1, _EXACT_F32 // max(1, term))
    if cin > chunk and n.attr("group", 1) != 1:
        raise n.unsupported(f"a grouped {n.proto.op_type} of {cin} input channels a group (exact int32 needs chunks of {chunk})",
                            "group 1, or groups of few enough channels")

    def part(c0: int, c1: int) -> Tensor:
        if c1 - c0 == cin:
            return conv(n, x, w, None)
        return conv(n, g.slice(x, [c0], [c1], [1]), g.slice(w, [c0], [c1], [1]), None)

    return _exact_sum(n, cin, term, part)

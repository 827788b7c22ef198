"""QuantizeLinear and DequantizeLinear: the QDQ form of quantized models.

rlx has no 8-bit (or 16-, 4-, 2-bit) integer type, so a quantized value is
held as another type carrying the same integers exactly: an INT8/UINT8/...
initializer as i32 (`Const.narrow`), a QuantizeLinear's output as f32
(`OnnxImporter.carried`: integers of at most 16 bits are exact in f32).
Only a DequantizeLinear may read such a value (and a QuantizeLinear its zero
point); anything else reading one, or a graph output of one, is an error
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

import numpy as np

from rlxc.frontends.onnx.core import (
    ONNX_DTYPES,
    QUANT_RANGES,
    Const,
    Node,
    OnnxImportError,
    Value,
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
    q = g.round(g.div(x if d == x.dtype else g.cast(x, d), s))  # in x's type (or precision's), as the reference
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
    y = g.cast(x, "f32") if x.dtype != "f32" else x
    if zp is not None:
        zq = zp.narrow or ("INT32" if zp.dtype == "i32" else zp.dtype)
        if zq != q:
            raise n.error(f"the zero point's type {zq} differs from x's {q}")
        y = g.sub(y, n.imp.constant(_broadcast(n, zp.array, x.shape, axis, block, "the zero point"), "f32"))
    y = g.mul(y, n.imp.constant(_broadcast(n, scale.array, x.shape, axis, block, "the scale"), "f32"))
    return [g.cast(y, out) if out != "f32" else y]

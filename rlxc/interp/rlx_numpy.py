"""Numpy reference semantics of every `rlx` op, on xDSL's interpreter framework.

Values are numpy arrays in each element type's carrier dtype (see `dtypes`).
Floating-point ops compute in float64 from the mathematical definitions
(erf GELU, round half to even, max-subtracted softmax) and round once to the
result type. Nothing here is derived from any GPU code.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from rlxc.dialects import rlx
from rlxc.dialects.rlx import _float, _int, _ints
from rlxc.dialects.types import slice_extent
from rlxc.interp import math_ref
from rlxc.values import carrier_dtype, compute_dtype, dense_values, to_tensor_type
from rlxc.interp.scalar_numpy import run_scalar_body

# --------------------------------------------------------------------------- tables

#: Unary elementwise ops: float64 (or int64) in, same out.
UNARY: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    rlx.NegOp: np.negative,
    rlx.AbsOp: np.abs,
    rlx.SignOp: np.sign,
    rlx.ReluOp: math_ref.relu,
    rlx.ExpOp: np.exp,
    rlx.LogOp: np.log,
    rlx.SqrtOp: np.sqrt,
    rlx.RsqrtOp: lambda x: 1.0 / np.sqrt(x),
    rlx.ReciprocalOp: lambda x: 1.0 / x,
    rlx.SinOp: np.sin,
    rlx.CosOp: np.cos,
    rlx.TanOp: np.tan,
    rlx.AsinOp: np.arcsin,
    rlx.AcosOp: np.arccos,
    rlx.AtanOp: np.arctan,
    rlx.SinhOp: np.sinh,
    rlx.CoshOp: np.cosh,
    rlx.AsinhOp: np.arcsinh,
    rlx.AcoshOp: np.arccosh,
    rlx.AtanhOp: np.arctanh,
    rlx.TanhOp: np.tanh,
    rlx.SigmoidOp: math_ref.sigmoid,
    rlx.GeluOp: math_ref.gelu,
    rlx.GeluTanhOp: math_ref.gelu_tanh,
    rlx.SiluOp: math_ref.silu,
    rlx.SoftplusOp: math_ref.softplus,
    rlx.ErfOp: math_ref.erf,
    rlx.FloorOp: np.floor,
    rlx.CeilOp: np.ceil,
    rlx.RoundOp: np.rint,
}


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a / b if a.dtype.kind == "f" else math_ref.int_div(a, b)


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's fmod on floats (exact), % on integers (x % 0 is 0)."""
    return np.fmod(a, b) if a.dtype.kind == "f" else math_ref.int_rem(a, b)


#: Binary broadcasting ops on float64 / int64 operands.
BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    rlx.AddOp: np.add,
    rlx.SubOp: np.subtract,
    rlx.MulOp: np.multiply,
    rlx.DivOp: _div,
    rlx.RemOp: _rem,
    rlx.PowOp: np.power,
    rlx.MaximumOp: np.maximum,
    rlx.MinimumOp: np.minimum,
    rlx.EqOp: np.equal,
    rlx.NeOp: np.not_equal,
    rlx.LtOp: np.less,
    rlx.LeOp: np.less_equal,
    rlx.GtOp: np.greater,
    rlx.GeOp: np.greater_equal,
}

#: Reductions: (numpy reduction, accumulates in float64/int64).
REDUCE: dict[type[Operation], Callable[..., np.ndarray]] = {
    rlx.ReduceSumOp: np.sum,
    rlx.ReduceMeanOp: np.mean,
    rlx.ReduceMaxOp: np.max,
    rlx.ReduceMinOp: np.min,
    rlx.ReduceProdOp: np.prod,
}

# --------------------------------------------------------------------------- helpers


def _wide(x: np.ndarray, t: Any) -> np.ndarray:
    """The operand in its compute dtype (float64 / int64 / bool)."""
    return np.asarray(x).astype(compute_dtype(t.get_element_type()), copy=False)


def _out(op: Operation, *values: np.ndarray) -> PythonValues:
    return tuple(
        to_tensor_type(v, r.type)  # pyright: ignore[reportArgumentType]
        for v, r in zip(values, op.results, strict=True)
    )


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:  # rows of no elements (or no rows): nothing to normalise
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None, eps: float):
    if x.size == 0:  # numpy's mean of an empty row warns
        return x.copy()
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * gamma
    return y if beta is None else y + beta


def _rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float):
    if x.size == 0:
        return x.copy()
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    return x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps) * gamma


def _windows(xp: np.ndarray, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int):
    """Yields (i, j, view) with view[n, c, y, x] = xp[n, c, y*sh + i*dh, x*sw + j*dw]."""
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dh, j * dw
            yield i, j, xp[:, :, y0 : y0 + sh * (oh - 1) + 1 : sh, x0 : x0 + sw * (ow - 1) + 1 : sw]


def _pad_hw(x: np.ndarray, pad: list[int], value: float) -> np.ndarray:
    pt, pl, pb, pr = pad
    return np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=value)


def conv2d(x, w, b, stride, padding, dilation, groups, out_shape):
    """Direct 2-D cross-correlation in float64 (NCHW / OIHW)."""
    n, o, oh, ow = out_shape
    xp = _pad_hw(x, padding, 0.0)
    cg = w.shape[1]
    og = o // groups
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    for g in range(groups):
        xg = xp[:, g * cg : (g + 1) * cg]
        wg = w[g * og : (g + 1) * og]
        for i, j, patch in _windows(xg, w.shape[2], w.shape[3], *stride, *dilation, oh, ow):
            out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wg[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def conv_transpose2d(x, w, b, stride, padding, output_padding, dilation, groups, out_shape):
    """Transposed 2-D convolution in float64 (NCHW input, [in, out/groups, kh, kw]
    weight), by its definition: every input pixel adds its value times the
    kernel to the full output at (iy*stride + ky*dilation, ix*stride +
    kx*dilation); the result is that full output cropped by the padding
    (top/left) to `out_shape` (output_padding rows past the full extent are 0)."""
    n, o, oh, ow = out_shape
    c, og, kh, kw = w.shape
    cg = c // groups
    (sh, sw), (dh, dw), (pt, pl, _, _) = stride, dilation, padding
    h, wd = x.shape[2:]
    full = np.zeros((n, o, max(pt + oh, sh * (h - 1) + dh * (kh - 1) + 1),
                     max(pl + ow, sw * (wd - 1) + dw * (kw - 1) + 1)))  # fmt: skip
    for g in range(groups):
        xg = x[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xg, w[g * cg : (g + 1) * cg, :, i, j])
                full[:, g * og : (g + 1) * og, i * dh : i * dh + sh * (h - 1) + 1 : sh,
                     j * dw : j * dw + sw * (wd - 1) + 1 : sw] += contrib  # fmt: skip
    out = full[:, :, pt : pt + oh, pl : pl + ow]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def _pool_input(op: rlx.Pool2dOp, arg) -> tuple[np.ndarray, int, int]:
    """A pool's input as NCHW in its compute dtype (a channels-last one with
    its channels moved to axis 1), and the result's (oh, ow)."""
    x = _wide(arg, op.input.type)
    shape = op.result.type.get_shape()  # pyright: ignore
    if op.channels_last is not None:
        return np.moveaxis(x, 3, 1), shape[1], shape[2]
    return x, shape[2], shape[3]


def _pool_output(op: rlx.Pool2dOp, out: np.ndarray) -> PythonValues:
    """An NCHW pool result in the op's layout."""
    return _out(op, np.moveaxis(out, 1, 3) if op.channels_last is not None else out)


def _pool_padded(op: rlx.Pool2dOp, x: np.ndarray, value: float, oh: int, ow: int) -> np.ndarray:
    """NCHW `x` padded by the op's padding with `value`, plus (ceil mode)
    enough more `value` at the end for the last window of (oh, ow)."""
    (kh, kw), (sh, sw), (dh, dw) = _ints(op.kernel), _ints(op.stride), _ints(op.dilation)
    pt, pl, pb, pr = _ints(op.padding)
    h, wd = x.shape[2:]
    pb = max(pb, (oh - 1) * sh + dh * (kh - 1) + 1 - h - pt)
    pr = max(pr, (ow - 1) * sw + dw * (kw - 1) + 1 - wd - pl)
    return _pad_hw(x, [pt, pl, pb, pr], value)


def resize(op: rlx.ResizeOp, x: np.ndarray) -> np.ndarray:
    """ONNX Resize, one resized axis at a time (both modes are separable):
    nearest takes the input element at the rounded source coordinate; linear
    weighs the two neighbours of the source coordinate (float64)."""
    out = x
    ys = op.result.type.get_shape()  # pyright: ignore
    linear = op.mode.data == "linear"
    for a in op.resized_axes():
        if not linear:
            out = np.take(out, op.nearest_indices(a), axis=a)
            continue
        lo, hi, t = op.linear_taps(a)
        t = t.reshape([ys[a] if k == a else 1 for k in range(x.ndim)])
        out = (1.0 - t) * np.take(out, lo, axis=a) + t * np.take(out, hi, axis=a)
    return out


def _clamped(x, lo: float | None, hi: float | None):
    """max(x, lo) then min(x, hi), where set (NaN stays NaN, as rlx.maximum's)."""
    if lo is not None:
        x = np.maximum(x, lo)
    return x if hi is None else np.minimum(x, hi)


def attention(q, k, v, mask, causal: bool, scale: float):
    """softmax(q kᵀ · scale + mask, causal top-left) · v in float64."""
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        s = s + mask
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.triu(np.ones((sq, sk), dtype=bool), k=1), -np.inf, s)
    return np.matmul(_softmax(s, -1), v)


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def _in_range(op: Operation, idx: np.ndarray, dim: int, axis: int) -> np.ndarray:
    """Indices into an axis of extent `dim`, negative ones counted from the
    end; an index outside [-dim, dim) is an error naming the op."""
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        bad = idx[(idx < -dim) | (idx >= dim)].flat[0]
        raise InterpretationError(
            f"{op.name}: index {bad} is out of range for axis {axis} of extent {dim}"
        )
    return np.where(idx < 0, idx + dim, idx)


# --------------------------------------------------------------------------- impls


def _unary_impl(fn: Callable[[np.ndarray], np.ndarray]):
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        with np.errstate(all="ignore"):
            return _out(op, fn(_wide(args[0], op.operands[0].type)))

    return run


def _binary_impl(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        a, b = (_wide(v, o.type) for v, o in zip(args, op.operands))
        with np.errstate(all="ignore"):
            return _out(op, fn(a, b))

    return run


def _reduce_impl(fn: Callable[..., np.ndarray]):
    def run(self: Any, interpreter: Interpreter, op: rlx.ReduceOp, args: PythonValues):
        x = _wide(args[0], op.input.type)
        axes = tuple(a % x.ndim for a in _ints(op.axes))
        kw = {}
        if fn in (np.max, np.min) and any(x.shape[a] == 0 for a in axes):
            # the max / min of no elements: -inf / +inf, or the type's least / greatest (as
            # ONNX defines it; numpy has no identity for them and refuses)
            if np.issubdtype(x.dtype, np.floating):
                least, greatest = -np.inf, np.inf
            else:
                info = np.iinfo(carrier_dtype(op.input.type.get_element_type()))  # pyright: ignore[reportAttributeAccessIssue]
                least, greatest = info.min, info.max
            kw["initial"] = least if fn is np.max else greatest
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns of a mean of no elements: NaN, as meant
            return _out(op, fn(x, axis=axes, keepdims=op.keepdims is not None, **kw))

    return run


def _table_impls() -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for table, make in ((UNARY, _unary_impl), (BINARY, _binary_impl), (REDUCE, _reduce_impl)):
        for op_type, fn in table.items():
            attrs[f"run_{op_type.__name__}"] = impl(op_type)(make(fn))  # pyright: ignore
    return attrs


class _RlxFunctionsBase(InterpreterFunctions):
    """The per-op implementations that are not a table entry."""

    params: dict[str, np.ndarray]

    def __init__(self, params: dict[str, np.ndarray] | None = None):
        self.params = params or {}

    @impl(rlx.ParamOp)
    def run_param(self, interpreter: Interpreter, op: rlx.ParamOp, args: PythonValues):
        name = op.param_name.data
        if name not in self.params:
            raise InterpretationError(f"param '{name}' ({op.result.type}) was not given")
        return (self.params[name],)

    @impl(rlx.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: rlx.ConstantOp, args: PythonValues):
        return (dense_values(op.value, op.result.type),)  # pyright: ignore

    @impl(rlx.SelectOp)
    def run_select(self, interpreter: Interpreter, op: rlx.SelectOp, args: PythonValues):
        c, a, b = args
        return _out(op, np.where(c, a, b))

    @impl(rlx.CastOp)
    def run_cast(self, interpreter: Interpreter, op: rlx.CastOp, args: PythonValues):
        return _out(op, _wide(args[0], op.input.type))

    @impl(rlx.ArgMaxOp)
    def run_argmax(self, interpreter: Interpreter, op: rlx.ArgMaxOp, args: PythonValues):
        x = np.asarray(args[0])
        axis = _int(op.axis) % x.ndim
        return _out(op, np.argmax(x, axis=axis, keepdims=op.keepdims is not None))

    @impl(rlx.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: rlx.SoftmaxOp, args: PythonValues):
        x = _wide(args[0], op.input.type)
        return _out(op, _softmax(x, _int(op.axis) % x.ndim))

    @impl(rlx.LogSoftmaxOp)
    def run_log_softmax(self, interpreter: Interpreter, op: rlx.LogSoftmaxOp, args: PythonValues):
        x = _wide(args[0], op.input.type)
        with np.errstate(divide="ignore"):
            return _out(op, _log_softmax(x, _int(op.axis) % x.ndim))

    @impl(rlx.LayerNormOp)
    def run_layer_norm(self, interpreter: Interpreter, op: rlx.LayerNormOp, args: PythonValues):
        x, g, b = (_wide(a, o.type) for a, o in zip(args, op.operands))
        return _out(op, _layer_norm(x, g, b, _float(op.eps)))

    @impl(rlx.RmsNormOp)
    def run_rms_norm(self, interpreter: Interpreter, op: rlx.RmsNormOp, args: PythonValues):
        x, g = (_wide(a, o.type) for a, o in zip(args, op.operands))
        return _out(op, _rms_norm(x, g, _float(op.eps)))

    def _residual_then_norm(self, op, args: PythonValues, norm) -> PythonValues:
        """(s, norm(s)) with s = x + residual rounded to the op's type: the sum
        is a result, and the norm reads that rounded sum."""
        x, r, *rest = (_wide(a, o.type) for a, o in zip(args, op.operands))
        s = to_tensor_type(x + r, op.sum.type)
        return (s, to_tensor_type(norm(_wide(s, op.sum.type), *rest), op.normed.type))

    @impl(rlx.FusedResidualLayerNormOp)
    def run_fused_residual_layer_norm(
        self, interpreter: Interpreter, op: rlx.FusedResidualLayerNormOp, args: PythonValues
    ):
        eps = _float(op.eps)
        return self._residual_then_norm(op, args, lambda s, g, b: _layer_norm(s, g, b, eps))

    @impl(rlx.FusedResidualRmsNormOp)
    def run_fused_residual_rms_norm(
        self, interpreter: Interpreter, op: rlx.FusedResidualRmsNormOp, args: PythonValues
    ):
        eps = _float(op.eps)
        return self._residual_then_norm(op, args, lambda s, g: _rms_norm(s, g, eps))

    @impl(rlx.MatMulOp)
    def run_matmul(self, interpreter: Interpreter, op: rlx.MatMulOp, args: PythonValues):
        a, b = (_wide(v, o.type) for v, o in zip(args, op.operands))
        if op.transpose_lhs is not None:
            a = np.swapaxes(a, -1, -2)
        if op.transpose_rhs is not None:
            b = np.swapaxes(b, -1, -2)
        return _out(op, np.matmul(a, b))

    @impl(rlx.LinearOp)
    def run_linear(self, interpreter: Interpreter, op: rlx.LinearOp, args: PythonValues):
        x, w, *rest = (_wide(v, o.type) for v, o in zip(args, op.operands))
        y = np.matmul(x, w.T)
        for addend in rest:  # the bias, then the residual
            y = y + addend
        if op.activation is not None:  # the unary op of that name
            with np.errstate(all="ignore"):
                y = UNARY[rlx.ACTIVATIONS[op.activation.data]](y)
        return _out(op, y)

    @impl(rlx.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: rlx.ReshapeOp, args: PythonValues):
        return _out(op, np.asarray(args[0]))

    @impl(rlx.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: rlx.TransposeOp, args: PythonValues):
        return _out(op, np.transpose(args[0], _ints(op.perm)))

    @impl(rlx.ExpandOp)
    def run_expand(self, interpreter: Interpreter, op: rlx.ExpandOp, args: PythonValues):
        shape = tuple(op.result.type.get_shape())  # pyright: ignore
        return _out(op, np.broadcast_to(args[0], shape))

    @impl(rlx.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: rlx.ConcatOp, args: PythonValues):
        axis = _int(op.axis) % np.asarray(args[0]).ndim
        return _out(op, np.concatenate(args, axis=axis))

    @impl(rlx.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: rlx.SliceOp, args: PythonValues):
        # range(s, e, st) per axis: an empty one may name -1 (before index 0)
        # as its start or end, which a Python slice reads as the last index
        index = tuple(
            slice(s, e if e >= 0 else None, st) if slice_extent(s, e, st) else slice(0, 0)
            for s, e, st in zip(_ints(op.starts), _ints(op.ends), _ints(op.steps))
        )
        return _out(op, np.asarray(args[0])[index])

    @impl(rlx.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: rlx.GatherOp, args: PythonValues):
        x, idx = np.asarray(args[0]), np.asarray(args[1], dtype=np.int64)
        axis = _int(op.axis) % x.ndim
        dim = x.shape[axis]
        if idx.size and (idx.min() < -dim or idx.max() >= dim):
            bad = idx[(idx < -dim) | (idx >= dim)].flat[0]
            raise InterpretationError(
                f"rlx.gather: index {bad} is out of range for axis {axis} of extent {dim}"
            )
        return _out(op, np.take(x, np.where(idx < 0, idx + dim, idx), axis=axis))

    @impl(rlx.PadOp)
    def run_pad(self, interpreter: Interpreter, op: rlx.PadOp, args: PythonValues):
        x = _wide(args[0], op.input.type)
        widths = list(zip(_ints(op.low), _ints(op.high)))
        if not widths:  # rank 0: nothing to pad (numpy.pad refuses)
            return _out(op, x)
        if op.mode.data == "constant":
            return _out(op, np.pad(x, widths, constant_values=_float(op.value)))
        return _out(op, np.pad(x, widths, mode=op.mode.data))  # pyright: ignore

    @impl(rlx.GatherElementsOp)
    def run_gather_elements(
        self, interpreter: Interpreter, op: rlx.GatherElementsOp, args: PythonValues
    ):
        x, idx = np.asarray(args[0]), np.asarray(args[1], dtype=np.int64)
        axis = _int(op.axis) % x.ndim
        idx = _in_range(op, idx, x.shape[axis], axis)
        # indices may be shorter than x off the axis: take_along_axis on that corner
        corner = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(idx.shape))
        return _out(op, np.take_along_axis(x[corner], idx, axis=axis))

    @impl(rlx.GatherNDOp)
    def run_gather_nd(self, interpreter: Interpreter, op: rlx.GatherNDOp, args: PythonValues):
        x, idx = np.asarray(args[0]), np.asarray(args[1], dtype=np.int64)
        b, m = _int(op.batch_dims), idx.shape[-1]
        nb = int(np.prod(x.shape[:b]))
        per_batch = int(np.prod(idx.shape[b:-1]))
        xb = x.reshape((nb, *x.shape[b:]))
        ib = idx.reshape((nb, per_batch, m))
        coords = [_in_range(op, ib[..., t], x.shape[b + t], b + t) for t in range(m)]
        out = xb[(np.arange(nb)[:, None], *coords)]  # (nb, per_batch, *x.shape[b+m:])
        return _out(op, out)

    @impl(rlx.ScatterNDOp)
    def run_scatter_nd(self, interpreter: Interpreter, op: rlx.ScatterNDOp, args: PythonValues):
        # a copy of the input in its compute dtype (float64 / int64), the updates applied tuple
        # after tuple (numpy's ufunc.at: duplicates combined in order), rounded once to the type
        out = _wide(args[0], op.input.type).copy()
        idx = np.asarray(args[1], dtype=np.int64)
        k = idx.shape[-1]
        tuples = idx.reshape(-1, k)
        coords = tuple(_in_range(op, tuples[:, t], out.shape[t], t) for t in range(k))
        upd = _wide(args[2], op.updates.type).reshape((tuples.shape[0], *out.shape[k:]))
        red = op.reduction.data
        if red == "none":
            out[coords] = upd
        else:
            {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[red].at(out, coords, upd)
        return _out(op, out)

    @impl(rlx.CumsumOp)
    def run_cumsum(self, interpreter: Interpreter, op: rlx.CumsumOp, args: PythonValues):
        x = _wide(args[0], op.input.type)  # float64 sums round once; int64 wraps like the type
        axis = _int(op.axis) % x.ndim
        if op.reverse is not None:
            x = np.flip(x, axis)
        y = np.cumsum(x, axis=axis)
        if op.exclusive is not None and y.shape[axis]:  # shifted one place, 0 first
            zero = np.zeros_like(np.take(y, [0], axis=axis))
            y = np.concatenate([zero, np.take(y, np.arange(y.shape[axis] - 1), axis=axis)], axis=axis)
        if op.reverse is not None:
            y = np.flip(y, axis)
        return _out(op, y)

    @impl(rlx.TopKOp)
    def run_topk(self, interpreter: Interpreter, op: rlx.TopKOp, args: PythonValues):
        x = np.asarray(args[0])
        axis, k = _int(op.axis) % x.ndim, _int(op.k)
        if op.smallest is not None:
            order = np.argsort(x, axis=axis, kind="stable")  # NaN last
        else:
            # descending with ties in index order: a stable ascending sort of
            # the reversed axis, read backwards (NaN first)
            n = x.shape[axis]
            order = (n - 1) - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
        idx = np.take(order, np.arange(k), axis=axis)
        return _out(op, np.take_along_axis(x, idx, axis=axis), idx)

    @impl(rlx.Conv2dOp)
    def run_conv2d(self, interpreter: Interpreter, op: rlx.Conv2dOp, args: PythonValues):
        x, w, *rest = (_wide(v, o.type) for v, o in zip(args, op.operands))
        shape = tuple(op.result.type.get_shape())  # pyright: ignore
        last = op.channels_last is not None  # NHWC in and out: the NCHW convolution between transposes
        if last:
            x, shape = np.transpose(x, (0, 3, 1, 2)), (shape[0], shape[3], shape[1], shape[2])
        if op.weight_hwio is not None:  # [kh, kw, in/groups, out] -> OIHW
            w = np.transpose(w, (3, 2, 0, 1))
        in_lo, in_hi, lo, hi = op.bounds()
        x = _clamped(x, in_lo, in_hi)  # before the zero padding, as a clamp op before the conv
        out = conv2d(
            x, w, rest[0] if rest else None, _ints(op.stride), _ints(op.padding),
            _ints(op.dilation), _int(op.groups), shape,
        )  # fmt: skip
        out = _clamped(out, lo, hi)
        return _out(op, np.transpose(out, (0, 2, 3, 1)) if last else out)

    @impl(rlx.ConvTranspose2dOp)
    def run_conv_transpose2d(
        self, interpreter: Interpreter, op: rlx.ConvTranspose2dOp, args: PythonValues
    ):
        x, w, *rest = (_wide(v, o.type) for v, o in zip(args, op.operands))
        out = conv_transpose2d(
            x, w, rest[0] if rest else None, _ints(op.stride), _ints(op.padding),
            _ints(op.output_padding), _ints(op.dilation), _int(op.groups),
            tuple(op.result.type.get_shape()),  # pyright: ignore
        )  # fmt: skip
        return _out(op, out)

    @impl(rlx.MaxPool2dOp)
    def run_max_pool2d(self, interpreter: Interpreter, op: rlx.MaxPool2dOp, args: PythonValues):
        x, oh, ow = _pool_input(op, args[0])
        kh, kw = _ints(op.kernel)
        xp = _pool_padded(op, x, -np.inf, oh, ow)
        out = np.full((*x.shape[:2], oh, ow), -np.inf)
        for _, _, v in _windows(xp, kh, kw, *_ints(op.stride), *_ints(op.dilation), oh, ow):
            out = np.maximum(out, v)
        return _pool_output(op, out)

    @impl(rlx.Im2colOp)
    def run_im2col(self, interpreter: Interpreter, op: rlx.Im2colOp, args: PythonValues):
        """Tap (ky, kx) of channel ci is element (ky * kw + kx) * c + ci of
        each output pixel's patch; the zero padding reads as 0, and the
        columns past kh * kw * c are 0."""
        x = _wide(args[0], op.input.type)
        if op.channels_first is None:
            x = np.moveaxis(x, 3, 1)  # NCHW
        kh, kw = _ints(op.kernel)
        n, oh, ow, cols = op.result.type.get_shape()  # pyright: ignore
        padded = _pad_hw(x, _ints(op.padding), 0.0)
        out = np.zeros((n, oh, ow, kh, kw, x.shape[1]), dtype=x.dtype)
        for i, j, v in _windows(padded, kh, kw, *_ints(op.stride), *_ints(op.dilation), oh, ow):
            out[:, :, :, i, j, :] = np.moveaxis(v, 1, 3)
        patches = out.reshape(n, oh, ow, -1)
        return _out(op, np.pad(patches, ((0, 0),) * 3 + ((0, cols - patches.shape[3]),)))

    @impl(rlx.AvgPool2dOp)
    def run_avg_pool2d(self, interpreter: Interpreter, op: rlx.AvgPool2dOp, args: PythonValues):
        """The sum over the window's taps inside the input, divided by their
        count, or with count_include_pad by the count of taps inside the
        padded input (taps past it, which only ceil mode makes, never count)."""
        x, oh, ow = _pool_input(op, args[0])
        kh, kw = _ints(op.kernel)
        stride, dil = _ints(op.stride), _ints(op.dilation)
        xp = _pool_padded(op, x, 0.0, oh, ow)
        pt, pl, pb, pr = _ints(op.padding)
        h, wd = x.shape[2:]
        counted = np.zeros((1, 1, *xp.shape[2:]))
        if op.count_include_pad is not None:
            counted[:, :, : pt + h + pb, : pl + wd + pr] = 1.0
        else:
            counted[:, :, pt : pt + h, pl : pl + wd] = 1.0
        total = np.zeros((*x.shape[:2], oh, ow))
        count = np.zeros((1, 1, oh, ow))
        for _, _, v in _windows(xp, kh, kw, *stride, *dil, oh, ow):
            total += v
        for _, _, v in _windows(counted, kh, kw, *stride, *dil, oh, ow):
            count += v
        with np.errstate(all="ignore"):
            return _pool_output(op, total / count)

    @impl(rlx.ResizeOp)
    def run_resize(self, interpreter: Interpreter, op: rlx.ResizeOp, args: PythonValues):
        x = np.asarray(args[0])
        if op.mode.data == "linear":
            x = _wide(x, op.input.type)
        return _out(op, resize(op, x))

    @impl(rlx.SwigluOp)
    def run_swiglu(self, interpreter: Interpreter, op: rlx.SwigluOp, args: PythonValues):
        x = _wide(args[0], op.input.type)
        half = x.shape[-1] // 2
        with np.errstate(all="ignore"):
            return _out(op, math_ref.silu(x[..., :half]) * x[..., half:])

    @impl(rlx.AttentionOp)
    def run_attention(self, interpreter: Interpreter, op: rlx.AttentionOp, args: PythonValues):
        q, k, v, *m = (_wide(a, o.type) for a, o in zip(args, op.operands))
        lq, lk, lv, lo = op.layouts()
        # physical = logical.transpose(layout): back to logical, compute, out again
        q, k, v = (np.transpose(x, np.argsort(p)) for x, p in ((q, lq), (k, lk), (v, lv)))
        # head windows: the heads [offset, offset + count) of a wider tensor
        q, k, v = (x if w is None else x[:, w[0] : w[0] + w[1]] for x, w in zip((q, k, v), op.windows()))
        # grouped-query attention: query head h reads key/value head h // (heads / their heads)
        k, v = (np.repeat(x, q.shape[1] // x.shape[1], axis=1) for x in (k, v))
        out = attention(q, k, v, m[0] if m else None, op.causal is not None, op.scale_value())
        return _out(op, np.transpose(out, lo))

    @impl(rlx.RopeOp)
    def run_rope(self, interpreter: Interpreter, op: rlx.RopeOp, args: PythonValues):
        x, c, s = (_wide(a, o.type) for a, o in zip(args, op.operands))
        return _out(op, rope(x, c, s))

    @impl(rlx.ElementwiseRegionOp)
    def run_elementwise_region(
        self, interpreter: Interpreter, op: rlx.ElementwiseRegionOp, args: PythonValues
    ):
        shape = tuple(op.outputs[0].type.get_shape())  # pyright: ignore
        windows = op.input_windows()
        args = [a[..., windows[j][0]:windows[j][0] + windows[j][1]] if j in windows else a for j, a in enumerate(args)]
        inputs = [np.broadcast_to(a, shape) for a in args]
        results = run_scalar_body(op.body, inputs)
        return tuple(
            to_tensor_type(np.broadcast_to(v, shape), r.type)  # pyright: ignore
            for v, r in zip(results, op.outputs, strict=True)
        )

    @impl(rlx.FusionOp)
    def run_fusion(self, interpreter: Interpreter, op: rlx.FusionOp, args: PythonValues):
        """The body's ops, one after another: a fusion computes what its
        ops would (the kernel's gain is where values live, not what they are)."""
        return interpreter.run_ssacfg_region(op.body, args, "rlx.fusion")

    @impl_terminator(rlx.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: rlx.YieldOp, args: PythonValues) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


RlxFunctions = register_impls(
    type("RlxFunctions", (_RlxFunctionsBase,), {"__doc__": __doc__, **_table_impls()})
)

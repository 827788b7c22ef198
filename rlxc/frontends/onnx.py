"""ONNX front end: `from_onnx(model, input_shapes=None) -> (module, params)`.

An ONNX graph becomes a `func.func @main` of rlx ops through `GraphBuilder`.

* Symbolic dimensions are bound from `input_shapes` (`{"input_ids": [1, 128]}`);
  one left unbound is an error naming the input and the dimension.
* Initializers become `rlx.param`s under their ONNX names (the arrays are
  returned in `params`) where a runtime op reads them, and stay import-time
  constants where only shape arithmetic does.
* Everything computable at import is folded there: a node whose inputs are
  all constants runs through the numpy interpreter (one definition of each
  op's semantics) on a scratch graph, and shape plumbing (Shape, Size,
  ConstantOfShape, Range) is plain numpy, so the module is fully static.
* The importer is a table, `EMITTERS`: ONNX op type -> a small function that
  emits rlx ops through the builder. An op type, attribute value or dtype it
  does not support is an `OnnxImportError` naming the op type, the node and
  what is supported; nothing is approximated.
* Each result keeps its ONNX value name as its SSA name, so the IR and an
  error point back to the node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlxc.dialects.types import DTYPES, dtype
from rlxc.frontends.builder import GraphBuilder, GraphError, Tensor


class OnnxImportError(ValueError):
    """The model uses something rlxc does not import; the message names it."""


#: ONNX TensorProto data type -> rlx dtype name.
ONNX_DTYPES = {d.onnx: n for n, d in DTYPES.items()}


@dataclass(frozen=True)
class Const:
    """A value known at import: its numpy carrier array and rlx dtype."""

    array: np.ndarray
    dtype: str
    initializer: str | None = None  # the ONNX initializer it came from

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)


Value = Tensor | Const


def _dtype_of(code: int, what: str) -> str:
    if code not in ONNX_DTYPES:
        import onnx

        name = onnx.TensorProto.DataType.Name(code) if code in onnx.TensorProto.DataType.values() else str(code)
        raise OnnxImportError(
            f"{what} has ONNX type {name}; rlx supports "
            + ", ".join(f"{onnx.TensorProto.DataType.Name(c)} ({n})" for c, n in ONNX_DTYPES.items())
        )
    return ONNX_DTYPES[code]


def _const_from_tensor(t, what: str, initializer: str | None = None) -> Const:
    from onnx import numpy_helper

    d = _dtype_of(t.data_type, what)
    a = numpy_helper.to_array(t)
    if d == "bf16":  # numpy_helper gives float32 (or ml_dtypes) values
        a = np.asarray(a, dtype=np.float32)
    return Const(np.asarray(a, dtype=dtype(d).carrier).copy(order="C"), d, initializer)


class Node:
    """One ONNX node being imported: its attributes, inputs and the builder."""

    def __init__(self, imp: OnnxImporter, proto, inputs: list[Value | None]):
        self.imp = imp
        self.g = imp.g
        self.proto = proto
        self.op_type = proto.op_type
        self.inputs = inputs
        self.opset = imp.opset
        from onnx import helper

        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}

    @property
    def where(self) -> str:
        name = self.proto.name or (self.proto.output[0] if self.proto.output else "?")
        return f"{self.op_type} node '{name}'"

    def error(self, msg: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {msg}")

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def input(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def tensor(self, i: int) -> Tensor:
        v = self.input(i)
        if v is None:
            raise self.error(f"input #{i} is required")
        return self.imp.tensor(v)

    def const(self, i: int, what: str) -> np.ndarray | None:
        """An input that must be known at import (a shape, axes, ...)."""
        v = self.input(i)
        if v is None:
            return None
        if not isinstance(v, Const):
            raise self.error(
                f"{what} (input #{i}) must be a constant at import: rlx shapes are static"
            )
        return v.array

    def ints(self, i: int, attr: str, what: str) -> list[int] | None:
        """Axes and the like: from input `i` (newer opsets) or attribute `attr`."""
        if attr in self.attrs:
            return [int(x) for x in self.attrs[attr]]
        a = self.const(i, what)
        return None if a is None else [int(x) for x in np.ravel(a)]

    def unsupported(self, what: str, supported: str) -> OnnxImportError:
        return self.error(f"{what} is not supported (supported: {supported})")


Emitter = Callable[[Node], list[Value]]

#: ONNX op type -> {opset version the form is defined since: its emitter}.
#: Most ops have one form (since 1); where ONNX changed an op's meaning or
#: inputs (Softmax's flatten form before 13, Clip's attributes before 11,
#: ...), each form has its own emitter, and a model gets the one of the
#: newest version at or below its opset.
EMITTERS: dict[str, dict[int, Emitter]] = {}


def emitter(*op_types: str, since: int = 1):
    """Registers an emitter for `op_types` from opset `since` on."""

    def register(fn: Emitter) -> Emitter:
        for t in op_types:
            EMITTERS.setdefault(t, {})[since] = fn
        return fn

    return register


# ------------------------------------------------------------------ elementwise

_UNARY = {
    "Sqrt": "sqrt", "Reciprocal": "reciprocal", "Neg": "neg", "Abs": "abs", "Exp": "exp",
    "Log": "log", "Erf": "erf", "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "relu",
    "Floor": "floor", "Ceil": "ceil", "Round": "round", "Sign": "sign", "Sin": "sin",
    "Cos": "cos",
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
    if y.dtype != x.dtype:  # ONNX allows an exponent of another type
        y = n.g.cast(y, x.dtype)
    return [n.g.pow(x, y)]


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
    """Clip-11: bounds as optional inputs."""
    x = n.tensor(0)
    lo = n.tensor(1) if n.input(1) is not None else None
    hi = n.tensor(2) if n.input(2) is not None else None
    return [_clamp(n, x, lo, hi)]


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
    return [x if x.dtype == to else n.g.cast(x, to)]


@emitter("CastLike")
def _cast_like(n: Node) -> list[Value]:
    x, like = n.tensor(0), n.input(1)
    to = like.dtype if like is not None else x.dtype
    return [x if x.dtype == to else n.g.cast(x, to)]


@emitter("Identity", "Dropout")
def _identity(n: Node) -> list[Value]:
    """Dropout at inference: the input, and a mask of all true."""
    v = n.input(0)
    assert v is not None
    if n.op_type == "Dropout":
        training = n.const(2, "training_mode") if n.input(2) is not None else None
        if n.attrs.get("is_test", 1) == 0 or (training is not None and bool(np.ravel(training)[0])):
            raise n.unsupported("training mode", "inference (training_mode false)")
        if len(n.proto.output) > 1 and n.proto.output[1]:
            return [v, Const(np.ones(v.shape, dtype=bool), "i1")]
    return [v]


# ------------------------------------------------------------------ reductions, norms


@emitter("Softmax", "LogSoftmax", since=13)
def _softmax(n: Node) -> list[Value]:
    """Softmax-13: along one axis (default the last)."""
    fn = n.g.softmax if n.op_type == "Softmax" else n.g.log_softmax
    return [fn(n.tensor(0), n.attr("axis", -1))]


@emitter("Softmax", "LogSoftmax")
def _softmax_flat(n: Node) -> list[Value]:
    """Softmax-1/11: the input coerced to 2-D at `axis` (default 1), each row
    normalised (views around the axis form)."""
    x = n.tensor(0)
    fn = n.g.softmax if n.op_type == "Softmax" else n.g.log_softmax
    axis = n.attr("axis", 1) % max(x.ndim, 1)
    rows = int(np.prod(x.shape[:axis]))
    flat = n.g.reshape(x, [rows, int(np.prod(x.shape[axis:]))])
    return [n.g.reshape(fn(flat, -1), x.shape)]


_REDUCE = {
    "ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min", "ReduceProd": "reduce_prod", "ReduceL2": "reduce_sum",
    "ReduceSumSquare": "reduce_sum",
}  # fmt: skip


#: A reduction's value over no elements (ONNX's identities).
_EMPTY_REDUCE = {
    "ReduceSum": 0.0, "ReduceMean": np.nan, "ReduceMax": -np.inf, "ReduceMin": np.inf,
    "ReduceProd": 1.0, "ReduceL2": 0.0, "ReduceSumSquare": 0.0,
}  # fmt: skip


@emitter(*_REDUCE)
def _reduce(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = n.ints(1, "axes", "axes")
    keep = bool(n.attr("keepdims", 1))
    if not axes:
        if n.attr("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(x.ndim))
    axes = sorted({a % x.ndim for a in axes}) if x.ndim else []
    if x.ndim and any(x.shape[a] == 0 for a in axes):  # over no elements: the identity
        shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes]
        fill = _EMPTY_REDUCE[n.op_type]
        if x.dtype in ("i32", "i64", "i1"):
            info = np.iinfo(np.int64 if x.dtype == "i64" else np.int32)
            fill = {-np.inf: info.min, np.inf: info.max}.get(fill, fill)
            if x.dtype == "i1":
                fill = {info.min: False, info.max: True}.get(fill, bool(fill))
        return [Const(np.full(shape, fill, dtype=dtype(x.dtype).carrier), x.dtype)]
    boolean = x.dtype == "i1"
    if boolean:  # max/min of booleans: any/all, on 0/1 integers
        if n.op_type not in ("ReduceMax", "ReduceMin"):
            raise n.unsupported("a bool input", "bool for ReduceMax and ReduceMin")
        x = n.g.cast(x, "i32")
    if n.op_type in ("ReduceL2", "ReduceSumSquare"):
        x = n.g.mul(x, x)
    if x.ndim == 0:
        return [x]
    y = getattr(n.g, _REDUCE[n.op_type])(x, axes, keep)
    if boolean:
        y = n.g.cast(y, "i1")
    return [n.g.sqrt(y) if n.op_type == "ReduceL2" else y]


@emitter("ArgMax", "ArgMin")
def _argmax(n: Node) -> list[Value]:
    """ArgMin is ArgMax of the negation (exact); select_last_index=1 is the
    first index on the axis reversed, mapped back (n - 1 - i)."""
    x = n.tensor(0)
    axis = n.attr("axis", 0) % max(x.ndim, 1)
    keep = bool(n.attr("keepdims", 1))
    if n.op_type == "ArgMin":
        x = n.g.neg(x) if x.dtype != "i1" else n.g.eq(x, n.imp.scalar(False, "i1"))
    if x.dtype == "i1":
        x = n.g.cast(x, "i32")
    if not n.attr("select_last_index", 0):
        return [n.g.argmax(x, axis, keep)]
    extent = x.shape[axis]
    rev = _reverse(n, x, axis)
    i = n.g.argmax(rev, axis, keep)
    return [n.g.sub(n.imp.scalar(extent - 1, "i64"), i)]


def _reverse(n: Node, x: Tensor, axis: int) -> Tensor:
    """x with `axis` reversed: a gather of the indices n-1, ..., 0."""
    idx = n.imp.constant(np.arange(x.shape[axis] - 1, -1, -1, dtype=np.int64), "i64")
    return n.g.gather(x, idx, axis)


def _stats(n: Node, x: Tensor, axes: list[int], eps: float) -> tuple[Tensor, Tensor]:
    """(mean, 1/sqrt(var + eps)) over `axes`, kept as extents of 1, in f32."""
    if x.dtype != "f32":
        x = n.g.cast(x, "f32")
    mean = n.g.reduce_mean(x, axes, True)
    d = n.g.sub(x, mean)
    var = n.g.reduce_mean(n.g.mul(d, d), axes, True)
    return mean, n.g.rsqrt(n.g.add(var, n.imp.scalar(eps, "f32")))


def _affine_param(n: Node, i: int, shape: Sequence[int], d: str, fill: float) -> Tensor:
    """Input `i` (scale or bias) broadcast to `shape`; `fill` where it is absent."""
    if n.input(i) is None:
        return n.imp.constant(np.full(shape, fill), d)
    t = n.tensor(i)
    if t.dtype != d:
        t = n.g.cast(t, d)
    return t if t.shape == tuple(shape) else n.g.expand(t, list(shape))


@emitter("LayerNormalization")
def _layer_norm(n: Node) -> list[Value]:
    """`rlx.layer_norm` over the axes from `axis` on (its statistics are f32,
    ONNX's default stash type); the optional Mean and InvStdDev outputs are
    the same statistics computed beside it."""
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    eps = float(n.attr("epsilon", 1e-5))
    if n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    norm_shape = x.shape[axis:]
    scale = _affine_param(n, 1, norm_shape, x.dtype, 1.0)
    bias = _affine_param(n, 2, norm_shape, x.dtype, 0.0)
    outs: list[Value] = [n.g.layer_norm(x, scale, bias, eps)]
    if any(o for o in n.proto.output[1:]):
        outs += list(_stats(n, x, list(range(axis, x.ndim)), eps))
    return outs


@emitter("RMSNormalization")
def _rms_norm(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    if n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    scale = _affine_param(n, 1, x.shape[axis:], x.dtype, 1.0)
    return [n.g.rms_norm(x, scale, float(n.attr("epsilon", 1e-5)))]


@emitter("InstanceNormalization", "GroupNormalization")
def _group_norm(n: Node) -> list[Value]:
    """Normalisation over groups of channels (all spatial positions): a
    `rlx.layer_norm` over [N, G, C/G * spatial], then the per-channel affine.
    InstanceNormalization is the case G = C."""
    x = n.tensor(0)
    c = x.shape[1]
    groups = c if n.op_type == "InstanceNormalization" else int(n.attr("num_groups"))
    if c % groups:
        raise n.error(f"{c} channels do not split into {groups} groups")
    if n.op_type == "GroupNormalization" and n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    eps = float(n.attr("epsilon", 1e-5))
    inner = int(np.prod(x.shape[1:])) // groups
    flat = n.g.reshape(x, [x.shape[0], groups, inner])
    ones = n.imp.constant(np.ones(inner), x.dtype)
    zeros = n.imp.constant(np.zeros(inner), x.dtype)
    y = n.g.reshape(n.g.layer_norm(flat, ones, zeros, eps), list(x.shape))
    per_channel = [c] + [1] * (x.ndim - 2)
    scale, bias = n.tensor(1), n.tensor(2)
    if scale.shape[0] != c:  # GroupNormalization opset 18: one scale per group
        scale = n.g.reshape(n.g.expand(n.g.reshape(scale, [groups, 1]), [groups, c // groups]), [c])
        bias = n.g.reshape(n.g.expand(n.g.reshape(bias, [groups, 1]), [groups, c // groups]), [c])
    scale, bias = (t if t.dtype == x.dtype else n.g.cast(t, x.dtype) for t in (scale, bias))
    return [n.g.add(n.g.mul(y, n.g.reshape(scale, per_channel)), n.g.reshape(bias, per_channel))]


@emitter("BatchNormalization")
def _batch_norm(n: Node) -> list[Value]:
    """Inference form, folded into a per-channel scale and shift."""
    if n.attr("training_mode", 0) or any(o for o in n.proto.output[1:]):
        raise n.unsupported("training mode", "inference (training_mode=0, one output)")
    x = n.tensor(0)
    scale, bias, mean, var = (n.const(i, name) for i, name in enumerate(("scale", "B", "mean", "var"), 1))
    s = scale / np.sqrt(var.astype(np.float64) + n.attr("epsilon", 1e-5))
    t = bias - mean * s
    tail = [1] * (x.ndim - 2)
    s_t = n.imp.constant(s.reshape(-1, *tail), x.dtype)
    t_t = n.imp.constant(t.reshape(-1, *tail), x.dtype)
    return [n.g.add(n.g.mul(x, s_t), t_t)]


# ------------------------------------------------------------------ matmul


@emitter("MatMul")
def _matmul(n: Node) -> list[Value]:
    a, b = n.tensor(0), n.tensor(1)
    squeeze = []
    if a.ndim == 1:
        a = n.g.reshape(a, [1, a.shape[0]])
        squeeze.append(-2)
    if b.ndim == 1:
        b = n.g.reshape(b, [b.shape[0], 1])
        squeeze.append(-1)
    y = n.g.matmul(a, b)
    if squeeze:
        shape = list(y.shape)
        for ax in sorted(squeeze):
            shape.pop(ax if ax == -1 else len(shape) - 2)
        y = n.g.reshape(y, shape)
    return [y]


@emitter("Gemm")
def _gemm(n: Node) -> list[Value]:
    a, b = n.tensor(0), n.tensor(1)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if n.attr("transA", 0):
        a = n.g.transpose(a, [1, 0])
    c = n.tensor(2) if n.input(2) is not None else None
    if n.attr("transB", 0) and alpha == 1.0 and beta == 1.0 and (c is None or c.shape == (b.shape[0],)):
        return [n.g.linear(a, b, c)]  # x · wᵀ + b: one gemm with a bias epilogue
    if n.attr("transB", 0):
        b = n.g.transpose(b, [1, 0])
    y = n.g.matmul(a, b)
    if alpha != 1.0:
        y = n.g.mul(y, n.imp.scalar(alpha, y.dtype))
    if c is not None:
        y = n.g.add(y, c if beta == 1.0 else n.g.mul(c, n.imp.scalar(beta, c.dtype)))
    return [y]


# ------------------------------------------------------------------ shape


@emitter("Reshape")
def _reshape(n: Node) -> list[Value]:
    x = n.tensor(0)
    shape = [int(s) for s in n.const(1, "the shape")]
    allow_zero = n.attr("allowzero", 0)
    out = [x.shape[i] if s == 0 and not allow_zero else s for i, s in enumerate(shape)]
    if out.count(-1) > 1:
        raise n.error(f"shape {shape} has more than one -1")
    if -1 in out:
        known = int(np.prod([s for s in out if s != -1]))
        out[out.index(-1)] = int(np.prod(x.shape)) // max(known, 1)
    return [n.g.reshape(x, out)]


@emitter("Flatten")
def _flatten(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    return [n.g.reshape(x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])]


@emitter("Squeeze")
def _squeeze(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = n.ints(1, "axes", "axes")
    axes = [a % x.ndim for a in axes] if axes else [i for i, d in enumerate(x.shape) if d == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise n.error(f"cannot squeeze axis {a} of extent {x.shape[a]}")
    return [n.g.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])]


@emitter("Unsqueeze")
def _unsqueeze(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = n.ints(1, "axes", "axes") or []
    rank = x.ndim + len(axes)
    axes = sorted(a % rank for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return [n.g.reshape(x, shape)]


@emitter("Transpose")
def _transpose(n: Node) -> list[Value]:
    x = n.tensor(0)
    perm = n.attr("perm")
    return [n.g.transpose(x, list(perm) if perm is not None else list(range(x.ndim))[::-1])]


@emitter("Concat")
def _concat(n: Node) -> list[Value]:
    xs = [n.tensor(i) for i in range(len(n.inputs)) if n.input(i) is not None]
    return [n.g.concat(xs, n.attr("axis"))]


@emitter("Split")
def _split(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", 0) % x.ndim
    sizes = n.ints(1, "split", "split")
    outs = len(n.proto.output)
    if not sizes:
        per = -(-x.shape[axis] // outs)
        sizes = [min(per, x.shape[axis] - i * per) for i in range(outs)]
    result, start = [], 0
    for s in sizes:
        result.append(n.g.slice(x, [start], [start + s], [axis]))
        start += s
    return result


@emitter("Slice")
def _slice_attrs(n: Node) -> list[Value]:
    """Slice-1: starts, ends and axes as attributes."""
    x = n.tensor(0)
    return [n.g.slice(x, list(n.attr("starts")), list(n.attr("ends")), n.attr("axes"))]


@emitter("Slice", since=10)
def _slice(n: Node) -> list[Value]:
    """Slice-10: starts, ends, axes and steps as inputs known at import."""
    x = n.tensor(0)
    starts, ends = n.ints(1, "-", "starts"), n.ints(2, "-", "ends")
    axes, steps = n.ints(3, "-", "axes"), n.ints(4, "-", "steps")
    return [n.g.slice(x, list(starts), list(ends), axes, steps)]


@emitter("Gather")
def _gather(n: Node) -> list[Value]:
    return [n.g.gather(n.tensor(0), n.tensor(1), n.attr("axis", 0))]


@emitter("Expand")
def _expand(n: Node) -> list[Value]:
    x = n.tensor(0)
    shape = [int(s) for s in n.const(1, "the shape")]
    out = np.broadcast_shapes(x.shape, tuple(shape))
    return [x if tuple(out) == x.shape else n.g.expand(x, list(out))]


@emitter("Tile")
def _tile(n: Node) -> list[Value]:
    """numpy.tile as a view, a broadcast and a view: each axis d becomes
    [repeats, d], expanded, then merged."""
    x = n.tensor(0)
    reps = [int(r) for r in n.const(1, "repeats")]
    if len(reps) != x.ndim:
        raise n.error(f"repeats has {len(reps)} entries for a rank-{x.ndim} input")
    if all(r == 1 for r in reps):
        return [x]
    inter = [v for d in x.shape for v in (1, d)]
    big = [v for r, d in zip(reps, x.shape) for v in (r, d)]
    y = n.g.expand(n.g.reshape(x, inter), big)
    return [n.g.reshape(y, [r * d for r, d in zip(reps, x.shape)])]


@emitter("Trilu")
def _trilu(n: Node) -> list[Value]:
    """The lower (upper=0) or upper triangle of the last two axes from
    diagonal k: a select with a mask known at import."""
    x = n.tensor(0)
    k = int(np.ravel(n.const(1, "k"))[0]) if n.input(1) is not None else 0
    rows, cols = x.shape[-2:]
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    keep = (j - i >= k) if n.attr("upper", 1) else (j - i <= k)
    zero = n.imp.scalar(0, x.dtype)
    return [n.g.select(n.imp.constant(keep, "i1"), x, zero)]


def _einsum_terms(n: Node, eq: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The equation's input terms and output term, `...` spelled out as
    capital letters (free in the equation's lower-case alphabet)."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise n.error(f"equation '{eq}' has {len(terms)} inputs, the node {len(shapes)}")
    ell = ""
    spelled = []
    for t, shape in zip(terms, shapes):
        if "..." in t:
            k = len(shape) - (len(t) - 3)
            letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:k]
            ell = letters if len(letters) > len(ell) else ell
            t = t.replace("...", letters)
        if len(t) != len(shape):
            raise n.error(f"term '{t}' of equation '{eq}' does not match a rank-{len(shape)} input")
        spelled.append(t)
    if not arrow:  # implicit output: the ellipsis, then indices used once, sorted
        once = sorted(c for c in set("".join(spelled)) if "".join(spelled).count(c) == 1 and c.islower())
        out = ell + "".join(once)
    else:
        out = out.replace("...", ell)
    for t in spelled:
        if len(set(t)) != len(t):
            raise n.unsupported(f"a repeated index in term '{t}' (a diagonal)", "distinct indices per term")
    return spelled, out


def _einsum_reduce(n: Node, x: Tensor, term: str, keep: str) -> tuple[Tensor, str]:
    """Sums away the indices of `term` not in `keep`."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return n.g.reduce_sum(x, axes, False), "".join(c for c in term if c in keep)


def _einsum_permute(n: Node, x: Tensor, term: str, order: str) -> Tensor:
    perm = [term.index(c) for c in order]
    return x if perm == sorted(perm) else n.g.transpose(x, perm)


@emitter("Einsum")
def _einsum(n: Node) -> list[Value]:
    """One or two operands: indices summed in one operand only are reduced
    first; two operands become one batched matmul over [batch, free, contracted]
    layouts (transposes and views around `rlx.matmul`), then the output order."""
    xs = [n.tensor(i) for i in range(len(n.inputs))]
    if len(xs) not in (1, 2):
        raise n.unsupported(f"{len(xs)} operands", "one or two")
    terms, out = _einsum_terms(n, n.attr("equation"), [x.shape for x in xs])
    if len(xs) == 1:
        y, t = _einsum_reduce(n, xs[0], terms[0], out)
        return [_einsum_permute(n, y, t, out)]
    (a, ta), (b, tb) = (_einsum_reduce(n, x, t, out + "".join(terms[1 - k])) for k, (x, t) in enumerate(zip(xs, terms)))
    dims = {c: d for t, x in ((ta, a), (tb, b)) for c, d in zip(t, x.shape)}
    for t, x in ((ta, a), (tb, b)):
        for c, d in zip(t, x.shape):
            if dims[c] != d and d != 1 and dims[c] != 1:
                raise n.error(f"index '{c}' has extents {dims[c]} and {d}")
    batch = "".join(c for c in ta if c in tb and c in out)
    contract = "".join(c for c in ta if c in tb and c not in out)
    free_a = "".join(c for c in ta if c not in tb)
    free_b = "".join(c for c in tb if c not in ta)
    size = lambda cs: int(np.prod([max(dims[c] for t, x in ((ta, a), (tb, b)) for cc, dd in zip(t, x.shape) if cc == c) for c in cs]))  # noqa: E731
    bshape = [size(c) for c in batch]
    a2 = n.g.reshape(_einsum_permute(n, a, ta, batch + free_a + contract), [*bshape, size(free_a), size(contract)])
    b2 = n.g.reshape(_einsum_permute(n, b, tb, batch + contract + free_b), [*bshape, size(contract), size(free_b)])
    if a.dtype != b.dtype:
        raise n.error(f"operands of types {a.dtype} and {b.dtype}")
    y = n.g.matmul(a2, b2)
    term = batch + free_a + free_b
    y = n.g.reshape(y, [size(c) for c in term])
    return [_einsum_permute(n, y, term, out)]


@emitter("Pad")
def _pad_attrs(n: Node) -> list[Value]:
    """Pad-2: pads and value as attributes."""
    x = n.tensor(0)
    return _padded(n, x, list(n.attr("pads")), float(n.attr("value", 0.0)), list(range(x.ndim)))


@emitter("Pad", since=11)
def _pad(n: Node) -> list[Value]:
    """Pad-11/18: pads, constant_value and axes as inputs known at import."""
    x = n.tensor(0)
    cv = n.const(2, "constant_value")
    value = float(np.ravel(cv)[0]) if cv is not None and cv.size else 0.0
    axes = n.ints(3, "-", "axes") or list(range(x.ndim))
    return _padded(n, x, [int(p) for p in n.const(1, "pads")], value, axes)


def _padded(n: Node, x: Tensor, pads: list[int], value: float, axes: list[int]) -> list[Value]:
    """`rlx.pad` (constant, reflect, edge, wrap); negative pads crop first."""
    mode = n.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise n.unsupported(f"mode='{mode}'", "constant, reflect, edge, wrap")
    axes = [a % x.ndim for a in axes]
    if len(pads) != 2 * len(axes):
        raise n.error(f"pads has {len(pads)} entries for {len(axes)} axes")
    low, high = [0] * x.ndim, [0] * x.ndim
    for i, a in enumerate(axes):
        low[a], high[a] = pads[i], pads[len(axes) + i]
    if any(p < 0 for p in low + high):  # cropping: a slice, then the rest
        starts = [max(-lo, 0) for lo in low]
        ends = [d - max(-hi, 0) for d, hi in zip(x.shape, high)]
        x = n.g.slice(x, starts, ends)
        low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
    if not any(low + high):
        return [x]
    return [n.g.pad(x, low, high, mode, value)]


@emitter("CumSum")
def _cumsum(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = int(np.ravel(n.const(1, "axis"))[0])
    return [n.g.cumsum(x, axis % x.ndim, bool(n.attr("exclusive", 0)), bool(n.attr("reverse", 0)))]


@emitter("GatherElements")
def _gather_elements(n: Node) -> list[Value]:
    x = n.tensor(0)
    return [n.g.gather_elements(x, n.tensor(1), n.attr("axis", 0) % x.ndim)]


@emitter("GatherND")
def _gather_nd(n: Node) -> list[Value]:
    return [n.g.gather_nd(n.tensor(0), n.tensor(1), n.attr("batch_dims", 0))]


@emitter("TopK")
def _topk_attr(n: Node) -> list[Value]:
    """TopK-1: k as an attribute."""
    return _topk_of(n, int(n.attr("k")))


@emitter("TopK", since=10)
def _topk(n: Node) -> list[Value]:
    """TopK-10/11: K as an input known at import."""
    return _topk_of(n, int(np.ravel(n.const(1, "K"))[0]))


def _topk_of(n: Node, k: int) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    values, indices = n.g.topk(x, k, axis, bool(n.attr("largest", 1)), bool(n.attr("sorted", 1)))
    return [values, indices]


@emitter("ConvTranspose")
def _conv_transpose(n: Node) -> list[Value]:
    """`rlx.conv_transpose2d`; 1-D as 2-D with a height of 1. An explicit
    output_shape (or auto_pad SAME_*) becomes the pads that give it."""
    x, w = n.tensor(0), n.tensor(1)
    b = n.tensor(2) if n.input(2) is not None else None
    nd = x.ndim - 2
    if nd not in (1, 2):
        raise n.unsupported(f"a {nd}-D transposed convolution", "1-D and 2-D")
    kernel = list(w.shape[2:])
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    out_pad = list(n.attr("output_padding", [0] * nd))
    auto = n.attr("auto_pad", "NOTSET")
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise n.unsupported(f"auto_pad={auto}", "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    out_shape = n.attr("output_shape")
    if out_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        spatial = x.shape[2:]
        want = list(out_shape)[-nd:] if out_shape is not None else [d * s for d, s in zip(spatial, strides)]
        begin, end = [], []
        for i in range(nd):
            full = strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1
            total = full - want[i]
            if total < 0:  # a larger output than the kernel reaches: the rest is output padding
                out_pad[i] -= total
                total = 0
            small, big = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        pads = begin + end
    else:
        pads = list(n.attr("pads", [0] * 2 * nd)) if auto == "NOTSET" else [0] * 2 * nd
    if nd == 1:
        x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
        w = n.g.reshape(w, [*w.shape[:2], 1, w.shape[2]])
        strides, dil, out_pad, pads = [1, *strides], [1, *dil], [0, *out_pad], [0, pads[0], 0, pads[1]]
    y = n.g.conv_transpose2d(x, w, b, strides, pads, dil, out_pad, n.attr("group", 1))
    return [n.g.reshape(y, [*y.shape[:2], y.shape[3]]) if nd == 1 else y]


_RESIZE_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                  "half_pixel_symmetric", "tf_half_pixel_for_nn")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@emitter("Resize", since=10)
def _resize_10(n: Node) -> list[Value]:
    """Resize-10: (X, scales), asymmetric coordinates, floor for nearest."""
    return _resized(n, "asymmetric", "floor", n.const(1, "scales"), None)


@emitter("Resize", since=11)
def _resize(n: Node) -> list[Value]:
    """Resize-11..19: (X, roi, scales, sizes)."""
    return _resized(
        n,
        n.attr("coordinate_transformation_mode", "half_pixel"),
        n.attr("nearest_mode", "round_prefer_floor"),
        n.const(2, "scales"),
        n.const(3, "sizes"),
    )


def _resized(n: Node, coord: str, nearest: str, scales_in, sizes_in) -> list[Value]:
    """`rlx.resize` (nearest, linear): output extents and the scales of the
    coordinate transform are computed here, as ONNX defines them."""
    x = n.tensor(0)
    mode = n.attr("mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise n.unsupported(f"mode='{mode}'", "nearest, linear")
    if coord not in _RESIZE_COORDS:
        raise n.unsupported(f"coordinate_transformation_mode='{coord}'", ", ".join(_RESIZE_COORDS))
    if nearest not in _NEAREST_MODES:
        raise n.unsupported(f"nearest_mode='{nearest}'", ", ".join(_NEAREST_MODES))
    if n.attr("antialias", 0):
        raise n.unsupported("antialias=1", "antialias=0")
    r = x.ndim
    axes = [a % r for a in (n.attr("axes") or range(r))]
    policy = n.attr("keep_aspect_ratio_policy", "stretch")
    if sizes_in is not None and sizes_in.size:
        out = list(x.shape)
        for i, a in enumerate(axes):
            out[a] = int(sizes_in[i])
        scales = [o / d for o, d in zip(out, x.shape)]
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise n.unsupported(f"keep_aspect_ratio_policy='{policy}'", "stretch, not_larger, not_smaller")
            pick = min if policy == "not_larger" else max
            sc = pick(scales[a] for a in axes)
            scales = [sc if i in axes else 1.0 for i in range(r)]
            out = [int(sc * d + 0.5) if i in axes else d for i, d in enumerate(x.shape)]
    elif scales_in is not None and scales_in.size:
        scales = [1.0] * r
        for i, a in enumerate(axes):
            scales[a] = float(scales_in[i])
        out = [int(s * d) for s, d in zip(scales, x.shape)]
    else:
        raise n.error("one of scales and sizes must be given")
    if out == list(x.shape) and all(s == 1.0 for s in scales):
        return [x]
    return [n.g.resize(x, out, scales, mode, coord, nearest)]


# ------------------------------------------------------------------ import-time values


@emitter("Constant")
def _constant(n: Node) -> list[Value]:
    a = n.proto.attribute[0]
    if a.name == "value":
        return [_const_from_tensor(a.t, n.where)]
    v = n.attr(a.name)
    kinds = {"value_float": "f32", "value_floats": "f32", "value_int": "i64", "value_ints": "i64"}
    if a.name not in kinds:
        raise n.unsupported(f"attribute '{a.name}'", ", ".join(["value", *kinds]))
    d = kinds[a.name]
    return [Const(np.asarray(v, dtype=dtype(d).carrier), d)]


@emitter("ConstantOfShape")
def _constant_of_shape(n: Node) -> list[Value]:
    shape = [int(s) for s in n.const(0, "the shape")]
    v = n.proto.attribute[0].t if n.proto.attribute else None
    c = _const_from_tensor(v, n.where) if v is not None else Const(np.zeros(1, np.float32), "f32")
    return [Const(np.full(shape, c.array.ravel()[0], dtype=c.array.dtype), c.dtype)]


@emitter("Shape")
def _shape(n: Node) -> list[Value]:
    shape = np.asarray(n.input(0).shape, dtype=np.int64)  # pyright: ignore[reportOptionalMemberAccess]
    start, end = n.attr("start", 0), n.attr("end", None)
    return [Const(shape[slice(start, end)], "i64")]


@emitter("Size")
def _size(n: Node) -> list[Value]:
    return [Const(np.asarray(np.prod(n.input(0).shape), dtype=np.int64), "i64")]  # pyright: ignore


@emitter("Range")
def _range(n: Node) -> list[Value]:
    start, limit, delta = (n.const(i, name) for i, name in enumerate(("start", "limit", "delta")))
    v = n.input(0)
    assert isinstance(v, Const)
    return [Const(np.arange(start, limit, delta).astype(v.array.dtype), v.dtype)]


#: Ops whose emitters read only shapes or attributes: never run on a scratch graph.
_IMPORT_TIME = {"Constant", "ConstantOfShape", "Shape", "Size", "Range", "Identity", "Dropout"}


# ------------------------------------------------------------------ conv, pool


def _spatial_pads(n: Node, x_shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                  dilations: Sequence[int]) -> list[int]:
    """ONNX pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...], auto_pad resolved."""
    auto = n.attr("auto_pad", "NOTSET")
    nd = len(kernel)
    if auto in ("NOTSET", "VALID"):
        pads = list(n.attr("pads", [0] * 2 * nd)) if auto == "NOTSET" else [0] * 2 * nd
        return pads
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise n.unsupported(f"auto_pad={auto}", "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    begin, end = [], []
    for size, k, s, d in zip(x_shape, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, big = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else big)
        end.append(big if auto == "SAME_UPPER" else small)
    return begin + end


@emitter("Conv")
def _conv(n: Node) -> list[Value]:
    """2-D convolutions as they are; 1-D ones as 2-D with a height of 1 (views)."""
    x, w = n.tensor(0), n.tensor(1)
    b = n.tensor(2) if n.input(2) is not None else None
    nd = x.ndim - 2
    if nd not in (1, 2):
        raise n.unsupported(f"a {nd}-D convolution", "1-D and 2-D")
    kernel = list(w.shape[2:])
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    pads = _spatial_pads(n, x.shape[2:], kernel, strides, dil)
    if nd == 1:
        x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
        w = n.g.reshape(w, [*w.shape[:2], 1, w.shape[2]])
        strides, dil, pads = [1, *strides], [1, *dil], [0, pads[0], 0, pads[1]]
    y = n.g.conv2d(x, w, b, strides, pads, dil, n.attr("group", 1))
    return [n.g.reshape(y, [*y.shape[:2], y.shape[3]]) if nd == 1 else y]


@emitter("MaxPool", "AveragePool")
def _pool(n: Node) -> list[Value]:
    """2-D pools as they are; 1-D pools as 2-D with a height of 1 (views)."""
    x = n.tensor(0)
    nd = x.ndim - 2
    if nd not in (1, 2):
        raise n.unsupported(f"a {nd}-D pool", "1-D (NCW) and 2-D (NCHW)")
    if len(n.proto.output) > 1 and n.proto.output[1]:
        raise n.unsupported("the Indices output", "the first output only")
    if n.attr("storage_order", 0):
        raise n.unsupported("storage_order=1", "0 (row major)")
    kernel = list(n.attr("kernel_shape"))
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    pads = _spatial_pads(n, x.shape[2:], kernel, strides, dil)
    if nd == 1:
        x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
        kernel, strides, dil, pads = [1, *kernel], [1, *strides], [1, *dil], [0, pads[0], 0, pads[1]]
    ceil = bool(n.attr("ceil_mode", 0))
    if n.op_type == "MaxPool":
        y = n.g.max_pool2d(x, kernel, strides, pads, dilation=dil, ceil_mode=ceil)
    else:
        y = n.g.avg_pool2d(x, kernel, strides, pads, bool(n.attr("count_include_pad", 0)), dilation=dil, ceil_mode=ceil)
    return [n.g.reshape(y, [*y.shape[:2], y.shape[3]]) if nd == 1 else y]


@emitter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = list(range(2, x.ndim))
    fn = n.g.reduce_mean if n.op_type == "GlobalAveragePool" else n.g.reduce_max
    return [fn(x, axes, True)]


# ------------------------------------------------------------------ the importer


_NAME = re.compile(r"[^A-Za-z0-9_]")


def _ssa_name(onnx_name: str) -> str:
    """An ONNX value name as an SSA name hint (`%` + letters, digits, `_`)."""
    hint = _NAME.sub("_", onnx_name)
    return hint if hint[:1].isalpha() else f"v{hint}"


class OnnxImporter:
    """Walks one ONNX graph in order, emitting rlx ops (see the module docstring)."""

    def __init__(self, model, input_shapes: Mapping[str, Sequence[int]] | None):
        self.model = model
        self.graph = model.graph
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13
        )
        self.input_shapes = dict(input_shapes or {})
        self.g = GraphBuilder()
        self.params: dict[str, np.ndarray] = {}
        self.values: dict[str, Value] = {}
        self._param_tensors: dict[str, Tensor] = {}

    # -- values
    def scalar(self, v: float | int | bool, d: str) -> Tensor:
        return self.constant(np.asarray(v), d)

    def constant(self, a: np.ndarray, d: str) -> Tensor:
        return self.g.constant(np.asarray(a, dtype=dtype(d).carrier), d)

    def tensor(self, v: Value) -> Tensor:
        """A value as a graph tensor: an initializer becomes an `rlx.param`,
        another import-time value an `rlx.constant`."""
        if isinstance(v, Tensor):
            return v
        if v.initializer is not None:
            if v.initializer not in self._param_tensors:
                self.params[v.initializer] = v.array
                t = self.g.param(v.initializer, v.shape, v.dtype)
                t.value.name_hint = _ssa_name(v.initializer)
                self._param_tensors[v.initializer] = t
            return self._param_tensors[v.initializer]
        return self.constant(v.array, v.dtype)

    # -- the walk
    def run(self):
        for init in self.graph.initializer:
            self.values[init.name] = _const_from_tensor(init, f"initializer '{init.name}'", init.name)
        inputs = [i for i in self.graph.input if i.name not in self.values]
        for name in self.input_shapes:
            if name not in {i.name for i in inputs}:
                raise OnnxImportError(
                    f"input_shapes names '{name}', which is not a graph input; the inputs are: "
                    + ", ".join(i.name for i in inputs)
                )
        for i in inputs:
            d = self._input_dtype(i)
            self.values[i.name] = self.g.input(i.name, self._input_shape(i), d)
        for proto in self.graph.node:
            self._node(proto)
        outs = []
        for o in self.graph.output:
            if o.name not in self.values:
                raise OnnxImportError(f"graph output '{o.name}' is produced by no node")
            outs.append(self.tensor(self.values[o.name]))
        return self.g.build(outs), self.params

    def _input_dtype(self, i) -> str:
        kind = i.type.WhichOneof("value")
        if kind != "tensor_type":
            raise OnnxImportError(
                f"input '{i.name}' is a{'n' if (kind or 'x')[0] in 'aeiou' else ''} "
                f"{(kind or 'untyped').removesuffix('_type')} value; rlx values are tensors"
            )
        return _dtype_of(i.type.tensor_type.elem_type, f"input '{i.name}'")

    def _input_shape(self, i) -> list[int]:
        given = self.input_shapes.get(i.name)
        dims = i.type.tensor_type.shape.dim
        if given is not None and len(given) != len(dims):
            raise OnnxImportError(
                f"input_shapes['{i.name}'] has rank {len(given)}, the model's input has rank {len(dims)}"
            )
        shape = []
        for k, d in enumerate(dims):
            if d.HasField("dim_value"):
                if given is not None and int(given[k]) != d.dim_value:
                    raise OnnxImportError(
                        f"input_shapes['{i.name}'][{k}] = {given[k]}, but the model fixes that dimension to {d.dim_value}"
                    )
                shape.append(d.dim_value)
            elif given is not None:
                shape.append(int(given[k]))
            else:
                sym = d.dim_param or "?"
                raise OnnxImportError(
                    f"input '{i.name}' dimension {k} ('{sym}') is symbolic; bind it with "
                    f"input_shapes={{'{i.name}': [...]}} (on the command line: --shape "
                    f"{i.name}=D0,D1,...)"
                )
        return shape

    def _node(self, proto) -> None:
        fn = emitter_for(proto.op_type, self.opset)
        name = proto.name or (proto.output[0] if proto.output else "?")
        if proto.domain not in ("", "ai.onnx") or fn is None:
            raise OnnxImportError(
                f"{proto.op_type} node '{name}' (domain '{proto.domain or 'ai.onnx'}'): this op "
                f"type is not supported; supported ops: {', '.join(sorted(EMITTERS))}"
            )
        inputs = []
        for i in proto.input:
            if not i:
                inputs.append(None)
            elif i not in self.values:
                raise OnnxImportError(f"{proto.op_type} node '{name}' reads '{i}', which is not defined before it")
            else:
                inputs.append(self.values[i])
        node = Node(self, proto, inputs)
        try:
            if proto.op_type not in _IMPORT_TIME and inputs and all(
                isinstance(v, Const) for v in inputs if v is not None
            ):
                outs = self._fold(proto, inputs)
            else:
                outs = fn(node)
        except GraphError as e:
            raise OnnxImportError(f"{node.where}: {e}") from None
        for out_name, v in zip(proto.output, outs):
            if out_name:
                if isinstance(v, Tensor) and v.value.name_hint is None:
                    v.value.name_hint = _ssa_name(out_name)
                self.values[out_name] = v

    def _fold(self, proto, inputs: list[Value | None]) -> list[Value]:
        """Runs a node whose inputs are all known on the numpy interpreter."""
        from rlxc.interp import interpret

        sub = OnnxImporter.__new__(OnnxImporter)
        sub.__dict__.update(self.__dict__)
        sub.g = GraphBuilder()
        sub.params, sub._param_tensors = {}, {}
        feeds, args = {}, []
        for k, v in enumerate(inputs):
            if v is None or k in IMPORT_TIME_INPUTS.get(proto.op_type, ()):
                args.append(v)  # absent, or read as an import-time value
                continue
            assert isinstance(v, Const)
            feeds[f"in{k}"] = v.array
            args.append(sub.g.input(f"in{k}", v.shape, v.dtype))
        outs = emitter_for(proto.op_type, self.opset)(Node(sub, proto, args))  # pyright: ignore
        tensors = [sub.tensor(o) for o in outs]
        results = interpret(sub.g.build(tensors), feeds, sub.params)
        return [Const(np.asarray(r), t.dtype) for r, t in zip(results, tensors)]


def emitter_for(op_type: str, opset: int) -> Emitter | None:
    """The emitter of `op_type`'s form at `opset` (None: not supported)."""
    forms = EMITTERS.get(op_type, {})
    since = max((v for v in forms if v <= opset), default=None)
    return None if since is None else forms[since]


#: Inputs an emitter reads as import-time values (shapes, axes, ...), by op
#: type: they must be constants (initializers, Constant nodes, or shape
#: arithmetic the importer folds), since rlx shapes are static.
IMPORT_TIME_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,), "Expand": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "Slice": (1, 2, 3, 4),
    "Split": (1,), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL2": (1,), "ReduceSumSquare": (1,), "ReduceL1": (1,),
    "ReduceLogSum": (1,), "ReduceLogSumExp": (1,), "BatchNormalization": (1, 2, 3, 4),
    "ConstantOfShape": (0,), "Range": (0, 1, 2), "Tile": (1,), "Pad": (1, 2, 3), "TopK": (1,),
    "Resize": (1, 2, 3), "Upsample": (1,), "CumSum": (1,), "Trilu": (1,), "Dropout": (1, 2),
}  # fmt: skip


def import_time_inputs(graph) -> set[str]:
    """Names of the values that `graph`'s nodes read at import (see
    `IMPORT_TIME_INPUTS`): a graph input among them must be bound as a
    constant (an initializer) before import."""
    names = set()
    for node in graph.node:
        for k in IMPORT_TIME_INPUTS.get(node.op_type, ()):
            if k < len(node.input) and node.input[k]:
                names.add(node.input[k])
    return names


def from_onnx(model, input_shapes: Mapping[str, Sequence[int]] | None = None):
    """Imports an ONNX model (a path or an `onnx.ModelProto`, external data
    included) as `(module, params)`: a verified rlx module and the
    initializers its `rlx.param`s name. See the module docstring."""
    import onnx

    if isinstance(model, str | Path):
        path = Path(model)
        if not path.exists():
            raise OnnxImportError(f"{path}: no such file")
        try:
            model = onnx.load(str(path))
        except Exception as e:  # a protobuf DecodeError, say
            raise OnnxImportError(f"{path}: not a readable ONNX model ({e})") from None
    if not isinstance(model, onnx.ModelProto):
        raise OnnxImportError(f"from_onnx takes a path or an onnx.ModelProto, got {type(model).__name__}")
    return OnnxImporter(model, input_shapes).run()

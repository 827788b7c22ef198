"""The importer's vocabulary: import-time values (`Const`), the node an
emitter reads (`Node`), the emitter table keyed by op type and opset, and
which inputs must be known at import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlxc.dialects.types import DTYPES, dtype
from rlxc.frontends.builder import GraphBuilder, Tensor


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
    #: An initializer of a quantized integer type rlx does not have (INT8,
    #: UINT8, ...: `QUANT_RANGES`), held as i32 values: its ONNX type name.
    #: Only DequantizeLinear (and QuantizeLinear's zero point) may read it.
    narrow: str | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)


Value = Tensor | Const


def onnx_type_name(code: int) -> str:
    """ONNX's name of TensorProto data type `code` (the number where it has none)."""
    from onnx import TensorProto

    return TensorProto.DataType.Name(code) if code in TensorProto.DataType.values() else str(code)


def _dtype_of(code: int, what: str) -> str:
    if code not in ONNX_DTYPES:
        raise OnnxImportError(
            f"{what} has ONNX type {onnx_type_name(code)}; rlx supports "
            + ", ".join(f"{onnx_type_name(c)} ({n})" for c, n in ONNX_DTYPES.items())
        )
    return ONNX_DTYPES[code]


#: The quantized integer types (QuantizeLinear's outputs, DequantizeLinear's
#: inputs) rlx has no type for -> their (lowest, highest) value.
QUANT_RANGES = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767), "UINT16": (0, 65535),
                "INT4": (-8, 7), "UINT4": (0, 15), "INT2": (-2, 1), "UINT2": (0, 3)}


def _const_from_tensor(t, what: str, initializer: str | None = None) -> Const:
    from onnx import numpy_helper

    name = onnx_type_name(t.data_type)
    if name in QUANT_RANGES:  # exact as i32; only the quantization ops read it
        a = np.asarray(numpy_helper.to_array(t)).astype(np.int32)
        return Const(a.copy(order="C"), "i32", initializer, narrow=name)
    d = _dtype_of(t.data_type, what)
    a = numpy_helper.to_array(t)
    if d == "bf16":  # numpy_helper gives float32 (or ml_dtypes) values
        a = np.asarray(a, dtype=np.float32)
    return Const(np.asarray(a, dtype=dtype(d).carrier).copy(order="C"), d, initializer)


class Node:
    """One ONNX node being imported: its attributes, inputs and the builder
    (`imp` is the `OnnxImporter` walking the graph)."""

    def __init__(self, imp: Any, proto, inputs: list[Value | None]):
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


class OpView(Node):
    """Node `n` seen as another op, for that op's ai.onnx emitter: its
    attributes (less `drop`), `inputs` (a composite's own: dequantized
    values, a bias added, ...), errors naming `n`."""

    def __init__(self, n: Node, op_type: str, inputs: list[Value | None], drop: tuple[str, ...] = (),
                 opset: int = 0, attrs: dict[str, Any] | None = None):
        from onnx import NodeProto, helper

        proto = NodeProto()
        proto.CopyFrom(n.proto)
        proto.op_type, proto.domain = op_type, ""
        keep = [a for a in proto.attribute if a.name not in drop and a.name not in (attrs or {})]
        del proto.attribute[:]
        proto.attribute.extend(keep + [helper.make_attribute(k, v) for k, v in (attrs or {}).items()])
        super().__init__(n.imp, proto, inputs)
        self.outer = n
        self.opset = opset or n.imp.opset

    @property
    def where(self) -> str:
        return self.outer.where

    def outputs(self) -> list[Value]:
        """The op's outputs."""
        fn = emitter_for(self.op_type, self.opset)
        assert fn is not None, self.op_type
        return fn(self)

    def run(self) -> Tensor:
        """The op's first output."""
        return self.imp.tensor(self.outputs()[0])


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



def emitter_for(op_type: str, opset: int) -> Emitter | None:
    """The emitter of `op_type`'s form at `opset` (None: not supported)."""
    forms = EMITTERS.get(op_type, {})
    since = max((v for v in forms if v <= opset), default=None)
    return None if since is None else forms[since]


# --------------------------------------------------------------------------- helpers of composite emitters

#: The largest finite value of each float type (IsInf and ReduceLogSumExp
#: tell infinities from it without an infinite constant).
LARGEST_FINITE = {"f32": float(np.finfo(np.float32).max), "f16": 65504.0, "bf16": 3.3895313892515355e38}


def as_type(g: GraphBuilder, t: Tensor, to: str) -> Tensor:
    """t converted to type `to` (rlx.cast), or t itself where it has that type."""
    return t if t.dtype == to else g.cast(t, to)


def in_f32(n: Node, x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """fn(x) computed in f32 for f16/bf16 inputs, rounded once at the end (a
    composite's every step rounded to 16 bits drifts by an ulp or more, and
    16-bit squares and sums overflow); fn(x) itself for other types."""
    if x.dtype not in ("f16", "bf16"):
        return fn(x)
    return n.g.cast(fn(n.g.cast(x, "f32")), x.dtype)


def cast_const(n: Node, c: Const, to: str) -> Const:
    """An import-time value converted to type `to` (rlx.cast's rounding, run
    on the numpy interpreter), still an import-time value."""
    if c.dtype == to:
        return c
    from onnx import helper

    (out,) = n.imp._fold(helper.make_node("Cast", ["x"], ["y"], to=DTYPES[to].onnx), [c])
    assert isinstance(out, Const)
    return out


def import_time_flag(n: Node, v: Value, what: str, decided: str) -> bool:
    """The one-element boolean `v` (If's condition, a Loop's condition or its
    body's), which must be known at import: rlx has no control flow, so
    `decided` ("the branch is chosen") when the model is imported."""
    if not isinstance(v, Const):
        raise n.error(f"{what} must be known at import: rlx has no control flow, so {decided} "
                      "when the model is imported")
    if v.array.size != 1:
        raise n.error(f"{what} has {v.array.size} elements; it must have one")
    return bool(np.ravel(v.array)[0])


def reversed_within(steps: int, lens: np.ndarray) -> np.ndarray:
    """[steps, batch]: for step t of batch entry b, the time L - 1 - t it
    reads where t < L = lens[b], else t (ReverseSequence, and the recurrent
    ops' reverse direction). The map is its own inverse."""
    t = np.arange(steps)[:, None]
    return np.where(t < lens[None, :], lens[None, :] - 1 - t, t)


def positions(n: Node, extent: int, axis: int, ndim: int, d: str) -> Tensor:
    """The constant 0 .. extent - 1 along `axis` of rank `ndim` (extents of 1
    elsewhere) in type `d`: compared with indices kept on that axis, a one-hot."""
    shape = [1] * ndim
    shape[axis] = extent
    return n.imp.constant(np.arange(extent).reshape(shape), d)


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
    "OneHot": (1,), "If": (0,), "CenterCropPad": (1,), "HannWindow": (0,), "HammingWindow": (0,),
    "BlackmanWindow": (0,), "Loop": (0, 1), "ReverseSequence": (1,),
    "AffineGrid": (1,), "DFT": (1, 2), "STFT": (1, 3), "MelWeightMatrix": (0, 1, 2, 3, 4),
    "Col2Im": (1, 2), "Compress": (1,), "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2),
}  # fmt: skip


def import_time_inputs(graph) -> set[str]:
    """Names of the values that `graph`'s nodes read at import (see
    `IMPORT_TIME_INPUTS`), and of the values those are computed from: a
    graph input among them must be bound as a constant (an initializer)
    before import. Shape and Size read only their input's shape, so what
    feeds them is not among them."""
    producer = {o: node for node in graph.node for o in node.output}
    names, todo = set(), []
    for node in graph.node:
        for k in IMPORT_TIME_INPUTS.get(node.op_type, ()):
            if k < len(node.input) and node.input[k]:
                todo.append(node.input[k])
    while todo:
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        node = producer.get(name)
        if node is not None and node.op_type not in ("Shape", "Size"):
            todo.extend(i for i in node.input if i)
            todo.extend(_captured(node))
    return names


def _captured(node) -> set[str]:
    """Outer-scope names a node's subgraphs (If's branches, a Loop's or
    Scan's body) read: what the subgraph's nodes read that it does not
    define."""
    from onnx import AttributeProto

    out: set[str] = set()
    for a in node.attribute:
        graphs = [a.g] if a.type == AttributeProto.GRAPH else list(a.graphs) if a.type == AttributeProto.GRAPHS else []
        for g in graphs:
            defined = {i.name for i in g.input} | {t.name for t in g.initializer}
            for sub in g.node:
                out |= {i for i in sub.input if i and i not in defined} | (_captured(sub) - defined)
                defined |= set(sub.output)
    return out


#: Ops whose emitters read only shapes or attributes, or import subgraphs in place (If, Loop, Scan):
#: never run on a scratch graph.
IMPORT_TIME_OPS = {"Constant", "ConstantOfShape", "Shape", "Size", "Range", "Identity", "Dropout", "If", "Loop", "Scan",
                   "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"}

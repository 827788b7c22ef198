"""`OnnxImporter` (the walk over one graph) and `from_onnx`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from xdsl.ir import SSAValue

from rlxc.dialects.types import dtype
from rlxc.frontends.builder import GraphBuilder, GraphError, Tensor
from rlxc.frontends.onnx.core import (
    EMITTERS,
    IMPORT_TIME_INPUTS,
    IMPORT_TIME_OPS,
    Const,
    Node,
    OnnxImportError,
    Value,
    _const_from_tensor,
    _dtype_of,
    emitter_for,
)

_NAME = re.compile(r"[^A-Za-z0-9_]")

#: Ops whose import-time result from an initializer stays a param (named
#: after the result) rather than an inline constant: the weights a
#: DequantizeLinear turns into floats.
PARAM_FOLDS = ("DequantizeLinear",)

#: Ops that only move, pick or relabel elements (or pick the largest: the
#: max pools, exact on the integers as on their values, which are ordered
#: alike): a quantized value (see `OnnxImporter.quantized`) may pass through
#: them (as input #0) on its way to a DequantizeLinear, and their outputs
#: are quantized as they are. ONNX Runtime's QOperator quantizer runs Split
#: and MaxPool on 8-bit values directly.
QUANT_MOVES = ("Identity", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather", "Expand",
               "Split", "MaxPool", "GlobalMaxPool")
#: Ops that compute on quantized values (any input): quantize.py's, qlinear.py's and contrib.py's MatMulNBits.
QUANT_READERS = ("MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv", "QLinearAdd", "QLinearMul",
                 "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool", "QLinearGlobalAveragePool",
                 "QLinearConcat", "QLinearSoftmax", "QGemm", "MatMulNBits")


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
        #: Other domains' opset versions (com.microsoft's contrib ops).
        self.opsets = {o.domain: o.version for o in model.opset_import if o.domain not in ("", "ai.onnx")}
        self.input_shapes = dict(input_shapes or {})
        self.g = GraphBuilder()
        self.params: dict[str, np.ndarray] = {}
        self.values: dict[str, Value] = {}
        self._param_tensors: dict[str, Tensor] = {}
        self._scalars: dict[tuple[str, str], Tensor] = {}
        #: QuantizeLinear outputs (their SSA value -> their ONNX integer type),
        #: held as f32 tensors of the integer values: only a DequantizeLinear
        #: reads them. Keyed by value, not name: a branch's value returned by
        #: an If stays quantized, and sibling subgraphs may reuse names.
        self.carried: dict[SSAValue, str] = {}
        #: Names of the params DequantizeLinear folds give (PARAM_FOLDS), kept
        #: apart from the initializers' and from each other (an unrolled
        #: loop's body folds one per iteration under one ONNX name).
        self._fold_names: set[str] = {t.name for t in self.graph.initializer}

    # -- values
    def scalar(self, v: float | int | bool, d: str) -> Tensor:
        """The constant v of type d, one per value and type in the graph (an
        unrolled loop asks for the same few in every step)."""
        key = (d, repr(v))  # repr: -0.0 is not 0.0
        if key not in self._scalars:
            self._scalars[key] = self.constant(np.asarray(v), d)
        return self._scalars[key]

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
            t = self._param_tensors[v.initializer]
        else:
            t = self.constant(v.array, v.dtype)
        if v.narrow is not None:  # still quantized as a tensor
            self.carried[t.value] = v.narrow
        return t

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
            if (q := self.quantized(o.name)) is not None:
                raise OnnxImportError(
                    f"graph output '{o.name}' has ONNX type {q}; rlx has no {q} type: a quantized value "
                    "imports only as it flows into a DequantizeLinear")
            outs.append(self.tensor(self.values[o.name]))
        if not outs:
            raise OnnxImportError("the model's graph has no outputs (an empty or truncated model?)")
        return self.g.build(outs), self.params

    def inline(self, graph, what: str, bindings: dict[str, Value] | None = None) -> list[Value]:
        """Imports subgraph `graph`'s initializers and nodes here (the outer
        scope's values visible to them, and `bindings` for its inputs: a
        loop body's) and returns its outputs; names it defines do not
        outlive it."""
        saved = dict(self.values)
        try:
            self.values.update(bindings or {})
            for init in graph.initializer:
                self.values[init.name] = _const_from_tensor(init, f"initializer '{init.name}' of {what}")
            for proto in graph.node:
                self._node(proto)
            missing = [o.name for o in graph.output if o.name not in self.values]
            if missing:
                raise OnnxImportError(f"{what}: output '{missing[0]}' is produced by no node")
            return [self.values[o.name] for o in graph.output]
        finally:
            self.values = saved

    def quantized(self, name: str) -> str | None:
        """The ONNX integer type of value `name` where rlx holds it in
        another type (a QuantizeLinear's output, an INT8/UINT8/...
        initializer), else None."""
        v = self.values.get(name)
        return None if v is None else self.quantized_value(v)

    def quantized_value(self, v: Value) -> str | None:
        """`quantized` of a value itself."""
        return v.narrow if isinstance(v, Const) else self.carried.get(v.value)

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
        bind = f"input_shapes={{'{i.name}': [...]}} (on the command line: rlxc's --shape {i.name}=D0,D1,..., rlxc-opt's --onnx-shape)"
        if given is not None and any(int(d) < 0 for d in given):
            raise OnnxImportError(f"input_shapes['{i.name}'] = {list(given)}: dimensions are 0 or more")
        if not i.type.tensor_type.HasField("shape"):  # no shape at all: the rank is unknown too
            if given is None:
                raise OnnxImportError(f"input '{i.name}' has no shape in the model (not even a rank); give it with {bind}")
            return [int(d) for d in given]
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
                raise OnnxImportError(f"input '{i.name}' dimension {k} ('{sym}') is symbolic; bind it with {bind}")
        return shape

    def _form(self, proto) -> tuple[str, int]:
        """(the EMITTERS key of a node's op type, its domain's opset in this model)."""
        if proto.domain in ("", "ai.onnx"):
            return proto.op_type, self.opset
        return f"{proto.domain}:{proto.op_type}", self.opsets.get(proto.domain, 1)

    def _emitter(self, proto):
        """The emitter of a node's op type in its domain's opset (None: not supported)."""
        return emitter_for(*self._form(proto))

    def _node(self, proto) -> None:
        fn = self._emitter(proto)
        name = proto.name or (proto.output[0] if proto.output else "?")
        if fn is None:
            key, opset = self._form(proto)
            if key in EMITTERS:  # supported, but not in the form of this model's opset
                first = min(EMITTERS[key])
                raise OnnxImportError(
                    f"{proto.op_type} node '{name}' (domain '{proto.domain or 'ai.onnx'}'): its form before "
                    f"opset {first} is not supported (the model imports opset {opset})"
                )
            raise OnnxImportError(
                f"{proto.op_type} node '{name}' (domain '{proto.domain or 'ai.onnx'}'): this op "
                f"type is not supported; supported ops: {', '.join(sorted(EMITTERS))}"
            )
        inputs = []
        for k, i in enumerate(proto.input):
            if not i:
                inputs.append(None)
            elif i not in self.values:
                raise OnnxImportError(f"{proto.op_type} node '{name}' reads '{i}', which is not defined before it")
            else:
                q = self.quantized(i)
                if q is not None and not (proto.op_type == "DequantizeLinear" and k in (0, 2)
                                          or proto.op_type == "QuantizeLinear" and k == 2
                                          or proto.op_type in QUANT_READERS
                                          or proto.op_type in QUANT_MOVES and k == 0
                                          or proto.op_type in ("Shape", "Size")):
                    raise OnnxImportError(
                        f"{proto.op_type} node '{name}' reads '{i}' of ONNX type {q}; rlx has no {q} type: "
                        f"a quantized value imports only as the input of DequantizeLinear, {', '.join(QUANT_READERS[:-1])} "
                        f"or {QUANT_READERS[-1]} (and QuantizeLinear's zero point)")
                inputs.append(self.values[i])
        node = Node(self, proto, inputs)
        try:
            if proto.op_type not in IMPORT_TIME_OPS and proto.op_type not in QUANT_READERS and inputs and all(
                isinstance(v, Const) for v in inputs if v is not None
            ):
                outs = self._fold(proto, inputs)
                if proto.op_type in PARAM_FOLDS and isinstance(inputs[0], Const) and (
                        inputs[0].initializer or inputs[0].narrow):
                    # a weight stored quantized: its float values are a param named after them
                    outs = [Const(o.array, o.dtype, self._fold_name(out)) if isinstance(o, Const) else o
                            for o, out in zip(outs, proto.output)]
            else:
                outs = fn(node)
        except OnnxImportError:
            raise
        except (GraphError, ValueError, IndexError) as e:  # (numpy's, folding constants: say which node)
            raise OnnxImportError(f"{node.where}: {e}") from None
        moved = self.quantized(proto.input[0]) if proto.op_type in QUANT_MOVES and proto.input else None
        for out_name, v in zip(proto.output, outs):
            if not out_name:
                continue
            if moved is not None:  # a quantized value moved: still quantized
                if isinstance(v, Const):
                    v = Const(v.array, v.dtype, v.initializer, narrow=moved)
                else:
                    self.carried[v.value] = moved
            if isinstance(v, Tensor) and v.value.name_hint is None:
                v.value.name_hint = _ssa_name(out_name)
            self.values[out_name] = v

    def _fold(self, proto, inputs: list[Value | None]) -> list[Value]:
        """Runs a node whose inputs are all known on the numpy interpreter."""
        from rlxc.interp import interpret

        sub = OnnxImporter.__new__(OnnxImporter)
        sub.__dict__.update(self.__dict__)
        sub.g = GraphBuilder()
        sub.params, sub._param_tensors, sub._scalars = {}, {}, {}
        feeds, args = {}, []
        for k, v in enumerate(inputs):
            if v is None or k in IMPORT_TIME_INPUTS.get(proto.op_type, ()):
                args.append(v)  # absent, or read as an import-time value
                continue
            assert isinstance(v, Const)
            feeds[f"in{k}"] = v.array
            args.append(sub.g.input(f"in{k}", v.shape, v.dtype))
        outs = self._emitter(proto)(Node(sub, proto, args))  # pyright: ignore
        tensors = [sub.tensor(o) for o in outs]
        results = interpret(sub.g.build(tensors), feeds, sub.params)
        # a QuantizeLinear of constants: its integers stay quantized (`carried` is shared)
        return [Const(np.asarray(r), t.dtype, narrow=self.carried.get(t.value)) for r, t in zip(results, tensors)]

    def _fold_name(self, name: str) -> str:
        """`name`, or `name_1`, `name_2`, ... where a param already has it."""
        fresh, k = name, 1
        while fresh in self._fold_names:
            fresh, k = f"{name}_{k}", k + 1
        self._fold_names.add(fresh)
        return fresh



def load_model(path: str | Path):
    """The `onnx.ModelProto` in `path` (external data included), or an
    `OnnxImportError` saying why there is none."""
    import onnx

    path = Path(path)
    if not path.exists():
        raise OnnxImportError(f"{path}: no such file")
    try:
        return onnx.load(str(path))
    except Exception as e:  # a protobuf DecodeError, say
        raise OnnxImportError(f"{path}: not a readable ONNX model ({e})") from None


def from_onnx(model, input_shapes: Mapping[str, Sequence[int]] | None = None):
    """Imports an ONNX model (a path or an `onnx.ModelProto`, external data
    included) as `(module, params)`: a verified rlx module and the
    initializers its `rlx.param`s name. See the module docstring."""
    import onnx

    if isinstance(model, str | Path):
        model = load_model(model)
    if not isinstance(model, onnx.ModelProto):
        raise OnnxImportError(f"from_onnx takes a path or an onnx.ModelProto, got {type(model).__name__}")
    return OnnxImporter(model, input_shapes).run()

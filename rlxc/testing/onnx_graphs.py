"""A hypothesis strategy for small random ONNX models (onnx.helper), for
fuzzing the importer and the pipelines behind it (`rlxc fuzz --onnx`).

    from rlxc.testing.onnx_graphs import onnx_models

    @given(onnx_models())
    def test_import(case):
        module, params = rlxc.from_onnx(case.model)

A drawn `OnnxCase` holds a checked `onnx.ModelProto` (opset 17, float32) of
elementwise (unary and broadcasting binary), MatMul (weights as
initializers), Softmax, Reshape (the shape an initializer) and Transpose
nodes, with the node types drawn listed for failure reports. Inputs are kept
in each op's domain (Log and Sqrt read |x| + 0.5; Exp reads tanh(x)), so the
model's results are finite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

OPSET = 17

UNARY = ["Relu", "Tanh", "Sigmoid", "Neg", "Abs", "Erf", "Sin", "Cos", "Floor", "Ceil",
         "Softsign", "Selu", "Celu", "ThresholdedRelu", "Shrink", "Atan", "Asinh"]
POSITIVE = ["Log", "Sqrt", "Reciprocal"]
BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
KINDS = ["unary", "positive", "exp", "binary", "div", "matmul", "softmax", "reshape", "transpose"]


@dataclass
class OnnxCase:
    """A drawn ONNX model and the node types that built it."""

    model: object  # onnx.ModelProto
    ops: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"OnnxCase(ops={self.ops})"

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


@st.composite
def onnx_models(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 8) -> OnnxCase:
    """A random valid float32 ONNX model of `min_nodes`..`max_nodes` drawn steps."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list = []
    inits: list = []
    log: list[str] = []
    rank = draw(st.integers(1, 3))
    base = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    values: dict[str, tuple[int, ...]] = {}  # name -> shape
    inputs = []
    for i in range(draw(st.integers(1, 2))):
        shape = base if i == 0 else tuple(d if draw(st.booleans()) else 1 for d in base)
        values[f"in{i}"] = shape
        inputs.append(helper.make_tensor_value_info(f"in{i}", TensorProto.FLOAT, list(shape)))
    used: set[str] = set()
    counter = iter(range(1 << 30))

    def fresh(prefix: str) -> str:
        return f"{prefix}{next(counter)}"

    def node(op: str, ins: list[str], shape: tuple[int, ...], **attrs) -> str:
        out = fresh("v")
        nodes.append(helper.make_node(op, ins, [out], name=fresh(op.lower()), **attrs))
        values[out] = shape
        return out

    def init(array: np.ndarray, prefix: str) -> str:
        name = fresh(prefix)
        inits.append(numpy_helper.from_array(array, name))
        return name

    def positive(x: str) -> str:
        half = init(np.array(0.5, np.float32), "half")
        return node("Add", [node("Abs", [x], values[x]), half], values[x])

    def pick(pred=lambda s: True) -> str | None:
        names = [n for n, s in values.items() if pred(s)]
        if not names:
            return None
        name = draw(st.sampled_from(names))
        used.add(name)
        return name

    for _ in range(draw(st.integers(min_nodes, max_nodes))):
        kind = draw(st.sampled_from(KINDS))
        x = pick()
        assert x is not None
        xs = values[x]
        if kind == "unary":
            op = draw(st.sampled_from(UNARY))
            node(op, [x], xs)
        elif kind == "positive":
            op = draw(st.sampled_from(POSITIVE))
            node(op, [positive(x)], xs)
        elif kind == "exp":
            op = "Exp"
            node("Exp", [node("Tanh", [x], xs)], xs)
        elif kind in ("binary", "div"):
            y = pick(lambda s: _broadcasts(s, xs))
            assert y is not None  # x itself qualifies
            shape = _broadcast(xs, values[y])
            if kind == "binary":
                op = draw(st.sampled_from(BINARY))
                node(op, [x, y], shape)
            else:
                op = "Div"
                node("Div", [x, positive(y)], shape)
        elif kind == "matmul":
            op = "MatMul"
            k, m = xs[-1], draw(st.integers(1, 4))
            w = init(np.asarray(draw(st.lists(st.floats(-1, 1, width=32), min_size=k * m, max_size=k * m)),
                                np.float32).reshape(k, m), "w")  # fmt: skip
            node("MatMul", [x, w], (*xs[:-1], m))
        elif kind == "softmax":
            op = draw(st.sampled_from(["Softmax", "LogSoftmax"]))
            node(op, [x], xs, axis=draw(st.integers(-len(xs), len(xs) - 1)))
        elif kind == "reshape":
            op = "Reshape"
            target = (-1,) if len(xs) > 1 else (1, *xs)
            shape = (int(np.prod(xs)),) if len(xs) > 1 else (1, *xs)
            node("Reshape", [x, init(np.array(target, np.int64), "shape")], shape)
        elif kind == "transpose":
            op = "Transpose"
            perm = draw(st.permutations(list(range(len(xs)))))
            node("Transpose", [x], tuple(xs[p] for p in perm), perm=list(perm))
        else:  # pragma: no cover - a kind name typo
            raise AssertionError(kind)
        log.append(op)

    produced = [n for n in values if not n.startswith("in")]
    sinks = [n for n in produced if n not in used] or [next(iter(values)) if not produced else produced[-1]]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(values[n])) for n in sinks]
    graph = helper.make_graph(nodes, "fuzz", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return OnnxCase(model, log)

"""Emitters of import-time values: Constant, ConstantOfShape, Shape, Size,
Range and the window functions (plain numpy; they never reach the graph)."""

from __future__ import annotations

import numpy as np

from rlxc.dialects.types import dtype
from rlxc.frontends.onnx.core import (
    Const,
    Node,
    Value,
    _const_from_tensor,
    _dtype_of,
    cast_const,
    emitter,
)


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
    """Scalars (or one-element tensors, as ONNX's own function bodies pass them)."""
    bounds = []
    for i, name in enumerate(("start", "limit", "delta")):
        a = np.asarray(n.const(i, name))
        if a.size != 1:
            raise n.error(f"{name} (input #{i}) has shape {list(a.shape)}; it must be a scalar")
        bounds.append(a.reshape(()))
    v = n.input(0)
    assert isinstance(v, Const)
    return [Const(np.arange(*bounds).astype(v.array.dtype), v.dtype)]


def _window(n: Node, terms: list[tuple[float, float]]) -> list[Value]:
    """sum of c · cos(k · 2π i / N) over `terms` (c, k), i in 0 .. size - 1,
    N = size (periodic, the default) or size - 1, as output_datatype."""
    size = int(np.ravel(n.const(0, "the size"))[0])
    if size < 0:
        raise n.error(f"a negative size ({size})")
    big_n = size if n.attr("periodic", 1) else size - 1
    i = np.arange(size, dtype=np.float64)
    y = sum(c * np.cos(k * 2.0 * np.pi * i / big_n) for c, k in terms) if big_n else np.ones(size)
    to = _dtype_of(int(n.attr("output_datatype", 1)), f"{n.where}: output_datatype")
    return [cast_const(n, Const(np.asarray(y, np.float32), "f32"), to)]


@emitter("HannWindow")
def _hann_window(n: Node) -> list[Value]:
    return _window(n, [(0.5, 0.0), (-0.5, 1.0)])  # sin²(π i / N)


@emitter("HammingWindow")
def _hamming_window(n: Node) -> list[Value]:
    alpha = 25.0 / 46.0
    return _window(n, [(alpha, 0.0), (alpha - 1.0, 1.0)])


@emitter("BlackmanWindow")
def _blackman_window(n: Node) -> list[Value]:
    return _window(n, [(0.42, 0.0), (-0.5, 1.0), (0.08, 2.0)])

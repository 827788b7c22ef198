"""How values of each rlx element type are held in numpy.

Every fact comes from the element type's `DType` record
(`rlxc.dialects.types`): its `carrier` is the numpy dtype that holds its
values. numpy has no bfloat16: a bf16 tensor is carried as a float32 array
whose values are exactly representable in bf16 (rounded to nearest, ties to
even, as the hardware converts). i1 is carried as `bool`.

Floating-point ops of the reference are computed in float64 and rounded once
to the op's type, which is "f32 accumulation or better" for every op.

Used by the interpreter, the constant folder, the builder, the input checks
(`rlxc.signature`) and the runtime (constants uploaded as parameters).
"""

from __future__ import annotations

import contextvars

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute

from rlxc.dialects.types import dtype, dtype_name, is_float

__all__ = [
    "PROMOTE_TO_F64",
    "carrier_dtype",
    "compute_dtype",
    "dense_attr",
    "dense_values",
    "round_bf16",
    "to_element_type",
    "to_tensor_type",
]

#: When set, floating-point tensors of every width are carried in float64 and
#: never rounded (see `rlxc.interpret(..., float64=True)`).
PROMOTE_TO_F64: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "rlxc_promote_to_f64", default=False
)


def carrier_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of an rlx element type."""
    return dtype(element_type).carrier


def round_bf16(a: np.ndarray) -> np.ndarray:
    """Rounds float values to the nearest bf16 (ties to even), kept as float32."""
    shape = np.shape(a)  # (ascontiguousarray makes a 0-d array 1-d)
    f = np.ascontiguousarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(f), f, out).reshape(shape)


def to_element_type(a: np.ndarray | float | int | bool, element_type: Attribute) -> np.ndarray:
    """Converts computed values (usually float64) to an element type's carrier.

    Floats round to nearest even; floats to integers truncate toward zero; to i1
    is `x != 0`.
    """
    a = np.asarray(a)
    name = dtype_name(element_type)
    if PROMOTE_TO_F64.get() and name in ("f32", "f16", "bf16"):
        return a.astype(np.float64)
    d = dtype(name)
    if d.kind == "bool":
        return a != 0
    if d.is_int:
        if a.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                a = np.trunc(a)
        return a.astype(d.carrier)
    if d.name == "bf16":
        # Round once from float64 directly would differ from hardware only on
        # double-rounding ties; go through float32 like a device does.
        return round_bf16(a.astype(np.float32))
    return a.astype(d.carrier)


def to_tensor_type(a: np.ndarray, t: TensorType) -> np.ndarray:
    """Values to the carrier of `t`, shaped like `t` (a contiguous copy)."""
    out = to_element_type(a, t.get_element_type())
    # .copy(order="C") keeps rank 0 (np.ascontiguousarray would make it 1-D).
    return out.reshape(tuple(t.get_shape())).copy(order="C")


def compute_dtype(element_type: Attribute) -> np.dtype:
    """The dtype ops compute in: float64 for floats, int64 for ints, bool for i1."""
    if is_float(element_type):
        return np.dtype(np.float64)
    if dtype_name(element_type) == "i1":
        return np.dtype(np.bool_)
    return np.dtype(np.int64)


def dense_attr(a: np.ndarray, t: TensorType) -> DenseIntOrFPElementsAttr:
    """A `DenseIntOrFPElementsAttr` of type `t` holding the values of `a`
    (a splat when every element is equal)."""
    flat = np.asarray(a).ravel()
    kind = dtype(t).kind
    if kind == "bool":
        data: list = [int(bool(v)) for v in flat]
    elif kind == "int":
        data = [int(v) for v in flat]
    else:
        data = [float(v) for v in flat.astype(np.float64)]
    if len(data) > 1 and all(v == data[0] for v in data) and not (
        kind == "float" and np.signbit(flat).any() != np.signbit(flat).all()
    ):
        data = data[:1]
    return DenseIntOrFPElementsAttr.from_list(t, data)  # pyright: ignore[reportArgumentType]


def dense_values(attr, t: TensorType) -> np.ndarray:
    """The values of a dense attribute as a carrier array shaped like `t`."""
    vals = np.asarray(
        attr.get_values(),
        dtype=np.float64 if is_float(t.get_element_type()) else np.int64,
    )
    shape = tuple(t.get_shape())
    if vals.size == 1 and int(np.prod(shape)) != 1:
        vals = np.broadcast_to(vals, shape)
    return to_tensor_type(vals, t)

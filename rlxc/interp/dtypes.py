"""How the numpy reference represents each rlx element type.

numpy has no bfloat16: a bf16 tensor is carried as a float32 array whose values
are exactly representable in bf16 (rounded to nearest, ties to even, as the
hardware converts). Every other type maps to its numpy dtype; i1 is `bool`.

Floating-point ops are computed in float64 and rounded once to the op's type,
which is "f32 accumulation or better" for every op.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from rlxc.dialects.types import dtype_name, is_float

_CARRIER = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.float32),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
}


def carrier_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of an rlx element type."""
    return _CARRIER[dtype_name(element_type)]


def round_bf16(a: np.ndarray) -> np.ndarray:
    """Rounds float values to the nearest bf16 (ties to even), kept as float32."""
    f = np.ascontiguousarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(f), f, out).reshape(f.shape)


def to_element_type(a: np.ndarray | float | int | bool, element_type: Attribute) -> np.ndarray:
    """Converts computed values (usually float64) to an element type's carrier.

    Floats round to nearest even; floats to integers truncate toward zero; to i1
    is `x != 0`.
    """
    a = np.asarray(a)
    name = dtype_name(element_type)
    if name == "i1":
        return a != 0
    if name in ("i32", "i64"):
        if a.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                a = np.trunc(a)
        return a.astype(_CARRIER[name])
    if name == "bf16":
        # Round once from float64 directly would differ from hardware only on
        # double-rounding ties; go through float32 like a device does.
        return round_bf16(a.astype(np.float32))
    return a.astype(_CARRIER[name])


def to_tensor_type(a: np.ndarray, t: TensorType) -> np.ndarray:
    """Values to the carrier of `t`, shaped like `t` (a contiguous copy)."""
    out = to_element_type(a, t.get_element_type())
    return np.ascontiguousarray(out.reshape(tuple(t.get_shape())))


def compute_dtype(element_type: Attribute) -> np.dtype:
    """The dtype ops compute in: float64 for floats, int64 for ints, bool for i1."""
    if is_float(element_type):
        return np.dtype(np.float64)
    if dtype_name(element_type) == "i1":
        return np.dtype(np.bool_)
    return np.dtype(np.int64)

"""Tensor types of the `rlx` dialect: static ranked builtin tensors of six element types.

Shape arithmetic that both the verifiers and the graph builder need (numpy
broadcasting, reduction shapes, matmul batch broadcasting) lives here, once.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

#: Element types rlx accepts, by the short name the builder and the tools use.
ELEMENT_TYPES: dict[str, Attribute] = {
    "f32": f32,
    "f16": f16,
    "bf16": bf16,
    "i32": i32,
    "i64": i64,
    "i1": i1,
}

#: Bytes per element as stored in memory (i1 takes a byte).
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "i1": 1}

FLOAT_TYPES = (f32, f16, bf16)
INT_TYPES = (i32, i64)
BOOL_TYPES = (i1,)
NUMERIC_TYPES = FLOAT_TYPES + INT_TYPES
ALL_TYPES = NUMERIC_TYPES + BOOL_TYPES


def dtype_name(element_type: Attribute) -> str:
    """The short name (`f32`, `bf16`, `i1`, ...) of an rlx element type."""
    for name, t in ELEMENT_TYPES.items():
        if t == element_type:
            return name
    return str(element_type)


def element_type(name: str | Attribute) -> Attribute:
    """The builtin element type for a short name, or the type itself."""
    if isinstance(name, str):
        if name not in ELEMENT_TYPES:
            raise ValueError(
                f"unknown element type '{name}': expected one of "
                f"{', '.join(ELEMENT_TYPES)}"
            )
        return ELEMENT_TYPES[name]
    if name not in ALL_TYPES:
        raise ValueError(f"unsupported element type {name}")
    return name


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float16Type | BFloat16Type)


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data in (32, 64)


def tensor(shape: Sequence[int], dtype: str | Attribute) -> TensorType:
    """`tensor(shape, "f32")` builds a static ranked `TensorType`."""
    return TensorType(element_type(dtype), list(shape))


def fmt_shape(shape: Sequence[int]) -> str:
    """Shapes in messages read like the IR: `4x16`, and `scalar` for rank 0."""
    return "x".join(str(d) for d in shape) if len(shape) else "scalar"


def shape_of(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def broadcast_shapes(*shapes: Sequence[int], what: str = "operands") -> tuple[int, ...]:
    """Numpy broadcasting of shapes; raises VerifyException naming the clash."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if d == out[j] or d == 1:
                continue
            if out[j] == 1:
                out[j] = d
                continue
            raise VerifyException(
                f"{what} have shapes that do not broadcast: "
                f"{', '.join(fmt_shape(x) for x in shapes)} (axis {j - rank} is "
                f"{out[j]} in one and {d} in another; each axis must match or be 1)"
            )
    return tuple(out)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether `shape` broadcasts to exactly `target` (numpy.broadcast_to)."""
    if len(shape) > len(target):
        return False
    return all(d == t or d == 1 for d, t in zip(reversed(shape), reversed(target)))


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Maps a possibly negative axis into [0, rank), or raises."""
    if not -rank <= axis < rank:
        raise VerifyException(
            f"{what} {axis} is out of range for a tensor of rank {rank} "
            f"(expected -{rank} <= {what} < {rank})"
        )
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int) -> list[int]:
    out = [normalize_axis(a, rank, "axis") for a in axes]
    if len(set(out)) != len(out):
        raise VerifyException(f"axes {list(axes)} name an axis twice")
    return sorted(out)


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple[int, ...]:
    axes_n = normalize_axes(axes, len(shape))
    if keepdims:
        return tuple(1 if i in axes_n else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes_n)


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """numpy.matmul's result shape for operands of rank >= 2."""
    if len(a) < 2 or len(b) < 2:
        raise VerifyException(
            f"matmul operands must have rank >= 2, got {fmt_shape(a)} and {fmt_shape(b)}"
        )
    if a[-1] != b[-2]:
        raise VerifyException(
            f"matmul contraction mismatch: lhs {fmt_shape(a)} has {a[-1]} columns "
            f"but rhs {fmt_shape(b)} has {b[-2]} rows"
        )
    batch = broadcast_shapes(a[:-2], b[:-2], what="matmul batch dimensions")
    return (*batch, a[-2], b[-1])


def slice_extent(start: int, end: int, step: int) -> int:
    return len(range(start, end, step))

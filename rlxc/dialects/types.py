"""Tensor types of the `rlx` dialect: static ranked builtin tensors of six element types.

One `DType` record per element type holds every fact about it (`DTYPES`).

Shape arithmetic that both the verifiers and the graph builder need (numpy
broadcasting, reduction shapes, matmul batch broadcasting) lives here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
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

@dataclass(frozen=True)
class DType:
    """Everything rlxc knows about one element type, in one place: every
    module (verifiers, interpreter, planner, codegen, runtime, DLPack,
    cuBLASLt) reads its facts from here."""

    name: str  #: the short name the builder, the tools and messages use
    type: Attribute  #: the xDSL element type
    kind: str  #: "float", "int" or "bool"
    bytes: int  #: bytes per element in memory (i1 takes a byte)
    carrier: np.dtype  #: numpy dtype of values in the interpreter (bf16: float32 holding bf16 values)
    storage: np.dtype  #: numpy dtype of the bytes on the device (bf16: uint16, i1: uint8)
    c_storage: str  #: CUDA C type of a stored element
    c_compute: str  #: CUDA C type that kernels compute in
    c_vector: str | None  #: CUDA type of one vector access of `vector_width` stored elements, where one exists
    vector_width: int  #: elements per vector access (16 bytes for f32, f16, bf16 and i32; 1 without a vector type)
    typestr: str  #: `__cuda_array_interface__` typestr
    dlpack: tuple[int, int]  #: DLPack (type code, bits); lanes are always 1
    cuda_data_type: int | None  #: cudaDataType_t (cuBLASLt), floats only
    lowest: float  #: the most negative finite value (a masked score)
    onnx: int  #: ONNX's TensorProto.DataType code

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def bits(self) -> int:
        """The width of the xDSL type (1 for i1, though it is stored in a byte)."""
        return 1 if self.kind == "bool" else self.bytes * 8


_F = np.finfo
#: Every element type rlx accepts, by short name.
DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("f32", f32, "float", 4, np.dtype(np.float32), np.dtype(np.float32), "float", "float",
              "float4", 4, "<f4", (2, 32), 0, float(_F(np.float32).min), 1),
        DType("f16", f16, "float", 2, np.dtype(np.float16), np.dtype(np.float16), "unsigned short", "float",
              "uint4", 8, "<f2", (2, 16), 2, float(_F(np.float16).min), 10),
        DType("bf16", bf16, "float", 2, np.dtype(np.float32), np.dtype(np.uint16), "unsigned short", "float",
              "uint4", 8, "<V2", (4, 16), 14, -3.3895313892515355e38, 16),
        DType("i32", i32, "int", 4, np.dtype(np.int32), np.dtype(np.int32), "int", "int",
              "int4", 4, "<i4", (0, 32), None, float(np.iinfo(np.int32).min), 6),
        DType("i64", i64, "int", 8, np.dtype(np.int64), np.dtype(np.int64), "long long", "long long",
              None, 1, "<i8", (0, 64), None, float(np.iinfo(np.int64).min), 7),
        DType("i1", i1, "bool", 1, np.dtype(np.bool_), np.dtype(np.uint8), "unsigned char", "bool",
              "uchar4", 4, "|b1", (6, 8), None, 0.0, 9),
    )
}  # fmt: skip

#: Element types rlx accepts, by the short name the builder and the tools use.
ELEMENT_TYPES: dict[str, Attribute] = {n: d.type for n, d in DTYPES.items()}

FLOAT_TYPES = tuple(d.type for d in DTYPES.values() if d.kind == "float")
INT_TYPES = tuple(d.type for d in DTYPES.values() if d.kind == "int")
BOOL_TYPES = tuple(d.type for d in DTYPES.values() if d.kind == "bool")
NUMERIC_TYPES = FLOAT_TYPES + INT_TYPES
ALL_TYPES = NUMERIC_TYPES + BOOL_TYPES


def dtype(t: Attribute | str) -> DType:
    """The `DType` of an element type, a tensor type or a short name."""
    if isinstance(t, str):
        if t not in DTYPES:
            raise ValueError(
                f"unknown element type '{t}': expected one of {', '.join(DTYPES)}"
            )
        return DTYPES[t]
    if isinstance(t, TensorType):
        t = t.get_element_type()
    for d in DTYPES.values():
        if d.type == t:
            return d
    raise ValueError(f"unsupported element type {t} (expected one of {', '.join(DTYPES)})")


def dtype_name(element_type: Attribute) -> str:
    """The short name (`f32`, `bf16`, `i1`, ...) of an rlx element type (the
    type printed as text for one rlx does not have, for messages)."""
    for d in DTYPES.values():
        if d.type == element_type:
            return d.name
    return str(element_type)


def element_type(name: str | Attribute) -> Attribute:
    """The builtin element type for a short name, or the type itself."""
    if isinstance(name, str):
        return dtype(name).type
    if name not in ALL_TYPES:
        raise ValueError(f"unsupported element type {name}")
    return name


def is_float(t: Attribute) -> bool:
    """Whether an element (or tensor) type is f32, f16 or bf16."""
    if isinstance(t, TensorType):
        t = t.get_element_type()
    return t in FLOAT_TYPES


def is_int(t: Attribute) -> bool:
    if isinstance(t, TensorType):
        t = t.get_element_type()
    return t in INT_TYPES


def tensor_bytes(t: Attribute) -> int:
    """The bytes a tensor of type `t` takes in memory."""
    assert isinstance(t, TensorType)
    return t.element_count() * dtype(t).bytes


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

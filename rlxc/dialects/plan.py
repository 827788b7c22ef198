"""The memory plan's contract: the attributes `rlx-plan-memory` and
`rlx-emit-cuda` write and the emitter, the runtime and the tools read.

Every read and write of them goes through this module, so their names and
encodings are defined once (all values are i64):

* on each op producing activations, `rlx.offset` and `rlx.bytes`: the arena
  slot and exact size of each result (an integer for one result, an
  `array<i64: ...>` for several);
* on the planned func, `rlx.arg_offsets` (its arguments' slots),
  `rlx.arena_bytes` (the arena's size) and `rlx.peak_live_bytes` (the lower
  bound: the largest total size of buffers alive at once);
* at the launch level, `rlx.param_offset` on each `rlx.param` / `rlx.constant`
  (its place in the read-only parameter buffer), `rlx.param_bytes` and
  `rlx.arch` on the func, and `rlx.param_copies` where kernels read a
  param's shifted copies (`ParamCopies`), which the runtime fills.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, i64
from xdsl.ir import Operation

OFFSET = "rlx.offset"
BYTES = "rlx.bytes"
ARG_OFFSETS = "rlx.arg_offsets"
ARENA_BYTES = "rlx.arena_bytes"
PEAK_LIVE_BYTES = "rlx.peak_live_bytes"
PARAM_OFFSET = "rlx.param_offset"
PARAM_BYTES = "rlx.param_bytes"
ARCH = "rlx.arch"
PARAM_COPIES = "rlx.param_copies"

#: Arena and parameter-buffer slots are aligned to this many bytes.
ALIGN = 256


def align(n: int) -> int:
    """`n` rounded up to a slot boundary."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(int(v), i64)


def _ints(attr) -> list[int]:
    if isinstance(attr, IntegerAttr):
        return [attr.value.data]
    assert isinstance(attr, DenseArrayBase), attr
    return [int(v) for v in attr.get_values()]


def _int_or_array(values: Sequence[int]):
    return _i64(values[0]) if len(values) == 1 else DenseArrayBase.from_list(i64, list(values))


# ------------------------------------------------------------------ per op


def set_slots(op: Operation, offsets: Sequence[int], sizes: Sequence[int]) -> None:
    """Records the arena offset and byte size of each of `op`'s results."""
    op.attributes[OFFSET] = _int_or_array(offsets)
    op.attributes[BYTES] = _int_or_array(sizes)


def offsets(op: Operation) -> list[int] | None:
    """The arena offset of each result, or None if the op is not planned."""
    attr = op.attributes.get(OFFSET)
    return None if attr is None else _ints(attr)


def sizes(op: Operation) -> list[int] | None:
    """The byte size of each result, or None if the op is not planned."""
    attr = op.attributes.get(BYTES)
    return None if attr is None else _ints(attr)


def copy_slots(src: Operation, dst: Operation) -> None:
    """Carries `src`'s slots over to `dst` (an op lowered to another)."""
    for key in (OFFSET, BYTES):
        if key in src.attributes:
            dst.attributes[key] = src.attributes[key]


def set_param_offset(op: Operation, offset: int) -> None:
    op.attributes[PARAM_OFFSET] = _i64(offset)


def param_offset(op: Operation) -> int:
    """Where a param or constant lives in the parameter buffer."""
    return _ints(op.attributes[PARAM_OFFSET])[0]


# ------------------------------------------------------------------ per function


@dataclass(frozen=True)
class FunctionPlan:
    """A planned function's arena: argument slots, size and lower bound."""

    arg_offsets: list[int]
    arena_bytes: int
    peak_live_bytes: int


def set_function_plan(f: Operation, plan: FunctionPlan) -> None:
    f.attributes[ARG_OFFSETS] = DenseArrayBase.from_list(i64, list(plan.arg_offsets))
    f.attributes[ARENA_BYTES] = _i64(plan.arena_bytes)
    f.attributes[PEAK_LIVE_BYTES] = _i64(plan.peak_live_bytes)


def function_plan(f: Operation) -> FunctionPlan | None:
    """The function's plan, or None if `rlx-plan-memory` has not run on it."""
    if ARENA_BYTES not in f.attributes:
        return None
    peak = f.attributes.get(PEAK_LIVE_BYTES)
    return FunctionPlan(
        _ints(f.attributes[ARG_OFFSETS]),
        _ints(f.attributes[ARENA_BYTES])[0],
        _ints(peak)[0] if peak is not None else 0,
    )


def set_launch_info(f: Operation, param_bytes: int, arch: str) -> None:
    """What `rlx-emit-cuda` adds to a function: the parameter buffer's size
    and the architecture its kernels are compiled for."""
    f.attributes[PARAM_BYTES] = _i64(param_bytes)
    f.attributes[ARCH] = StringAttr(arch)


def param_bytes(f: Operation) -> int:
    attr = f.attributes.get(PARAM_BYTES)
    return 0 if attr is None else _ints(attr)[0]


@dataclass(frozen=True)
class ParamCopies:
    """`copies` shifted copies of the param at `source` (`elements` of
    `elem_bytes` each) at `offset` in the parameter buffer, `copy_bytes`
    apart: copy s holds the param's bytes from byte s * elem_bytes on, zeros
    around them (rows.PARAM_COPIES)."""

    offset: int
    source: int
    elements: int
    elem_bytes: int
    copies: int
    copy_bytes: int

    @property
    def nbytes(self) -> int:
        return self.copies * self.copy_bytes


def set_param_copies(f: Operation, copies: Sequence[ParamCopies]) -> None:
    """Records the function's shifted param copies (six i64 each)."""
    if copies:
        f.attributes[PARAM_COPIES] = DenseArrayBase.from_list(
            i64, [v for c in copies for v in (c.offset, c.source, c.elements, c.elem_bytes, c.copies, c.copy_bytes)])


def param_copies(f: Operation) -> list[ParamCopies]:
    attr = f.attributes.get(PARAM_COPIES)
    if attr is None:
        return []
    v = _ints(attr)
    return [ParamCopies(*v[i:i + 6]) for i in range(0, len(v), 6)]

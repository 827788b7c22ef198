"""`rlx-verify-plan`: proves a planned module's arena sound.

A check, not a rewrite: it leaves the module as it is, or fails naming what
is wrong. It reads the plan only through `rlxc.dialects.plan` and recomputes
liveness from the IR itself, sharing no code with `rlx-plan-memory` (not its
`liveness`, not its buffers), so a bug in the planner's bookkeeping is not
repeated here. What it checks, per planned `func.func`:

* every activation (each result of an op other than `rlx.param`,
  `rlx.constant` and the return, and each argument) has a slot, and its
  `rlx.bytes` is its type's exact size;
* a view (an op with the `IsView` trait, read through `is_view`) of an
  activation has its source's offset: the two are one tensor in memory;
* every slot is 256-byte aligned and lies inside `[0, rlx.arena_bytes)`;
* **no two tensors alive at the same op share a byte.** A tensor (a slot and
  the views of it) is alive from its definition (arguments: the function
  entry, position -1) to its last use, counting the uses of its views and
  reads inside nested regions (the return keeps outputs alive to the end).
  Intervals are closed: an op's inputs and outputs are alive at the op.
  The one exception is an in-place update: an elementwise op may write its
  result over an input whose tensor dies at that op, is not an argument,
  and is read by the op only at the result's type, when the two slots are
  the same bytes (same offset, same size), as `rlx-plan-memory{inplace=true}`
  plans them;
* `rlx.peak_live_bytes`, where present, is the largest total aligned size of
  tensors alive at one op (an in-place result counted from the op after).

The sweep visits tensors by start, keeps the live ones sorted by offset (they
are pairwise disjoint, or it has already failed) and compares a new one with
its two neighbours only: O(n log n) comparisons for n tensors.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from rlxc.dialects import plan as P
from rlxc.dialects import rlx
from rlxc.dialects.rlx import FusionKind, fusion_kind, is_view
from rlxc.dialects.types import tensor_bytes

#: Ops whose results are not activations (params and constants live in the
#: parameter buffer; the return has none).
_NOT_ACTIVATIONS = (rlx.ParamOp, rlx.ConstantOp, func.ReturnOp)


@dataclass(eq=False)
class Tensor:
    """One tensor in the arena: the value that defines it (an argument or an
    op's result) and the views of it; alive over [start, end] in program
    positions (-1 is the function entry)."""

    value: SSAValue
    start: int
    end: int
    offset: int
    size: int
    views: list[SSAValue] = field(default_factory=list)
    #: the dying input this tensor overwrites in place, if it does
    overwrites: Tensor | None = None

    @property
    def stop(self) -> int:
        return self.offset + self.size


def _fail(fname: str, text: str) -> PassFailedException:
    return PassFailedException(f"rlx-verify-plan: @{fname}: {text}")


class _Names:
    """SSA names as the printer gives them (name hints, else numbers)."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.names: dict[SSAValue, str] | None = None

    def __call__(self, v: SSAValue) -> str:
        if self.names is None:
            printer = Printer(stream=StringIO())
            printer.print_op(self.module)
            self.names = dict(printer._ssa_values)  # pyright: ignore[reportPrivateUsage]
        name = self.names.get(v)
        return f"%{name}" if name is not None else f"%{v.name_hint or '?'}"


def _where(p: int) -> str:
    return "the entry" if p < 0 else f"op #{p}"


@dataclass
class _FunctionCheck:
    f: func.FuncOp
    plan: P.FunctionPlan
    name_of: _Names
    ops: list[Operation] = field(default_factory=list)
    tensor_of: dict[SSAValue, Tensor] = field(default_factory=dict)
    tensors: list[Tensor] = field(default_factory=list)

    @property
    def fname(self) -> str:
        return self.f.sym_name.data

    def describe(self, t: Tensor) -> str:
        v = t.value
        if isinstance(v.owner, Operation):
            what = f"{self.name_of(v)} ({v.owner.name}, op #{t.start})"
        else:
            what = f"{self.name_of(v)} (argument #{v.index})"  # pyright: ignore[reportAttributeAccessIssue]
        if t.views:
            what += " with its views " + ", ".join(self.name_of(w) for w in t.views)
        return (
            f"{what}: live [{_where(t.start)}, {_where(t.end)}], "
            f"bytes [{t.offset}, {t.stop})"
        )

    # ------------------------------------------------------------------ liveness

    def collect(self) -> None:
        """Tensors and their live intervals, straight from the IR."""
        block = self.f.body.block
        self.ops = list(block.ops)
        if len(self.plan.arg_offsets) != len(block.args):
            raise _fail(
                self.fname,
                f"rlx.arg_offsets has {len(self.plan.arg_offsets)} entries for "
                f"{len(block.args)} arguments",
            )
        for a, off in zip(block.args, self.plan.arg_offsets):
            if not isinstance(a.type, TensorType):
                raise _fail(self.fname, f"argument #{a.index} is {a.type}; only tensors live in the arena")
            self._add(Tensor(a, -1, -1, off, tensor_bytes(a.type)))
        for i, op in enumerate(self.ops):
            for inner in op.walk():  # the op's operands and those read in its regions
                for v in inner.operands:
                    if (t := self.tensor_of.get(v)) is not None:
                        t.end = max(t.end, i)
            if isinstance(op, _NOT_ACTIVATIONS) or not op.results:
                continue
            self._results(i, op)

    def _add(self, t: Tensor) -> None:
        self.tensors.append(t)
        self.tensor_of[t.value] = t

    def _results(self, i: int, op: Operation) -> None:
        offs, sizes = P.offsets(op), P.sizes(op)

        def first() -> str:  # names only on failure: naming prints the module
            return f"op #{i} ({self.name_of(op.results[0])} = {op.name})"

        if offs is None or sizes is None:
            raise _fail(self.fname, f"{first()} has results but no {P.OFFSET} / {P.BYTES}: the plan misses it")
        if len(offs) != len(op.results) or len(sizes) != len(op.results):
            raise _fail(
                self.fname,
                f"{first()} has {len(op.results)} results but {len(offs)} offsets and {len(sizes)} sizes",
            )
        for r, off, n in zip(op.results, offs, sizes):
            if not isinstance(r.type, TensorType):
                raise _fail(self.fname, f"{first()}: result {self.name_of(r)} is {r.type}, not a tensor")
            want = tensor_bytes(r.type)
            if n != want:
                raise _fail(
                    self.fname,
                    f"{first()}: {P.BYTES} of {self.name_of(r)} is {n}, but a {r.type} takes {want} bytes",
                )
            src = self.tensor_of.get(op.operands[0]) if is_view(op) and op.operands else None
            if src is not None:
                if off != src.offset:
                    raise _fail(
                        self.fname,
                        f"{first()} is a view of {self.name_of(op.operands[0])} (bytes from {src.offset}) "
                        f"but is planned at offset {off}",
                    )
                src.views.append(r)
                self.tensor_of[r] = src
                continue
            self._add(Tensor(r, i, i, off, n))

    def find_inplace(self) -> None:
        """Marks each result an elementwise op writes over a dying input."""
        for t in self.tensors:
            op = t.value.owner
            if t.start < 0 or not isinstance(op, Operation) or fusion_kind(op) is not FusionKind.ELEMENTWISE:
                continue
            if t.value is not op.results[0]:
                continue
            for v in op.operands:
                s = self.tensor_of.get(v)
                if s is None or s is t or s.start < 0 or s.end != t.start:
                    continue
                if (s.offset, s.size) != (t.offset, t.size):
                    continue
                if all(w.type == t.value.type for w in op.operands if self.tensor_of.get(w) is s):
                    t.overwrites = s
                    break

    # ------------------------------------------------------------------ checks

    def check_slots(self) -> None:
        arena = self.plan.arena_bytes
        for t in self.tensors:
            if t.offset < 0 or t.offset % P.ALIGN:
                raise _fail(self.fname, f"{self.describe(t)}: the offset is not a multiple of {P.ALIGN}")
            if t.stop > arena:
                raise _fail(
                    self.fname,
                    f"{self.describe(t)}: ends past the arena ({P.ARENA_BYTES} = {arena})",
                )

    def check_overlaps(self) -> None:
        """The sweep: tensors by start; the live ones sorted by offset."""
        order = sorted((t for t in self.tensors if t.size > 0), key=lambda t: t.start)
        live_offsets: list[int] = []
        live: list[Tensor] = []
        ending: list[tuple[int, int, Tensor]] = []  # heap of (end, seq, tensor)
        removed: set[int] = set()

        def remove(t: Tensor) -> None:
            if id(t) in removed:
                return
            removed.add(id(t))
            k = bisect_left(live_offsets, t.offset)
            while live[k] is not t:
                k += 1
            del live_offsets[k], live[k]

        for seq, t in enumerate(order):
            while ending and ending[0][0] < t.start:
                remove(heapq.heappop(ending)[2])
            if t.overwrites is not None and t.overwrites.size > 0:
                remove(t.overwrites)  # it ends here; t takes its bytes over
            k = bisect_left(live_offsets, t.offset)
            for other in (live[k - 1] if k > 0 else None, live[k] if k < len(live) else None):
                if other is not None and other.offset < t.stop and t.offset < other.stop:
                    lo, hi = max(t.offset, other.offset), min(t.stop, other.stop)
                    first, second = sorted((other, t), key=lambda x: x.start)
                    raise _fail(
                        self.fname,
                        f"two tensors live at once overlap in the arena, at bytes [{lo}, {hi}) "
                        f"(both live at {_where(second.start)}):\n"
                        f"  {self.describe(first)}\n  {self.describe(second)}",
                    )
            live_offsets.insert(k, t.offset)
            live.insert(k, t)
            heapq.heappush(ending, (t.end, seq, t))

    def check_peak(self) -> None:
        if P.PEAK_LIVE_BYTES not in self.f.attributes:
            return
        events: dict[int, int] = defaultdict(int)
        for t in self.tensors:
            start = t.start + 1 if t.overwrites is not None else t.start  # its input's bytes until then
            if start <= t.end:
                events[start] += P.align(t.size)
                events[t.end + 1] -= P.align(t.size)
        peak = live = 0
        at = -1
        for p in sorted(events):
            live += events[p]
            if live > peak:
                peak, at = live, p
        if peak != self.plan.peak_live_bytes:
            raise _fail(
                self.fname,
                f"{P.PEAK_LIVE_BYTES} = {self.plan.peak_live_bytes}, but the tensors live at once "
                f"take at most {peak} bytes (aligned), reached at {_where(at)}",
            )


def verify_function(f: func.FuncOp, names: _Names | None = None) -> bool:
    """Checks one function's plan; False if it has none. Raises
    PassFailedException on the first problem."""
    fplan = P.function_plan(f)
    if fplan is None:
        return False
    name = f.sym_name.data
    if len(f.body.blocks) != 1:
        raise _fail(name, f"{len(f.body.blocks)} blocks; a plan is over one block of straight-line code")
    module = f.get_toplevel_object()
    check = _FunctionCheck(f, fplan, names or _Names(module))  # pyright: ignore[reportArgumentType]
    check.collect()
    check.find_inplace()
    check.check_slots()
    check.check_overlaps()
    check.check_peak()
    return True


@dataclass(frozen=True)
class VerifyPlanPass(ModulePass):
    """Proves the memory plan sound: no two tensors alive at the same op
    share arena bytes, every slot is aligned and inside the arena, views sit
    on their source (see the module docstring). Changes nothing; fails on a
    module with no planned function."""

    name = "rlx-verify-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = _Names(op)
        planned = [verify_function(f, names) for f in op.ops if isinstance(f, func.FuncOp)]
        if not any(planned):
            raise PassFailedException(
                "rlx-verify-plan: no func.func carries a memory plan "
                f"({P.ARENA_BYTES}); run rlx-plan-memory (or rlx-plan) first"
            )

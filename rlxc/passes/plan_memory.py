"""`rlx-plan-memory`: liveness and arena offsets for every activation tensor.

The contract it writes (`rlx.offset` and `rlx.bytes` on ops,
`rlx.arg_offsets`, `rlx.arena_bytes` and `rlx.peak_live_bytes` on the func)
is defined, read and written in `rlxc.dialects.plan`.

`rlx.bytes` is the tensor's exact size; slots are 256-byte aligned, and the
lower bound counts buffers at their aligned size (no aligned arena can beat it).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlxc.dialects import plan as P
from rlxc.dialects import rlx
from rlxc.dialects.plan import align
from rlxc.dialects.rlx import FusionKind, fusion_kind, is_view
from rlxc.dialects.types import tensor_bytes

STRATEGIES = ("greedy", "naive")

#: Ops whose results are not activations (they live in the parameter buffer).
NOT_ACTIVATIONS = (rlx.ParamOp, rlx.ConstantOp)


@dataclass(eq=False)
class Buffer:
    """A slot in the arena: one tensor, plus the views and in-place results
    that share it. Live over [start, end] in program positions."""

    size: int
    start: int
    end: int
    values: list[SSAValue] = field(default_factory=list)
    offset: int = -1

    @property
    def aligned(self) -> int:
        return align(self.size)


def liveness(block: Block, inplace: bool) -> list[Buffer]:
    """Buffers of a function body in program order, with live intervals.

    Position -1 is the function entry (arguments are written before any op);
    the return op's position keeps outputs alive to the end.
    """
    ops = list(block.ops)
    pos = {o: i for i, o in enumerate(ops)}
    buffer_of: dict[SSAValue, Buffer] = {}
    buffers: list[Buffer] = []

    def new(v: SSAValue, at: int) -> None:
        b = Buffer(tensor_bytes(v.type), at, at, [v])  # pyright: ignore[reportArgumentType]
        buffers.append(b)
        buffer_of[v] = b

    # every value's last read (inside regions too), known before any slot is
    # placed: an in-place candidate must not be read after `here`
    last_use: dict[SSAValue, int] = {}
    for op in ops:
        for inner in op.walk():
            for v in inner.operands:
                last_use[v] = pos[op]

    for a in block.args:
        new(a, -1)
    for op in ops:
        here = pos[op]
        for v in op.operands:  # extend the live range of everything read here
            if (b := buffer_of.get(v)) is not None:
                b.end = max(b.end, here)
        for inner in op.walk():  # values read inside regions (none for rlx)
            if inner is op:
                continue
            for v in inner.operands:
                if (b := buffer_of.get(v)) is not None:
                    b.end = max(b.end, here)
        if isinstance(op, NOT_ACTIVATIONS) or isinstance(op, func.ReturnOp):
            continue
        if is_view(op) and (b := buffer_of.get(op.operands[0])) is not None:
            b.values.append(op.results[0])
            buffer_of[op.results[0]] = b
            continue
        reused = _inplace_candidate(op, buffer_of, here, last_use) if inplace else None
        for r in op.results:
            if reused is not None:
                reused.values.append(r)
                buffer_of[r] = reused
                reused = None  # one result takes the dying slot
            else:
                new(r, here)
    # Ends of views' uses were attributed to the shared buffer as they came.
    return buffers


def _inplace_candidate(op: Operation, buffer_of: dict[SSAValue, Buffer], here: int,
                       last_use: dict[SSAValue, int]) -> Buffer | None:
    """An input slot an elementwise op may overwrite: the input dies here (no
    value in its slot, views included, is read later: `last_use`), has
    exactly the result's shape and element size (so each thread reads and then
    writes the same bytes), and is not a function argument or output."""
    if fusion_kind(op) is not FusionKind.ELEMENTWISE or not op.results:
        return None
    out = op.results[0].type
    for v in op.operands:
        b = buffer_of.get(v)
        if b is None or b.start < 0 or max(last_use.get(w, -1) for w in b.values) != here:
            continue
        readers = [w for w in op.operands if buffer_of.get(w) is b]
        if all(w.type == out for w in readers) and tensor_bytes(v.type) == tensor_bytes(out):  # pyright: ignore
            return b
    return None


def peak_live_bytes(buffers: list[Buffer]) -> int:
    """The largest total aligned size of buffers alive at one position."""
    events: dict[int, int] = defaultdict(int)
    for b in buffers:
        events[b.start] += b.aligned
        events[b.end + 1] -= b.aligned
    peak = live = 0
    for p in sorted(events):
        live += events[p]
        peak = max(peak, live)
    return peak


class _TimeIndex:
    """Placed buffers bucketed by time, to find those overlapping an interval."""

    BUCKET = 64

    def __init__(self) -> None:
        self.buckets: dict[int, list[Buffer]] = defaultdict(list)

    def add(self, b: Buffer) -> None:
        for k in range((b.start + 1) // self.BUCKET, (b.end + 1) // self.BUCKET + 1):
            self.buckets[k].append(b)

    def overlapping(self, b: Buffer) -> list[Buffer]:
        seen: dict[int, Buffer] = {}
        for k in range((b.start + 1) // self.BUCKET, (b.end + 1) // self.BUCKET + 1):
            for o in self.buckets.get(k, ()):
                if o.start <= b.end and b.start <= o.end:
                    seen[id(o)] = o
        return list(seen.values())


def place(buffers: list[Buffer], order: list[Buffer], best_fit: bool = True) -> int:
    """Greedy placement in `order`: each buffer takes the smallest free gap
    (`best_fit`) or the lowest one (first fit) among those left by buffers
    alive at the same time, else goes on top. Returns the arena size."""
    index = _TimeIndex()
    top = 0
    for b in order:
        busy = sorted((o.offset, o.offset + o.aligned) for o in index.overlapping(b))
        best: tuple[int, int] | None = None  # (gap size, offset)
        cursor = 0
        for lo, hi in busy:
            gap = lo - cursor
            if gap >= b.aligned and (best is None or (best_fit and gap < best[0])):
                best = (gap, cursor)
            cursor = max(cursor, hi)
        b.offset = best[1] if best is not None else cursor
        top = max(top, b.offset + b.aligned)
        index.add(b)
    return top


#: The greedy planner's budget of placements (buffers placed, summed over
#: tries) for the seeded restarts: a fixed amount of work, so the plan never
#: depends on the machine's speed.
PLACEMENT_BUDGET = 1 << 18


def plan(buffers: list[Buffer], strategy: str, restarts: int = 256) -> int:
    """Assigns offsets; returns the arena size.

    `greedy` tries four orders (largest first, longest lifetime first, largest
    area first, program order), each with best-fit and with first-fit gaps,
    and then, while the arena is above the lower bound, seeded perturbations
    of them and random orders, keeping the smallest arena found: at most
    `restarts`, and no more than PLACEMENT_BUDGET placements in all (so a
    large plan tries fewer). The result is a function of the input alone.
    """
    if strategy == "naive":  # a bump allocator: no reuse at all
        top = 0
        for b in buffers:
            b.offset = top
            top += b.aligned
        return top
    bound = peak_live_bytes(buffers)
    orders = [
        sorted(buffers, key=lambda b: (-b.aligned, b.start)),
        sorted(buffers, key=lambda b: (-(b.end - b.start), -b.aligned, b.start)),
        sorted(buffers, key=lambda b: (-b.aligned * (b.end - b.start + 1), b.start)),
        sorted(buffers, key=lambda b: (b.start, -b.aligned)),
    ]
    rng = random.Random(0)
    restarts = min(restarts, PLACEMENT_BUDGET // max(1, len(buffers)))
    best_size, best_offsets = None, None
    tries = 0
    while True:
        best_fit = True
        if tries < 2 * len(orders):  # each base order, best fit then first fit
            order = orders[tries % len(orders)]
            best_fit = tries < len(orders)
        elif tries < 2 * len(orders) + restarts:
            order = list(orders[tries % len(orders)])
            best_fit = tries % 2 == 0
            if tries % 4 < 2:  # perturb a base order: swap random neighbours
                for _ in range(max(1, len(order) // 4)):
                    k = rng.randrange(len(order) - 1) if len(order) > 1 else 0
                    order[k : k + 2] = order[k : k + 2][::-1]
            else:  # or try a random order outright (small plans find the bound so)
                rng.shuffle(order)
        else:
            break
        tries += 1
        size = place(buffers, order, best_fit)
        if best_size is None or size < best_size:
            best_size, best_offsets = size, [b.offset for b in buffers]
        if best_size <= bound:
            break
    assert best_offsets is not None and best_size is not None
    for b, off in zip(buffers, best_offsets):
        b.offset = off
    return best_size


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Plans one activation arena per function, in program order.

    Each activation's live interval runs from its defining op to its last use
    (function arguments from the entry, function results to the return).
    Offsets are assigned greedily, best-fit into gaps, trying two orders as
    XLA's heap simulator does (largest first; longest lifetime first) and
    keeping the smaller arena; slots are 256-byte aligned. Views (reshape, a
    cast to its own type) alias their input. Params and constants are not
    activations: they live in the read-only parameter buffer.

    Options:
    * `strategy`: `greedy` (default) or `naive`, a bump allocator with no
      reuse, for comparison.
    * `inplace`: let an elementwise op write its output over an input that
      dies at that op (same shape and element size), so the two share one
      buffer. Off by default: after fusion the gain is small, and without it
      no two tensors that are live at the same op ever share bytes.
    """

    name = "rlx-plan-memory"

    strategy: str = "greedy"
    inplace: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy not in STRATEGIES:
            raise PassFailedException(
                f"rlx-plan-memory: unknown strategy '{self.strategy}', expected one of "
                f"{', '.join(STRATEGIES)}"
            )
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                self._plan_function(f)

    def _plan_function(self, f: func.FuncOp) -> None:
        name = f.sym_name.data
        if len(f.body.blocks) != 1:
            raise PassFailedException(
                f"rlx-plan-memory: @{name} has {len(f.body.blocks)} blocks; planning "
                "needs one block of straight-line code (liveness is by program position)"
            )
        block = f.body.block
        for i, op in enumerate(block.ops):
            problem = None
            if op.regions and not isinstance(op, rlx.ElementwiseRegionOp | rlx.FusionOp):
                problem = "ops with regions (control flow) are not supported"
            elif not isinstance(op, func.ReturnOp) and any(
                not isinstance(r.type, TensorType) for r in op.results
            ):
                problem = "it has a non-tensor result; only tensors live in the arena"
            if problem is not None:
                text = str(op).splitlines()[0]
                raise PassFailedException(
                    f"rlx-plan-memory: cannot plan op #{i} of @{name}, `{text}`: {problem}"
                )
        buffers = liveness(block, self.inplace)
        arena = plan(buffers, self.strategy)
        offset_of = {v: b.offset for b in buffers for v in b.values}
        for op in block.ops:
            if isinstance(op, NOT_ACTIVATIONS) or not op.results:
                continue
            P.set_slots(
                op,
                [offset_of[r] for r in op.results],
                [tensor_bytes(r.type) for r in op.results],
            )
        P.set_function_plan(
            f,
            P.FunctionPlan(
                [offset_of[a] for a in block.args], arena, peak_live_bytes(buffers)
            ),
        )

"""Outputs written where the caller gets them: which kernel arguments of a
planned, lowered function write (and later read) its outputs, so that the
runtime can point them at buffers of its own (`CudaExecutable`'s output
pool) instead of the arena and skip the copy out of the arena
(`executable.BIND_OUTPUTS`). Pure: no CUDA, testable on a lowered module.

A function output is bound when it is a kernel's (or gemm's) result, or a
view of one, and the plan lets every argument that touches its slot from
its producer on be moved without touching another value:

* at the producer, no operand's slot overlaps the result's (an in-place
  kernel reads what it writes: moving the write would move the read);
* after it, every arena argument inside the slot is the slot's start and
  an operand of that op that is the output's value or a view of it, and no
  later result overlaps the slot (the planner keeps an output's slot to
  itself until the end; this checks rather than trusts it);
* before it, arguments inside the slot belong to other values and stay.

One base value is bound once (outputs that return it twice, or a view of
it beside it, are copied from where it was bound); empty outputs are not
bound.

Inputs read where the caller has them (`executable.BIND_INPUTS`): a
function argument is bound when only kernels read it (no gemm: cuBLASLt's
captured launches cannot be re-pointed), it is not returned, and, up to
its last reader, no launch writes into its slot or passes any other value
there (the caller's array must not be written, nor another value moved).
The launches that read it (`InputBinding.args`) are then re-pointed at
the caller's array in the I/O graph, and run() copies nothing in for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, SSAValue

from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.types import tensor_bytes


def location(f: func.FuncOp, arg_offsets: Sequence[int], v: SSAValue) -> rlx_cuda.ArgAttr:
    """Where a planned value lives: the parameter buffer (params and
    constants), its base's slot (views), its op's planned slot, or its
    argument's slot."""
    owner = v.owner
    if isinstance(owner, rlx.ParamOp | rlx.ConstantOp):
        return rlx_cuda.param(P.param_offset(owner))
    if isinstance(owner, Operation) and rlx.is_view(owner):
        return location(f, arg_offsets, owner.operands[0])
    if isinstance(owner, Operation) and (offs := P.offsets(owner)) is not None:
        return rlx_cuda.arena(offs[v.index])  # pyright: ignore[reportAttributeAccessIssue]
    i = list(f.body.block.args).index(v)
    return rlx_cuda.arena(arg_offsets[i])


def base(v: SSAValue) -> SSAValue:
    """The value a chain of views starts from."""
    while isinstance(v.owner, Operation) and rlx.is_view(v.owner):
        v = v.owner.operands[0]
    return v


def launch_ops(f: func.FuncOp) -> list[Operation]:
    """The function's launch list, in order: kernel launches and gemms."""
    return [op for op in f.body.block.ops if isinstance(op, rlx_cuda.LaunchOp | rlx_cuda.GemmOp)]


def op_args(op: Operation) -> list[rlx_cuda.ArgAttr]:
    """The locations an op of the launch list passes to its kernel or gemm."""
    if isinstance(op, rlx_cuda.LaunchOp):
        return list(op.args.data)
    assert isinstance(op, rlx_cuda.GemmOp)
    return list(op.locations.data)


@dataclass(frozen=True)
class Binding:
    """Output `output` written in place: the arena slot [offset, offset +
    nbytes) of its base value, moved from launch `first` (its producer's
    index in `launch_ops`) on."""

    output: int
    offset: int
    nbytes: int
    first: int

    def covers(self, index: int, offset: int) -> bool:
        """Whether an arena argument at `offset` of launch `index` is this output."""
        return index >= self.first and self.offset <= offset < self.offset + self.nbytes


def bind_outputs(f: func.FuncOp, arg_offsets: Sequence[int]) -> tuple[list[Binding], dict[int, str]]:
    """The outputs that can be bound (at most one per base value), and why
    each other output cannot (output index -> reason)."""
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ops = launch_ops(f)
    index = {op: i for i, op in enumerate(ops)}
    bindings: list[Binding] = []
    why: dict[int, str] = {}
    first: dict[SSAValue, int] = {}  # a base value -> the first output returning it
    for k, v in enumerate(ret.arguments):
        b = base(v)
        if b in first:
            bound = any(x.output == first[b] for x in bindings)
            why[k] = f"its value is output {first[b]}'s" + (", bound there" if bound else "")
            continue
        first[b] = k
        reason = _refused(f, arg_offsets, ops, index, b)
        if reason:
            why[k] = reason
            continue
        owner = b.owner
        assert isinstance(owner, Operation)
        start, nbytes = P.offsets(owner)[b.index], P.sizes(owner)[b.index]  # pyright: ignore
        bindings.append(Binding(k, start, nbytes, index[owner]))
    return bindings, why


def _refused(f: func.FuncOp, arg_offsets: Sequence[int], ops: list[Operation], index: dict[Operation, int],
             b: SSAValue) -> str:
    """Why base value `b` is not bound ("" when it is)."""
    if isinstance(b, BlockArgument):
        return "a function argument"
    owner = b.owner
    if isinstance(owner, rlx.ParamOp | rlx.ConstantOp):
        return "a param or constant"
    if owner not in index:
        return f"made by {owner.name}, not a kernel or gemm"  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(owner, Operation)
    offs, sizes = P.offsets(owner), P.sizes(owner)
    if offs is None or sizes is None:
        return "not planned"
    start, nbytes = offs[b.index], sizes[b.index]  # pyright: ignore[reportAttributeAccessIssue]
    if nbytes == 0:  # nothing to copy, and a slot of no bytes may start where a live one does
        return "empty"
    return _unsafe(f, arg_offsets, ops, index[owner], b, start, nbytes)


def _overlaps(a: int, an: int, b: int, bn: int) -> bool:
    return a < b + bn and b < a + an


def _in_slot(f: func.FuncOp, arg_offsets: Sequence[int], x: SSAValue, start: int, nbytes: int) -> bool:
    """Whether value `x` lives in the arena overlapping [start, start +
    nbytes) (an empty value as one byte at its offset)."""
    loc = location(f, arg_offsets, x)
    return loc.kind.data == "arena" and _overlaps(loc.value.value.data, max(tensor_bytes(x.type), 1), start, nbytes)  # pyright: ignore[reportArgumentType]


def _unsafe(f: func.FuncOp, arg_offsets: Sequence[int], ops: list[Operation], first: int, value: SSAValue,
            start: int, nbytes: int) -> str:
    """Why moving `value`'s slot from launch `first` on could move another
    value's bytes too ("" when it cannot)."""
    producer = ops[first]
    if any(_in_slot(f, arg_offsets, x, start, nbytes) for x in producer.operands):
        return f"its producer (launch {first}) reads an operand in its slot (in place)"
    offs, sizes = P.offsets(producer) or [], P.sizes(producer) or []
    for r, (o, n) in enumerate(zip(offs, sizes)):
        if r != value.index and _overlaps(o, n, start, nbytes):  # pyright: ignore[reportAttributeAccessIssue]
            return f"its producer (launch {first}) writes another result into its slot"
    for i in range(first + 1, len(ops)):
        op = ops[i]
        for o, n in zip(P.offsets(op) or [], P.sizes(op) or []):
            if _overlaps(o, n, start, nbytes):
                return f"launch {i} writes into its slot"
        ours = {location(f, arg_offsets, x).value.value.data for x in op.operands if base(x) is value}
        for a in op_args(op):
            if a.kind.data != "arena":
                continue
            off = a.value.value.data
            if start <= off < start + nbytes and (off != start or start not in ours):
                return f"launch {i} passes an argument inside its slot that is not its value"
    return ""


@dataclass(frozen=True)
class InputBinding:
    """Input `input` read in place: the launches (indices in `launch_ops`)
    and argument positions that pass its slot [offset, offset + nbytes),
    all at its start, up to its last reader."""

    input: int
    offset: int
    nbytes: int
    args: tuple[tuple[int, tuple[int, ...]], ...]


def bind_inputs(f: func.FuncOp, arg_offsets: Sequence[int]) -> tuple[list[InputBinding], dict[int, str]]:
    """The inputs that can be read in place, and why each other non-empty
    input cannot (input index -> reason)."""
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ops = launch_ops(f)
    returned = {base(v) for v in ret.arguments}
    bindings: list[InputBinding] = []
    why: dict[int, str] = {}
    for i, arg in enumerate(f.body.block.args):
        nbytes = tensor_bytes(arg.type)  # pyright: ignore[reportArgumentType]
        if not nbytes:
            continue
        if arg in returned:
            why[i] = "it is returned (the output is copied from its slot)"
            continue
        found = _input_args(f, arg_offsets, ops, arg, arg_offsets[i], nbytes)
        if isinstance(found, str):
            why[i] = found
        else:
            bindings.append(InputBinding(i, arg_offsets[i], nbytes, found))
    return bindings, why


def _input_args(f: func.FuncOp, arg_offsets: Sequence[int], ops: list[Operation], arg: SSAValue, start: int,
                nbytes: int) -> tuple[tuple[int, tuple[int, ...]], ...] | str:
    """The (launch, argument positions) that pass input `arg`'s slot, or why
    it cannot be read in place."""
    readers = [i for i, op in enumerate(ops) if any(base(x) is arg for x in op.operands)]
    for i in readers:
        if isinstance(ops[i], rlx_cuda.GemmOp):
            return f"launch {i} (a gemm) reads it"
    last = readers[-1] if readers else -1
    found = []
    for i in range(last + 1):
        op = ops[i]
        for o, n in zip(P.offsets(op) or [], P.sizes(op) or []):
            if _overlaps(o, max(n, 1), start, nbytes):
                return f"launch {i} writes into its slot" + (" (in place)" if i in readers else "")
        if any(base(x) is not arg and _in_slot(f, arg_offsets, x, start, nbytes) for x in op.operands):
            return f"launch {i} reads another value inside its slot"
        at = []
        for j, a in enumerate(op_args(op)):
            if a.kind.data == "arena" and start <= a.value.value.data < start + nbytes:
                if a.value.value.data != start or i not in readers:
                    return f"launch {i} passes an argument inside its slot that is not its start"
                at.append(j)
        if at:
            found.append((i, tuple(at)))
    return tuple(found)

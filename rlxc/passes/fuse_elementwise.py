"""`rlx-fuse-elementwise`: groups of elementwise/broadcast ops -> `rlx.elementwise_region`."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, TensorType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from rlxc.dialects import rlx
from rlxc.dialects.rlx import FusionKind, fusion_kind
from rlxc.dialects.scalar import ScalarEmitter, emit_scalar
from rlxc.dialects.types import shape_of

_FUSIBLE = (FusionKind.ELEMENTWISE, FusionKind.BROADCAST)


@dataclass(eq=False)
class _Group:
    """Ops that will become one region; all produce the same result shape."""

    shape: tuple[int, ...]
    members: list[Operation] = field(default_factory=list)
    member_set: set[Operation] = field(default_factory=set)
    # (position, tiebreak, user) of uses of member results; the entries at
    # positions before the group's last member must all be members.
    uses: list[tuple[int, int, Operation]] = field(default_factory=list)


def _result_shape(op: Operation) -> tuple[int, ...] | None:
    shapes = {shape_of(r.type) for r in op.results if isinstance(r.type, TensorType)}
    return next(iter(shapes)) if len(shapes) == 1 and len(op.results) >= 1 else None


def _is_splat_constant(v: SSAValue) -> bool:
    op = v.owner
    return isinstance(op, rlx.ConstantOp) and op.splat() is not None


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Fuses connected elementwise and broadcast ops into `rlx.elementwise_region`s.

    Which ops fuse is read from each op's `Fusion` trait (elementwise or
    broadcast kinds); opaque, reduction and injective ops (matmul, conv,
    reductions, norms, reshapes, ...) are never fused across. Every fusible op
    ends up in a region (a lone op becomes a one-op region), so codegen has a
    single elementwise path.

    Rules:
    * A group has one iteration shape: each member produces a result of that
      shape. Inputs may be smaller and broadcast; an `expand` inside a group is
      the identity on its (smaller) input, so a fused broadcast needs no
      materialised tensor. A smaller elementwise value (a bias vector's exp)
      forms its own group and enters the bigger one as an input.
    * A value used both inside and outside its group becomes an extra region
      result rather than being recomputed: a result costs one store that the
      outside consumer needs anyway, while recomputation would re-read the
      value's inputs and repeat its arithmetic in every consumer; neither is
      cheaper in a memory-bound kernel, and extra results keep the IR smaller.
    * No cycles: the region is placed at its last member, so an op joins a
      group only if no op outside the group, placed before it, uses a group
      value (such an op could feed the joining op). Groups merge when an op
      consumes several of them, under the same rule.
    * Splat constants become `arith.constant`s in the body instead of inputs.
    * Once the regions are formed, an input that is a unit-step slice of the
      last axis alone (a half of a merged gate/up projection) is read in
      place: the region takes the sliced tensor with a window on it
      (`windows`), and the slice, unused, goes. A region with windows is
      not merged into another afterwards (it would read its inputs whole).

    Options:
    * `max_inputs`: most region inputs (tensors read; a kernel-argument bound).
      An op that alone reads more (a 3-input select under max_inputs=2) is a
      region by itself: ops are never split.
    * `max_ops`: most rlx ops folded into one region.
    """

    name = "rlx-fuse-elementwise"

    max_inputs: int = 16
    max_ops: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                self._fuse_block(f.body.block)
                _read_slices_in_place(f.body.block)

    # ------------------------------------------------------------------ grouping

    def _fuse_block(self, block: Block) -> None:
        ops = list(block.ops)
        pos = {o: i for i, o in enumerate(ops)}
        group_of: dict[Operation, _Group] = {}
        groups: list[_Group] = []
        tiebreak = iter(range(1 << 62))

        for op in ops:
            if fusion_kind(op) not in _FUSIBLE or op.regions and not isinstance(
                op, rlx.ElementwiseRegionOp
            ):
                continue
            if isinstance(op, rlx.ElementwiseRegionOp) and op.windows is not None:
                continue  # its inputs are windows: merged into a bigger region they would be read whole
            shape = _result_shape(op)
            if shape is None:
                continue
            cands: list[_Group] = []
            for v in op.operands:
                g = group_of.get(v.owner)  # pyright: ignore[reportArgumentType]
                if g is not None and g.shape == shape and g not in cands:
                    cands.append(g)
            chosen = self._try_merge(cands, op, pos)
            if chosen is None:
                # Fall back to the single best candidate, then to a new group.
                for g in sorted(cands, key=lambda g: -len(g.members)):
                    chosen = self._try_merge([g], op, pos)
                    if chosen is not None:
                        break
            if chosen is None:
                chosen = _Group(shape)
                groups.append(chosen)
            else:
                for g in chosen_from(cands, chosen):
                    if g is not chosen:
                        groups.remove(g)
            chosen.members.append(op)
            chosen.member_set.add(op)
            for m in chosen.members:
                group_of[m] = chosen
            for r in op.results:
                for use in r.uses:
                    heapq.heappush(chosen.uses, (pos[_top(use.operation, block)], next(tiebreak), _top(use.operation, block)))

        for g in groups:
            self._materialize(g, block)

    def _try_merge(self, cands: list[_Group], op: Operation, pos: dict[Operation, int]) -> _Group | None:
        if not cands:
            return None
        union: set[Operation] = set().union(*(g.member_set for g in cands))
        union.add(op)
        if len(union) > self.max_ops:
            return None
        here = pos[op]
        popped: list[list[tuple[int, int, Operation]]] = []
        ok = True
        for g in cands:
            taken = []
            while g.uses and g.uses[0][0] <= here:
                entry = heapq.heappop(g.uses)
                taken.append(entry)
                if entry[2] not in union:
                    ok = False
                    break
            popped.append(taken)
            if not ok:
                break
        if ok and self._count_inputs(union) > self.max_inputs:
            ok = False
        if not ok:
            for g, taken in zip(cands, popped):
                for entry in taken:
                    heapq.heappush(g.uses, entry)
            return None
        # Merge into the largest candidate.
        target = max(cands, key=lambda g: len(g.members))
        for g in cands:
            if g is target:
                continue
            target.members.extend(g.members)
            target.member_set |= g.member_set
            for entry in g.uses:
                heapq.heappush(target.uses, entry)
        target.members.sort(key=lambda m: pos[m])
        return target

    @staticmethod
    def _count_inputs(members: set[Operation]) -> int:
        seen: set[SSAValue] = set()
        for m in members:
            for v in m.operands:
                if v.owner not in members and not _is_splat_constant(v):
                    seen.add(v)
        return len(seen)

    # ------------------------------------------------------------------ rewriting

    def _materialize(self, g: _Group, block: Block) -> None:
        members = g.members
        inside = g.member_set
        inputs: list[SSAValue] = []
        for m in members:
            for v in m.operands:
                if v.owner not in inside and not _is_splat_constant(v) and v not in inputs:
                    inputs.append(v)
        outputs = [r for m in members for r in m.results if any(u.operation not in inside for u in r.uses)]
        if not outputs:
            return  # dead group: leave it to dce
        body = Block(arg_types=[v.type.get_element_type() for v in inputs])  # pyright: ignore
        scalar: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
        e = ScalarEmitter()
        for m in members:
            args = []
            for v in m.operands:
                if v not in scalar:  # a splat constant
                    c = v.owner
                    assert isinstance(c, rlx.ConstantOp)
                    scalar[v] = e.const(c.splat(), c.value.get_element_type())  # pyright: ignore
                args.append(scalar[v])
            if isinstance(m, rlx.ElementwiseRegionOp):
                mapper: dict[SSAValue, SSAValue] = dict(zip(m.body.block.args, args))
                for inner in m.body.block.ops:
                    if isinstance(inner, rlx.YieldOp):
                        for r, y in zip(m.results, inner.values):
                            scalar[r] = mapper.get(y, y)
                        break
                    e.ops.append(inner.clone(mapper))
            else:
                scalar[m.results[0]] = emit_scalar(m, e, args)
        body.add_ops(e.ops)
        body.add_op(rlx.YieldOp.build(operands=[[scalar[r] for r in outputs]]))
        region_op = rlx.ElementwiseRegionOp.build(
            operands=[inputs], result_types=[[r.type for r in outputs]], regions=[Region(body)]
        )
        last = members[-1]
        Rewriter.insert_op(region_op, InsertPoint.before(last))
        for old, new in zip(outputs, region_op.results):
            old.replace_all_uses_with(new)
        for m in reversed(members):
            Rewriter.erase_op(m)


def chosen_from(cands: list[_Group], chosen: _Group) -> list[_Group]:
    """The candidate groups that were merged into `chosen` (all but itself)."""
    return [g for g in cands if g is not chosen and g.members and g.members[0] in chosen.member_set]


def _top(op: Operation, block: Block) -> Operation:
    """The ancestor of `op` that sits directly in `block`."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _last_axis_window(v: SSAValue) -> tuple[SSAValue, int, int] | None:
    """(source, offset, width) where `v` is a unit-step slice of part of its
    source's last axis alone, else None."""
    sl = v.owner
    window = sl.last_axis_window() if isinstance(sl, rlx.SliceOp) else None
    if window is None or window[1] == shape_of(sl.input.type)[-1]:  # pyright: ignore[reportAttributeAccessIssue]
        return None  # the whole axis: not a window (canonicalization's to fold)
    return sl.input, *window  # pyright: ignore[reportAttributeAccessIssue]


def _read_slices_in_place(block: Block) -> None:
    """Regions read their last-axis slice inputs in place (see the pass's rules)."""
    for region_op in [o for o in block.ops if isinstance(o, rlx.ElementwiseRegionOp)]:
        if region_op.windows is not None:
            continue
        found = {j: w for j, v in enumerate(region_op.inputs) if (w := _last_axis_window(v)) is not None}
        if not found:
            continue
        slices = [region_op.inputs[j].owner for j in found]
        for j, (src, _, _) in found.items():
            region_op.operands[j] = src
        region_op.windows = DenseArrayBase.from_list(i64, [x for j, (_, off, width) in found.items() for x in (j, off, width)])
        for sl in slices:
            if isinstance(sl, Operation) and sl.parent is not None and not any(r.uses for r in sl.results):
                Rewriter.erase_op(sl)

"""`rlx-fuse-reductions`: an elementwise prologue and the row op it feeds -> `rlx.fusion`."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from rlxc.dialects import rlx
from rlxc.dialects.rlx import FusionKind, fusion_kind, takes_prologue


@dataclass(frozen=True)
class FuseReductionsPass(ModulePass):
    """Folds the `rlx.elementwise_region` that computes a reduction's input
    into one `rlx.fusion` with it, as TVM's FuseOps fuses an elementwise
    producer into a reduction consumer: add -> layer_norm, scale and mask
    add -> softmax become one kernel that computes the region per element
    as it reads the row, so the region's value is never written unless
    something else reads it.

    What fuses is read from the ops, not from a list of patterns: the
    consumer's fusion kind is `reduction` and it has the `TakesPrologue`
    trait (which operand, and whether this instance's rows are trailing);
    the producer is an elementwise region (fusion kind `elementwise`).

    Rules:
    * The region's results that are used elsewhere (a residual sum read by
      the next layer) become extra results of the fusion: the kernel stores
      them as it computes them, one write the consumer needs anyway.
    * The fusion takes the row op's place, so it fuses only when every other
      use of the region's results comes after the row op (no cycle, no
      use before its definition).
    * Only the row operand is a prologue: a region that also computes
      another operand of the row op (gamma) is left alone.
    * One region feeds one fusion: a region whose value feeds two row ops
      fuses into the first, and the second reads the fusion's extra result.

    Run it after `rlx-fuse-elementwise` (which builds the regions).
    """

    name = "rlx-fuse-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                self._fuse_block(f.body.block)

    def _fuse_block(self, block: Block) -> None:
        for root in list(block.ops):
            trait = takes_prologue(root)
            if trait is None or fusion_kind(root) is not FusionKind.REDUCTION:
                continue
            pro = root.operands[trait.operand].owner
            if not isinstance(pro, rlx.ElementwiseRegionOp) or pro.parent_block() is not block:
                continue
            if pro.windows is not None:
                continue  # a prologue reads its inputs whole, row by row
            if not self._later_uses_only(pro, root, block):
                continue
            if any(v.owner is pro for i, v in enumerate(root.operands) if i != trait.operand):
                continue  # the region also computes a column param (gamma): only the row is a prologue
            self._fuse(pro, root)

    @staticmethod
    def _later_uses_only(pro: Operation, root: Operation, block: Block) -> bool:
        """Whether every use of `pro`'s results, other than `root`'s, is after `root`."""
        at = block.get_operation_index(root)
        for r in pro.results:
            for use in r.uses:
                user = use.operation
                while user.parent_block() is not block:
                    user = user.parent_op()  # pyright: ignore[reportAssignmentType]
                if user is not root and block.get_operation_index(user) < at:
                    return False
        return True

    @staticmethod
    def _fuse(pro: rlx.ElementwiseRegionOp, root: Operation) -> None:
        inputs: list[SSAValue] = []
        for v in [*pro.inputs, *root.operands]:
            if v.owner is not pro and v not in inputs:
                inputs.append(v)
        extra = [r for r in pro.results if any(u.operation is not root for u in r.uses)]
        body = Block(arg_types=[v.type for v in inputs])
        mapper: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
        inner_pro = pro.clone(mapper)
        inner_root = root.clone(mapper)
        body.add_ops([inner_pro, inner_root])
        body.add_op(rlx.YieldOp.build(operands=[[*inner_root.results, *(mapper[r] for r in extra)]]))
        fused = rlx.FusionOp.build(
            operands=[inputs],
            result_types=[[*(r.type for r in root.results), *(r.type for r in extra)]],
            regions=[Region(body)],
        )
        Rewriter.insert_op(fused, InsertPoint.before(root))
        for old, new in zip([*root.results, *extra], fused.results):
            if old.name_hint is not None:
                new.name_hint = old.name_hint
            old.replace_all_uses_with(new)
        Rewriter.erase_op(root)
        Rewriter.erase_op(pro)

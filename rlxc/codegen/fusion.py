"""`rlx.fusion` kernels: a row op (softmax, log_softmax, layer_norm,
rms_norm) whose input an elementwise region computes as the row is read.

The region's body becomes the row kernel's `Prologue` (rows.py): its
statements are rendered through the scalar-op table, as an elementwise
kernel's are, and run per element of the row; the region's value for the
row op is rounded to its element type (as the region would store it), and
any other region result the fusion yields is stored as it is computed.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from rlxc.codegen.common import KernelSpec, eltype, shape
from rlxc.codegen.cuda_c import compute_type, render_body
from rlxc.codegen.rows import Fused, Prologue, PrologueInput, _round, norm_kernel, softmax_kernel
from rlxc.dialects import rlx

#: The row ops a fusion may end in, and their kernels.
ROOTS = {
    rlx.SoftmaxOp: softmax_kernel,
    rlx.LogSoftmaxOp: softmax_kernel,
    rlx.LayerNormOp: norm_kernel,
    rlx.RmsNormOp: norm_kernel,
}


class FusionShapeError(ValueError):
    """A fusion body this target cannot run as one kernel."""


def _body(op: rlx.FusionOp) -> tuple[rlx.ElementwiseRegionOp, Operation, rlx.YieldOp]:
    """The prologue region, the root row op and the terminator, or an error
    saying what the body is instead."""
    ops = list(op.body.block.ops)
    shapes = " -> ".join(o.name for o in ops)
    if (
        len(ops) != 3
        or not isinstance(ops[0], rlx.ElementwiseRegionOp)
        or type(ops[1]) not in ROOTS
        or not isinstance(ops[2], rlx.YieldOp)
        or ops[1].operands[0].owner is not ops[0]
        or ops[2].values[0] is not ops[1].results[0]
        or any(v not in op.body.block.args for v in ops[1].operands[1:])
    ):
        raise FusionShapeError(
            f"an rlx.fusion body runs as one cuda kernel when it is an elementwise_region feeding "
            f"the input of one of {', '.join(r.name for r in ROOTS)} (whose result is yielded first); "
            f"this one is {shapes}"
        )
    if rlx.takes_prologue(ops[1]) is None:  # the pass never builds one (TakesPrologue); a written one can
        axis = ops[1].axis.value.data  # pyright: ignore[reportAttributeAccessIssue]
        raise FusionShapeError(
            f"an rlx.fusion prologue runs along rows over the trailing axes: its {ops[1].name} is over axis "
            f"{axis} of a rank-{len(shape(ops[1].operands[0]))} input"
        )
    if ops[0].windows is not None:  # pyright: ignore[reportAttributeAccessIssue]
        raise FusionShapeError(
            "an rlx.fusion prologue reads its inputs whole, row by row: its elementwise_region cannot have windows"
        )
    return ops[0], ops[1], ops[2]  # pyright: ignore[reportReturnType]


def fusion_kernel(op: rlx.FusionOp, sm_count: int) -> KernelSpec:
    """The fusion's row kernel with its region as the prologue."""
    region, root, term = _body(op)
    block = op.body.block
    outer: dict[SSAValue, SSAValue] = dict(zip(block.args, op.inputs))
    outer.update(zip(term.values, op.outputs))
    x = root.operands[0]
    nd = 1 if isinstance(root, rlx.SoftmaxOp | rlx.LogSoftmaxOp) else len(shape(root.gamma))  # pyright: ignore[reportAttributeAccessIssue]
    ins = tuple(
        PrologueInput.of(f"in{j}", outer[v], shape(x), nd) for j, v in enumerate(region.inputs)
    )
    rbody = region.body.block
    yields = list(rbody.last_op.operands)  # pyright: ignore[reportOptionalMemberAccess]

    def lines(args: list[str]) -> list[str]:
        # `f`: the row kernels name their row `v`
        out, names = render_body(rbody, args, "f")
        for i, y in enumerate(yields):
            out.append(f"const {compute_type(y.type)} e{i} = {names[y]};")
        return out

    which = list(region.outputs).index(x)  # pyright: ignore[reportArgumentType]
    value = f"{_round(eltype(x))}(e{which})"
    extra = tuple(
        (f"out{m}", outer[r], f"e{list(region.outputs).index(r)}")  # pyright: ignore[reportArgumentType]
        for m, r in enumerate(term.values[1:], 1)
    )
    for r in term.values[1:]:
        if r.owner is not region:
            raise FusionShapeError(
                f"an rlx.fusion's extra results must be its prologue region's, got one of {r.owner.name}"  # pyright: ignore
            )
    fused = Fused(Prologue(ins, lines, value, extra), lambda v: outer.get(v, v))
    return ROOTS[type(root)](root, sm_count, fused)  # pyright: ignore[reportArgumentType]

"""`rlx-merge-projections`: gemms that read the same input through weights
that are params become one gemm over the weights joined, and slices.

Q, K and V of attention are three `rlx.linear`s of the same activation; the
gate and up projections of a gated MLP are two. Each is a small matmul (one
launch, one pass over the activation); together they are one wider matmul:

    %q = rlx.linear %x, %wq bias %bq          %w = rlx.concat %wq, %wk, %wv axis = 0
    %k = rlx.linear %x, %wk bias %bk   ->     %b = rlx.concat %bq, %bk, %bv axis = 0
    %v = rlx.linear %x, %wv bias %bv          %y = rlx.linear %x, %w bias %b      (N = 3n)
                                              %q = rlx.slice %y [..., 0:n]
                                              %k = rlx.slice %y [..., n:2n]  ...

The weights are joined by an `rlx.concat` of `rlx.param`s: the graph keeps
its meaning for the interpreter, and `rlxc.compile`, which has the weights,
computes every such param-only expression once (`rlxc.passes.fold_params`),
so the joined weight is one param uploaded once and no concat runs per call.

Which gemms merge: `rlx.linear`s of one input value whose weight (and bias,
if any) are `rlx.param`s or `rlx.constant`s, with the same in-features, dtype,
bias presence and activation (so one cuBLASLt epilogue serves them all); and
`rlx.matmul`s of one lhs whose rhs is a rank-2 param or constant with the
same K and dtype. Two or more of a kind merge; the merged op sits where the
first of them was.

The results are slices of the last axis of [..., N1+N2+...], which are
strided, not views (`rlx.slice` has no `IsView`), so each slice is a copy
kernel unless a later pass folds it into its consumer. In a transformer the
consumer of each of Q, K, V is a reshape to heads, a head transpose and
attention: rlx-fold-layout makes the transpose an attention layout and the
slice a head window (`q_heads`, ...), so attention reads the merged gemm's
output in place and no copy is left. Elsewhere (gate/up, read by an
elementwise multiply) the slices stay copies: merging trades gemm launches
for slice copies, a gain where launches dominate (small batches) and a loss
of about 2·size(results) bytes of traffic where bandwidth does. So gemms of
more than `max_rows` rows (1024 by default; see the pass) merge only where
every result feeds attention's q, k or v. `benchmarks/encoders.py` measures
both ("rlxc, unmerged").
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from rlxc.dialects import rlx
from rlxc.dialects.rlx import i64_array, i64_attr
from rlxc.dialects.types import dtype_name, shape_of

#: What a weight or bias must be for the join to be computed once.
_LEAVES = (rlx.ParamOp, rlx.ConstantOp)


def _leaf(v: SSAValue | None) -> bool:
    return v is not None and isinstance(v.owner, _LEAVES)


def _rows(v: SSAValue) -> int:
    """The gemm's M: the product of the input's axes but the last."""
    return prod(shape_of(v.type)[:-1])  # pyright: ignore[reportArgumentType]


def _feeds_attention(v: SSAValue) -> bool:
    """Every use of `v` is a reshape that reaches attention's query, key or
    value (directly or through transposes): once merged, its slice becomes a
    head window there (rlx-fold-layout), with no copy."""

    def reaches(x: SSAValue) -> bool:
        uses = list(x.uses)
        return bool(uses) and all(
            (isinstance(u.operation, rlx.AttentionOp) and u.index < 3)
            or (isinstance(u.operation, rlx.TransposeOp) and reaches(u.operation.results[0]))
            for u in uses
        )

    uses = list(v.uses)
    return bool(uses) and all(
        isinstance(u.operation, rlx.ReshapeOp) and reaches(u.operation.results[0]) for u in uses
    )


def _key(op: Operation, max_rows: int) -> tuple | None:
    """What must agree for `op` to merge with others of its input, or None
    when it cannot merge: (kind, input, K, dtype, bias?, activation)."""
    if (
        isinstance(op, rlx.LinearOp | rlx.MatMulOp) and max_rows
        and _rows(op.operands[0]) > max_rows and not _feeds_attention(op.results[0])
    ):  # fmt: skip
        return None
    if isinstance(op, rlx.LinearOp):
        if not _leaf(op.weight) or (op.bias is not None and not _leaf(op.bias)) or op.residual is not None:
            return None
        ws = shape_of(op.weight.type)
        act = op.activation.data if op.activation is not None else None
        return ("linear", op.input, ws[1], dtype_name(op.weight.type.get_element_type()),  # pyright: ignore
                op.bias is not None, act)
    if isinstance(op, rlx.MatMulOp):
        if op.transpose_lhs is not None or op.transpose_rhs is not None:
            return None
        if not _leaf(op.rhs) or len(shape_of(op.rhs.type)) != 2 or len(shape_of(op.lhs.type)) < 2:
            return None
        return ("matmul", op.lhs, shape_of(op.rhs.type)[0], dtype_name(op.rhs.type.get_element_type()),  # pyright: ignore
                False, None)
    return None


def _hoist(v: SSAValue | None, before: Operation) -> None:
    """Moves the leaf op defining `v` above `before` if it comes after it
    (a leaf reads nothing, so it may sit anywhere before its uses)."""
    if v is None:
        return
    leaf = v.owner
    assert isinstance(leaf, Operation)
    block = before.parent_block()
    assert block is not None
    if leaf.parent_block() is block and block.get_operation_index(leaf) > block.get_operation_index(before):
        leaf.detach()
        block.insert_op_before(leaf, before)


def _merge(group: list[Operation]) -> None:
    """Replaces the gemms of `group` (same key, in block order) by one gemm
    over the joined weights and a slice of its last axis per gemm."""
    first = group[0]
    linear = isinstance(first, rlx.LinearOp)
    weights = [op.weight if linear else op.rhs for op in group]  # pyright: ignore[reportAttributeAccessIssue]
    biases = [op.bias for op in group] if linear else []  # pyright: ignore[reportAttributeAccessIssue]
    for v in (*weights, *biases):
        _hoist(v, first)
    new: list[Operation] = []
    # linear's weight is [out, in]: join the rows; matmul's rhs is [K, N]: the columns
    w = rlx.ConcatOp.make([weights], {"axis": i64_attr(0 if linear else 1)})
    new.append(w)
    if linear:
        b = rlx.ConcatOp.make([biases], {"axis": i64_attr(0)}) if biases[0] is not None else None
        if b is not None:
            new.append(b)
        props = {"activation": first.activation} if first.activation is not None else {}  # pyright: ignore
        merged = rlx.LinearOp.make([first.input, w.result, b.result if b else None], props)  # pyright: ignore
    else:
        merged = rlx.MatMulOp.make([first.lhs, w.result])  # pyright: ignore
    new.append(merged)
    out_shape = shape_of(merged.results[0].type)
    rank = len(out_shape)
    start = 0
    slices = []
    for op in group:
        n = shape_of(op.results[0].type)[-1]
        s = rlx.SliceOp.make(
            [merged.results[0]],
            {
                "starts": i64_array([0] * (rank - 1) + [start]),
                "ends": i64_array([*out_shape[:-1], start + n]),
                "steps": i64_array([1] * rank),
            },
        )
        start += n
        slices.append(s)
    Rewriter.insert_op(new + slices, InsertPoint.before(first))
    for op, s in zip(group, slices):
        assert s.results[0].type == op.results[0].type
        if op.results[0].name_hint:
            s.results[0].name_hint = op.results[0].name_hint
        op.results[0].replace_all_uses_with(s.results[0])
        Rewriter.erase_op(op)


def merge_block(block: Block, max_rows: int = 0) -> int:
    """Merges the gemm groups of one block (inputs of at most `max_rows`
    rows; 0: any); returns how many groups merged."""
    groups: dict[tuple, list[Operation]] = {}
    for op in block.ops:
        key = _key(op, max_rows)
        if key is not None:
            groups.setdefault(key, []).append(op)
    merged = 0
    for group in groups.values():
        # the same weight (and bias) twice is the same gemm: keep one
        unique: dict[tuple, Operation] = {}
        for op in group:
            unique.setdefault(tuple(op.operands[1:]), op)
        if len(unique) < 2:
            continue
        keep = list(unique.values())
        for op in group:
            twin = unique[tuple(op.operands[1:])]
            if twin is not op:
                op.results[0].replace_all_uses_with(twin.results[0])
                Rewriter.erase_op(op)
        _merge(keep)
        merged += 1
    return merged


@dataclass(frozen=True)
class MergeProjectionsPass(ModulePass):
    """Merges gemms that share an input and whose weights are params (Q/K/V,
    gate/up) into one gemm over the joined weights, whose result is sliced
    back into the originals. See the module docstring for which gemms merge
    and for the cost of the slices.

    `max_rows`: merge only gemms whose input has at most this many rows (the
    product of its axes but the last; 0: no limit), or whose result only
    feeds attention's q, k or v (read in place as a head window after
    rlx-fold-layout, so no slice copy runs). Measured on an H100, before
    head windows existed
    (benchmarks/encoders.py, BERT-base, seq 128): at 128 rows merging Q/K/V
    made the whole encoder 5-10% faster (the gemms fill a few of the SMs
    each, and one fills more); at 4096 rows it made it 0.4% (f32) to 6.5%
    (bf16) slower (the slice copies cost more than the launches saved)."""

    name = "rlx-merge-projections"

    max_rows: int = 1024

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                merge_block(f.body.block, self.max_rows)


__all__ = ["MergeProjectionsPass", "merge_block"]

"""`rlx-fold-layout`: transposes around `rlx.attention` become the op's
operand layouts, so the attention kernel reads and writes the tensors where
they are and no transpose kernel runs; transposes of the last two axes
feeding `rlx.matmul` become its transpose flags (cuBLASLt's).

A BERT layer builds attention as linear -> reshape [b, s, h, d] ->
transpose [0, 2, 1, 3] -> attention -> transpose [0, 2, 1, 3] -> reshape
[b, s, h*d]. Reshapes are views; after this pass the transposes are gone
too: attention reads q, k and v with `q_layout = [0, 2, 1, 3]` (...) and
writes its result with `out_layout = [0, 2, 1, 3]`. A decoder with
grouped-query attention repeats its key and value heads (reshape, expand,
reshape): attention reads them unrepeated instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlxc.dialects import rlx
from rlxc.dialects.rlx.base import i64_array
from rlxc.dialects.types import shape_of
from rlxc.dialects.rlx.composites import (
    ATTENTION_LAYOUTS,
    ATTENTION_WINDOWS,
    IDENTITY_LAYOUT,
    inverse_perm,
)


def _perm(t: rlx.TransposeOp) -> list[int]:
    return [int(v) for v in t.perm.get_values()]  # pyright: ignore[reportAttributeAccessIssue]


def _with_layouts(op: rlx.AttentionOp, layouts: list[list[int]],
                  windows: list[tuple[int, int] | None] | None = None) -> dict[str, Attribute]:
    """op's properties with the four layouts replaced (identity ones dropped)
    and, where given, the three head windows."""
    drop = (*ATTENTION_LAYOUTS, *(ATTENTION_WINDOWS if windows is not None else ()), "operandSegmentSizes")
    props = {k: v for k, v in op.properties.items() if k not in drop}  # build() sets operandSegmentSizes
    for name, perm in zip(ATTENTION_LAYOUTS, layouts):
        if list(perm) != list(IDENTITY_LAYOUT):
            props[name] = i64_array(perm)
    for name, w in zip(ATTENTION_WINDOWS, windows or ()):
        if w is not None:
            props[name] = i64_array(list(w))
    return props


def _rebuild(op: rlx.AttentionOp, operands, layouts: list[list[int]], result_type,
             windows: list[tuple[int, int] | None] | None = None) -> rlx.AttentionOp:
    return rlx.AttentionOp.build(
        operands=operands,
        result_types=[result_type],
        properties=_with_layouts(op, layouts, windows),
        attributes=dict(op.attributes),
    )


def _replace(rewriter: PatternRewriter, op: Operation, new: Operation) -> None:
    """`op` -> `new`, keeping the result's name; then the ops that fed `op`
    and have no use left (a folded transpose, reshape or slice, a folded
    attention) are erased, and so on up."""
    if op.results[0].name_hint is not None:
        new.results[0].name_hint = op.results[0].name_hint
    feeders = [v.owner for v in op.operands]
    rewriter.replace(op, new)
    _erase_dead(rewriter, feeders)


def _erase_dead(rewriter: PatternRewriter, ops) -> None:
    for o in ops:
        if (
            isinstance(o, rlx.TransposeOp | rlx.ReshapeOp | rlx.SliceOp | rlx.ExpandOp | rlx.AttentionOp)
            and o.parent is not None and all(r.first_use is None for r in o.results)
        ):  # fmt: skip
            feeders = [v.owner for v in o.operands]
            rewriter.erase(o)
            _erase_dead(rewriter, feeders)


class FoldOperandTransposes(RewritePattern):
    """attention(transpose(x, P), ...) with layout L -> attention(x, ...) with
    layout inverse(P ∘ inverse(L)), where P keeps head_dim last (P[3] == 3).
    The transpose stays while it has other users."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.AttentionOp, rewriter: PatternRewriter, /):
        layouts = op.layouts()
        operands = [op.query, op.key, op.value]
        changed = False
        for i, x in enumerate(operands):
            t = x.owner
            if not isinstance(t, rlx.TransposeOp):
                continue
            p = _perm(t)
            if len(p) != 4 or p[3] != 3:
                continue
            inv = inverse_perm(layouts[i])
            # logical = x.transpose(P).transpose(inverse(L)) = t.input.transpose(C)
            composed = [p[inv[j]] for j in range(4)]
            layouts[i] = inverse_perm(composed)
            operands[i] = t.input
            changed = True
        if not changed:
            return
        mask = [op.mask] if op.mask is not None else []
        _replace(rewriter, op, _rebuild(op, [*operands, mask], layouts, op.result.type))


class FoldOperandSlices(RewritePattern):
    """attention(reshape(slice(m, last axis [a, a + h·d])) -> [B, S, h, d])
    with the heads on physical axis 2 -> attention(reshape(m) -> [B, S, W/d, d])
    with head window [a/d, h], where a and m's last axis W are multiples of d.
    One head in the logical layout ([B, 1, S, d], where the head transpose
    moved only unit axes and became a reshape) is read as [B, S, 1, d].
    A merged Q/K/V projection is then read in place: no slice copy runs. The
    slice stays while it has other users."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.AttentionOp, rewriter: PatternRewriter, /):
        layouts, windows = op.layouts(), op.windows()
        operands = [op.query, op.key, op.value]
        changed = False
        for i, x in enumerate(operands):
            r = x.owner
            if windows[i] is not None or not isinstance(r, rlx.ReshapeOp):
                continue
            phys = [int(d) for d in x.type.get_shape()]  # pyright: ignore
            layout = layouts[i]
            if layout[2] != 1:
                # one head in the logical layout ([B, 1, S, d]: a unit-axis transpose
                # became a reshape) is the same bytes as [B, S, 1, d] read with [0, 2, 1, 3]
                if layout != list(IDENTITY_LAYOUT) or phys[1] != 1:
                    continue
                phys, layout = [phys[0], phys[2], 1, phys[3]], [0, 2, 1, 3]
            sl = r.input.owner
            if not isinstance(sl, rlx.SliceOp):
                continue
            src = [int(d) for d in sl.input.type.get_shape()]  # pyright: ignore
            window = sl.last_axis_window()
            d = phys[3]
            if (
                window is None or window[0] % d or src[-1] % d or window[1] != phys[2] * d
                or prod(src[:-1]) != phys[0] * phys[1]
            ):  # fmt: skip
                continue
            start = window[0]
            wide = rlx.ReshapeOp.build(
                operands=[sl.input],
                result_types=[TensorType(sl.input.type.element_type, [phys[0], phys[1], src[-1] // d, d])],  # pyright: ignore
            )
            rewriter.insert(wide, InsertPoint.before(op))
            operands[i] = wide.result
            windows[i] = (start // d, phys[2])
            layouts[i] = layout
            changed = True
        if not changed:
            return
        mask = [op.mask] if op.mask is not None else []
        _replace(rewriter, op, _rebuild(op, [*operands, mask], layouts, op.result.type, windows))


class FoldRepeatedHeads(RewritePattern):
    """attention(reshape(expand(x5))) where x5 has a unit axis after the
    key's (or value's) heads axis, the expand repeats it n times and the
    reshape merges the pair back into the heads axis (Hugging Face's
    `repeat_kv`, PyTorch's `repeat_interleave` over heads, ONNX exports of
    either) -> attention over x5 without the unit axis: grouped-query
    attention, each key head read by n query heads in place (the kernel's
    head h // n), so the repeated copy is never written. In any operand
    layout; not through a head window."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.AttentionOp, rewriter: PatternRewriter, /):
        layouts, windows = op.layouts(), op.windows()
        operands = [op.query, op.key, op.value]
        changed = False
        for i in (1, 2):
            x = operands[i]
            r = x.owner
            if windows[i] is not None or not isinstance(r, rlx.ReshapeOp) or not isinstance(r.input.owner, rlx.ExpandOp):
                continue
            e = r.input.owner
            phys, es, xs = shape_of(x.type), shape_of(e.result.type), shape_of(e.input.type)
            ax = layouts[i].index(1)  # the physical axis that holds the heads
            if len(es) != 5 or len(xs) != 5:
                continue
            groups, n = es[ax], es[ax + 1]
            if (
                n < 2 or groups * n != phys[ax] or es[:ax] != phys[:ax] or es[ax + 2:] != phys[ax + 1:]
                or xs != (*es[: ax + 1], 1, *es[ax + 2:])
            ):  # fmt: skip
                continue
            grouped = (*phys[:ax], groups, *phys[ax + 1:])
            src = e.input
            if isinstance(src.owner, rlx.ReshapeOp) and shape_of(src.owner.input.type) == grouped:
                src = src.owner.input  # the unsqueeze that made x5: its input is the grouped tensor
            else:
                view = rlx.ReshapeOp.build(operands=[src], result_types=[TensorType(x.type.element_type, grouped)])  # pyright: ignore
                rewriter.insert(view, InsertPoint.before(op))
                src = view.result
            operands[i] = src
            changed = True
        if not changed:
            return
        mask = [op.mask] if op.mask is not None else []
        _replace(rewriter, op, _rebuild(op, [*operands, mask], layouts, op.result.type))


class FoldMatmulTransposes(RewritePattern):
    """matmul(transpose(x, P), ...) where P swaps the last two axes (and
    keeps the rest) -> matmul(x, ...) with that operand's transpose flag
    flipped (`transpose_lhs` / `transpose_rhs`): the gemm reads x where it
    is (cuBLASLt's transpose flags). The transpose stays while it has other
    users."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.MatMulOp, rewriter: PatternRewriter, /):
        operands = [op.lhs, op.rhs]
        props = {k: v for k, v in op.properties.items()}
        changed = False
        for i, (x, flag) in enumerate(zip(operands, ("transpose_lhs", "transpose_rhs"))):
            t = x.owner
            if not isinstance(t, rlx.TransposeOp):
                continue
            p = _perm(t)
            r = len(p)
            if r < 2 or p != [*range(r - 2), r - 1, r - 2]:
                continue
            operands[i] = t.input
            if flag in props:
                del props[flag]
            else:
                props[flag] = UnitAttr()
            changed = True
        if not changed:
            return
        new = rlx.MatMulOp.build(operands=operands, result_types=[op.result.type], properties=props,
                                 attributes=dict(op.attributes))
        _replace(rewriter, op, new)


class FoldResultTranspose(RewritePattern):
    """transpose(attention(...) with out layout Lo, P), the transpose being
    the attention's only user -> attention with out layout Lo ∘ P, where that
    keeps head_dim last."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.TransposeOp, rewriter: PatternRewriter, /):
        att = op.input.owner
        if not isinstance(att, rlx.AttentionOp) or not att.result.has_one_use():
            return
        p = _perm(op)
        layouts = att.layouts()
        lo = layouts[3]
        new_lo = [lo[p[i]] for i in range(4)]
        if new_lo[3] != 3:
            return
        layouts[3] = new_lo
        mask = [att.mask] if att.mask is not None else []
        new = _rebuild(att, [att.query, att.key, att.value, mask], layouts, op.result.type)
        new.result.name_hint = att.result.name_hint  # the transpose's name, where it has one, wins
        _replace(rewriter, op, new)  # and the attention, now unused, goes


@dataclass(frozen=True)
class FoldLayoutPass(ModulePass):
    """Folds `rlx.transpose`s that keep the last axis into `rlx.attention`'s
    operand layouts: a transpose feeding query, key or value becomes that
    operand's layout (it is erased once it has no other user), and a
    transpose that is the attention result's only user becomes
    `out_layout`. Transposes that move head_dim, and a result transpose when
    the result has other users, stay. A last-axis slice of whole heads that
    reaches query, key or value through a reshape to [B, S, h, d] (a merged
    Q/K/V projection's slices) becomes a head window (`q_heads`, ...) on a
    reshape of the sliced tensor. Key or value heads repeated by a reshape,
    expand, reshape (`repeat_kv`) are read unrepeated (grouped-query
    attention). A transpose of the last two axes feeding
    `rlx.matmul` becomes its `transpose_lhs` / `transpose_rhs` flag. The cuda optimize pipeline runs it
    after rlx-unfuse and the clean-ups, before fusion."""

    name = "rlx-fold-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [
            FoldRepeatedHeads(), FoldOperandTransposes(), FoldOperandSlices(), FoldResultTranspose(),
            FoldMatmulTransposes(),
        ]  # fmt: skip
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


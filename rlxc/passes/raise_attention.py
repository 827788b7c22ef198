"""`rlx-raise-attention`: attention written out in primitives (as ONNX
exporters write it) -> `rlx.attention`, so the fused kernel runs it.

Exporters spell scaled dot-product attention as

    s = matmul(q, kT)                  q [b, h, sq, d], kT [b, h, d, sk]
    s = s / c  or  s * c               c a scalar (constant or param); optional
    s = s + mask                       optional, mask broadcasting to s
    s = select(tril, s, fill)          optional: a constant lower-triangular
                                       keep-mask and a very negative fill (causal)
    p = softmax(s, axis=-1)
    o = matmul(p, v)                   v [b, h, sk, dv]

Each intermediate must have exactly one use (else the scores are needed
anyway). A constant scale becomes the op's `scale`; a param scale
multiplies q instead (the same product, `(q·c)·kT = (q·kT)·c`, with one
rounding moved; below q's transpose, when q is one). k is `transpose(kT, [0, 1, 3, 2])`, which canonicalize
composes with the exporter's own transpose and `rlx-fold-layout` then folds
into the op's `k_layout`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlxc.dialects import rlx
from rlxc.dialects.rlx.base import f64_attr, i64_array
from rlxc.dialects.types import shape_of
from rlxc.values import dense_values


def _single_use(v: SSAValue) -> bool:
    return len(list(v.uses)) == 1


def _scalar_constant(v: SSAValue) -> float | None:
    op = v.owner
    if isinstance(op, rlx.ConstantOp) and shape_of(op.result.type) == ():
        s = op.splat()
        return None if s is None else float(s)
    return None


def _is_scalar(v: SSAValue) -> bool:
    return int(np.prod(shape_of(v.type), dtype=np.int64)) == 1  # pyright: ignore[reportArgumentType]


def _causal_select(op: Operation, scores: tuple[int, ...]) -> SSAValue | None:
    """The scores a causal `select(tril, s, fill)` masks, else None."""
    if not isinstance(op, rlx.SelectOp):
        return None
    cond, kept, fill = op.operands
    c = cond.owner
    if not isinstance(c, rlx.ConstantOp) or not _is_scalar(fill):
        return None
    f = fill.owner
    if not isinstance(f, rlx.ConstantOp) or f.splat() is None:
        return None
    if float(f.splat()) > -1e4:  # pyright: ignore[reportArgumentType]
        return None  # not a mask fill: a real value would survive the softmax
    cs = shape_of(cond.type)
    if len(cs) < 2 or int(np.prod(cs[:-2], dtype=np.int64)) != 1 or tuple(cs[-2:]) != scores[-2:]:
        return None
    keep = np.asarray(dense_values(c.value, c.result.type)).reshape(cs[-2:]).astype(bool)
    if not np.array_equal(keep, np.tril(np.ones(scores[-2:], dtype=bool))):
        return None
    return kept


def _flags(op: rlx.MatMulOp) -> bool:
    """Whether a matmul has transpose flags (exporters write none; the pass
    matches plain products)."""
    return op.transpose_lhs is not None or op.transpose_rhs is not None


@dataclass
class RaiseAttention(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, out: rlx.MatMulOp, rewriter: PatternRewriter, /):
        sm = out.lhs.owner
        if not isinstance(sm, rlx.SoftmaxOp) or not _single_use(sm.result) or _flags(out):
            return
        s_type = sm.result.type
        s_shape = tuple(shape_of(s_type))
        if len(s_shape) != 4 or sm.axis.value.data % 4 != 3:  # pyright: ignore[reportAttributeAccessIssue]
            return
        v = out.rhs
        if len(shape_of(v.type)) != 4 or tuple(shape_of(v.type))[:3] != (*s_shape[:2], s_shape[3]):
            return
        s = sm.input
        causal = False
        mask: SSAValue | None = None
        scale: float | None = None
        scale_param: SSAValue | None = None
        # walk back from the softmax: select (causal), add (mask), mul/div (scale)
        node = s.owner
        if (kept := _causal_select(node, s_shape)) is not None and _single_use(s):  # pyright: ignore[reportArgumentType]
            causal, s = True, kept
            node = s.owner
        if isinstance(node, rlx.AddOp) and _single_use(s):
            a, b = node.lhs, node.rhs
            if tuple(shape_of(a.type)) == s_shape and a.owner is not None and isinstance(a.owner, rlx.MulOp | rlx.DivOp | rlx.MatMulOp):
                s, mask = a, b
            elif tuple(shape_of(b.type)) == s_shape and isinstance(b.owner, rlx.MulOp | rlx.DivOp | rlx.MatMulOp):
                s, mask = b, a
            else:
                return
            node = s.owner
        if isinstance(node, rlx.MulOp | rlx.DivOp) and _single_use(s):
            a, b = node.lhs, node.rhs
            if isinstance(node, rlx.MulOp) and _is_scalar(a) and not _is_scalar(b):
                a, b = b, a
            if not _is_scalar(b) or tuple(shape_of(a.type)) != s_shape:
                return
            c = _scalar_constant(b)
            div = isinstance(node, rlx.DivOp)
            if c is not None:
                if c == 0.0:
                    return
                scale = 1.0 / c if div else c
            elif not div and isinstance(b.owner, rlx.ParamOp):
                scale_param = b
            else:
                return
            s = a
            node = s.owner
        if not isinstance(node, rlx.MatMulOp) or not _single_use(s) or _flags(node):
            return
        q, kt = node.lhs, node.rhs
        qs, ks = tuple(shape_of(q.type)), tuple(shape_of(kt.type))
        if len(qs) != 4 or len(ks) != 4 or qs[:2] != s_shape[:2] or ks[:2] != s_shape[:2]:
            return
        if mask is not None and mask.type.get_element_type() != q.type.get_element_type():  # pyright: ignore
            return
        new_ops: list[Operation] = []
        k = rlx.TransposeOp.make([kt], {"perm": i64_array([0, 1, 3, 2])})
        new_ops.append(k)
        if scale_param is not None:  # a param scale: scale q instead of the scores
            t = q.owner
            if isinstance(t, rlx.TransposeOp):  # below q's transpose, which then folds into q_layout
                qm = rlx.MulOp.make([t.input, scale_param])
                qt = rlx.TransposeOp.make([qm.results[0]], {"perm": t.perm})
                new_ops += [qm, qt]
                q = qt.results[0]
            else:
                qm = rlx.MulOp.make([q, scale_param])
                new_ops.append(qm)
                q = qm.results[0]
            scale = 1.0
        props = {"scale": f64_attr(scale if scale is not None else 1.0)}
        if causal:
            from xdsl.dialects.builtin import UnitAttr

            props["causal"] = UnitAttr()
        try:
            att = rlx.AttentionOp.make([q, k.results[0], v, mask], props)
        except VerifyException:  # shapes the op does not take (a mask that does not broadcast)
            return
        rewriter.replace(out, [*new_ops, att], [att.results[0]])


@dataclass(frozen=True)
class RaiseAttentionPass(ModulePass):
    """Rewrites softmax(q·kT · scale [+ mask] [causal]) · v, as exporters
    write it, into `rlx.attention` (see the module docstring for the shapes
    it takes). Runs first in `rlx-optimize{target=cuda}`; on targets without
    an attention kernel `rlx-unfuse` splits it again."""

    name = "rlx-raise-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RaiseAttention(), apply_recursively=False).rewrite_module(op)

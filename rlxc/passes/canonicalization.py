"""Canonicalization patterns of rlx ops, reached through xDSL's `canonicalize`.

Each rlx op carries the `RlxCanonicalization` trait, which asks
`patterns_for(op_type)` here: the op's own algebraic patterns plus constant
folding. Folding evaluates the op with the numpy reference interpreter (the
definition of every op), so a folded constant is by construction what the op
would have computed.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlxc.dialects import rlx
from rlxc.dialects.rlx import _ints, i64_array
from rlxc.dialects.types import is_float

#: Ops whose results have at most this many elements (each) may be folded.
FOLD_MAX_ELEMENTS = 1024


def _splat_value(v: SSAValue) -> float | None:
    """The value of a splat rlx.constant, else None."""
    op = v.owner
    if isinstance(op, rlx.ConstantOp) and (value := op.splat()) is not None:
        return float(value)
    return None


def _forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> bool:
    """Replaces op by an existing value of exactly its result type."""
    if value.type != op.results[0].type:
        return False
    rewriter.replace(op, [], [value])
    return True


class IdentityOperand(RewritePattern):
    """x + (-0), (-0) + x, x - (+0), x * 1, 1 * x, x / 1 -> x (when the type
    is x's). On floats the zero's sign matters, as in IEEE 754 (and MLIR's
    arith folds): x + (+0) is +0 where x is -0, so it is not x; on integers
    every zero is the identity."""

    #: op type -> (operand positions that may be the identity, its value, the
    #: sign a float zero must have: True for -0)
    IDENTITIES = {
        rlx.AddOp: ((0, 1), 0.0, True),
        rlx.SubOp: ((1,), 0.0, False),
        rlx.MulOp: ((0, 1), 1.0, None),
        rlx.DivOp: ((1,), 1.0, None),
    }

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        spec = self.IDENTITIES.get(type(op))
        if spec is None:
            return
        positions, identity, negative = spec
        floating = is_float(op.results[0].type)
        for i in positions:
            v = _splat_value(op.operands[i])
            if v != identity or negative is not None and floating and (math.copysign(1.0, v) < 0) != negative:
                continue
            if _forward(rewriter, op, op.operands[1 - i]):
                return


class TransposeOfTranspose(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q); identity perms vanish."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.TransposeOp, rewriter: PatternRewriter, /):
        perm = _ints(op.perm)
        if perm == sorted(perm):
            _forward(rewriter, op, op.input)
            return
        inner = op.input.owner
        if isinstance(inner, rlx.TransposeOp):
            p = _ints(inner.perm)
            composed = [p[i] for i in perm]
            new = rlx.TransposeOp.make([inner.input], {"perm": i64_array(composed)})
            rewriter.replace(op, [new])


class TransposeOfUnitAxes(RewritePattern):
    """A transpose that moves only axes of size 1 (the head transpose of a
    one-head tensor, [b, s, 1, d] -> [b, 1, s, d]) keeps every element where
    it was: a reshape (a view) instead of a copy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.TransposeOp, rewriter: PatternRewriter, /):
        perm = _ints(op.perm)
        dims = list(op.input.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
        moved = [a for a in perm if dims[a] != 1]
        if perm != sorted(perm) and moved == sorted(moved):
            rewriter.replace(op, [rlx.ReshapeOp.make([op.input], None, [op.result.type])])


class ReshapeOfReshape(RewritePattern):
    """reshape(reshape(x)) -> reshape(x); a reshape to x's own type -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.ReshapeOp, rewriter: PatternRewriter, /):
        if _forward(rewriter, op, op.input):
            return
        inner = op.input.owner
        if isinstance(inner, rlx.ReshapeOp):
            if not _forward(rewriter, op, inner.input):
                rewriter.replace(op, [rlx.ReshapeOp.make([inner.input], None, [op.result.type])])


class CastToSelf(RewritePattern):
    """A cast to its operand's own type is the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.CastOp, rewriter: PatternRewriter, /):
        _forward(rewriter, op, op.input)


class ExpandToSelf(RewritePattern):
    """An expand to its operand's own shape is the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.ExpandOp, rewriter: PatternRewriter, /):
        _forward(rewriter, op, op.input)


class FoldConstants(RewritePattern):
    """An op whose operands are all small rlx.constants becomes rlx.constant(s)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if isinstance(op, rlx.ConstantOp | rlx.ParamOp) or not op.operands:
            return
        if not all(isinstance(v.owner, rlx.ConstantOp) for v in op.operands):
            return
        types = [r.type for r in op.results]
        if not all(
            isinstance(t, TensorType) and t.element_count() <= FOLD_MAX_ELEMENTS for t in types
        ):
            return
        if any(v.owner.value.type.element_count() > FOLD_MAX_ELEMENTS for v in op.operands):  # pyright: ignore
            return
        from rlxc.values import dense_attr
        from rlxc.interp.rlx_numpy import RlxFunctions

        interpreter = Interpreter(ModuleOp([]))
        interpreter.register_implementations(RlxFunctions())
        args = tuple(interpreter.run_op(v.owner, ())[0] for v in op.operands)  # pyright: ignore
        with np.errstate(all="ignore"):
            values = interpreter.run_op(op, args)
        new_ops = [
            rlx.ConstantOp(dense_attr(np.asarray(v), t))  # pyright: ignore[reportArgumentType]
            for v, t in zip(values, types)
        ]
        rewriter.replace(op, new_ops, [c.result for c in new_ops])


_OWN: dict[type[Operation], tuple[RewritePattern, ...]] = {
    rlx.AddOp: (IdentityOperand(),),
    rlx.SubOp: (IdentityOperand(),),
    rlx.MulOp: (IdentityOperand(),),
    rlx.DivOp: (IdentityOperand(),),
    rlx.TransposeOp: (TransposeOfTranspose(), TransposeOfUnitAxes()),
    rlx.ReshapeOp: (ReshapeOfReshape(),),
    rlx.CastOp: (CastToSelf(),),
    rlx.ExpandOp: (ExpandToSelf(),),
}

_FOLD = FoldConstants()


@cache
def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of one rlx op type (its own, then folding)."""
    if op_type in (rlx.ConstantOp, rlx.ParamOp, rlx.ElementwiseRegionOp, rlx.FusionOp):
        return ()
    return (*_OWN.get(op_type, ()), _FOLD)

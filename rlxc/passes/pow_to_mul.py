"""`rlx-pow-to-mul`: x ** 2 -> x * x (the worked example of docs/writing-a-pass.md)."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlxc.dialects import rlx


class PowTwoToMul(RewritePattern):
    """rlx.pow(x, c) with c a splat constant 2 and the result of x's type -> x * x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.PowOp, rewriter: PatternRewriter):
        exponent = op.rhs.owner
        if not isinstance(exponent, rlx.ConstantOp) or exponent.splat() != 2.0:
            return
        if op.lhs.type != op.result.type:  # the constant would broadcast x
            return
        rewriter.replace(op, rlx.MulOp.make([op.lhs, op.lhs]))


@dataclass(frozen=True)
class PowToMulPass(ModulePass):
    """Rewrites squares written as pow into multiplications.

    pow lowers to a call of powf, a multiplication to one instruction, and
    the two agree exactly (x * x is what powf(x, 2) returns).
    """

    name = "rlx-pow-to-mul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PowTwoToMul()).rewrite_module(op)

"""`test-rlx-miscompile`: a deliberately wrong pass, for testing the tools.

It swaps the first op named `op` for `replacement` of the same type
(`rlx.exp` -> `rlx.tanh` by default), which changes the module's meaning
while leaving it valid: exactly what `rlxc-opt --check-semantics` must catch.
With `crash=true` it raises instead, to exercise the reproducer path. With
`roundtrip=true` it leaves the meaning alone but names the first such op's
result `%1x` (bypassing xDSL's name check), which prints but is no SSA name
the parser accepts: the printer bug `--verify-roundtrip` catches.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from rlxc.dialects import rlx


@dataclass(frozen=True)
class TestMiscompilePass(ModulePass):
    """Replaces the first unary `op` with `replacement` (test-only)."""

    name = "test-rlx-miscompile"

    op: str = "rlx.exp"
    replacement: str = "rlx.tanh"
    crash: bool = False
    roundtrip: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.crash:
            raise RuntimeError("test-rlx-miscompile was asked to crash")
        if self.roundtrip:
            for o in op.walk():
                if o.name == self.op:
                    o.results[0]._name = "1x"  # pyright: ignore[reportPrivateUsage]
                    return
            return
        new_type = next(t for t in rlx.UNARY_OPS if t.name == self.replacement)
        for o in op.walk():
            if o.name == self.op and isinstance(o, rlx.UnaryElementwiseOp):
                Rewriter.replace_op(o, new_type(o.input))
                return


class SwapSubOperands(RewritePattern):
    """Broken on purpose: `a - b` becomes `b - a` where `a` comes from an
    `rlx.exp` (right everywhere else, since it leaves those alone)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.SubOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.lhs.owner, rlx.ExpOp):  # after the swap it no longer matches
            rewriter.replace(op, rlx.SubOp.build(operands=[op.rhs, op.lhs], result_types=[op.result.type]))


class NegateTwice(RewritePattern):
    """Right: `-(-x)` becomes `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.NegOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, rlx.NegOp):
            rewriter.replace(op, [], [op.input.owner.input])


@dataclass(frozen=True)
class TestBrokenPatternPass(ModulePass):
    """`test-rlx-broken-pattern`: a pattern pass with one right and one wrong
    pattern (test-only), to bisect with `--rewrite-counter`."""

    name = "test-rlx-broken-pattern"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([NegateTwice(), SwapSubOperands()])).rewrite_module(op)

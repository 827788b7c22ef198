"""`rlx-unfuse{target=...}`: composite ops the target has no kernel for -> primitives."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from rlxc.dialects import rlx
from rlxc.dialects.rlx import Composite, DecomposeBuilder

#: Targets rlx-unfuse knows; `none` keeps no composite.
TARGETS = ("cuda", "none")


@dataclass
class UnfuseComposite(RewritePattern):
    """Splits one composite op, by its own `decompose`, unless the target
    keeps it native."""

    target: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        trait = op.get_trait(Composite)
        if trait is None or trait.is_native_on(op, self.target):
            return
        decompose = getattr(op, "decompose", None)
        if decompose is None:
            raise PassFailedException(
                f"rlx-unfuse: '{op.name}' is marked composite but has no decomposition"
            )
        results = decompose(DecomposeBuilder(rewriter, op, self.target))
        for old, new in zip(op.results, results, strict=True):
            if new.name_hint is None and old.name_hint is not None:
                new.name_hint = old.name_hint
        rewriter.replace(op, [], results)


class ExpandPartialBatchBroadcast(RewritePattern):
    """For cuda: a matmul operand whose batch dimensions broadcast partially
    against the result's (a [3, 1] batch against [3, 2]) is expanded to the
    full batch first, since a gemm takes one batch stride per operand. An
    operand with one batch, or the result's batch, is left as it is."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, rlx.MatMulOp):
            return
        out = list(op.result.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
        batch = out[:-2]
        for i, x in enumerate((op.lhs, op.rhs)):
            s = list(x.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
            own = s[:-2]
            full = [1] * (len(batch) - len(own)) + own
            if _count(own) in (1, _count(batch)) and (full == batch or _count(own) == 1):
                continue
            from xdsl.dialects.builtin import TensorType

            t = TensorType(x.type.get_element_type(), [*batch, *s[-2:]])  # pyright: ignore[reportAttributeAccessIssue]
            wide = rlx.ExpandOp.build(operands=[x], result_types=[t])
            rewriter.insert_op(wide)
            rewriter.replace_op(op, rlx.MatMulOp.build(
                operands=[wide.results[0], op.rhs] if i == 0 else [op.lhs, wide.results[0]],
                result_types=[op.result.type], properties=dict(op.properties),
            ))  # fmt: skip
            return


def _count(dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


@dataclass(frozen=True)
class UnfusePass(ModulePass):
    """Replaces composite ops the target has no native kernel for with primitives.

    Which composites a target keeps is declared on the ops (the `Composite`
    trait's `native_targets` and an op's `native_on`), and how each splits is
    the op's own `decompose`, not here: for `cuda`, linear (with a bias and
    relu / tanh-GELU epilogue; another activation is split off into an
    elementwise op), layer_norm, rms_norm, softmax, log_softmax, the fused
    residual norms, attention (a fused flash-attention kernel) and rope with
    cos/sin tables as wide as the input's last axis stay; swiglu and other
    ropes are split. The split is
    repeated until nothing splittable is left (a fused residual norm becomes an
    add and a layer_norm, which `target=none` splits again).

    Options:
    * `target`: `cuda` (default) or `none` (split every composite).
    """

    name = "rlx-unfuse"

    target: str = "cuda"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target not in TARGETS:
            raise PassFailedException(
                f"rlx-unfuse: unknown target '{self.target}', expected one of {', '.join(TARGETS)}"
            )
        patterns: list[RewritePattern] = [UnfuseComposite(self.target)]
        if self.target == "cuda":
            patterns.append(ExpandPartialBatchBroadcast())
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)

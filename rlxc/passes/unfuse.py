"""`rlx-unfuse{target=...}`: composite ops the target has no kernel for -> primitives."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

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


@dataclass(frozen=True)
class UnfusePass(ModulePass):
    """Replaces composite ops the target has no native kernel for with primitives.

    Which composites a target keeps is declared on the ops (the `Composite`
    trait's `native_targets` and an op's `native_on`), and how each splits is
    the op's own `decompose`, not here: for `cuda`, linear (with a bias and
    relu / tanh-GELU epilogue; another activation is split off into an
    elementwise op), layer_norm, rms_norm, softmax, log_softmax and the fused
    residual norms stay; attention, swiglu and rope are split. The split is
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
        PatternRewriteWalker(UnfuseComposite(self.target)).rewrite_module(op)

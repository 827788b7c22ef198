"""`test-rlx-miscompile`: a deliberately wrong pass, for testing the tools.

It swaps the first op named `op` for `replacement` of the same type
(`rlx.exp` -> `rlx.tanh` by default), which changes the module's meaning
while leaving it valid: exactly what `rlxc-opt --check-semantics` must catch.
With `crash=true` it raises instead, to exercise the reproducer path.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from rlxc.dialects import rlx


@dataclass(frozen=True)
class TestMiscompilePass(ModulePass):
    """Replaces the first unary `op` with `replacement` (test-only)."""

    name = "test-rlx-miscompile"

    op: str = "rlx.exp"
    replacement: str = "rlx.tanh"
    crash: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.crash:
            raise RuntimeError("test-rlx-miscompile was asked to crash")
        new_type = next(t for t in rlx.UNARY_OPS if t.name == self.replacement)
        for o in op.walk():
            if o.name == self.op and isinstance(o, rlx.UnaryElementwiseOp):
                Rewriter.replace_op(o, new_type(o.input))
                return

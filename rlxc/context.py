"""The xDSL context rlxc parses and rewrites in: builtin, func, arith, math (with
math.erfc), rlx, rlx_cuda."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.parser import Parser

from rlxc.dialects.rlx import Rlx
from rlxc.dialects.rlx_cuda import RlxCuda
from rlxc.dialects.scalar import ErfcOp, RemFOp


def make_context() -> Context:
    """A fresh context with every dialect rlxc's IR may contain."""
    ctx = Context()
    for d in (Builtin, Func, Arith, Math, Rlx, RlxCuda):
        ctx.load_dialect(d)
    ctx.load_op(ErfcOp)  # upstream MLIR's math.erfc, missing from xDSL's math
    ctx.load_op(RemFOp)  # upstream MLIR's arith.remf, missing from xDSL's arith
    return ctx


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parses (and verifies) printed IR, custom or generic form."""
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module

"""rlxc: an MLIR-style multi-pass ML compiler on xDSL.

    import rlxc
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 16], "f32")
    module = g.build([g.gelu(x)])
    print(module)                                   # the graph level
    outs = rlxc.interpret(module, {"x": x_array})   # the numpy reference
"""

from rlxc.context import make_context, parse_module
from rlxc.frontends.builder import GraphBuilder, GraphError, Tensor
from rlxc.interp import InputError, interpret
from rlxc.passes.pipelines import run_pipeline
from rlxc.runtime import cuda
from rlxc.runtime.cuda import compile

__all__ = [
    "compile",
    "cuda",
    "GraphBuilder",
    "GraphError",
    "InputError",
    "Tensor",
    "interpret",
    "make_context",
    "parse_module",
    "run_pipeline",
]

"""rlxc: an MLIR-style multi-pass ML compiler on xDSL.

    import rlxc
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 16], "f32")
    module = g.build([g.gelu(x)])
    print(module)                                   # the graph level
    outs = rlxc.interpret(module, {"x": x_array})   # the numpy reference
    exe = rlxc.compile(module, target="cuda")       # or target="numpy"
    outs = exe.run({"x": x_array})
"""

from types import SimpleNamespace

from rlxc.context import make_context, parse_module
from rlxc.driver import compile
from rlxc.frontends.builder import GraphBuilder, GraphError, Tensor
from rlxc.interp import InputError, interpret
from rlxc.passes.pipelines import run_pipeline
from rlxc.runtime.device_arrays import DeviceArray
from rlxc.runtime.driver_api import CudaError, is_available
from rlxc.runtime.executable import CudaExecutable

#: `rlxc.cuda`: the CUDA target's public names (`rlxc.cuda.is_available()`,
#: `rlxc.cuda.DeviceArray`, `rlxc.cuda.CudaError`, ...). A namespace here
#: rather than a module of the runtime, because `compile` lives above it.
cuda = SimpleNamespace(
    compile=compile,
    is_available=is_available,
    CudaError=CudaError,
    CudaExecutable=CudaExecutable,
    DeviceArray=DeviceArray,
)

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

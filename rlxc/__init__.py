"""rlxc: an MLIR-style multi-pass ML compiler on xDSL.

    import rlxc
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 16], "f32")
    module = g.build([g.gelu(x)])
    print(module)                                   # the graph level
    outs = rlxc.interpret(module, {"x": x_array})   # the numpy reference
    exe = rlxc.compile(module, target="cuda")       # or target="numpy"
    outs = exe.run({"x": x_array})

    module, params = rlxc.from_onnx("model.onnx", {"input_ids": [1, 128]})
    model = rlxc.load("model.onnx")                 # compiles per input shape
    outs = model(input_ids=ids)
"""

from types import SimpleNamespace

from rlxc.context import make_context, parse_module
from rlxc.driver import compile
from rlxc.frontends.builder import GraphBuilder, GraphError, Tensor
from rlxc.frontends.onnx import OnnxImportError, from_onnx
from rlxc.interp import InputError, interpret
from rlxc.loader import Model, load
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
    "from_onnx",
    "load",
    "Model",
    "OnnxImportError",
    "make_context",
    "parse_module",
    "run_pipeline",
]

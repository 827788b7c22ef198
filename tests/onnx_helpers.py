"""What the ONNX tests share: a model of nodes at the lowest IR version its
opsets allow, and ONNX Runtime's CPU outputs of a model."""

import copy

import pytest
from onnx import helper

import rlxc

#: The backends a test runs on: numpy, and CUDA (the `gpu` marker) where a GPU is.
BACKENDS = ["numpy", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not rlxc.cuda.is_available(),
                                                                                     reason="no NVIDIA GPU and driver")])]


def make_model(nodes, ins, outs, inits=(), opset=17, domains=None):
    """A model of graph `nodes` (inputs `ins`, outputs `outs`, initializers
    `inits`) importing the default domain at `opset` (and `domains`, {name:
    version}: ONNX Runtime's com.microsoft), at the lowest IR version that
    opset allows (`make_model` stamps the installed onnx's newest, which an
    older onnxruntime refuses)."""
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs, list(inits)),
                          opset_imports=[helper.make_opsetid("", opset),
                                         *(helper.make_opsetid(d, v) for d, v in (domains or {}).items())])
    m.ir_version = helper.find_min_ir_version_for(list(m.opset_import), ignore_unknown=True)
    return m


def ort_run(model, feeds):
    """ONNX Runtime's CPU outputs. The model is given the lowest IR version
    its opsets allow, as `make_model` does (the GPU machine's onnxruntime:
    IR 14 built, 13 read)."""
    ort = pytest.importorskip("onnxruntime")
    lowest = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    if model.ir_version > lowest:
        model = copy.deepcopy(model)
        model.ir_version = lowest
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_kernels_compile(module) -> None:
    """Without a GPU: `module` through the CUDA pipeline (sm_90, 132
    multiprocessors), every generated kernel compiled by NVRTC with no
    spills; at least one kernel."""
    from rlxc.codegen import HEADERS
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime import nvrtc

    kernels = [op for op in rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}").walk()
               if isinstance(op, rlx_cuda.KernelOp)]
    assert kernels
    for k in kernels:
        res = nvrtc.resources(k.source.data, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, (k.sym_name.data, res)

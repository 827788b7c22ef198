"""`rlxc.compile`: from a graph-level module to something that runs.

The one place that joins the compiler and the runtime: it picks the
pipeline for the device (architecture, SM count, where matmuls run), lowers
with it (`rlxc.passes.pipelines`), compiles the generated kernels with NVRTC
(`rlxc.runtime.nvrtc`, with codegen's headers) and loads the result
(`rlxc.runtime.executable.CudaExecutable`). `target="numpy"` puts the
reference interpreter behind the same `run(inputs)` interface.

The runtime never imports this module (nor passes, codegen or the
interpreter): it consumes launch-level modules only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlxc.codegen import HEADERS
from rlxc.interp import interpret
from rlxc.passes.fold_params import fold_params
from rlxc.passes.pipelines import run_pipeline
from rlxc.runtime import cublaslt
from rlxc.runtime.driver_api import CudaError, device_arch, is_available
from rlxc.runtime.executable import CudaExecutable
from rlxc.runtime.nvrtc import compile_module_kernels
from rlxc.signature import check_params, signature

__all__ = ["NumpyExecutable", "compile", "cuda_pipeline", "lowered_op"]


class NumpyExecutable:
    """The reference interpreter behind the same interface: params copied
    when compiled (as the GPU uploads them once: changing the caller's
    arrays later changes nothing), `close()` and `with`."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None):
        self.module = module
        self.params = {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in (params or {}).items()}
        self._closed = False

    def run(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        if self._closed:
            raise ValueError("this executable was closed")
        return interpret(self.module, inputs, self.params)

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> NumpyExecutable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lowered_op(module: ModuleOp) -> str | None:
    """The name of the first rlx_cuda op in `module` (it is the rlx-cuda
    pipeline's output, which compile and the rlxc command refuse), else None."""
    return next((op.name for op in module.walk() if op.name.startswith("rlx_cuda.")), None)


#: The passes `compile` runs before it computes the param-only expressions
#: they create (a conv's OHWI weight, merged projections' joined weights)
#: once; the cuda pipeline runs them again, finding nothing left to do.
WEIGHT_PASSES = "rlx-conv-to-gemm,rlx-merge-projections"


def cuda_pipeline(arch: str, sm_count: int, gemm: str) -> str:
    """The `rlx-cuda` pipeline text for a device: `gemm` is "cublaslt"
    (matmuls as `rlx_cuda.gemm`, run on cuBLASLt) or "kernel" (matmuls as
    generated kernel launches)."""
    return f"rlx-cuda{{arch={arch} sm_count={sm_count} gemm={gemm}}}"


def compile(module: ModuleOp, target: str = "cuda", params: Mapping[str, np.ndarray] | None = None,
            mode: str = "graph", allow_tf32: bool = False, gemm_autotune: bool = True):  # noqa: A001 - the public name is rlxc.compile
    """Compiles a graph-level module for `target` ("cuda" or "numpy").

    With cuda, `mode="graph"` (the default) captures the launch list into a
    CUDA graph on the first run and replays it after; `mode="stream"`
    launches kernel by kernel. Matmuls run on cuBLASLt (the `cuda` extra
    installs nvmath-python), in full f32 unless `allow_tf32=True`; without
    nvmath-python they are lowered to generated kernels (`gemm=kernel`).
    Each cuBLASLt gemm runs the fastest of the algorithms cuBLASLt proposes,
    timed when the executable is loaded (once per problem and process);
    `gemm_autotune=False` takes cuBLASLt's first proposal untimed, the same
    in every process.

    `params` maps each `rlx.param` of the module by name to its array; a
    missing or mis-shaped one raises `rlxc.InputError` here, names the module
    does not use are ignored."""
    if target not in ("cuda", "numpy"):
        raise ValueError(f"unknown target '{target}': expected 'cuda' or 'numpy'")
    if mode not in ("graph", "stream"):
        raise ValueError(f"mode must be 'graph' or 'stream', got '{mode}'")
    if (lowered := lowered_op(module)) is not None:
        raise ValueError(f"this module is lowered already ({lowered}: the rlx-cuda pipeline's output); "
                         "rlxc.compile takes graph-level IR (or a planned module) and lowers it itself")
    check_params(signature(module), params)  # a missing or mis-shaped param: InputError now, on either target
    if target == "numpy":
        return NumpyExecutable(module, params)
    if not is_available():
        raise CudaError("target='cuda' needs an NVIDIA GPU and driver, and none was found; use target='numpy'")
    arch, sms = device_arch()
    gemm = "cublaslt" if cublaslt.available() else "kernel"
    # The weights are known here: rewrite convolutions as gemms (their
    # weights transposed to OHWI) and merge the gemms that share an input,
    # then compute those weights once (new params), not on every run.
    module, params = fold_params(run_pipeline(module, WEIGHT_PASSES), params)
    lowered = run_pipeline(module, cuda_pipeline(arch, sms, gemm))
    cubins = compile_module_kernels(lowered, arch, headers=HEADERS)
    exe = CudaExecutable(lowered, params, cubins, mode, allow_tf32, gemm_autotune)
    if gemm == "kernel" and exe.gemm_backend is None:
        exe.gemm_backend = "fallback kernel"
    return exe

"""A launch-level module loaded on a GPU: `CudaExecutable`.

One activation arena (`rlx.arena_bytes`, one cuMemAlloc), one read-only
parameter buffer uploaded once, kernel arguments packed once at load time,
the launch list run in order on a stream, outputs copied back (or kept on
the device as `DeviceArray`s).

The launch list runs kernel by kernel (`mode="stream"`) or as one CUDA graph
captured on the first run and replayed after (`mode="graph"`, the default).

`rlx_cuda.gemm` runs on cuBLASLt (nvmath-python's bindings, the `cuda`
extra). Without nvmath-python, modules must be lowered with
`rlx-cuda{... gemm=kernel}`, which emits matmuls as generated kernel
launches and no `rlx_cuda.gemm` at all; a gemm op left in the module is
then an error at load time.

This module consumes a lowered module and the cubins of its kernels; it does
not lower or compile anything (that is `rlxc.driver.compile`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.types import tensor_bytes
from rlxc.runtime import cublaslt
from rlxc.runtime.device_arrays import DeviceArray, from_device_bytes, input_value, to_device_bytes
from rlxc.runtime.driver_api import CudaError, _driver, alloc, check
from rlxc.runtime.nvrtc import cache_dir
from rlxc.signature import check_array, check_named_inputs, signature
from rlxc.values import dense_values

__all__ = ["CudaExecutable"]


@dataclass
class _Launch:
    function: object
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    values: list[np.ndarray]  # kept alive: the argument values
    pointers: np.ndarray  # their addresses, as cuLaunchKernel wants
    name: str
    source_path: str | None


class CudaExecutable:
    """A launch-level module loaded on a GPU: `run(inputs)` -> outputs.

    `cubins` maps each `rlx_cuda.kernel`'s symbol to its cubin."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None, cubins: dict[str, bytes], mode: str = "graph", allow_tf32: bool = False):
        if mode not in ("graph", "stream"):
            raise ValueError(f"mode must be 'graph' or 'stream', got '{mode}'")
        self.mode = mode
        self.graph_exec = None

        cu = _driver()
        self.module = module
        self.sig = signature(module)
        self.func = self.sig.func
        gemms = [op for op in self.func.body.block.ops if isinstance(op, rlx_cuda.GemmOp)]
        if gemms and not cublaslt.available():
            raise CudaError(
                f"@{self.func.sym_name.data} has {len(gemms)} rlx_cuda.gemm op(s), which run on cuBLASLt, "
                "and nvmath-python is not installed: install the `cuda` extra (pip install 'rlxc[cuda]'), "
                "or lower with `rlx-cuda{... gemm=kernel}` so that matmuls run as generated kernels"
            )
        #: "cuBLASLt" when the module has gemm ops; `rlxc.compile` sets
        #: "fallback kernel" when it lowered matmuls to kernels (gemm=kernel).
        self.gemm_backend: str | None = "cuBLASLt" if gemms else None
        check(cu.cuInit(0), "cuInit")
        self.device = check(cu.cuDeviceGet(0), "cuDeviceGet")
        self.context = check(cu.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self.stream = check(cu.cuStreamCreate(0), "cuStreamCreate")
        fplan = P.function_plan(self.func)
        if fplan is None:
            raise CudaError(f"@{self.func.sym_name.data} is not planned: lower it with rlx-cuda first")
        self.arena_bytes = max(fplan.arena_bytes, P.ALIGN)
        self.param_bytes = max(P.param_bytes(self.func), P.ALIGN)
        self.arena = alloc(self.arena_bytes, "the activation arena")
        self.params = alloc(self.param_bytes, "the parameter buffer")
        self.modules = {}
        functions = {}
        kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, rlx_cuda.KernelOp)}
        for sym, k in kernels.items():
            mod = check(cu.cuModuleLoadData(cubins[sym]), f"cuModuleLoadData(@{sym})")
            self.modules[sym] = mod
            functions[sym] = check(cu.cuModuleGetFunction(mod, k.entry.data.encode()), f"cuModuleGetFunction({k.entry.data})")
        self._upload_params(params or {})
        self.launches: list = []
        self.lt_handle = None
        if gemms:
            from nvmath.bindings import cublasLt

            self.lt_handle = cublasLt.create()
            self.workspace = alloc(cublaslt.WORKSPACE_BYTES, "the cuBLASLt workspace")
        for op in self.func.body.block.ops:
            if isinstance(op, rlx_cuda.LaunchOp):
                sym = op.kernel.root_reference.data
                smem = op.smem.value.data
                if smem > 48 * 1024:  # beyond the default: the kernel opts in to more
                    attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                    check(cu.cuFuncSetAttribute(functions[sym], attr, smem),
                          f"cuFuncSetAttribute({kernels[sym].entry.data}, {smem} bytes of shared memory)")
                launch = self._pack(functions[sym], [a for a in op.args.data],
                                    tuple(op.grid.get_values()), tuple(op.block.get_values()),
                                    op.smem.value.data, kernels[sym].entry.data)
                if os.environ.get("RLXC_DEBUG"):
                    launch.source_path = _save_source(kernels[sym])
                self.launches.append(launch)
            elif isinstance(op, rlx_cuda.GemmOp):
                self.launches.append(
                    cublaslt.LtGemm(op, self._ptr, self.lt_handle, int(self.workspace), allow_tf32)
                )
        self.arg_offsets = fplan.arg_offsets
        ret = self.func.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.output_locations = [self._location_of(v) for v in ret.arguments]

    # -- setup helpers
    def _ptr(self, arg: rlx_cuda.ArgAttr) -> int:
        base = self.arena if arg.kind.data == "arena" else self.params
        return int(base) + arg.value.value.data

    def _location_of(self, v) -> rlx_cuda.ArgAttr:
        owner = v.owner
        if isinstance(owner, rlx.ParamOp | rlx.ConstantOp):
            return rlx_cuda.param(P.param_offset(owner))
        if isinstance(owner, Operation) and rlx.is_view(owner):
            return self._location_of(owner.operands[0])
        if isinstance(owner, Operation) and (offs := P.offsets(owner)) is not None:
            return rlx_cuda.arena(offs[v.index])
        i = list(self.func.body.block.args).index(v)
        return rlx_cuda.arena(self.arg_offsets[i])

    def _upload_params(self, params: Mapping[str, np.ndarray]) -> None:
        cu = _driver()
        for op in self.func.body.block.ops:
            if isinstance(op, rlx.ParamOp):
                name = op.param_name.data
                if name not in params:
                    raise CudaError(f"param '{name}' ({op.result.type}) was not given")
                host = check_array("param", name, params[name], op.result.type)  # pyright: ignore
            elif isinstance(op, rlx.ConstantOp):
                host = dense_values(op.value, op.result.type)  # pyright: ignore
            else:
                continue
            data = to_device_bytes(host, op.results[0].type)  # pyright: ignore
            off = P.param_offset(op)
            if data.nbytes:
                check(cu.cuMemcpyHtoD(int(self.params) + off, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD(param {op.name})")

    def _pack(self, function, args, grid, block, smem, name) -> _Launch:
        values = []
        for a in args:
            if a.kind.data == "i64":
                values.append(np.array([a.value.value.data], dtype=np.int64))
            else:
                values.append(np.array([self._ptr(a)], dtype=np.uint64))
        pointers = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        return _Launch(function, grid, block, smem, values, pointers, name, None)

    # -- running
    def _launch_list(self, debug: bool = False) -> None:
        cu = _driver()
        for launch in self.launches:
            if not isinstance(launch, _Launch):  # a library call (cuBLASLt)
                launch.launch(int(self.stream))
                if debug:
                    check(cu.cuStreamSynchronize(self.stream), f"{launch.name} (RLXC_DEBUG sync)")
                continue
            check(
                cu.cuLaunchKernel(launch.function, *launch.grid, *launch.block, launch.smem,
                                  self.stream, launch.pointers.ctypes.data, 0),
                f"cuLaunchKernel({launch.name})",
            )  # fmt: skip
            if debug:
                check(
                    cu.cuStreamSynchronize(self.stream),
                    f"kernel {launch.name} (source: {launch.source_path}; RLXC_DEBUG sync)",
                )

    def launch(self) -> None:
        """Enqueues the whole launch list on the stream (no copies, no sync):
        one by one in stream mode; in graph mode as one CUDA graph, captured
        the first time and replayed after. RLXC_DEBUG=1 forces stream mode
        with a sync after every kernel, to name a failing one."""
        cu = _driver()
        if os.environ.get("RLXC_DEBUG"):
            self._launch_list(debug=True)
            return
        if self.mode == "stream":
            self._launch_list()
            return
        if self.graph_exec is None:
            check(
                cu.cuStreamBeginCapture(self.stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture",
            )
            try:
                self._launch_list()
            finally:
                graph = check(cu.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
            self.graph = graph
            self.graph_exec = check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        check(cu.cuGraphLaunch(self.graph_exec, self.stream), "cuGraphLaunch")

    def time_launches(self, repeat: int = 50, warmup: int = 5) -> list[float]:
        """Milliseconds per `launch()`, each timed with CUDA events (inputs as
        they are in the arena; no copies)."""
        cu = _driver()
        check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        stop = check(cu.cuEventCreate(0), "cuEventCreate")
        for _ in range(warmup):
            self.launch()
        check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        out = []
        for _ in range(repeat):
            check(cu.cuEventRecord(start, self.stream), "cuEventRecord")
            self.launch()
            check(cu.cuEventRecord(stop, self.stream), "cuEventRecord")
            check(cu.cuEventSynchronize(stop), "cuEventSynchronize")
            out.append(check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime"))
        return out

    def run(self, inputs: Mapping[str, object], poison: bool = False, device_outputs: bool | None = None) -> list:
        """Copies inputs in, runs the launch list, copies outputs back.

        Inputs are numpy arrays or device arrays: anything with
        `__cuda_array_interface__` (PyTorch, CuPy, Numba) or with DLPack's
        `__dlpack__` (JAX too), copied device to device into their arena
        slots, ordered after the producer's stream where the producer names
        one (the interface's `stream`; DLPack's `stream=` argument). Outputs
        are numpy arrays, or `DeviceArray`s (both interfaces: PyTorch, CuPy
        and JAX take them without a host copy) when `device_outputs` is true;
        by default they are device arrays exactly when some input was.
        `poison=True` fills the arena with 0xFF bytes first (NaN for floats),
        so an output element no kernel wrote shows up.
        """
        cu = _driver()
        check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

        held = []  # DLPack capsules: their memory must outlive the copies

        def convert(kind, name, value, t):
            return input_value(kind, name, value, t, self.stream, held)

        args = check_named_inputs(self.sig, inputs, convert)
        if device_outputs is None:
            device_outputs = any(isinstance(a, int) for a in args)
        if poison:
            check(cu.cuMemsetD8(self.arena, 0xFF, self.arena_bytes), "cuMemsetD8(arena)")
        for (name, t), a, off in zip(self.sig.inputs, args, self.arg_offsets):
            if isinstance(a, int):  # a device pointer
                if tensor_bytes(t):
                    check(cu.cuMemcpyDtoDAsync(int(self.arena) + off, a, tensor_bytes(t), self.stream), f"cuMemcpyDtoD(input '{name}')")
                continue
            data = to_device_bytes(a, t)
            if data.nbytes:
                check(cu.cuMemcpyHtoD(int(self.arena) + off, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD(input '{name}')")
        self.launch()
        check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        held.clear()
        outs = []
        for loc, t in zip(self.output_locations, self.sig.outputs):
            if device_outputs:
                out = DeviceArray(t)  # pyright: ignore[reportArgumentType]
                if out.nbytes:
                    check(cu.cuMemcpyDtoD(out.ptr, self._ptr(loc), out.nbytes), "cuMemcpyDtoD(output)")
                outs.append(out)
                continue
            raw = np.empty(tensor_bytes(t), dtype=np.uint8)  # pyright: ignore
            if raw.nbytes:
                check(cu.cuMemcpyDtoH(raw.ctypes.data, self._ptr(loc), raw.nbytes), "cuMemcpyDtoH(output)")
            outs.append(from_device_bytes(raw, t))  # pyright: ignore
        return outs


def _save_source(kernel: rlx_cuda.KernelOp) -> str:
    """Writes a kernel's source where RLXC_DEBUG error messages can point."""
    d = cache_dir() / "sources"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{kernel.entry.data}.cu"
    path.write_text(kernel.source.data)
    return str(path)

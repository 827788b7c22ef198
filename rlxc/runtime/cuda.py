"""A minimal CUDA runtime for the launch level, on cuda-python's driver API.

One activation arena (`rlx.arena_bytes`, one cuMemAlloc), one read-only
parameter buffer uploaded once, kernel arguments packed once at load time,
the launch list run in order on a stream, outputs copied back.

The launch list runs kernel by kernel (`mode="stream"`) or as one CUDA graph
captured on the first run and replayed after (`mode="graph"`, the default).

`rlx_cuda.gemm` runs on cuBLASLt (nvmath-python's bindings, the `cuda`
extra); without nvmath-python a generated tiled kernel runs it instead.
Not yet here: device-array inputs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from xdsl.ir import Operation

from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.types import dtype, dtype_name, tensor_bytes


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call (and, with
    RLXC_DEBUG=1, the kernel and its source)."""


def _driver():
    from cuda.bindings import driver

    return driver


def _check(result, call: str):
    """Unpacks a driver call's (err, *values), raising CudaError on failure."""
    cu = _driver()
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        _, text = cu.cuGetErrorString(err)
        name = name.decode() if isinstance(name, bytes) else name
        text = text.decode() if isinstance(text, bytes) else text
        raise CudaError(f"{call} failed: {name} ({text})")
    return values[0] if len(values) == 1 else values


def is_available() -> bool:
    """True when the CUDA driver loads and sees at least one GPU; never raises."""
    try:
        cu = _driver()
        if cu.cuInit(0)[0] != cu.CUresult.CUDA_SUCCESS:
            return False
        err, n = cu.cuDeviceGetCount()
        return err == cu.CUresult.CUDA_SUCCESS and n > 0
    except Exception:
        return False


def device_arch(ordinal: int = 0) -> tuple[str, int]:
    """(`sm_XY`, multiprocessor count) of a device."""
    cu = _driver()
    _check(cu.cuInit(0), "cuInit")
    dev = _check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
    attr = cu.CUdevice_attribute
    major = _check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
    minor = _check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
    sms = _check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute")
    return f"sm_{major}{minor}", sms


# ------------------------------------------------------------------ host data <-> device bytes

def to_device_bytes(a: np.ndarray, t: TensorType) -> np.ndarray:
    """A carrier array -> the bytes the kernels read (bf16: the high half of f32)."""
    d = dtype(t)
    if d.name == "bf16":
        return (np.ascontiguousarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(a, dtype=d.storage)


def from_device_bytes(raw: np.ndarray, t: TensorType) -> np.ndarray:
    """Device bytes -> the interpreter's carrier (bf16 as float32, i1 as bool)."""
    d = dtype(t)
    shape = tuple(t.get_shape())
    if d.name == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    if d.name == "i1":
        return (raw.view(np.uint8) != 0).reshape(shape)
    return raw.view(d.storage).reshape(shape).copy()


nbytes = tensor_bytes


# ------------------------------------------------------------------ the executable


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
    """A launch-level module loaded on a GPU: `run(inputs)` -> outputs."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None, cubins: dict[str, bytes], mode: str = "graph", allow_tf32: bool = False):
        from rlxc.interp import signature
        from rlxc.runtime import cublaslt

        if mode not in ("graph", "stream"):
            raise ValueError(f"mode must be 'graph' or 'stream', got '{mode}'")
        self.mode = mode
        self.graph_exec = None

        cu = _driver()
        self.module = module
        self.sig = signature(module)
        self.func = self.sig.func
        _check(cu.cuInit(0), "cuInit")
        self.device = _check(cu.cuDeviceGet(0), "cuDeviceGet")
        self.context = _check(cu.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        _check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self.stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
        fplan = P.function_plan(self.func)
        if fplan is None:
            raise CudaError(f"@{self.func.sym_name.data} is not planned: lower it with rlx-cuda first")
        self.arena_bytes = max(fplan.arena_bytes, P.ALIGN)
        self.param_bytes = max(P.param_bytes(self.func), P.ALIGN)
        self.arena = self._alloc(self.arena_bytes, "the activation arena")
        self.params = self._alloc(self.param_bytes, "the parameter buffer")
        self.modules = {}
        functions = {}
        kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, rlx_cuda.KernelOp)}
        for sym, k in kernels.items():
            mod = _check(cu.cuModuleLoadData(cubins[sym]), f"cuModuleLoadData(@{sym})")
            self.modules[sym] = mod
            functions[sym] = _check(cu.cuModuleGetFunction(mod, k.entry.data.encode()), f"cuModuleGetFunction({k.entry.data})")
        self._upload_params(params or {})
        self.launches: list = []
        gemms = [op for op in self.func.body.block.ops if isinstance(op, rlx_cuda.GemmOp)]
        #: "cuBLASLt", or "fallback kernel" when nvmath-python is not installed
        self.gemm_backend = "cuBLASLt" if gemms and cublaslt.available() else "fallback kernel"
        self.lt_handle = None
        if gemms and self.gemm_backend == "cuBLASLt":
            from nvmath.bindings import cublasLt

            self.lt_handle = cublasLt.create()
            self.workspace = self._alloc(cublaslt.WORKSPACE_BYTES, "the cuBLASLt workspace")
        for op in self.func.body.block.ops:
            if isinstance(op, rlx_cuda.LaunchOp):
                sym = op.kernel.root_reference.data
                launch = self._pack(functions[sym], [a for a in op.args.data],
                                    tuple(op.grid.get_values()), tuple(op.block.get_values()),
                                    op.smem.value.data, kernels[sym].entry.data)
                if os.environ.get("RLXC_DEBUG"):
                    launch.source_path = _save_source(kernels[sym])
                self.launches.append(launch)
            elif isinstance(op, rlx_cuda.GemmOp) and self.lt_handle is not None:
                self.launches.append(
                    cublaslt.LtGemm(op, self._ptr, self.lt_handle, int(self.workspace), allow_tf32)
                )
            elif isinstance(op, rlx_cuda.GemmOp):
                self.launches.append(self._gemm_launch(op))
        self.arg_offsets = fplan.arg_offsets
        ret = self.func.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.output_locations = [self._location_of(v) for v in ret.arguments]

    # -- setup helpers
    def _alloc(self, size: int, what: str):
        cu = _driver()
        try:
            return _check(cu.cuMemAlloc(size), f"cuMemAlloc({size} bytes for {what})")
        except CudaError as e:
            free, total = _check(cu.cuMemGetInfo(), "cuMemGetInfo")
            raise CudaError(f"{e}: asked for {size} bytes, {free} of {total} free") from None

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
        from rlxc.interp import check_array
        from rlxc.interp.dtypes import dense_values

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
                _check(cu.cuMemcpyHtoD(int(self.params) + off, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD(param {op.name})")

    def _pack(self, function, args, grid, block, smem, name) -> _Launch:
        values = []
        for a in args:
            if a.kind.data == "i64":
                values.append(np.array([a.value.value.data], dtype=np.int64))
            else:
                values.append(np.array([self._ptr(a)], dtype=np.uint64))
        pointers = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        return _Launch(function, grid, block, smem, values, pointers, name, None)

    def _gemm_launch(self, op: rlx_cuda.GemmOp) -> _Launch:
        from rlxc.runtime.gemm_fallback import gemm_source
        from rlxc.runtime.nvrtc import compile_cached

        cu = _driver()
        arch, _ = device_arch()
        src, entry, grid, block = gemm_source(op)
        mod = _check(cu.cuModuleLoadData(compile_cached(src, arch, "gemm.cu")), "cuModuleLoadData(gemm)")
        self.modules[f"gemm{len(self.modules)}"] = mod
        function = _check(cu.cuModuleGetFunction(mod, entry.encode()), "cuModuleGetFunction(gemm)")
        return self._pack(function, list(op.locations.data), grid, block, 0, entry)

    # -- running
    def _launch_list(self, debug: bool = False) -> None:
        cu = _driver()
        for launch in self.launches:
            if not isinstance(launch, _Launch):  # a library call (cuBLASLt)
                launch.launch(int(self.stream))
                if debug:
                    _check(cu.cuStreamSynchronize(self.stream), f"{launch.name} (RLXC_DEBUG sync)")
                continue
            _check(
                cu.cuLaunchKernel(launch.function, *launch.grid, *launch.block, launch.smem,
                                  self.stream, launch.pointers.ctypes.data, 0),
                f"cuLaunchKernel({launch.name})",
            )  # fmt: skip
            if debug:
                _check(
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
            _check(
                cu.cuStreamBeginCapture(self.stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture",
            )
            try:
                self._launch_list()
            finally:
                graph = _check(cu.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
            self.graph = graph
            self.graph_exec = _check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        _check(cu.cuGraphLaunch(self.graph_exec, self.stream), "cuGraphLaunch")

    def time_launches(self, repeat: int = 50, warmup: int = 5) -> list[float]:
        """Milliseconds per `launch()`, each timed with CUDA events (inputs as
        they are in the arena; no copies)."""
        cu = _driver()
        _check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        start = _check(cu.cuEventCreate(0), "cuEventCreate")
        stop = _check(cu.cuEventCreate(0), "cuEventCreate")
        for _ in range(warmup):
            self.launch()
        _check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        out = []
        for _ in range(repeat):
            _check(cu.cuEventRecord(start, self.stream), "cuEventRecord")
            self.launch()
            _check(cu.cuEventRecord(stop, self.stream), "cuEventRecord")
            _check(cu.cuEventSynchronize(stop), "cuEventSynchronize")
            out.append(_check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime"))
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
        from rlxc.interp import check_array, check_named_inputs

        cu = _driver()
        _check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

        held = []  # DLPack capsules: their memory must outlive the copies

        def convert(kind, name, value, t):
            if hasattr(value, "__cuda_array_interface__"):
                return _device_input(name, value, t, self.stream)
            if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__") and not isinstance(value, np.ndarray):
                ptr = _dlpack_input(name, value, t, self.stream, held)
                if ptr is not None:
                    return ptr
            return check_array(kind, name, value, t)  # host arrays, DLPack ones too

        args = check_named_inputs(self.sig, inputs, convert)
        if device_outputs is None:
            device_outputs = any(isinstance(a, int) for a in args)
        if poison:
            _check(cu.cuMemsetD8(self.arena, 0xFF, self.arena_bytes), "cuMemsetD8(arena)")
        for (name, t), a, off in zip(self.sig.inputs, args, self.arg_offsets):
            if isinstance(a, int):  # a device pointer
                if nbytes(t):
                    _check(cu.cuMemcpyDtoDAsync(int(self.arena) + off, a, nbytes(t), self.stream), f"cuMemcpyDtoD(input '{name}')")
                continue
            data = to_device_bytes(a, t)
            if data.nbytes:
                _check(cu.cuMemcpyHtoD(int(self.arena) + off, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD(input '{name}')")
        self.launch()
        _check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        held.clear()
        outs = []
        for loc, t in zip(self.output_locations, self.sig.outputs):
            if device_outputs:
                out = DeviceArray(t)  # pyright: ignore[reportArgumentType]
                if out.nbytes:
                    _check(cu.cuMemcpyDtoD(out.ptr, self._ptr(loc), out.nbytes), "cuMemcpyDtoD(output)")
                outs.append(out)
                continue
            raw = np.empty(nbytes(t), dtype=np.uint8)  # pyright: ignore
            if raw.nbytes:
                _check(cu.cuMemcpyDtoH(raw.ctypes.data, self._ptr(loc), raw.nbytes), "cuMemcpyDtoH(output)")
            outs.append(from_device_bytes(raw, t))  # pyright: ignore
        return outs


def _save_source(kernel: rlx_cuda.KernelOp) -> str:
    """Writes a kernel's source where RLXC_DEBUG error messages can point."""
    from rlxc.runtime.nvrtc import cache_dir

    d = cache_dir() / "sources"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{kernel.entry.data}.cu"
    path.write_text(kernel.source.data)
    return str(path)


def _wait_for(producer: int, stream) -> None:
    """Orders `stream` after the work queued so far on the producer's stream
    (a CUstream handle; 1 and 2 are the legacy and per-thread defaults)."""
    cu = _driver()
    ev = _check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    try:
        _check(cu.cuEventRecord(ev, cu.CUstream(producer)), "cuEventRecord(producer stream of an input)")
        _check(cu.cuStreamWaitEvent(stream, ev, 0), "cuStreamWaitEvent")
    finally:
        cu.cuEventDestroy(ev)


def _dlpack_input(name: str, v, t: TensorType, stream, held: list) -> int | None:
    """Validates a DLPack input on a CUDA device; returns its device pointer
    (None for a host tensor). The capsule goes into `held`."""
    from rlxc.interp import InputError, describe
    from rlxc.runtime import dlpack

    dev_type, dev_id = v.__dlpack_device__()
    if dev_type in (dlpack.CPU, dlpack.CUDA_HOST):
        return None
    if dev_type not in (dlpack.CUDA, dlpack.CUDA_MANAGED):
        raise InputError(f"input '{name}' is a DLPack tensor on device type {dev_type}; rlxc takes CUDA or host memory")
    try:  # the producer orders its work before our stream
        capsule = v.__dlpack__(stream=int(stream))
    except TypeError:  # a producer without the stream argument: wait for the device
        capsule = v.__dlpack__()
        _check(_driver().cuCtxSynchronize(), "cuCtxSynchronize")
    held.append(capsule)
    d = dlpack.view(capsule)
    want = dtype_name(t.get_element_type())
    if d.shape != tuple(t.get_shape()) or d.dtype != want:
        raise InputError(f"input '{name}' is a DLPack tensor of shape {list(d.shape)} and type {d.typestr}, expected {describe(t)}")
    if not d.contiguous():
        raise InputError(f"input '{name}' is a non-contiguous DLPack tensor (strides {list(d.strides or ())}); pass a contiguous one")
    if dev_id != 0:
        raise InputError(f"input '{name}' is on CUDA device {dev_id}; this executable runs on device 0")
    return d.ptr


def _device_input(name: str, v, t: TensorType, stream=None) -> int:
    """Validates a `__cuda_array_interface__` input; returns its device
    pointer, with `stream` ordered after the producer's stream if it names one."""
    from rlxc.interp import InputError, describe

    iface = v.__cuda_array_interface__
    shape = tuple(iface["shape"])
    want = dtype(t).typestr
    if shape != tuple(t.get_shape()) or iface["typestr"] not in (want, want.replace("<", "=")) and not (
        want == "<V2" and iface["typestr"] in ("<V2", "<u2")
    ):
        raise InputError(
            f"input '{name}' is a device array of shape {list(shape)} and type "
            f"{iface['typestr']}, expected {describe(t)}"
        )
    strides = iface.get("strides")
    if strides is not None:
        expect, acc = [], int(iface["typestr"][2:]) if iface["typestr"][2:].isdigit() else 1
        for d in reversed(shape):
            expect.append(acc)
            acc *= d
        if tuple(strides) != tuple(reversed(expect)):
            raise InputError(f"input '{name}' is a non-contiguous device array; pass a contiguous one")
    producer = iface.get("stream")
    if stream is not None and producer:  # v3: None or 0 means no ordering asked
        _wait_for(int(producer), stream)
    return int(iface["data"][0])


class DeviceArray:
    """A device buffer holding one output, with `__cuda_array_interface__`
    (so `torch.as_tensor(out, device="cuda")` and `cupy.asarray(out)` take it
    without a copy); `.numpy()` copies it to the host."""

    def __init__(self, t: TensorType):
        self.type = t
        self.shape = tuple(t.get_shape())
        self.nbytes = nbytes(t)
        cu = _driver()
        self._mem = _check(cu.cuMemAlloc(max(self.nbytes, 1)), f"cuMemAlloc({self.nbytes} bytes for an output)")
        self.ptr = int(self._mem)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": dtype(self.type).typestr,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
        }

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule over this buffer (already complete: `run`
        synchronises before returning, so any consumer stream may read it)."""
        from rlxc.runtime import dlpack

        if copy:
            raise BufferError("rlxc DeviceArray: copy=True is not supported; export without copying")
        return dlpack.to_capsule(self.ptr, self.shape, dtype_name(self.type.get_element_type()), self)

    def __dlpack_device__(self) -> tuple[int, int]:
        from rlxc.runtime import dlpack

        return (dlpack.CUDA, 0)

    def numpy(self) -> np.ndarray:
        raw = np.empty(self.nbytes, dtype=np.uint8)
        if self.nbytes:
            _check(_driver().cuMemcpyDtoH(raw.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH")
        return from_device_bytes(raw, self.type)

    def __del__(self):
        try:
            _driver().cuMemFree(self._mem)
        except Exception:
            pass


class NumpyExecutable:
    """The reference interpreter behind the same interface."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None):
        self.module = module
        self.params = dict(params or {})

    def run(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        from rlxc.interp import interpret

        return interpret(self.module, inputs, self.params)


def compile(module: ModuleOp, target: str = "cuda", params: Mapping[str, np.ndarray] | None = None,
            mode: str = "graph", allow_tf32: bool = False):  # noqa: A001 - the public name is rlxc.compile
    """Compiles a graph-level module for `target` ("cuda" or "numpy").

    With cuda, `mode="graph"` (the default) captures the launch list into a
    CUDA graph on the first run and replays it after; `mode="stream"`
    launches kernel by kernel. Matmuls run on cuBLASLt (the `cuda` extra
    installs nvmath-python), in full f32 unless `allow_tf32=True`."""
    if target == "numpy":
        return NumpyExecutable(module, params)
    if target != "cuda":
        raise ValueError(f"unknown target '{target}': expected 'cuda' or 'numpy'")
    if mode not in ("graph", "stream"):
        raise ValueError(f"mode must be 'graph' or 'stream', got '{mode}'")
    if not is_available():
        raise CudaError("target='cuda' needs an NVIDIA GPU and driver, and none was found; use target='numpy'")
    from rlxc.passes.pipelines import run_pipeline
    from rlxc.runtime.nvrtc import compile_module_kernels

    arch, sms = device_arch()
    lowered = run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    cubins = compile_module_kernels(lowered, arch)
    return CudaExecutable(lowered, params, cubins, mode, allow_tf32)


__all__ = ["compile", "is_available", "CudaError", "CudaExecutable", "DeviceArray", "NumpyExecutable"]

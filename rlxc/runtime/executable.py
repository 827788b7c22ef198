"""A launch-level module loaded on a GPU: `CudaExecutable`.

One activation arena (`rlx.arena_bytes`, one cuMemAlloc), one read-only
parameter buffer uploaded once, kernel arguments packed once at load time,
the launch list run in order on a stream, outputs copied back (or kept on
the device as `DeviceArray`s).

The launch list runs kernel by kernel (`mode="stream"`) or as one CUDA graph
captured on the first run and replayed after (`mode="graph"`, the default).

Host overhead: with device-array inputs and device outputs in graph mode,
`run` is one CUDA graph launch and a wait. That graph (the "I/O graph")
holds the launch list, its kernels reading the caller's input arrays in
place where the plan allows (BIND_INPUTS; other inputs are copied into
the arena first) and writing the outputs in place into an output pool that
the executable owns where the plan allows (BIND_OUTPUTS; other outputs are
copied there after), and a last node setting a flag in mapped host memory
that the wait reads (SIGNAL_WAIT). A later call with other input (or
`out=`) pointers updates the kernel and copy nodes in place
(`cuGraphExecKernelNodeSetParams`, `cuGraphExecMemcpyNodeSetParams`)
instead of capturing again. Nothing is allocated per call: the pool's
`DeviceArray`s are returned every time and are overwritten by the next run
of the launch list (copy what must outlive it, or pass `out=[...]`, arrays
of your own that the outputs are copied into).

`rlx_cuda.gemm` runs on cuBLASLt (nvmath-python's bindings, the `cuda`
extra). Without nvmath-python, modules must be lowered with
`rlx-cuda{... gemm=kernel}`, which emits matmuls as generated kernel
launches and no `rlx_cuda.gemm` at all; a gemm op left in the module is
then an error at load time.

This module consumes a lowered module and the cubins of its kernels; it does
not lower or compile anything (that is `rlxc.driver.compile`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.types import tensor_bytes
from rlxc.runtime import binding, cublaslt
from rlxc.runtime.device_arrays import (
    DeviceArray,
    DeviceBuffer,
    device_input,
    from_device_bytes,
    input_value,
    is_torch_tensor,
    to_device_bytes,
    torch_input,
    torch_name,
)
from rlxc.runtime.driver_api import CudaError, _driver, alloc, check, median
from rlxc.runtime.nvrtc import cache_dir
from rlxc.signature import InputError, check_array, check_named_inputs, describe, signature
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


class _SignalFailed(Exception):
    """SIGNAL_WAIT's "write" could not be captured into the I/O graph."""


@dataclass
class _IOGraph:
    """The I/O graph: input copies, the launch list, output copies; the copy
    nodes with their parameters and the pointers they were last set to."""

    graph: object
    exec: object
    in_nodes: list
    in_params: list
    srcs: list[int]
    out_nodes: list
    out_params: list
    dsts: list[int] = field(default_factory=list)
    signal: bool = False  # its last node sets the executable's mapped flag (SIGNAL_WAIT)
    in_index: list[int] = field(default_factory=list)  # which of srcs each input copy node copies
    bound: list[_BoundInput] = field(default_factory=list)  # inputs read in place (BIND_INPUTS)


@dataclass
class _KernelNode:
    """A kernel node of the I/O graph that reads inputs in place, with
    parameters of our own to set it with: `kp`, whose argument arrays
    `values` (addresses in `pointers`) hold the bound inputs' pointers."""

    node: object
    kp: object
    values: list[np.ndarray]
    pointers: np.ndarray


@dataclass
class _BoundInput:
    """An input read in place by the I/O graph: `srcs[src]` is passed to
    each of `nodes` at its argument positions."""

    src: int
    nodes: list[tuple[_KernelNode, tuple[int, ...]]]


#: CUDA_SUCCESS (CUresult is an int enum): hot paths compare without `check`
_SUCCESS = 0
_NOT_READY = 600  # CUDA_ERROR_NOT_READY

#: run() waits for its graph by polling the stream (cuStreamQuery) for up to
#: this many seconds, then blocks in cuStreamSynchronize (0: block at once).
#: A blocking wait of milliseconds lets the thread's core idle, and the
#: wake-up and the next call's Python then run slowly. H200 (session 20,
#: a 12-layer 384-wide encoder at batch 32 in f32, 5.4 ms a call): a bare
#: graph launch and wait measured 25.4 µs over its device time blocking,
#: 14.8 polling; in f16 (0.8 ms) both 7-8 µs.
SYNC_SPIN_S = 0.05
#: With SYNC_SLEEP_MARGIN_S > 0, a wait whose last call's wait took
#: SYNC_SLEEP_MIN_S or more first sleeps until SYNC_SLEEP_MARGIN_S before
#: that call's end, then polls: the thread does not spin through
#: milliseconds of device work. Off: H200 (session 30, `host_launch.py
#: --variants kernels,sleep,kernels,sleep` at 300 µs), no better in
#: `host_overhead` beyond the rounds' spread (BERT-base f32 batch 32,
#: 16.9 ms: 16-66 µs polling, 60-80 sleeping; f16/bf16 batch 32 12-33
#: against 14-29; MiniLM f32 batch 32 31-38 against 12-34), and a bare
#: kernel of 5-20 ms (`--flag`) lost 14-19 µs sleeping.
SYNC_SLEEP_MARGIN_S = 0.0
SYNC_SLEEP_MIN_S = 0.002
#: How run() learns that its I/O graph is done. "write": the graph ends in
#: a stream memory write (`cuStreamWriteValue32`, captured as a node) of a
#: flag in mapped host memory, which the host polls; "kernel": the same
#: flag set by a one-thread kernel node (where the write cannot be
#: captured, "write" falls back to it); "": the stream's completion
#: (`_wait`). The stream is still polled every SIGNAL_QUERY_EVERY reads of
#: the flag, so a failed launch is raised and the wait still blocks after
#: SYNC_SPIN_S. The outputs are complete when the flag is set (every node
#: before it has finished); the stream's own completion is reported
#: microseconds later (session 30's `host_launch.py --flag`: 7 µs after a
#: 1 ms kernel, 34-47 µs after 20 ms), which run() no longer waits for.
SIGNAL_WAIT = "write"
SIGNAL_QUERY_EVERY = 256

#: Outputs written in place: the kernels (and gemms) that write a function
#: output, and those that read it after, are pointed at its slot in the
#: output pool instead of the arena (`binding.bind_outputs`: where the plan
#: lets them move without another value), so that run() with device outputs
#: copies nothing out and host outputs are read from the pool. The pool is
#: made at load; the device arrays run() returns are written by every run
#: of the launch list (launch(), time_launches(), runs with host outputs or
#: out=), not only by the next run that returns them; out= takes the
#: general path (the outputs copied from the pool after the launches).
#: With BIND_INPUTS, H200 (session 46, `variant.py ...BIND_INPUTS=False,True
#: ...BIND_OUTPUTS=True -- --quick --timing wall --sizes 1,64`, and
#: BIND_OUTPUTS=False,True alone): a single op over 64 MiB with device
#: inputs and outputs took a median 112 µs a call copying both ways (slower
#: than PyTorch eager in 68 of 72 cases, geomean 0.68x), 78 µs with outputs
#: bound (56 slower, 0.87x), 44 µs with both (none slower, 1.53x); at
#: 1 MiB 16.0 -> 13.0 -> 11.1 µs (1.57x -> 1.68x -> 1.79x the faster peer).
BIND_OUTPUTS = True
#: Inputs read in place: in the I/O graph (device inputs, graph mode), the
#: kernels that read a function input are pointed at the caller's array
#: (`cuGraphExecKernelNodeSetParams` on their nodes when its pointer
#: changes) instead of its arena slot, and the input is not copied in
#: (`binding.bind_inputs`: inputs read only by kernels, not returned, whose
#: slot holds nothing else up to their last reader). A caller's array whose
#: address is not a multiple of the plan's alignment (P.ALIGN, what the
#: kernels were generated for), or that overlaps the output pool where
#: outputs are written in place (an output passed back in), takes the
#: general path. Other paths (host inputs, stream mode) copy into the arena
#: and read it there, as before; launch() and time_launches() after a run
#: that read inputs in place copy them into the arena first (from that
#: run's arrays, which the executable holds until the next run or launch).
#: Measured with BIND_OUTPUTS (above).
BIND_INPUTS = True

#: Tensor classes seen to be torch's (a set lookup instead of a module-name test per input)
_TORCH_TYPES: set[type] = set()


@dataclass
class _Slot:
    """One input or output as the I/O graph path checks it, precomputed."""

    name: str
    type: object  # TensorType
    shape: tuple[int, ...]
    nbytes: int
    torch_dtype: object = None  # the torch dtype object, once a torch tensor was seen


def param_images(f: func.FuncOp, params: Mapping[str, np.ndarray]) -> Iterator[tuple[int, np.ndarray, str]]:
    """What the parameter buffer of lowered function `f` holds: (offset,
    device bytes, what) for every param (from `params`), constant, and set
    of shifted copies (`rlx.param_copies`, made from their param's bytes),
    one at a time (only the copies' sources are kept until the end)."""
    copies = P.param_copies(f)
    sources = {c.source for c in copies}
    kept: dict[int, np.ndarray] = {}
    for op in f.body.block.ops:
        if not isinstance(op, (rlx.ParamOp, rlx.ConstantOp)):
            continue
        off = P.param_offset(op)
        if isinstance(op, rlx.ParamOp):
            name = op.param_name.data
            if name not in params:
                raise InputError(f"param '{name}' is missing: expected {describe(op.result.type)}")  # pyright: ignore
            host = check_array("param", name, params[name], op.result.type)  # pyright: ignore
            what = f"param '{name}'"
        else:
            host = dense_values(op.value, op.result.type)  # pyright: ignore
            what = f"constant at byte {off} of the param buffer"
        data = to_device_bytes(host, op.results[0].type)  # pyright: ignore
        if off in sources:
            kept[off] = data
        yield off, data, what
    for c in copies:  # rows.PARAM_COPIES: made once, here
        yield c.offset, shifted_copies(kept[c.source], c), f"shifted copies of the param at {c.source}"


def shifted_copies(data: np.ndarray, c: P.ParamCopies) -> np.ndarray:
    """The bytes of `c.copies` shifted copies of a param whose device bytes
    are `data`: copy s (`c.copy_bytes` long) holds them from byte
    s * elem_bytes on, zeros around (rows.PARAM_COPIES)."""
    src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    n = c.elements * c.elem_bytes
    if src.size != n or n + (c.copies - 1) * c.elem_bytes > c.copy_bytes:
        raise CudaError(f"shifted copies of {src.size} bytes do not fit {c}")
    out = np.zeros((c.copies, c.copy_bytes), np.uint8)
    for s in range(c.copies):
        out[s, s * c.elem_bytes: s * c.elem_bytes + n] = src
    return out.reshape(-1)


def _device_pointer(slot: _Slot, v, stream) -> int | None:
    """A device array's pointer, checked against `slot`, for the I/O graph:
    `DeviceArray`s, torch CUDA tensors and `__cuda_array_interface__` arrays;
    None for anything else (host arrays, DLPack-only tensors: the general
    path). The common case, a torch tensor of the right shape and dtype,
    costs a few attribute reads."""
    if type(v) in _TORCH_TYPES or (is_torch_tensor(v) and not _TORCH_TYPES.add(type(v))):
        if not v.is_cuda:
            return None
        if slot.torch_dtype is None:
            import sys

            slot.torch_dtype = getattr(sys.modules[type(v).__module__.split(".")[0]], torch_name(slot.type), None)  # pyright: ignore
        if v.dtype is slot.torch_dtype and v.shape == slot.shape and v.is_contiguous() and v.get_device() == 0:
            return v.data_ptr()
        return torch_input(slot.name, v, slot.type)  # pyright: ignore[reportArgumentType]  (raises, naming the mismatch)
    if isinstance(v, DeviceArray):
        if v.type is not slot.type and v.type != slot.type:
            device_input(slot.name, v, slot.type)  # pyright: ignore[reportArgumentType]  (raises, naming the mismatch)
        return v.ptr
    if hasattr(v, "__cuda_array_interface__"):
        return device_input(slot.name, v, slot.type, stream)  # pyright: ignore[reportArgumentType]
    return None


class CudaExecutable:
    """A launch-level module loaded on a GPU: `run(inputs)` -> outputs.

    `cubins` maps each `rlx_cuda.kernel`'s symbol to its cubin. `close()`
    (or a `with` block) frees what it holds on the device; device outputs
    already returned stay valid (the pool is freed with its last one)."""

    def __init__(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None, cubins: dict[str, bytes], mode: str = "graph",
                 allow_tf32: bool = False, gemm_autotune: bool = True):
        if mode not in ("graph", "stream"):
            raise ValueError(f"mode must be 'graph' or 'stream', got '{mode}'")
        self.mode = mode
        self.graph_exec = None
        #: RLXC_DEBUG=1 when loaded: kernel sources saved, launches one by one with a sync after each
        self._debug = bool(os.environ.get("RLXC_DEBUG"))
        # What close() frees, none of it made yet: a failure while loading frees what was made.
        self.stream = self.arena = self.params = self.workspace = None
        self.graph = self._io = self.lt_handle = self._pool = self._runtime = None
        self._flag_host = self._flag = self._signal_args = None  # SIGNAL_WAIT's mapped flag, the kernel's argument
        self._flag_dev = 0
        #: how run() learns that the I/O graph is done (set when it is built: "write" or "kernel" sets
        #: SIGNAL_WAIT's flag, "" waits for the stream); why "write" was not taken, where it was not
        self.signal_form: str | None = None
        self.signal_error: str | None = None
        #: memset nodes the captured graphs hold as fill kernels (MEMSETS_AS_KERNELS)
        self.memsets_as_kernels = 0
        self.launches: list = []
        self.modules: dict = {}
        self._closed = False
        try:
            self._load(module, params, cubins, mode, allow_tf32, gemm_autotune)
        except BaseException:
            self.close()
            raise

    def _load(self, module: ModuleOp, params: Mapping[str, np.ndarray] | None, cubins: dict[str, bytes], mode: str,
              allow_tf32: bool, gemm_autotune: bool) -> None:
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
        self.arg_offsets = fplan.arg_offsets
        ret = self.func.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.output_locations = [self._location_of(v) for v in ret.arguments]
        self._outputs = [(t, self._ptr(loc), tensor_bytes(t)) for loc, t in zip(self.output_locations, self.sig.outputs)]
        self._pool: list[DeviceArray] | None = None
        self._pool_dsts: list[int] = []
        self._pool_range = (0, 0)  # [first, last) address of the pool where outputs are written in place
        #: outputs written in place into the pool (BIND_OUTPUTS), and why the others are not
        self.bindings: list[binding.Binding] = []
        self.unbound: dict[int, str] = {}
        if BIND_OUTPUTS:
            self._bind_outputs()
        #: inputs the I/O graph reads in place (BIND_INPUTS), and why the others are not
        self.input_bindings: list[binding.InputBinding] = []
        self.inputs_unbound: dict[int, str] = {}
        if BIND_INPUTS and mode == "graph":
            self.input_bindings, self.inputs_unbound = binding.bind_inputs(self.func, self.arg_offsets)
        self.launches = []
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
                if rlx_cuda.CO_RESIDENT in kernels[sym].attributes:
                    self._check_co_resident(kernels[sym], functions[sym], op)
                launch = self._pack(functions[sym], [a for a in op.args.data],
                                    tuple(op.grid.get_values()), tuple(op.block.get_values()),
                                    op.smem.value.data, kernels[sym].entry.data, len(self.launches))
                if self._debug:
                    launch.source_path = _save_source(kernels[sym])
                self.launches.append(launch)
            elif isinstance(op, rlx_cuda.GemmOp):
                at = len(self.launches)
                self.launches.append(
                    cublaslt.LtGemm(op, lambda a, at=at: self._ptr(a, at), self.lt_handle, int(self.workspace), allow_tf32)
                )
        #: per cuBLASLt gemm: the candidates' median µs where they were timed (`LtGemm.autotune`)
        self.gemm_tuning: list[list[float]] = []
        if gemm_autotune:
            for g in self.launches:
                if isinstance(g, cublaslt.LtGemm):
                    self.gemm_tuning.append(g.autotune(int(self.stream), int(self.device)))
        # per-call facts, computed once
        self._inputs = [(n, t, int(self.arena) + off, tensor_bytes(t))
                        for (n, t), off in zip(self.sig.inputs, self.arg_offsets)]
        self._in_slots = [_Slot(n, t, tuple(t.get_shape()), tensor_bytes(t)) for n, t in self.sig.inputs]
        self._out_slots = [_Slot(f"out[{i}]", t, tuple(t.get_shape()), tensor_bytes(t))
                           for i, t in enumerate(self.sig.outputs)]
        # the bound inputs' places in the I/O graph's sources (those of the non-empty inputs)
        src_of = {i: k for k, i in enumerate(i for i, s in enumerate(self._in_slots) if s.nbytes)}
        self._bound_srcs = [src_of[b.input] for b in self.input_bindings]
        self._io: _IOGraph | None = None
        #: the mapping of the last run whose inputs were read in place and are not in the arena (launch() copies them)
        self._unloaded: Mapping[str, object] | None = None
        #: why the I/O graph could not be built (run then takes the general path)
        self.io_graph_error: str | None = None
        self._closed = False
        self._ctx_handle = int(self.context)
        self._cu = cu
        self._io_ok = mode == "graph" and not self._debug  # the I/O graph path may be taken
        self._events = None  # (start, stop) recorded around the I/O graph: host_overhead
        self._last_wait_s = 0.0  # how long the last polled wait took (SYNC_SLEEP_MARGIN_S)

    # -- setup helpers
    def _ptr(self, arg: rlx_cuda.ArgAttr, at: int | None = None) -> int:
        """The device address of a location; for an argument of launch `at`,
        a bound output's slot is its place in the output pool."""
        off = arg.value.value.data
        if arg.kind.data != "arena":
            return int(self.params) + off
        if at is not None:
            for b in self.bindings:
                if b.covers(at, off):
                    return self._pool[b.output].ptr + (off - b.offset)  # pyright: ignore[reportOptionalSubscript]
        return int(self.arena) + off

    def _location_of(self, v) -> rlx_cuda.ArgAttr:
        return binding.location(self.func, self.arg_offsets, v)

    def _bind_outputs(self) -> None:
        """BIND_OUTPUTS: makes the output pool now and points the bound
        outputs (and the outputs sharing their values) at it."""
        self.bindings, self.unbound = binding.bind_outputs(self.func, self.arg_offsets)
        if not self.bindings:
            return
        pool = self._output_pool()
        buf = pool[0]._owner
        self._pool_range = (buf.ptr, buf.ptr + buf.nbytes)  # pyright: ignore[reportAttributeAccessIssue]
        end = len(binding.launch_ops(self.func))  # after the last launch: every binding in force
        # (empty outputs stay: an empty slot may start where a live one does)
        self._outputs = [(t, self._ptr(loc, end) if n else src, n)
                         for (t, src, n), loc in zip(self._outputs, self.output_locations)]

    def _upload_params(self, params: Mapping[str, np.ndarray]) -> None:
        cu = _driver()
        for off, data, what in param_images(self.func, params):
            if data.nbytes:
                check(cu.cuMemcpyHtoD(int(self.params) + off, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD({what})")

    def _check_co_resident(self, kernel: rlx_cuda.KernelOp, function, launch: rlx_cuda.LaunchOp) -> None:
        """A kernel whose blocks wait for each other (`rlx.co_resident`: the
        grid form's blocks of a row) could hang on a device that cannot hold
        that many at once, twice over less one (a MIG slice, a module lowered
        for a larger part): refuse it with the figures instead. The grid form
        keeps its blocks per row to half the multiprocessors it was lowered
        for, so on that device this always holds."""
        cu = _driver()
        need = kernel.attributes[rlx_cuda.CO_RESIDENT].value.data  # pyright: ignore
        threads = math.prod(launch.block.get_values())
        smem = launch.smem.value.data
        per_sm = check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(function, threads, smem),
                       f"cuOccupancyMaxActiveBlocksPerMultiprocessor({kernel.entry.data})")
        attr = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        sms = check(cu.cuDeviceGetAttribute(attr, self.device), "cuDeviceGetAttribute(multiprocessors)")
        # Room for two such kernels at once (two executables on two streams): each holds at
        # most need - 1 blocks waiting, so 2 * need - 1 leaves one free to start.
        if per_sm * sms < 2 * need - 1:
            raise CudaError(
                f"kernel @{kernel.sym_name.data} ({kernel.entry.data}) needs {need} blocks of {threads} threads "
                f"resident together (room for {2 * need - 1}, so that two such kernels can run at once), and "
                f"this device holds {per_sm * sms} ({sms} multiprocessors x {per_sm}): it was lowered for a "
                "larger device; compile for this one (rlxc.compile asks the device, rlx-cuda{... sm_count=N} sets it)"
            )

    def _pack(self, function, args, grid, block, smem, name, at: int | None = None) -> _Launch:
        values = []
        for a in args:
            if a.kind.data == "i64":
                values.append(np.array([a.value.value.data], dtype=np.int64))
            else:
                values.append(np.array([self._ptr(a, at)], dtype=np.uint64))
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
        the first time and replayed after. RLXC_DEBUG=1 (set when the
        executable was loaded) forces stream mode with a sync after every
        kernel, to name a failing one. A launch list with nothing in it (every
        op a relabelling: reshapes, transposes of size-1 axes) enqueues
        nothing: an empty graph's launch still took a few µs of the stream.

        The launch list reads the inputs where the last run put them in the
        arena. Inputs that run() read in place (BIND_INPUTS) are copied in
        first, from the arrays of the mapping that run was given (the
        executable keeps a reference to it until the next run or launch).
        The memory plan hands an input's arena slot to a later tensor once
        the input is dead, so after a run or launch such a slot may hold
        that tensor, and a second launch reads it as the input: launch()
        repeats a run's work (what `time_launches` times), not necessarily
        its results; run() copies the inputs in again."""
        if self._closed:
            raise CudaError("this executable was closed")
        if not self.launches:
            return
        cu = _driver()
        if self._unloaded is not None:
            self._load_read_in_place()
        if self._debug:
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
            try:
                self._fill_memsets(graph)
                self.graph_exec = check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
            except BaseException:
                cu.cuGraphDestroy(graph)
                raise
            self.graph = graph
        check(cu.cuGraphLaunch(self.graph_exec, self.stream), "cuGraphLaunch")

    def time_launches(self, repeat: int = 50, warmup: int = 5, inner: int = 1) -> list[float]:
        """Milliseconds per `launch()` (inputs as they are in the arena; no
        copies): `repeat` samples, each a pair of CUDA events around `inner`
        back-to-back launches, divided by `inner`."""
        cu = _driver()
        check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        stop = check(cu.cuEventCreate(0), "cuEventCreate")
        try:
            for _ in range(warmup):
                self.launch()
            check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
            out = []
            for _ in range(repeat):
                check(cu.cuEventRecord(start, self.stream), "cuEventRecord")
                for _ in range(inner):
                    self.launch()
                check(cu.cuEventRecord(stop, self.stream), "cuEventRecord")
                check(cu.cuEventSynchronize(stop), "cuEventSynchronize")
                out.append(check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") / inner)
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        return out

    def run(self, inputs: Mapping[str, object], poison: bool = False, device_outputs: bool | None = None,
            out: Sequence[object] | None = None) -> list:
        """Copies inputs in, runs the launch list, copies outputs out.

        Inputs are numpy arrays or device arrays: PyTorch CUDA tensors, anything
        with `__cuda_array_interface__` (CuPy, Numba) or with DLPack's
        `__dlpack__` (JAX too), copied device to device into their arena
        slots, ordered after the producer's stream where the producer names
        one (the interface's `stream`; DLPack's `stream=` argument). Outputs
        are numpy arrays, or `DeviceArray`s (both interfaces: PyTorch, CuPy
        and JAX take them without a host copy) when `device_outputs` is true;
        by default they are device arrays exactly when some input was.

        Device outputs live in a pool the executable owns: the same
        `DeviceArray`s come back from every run, overwritten by the next one
        (copy what must outlive it). `out=[...]` (device arrays, one per
        output, of the outputs' shapes and dtypes) has the outputs copied
        there instead, and returns `out`.

        With every input on the device and device outputs, in graph mode,
        this is one CUDA graph launch (the kernels, which read the inputs
        and write the outputs in place where the plan allows, the other
        inputs' and outputs' copies, the flag's write) and a wait for that
        flag, which is set once the outputs are complete: no allocation, no
        per-input driver call unless an input's pointer changed since the
        last run. An input array whose address is not 256-byte aligned (a
        view into a larger tensor) is copied in by the general path.

        `poison=True` fills the arena with 0xFF bytes first (NaN for floats),
        so an output element no kernel wrote shows up.
        """
        if self._closed:
            raise CudaError("this executable was closed")
        cu = self._cu
        err, ctx = cu.cuCtxGetCurrent()
        if err != _SUCCESS or int(ctx) != self._ctx_handle:
            check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        # the I/O graph gives device outputs: asked for, or by default where every input is on
        # the device (a graph with no inputs has none there: host outputs, as numpy's backend)
        if (not poison and self._io_ok and (device_outputs or (device_outputs is None and self._in_slots))
                and (out is None or not self.bindings)):  # bound outputs are in the pool: out= copies from there
            srcs = self._device_sources(inputs)
            # (the pointers of the last I/O graph run passed: the check depends on them alone)
            if srcs is not None and self._bound_srcs and (self._io is None or srcs != self._io.srcs) \
                    and not self._in_place_ok(srcs):
                srcs = None  # an input to be read in place cannot be: the general path copies it in
            if srcs is not None:
                io = self._io
                if io is not None and out is None and self._pool is not None:  # every run after the first
                    self._run_io(io, srcs, self._pool_dsts)
                    if io.bound:
                        self._unloaded = inputs  # for launch(): these inputs are not in the arena
                    return list(self._pool)
                dsts, results = self._destinations(out)
                if io is None:
                    try:
                        io = self._io = self._build_io(srcs, dsts)
                    except CudaError as e:  # the general path still works: take it, and say why
                        self.io_graph_error = str(e)
                        self._io_ok = False
                if io is not None:
                    self._run_io(io, srcs, dsts)
                    if io.bound:
                        self._unloaded = inputs
                    return results
        return self._run_general(inputs, poison, device_outputs, out)

    # -- the I/O graph path
    def _device_sources(self, inputs: Mapping[str, object]) -> list[int] | None:
        """Every input's device pointer (checked), or None when some input is
        not a device array the I/O graph takes (or is missing or unknown:
        the general path names it)."""
        get = getattr(inputs, "get", None)  # not a mapping: the general path says so
        if get is None or len(inputs) != len(self._inputs):
            return None
        srcs = []
        for slot in self._in_slots:
            v = get(slot.name)
            if v is None:
                return None
            p = _device_pointer(slot, v, self.stream)
            if p is None:
                return None
            if slot.nbytes:
                srcs.append(p)
        return srcs

    def _load_read_in_place(self) -> None:
        """Copies the inputs the last run read in place into their arena
        slots (for launch()), from the arrays of that run's mapping; raises
        where those arrays have changed since."""
        inputs, self._unloaded = self._unloaded, None
        srcs, io = self._device_sources(inputs), self._io
        if srcs is None or io is None or any(srcs[k] != io.srcs[k] for k in self._bound_srcs):
            raise CudaError(
                "launch() runs the launch list over the inputs in the arena, and the last run() read its device "
                "inputs in place; the arrays of the mapping it was given have changed since. A run() with host "
                "inputs, or with device_outputs=False, copies its inputs into the arena")
        cu = self._cu
        for k, b in zip(self._bound_srcs, self.input_bindings):
            check(cu.cuMemcpyDtoDAsync(int(self.arena) + b.offset, srcs[k], b.nbytes, self.stream),
                  f"cuMemcpyDtoD(input '{self._in_slots[b.input].name}' into the arena, for launch())")

    def _in_place_ok(self, srcs: list[int]) -> bool:
        """Whether the inputs read in place (BIND_INPUTS) can be, at these
        pointers: aligned as the plan aligns slots (what the kernels were
        generated for), and outside the output pool where outputs are
        written in place (an output of the last run passed back in would be
        read while the kernels write it)."""
        lo, hi = self._pool_range
        for k, b in zip(self._bound_srcs, self.input_bindings):
            p = srcs[k]
            if p % P.ALIGN or (p < hi and lo < p + b.nbytes):
                return False
        return True

    def _destinations(self, out: Sequence[object] | None) -> tuple[list[int], list]:
        """Where the outputs go (pointers of the non-empty ones) and what
        `run` returns: the pool, or the caller's arrays."""
        if out is None:
            pool = self._output_pool()
            return self._pool_dsts, list(pool)
        if len(out) != len(self._outputs):
            raise InputError(f"out has {len(out)} arrays; this executable has {len(self._outputs)} outputs")
        dsts = []
        for i, (v, slot) in enumerate(zip(out, self._out_slots)):
            try:
                p = _device_pointer(slot, v, self.stream)
            except InputError as e:
                raise InputError(str(e).replace("input 'out[", "output 'out[", 1)) from None
            if p is None:
                raise InputError(f"out[{i}] must be a device array (torch CUDA tensor, CuPy array, rlxc DeviceArray)")
            if slot.nbytes:
                dsts.append(p)
        return dsts, list(out)

    def _output_pool(self) -> list[DeviceArray]:
        """One DeviceArray per output in one allocation, made on first use."""
        if self._pool is None:
            offsets, top = [], 0
            for t, _, nbytes in self._outputs:
                offsets.append(top)
                top += P.align(nbytes)
            buf = DeviceBuffer(top, "the output pool")
            self._pool = [DeviceArray(t, buf.ptr + off, buf) for (t, _, _), off in zip(self._outputs, offsets)]  # pyright: ignore[reportArgumentType]
            self._pool_dsts = [a.ptr for a in self._pool if a.nbytes]
        return self._pool

    def _run_io(self, io: _IOGraph, srcs: list[int], dsts: list[int], sync: bool = True) -> None:
        """Launches the I/O graph, its copy nodes first pointed at `srcs` and
        `dsts` where those changed since the last run; waits with `sync`."""
        cu = self._cu
        if srcs != io.srcs:
            self._rebind(io, io.in_nodes, io.in_params, io.srcs, srcs, "input", io.in_index)
            for b in io.bound:
                if srcs[b.src] != io.srcs[b.src]:
                    self._repoint(io, b, srcs[b.src])
        if self.bindings:  # the pool's, always (out= takes the general path): bound ones have no node
            dsts = io.dsts
        if dsts != io.dsts:
            self._rebind(io, io.out_nodes, io.out_params, io.dsts, dsts, "output")
        events = self._events
        if events is not None:
            cu.cuEventRecord(events[0], self.stream)
        if io.signal:
            self._flag.value = 0  # the graph's last node sets it (the previous run's write was seen)
        err = cu.cuGraphLaunch(io.exec, self.stream)
        if (err[0] if type(err) is tuple else err) != _SUCCESS:
            check(err, "cuGraphLaunch")
        if events is not None:
            cu.cuEventRecord(events[1], self.stream)
        if sync:
            if io.signal:
                self._wait_flag()
            else:
                self._wait()

    def _runtime_kernel(self, name: bytes):
        """A kernel of the runtime's own module (RUNTIME_SOURCE: the fill
        kernels, the signal kernel), which is compiled and loaded on first
        need; None where any step of that failed (its callers then do
        without it)."""
        if self._runtime is None:
            from rlxc.runtime.driver_api import device_arch
            from rlxc.runtime.nvrtc import compile_cached

            cu = self._cu
            self._runtime = {}  # tried once
            try:
                mod = check(cu.cuModuleLoadData(compile_cached(RUNTIME_SOURCE, device_arch()[0], "rlx_runtime.cu")),
                            "cuModuleLoadData(rlx_runtime)")
                self.modules["__rlx_runtime"] = mod  # close() unloads it
                self._runtime = {n: check(cu.cuModuleGetFunction(mod, n), f"cuModuleGetFunction({n.decode()})")
                                 for n in (b"rlx_fill16", b"rlx_fill", b"rlx_signal")}
            except Exception:  # out of memory, NVRTC or its cache: the callers do without
                pass
        return self._runtime.get(name)

    def _fill_memsets(self, graph) -> None:
        """MEMSETS_AS_KERNELS on a captured graph (the fill kernels loaded
        on first need; should that fail, the memsets stay)."""
        if not MEMSETS_AS_KERNELS:
            return
        cu = self._cu
        memset = cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET
        memsets = [n for n in _graph_nodes(graph) if check(cu.cuGraphNodeGetType(n), "cuGraphNodeGetType") == memset]
        if not memsets:
            return
        fill16, fill = self._runtime_kernel(b"rlx_fill16"), self._runtime_kernel(b"rlx_fill")
        if fill16 is not None and fill is not None:
            self.memsets_as_kernels += _memsets_as_kernels(graph, memsets, fill16, fill)

    def _signal_ready(self, form: str) -> bool:
        """Before the I/O graph's capture: what `form` (SIGNAL_WAIT's) needs,
        made on first need: the mapped flag and, for "kernel", the signal
        kernel. False where it cannot be had (off, or the kernel not
        loaded)."""
        if not form:
            return False
        cu = self._cu
        if self._flag is None:
            import ctypes

            host = check(cu.cuMemHostAlloc(64, cu.CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc(the run flag)")
            self._flag_host = host
            self._flag_dev = int(check(cu.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer(the run flag)"))
            self._flag = ctypes.c_uint32.from_address(int(host))
            self._flag.value = 0
        if form == "kernel" and self._signal_args is None:
            fn = self._runtime_kernel(b"rlx_signal")
            if fn is None:
                return False
            arg = np.array([self._flag_dev], dtype=np.uint64)
            self._signal_args = (fn, arg, np.array([arg.ctypes.data], dtype=np.uint64))
        return True

    def _capture_signal(self, form: str) -> None:
        """During the I/O graph's capture, after its last node: what sets the
        mapped flag (`form`, made ready by `_signal_ready`); raises
        _SignalFailed where the stream write was refused."""
        cu = self._cu
        if form == "write":
            err = cu.cuStreamWriteValue32(self.stream, self._flag_dev, 1, 0)
            if (err[0] if type(err) is tuple else err) != _SUCCESS:
                raise _SignalFailed(f"cuStreamWriteValue32: {err[0]!r}")
            return
        fn, _, ptrs = self._signal_args
        check(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, self.stream, ptrs.ctypes.data, 0), "cuLaunchKernel(rlx_signal)")

    def _wait(self) -> None:
        """Waits for the stream: polls it for up to SYNC_SPIN_S seconds (the
        thread stays awake), then blocks."""
        cu = self._cu
        stream = self.stream
        if SYNC_SPIN_S > 0:
            query, pc = cu.cuStreamQuery, time.perf_counter
            t0 = pc()
            end = t0 + SYNC_SPIN_S
            sleeps = SYNC_SLEEP_MARGIN_S > 0  # only then is the wait's length kept (off: nothing more per call)
            if sleeps and self._last_wait_s >= SYNC_SLEEP_MIN_S:
                time.sleep(self._last_wait_s - SYNC_SLEEP_MARGIN_S)
            while True:
                err = query(stream)
                code = err[0] if type(err) is tuple else err
                if code == _SUCCESS:
                    if sleeps:
                        self._last_wait_s = pc() - t0
                    return
                if code != _NOT_READY:
                    check(err, "cuStreamQuery (waiting for the launch)")
                if pc() > end:
                    break
        err = cu.cuStreamSynchronize(stream)
        if (err[0] if type(err) is tuple else err) != _SUCCESS:
            check(err, "cuStreamSynchronize")

    def _wait_flag(self) -> None:
        """Waits for the I/O graph's flag (SIGNAL_WAIT): reads it until it is
        set, querying the stream every SIGNAL_QUERY_EVERY reads (an error is
        raised; a stream found done ends the wait), and blocks in
        cuStreamSynchronize once SYNC_SPIN_S has passed."""
        flag = self._flag
        if flag.value:
            return
        cu, stream = self._cu, self.stream
        if SYNC_SPIN_S <= 0:
            err = cu.cuStreamSynchronize(stream)
            if (err[0] if type(err) is tuple else err) != _SUCCESS:
                check(err, "cuStreamSynchronize")
            return
        query, pc = cu.cuStreamQuery, time.perf_counter
        every, end, n = SIGNAL_QUERY_EVERY, 0.0, 0
        while not flag.value:
            n += 1
            if n % every == 0:
                err = query(stream)
                code = err[0] if type(err) is tuple else err
                if code == _SUCCESS:
                    return
                if code != _NOT_READY:
                    check(err, "cuStreamQuery (waiting for the launch)")
                if not end:
                    end = pc() + SYNC_SPIN_S
                elif pc() > end:
                    err = cu.cuStreamSynchronize(stream)
                    if (err[0] if type(err) is tuple else err) != _SUCCESS:
                        check(err, "cuStreamSynchronize")
                    return

    def _rebind(self, io: _IOGraph, nodes: list, params: list, last: list[int], now: list[int], what: str,
                index: list[int] | None = None) -> None:
        """Points the I/O graph's `what` ("input" or "output") copy nodes
        whose pointer changed (`last` -> `now`; node k copies `now[index[k]]`,
        `now[k]` without `index`) at their new source or destination, in
        the instantiated graph (no new capture)."""
        side = "src" if what == "input" else "dst"
        for k, node in enumerate(nodes):
            i = index[k] if index is not None else k
            p = now[i]
            if p != last[i]:
                prm = params[k]
                for name, value in ((f"{side}Device", p), (f"{side}XInBytes", 0), (f"{side}Y", 0), (f"{side}Z", 0)):
                    setattr(prm, name, value)
                check(self._cu.cuGraphExecMemcpyNodeSetParams(io.exec, node, prm, self.context),
                      f"cuGraphExecMemcpyNodeSetParams({what})")
                last[i] = p

    def _repoint(self, io: _IOGraph, b: _BoundInput, p: int) -> None:
        """Points the kernel nodes that read an input in place at `p`."""
        for k, at in b.nodes:
            for j in at:
                k.values[j][0] = p
            check(self._cu.cuGraphExecKernelNodeSetParams(io.exec, k.node, k.kp), "cuGraphExecKernelNodeSetParams(input)")
        io.srcs[b.src] = p

    def _build_io(self, srcs: list[int], dsts: list[int]) -> _IOGraph:
        """Captures input copies, the launch list and output copies as one
        graph, and finds the copy nodes (by source and destination)."""
        cu = _driver()
        bound = set(self._bound_srcs)
        ins = [(src, dst, n) for k, (src, (_, _, dst, n)) in enumerate(zip(srcs, [i for i in self._inputs if i[3]]))
               if k not in bound]
        outs = [(src, dst, n) for dst, (_, src, n) in zip(dsts, [o for o in self._outputs if o[2]])
                if src != dst or not self.bindings]  # a bound output is written where it is returned
        form = SIGNAL_WAIT
        try:
            graph, signal = self._capture_io(ins, outs, form)
        except _SignalFailed as e:  # the write cannot be captured here: the kernel sets the flag
            self.signal_error = str(e)
            form = "kernel"
            graph, signal = self._capture_io(ins, outs, form)
        #: how run() learns that the I/O graph is done ("write", "kernel": SIGNAL_WAIT's flag; "": the stream)
        self.signal_form = form if signal else ""
        try:
            copies: dict[tuple[int, int], list] = {}
            nodes = _graph_nodes(graph)
            memcpy = cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY
            for node in nodes:
                if check(cu.cuGraphNodeGetType(node), "cuGraphNodeGetType") != memcpy:
                    continue
                p = check(cu.cuGraphMemcpyNodeGetParams(node), "cuGraphMemcpyNodeGetParams")
                src = int(p.srcDevice) + p.srcXInBytes + p.srcY * p.srcPitch + p.srcZ * p.srcPitch * p.srcHeight
                dst = int(p.dstDevice) + p.dstXInBytes + p.dstY * p.dstPitch + p.dstZ * p.dstPitch * p.dstHeight
                copies.setdefault((src, dst), []).append((node, p))

            def take(src, dst, what):
                found = copies.get((src, dst))
                if not found:
                    raise CudaError(f"the captured I/O graph has no memcpy node for an {what} copy")
                return found.pop(0)

            in_found = [take(s, d, "input") for s, d, _ in ins]
            out_found = [take(s, d, "output") for s, d, _ in outs]
            filled = self.memsets_as_kernels
            self._fill_memsets(graph)
            try:
                read_in_place = self._bound_nodes(graph) if bound else []
            except Exception as e:  # noqa: BLE001 - the inputs are copied in instead (the graph made again)
                read_in_place = None
                self.memsets_as_kernels = filled
                self.inputs_unbound.update({b.input: f"the I/O graph's nodes not found: {e}" for b in self.input_bindings})
                self.input_bindings, self._bound_srcs = [], []
            if read_in_place is not None:
                exec_ = check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate(I/O graph)")
        except Exception:
            cu.cuGraphDestroy(graph)
            raise
        if read_in_place is None:
            cu.cuGraphDestroy(graph)
            return self._build_io(srcs, dsts)
        # the inputs read in place are pointed at the caller's arrays by the first _run_io (0: not yet)
        last = [0 if k in bound else p for k, p in enumerate(srcs)]
        return _IOGraph(graph, exec_, [n for n, _ in in_found], [p for _, p in in_found], last,
                        [n for n, _ in out_found], [p for _, p in out_found], [d for _, d, _ in outs], signal,
                        [k for k in range(len(srcs)) if k not in bound], read_in_place)

    def _bound_nodes(self, graph) -> list[_BoundInput]:
        """The captured graph's kernel nodes that read the inputs in place
        (BIND_INPUTS), with parameters of our own to re-point them: the
        graph's kernel nodes of our kernels, in stream order, are the
        launch list's kernel launches (the capture is of one stream: a
        chain, so its order is the launch list's; each node's function is
        checked against its launch's)."""
        cu = self._cu
        ours = {int(x.function) for x in self.launches if isinstance(x, _Launch)}
        kernel = cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
        nodes = []  # (node, its parameters as captured)
        for n in _in_stream_order(graph):
            if check(cu.cuGraphNodeGetType(n), "cuGraphNodeGetType") == kernel:
                got = check(cu.cuGraphKernelNodeGetParams(n), "cuGraphKernelNodeGetParams")
                if int(got.func) in ours:
                    nodes.append((n, got))
        launches = [k for k, x in enumerate(self.launches) if isinstance(x, _Launch)]
        if len(nodes) != len(launches):
            raise CudaError(f"the captured I/O graph has {len(nodes)} nodes of our kernels for {len(launches)} launches")
        node_of = dict(zip(launches, nodes))
        made: dict[int, _KernelNode] = {}  # one per node: a launch may read two bound inputs

        def kernel_node(k: int) -> _KernelNode:
            if k not in made:
                launch, (node, got) = self.launches[k], node_of[k]
                if int(got.func) != int(launch.function):
                    raise CudaError(f"the kernel node found for launch {k} ({launch.name}) runs another kernel")
                values = [v.copy() for v in launch.values]
                pointers = np.array([v.ctypes.data for v in values], dtype=np.uint64)
                kp = cu.CUDA_KERNEL_NODE_PARAMS()
                kp.func = launch.function
                kp.gridDimX, kp.gridDimY, kp.gridDimZ = launch.grid
                kp.blockDimX, kp.blockDimY, kp.blockDimZ = launch.block
                kp.sharedMemBytes = launch.smem
                kp.kernelParams = pointers.ctypes.data
                made[k] = _KernelNode(node, kp, values, pointers)
            return made[k]

        return [_BoundInput(src, [(kernel_node(k), at) for k, at in b.args])
                for b, src in zip(self.input_bindings, self._bound_srcs)]

    def _capture_io(self, ins: list, outs: list, form: str) -> tuple[object, bool]:
        """The I/O graph's capture: input copies, the launch list, output
        copies and, with `form`, the flag's write (SIGNAL_WAIT). Returns the
        graph and whether it sets the flag; raises _SignalFailed where the
        write could not be captured."""
        cu = self._cu
        signal, failed = self._signal_ready(form), None
        check(cu.cuStreamBeginCapture(self.stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              "cuStreamBeginCapture")
        try:
            for src, dst, n in ins:
                check(cu.cuMemcpyDtoDAsync(dst, src, n, self.stream), "cuMemcpyDtoDAsync(input)")
            self._launch_list()
            for src, dst, n in outs:
                check(cu.cuMemcpyDtoDAsync(dst, src, n, self.stream), "cuMemcpyDtoDAsync(output)")
            if signal:
                try:
                    self._capture_signal(form)
                except _SignalFailed as e:
                    failed = e
        finally:
            err = cu.cuStreamEndCapture(self.stream)
        if failed is not None or (signal and form == "write" and err[0] != _SUCCESS):
            if err[0] == _SUCCESS:
                cu.cuGraphDestroy(err[1])
            raise failed or _SignalFailed(f"cuStreamEndCapture after cuStreamWriteValue32: {err[0]!r}")
        return check(err, "cuStreamEndCapture"), signal

    # -- the general path
    def _run_general(self, inputs, poison, device_outputs, out) -> list:
        cu = _driver()
        held = []  # DLPack capsules: their memory must outlive the copies

        def convert(kind, name, value, t):
            return input_value(kind, name, value, t, self.stream, held)

        args = check_named_inputs(self.sig, inputs, convert)
        if device_outputs is None:
            device_outputs = out is not None or any(isinstance(a, int) for a in args)
        if out is not None and not device_outputs:
            raise InputError("out= takes device arrays; it cannot be used with device_outputs=False")
        dsts, results = self._destinations(out) if device_outputs else ([], [])
        if poison:
            check(cu.cuMemsetD8(self.arena, 0xFF, self.arena_bytes), "cuMemsetD8(arena)")
            for b in self.bindings:  # written in place: their pool slots too
                check(cu.cuMemsetD8(self._pool[b.output].ptr, 0xFF, b.nbytes), "cuMemsetD8(output pool)")  # pyright: ignore[reportOptionalSubscript]
        for (name, t, dst, nbytes), a in zip(self._inputs, args):
            if isinstance(a, int):  # a device pointer
                if nbytes:
                    check(cu.cuMemcpyDtoDAsync(dst, a, nbytes, self.stream), f"cuMemcpyDtoD(input '{name}')")
                continue
            data = to_device_bytes(a, t)
            if data.nbytes:
                check(cu.cuMemcpyHtoD(dst, data.ctypes.data, data.nbytes), f"cuMemcpyHtoD(input '{name}')")
        self._unloaded = None  # every input is in the arena now
        self.launch()
        if device_outputs:
            for (_, src, nbytes), dst in zip([o for o in self._outputs if o[2]], dsts):
                if src != dst:  # a bound output is already there
                    check(cu.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream), "cuMemcpyDtoD(output)")
        check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        held.clear()
        if device_outputs:
            return results
        outs = []
        for t, src, nbytes in self._outputs:
            raw = np.empty(nbytes, dtype=np.uint8)
            if nbytes:
                check(cu.cuMemcpyDtoH(raw.ctypes.data, src, nbytes), "cuMemcpyDtoH(output)")
            outs.append(from_device_bytes(raw, t))  # pyright: ignore
        return outs

    # -- timing and lifetime
    def time_runs(self, inputs: Mapping[str, object], repeat: int = 50, warmup: int = 5) -> list[float]:
        """Milliseconds of device time per `run(inputs)` with device inputs
        and outputs (the I/O graph: input copies, kernels, output copies),
        each timed with CUDA events on the executable's stream."""
        cu = _driver()
        self.run(inputs)  # builds the I/O graph, checks the inputs
        srcs = self._io_sources(inputs, "time_runs")
        dsts, _ = self._destinations(None)
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        stop = check(cu.cuEventCreate(0), "cuEventCreate")
        try:
            for _ in range(warmup):
                self._run_io(self._io, srcs, dsts, sync=False)
            check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
            times = []
            for _ in range(repeat):
                check(cu.cuEventRecord(start, self.stream), "cuEventRecord")
                self._run_io(self._io, srcs, dsts, sync=False)
                check(cu.cuEventRecord(stop, self.stream), "cuEventRecord")
                check(cu.cuEventSynchronize(stop), "cuEventSynchronize")
                times.append(check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime"))
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        return times

    def host_overhead(self, inputs: Mapping[str, object], repeat: int = 200, warmup: int = 10) -> dict[str, float]:
        """What `run(inputs)` costs beyond the device work, in microseconds.

        Each call is timed twice: by the wall clock around `run`, and on the
        device by CUDA events recorded around its graph launch (that run's
        copies, kernels and flag write). Returns the medians `wall_us` and
        `device_us`, and `overhead_us`, the median over calls of the wall
        time less the same call's device time: Python, the driver calls, the
        launch latency and the time until the wait sees the graph done (the
        flag, SIGNAL_WAIT, or the stream), plus the two event records (under
        a microsecond). Pairing each call with its own device time
        keeps the device's jitter between calls (tens of microseconds at
        milliseconds of work) out of the difference."""
        import time

        cu = _driver()
        self.run(inputs)
        self._io_sources(inputs, "host_overhead")
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        stop = check(cu.cuEventCreate(0), "cuEventCreate")
        walls, devices, diffs = [], [], []
        pc = time.perf_counter
        try:
            for i in range(warmup + repeat):
                self._events = (start, stop)
                t0 = pc()
                self.run(inputs)
                t = (pc() - t0) * 1e6
                self._events = None
                check(cu.cuEventSynchronize(stop), "cuEventSynchronize")  # run() may return before the stream is done
                d = check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") * 1e3
                if i >= warmup:
                    walls.append(t)
                    devices.append(d)
                    diffs.append(t - d)
        finally:
            self._events = None
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)

        return {"wall_us": median(walls), "device_us": median(devices), "overhead_us": median(diffs)}

    def _io_sources(self, inputs: Mapping[str, object], what: str) -> list[int]:
        """The inputs' pointers where run(inputs) takes the I/O graph (which
        `what` times); raises, saying why, where it does not."""
        srcs = self._device_sources(inputs)
        if srcs is None or self._io is None:
            raise CudaError(f"{what} needs device inputs, graph mode and the I/O graph"
                            + (f" ({self.io_graph_error})" if self.io_graph_error else ""))
        if self._bound_srcs and not self._in_place_ok(srcs):
            raise CudaError(f"{what} times the I/O graph, and run() copies these inputs by the general path instead: "
                            f"an input read in place is not {P.ALIGN}-byte aligned, or lies in the output pool")
        return srcs

    def clock_ratio(self, span_s: float = 0.1, rounds: int = 5) -> float:
        """Host seconds (time.perf_counter) per second of CUDA event time on
        this device: two events recorded on the idle stream `span_s` apart by
        the host clock, the host's interval over the events' elapsed time,
        the median of `rounds` (each record's submission latency, a few µs,
        is in both ends: about 3e-5 of 100 ms). An H200 read 0.99961-0.99967
        (`benchmarks/host_launch.py --spin`): the two clocks agree to 0.04%,
        so they do not explain wall time less event time growing with a
        call's length."""
        if self._closed:
            raise CudaError("this executable was closed")
        cu = _driver()
        check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        a = check(cu.cuEventCreate(0), "cuEventCreate")
        b = check(cu.cuEventCreate(0), "cuEventCreate")
        pc = time.perf_counter
        ratios = []
        try:
            for _ in range(rounds):
                check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
                t0 = pc()
                check(cu.cuEventRecord(a, self.stream), "cuEventRecord")
                time.sleep(span_s * 0.9)
                while pc() - t0 < span_s:
                    pass
                t1 = pc()
                check(cu.cuEventRecord(b, self.stream), "cuEventRecord")
                check(cu.cuEventSynchronize(b), "cuEventSynchronize")
                ratios.append((t1 - t0) * 1e3 / check(cu.cuEventElapsedTime(a, b), "cuEventElapsedTime"))
        finally:
            cu.cuEventDestroy(a)
            cu.cuEventDestroy(b)
        return median(ratios)

    def close(self) -> None:
        """Frees the arena, the parameters, the loaded modules, the graphs,
        the cuBLASLt handle and workspace, and the stream. Device outputs
        returned earlier stay valid (the pool lives while one of them does);
        the executable cannot run again."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        cu = _driver()

        def quietly(call, *args):  # best effort: free everything that can be
            try:
                call(*args)
            except Exception:
                pass

        if self.stream is not None:
            quietly(cu.cuStreamSynchronize, self.stream)
        if self._io is not None:
            quietly(cu.cuGraphExecDestroy, self._io.exec)
            quietly(cu.cuGraphDestroy, self._io.graph)
            self._io = None
        if self.graph_exec is not None:
            quietly(cu.cuGraphExecDestroy, self.graph_exec)
            quietly(cu.cuGraphDestroy, self.graph)
            self.graph_exec = self.graph = None
        if self.lt_handle is not None:
            from nvmath.bindings import cublasLt

            for g in self.launches:
                if isinstance(g, cublaslt.LtGemm):
                    quietly(cublasLt.matmul_desc_destroy, g.desc)
                    for layout in g.layouts:
                        quietly(cublasLt.matrix_layout_destroy, layout)
            quietly(cublasLt.destroy, self.lt_handle)
            quietly(cu.cuMemFree, self.workspace)
            self.lt_handle = None
        self.launches = []
        for mod in self.modules.values():
            quietly(cu.cuModuleUnload, mod)
        self.modules = {}
        for ptr in (self.arena, self.params):
            if ptr is not None:
                quietly(cu.cuMemFree, ptr)
        if self.stream is not None:
            quietly(cu.cuStreamDestroy, self.stream)
        if self._flag_host is not None:
            self._flag = None
            quietly(cu.cuMemFreeHost, self._flag_host)
            self._flag_host = None
        self._pool = None

    def __enter__(self) -> CudaExecutable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


#: Memset nodes in a captured graph (cuBLASLt's split-K gemms zero their
#: buffers with cudaMemsetAsync) are replaced by kernel nodes writing the
#: same bytes (`rlx_fill16` where the buffer is 16-byte aligned and its rows
#: whole 16-byte items, else `rlx_fill`, an element at a time). H200
#: (session 21, `benchmarks/host_launch.py`, the two alternated twice in one
#: process): the cuGraphLaunch call's host time for BERT-base's batch-32
#: graphs fell from 33-108 to 4-5 µs (f32: 96 kernels, 24 memsets) and from
#: 36-45 to 3-11 (f16: 12 memsets), MiniLM f32's from 12-34 to 5-16, with
#: the same device time (fill kernels 0.3-2% faster); `run()`'s overhead
#: over the device time moved less than its rounds vary (f16 24-39 -> 10-26
#: µs, f32 12-75 -> 12-19).
MEMSETS_AS_KERNELS = True
RUNTIME_SOURCE = r"""
extern "C" __global__ void __launch_bounds__(256) rlx_fill16(uint4* __restrict__ dst, unsigned int word,
    unsigned long long row_items, unsigned long long rows, unsigned long long pitch_items) {
  // a memset node's rows of 16-byte items, each item four copies of `word`
  const uint4 v = make_uint4(word, word, word, word);
  const unsigned long long n = row_items * rows;
  for (unsigned long long i = blockIdx.x * 256ULL + threadIdx.x; i < n; i += gridDim.x * 256ULL) {
    const unsigned long long r = i / row_items;
    dst[r * pitch_items + (i - r * row_items)] = v;
  }
}
extern "C" __global__ void __launch_bounds__(256) rlx_fill(unsigned char* __restrict__ dst, unsigned int word,
    unsigned long long size, unsigned long long width, unsigned long long rows, unsigned long long pitch) {
  // a memset node's rows of `width` elements of `size` bytes (1, 2 or 4), one at a time
  const unsigned long long n = width * rows;
  for (unsigned long long i = blockIdx.x * 256ULL + threadIdx.x; i < n; i += gridDim.x * 256ULL) {
    const unsigned long long r = i / width;
    unsigned char* p = dst + r * pitch + (i - r * width) * size;
    if (size == 4) *reinterpret_cast<unsigned int*>(p) = word;
    else if (size == 2) *reinterpret_cast<unsigned short*>(p) = (unsigned short)word;
    else *p = (unsigned char)word;
  }
}
extern "C" __global__ void rlx_signal(volatile unsigned int* flag) {
  // SIGNAL_WAIT="kernel": the I/O graph's last node sets run()'s flag in mapped host memory
  __threadfence_system();
  *flag = 1u;
}
"""


def _fill_word(value: int, element_size: int) -> int:
    """A memset's value (an element of 1, 2 or 4 bytes) as the 32-bit word
    holding it repeated."""
    if element_size == 1:
        return (value & 0xFF) * 0x01010101
    if element_size == 2:
        return (value & 0xFFFF) * 0x00010001
    return value & 0xFFFFFFFF


def _edges_plain(edge_data) -> bool:
    """Whether every edge's data is the default (no programmatic ports)."""
    for e in edge_data or []:
        if e is not None and (int(getattr(e, "type", 0)) or int(getattr(e, "from_port", 0)) or int(getattr(e, "to_port", 0))):
            return False
    return True


def _neighbours(call, node) -> tuple[list, list | None]:
    """A node's dependencies or dependents (`call`:
    cuGraphNodeGetDependencies or cuGraphNodeGetDependentNodes) and their
    edges' data (None where the bindings, 12.x, return none)."""
    count = check(call(node, 0), call.__name__)[-1]
    found = check(call(node, count), call.__name__)
    return list(found[0])[:count], (found[1] if len(found) == 3 else None)


def _fill_launch(fill16, fill, p) -> tuple | None:
    """(function, grid, argument arrays) of the kernel writing what memset
    node parameters `p` write, or None where they are not a 1-, 2- or 4-byte
    memset."""
    dst, size, width, height, pitch = int(p.dst), int(p.elementSize), int(p.width), int(p.height), int(p.pitch)
    if size not in (1, 2, 4) or not width or not height:
        return None
    row, word = width * size, _fill_word(int(p.value), size)
    pitch = pitch if height > 1 else row
    if dst % 16 == 0 and row % 16 == 0 and pitch % 16 == 0:
        n, fn = row // 16 * height, fill16
        args = [np.array([dst], np.uint64), np.array([word], np.uint32), np.array([row // 16], np.uint64),
                np.array([height], np.uint64), np.array([pitch // 16], np.uint64)]
    else:
        if dst % size or pitch % size:
            return None
        n, fn = width * height, fill
        args = [np.array([dst], np.uint64), np.array([word], np.uint32), np.array([size], np.uint64),
                np.array([width], np.uint64), np.array([height], np.uint64), np.array([pitch], np.uint64)]
    return fn, max(1, min(-(-n // 256), 1024)), args


def _memsets_as_kernels(graph, memsets: list, fill16, fill) -> int:
    """Replaces each of `graph`'s `memsets` nodes by a kernel node of
    `fill16` or `fill` (see RUNTIME_SOURCE) with the same dependencies and dependents;
    returns how many. The graph is valid at every step: the kernel node is
    added and given the memset's dependents before the memset goes (had
    that failed, the two would write the same bytes between the same
    nodes), so a driver error ends the replacing and the rest stay memsets
    (unless undoing a half-made kernel node failed too: that error is
    raised, as the graph must not run); a node with an edge carrying data
    (programmatic launches) stays a memset."""
    cu = _driver()
    done, broken = 0, False
    try:
        for node in memsets:
            launch = _fill_launch(fill16, fill, check(cu.cuGraphMemsetNodeGetParams(node), "cuGraphMemsetNodeGetParams"))
            if launch is None:
                continue
            before, before_data = _neighbours(cu.cuGraphNodeGetDependencies, node)
            after, after_data = _neighbours(cu.cuGraphNodeGetDependentNodes, node)
            if not (_edges_plain(before_data) and _edges_plain(after_data)):
                continue
            fn, grid, args = launch
            pointers = np.array([a.ctypes.data for a in args], dtype=np.uint64)
            kp = cu.CUDA_KERNEL_NODE_PARAMS()
            kp.func = fn
            kp.gridDimX, kp.gridDimY, kp.gridDimZ = grid, 1, 1
            kp.blockDimX, kp.blockDimY, kp.blockDimZ = 256, 1, 1
            kp.sharedMemBytes = 0
            kp.kernelParams = pointers.ctypes.data
            kernel = check(cu.cuGraphAddKernelNode(graph, before, len(before), kp), "cuGraphAddKernelNode(fill)")
            try:
                if after:
                    try:  # cuda-bindings 13: edge data; 12: none
                        added = cu.cuGraphAddDependencies(graph, [kernel] * len(after), after, None, len(after))
                    except TypeError:
                        added = cu.cuGraphAddDependencies(graph, [kernel] * len(after), after, len(after))
                    check(added, "cuGraphAddDependencies(fill)")
            except CudaError:
                undone = cu.cuGraphDestroyNode(kernel)  # its edges go with it: the graph as it was
                if (undone[0] if type(undone) is tuple else undone) != cu.CUresult.CUDA_SUCCESS:
                    broken = True  # a fill kernel no dependent waits for: the graph must not run
                raise
            check(cu.cuGraphDestroyNode(node), "cuGraphDestroyNode(memset)")
            done += 1
    except CudaError:
        if broken:
            raise
    return done


def _in_stream_order(graph) -> list:
    """A graph's nodes in an order that keeps every dependency before its
    dependents (for a capture of one stream: the order of capture), ties
    kept in cuGraphGetNodes's order."""
    cu = _driver()
    nodes = _graph_nodes(graph)
    by_key = {int(n): n for n in nodes}
    waiting = {int(n): 0 for n in nodes}  # how many of its dependencies are not yet in the order
    dependents: dict[int, list[int]] = {k: [] for k in waiting}
    for n in nodes:
        for d in _neighbours(cu.cuGraphNodeGetDependencies, n)[0]:
            waiting[int(n)] += 1
            dependents[int(d)].append(int(n))
    ready = [k for k in waiting if not waiting[k]]
    order = []
    while ready:
        k = ready.pop(0)
        order.append(by_key[k])
        for x in dependents[k]:
            waiting[x] -= 1
            if not waiting[x]:
                ready.append(x)
    if len(order) != len(nodes):
        raise CudaError("the captured graph has a cycle")
    return order


def _graph_nodes(graph) -> list:
    """A graph's nodes (cuGraphGetNodes: first the count, then the nodes)."""
    cu = _driver()
    _, count = check(cu.cuGraphGetNodes(graph, 0), "cuGraphGetNodes")
    if not count:
        return []
    nodes, _ = check(cu.cuGraphGetNodes(graph, count), "cuGraphGetNodes")
    return list(nodes)[:count]


def _save_source(kernel: rlx_cuda.KernelOp) -> str:
    """Writes a kernel's source where RLXC_DEBUG error messages can point."""
    d = cache_dir() / "sources"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{kernel.entry.data}.cu"
    path.write_text(kernel.source.data)
    return str(path)

"""Device-array interop: what goes in and out of an executable's memory.

* Inputs on the device: anything with `__cuda_array_interface__` (PyTorch,
  CuPy, Numba) or DLPack's `__dlpack__` (JAX too), checked against the input's
  type on the host and handed over as a device pointer, with the executable's
  stream ordered after the producer's where the producer names one.
* PyTorch CUDA tensors are read directly (`torch_input`: pointer, shape,
  dtype), not through their `__cuda_array_interface__`, which is slower and
  refuses bfloat16 tensors and tensors that require grad.
* Outputs on the device: `DeviceArray`, which offers both interfaces, so
  consumers take it without a copy; it owns its memory, or views memory
  that another object owns (an executable's output pool, `DeviceBuffer`).
* Host arrays <-> the bytes the kernels read and write (`to_device_bytes`,
  `from_device_bytes`): the interpreter's carriers (`rlxc.values`) on the
  host, each `DType`'s storage on the device.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from rlxc.dialects.types import dtype, dtype_name, tensor_bytes
from rlxc.runtime import dlpack
from rlxc.runtime.driver_api import _driver, check, wait_for
from rlxc.signature import InputError, check_array, describe

__all__ = [
    "DeviceArray",
    "DeviceBuffer",
    "device_input",
    "dlpack_input",
    "from_device_bytes",
    "input_value",
    "is_torch_tensor",
    "to_device_bytes",
    "torch_input",
]


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


# ------------------------------------------------------------------ inputs


def input_value(kind: str, name: str, value: object, t: TensorType, stream, held: list) -> int | np.ndarray:
    """One input as the executable takes it: a device pointer (an int) for a
    device array, else the checked host carrier array (`check_array`; host
    DLPack tensors too). DLPack capsules go into `held`: their memory must
    outlive the copies."""
    if is_torch_tensor(value) and value.is_cuda:  # pyright: ignore[reportAttributeAccessIssue]
        return torch_input(name, value, t)
    if hasattr(value, "__cuda_array_interface__"):
        return device_input(name, value, t, stream)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__") and not isinstance(value, np.ndarray):
        ptr = dlpack_input(name, value, t, stream, held)
        if ptr is not None:
            return ptr
    return check_array(kind, name, value, t)  # host arrays, DLPack ones too


def dlpack_input(name: str, v, t: TensorType, stream, held: list) -> int | None:
    """Validates a DLPack input on a CUDA device; returns its device pointer
    (None for a host tensor). The capsule goes into `held`."""
    dev_type, dev_id = v.__dlpack_device__()
    if dev_type in (dlpack.CPU, dlpack.CUDA_HOST):
        return None
    if dev_type not in (dlpack.CUDA, dlpack.CUDA_MANAGED):
        raise InputError(f"input '{name}' is a DLPack tensor on device type {dev_type}; rlxc takes CUDA or host memory")
    try:  # the producer orders its work before our stream
        capsule = v.__dlpack__(stream=int(stream))
    except TypeError:  # a producer without the stream argument: wait for the device
        capsule = v.__dlpack__()
        check(_driver().cuCtxSynchronize(), "cuCtxSynchronize")
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


def is_torch_tensor(v: object) -> bool:
    """Whether `v` is a PyTorch tensor (without importing torch)."""
    return type(v).__module__.startswith("torch") and hasattr(v, "data_ptr") and hasattr(v, "is_cuda")


def torch_name(t: TensorType) -> str:
    """The name of the torch dtype holding `t`'s elements ("float32", "bfloat16", "bool")."""
    d = dtype(t)
    if d.kind == "bool":
        return "bool"
    return ("bfloat" if d.name == "bf16" else d.kind) + str(d.bits)


def torch_input(name: str, v, t: TensorType) -> int:
    """Validates a PyTorch CUDA tensor input (shape, dtype, contiguity, device
    0); returns its device pointer. Work queued on torch's current stream is
    ordered before the executable's when that is the default (legacy)
    stream, which the executable's stream synchronises with."""
    want = torch_name(t)
    if tuple(v.shape) != tuple(t.get_shape()) or str(v.dtype) != f"torch.{want}":
        raise InputError(
            f"input '{name}' is a torch tensor of shape {list(v.shape)} and type "
            f"{str(v.dtype).removeprefix('torch.')}, expected {describe(t)}"
        )
    if not v.is_contiguous():
        raise InputError(f"input '{name}' is a non-contiguous torch tensor; pass a contiguous one (.contiguous())")
    if v.get_device() != 0:
        raise InputError(f"input '{name}' is on CUDA device {v.get_device()}; this executable runs on device 0")
    return v.data_ptr()


def device_input(name: str, v, t: TensorType, stream=None) -> int:
    """Validates a `__cuda_array_interface__` input; returns its device
    pointer, with `stream` ordered after the producer's stream if it names one."""
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
        wait_for(int(producer), stream)
    return int(iface["data"][0])


# ------------------------------------------------------------------ outputs


class DeviceBuffer:
    """One device allocation, freed when the last holder lets go (an
    executable's output pool is one, held by the pool's `DeviceArray`s too)."""

    def __init__(self, nbytes: int, what: str):
        self.nbytes = nbytes
        self._mem = check(_driver().cuMemAlloc(max(nbytes, 1)), f"cuMemAlloc({nbytes} bytes for {what})")
        self.ptr = int(self._mem)

    def __del__(self):
        try:
            _driver().cuMemFree(self._mem)
        except Exception:
            pass


class DeviceArray:
    """A device buffer holding one output, with `__cuda_array_interface__`
    (so `torch.as_tensor(out, device="cuda")` and `cupy.asarray(out)` take it
    without a copy) and DLPack (`torch.from_dlpack(out)`, JAX);
    `.numpy()` copies it to the host.

    With `ptr`, it views memory that `owner` keeps alive (it allocates and
    frees nothing itself)."""

    def __init__(self, t: TensorType, ptr: int | None = None, owner: object = None):
        self.type = t
        self.shape = tuple(t.get_shape())
        self.nbytes = tensor_bytes(t)
        self._owner = owner
        self._mem = None
        if ptr is not None:
            self.ptr = ptr
            return
        cu = _driver()
        self._mem = check(cu.cuMemAlloc(max(self.nbytes, 1)), f"cuMemAlloc({self.nbytes} bytes for an output)")
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
        if copy:
            raise BufferError("rlxc DeviceArray: copy=True is not supported; export without copying")
        return dlpack.to_capsule(self.ptr, self.shape, dtype_name(self.type.get_element_type()), self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (dlpack.CUDA, 0)

    def numpy(self) -> np.ndarray:
        raw = np.empty(self.nbytes, dtype=np.uint8)
        if self.nbytes:
            check(_driver().cuMemcpyDtoH(raw.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH")
        return from_device_bytes(raw, self.type)

    def __del__(self):
        if self._mem is None:
            return
        try:
            _driver().cuMemFree(self._mem)
        except Exception:
            pass

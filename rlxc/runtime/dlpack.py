"""DLPack exchange without a helper library: the DLPack C ABI (v0.8, the
unversioned `dltensor` capsule every producer still offers) through ctypes.

* `view(capsule)` reads a producer's capsule (JAX, PyTorch, CuPy, numpy...)
  into a `DLView` (pointer, device, shape, strides, dtype) without taking it
  over: the capsule keeps its owner's memory alive until it is dropped, so
  hold it until the device has finished reading.
* `to_capsule(ptr, shape, dtype, owner, device)` hands out memory rlxc owns
  (a `DeviceArray`) as a capsule; `owner` stays alive until the consumer
  calls the deleter (or the capsule is dropped unconsumed).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from rlxc.dialects.types import DTYPES

#: DLDeviceType values
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13

#: DLPack (type code, bits) -> rlx dtype name; lanes are always 1
_NAMES = {d.dlpack: n for n, d in DTYPES.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_api = ctypes.pythonapi
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CapsuleDestructor)(("PyCapsule_New", _api))


class DLPackError(ValueError):
    """A capsule rlxc cannot use (consumed already, or of an unknown dtype)."""


@dataclass(frozen=True)
class DLView:
    ptr: int  # data + byte_offset
    device_type: int
    device_id: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # in elements; None: row-major
    dtype: str | None  # rlx dtype name, None when rlx has no such type
    typestr: str  # e.g. "float32", for messages

    def contiguous(self) -> bool:
        if self.strides is None or 0 in self.shape:
            return True
        acc = 1
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != acc:
                return False
            acc *= d
        return True


def view(capsule) -> DLView:
    """Reads an unconsumed `dltensor` capsule (without consuming it)."""
    if not _is_valid(capsule, b"dltensor"):
        raise DLPackError("not an unconsumed 'dltensor' capsule (was it used already?)")
    m = DLManagedTensor.from_address(_get_pointer(capsule, b"dltensor"))
    t = m.dl_tensor
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    strides = tuple(int(t.strides[i]) for i in range(t.ndim)) if t.strides else None
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    kind = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}.get(code, f"code{code}")
    typestr = f"{kind}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    return DLView(
        ptr=(t.data or 0) + int(t.byte_offset),
        device_type=t.device.device_type,
        device_id=t.device.device_id,
        shape=shape,
        strides=strides,
        dtype=_NAMES.get((code, bits)) if lanes == 1 else None,
        typestr=typestr,
    )


#: DLManagedTensor address -> (struct, shape array, owner): alive until deleted
_LIVE: dict[int, tuple] = {}


@_Deleter
def _delete(p) -> None:
    _LIVE.pop(ctypes.cast(p, ctypes.c_void_p).value, None)


@_CapsuleDestructor
def _drop_unconsumed(capsule: int) -> None:
    # A consumer renames the capsule ('used_dltensor') and calls the deleter
    # itself; one that never consumed it leaves that to us.
    if _raw_is_valid(capsule, b"dltensor"):
        _LIVE.pop(_raw_get_pointer(capsule, b"dltensor"), None)


def to_capsule(ptr: int, shape: tuple[int, ...], dtype: str, owner: object, device: tuple[int, int] = (CUDA, 0)):
    """A `dltensor` capsule over `ptr` (row-major, rlx dtype `dtype`) that
    keeps `owner` alive until the consumer lets go of it."""
    code, bits = DTYPES[dtype].dlpack
    shape_arr = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    m = DLManagedTensor()
    m.dl_tensor.data = ptr
    m.dl_tensor.device = DLDevice(*device)
    m.dl_tensor.ndim = len(shape)
    m.dl_tensor.dtype = DLDataType(code, bits, 1)
    m.dl_tensor.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.strides = None
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _delete
    addr = ctypes.addressof(m)
    _LIVE[addr] = (m, shape_arr, owner)
    return _new_capsule(addr, b"dltensor", _drop_unconsumed)


def live_count() -> int:
    """Capsules handed out and not yet released (for tests)."""
    return len(_LIVE)

"""CUDA driver plumbing on cuda-python's driver API: the error type, the
result check, device discovery, allocation (with an out-of-memory message
that says how much was free) and cross-stream ordering with events.

The driver bindings are imported on first use, so this module (and
`is_available()`) imports on a machine without a GPU or driver.
"""

from __future__ import annotations

__all__ = ["CudaError", "alloc", "check", "device_arch", "is_available", "median", "wait_for"]


def median(xs) -> float:
    """The median of timings (the upper one of an even count; inf for
    none): what every timing loop of the runtime reports."""
    return sorted(xs)[len(xs) // 2] if len(xs) else float("inf")


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call (and, with
    RLXC_DEBUG=1, the kernel and its source)."""


def _driver():
    """cuda-python's driver module (`cuda.bindings.driver`)."""
    from cuda.bindings import driver

    return driver


def check(result, call: str):
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
    check(cu.cuInit(0), "cuInit")
    dev = check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
    attr = cu.CUdevice_attribute
    major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
    minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
    sms = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute")
    return f"sm_{major}{minor}", sms


def device_name(ordinal: int = 0) -> str:
    """The device's name as the driver reports it ("NVIDIA H100 80GB HBM3")."""
    cu = _driver()
    check(cu.cuInit(0), "cuInit")
    dev = check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
    name = check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
    return bytes(name).split(b"\0", 1)[0].decode()


def alloc(size: int, what: str):
    """cuMemAlloc of `size` bytes for `what` (named in the error); out of
    memory, the error also says how much was asked for and how much is free."""
    cu = _driver()
    try:
        return check(cu.cuMemAlloc(size), f"cuMemAlloc({size} bytes for {what})")
    except CudaError as e:
        free, total = check(cu.cuMemGetInfo(), "cuMemGetInfo")
        raise CudaError(f"{e}: asked for {size} bytes, {free} of {total} free") from None


def wait_for(producer: int, stream) -> None:
    """Orders `stream` after the work queued so far on the producer's stream
    (a CUstream handle; 1 and 2 are the legacy and per-thread defaults)."""
    cu = _driver()
    ev = check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    try:
        check(cu.cuEventRecord(ev, cu.CUstream(producer)), "cuEventRecord(producer stream of an input)")
        check(cu.cuStreamWaitEvent(stream, ev, 0), "cuStreamWaitEvent")
    finally:
        cu.cuEventDestroy(ev)

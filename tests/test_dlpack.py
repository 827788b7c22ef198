"""DLPack through ctypes (rlxc/runtime/dlpack.py), checked on host memory
against numpy's own DLPack producer and consumer: runs without a GPU."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import rlxc
from rlxc.runtime import dlpack
from rlxc.runtime.device_arrays import dlpack_input


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float16, "f16"), (np.int32, "i32"), (np.int64, "i64"), (np.bool_, "i1")])
def test_view_reads_numpy_capsules(dtype, name):
    rng = np.random.default_rng()
    shape = tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(0, 4))))
    a = np.asarray(rng.standard_normal(shape) * 10).astype(dtype)
    v = dlpack.view(a.__dlpack__())
    assert (v.ptr, v.shape, v.dtype, v.device_type) == (a.ctypes.data, a.shape, name, dlpack.CPU)
    assert v.contiguous()


def test_view_sees_offsets_and_strides():
    a = np.arange(60, dtype=np.float32).reshape(5, 12)
    b = a[1:, ::3]
    v = dlpack.view(b.__dlpack__())
    assert v.ptr == b.ctypes.data == a.ctypes.data + 12 * 4
    assert v.strides == (12, 3) and not v.contiguous()
    assert dlpack.view(a[:, :1].__dlpack__()).contiguous() is False
    assert dlpack.view(a[:1].__dlpack__()).contiguous()  # one row: strides of size-1 dims do not matter


def test_consumed_capsule_is_refused():
    cap = np.zeros(3, np.float32).__dlpack__()

    class Once:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (dlpack.CPU, 0)

    np.from_dlpack(Once())  # numpy consumes (renames) the capsule
    with pytest.raises(dlpack.DLPackError, match="unconsumed"):
        dlpack.view(cap)


class Exporter:
    """Host memory handed out through rlxc's producer side."""

    def __init__(self, arr, name, device=(dlpack.CPU, 0)):
        self.arr, self.name, self.device = arr, name, device
        self.owner = None

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        class Owner:
            pass

        o = Owner()
        o.arr = self.arr
        self.owner = weakref.ref(o)
        return dlpack.to_capsule(self.arr.ctypes.data, self.arr.shape, self.name, o, device=self.device)

    def __dlpack_device__(self):
        return self.device


def test_to_capsule_round_trip_and_lifetime():
    rng = np.random.default_rng()
    a = rng.standard_normal((7, 5)).astype(np.float32)
    start = dlpack.live_count()
    e = Exporter(a, "f32")
    b = np.from_dlpack(e)  # numpy consumes our capsule: no copy
    np.testing.assert_array_equal(b, a)
    assert b.ctypes.data == a.ctypes.data
    assert e.owner() is not None and dlpack.live_count() == start + 1
    del b
    gc.collect()
    assert e.owner() is None and dlpack.live_count() == start  # numpy called the deleter
    cap = e.__dlpack__()  # dropped without a consumer: released by the capsule
    assert dlpack.live_count() == start + 1
    del cap
    gc.collect()
    assert e.owner() is None and dlpack.live_count() == start


def test_to_capsule_bool_and_scalar():
    flags = np.array([True, False, True])
    np.testing.assert_array_equal(np.from_dlpack(Exporter(flags, "i1")), flags)
    s = np.array(3.5, np.float32)
    out = np.from_dlpack(Exporter(s, "f32"))
    assert out.shape == () and out == 3.5


def test_device_dlpack_input_checks_before_launch():
    # A capsule that claims CUDA memory (never dereferenced here): the checks
    # of shape, dtype, layout and device all run on the host.
    from xdsl.dialects.builtin import TensorType, f32

    t = TensorType(f32, [4, 6])
    a = np.zeros((4, 6), np.float32)
    held = []
    assert dlpack_input("x", Exporter(a, "f32", (dlpack.CUDA, 0)), t, 0, held) == a.ctypes.data
    assert len(held) == 1
    with pytest.raises(rlxc.InputError, match=r"input 'x' is a DLPack tensor of shape \[6, 4\] and type float32, expected"):
        dlpack_input("x", Exporter(np.zeros((6, 4), np.float32), "f32", (dlpack.CUDA, 0)), t, 0, [])
    with pytest.raises(rlxc.InputError, match="type int32"):
        dlpack_input("x", Exporter(np.zeros((4, 6), np.int32), "i32", (dlpack.CUDA, 0)), t, 0, [])
    with pytest.raises(rlxc.InputError, match="CUDA device 1"):
        dlpack_input("x", Exporter(a, "f32", (dlpack.CUDA, 1)), t, 0, [])
    with pytest.raises(rlxc.InputError, match="device type 4"):
        dlpack_input("x", Exporter(a, "f32", (4, 0)), t, 0, [])
    assert dlpack_input("x", Exporter(a, "f32"), t, 0, []) is None  # host memory: the host path takes it


def test_numpy_target_takes_dlpack_host_tensors():
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 4])
    module = g.build([g.neg(x)])
    a = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    (got,) = rlxc.compile(module, target="numpy").run({"x": Exporter(a, "f32")})
    np.testing.assert_array_equal(got, -a)

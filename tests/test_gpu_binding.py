"""GPU tests (marker `gpu`) of outputs written in place
(`executable.BIND_OUTPUTS`, prepared in session 45, off by default): the
kernels that write a function's outputs, and those that read them after,
are pointed at the output pool, and run() copies nothing out for them.
Every way of running (stream and graph mode, host outputs with the arena
and pool poisoned, device inputs and outputs through the I/O graph, its
replay, out=) must give the bits of the same executable without binding,
and the interpreter's values; outputs that share a value, views, function
arguments and params returned beside them included."""

from __future__ import annotations

import numpy as np
import pytest

import rlxc
from strategies import random_inputs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver"),
]


def _chain(g):
    """Three softmaxes and a matmul (a gemm where cuBLASLt is there); the
    gemm's result twice (once as a view), a softmax's twice, the argument
    and a param returned too."""
    x = g.input("x", [64, 256], "f32")
    a = g.softmax(x)
    c = g.softmax(g.softmax(a))
    d = g.matmul(c, g.param("w", [256, 128], "f32"))
    return [d, a, g.reshape(d, [64 * 128]), x, g.param("p", [3], "f32"), a]


def _halves(g):
    """16-bit outputs of odd sizes: a gather of rows of 77, a concat, a
    layer_norm read by a later kernel too."""
    t = g.input("t", [300, 77], "f16")
    ids = g.input("ids", [3, 101], "i64")
    u = g.input("u", [300, 38], "f16")
    n = g.layer_norm(t, g.param("gamma", [77], "f16"), g.param("beta", [77], "f16"))
    return [g.gather(t, ids, axis=0), g.concat([t, u], axis=1), n, g.gelu(n)]


def _single(g):
    return [g.softmax(g.gelu(g.input("x", [64, 96], "bf16")))]


def _upload(exe, name, host):
    from rlxc.runtime.device_arrays import DeviceArray, to_device_bytes
    from rlxc.runtime.driver_api import _driver, check

    t = dict(exe.sig.inputs)[name]
    a = DeviceArray(t)
    data = to_device_bytes(host, t)
    if data.nbytes:
        check(_driver().cuMemcpyHtoD(a.ptr, data.ctypes.data, data.nbytes), "cuMemcpyHtoD")
    return a


#: Relative L2 error against the interpreter, by output element type (test_gpu.TOL's).
TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}


@pytest.mark.parametrize("build", [_single, _chain, _halves], ids=["single", "chain", "halves"])
@pytest.mark.parametrize("mode", ["graph", "stream"])
def test_bound_outputs_give_the_unbound_bits(build, mode, monkeypatch):
    """Each way of running gets fresh inputs, so an output a path fails to
    write shows up as the last path's values (or the poison's NaN)."""
    from rlxc.dialects.types import dtype_name
    from rlxc.runtime import executable as E

    g = rlxc.GraphBuilder()
    module = g.build(build(g))
    rng = np.random.default_rng()

    def fresh():
        inputs, _ = random_inputs(module, rng)
        if "ids" in inputs:
            inputs["ids"] = rng.integers(-300, 300, inputs["ids"].shape)
        return inputs

    _, params = random_inputs(module, rng)
    plain = rlxc.compile(module, target="cuda", params=params, mode=mode)
    assert plain.bindings == []
    monkeypatch.setattr(E, "BIND_OUTPUTS", True)
    exe = rlxc.compile(module, target="cuda", params=params, mode=mode)
    assert exe.bindings and set(exe.unbound).isdisjoint(b.output for b in exe.bindings)

    def same(inputs, got, what):
        ref = plain.run(inputs, poison=True)
        assert len(got) == len(ref), what
        for k, (r, o) in enumerate(zip(ref, got)):
            o = o.numpy() if hasattr(o, "numpy") else o
            np.testing.assert_array_equal(o, r, err_msg=f"{what}: output #{k}")
        return ref

    for _ in range(2):
        inputs = fresh()
        same(inputs, exe.run(inputs, poison=True), "host outputs, poisoned")
    for _ in range(3):  # the I/O graph: built, then replayed, then its input pointers changed
        inputs = fresh()
        dev = {k: _upload(exe, k, v) for k, v in inputs.items()}
        same(inputs, exe.run(dev, device_outputs=True), "device outputs")
    inputs = fresh()
    dev = {k: _upload(exe, k, v) for k, v in inputs.items()}
    out = [rlxc.cuda.DeviceArray(t) for t in exe.sig.outputs]
    same(inputs, exe.run(dev, out=out), "out=")
    inputs = fresh()
    ref = same(inputs, exe.run(inputs), "host outputs")
    want = rlxc.interpret(module, inputs, params)
    for k, (w, r, t) in enumerate(zip(want, ref, exe.sig.outputs)):
        if w.dtype.kind == "f":
            tol = TOL[dtype_name(t.get_element_type())]
            err = np.linalg.norm(r.astype(np.float64) - w) / max(np.linalg.norm(w.astype(np.float64)), 1e-30)
            assert err < tol, (k, err)
        else:
            np.testing.assert_array_equal(r, w)

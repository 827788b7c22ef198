"""GPU tests (marker `gpu`) of outputs written in place
(`executable.BIND_OUTPUTS`) and inputs read in place (`BIND_INPUTS`): the
kernels that write a function's outputs, and those that read them after,
are pointed at the output pool, and run() copies nothing out for them; in
the I/O graph, the kernels that read an input are pointed at the caller's
array, and nothing is copied in for it. Every way of running (stream and
graph mode, host outputs with the arena and pool poisoned, device inputs
and outputs through the I/O graph, its replay, new input pointers, new
contents at the same pointers, a misaligned input, out=) must give the
bits of the same executable without binding, and the interpreter's values;
outputs that share a value, views, function arguments and params returned
beside them included."""

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
    gemm's result twice (once as a view), a softmax's twice, an argument
    (copied in: it is returned) and a param returned too; the other
    argument is read in place."""
    x, z = g.input("x", [64, 256], "f32"), g.input("z", [64, 256], "f32")
    a = g.softmax(g.add(x, z))
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


def _upload(exe, name, host, misalign=0):
    """`host` on the device as run() would copy it (bf16 rounded, not cut),
    `misalign` bytes past an aligned address."""
    from rlxc.runtime.device_arrays import DeviceArray, DeviceBuffer, to_device_bytes
    from rlxc.runtime.device_arrays import from_device_bytes
    from rlxc.runtime.driver_api import _driver, check
    from rlxc.signature import check_array

    t = dict(exe.sig.inputs)[name]
    if misalign:
        from rlxc.dialects.types import tensor_bytes

        buf = DeviceBuffer(tensor_bytes(t) + misalign, "a misaligned input")
        a = DeviceArray(t, buf.ptr + misalign, buf)
    else:
        a = DeviceArray(t)
    data = to_device_bytes(check_array("input", name, host, t), t)
    if data.nbytes:
        check(_driver().cuMemcpyHtoD(a.ptr, data.ctypes.data, data.nbytes), "cuMemcpyHtoD")
    return a


#: Relative L2 error against the interpreter, by output element type (test_gpu.TOL's).
TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}

#: which knobs each case turns on
BOUND = {"outputs": ("BIND_OUTPUTS",), "inputs": ("BIND_INPUTS",), "both": ("BIND_OUTPUTS", "BIND_INPUTS")}


@pytest.mark.parametrize("build", [_single, _chain, _halves], ids=["single", "chain", "halves"])
@pytest.mark.parametrize("mode", ["graph", "stream"])
@pytest.mark.parametrize("bound", list(BOUND))
def test_bound_arrays_give_the_unbound_bits(build, mode, bound, monkeypatch):
    """Each way of running gets fresh inputs, so an output a path fails to
    write (or an input a path fails to read) shows up as the last path's
    values (or the poison's NaN)."""
    from rlxc.dialects.types import dtype_name
    from rlxc.runtime import executable as E
    from rlxc.runtime.device_arrays import from_device_bytes
    from rlxc.runtime.driver_api import _driver, check

    g = rlxc.GraphBuilder()
    module = g.build(build(g))
    rng = np.random.default_rng()

    def fresh():
        inputs, _ = random_inputs(module, rng)
        if "ids" in inputs:
            inputs["ids"] = rng.integers(-300, 300, inputs["ids"].shape)
        return inputs

    _, params = random_inputs(module, rng)
    monkeypatch.setattr(E, "BIND_OUTPUTS", False)
    monkeypatch.setattr(E, "BIND_INPUTS", False)
    plain = rlxc.compile(module, target="cuda", params=params, mode=mode)
    assert plain.bindings == [] and plain.input_bindings == []
    for knob in BOUND[bound]:
        monkeypatch.setattr(E, knob, True)
    exe = rlxc.compile(module, target="cuda", params=params, mode=mode)
    assert bool(exe.bindings) == ("BIND_OUTPUTS" in BOUND[bound])
    assert set(exe.unbound).isdisjoint(b.output for b in exe.bindings)
    reads = "BIND_INPUTS" in BOUND[bound] and mode == "graph"
    assert bool(exe.input_bindings) == reads, exe.inputs_unbound
    if reads and build is _chain:
        assert [b.input for b in exe.input_bindings] == [1] and exe.inputs_unbound == {0: "it is returned (the output is copied from its slot)"}
    assert set(exe.inputs_unbound).isdisjoint(b.input for b in exe.input_bindings)

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
    if mode == "graph":  # the I/O graph found its kernel nodes (no silent fallback to copies)
        assert exe._io is not None
        copied = [s for s in exe._in_slots if s.nbytes]
        assert len(exe._io.in_nodes) == len(copied) - len(exe.input_bindings)
        assert len(exe._io.bound) == len(exe.input_bindings) and bool(exe._io.bound) == reads
        assert not any("not found" in why for why in exe.inputs_unbound.values()), exe.inputs_unbound
    if mode == "graph" and reads:
        # launch() after a run that read inputs in place: they are copied into their (poisoned) slots first
        for b in exe.input_bindings:
            check(_driver().cuMemsetD8(int(exe.arena) + b.offset, 0xFF, b.nbytes), "cuMemsetD8(an input's slot)")
        exe.launch()
        check(_driver().cuStreamSynchronize(exe.stream), "cuStreamSynchronize")
        launched = []
        for t, src, nbytes in exe._outputs:  # where the launch list leaves each output
            raw = np.empty(nbytes, np.uint8)
            if nbytes:
                check(_driver().cuMemcpyDtoH(raw.ctypes.data, src, nbytes), "cuMemcpyDtoH")
            launched.append(from_device_bytes(raw, t))
        same(inputs, launched, "launch() after a run that read inputs in place")
        exe.run(dev, device_outputs=True)  # the arrays of that run's mapping changed since: launch() says so
        k = exe.sig.inputs[exe.input_bindings[0].input][0]
        dev[k] = _upload(exe, k, inputs[k])
        with pytest.raises(rlxc.cuda.CudaError, match="changed since"):
            exe.launch()
    inputs = fresh()  # new contents at the same pointers
    for k, v in inputs.items():
        new = _upload(exe, k, v)
        if new.nbytes:
            check(_driver().cuMemcpyDtoD(dev[k].ptr, new.ptr, new.nbytes), "cuMemcpyDtoD")
    same(inputs, exe.run(dev, device_outputs=True), "device outputs, new contents at the same pointers")
    inputs = fresh()  # an input 4 bytes past an aligned address: copied in (the general path where bound)
    name = (exe.sig.inputs[exe.input_bindings[0].input][0] if exe.input_bindings
            else next(n for n, t in exe.sig.inputs if dtype_name(t.get_element_type()) != "i64"))
    dev = {k: _upload(exe, k, v, misalign=4 if k == name else 0) for k, v in inputs.items()}
    same(inputs, exe.run(dev, device_outputs=True), "device outputs, an input misaligned")
    if reads:  # the I/O graph's timers refuse it rather than read it in place
        with pytest.raises(rlxc.cuda.CudaError, match="aligned"):
            exe.time_runs(dev, repeat=2, warmup=1)
    inputs = fresh()
    dev = {k: _upload(exe, k, v) for k, v in inputs.items()}
    same(inputs, exe.run(dev, device_outputs=True), "device outputs, aligned again")
    if build is _single:  # an output of the last run passed back in: read while the kernel writes the pool
        first = exe.run(dev, device_outputs=True)
        host = {"x": first[0].numpy()}
        same(host, exe.run({"x": first[0]}, device_outputs=True), "an output passed back in")
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

"""GPU tests (marker `gpu`) of `CudaExecutable.run`'s host side: the I/O
graph (input copies, kernels and output copies in one CUDA graph), its copy
nodes following new input and output pointers, the output pool, `out=`,
`close()`, and the host overhead per call. Skipped without a GPU or torch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import rlxc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from models import transformer_encoder_layer  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver"),
]

torch = pytest.importorskip("torch")


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def small_layer():
    module, params = transformer_encoder_layer(batch=2, seq=16, hidden=64, heads=4)
    return module, params


def test_io_graph_follows_new_input_pointers():
    module, params = small_layer()
    exe = rlxc.compile(module, target="cuda", params=params)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 16, 64)).astype(np.float32) for _ in range(3)]
    wants = [rlxc.interpret(module, {"x": x}, params)[0] for x in xs]
    ts = [torch.from_numpy(x).cuda() for x in xs]
    first = None
    for k in (0, 1, 2, 0, 0, 2):  # new pointers, then old ones again
        (out,) = exe.run({"x": ts[k]})
        assert exe.io_graph_error is None, exe.io_graph_error
        assert isinstance(out, rlxc.cuda.DeviceArray)
        first = first or out
        assert out is first  # the pool: the same array every run
        assert rel(out.numpy(), wants[k]) < 1e-5
        got = torch.as_tensor(out, device="cuda").cpu().numpy()  # a zero-copy view, read now
        assert rel(got, wants[k]) < 1e-5


def test_out_arrays_and_their_pointers():
    module, params = small_layer()
    exe = rlxc.compile(module, target="cuda", params=params)
    x = np.random.default_rng(1).standard_normal((2, 16, 64)).astype(np.float32)
    (want,) = rlxc.interpret(module, {"x": x}, params)
    tx = torch.from_numpy(x).cuda()
    for _ in range(2):
        dest = torch.full((2, 16, 64), float("nan"), device="cuda")
        res = exe.run({"x": tx}, out=[dest])
        assert res[0] is dest
        assert rel(dest.cpu().numpy(), want) < 1e-5
    with pytest.raises(rlxc.InputError, match=r"output 'out\[0\]' is a torch tensor of shape \[2, 16\]"):
        exe.run({"x": tx}, out=[torch.empty((2, 16), device="cuda")])
    with pytest.raises(rlxc.InputError, match="out has 2 arrays"):
        exe.run({"x": tx}, out=[dest, dest])
    # host inputs with out=: the general path copies there too
    dest2 = torch.zeros((2, 16, 64), device="cuda")
    assert exe.run({"x": x}, out=[dest2])[0] is dest2
    assert rel(dest2.cpu().numpy(), want) < 1e-5
    # from the caller's arrays to the pool and back: each run writes where it is told
    (pooled,) = exe.run({"x": tx})
    assert rel(pooled.numpy(), want) < 1e-5
    dest3 = torch.full((2, 16, 64), float("nan"), device="cuda")
    assert exe.run({"x": tx}, out=[dest3])[0] is dest3
    assert rel(dest3.cpu().numpy(), want) < 1e-5
    torch.as_tensor(pooled, device="cuda").fill_(float("nan"))
    dest3.fill_(float("nan"))
    (again,) = exe.run({"x": tx})
    assert again is pooled and rel(again.numpy(), want) < 1e-5
    assert torch.isnan(dest3).all()  # the hot path wrote the pool, not the last caller's array


def test_outputs_that_are_inputs_params_and_views():
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 6])
    y = g.input("y", [6])
    w = g.param("w", [6])
    module = g.build([x, g.reshape(x, [6, 4]), w, g.add(x, y), g.neg(y)])
    params = {"w": np.arange(6, dtype=np.float32)}
    exe = rlxc.compile(module, target="cuda", params=params)
    rng = np.random.default_rng(2)
    for _ in range(2):
        a = rng.standard_normal((4, 6)).astype(np.float32)
        b = rng.standard_normal(6).astype(np.float32)
        want = rlxc.interpret(module, {"x": a, "y": b}, params)
        got = exe.run({"x": torch.from_numpy(a).cuda(), "y": torch.from_numpy(b).cuda()})
        assert exe.io_graph_error is None, exe.io_graph_error
        for w_, g_ in zip(want, got):
            np.testing.assert_array_equal(g_.numpy(), w_)
        host = exe.run({"x": a, "y": b})  # host in -> host out: the general path
        for w_, g_ in zip(want, host):
            np.testing.assert_array_equal(g_, w_)
        mixed = exe.run({"x": torch.from_numpy(a).cuda(), "y": b})  # mixed: general, device outputs
        for w_, g_ in zip(want, mixed):
            np.testing.assert_array_equal(g_.numpy(), w_)


def test_torch_bf16_and_checks():
    g = rlxc.GraphBuilder()
    module = g.build([g.gelu(g.input("x", [8, 32], "bf16"))])
    exe = rlxc.compile(module, target="cuda")
    x = torch.randn(8, 32, device="cuda", dtype=torch.bfloat16)
    (out,) = exe.run({"x": x})
    want = torch.nn.functional.gelu(x.float()).cpu().numpy()
    assert rel(out.numpy(), want) < 1e-2
    with pytest.raises(rlxc.InputError, match=r"input 'x' is a torch tensor of shape \[8, 32\] and type float32"):
        exe.run({"x": x.float()})
    with pytest.raises(rlxc.InputError, match="non-contiguous torch tensor"):
        exe.run({"x": torch.randn(32, 8, device="cuda", dtype=torch.bfloat16).T})
    with pytest.raises(rlxc.InputError, match="unknown input 'z'"):
        exe.run({"x": x, "z": x})


def test_stream_mode_and_poison_take_the_general_path():
    module, params = small_layer()
    x = np.random.default_rng(3).standard_normal((2, 16, 64)).astype(np.float32)
    (want,) = rlxc.interpret(module, {"x": x}, params)
    exe = rlxc.compile(module, target="cuda", params=params, mode="stream")
    (out,) = exe.run({"x": torch.from_numpy(x).cuda()})
    assert rel(out.numpy(), want) < 1e-5
    exe = rlxc.compile(module, target="cuda", params=params)
    (out,) = exe.run({"x": torch.from_numpy(x).cuda()}, poison=True)
    assert rel(out.numpy(), want) < 1e-5


def test_close_frees_device_memory_and_keeps_outputs():
    """close() frees the executable's own allocations (its arena, params and
    cuBLASLt workspace: the driver no longer knows their addresses right
    after) and leaves the outputs it returned; alone on the GPU, the
    device's free memory also comes back (under pytest-xdist the other
    workers move it by hundreds of MiB, so there only the addresses count)."""
    import os

    from rlxc.runtime.driver_api import _driver, check

    g = rlxc.GraphBuilder()
    x = g.input("x", [4096, 8192])  # 128 MiB: a leaked arena stands out of other processes' use of the GPU
    module = g.build([g.softmax(g.exp(g.neg(x)))])
    a = torch.randn(4096, 8192, device="cuda")
    want = torch.softmax(torch.exp(-a), -1).cpu().numpy()
    torch.cuda.synchronize()
    rlxc.compile(module, target="cuda").close()  # warm: NVRTC cache, cuBLAS, context
    free0, _ = check(_driver().cuMemGetInfo(), "cuMemGetInfo")
    ok = _driver().CUresult.CUDA_SUCCESS
    outs = []
    for _ in range(4):
        with rlxc.compile(module, target="cuda") as exe:
            (out,) = exe.run({"x": a})
            owned = [int(p) for p in (exe.arena, exe.params, exe.workspace) if p is not None]
            assert owned and all(_driver().cuMemGetAddressRange(p)[0] == ok for p in owned)
        # freed: the driver reports no allocation at those addresses (before any new one can take them)
        assert all(_driver().cuMemGetAddressRange(p)[0] != ok for p in owned), owned
        with pytest.raises(rlxc.cuda.CudaError, match="closed"):
            exe.run({"x": a})
        outs.append(out)
    for out in outs:  # the pools outlive their executables
        assert rel(out.numpy(), want) < 1e-5
    del outs, out
    free1, _ = check(_driver().cuMemGetInfo(), "cuMemGetInfo")
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # four 128 MiB arenas would show
        assert free0 - free1 < 192 << 20, (free0, free1)


def test_relabelling_only_graph_launches_nothing():
    """A graph whose ops only relabel (a transpose of a size-1 axis, a
    reshape) lowers to no kernel: launch() enqueues nothing (no graph is
    captured), run() still copies the input to the output, on the host and
    on the device, and a closed executable refuses launch() too."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 33, 1, 64])
    module = g.build([g.reshape(g.transpose(x, [0, 2, 1, 3]), [4, 33 * 64])])
    exe = rlxc.compile(module, target="cuda")
    assert exe.launches == []
    exe.launch()
    assert exe.graph_exec is None
    xin = np.random.default_rng().standard_normal((4, 33, 1, 64)).astype(np.float32)
    (got,) = exe.run({"x": xin})
    np.testing.assert_array_equal(got, xin.reshape(4, 33 * 64))
    (dev,) = exe.run({"x": torch.from_numpy(xin).cuda()})
    np.testing.assert_array_equal(dev.numpy(), xin.reshape(4, 33 * 64))
    exe.close()
    with pytest.raises(rlxc.cuda.CudaError, match="closed"):
        exe.launch()


def test_host_overhead_per_run():
    """run()'s wall time minus the device time of the same work, BERT-base
    sized layer, torch inputs: a loose bound here (shared machines); the
    benchmark (benchmarks/encoders.py) reports the figure."""
    module, params = transformer_encoder_layer(batch=1, seq=128, hidden=768, heads=12)
    exe = rlxc.compile(module, target="cuda", params=params)
    x = torch.randn(1, 128, 768, device="cuda")
    r = exe.host_overhead({"x": x}, repeat=200)
    print(f"\nhost overhead: wall {r['wall_us']:.1f} us, device {r['device_us']:.1f} us, "
          f"overhead {r['overhead_us']:.1f} us")
    assert exe.io_graph_error is None
    assert r["overhead_us"] < 100


@pytest.mark.parametrize("form", ["write", "kernel", ""])
def test_outputs_complete_when_run_returns(form, monkeypatch):
    """run() on the I/O graph returns once the graph's last node has set
    the mapped flag (executable.SIGNAL_WAIT: a captured stream write, a
    one-thread kernel, or "" for the stream's completion), not when the
    stream is reported done. The outputs must be complete by then: each is
    read at once by a copy on a stream that does not wait for the
    executable's (CU_STREAM_NON_BLOCKING), after runs whose inputs change
    every call, and compared with float64 numpy of the same graph."""
    from cuda.bindings import driver as cu

    from rlxc.runtime import executable as E
    from rlxc.runtime.driver_api import check

    monkeypatch.setattr(E, "SIGNAL_WAIT", form)
    g = rlxc.GraphBuilder()
    x = g.input("x", [512, 4096])
    w = g.param("w", [4096])
    module = g.build(g.tanh(g.add(g.mul(x, w), g.reduce_mean(x, axes=[1], keepdims=True))))
    rng = np.random.default_rng(7)
    wv = rng.standard_normal(4096).astype(np.float32)
    exe = rlxc.compile(module, target="cuda", params={"w": wv})
    reader = check(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    got = np.empty((512, 4096), np.float32)
    try:
        for k in range(12):
            xv = rng.standard_normal((512, 4096)).astype(np.float32)
            (out,) = exe.run({"x": torch.from_numpy(xv).cuda()})
            check(cu.cuMemcpyDtoHAsync(got.ctypes.data, out.ptr, got.nbytes, reader), "cuMemcpyDtoHAsync")
            check(cu.cuStreamSynchronize(reader), "cuStreamSynchronize")
            x64 = xv.astype(np.float64)
            want = np.tanh(x64 * wv + x64.mean(axis=1, keepdims=True))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"run {k}")
        assert exe.io_graph_error is None
        assert exe.signal_form == ("kernel" if form == "kernel" else form) or (
            form == "write" and exe.signal_form == "kernel" and exe.signal_error), (exe.signal_form, exe.signal_error)
        if form == "write":
            print(f"\nsignal form: {exe.signal_form} ({exe.signal_error or 'captured'})")
    finally:
        cu.cuStreamDestroy(reader)
        exe.close()


def test_memset_nodes_become_fill_kernels():
    """executable.MEMSETS_AS_KERNELS: a captured graph's memset nodes (as
    cuBLASLt's split-K gemms leave) become kernel nodes (`rlx_fill16` where
    the buffer is 16-byte aligned and its rows whole 16-byte items, else
    `rlx_fill`), keeping their place in the graph's order (overlapping
    fills: the later wins). 1-, 2- and 4-byte values, unaligned and short
    buffers, a 2-D memset with a pitch; the bytes after a launch equal the
    memsets' applied in order."""
    from cuda.bindings import driver as cu

    from rlxc.runtime.driver_api import alloc, check
    from rlxc.runtime.executable import _graph_nodes

    module, params = small_layer()
    exe = rlxc.compile(module, target="cuda", params=params)
    size = 1 << 16
    buf = alloc(size, "the test buffer")
    base = int(buf)
    want = np.zeros(size, dtype=np.uint8)
    rng = np.random.default_rng()
    a, b = int(rng.integers(1, 255)), int(rng.integers(1, 2**31))

    def word_bytes(value, n, kind):
        return np.frombuffer(np.full(n, value, dtype=kind).tobytes(), dtype=np.uint8)

    # (call, args, where, the bytes it writes); rlx_fill16 takes the 1st, 2nd and last, and the 2-D 32-bit one
    fills = [
        (cu.cuMemsetD8Async, (base, a, 4096), 0, word_bytes(a, 4096, np.uint8)),
        (cu.cuMemsetD32Async, (base + 2048, b, 1000), 2048, word_bytes(b, 1000, np.uint32)),  # overlaps: later wins
        (cu.cuMemsetD16Async, (base + 8194, 0x1234, 100), 8194, word_bytes(0x1234, 100, np.uint16)),  # unaligned
        (cu.cuMemsetD8Async, (base + 8995, 0x11, 24), 8995, word_bytes(0x11, 24, np.uint8)),  # odd start, short
        (cu.cuMemsetD32Async, (base + 10004, b ^ 0x5A5A, 3), 10004, word_bytes(b ^ 0x5A5A, 3, np.uint32)),
        (cu.cuMemsetD16Async, (base + 12288, 0xBEEF, 4096), 12288, word_bytes(0xBEEF, 4096, np.uint16)),
    ]
    check(cu.cuMemsetD8(base, 0, size), "cuMemsetD8")
    check(cu.cuStreamBeginCapture(exe.stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "capture")
    for call, args, at, data in fills:
        check(call(*args, exe.stream), call.__name__)
        want[at:at + data.size] = data
    # 2-D: 8 rows of 64 words, 1024 bytes apart; 5 rows of 7 bytes, 100 apart
    pitch, value = 1024, int(rng.integers(1, 2**31))
    check(cu.cuMemsetD2D32Async(base + 32768, pitch, value, 64, 8, exe.stream), "cuMemsetD2D32Async")
    for r in range(8):
        want[32768 + r * pitch:32768 + r * pitch + 256] = word_bytes(value, 64, np.uint32)
    check(cu.cuMemsetD2D8Async(base + 50001, 100, 0x77, 7, 5, exe.stream), "cuMemsetD2D8Async")
    for r in range(5):
        want[50001 + r * 100:50001 + r * 100 + 7] = 0x77
    graph = check(cu.cuStreamEndCapture(exe.stream), "cuStreamEndCapture")
    try:
        exe._fill_memsets(graph)
        assert exe.memsets_as_kernels == 8
        kinds = [check(cu.cuGraphNodeGetType(n), "type") for n in _graph_nodes(graph)]
        assert kinds.count(cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL) == 8
        assert cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET not in kinds
        g = check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        check(cu.cuGraphLaunch(g, exe.stream), "cuGraphLaunch")
        check(cu.cuStreamSynchronize(exe.stream), "sync")
        got = np.empty(size, dtype=np.uint8)
        check(cu.cuMemcpyDtoH(got.ctypes.data, base, size), "cuMemcpyDtoH")
        np.testing.assert_array_equal(got, want)
        cu.cuGraphExecDestroy(g)
    finally:
        cu.cuGraphDestroy(graph)
        cu.cuMemFree(buf)
        exe.close()


@pytest.mark.parametrize("as_kernels", [True, False])
def test_f32_gemms_with_or_without_memset_nodes(as_kernels, monkeypatch):
    """A batch-32-sized f32 linear (4096 x 3072 -> 768, where cuBLASLt's
    split-K algorithms zero buffers with memsets): the same values with the
    memset nodes replaced by fill kernels and without, against float64."""
    from rlxc.runtime import executable as E

    monkeypatch.setattr(E, "MEMSETS_AS_KERNELS", as_kernels)
    g = rlxc.GraphBuilder()
    x = g.input("x", [4096, 3072])
    w = g.param("w", [768, 3072])
    module = g.build([g.linear(x, w)])
    rng = np.random.default_rng()
    xs = rng.standard_normal((4096, 3072)).astype(np.float32)
    ws = (rng.standard_normal((768, 3072)) / 50).astype(np.float32)
    exe = rlxc.compile(module, target="cuda", params={"w": ws})
    t = torch.from_numpy(xs).cuda()
    for _ in range(2):  # the I/O graph's first run and a replay
        (y,) = exe.run({"x": t})
        got = torch.as_tensor(y, device="cuda").cpu().numpy()
        assert rel(got, xs.astype(np.float64) @ ws.astype(np.float64).T) < 1e-5
    if not as_kernels:
        assert exe.memsets_as_kernels == 0
    exe.close()


def test_clock_ratio_of_host_and_events():
    """CudaExecutable.clock_ratio: host seconds per second of event time,
    from two events 200 ms apart by the host clock; the clocks agree within
    1% (an H200: 0.04%), and a second measure within 0.2% of the first (at
    50 ms apart, under the 8 workers of `pytest -n 8`, two measures once
    differed by 0.25%: the host thread's wake-ups vary by some 100 µs)."""
    module, params = small_layer()
    exe = rlxc.compile(module, target="cuda", params=params)
    a, b = exe.clock_ratio(span_s=0.2, rounds=3), exe.clock_ratio(span_s=0.2, rounds=3)
    exe.close()
    assert abs(a - 1) < 0.01 and abs(b - a) < 2e-3, (a, b)

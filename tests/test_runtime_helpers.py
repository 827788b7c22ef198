"""CPU tests of the runtime's helpers that need no GPU."""

from __future__ import annotations

import math
import random

from rlxc.runtime.driver_api import median


def test_median_of_timings():
    """The timing loops' median (host_overhead, gemm autotuning): the
    middle of an odd count, the upper middle of an even one, inf for no
    samples; the samples are left as they were."""
    xs = [random.random() for _ in range(101)]
    before = list(xs)
    assert median(xs) == sorted(xs)[50] and xs == before
    assert median([3.0, 1.0, 4.0, 2.0]) == 3.0
    assert median([5.0]) == 5.0 and math.isinf(median([]))


class _FakeDriver:
    """cuStreamQuery answering NOT_READY `busy` times, then `final`;
    cuStreamSynchronize counted."""

    def __init__(self, busy: int, final: int = 0):
        self.busy, self.final, self.queries, self.syncs = busy, final, 0, 0

    def cuStreamQuery(self, stream):
        self.queries += 1
        return (600,) if self.queries <= self.busy else (self.final,)

    def cuStreamSynchronize(self, stream):
        self.syncs += 1
        return (0,)


def _waiter(drv):
    from rlxc.runtime.executable import CudaExecutable

    exe = object.__new__(CudaExecutable)  # no GPU: only what _wait reads
    exe._cu, exe.stream = drv, 7
    return exe


def test_wait_polls_then_blocks(monkeypatch):
    """run()'s wait (CudaExecutable._wait): polls the stream while it is
    busy and returns when it is done, without blocking; past SYNC_SPIN_S it
    blocks in cuStreamSynchronize; with 0 it blocks at once; an error from
    the query is raised naming the wait."""
    from rlxc.runtime import executable as E

    drv = _FakeDriver(busy=50)
    _waiter(drv)._wait()
    assert drv.queries == 51 and drv.syncs == 0
    monkeypatch.setattr(E, "SYNC_SPIN_S", 1e-9)
    drv = _FakeDriver(busy=10**9)
    _waiter(drv)._wait()
    assert 1 <= drv.queries < 10**6 and drv.syncs == 1
    monkeypatch.setattr(E, "SYNC_SPIN_S", 0)
    drv = _FakeDriver(busy=3)
    _waiter(drv)._wait()
    assert drv.queries == 0 and drv.syncs == 1
    monkeypatch.setattr(E, "SYNC_SPIN_S", 0.05)
    _raises_named(monkeypatch, lambda: _waiter(_FakeDriver(busy=2, final=700))._wait())


def _raises_named(monkeypatch, wait) -> None:
    """`wait()`, whose stream query fails with code 700, raises an error
    naming the wait."""
    import pytest

    from rlxc.runtime import executable as E

    def fail(result, call):
        raise E.CudaError(f"{call} failed: code {result[0]}")

    monkeypatch.setattr(E, "check", fail)
    with pytest.raises(E.CudaError, match=r"cuStreamQuery \(waiting for the launch\) failed: code 700"):
        wait()


class _FakeFlag:
    """SIGNAL_WAIT's flag, set after `reads` reads (never: None)."""

    def __init__(self, reads):
        self.reads, self.n = reads, 0

    @property
    def value(self):
        self.n += 1
        return int(self.reads is not None and self.n > self.reads)


def test_wait_for_the_flag(monkeypatch):
    """run()'s wait on the I/O graph's flag (CudaExecutable._wait_flag):
    returns once the flag is set without blocking, querying the stream only
    every SIGNAL_QUERY_EVERY reads; a stream found done ends it; an error
    from the query is raised naming the wait; past SYNC_SPIN_S it blocks in
    cuStreamSynchronize, and with SYNC_SPIN_S = 0 at once."""
    from rlxc.runtime import executable as E

    def waiter(drv, flag):
        exe = _waiter(drv)
        exe._flag = flag
        return exe

    drv = _FakeDriver(busy=10**9)
    waiter(drv, _FakeFlag(1000))._wait_flag()
    assert drv.queries == 1000 // E.SIGNAL_QUERY_EVERY and drv.syncs == 0
    drv = _FakeDriver(busy=0)  # the flag never seen set, the stream done
    waiter(drv, _FakeFlag(None))._wait_flag()
    assert drv.queries == 1 and drv.syncs == 0
    monkeypatch.setattr(E, "SYNC_SPIN_S", 1e-9)
    drv = _FakeDriver(busy=10**9)
    waiter(drv, _FakeFlag(None))._wait_flag()
    assert drv.queries >= 2 and drv.syncs == 1
    monkeypatch.setattr(E, "SYNC_SPIN_S", 0)
    drv = _FakeDriver(busy=10**9)
    waiter(drv, _FakeFlag(None))._wait_flag()
    assert drv.queries == 0 and drv.syncs == 1
    monkeypatch.setattr(E, "SYNC_SPIN_S", 0.05)
    _raises_named(monkeypatch, lambda: waiter(_FakeDriver(busy=2, final=700), _FakeFlag(None))._wait_flag())


def test_fill_launch_for_memset_nodes():
    """executable._fill_launch: a memset node's parameters as the fill
    kernel writing the same bytes: 16-byte items (`rlx_fill16`, the value
    repeated in a 32-bit word) where the buffer, its rows and its pitch are
    16-byte aligned, else one element at a time (`rlx_fill`); a 2-D memset
    keeps its pitch; other element sizes are left alone."""
    from types import SimpleNamespace

    from rlxc.runtime.executable import _fill_launch, _fill_word

    def p(dst, size, width, height=1, pitch=0, value=0):
        return SimpleNamespace(dst=dst, elementSize=size, width=width, height=height, pitch=pitch, value=value)

    assert (_fill_word(0xAB, 1), _fill_word(0x1234, 2), _fill_word(0x89ABCDEF, 4)) == (0xABABABAB, 0x12341234, 0x89ABCDEF)
    fn, grid, args = _fill_launch("f16", "f1", p(4096, 1, 4096, value=0xAB))
    assert fn == "f16" and grid == 1 and [int(a[0]) for a in args] == [4096, 0xABABABAB, 256, 1, 256]
    fn, grid, args = _fill_launch("f16", "f1", p(1 << 20, 4, 64, height=8, pitch=1024, value=7))  # 2-D, 16-byte rows
    assert fn == "f16" and [int(a[0]) for a in args] == [1 << 20, 7, 16, 8, 64]
    fn, grid, args = _fill_launch("f16", "f1", p(8194, 2, 100, value=0x1234))  # unaligned
    assert fn == "f1" and [int(a[0]) for a in args] == [8194, 0x12341234, 2, 100, 1, 200]
    fn, grid, args = _fill_launch("f16", "f1", p(0, 4, 3 * 1024 * 1024, value=1))  # many items: grid capped
    assert fn == "f16" and grid == 1024
    assert _fill_launch("f16", "f1", p(4096, 8, 16)) is None and _fill_launch("f16", "f1", p(4096, 4, 0)) is None
    assert _fill_launch("f16", "f1", p(4097, 4, 16)) is None  # not even element-aligned


def test_graph_neighbours_across_binding_versions():
    """executable._neighbours reads a node's dependencies whether the
    bindings return edge data (cuda-bindings 13) or not (12);
    _edges_plain accepts only default edges."""
    from types import SimpleNamespace

    from rlxc.runtime.driver_api import _driver
    from rlxc.runtime.executable import _edges_plain, _neighbours

    ok = _driver().CUresult.CUDA_SUCCESS
    edge = SimpleNamespace(type=0, from_port=0, to_port=0)

    def v13(node, n):
        return (ok, ["a", "b", None][:max(n, 0)] if n else [], [edge, edge][:n] if n else [], 2)

    def v12(node, n):
        return (ok, ["a", "b"][:n] if n else [], 2)

    assert _neighbours(v13, "x") == (["a", "b"], [edge, edge])
    assert _neighbours(v12, "x") == (["a", "b"], None)
    assert _edges_plain(None) and _edges_plain([edge, None])
    assert not _edges_plain([edge, SimpleNamespace(type=1, from_port=0, to_port=0)])
    assert not _edges_plain([SimpleNamespace(type=0, from_port=1, to_port=0)])


class _FakeGraphDriver:
    """Enough of the driver API for executable._memsets_as_kernels on a
    graph held in Python: nodes by id with a type, edges as pairs; calls
    named in `fail` answer an error (code 1)."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUgraphNodeType:
        CU_GRAPH_NODE_TYPE_KERNEL = 0
        CU_GRAPH_NODE_TYPE_MEMSET = 2

    class CUDA_KERNEL_NODE_PARAMS:
        pass

    def __init__(self, types: dict, edges: set, fail=()):
        self.types, self.edges, self.fail, self.next = dict(types), set(edges), set(fail), 100

    def _ok(self, name, *values):
        return (1, *values) if name in self.fail else (0, *values)

    def cuGetErrorName(self, err):
        return 0, b"CUDA_ERROR_FAKE"

    def cuGetErrorString(self, err):
        return 0, b"a fake failure"

    def cuGraphGetNodes(self, graph, n):
        nodes = sorted(self.types)
        return 0, (nodes[:n] if n else []), len(nodes)

    def cuGraphNodeGetType(self, node):
        return 0, self.types[node]

    def cuGraphMemsetNodeGetParams(self, node):
        from types import SimpleNamespace

        return 0, SimpleNamespace(dst=4096 * node, elementSize=4, width=64, height=1, pitch=0, value=node)

    def cuGraphNodeGetDependencies(self, node, n):
        found = sorted(a for a, b in self.edges if b == node)
        return 0, (found if n else []), ([None] * len(found) if n else []), len(found)

    def cuGraphNodeGetDependentNodes(self, node, n):
        found = sorted(b for a, b in self.edges if a == node)
        return 0, (found if n else []), ([None] * len(found) if n else []), len(found)

    def cuGraphAddKernelNode(self, graph, before, n, params):
        node, self.next = self.next, self.next + 1
        self.types[node] = self.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
        self.edges |= {(b, node) for b in before}
        return self._ok("add_kernel", node)

    def cuGraphAddDependencies(self, graph, frm, to, data, n):
        if "add_edges" not in self.fail:
            self.edges |= set(zip(frm, to))
        return self._ok("add_edges")

    def cuGraphDestroyNode(self, node):
        if ("destroy_kernel" if node >= 100 else "destroy_memset") in self.fail:
            return (1,)
        del self.types[node]
        self.edges = {(a, b) for a, b in self.edges if node not in (a, b)}
        return (0,)


def test_memset_nodes_replaced_in_a_graph(monkeypatch):
    """executable._memsets_as_kernels on a fake graph 1 -> memset 2 -> 3,
    1 -> memset 4: each memset becomes a kernel node with its dependencies
    and dependents; where adding the dependents fails, the half-made node
    goes and the memsets stay (the graph as it was); where that undoing
    fails too, the error is raised (the graph must not run)."""
    import pytest

    from rlxc.runtime import driver_api
    from rlxc.runtime import executable as E
    from rlxc.runtime.driver_api import CudaError

    K, M = 0, 2

    def graph(fail=()):
        drv = _FakeGraphDriver({1: K, 2: M, 3: K, 4: M}, {(1, 2), (2, 3), (1, 4)}, fail)
        monkeypatch.setattr(E, "_driver", lambda: drv)
        monkeypatch.setattr(driver_api, "_driver", lambda: drv)
        return drv

    drv = graph()
    assert E._memsets_as_kernels("g", [2, 4], "fill16", "fill") == 2
    assert drv.types == {1: K, 3: K, 100: K, 101: K} and drv.edges == {(1, 100), (100, 3), (1, 101)}
    drv = graph(fail={"add_edges"})
    assert E._memsets_as_kernels("g", [2, 4], "fill16", "fill") == 0
    assert drv.types == {1: K, 2: M, 3: K, 4: M} and drv.edges == {(1, 2), (2, 3), (1, 4)}
    drv = graph(fail={"add_edges", "destroy_kernel"})
    with pytest.raises(CudaError, match="cuGraphAddDependencies"):
        E._memsets_as_kernels("g", [2, 4], "fill16", "fill")

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
    import pytest

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

    def fail(result, call):
        raise E.CudaError(f"{call} failed: code {result[0]}")

    monkeypatch.setattr(E, "check", fail)
    with pytest.raises(E.CudaError, match=r"cuStreamQuery \(waiting for the launch\) failed: code 700"):
        _waiter(_FakeDriver(busy=2, final=700))._wait()

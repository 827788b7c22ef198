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

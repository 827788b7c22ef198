"""The GPU tests' allowance for ill-conditioned outputs (`test_gpu.sensitivity`),
checked on the interpreter alone (no GPU needed)."""

from __future__ import annotations

import numpy as np

import rlxc
from test_gpu import sensitivity


def _norm_sums():
    g = rlxc.GraphBuilder()
    a, b = g.input("a", [1, 2, 1]), g.input("b", [1, 2, 1])
    s, out = g.fused_residual_rms_norm(a, b, g.param("gamma", [1]))
    return g.build([g.reduce_sum(out, axes=[1], keepdims=True), g.reduce_sum(s, axes=[1], keepdims=True)])


def test_sensitivity_of_terms_that_cancel():
    """Two rows of one element, rms-normalized (each about +-gamma) and
    summed: with opposite signs the sum is about 1e-6 gamma, and one unit in
    the last place of either term moves it by a few percent (what a GPU run
    found: 2.9% from f32 rsqrt); a random-graph test must allow that, and
    only that. Summed with one sign, or the residual sums themselves, the
    output moves by about one rounding."""
    rng = np.random.default_rng()
    m = _norm_sums()
    p = {"gamma": np.array([0.7], np.float32)}
    x = {"a": np.array([[[0.3], [-0.5]]], np.float32), "b": np.zeros((1, 2, 1), np.float32)}
    assert abs(float(rlxc.interpret(m, x, p)[0].ravel()[0])) < 1e-5
    moved = sensitivity(m, x, p, 0, rng)
    assert 0.01 < moved < 0.2, moved
    assert sensitivity(m, x, p, 1, rng) < 1e-5  # 0.3 - 0.5: no cancellation to speak of
    x = {"a": rng.uniform(1.0, 2.0, (1, 2, 1)).astype(np.float32), "b": np.zeros((1, 2, 1), np.float32)}
    assert sensitivity(m, x, p, 0, rng) < 1e-6


def test_sensitivity_of_a_softmax_is_a_rounding():
    """A well-conditioned output (softmax rows of random values) moves by
    about one rounding: the allowance adds nothing that would hide a wrong
    kernel."""
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    m = g.build([g.softmax(g.input("x", [64, 128]), axis=1)])
    x = {"x": rng.standard_normal((64, 128)).astype(np.float32)}
    assert sensitivity(m, x, {}, 0, rng) < 1e-6

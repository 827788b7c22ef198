"""The random-graph strategy itself: valid, printable, parseable, interpretable."""

import numpy as np
from hypothesis import given

import rlxc
from strategies import graphs, random_inputs


@given(graphs())
def test_random_graphs_verify_roundtrip_and_interpret(case):
    text = str(case.module)
    reparsed = rlxc.parse_module(text)
    assert str(reparsed) == text
    inputs, params = random_inputs(case.module, np.random.default_rng())
    outs = rlxc.interpret(case.module, inputs, params)
    outs2 = rlxc.interpret(reparsed, inputs, params)
    assert len(outs) == len(outs2) >= 1
    for a, b in zip(outs, outs2):
        np.testing.assert_array_equal(a, b)
        if a.dtype.kind == "f":
            assert np.isfinite(a).all(), case.ops


@given(graphs(dtypes=("f16", "bf16"), max_ops=6))
def test_random_low_precision_graphs_interpret(case):
    inputs, params = random_inputs(case.module, np.random.default_rng())
    for out in rlxc.interpret(case.module, inputs, params):
        assert out.shape is not None

"""The worked example of docs/writing-a-pass.md: its differential test, and a
check that the document shows the code that is actually tested."""

import re
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import rlxc
from rlxc.dialects import rlx
from strategies import graphs, random_inputs

ROOT = Path(__file__).resolve().parent.parent


@given(case=graphs(max_ops=6), exponent=st.sampled_from([2.0, 3.0, 0.5]))
def test_pow_to_mul_preserves_results(case, exponent):
    # Square (or not) one value of a random graph, then run the pass.
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 4])
    y = g.pow(g.abs(x), g.constant(np.float32(exponent)))
    module = g.build([y])
    after = rlxc.run_pipeline(module, "rlx-pow-to-mul")
    muls = sum(isinstance(op, rlx.MulOp) for op in after.walk())
    assert muls == (1 if exponent == 2.0 else 0)
    inputs, params = random_inputs(module, np.random.default_rng())
    (want,) = rlxc.interpret(module, inputs, params)
    (got,) = rlxc.interpret(after, inputs, params)
    np.testing.assert_allclose(got, want, rtol=2e-7)
    # And on random graphs without squares it changes nothing.
    untouched = rlxc.run_pipeline(case.module, "rlx-pow-to-mul")
    assert str(untouched) == str(case.module)


def test_document_shows_the_tested_code():
    doc = (ROOT / "docs" / "writing-a-pass.md").read_text()
    blocks = re.findall(r"```(?:python|mlir)\n(.*?)```", doc, flags=re.S)
    sources = [
        (ROOT / "rlxc" / "passes" / "pow_to_mul.py").read_text(),
        (ROOT / "filecheck" / "passes" / "pow-to-mul.mlir").read_text(),
        (ROOT / "tests" / "test_pow_to_mul.py").read_text(),
    ]
    for block in blocks:
        if block.startswith("# from "):
            continue
        assert any(block.strip() in s for s in sources), block[:200]

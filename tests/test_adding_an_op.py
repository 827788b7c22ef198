"""The worked example of docs/adding-an-op.md (rlx.softplus): the document
shows the code that is really there, and the op is right where the naive
formula fails."""

import re
from pathlib import Path

import numpy as np

import rlxc
from reference import softplus

ROOT = Path(__file__).resolve().parent.parent


def test_document_shows_the_code():
    doc = (ROOT / "docs" / "adding-an-op.md").read_text()
    blocks = re.findall(r"```(?:python|mlir)\n(.*?)```", doc, flags=re.S)
    sources = [
        (ROOT / p).read_text()
        for p in (
            "rlxc/dialects/rlx/elementwise.py",
            "rlxc/interp/rlx_numpy.py",
            "rlxc/interp/math_ref.py",
            "rlxc/frontends/builder.py",
            "filecheck/dialects/rlx/softplus.mlir",
            "filecheck/dialects/rlx/unary_invalid.mlir",
            "tests/reference.py",
        )
    ]
    assert len(blocks) >= 7
    for block in blocks:
        assert any(block.strip("\n") in s for s in sources), block[:200]


def test_softplus_where_the_naive_formula_overflows():
    x = np.concatenate([np.random.default_rng().normal(0, 30, 62), [-800.0, 800.0]]).astype(np.float32)
    g = rlxc.GraphBuilder()
    y = g.softplus(g.input("x", [64]))
    module = g.build([y])
    want = softplus(x.astype(np.float64))
    for pipeline in (None, "rlx-optimize"):
        m = module if pipeline is None else rlxc.run_pipeline(module, pipeline)
        (got,) = rlxc.interpret(m, {"x": x})
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-30)

"""rlx-raise-attention: attention as exporters write it (matmul, scale,
mask, softmax, matmul) becomes rlx.attention, and computes what the ONNX
model computes (ONNX Runtime on fresh random inputs, f32 tolerances scaled
by each output's size); what does not match the shape is left alone."""

from __future__ import annotations

import numpy as np
import pytest

import rlxc
from rlxc.passes.pipelines import run_pipeline

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from rlxc.frontends.onnx import from_onnx  # noqa: E402
from test_onnx_models import DIMS, TORCH_DIMS, _feeds, _load, _onnxruntime, _shapes  # noqa: E402

#: model -> (attention ops after raising, whether they are causal)
MODELS = {
    "bert_tiny": (2, False),
    "gpt2_block": (1, True),  # a constant tril select: the op's causal flag
    "torch_bert_tiny_ts": (2, False),
    "torch_bert_tiny_dynamo": (2, False),  # its scale is a param: q is scaled instead
    "torch_gpt2_tiny_ts": (2, False),  # the causal mask is folded into an additive mask
    "torch_gpt2_tiny_dynamo": (2, False),
}


def _names(module, name):
    return [o for o in module.walk() if o.name == name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exported_attention_is_raised_and_exact(name):
    count, causal = MODELS[name]
    model = _load(name)
    rng = np.random.default_rng()
    for dims in (DIMS.get(name) or TORCH_DIMS):
        shapes = _shapes(model, dims)
        module, params = from_onnx(model, shapes)
        raised = run_pipeline(module, "rlx-raise-attention,canonicalize,cse,dce")
        atts = _names(raised, "rlx.attention")
        assert len(atts) == count and not _names(raised, "rlx.softmax")
        assert all(("causal" in a.properties) == causal for a in atts)
        feeds = _feeds(name, model, shapes, rng)
        want = _onnxruntime(model, feeds)
        got = rlxc.interpret(raised, feeds, params)
        for g, w in zip(got, want):
            if w.dtype.kind != "f":
                continue
            scale = float(np.abs(w).max())
            np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=1e-5, atol=1e-5 * scale)
        # in the cuda pipeline the head transposes then fold into the op's layouts
        opt = run_pipeline(module, "rlx-optimize")
        assert all("q_layout" in a.properties and "k_layout" in a.properties for a in _names(opt, "rlx.attention"))


def _scores_graph(extra_use: bool = False, mask_dtype: str = "f32"):
    g = rlxc.GraphBuilder()
    q, kt, v = g.input("q", [2, 3, 5, 8]), g.input("kt", [2, 3, 8, 7]), g.input("v", [2, 3, 7, 4])
    m = g.input("m", [2, 1, 1, 7], mask_dtype)
    s = g.matmul(q, kt) * g.constant(0.25)
    s = s + (m if mask_dtype == "f32" else g.cast(m, "f32")) if mask_dtype == "f32" else s
    p = g.softmax(s)
    outs = [g.matmul(p, v)] + ([p] if extra_use else [])
    return g.build(outs)


def test_builder_graph_is_raised_with_its_scale_and_mask():
    module = _scores_graph()
    raised = run_pipeline(module, "rlx-raise-attention,canonicalize,cse,dce")
    (att,) = _names(raised, "rlx.attention")
    assert att.scale.value.data == 0.25 and att.mask is not None  # pyright: ignore[reportAttributeAccessIssue]
    rng = np.random.default_rng()
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in
             (("q", (2, 3, 5, 8)), ("kt", (2, 3, 8, 7)), ("v", (2, 3, 7, 4)), ("m", (2, 1, 1, 7)))}
    q, kt, v, m = (feeds[k].astype(np.float64) for k in ("q", "kt", "v", "m"))
    s = q @ kt * 0.25 + m
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    (got,) = rlxc.interpret(raised, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


def test_scores_used_elsewhere_are_not_raised():
    """The probabilities are also an output: they must be computed anyway."""
    raised = run_pipeline(_scores_graph(extra_use=True), "rlx-raise-attention")
    assert not _names(raised, "rlx.attention")

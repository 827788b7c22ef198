"""Models as ONNX Runtime's transformer optimizer leaves them
(tests/models/make_ort_optimized.py: the committed TorchScript exports of a
tiny BERT and GPT-2 with EmbedLayerNormalization, Attention,
SkipLayerNormalization, BiasGelu and FastGelu fused in), imported and run
against ONNX Runtime on fresh random token ids with right padding: f32
(1e-5 of the output's largest magnitude) and, converted to float16 by ONNX
Runtime's own converter (inputs and outputs kept f32), f16 (1e-2: four
layers of f16 rounding on both sides)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx_helpers import ort_run  # noqa: E402

import rlxc  # noqa: E402

MODELS = Path(__file__).resolve().parent / "models"
FUSED = {"ort_opt_bert_tiny.onnx": {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"},
         "ort_opt_gpt2_tiny.onnx": {"SkipLayerNormalization", "FastGelu"}}
BACKENDS = ["numpy", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not rlxc.cuda.is_available(),
                                                                                     reason="no NVIDIA GPU and driver")])]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_ort_optimized_model_matches_onnxruntime(name, dtype, backend):
    model = onnx.load(MODELS / name)
    assert {n.op_type for n in model.graph.node if n.domain == "com.microsoft"} == FUSED[name]
    if dtype == "f16":
        from onnxruntime.transformers.float16 import convert_float_to_float16

        model = convert_float_to_float16(model, keep_io_types=True)
    rng = np.random.default_rng()
    b, s = 3, 13
    mask = np.ones((b, s), np.int64)
    mask[1, 9:] = 0
    mask[2, 4:] = 0
    feeds = {"input_ids": rng.integers(0, 128, (b, s)).astype(np.int64), "attention_mask": mask}
    feeds = {i.name: feeds[i.name] for i in model.graph.input}
    module, params = rlxc.from_onnx(model, input_shapes={k: list(v.shape) for k, v in feeds.items()})
    got = rlxc.compile(module, backend, params=params).run(feeds)
    want = ort_run(model, feeds)
    tol = 1e-5 if dtype == "f32" else 1e-2
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol, atol=tol * np.abs(w).max())

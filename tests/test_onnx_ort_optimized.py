"""Models as ONNX Runtime's transformer optimizer leaves them
(tests/models/make_ort_optimized.py: the committed TorchScript exports of a
tiny BERT and GPT-2 with EmbedLayerNormalization, Attention,
SkipLayerNormalization, BiasGelu and FastGelu fused in), imported and run
against ONNX Runtime on fresh random token ids with right padding: f32
(1e-5 of the output's largest magnitude, 1e-4 on the GPU) and, converted to float16 by ONNX
Runtime's own converter (inputs and outputs kept f32), f16 (1e-2: four
layers of f16 rounding on both sides)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx_helpers import BACKENDS, assert_kernels_compile, ort_run  # noqa: E402

import rlxc  # noqa: E402

MODELS = Path(__file__).resolve().parent / "models"
FUSED = {"ort_opt_bert_tiny.onnx": {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"},
         "ort_opt_gpt2_tiny.onnx": {"SkipLayerNormalization", "FastGelu"}}


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
    tol = (1e-5 if backend == "numpy" else 1e-4) if dtype == "f32" else 1e-2
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol, atol=tol * np.abs(w).max())


def _feeds(model, rng):
    """Random inputs for a committed model: token ids below 100 (every
    vocabulary here is larger), masks of ones but a padded row, floats
    N(0, 1); symbolic batch 2, other symbolic extents 9."""
    feeds, shapes = {}, {}
    for i in model.graph.input:
        dims = [d.dim_value if d.HasField("dim_value") else {"batch": 2}.get(d.dim_param, 9) for d in i.type.tensor_type.shape.dim]
        et = i.type.tensor_type.elem_type
        if et in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
            a = np.ones(dims) if "mask" in i.name else rng.integers(0, 100, dims)
            if "mask" in i.name and a.ndim == 2:
                a[-1, dims[1] // 2:] = 0
            a = a.astype(np.int64 if et == onnx.TensorProto.INT64 else np.int32)
        else:
            a = rng.normal(0, 1, dims).astype(np.float16 if et == onnx.TensorProto.FLOAT16 else np.float32)
        feeds[i.name], shapes[i.name] = a, dims
    return feeds, shapes


SAVED = sorted(p.name for p in MODELS.glob("*.onnx"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", SAVED)
def test_models_saved_by_onnxruntime_import(name, backend, tmp_path):
    """Each committed model as ONNX Runtime saves it after its
    ORT_ENABLE_EXTENDED graph optimizations (SessionOptions.optimized_model_filepath):
    FusedConv (+ Relu, Clip), FusedGemm (+ Tanh), FusedMatMul (alpha,
    transposes), BiasGelu, FastGelu, SkipLayerNormalization where its
    rewrites put them; imported and run against ONNX Runtime (f32 1e-5 of
    the output's largest magnitude, the f16 MLP 2e-3)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp_path / name)
    ort.InferenceSession(str(MODELS / name), so, providers=["CPUExecutionProvider"])
    model = onnx.load(tmp_path / name)
    rng = np.random.default_rng()
    feeds, shapes = _feeds(model, rng)
    module, params = rlxc.from_onnx(model, input_shapes=shapes)
    got = rlxc.compile(module, backend, params=params).run(feeds)
    want = ort_run(model, feeds)
    tol = 2e-3 if "f16" in name else 1e-5 if backend == "numpy" else 1e-4  # (the GPU: another order, CUDA's exp/erf)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol, atol=tol * np.abs(w).max())


def test_saved_models_hold_the_fused_ops(tmp_path):
    """The fused ops the test above imports are in the saved models (so it
    tests them): FusedConv, FusedGemm, FusedMatMul at least once."""
    import onnxruntime as ort

    seen = set()
    for name in SAVED:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = str(tmp_path / name)
        ort.InferenceSession(str(MODELS / name), so, providers=["CPUExecutionProvider"])
        seen |= {n.op_type for n in onnx.load(tmp_path / name).graph.node if n.domain == "com.microsoft"}
    assert {"FusedConv", "FusedGemm", "FusedMatMul", "BiasGelu", "FastGelu"} <= seen


@pytest.mark.parametrize("name", ["ort_opt_bert_tiny.onnx", "ort_opt_gpt2_tiny.onnx", "saved:bert_tiny.onnx", "saved:resnet_tiny.onnx"])
def test_fused_models_compile_for_the_gpu(name, tmp_path):
    """Without a GPU: the contrib-op models (ORT's transformer optimizer's
    and ORT-saved ones with FusedMatMul, FusedGemm, FusedConv) through the
    CUDA pipeline, every generated kernel compiled by NVRTC for sm_90 with
    no spills."""
    if name.startswith("saved:"):
        import onnxruntime as ort

        name = name.removeprefix("saved:")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = str(tmp_path / name)
        ort.InferenceSession(str(MODELS / name), so, providers=["CPUExecutionProvider"])
        model = onnx.load(tmp_path / name)
    else:
        model = onnx.load(MODELS / name)
    _, shapes = _feeds(model, np.random.default_rng(0))
    module, _ = rlxc.from_onnx(model, input_shapes=shapes)
    assert_kernels_compile(module)

"""Whole models through the ONNX front end, against ONNX Runtime (CPU).

The models in tests/models/ are written by tests/models/make_models.py the
way exporters write such networks (a BERT encoder, a GPT-2 block, a ResNet,
a YOLO-style detector, a Keras/tf2onnx text CNN, a float16 MLP), plus any
torch_*.onnx files that benchmarks/export_models.py saved there from the
real PyTorch exporters. Each is imported with its symbolic dimensions bound
at two shapes, run on fresh random inputs on the numpy interpreter (and, on
a GPU machine, compiled for CUDA), and compared with ONNX Runtime.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import rlxc  # noqa: E402
from rlxc.frontends.onnx import from_onnx  # noqa: E402

MODELS = Path(__file__).resolve().parent / "models"

#: model -> the two bindings of its symbolic dimensions tested (by dim name).
DIMS = {
    "bert_tiny": [{"batch": 2, "seq": 16}, {"batch": 3, "seq": 33}],
    "gpt2_block": [{"batch": 2, "seq": 16}, {"batch": 1, "seq": 37}],
    "resnet_tiny": [{"batch": 2}, {"batch": 5}],
    "yolo_tiny": [{"batch": 2}, {"batch": 1}],
    "keras_textcnn": [{"batch": 2}, {"batch": 7}],
    "mlp_f16": [{"batch": 2}, {"batch": 9}],
}
#: Vocabulary sizes (token ids are drawn below them).
VOCAB = {"bert_tiny": 512, "keras_textcnn": 500}
#: Real-exporter models (benchmarks/export_models.py): same two bindings.
TORCH_DIMS = [{"batch": 2, "seq": 16}, {"batch": 1, "seq": 9}]
TORCH_VOCAB = 100  # the tiny configs' vocabularies are at least this large


def _model_names() -> list[str]:
    torch_models = sorted(p.stem for p in MODELS.glob("torch_*.onnx"))
    return list(DIMS) + torch_models


def _dims(name: str) -> list[dict[str, int]]:
    return DIMS.get(name, TORCH_DIMS)


def _load(name: str):
    return onnx.load(str(MODELS / f"{name}.onnx"))


def _graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _shapes(model, dims: dict[str, int]) -> dict[str, list[int]]:
    """Each input's shape: fixed dimensions as they are, symbolic ones bound by
    name ('batch', 'seq'; an exporter's other names by position: 0 is the
    batch, 1 the sequence)."""
    out = {}
    for i in _graph_inputs(model):
        shape = []
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param in dims:
                shape.append(dims[d.dim_param])
            else:
                shape.append(dims["batch"] if k == 0 else dims["seq"])
        out[i.name] = shape
    return out


def _feeds(name: str, model, shapes: dict[str, list[int]], rng) -> dict[str, np.ndarray]:
    """Fresh random inputs: token ids within the vocabulary, attention masks of
    ones with zeros (never a whole row), images in [0, 1), else normal."""
    feeds = {}
    for i in _graph_inputs(model):
        shape = shapes[i.name]
        np_type = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        if "mask" in i.name:
            m = np.ones(shape, np_type)
            for row in range(shape[0]):  # a padded tail and a few holes, the first token kept
                m[row, max(1, shape[1] - row - 2):] = 0
                m[row, rng.integers(1, shape[1], size=shape[1] // 5)] = 0
            feeds[i.name] = m
        elif np.issubdtype(np_type, np.integer):
            feeds[i.name] = rng.integers(0, VOCAB.get(name, TORCH_VOCAB), size=shape).astype(np_type)
        elif name.startswith("yolo") or "pixel" in i.name:
            feeds[i.name] = rng.random(shape).astype(np_type)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np_type)
    return feeds


def _onnxruntime(model, feeds) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _compare(got, want, model, rtol: float, atol_scale: float) -> None:
    """Elementwise, with the absolute tolerance relative to each output's scale."""
    assert len(got) == len(want)
    names = [o.name for o in model.graph.output]
    for name, g, w in zip(names, got, want):
        g = np.asarray(g)
        assert g.shape == w.shape, f"output '{name}': shape {g.shape}, ONNX Runtime gives {w.shape}"
        assert g.dtype == w.dtype, f"output '{name}': dtype {g.dtype}, ONNX Runtime gives {w.dtype}"
        if w.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=f"output '{name}'")
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        scale = max(float(np.abs(w64).max()), 1e-30)
        np.testing.assert_allclose(g64, w64, rtol=rtol, atol=atol_scale * scale, err_msg=f"output '{name}'")


#: (rtol, atol as a fraction of the output's largest magnitude), by the
#: model's output type. f32: the interpreter rounds float64 results to f32
#: once per op, ONNX Runtime computes in f32; their differences are a few
#: f32 roundings through a dozen layers. f16: the interpreter rounds every
#: f16 op's result to f16 (each rounding up to 2^-11 relative), while ONNX
#: Runtime's CPU kernels compute some f16 ops (MatMul, Add) in f32 and round
#: once, so intermediates may differ by an f16 ulp, which the next MatMul and
#: the LayerNorm spread over the row: looser, about 10 f16 ulps.
TOL = {"f32": (1e-4, 1e-5), "f16": (1e-2, 5e-3)}
#: On the GPU the kernels reduce in another order than ONNX Runtime and use
#: CUDA's own erf/tanh/exp (a few f32 ulps): 10x looser than the interpreter.
GPU_TOL = {"f32": (1e-3, 1e-4), "f16": (1e-2, 5e-3)}


def _tol(model, table):
    f16 = any(o.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16 for o in model.graph.output)
    return table["f16" if f16 else "f32"]


CASES = [pytest.param(n, k, id=f"{n}-{'-'.join(f'{d}{v}' for d, v in dims.items())}")
         for n in _model_names() for k, dims in enumerate(_dims(n))]  # fmt: skip


def _import_and_feeds(name: str, k: int):
    model = _load(name)
    shapes = _shapes(model, _dims(name)[k])
    module, params = from_onnx(model, shapes)
    feeds = _feeds(name, model, shapes, np.random.default_rng())
    return model, module, params, feeds


@pytest.mark.parametrize("name,k", CASES)
def test_model_on_interpreter_matches_onnxruntime(name, k):
    model, module, params, feeds = _import_and_feeds(name, k)
    got = rlxc.interpret(module, feeds, params)
    _compare(got, _onnxruntime(model, feeds), model, *_tol(model, TOL))


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("name,k", CASES)
def test_model_on_gpu_matches_onnxruntime(name, k):
    model, module, params, feeds = _import_and_feeds(name, k)
    exe = rlxc.compile(module, target="cuda", params=params)
    got = exe.run(feeds)
    _compare(got, _onnxruntime(model, feeds), model, *_tol(model, GPU_TOL))
    again = exe.run(feeds)  # the graph replay gives the same numbers
    for a, b in zip(got, again):
        np.testing.assert_array_equal(a, b)


def test_models_are_what_make_models_writes():
    """The committed .onnx files are exactly make_models.py's output."""
    r = subprocess.run([sys.executable, str(MODELS / "make_models.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

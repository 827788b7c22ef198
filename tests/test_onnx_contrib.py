"""ONNX Runtime's fused contrib ops (com.microsoft Gelu, FastGelu, BiasGelu,
QuickGelu, BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization;
ai.onnx SimplifiedLayerNormalization) against float64 numpy references of
their definitions and against ONNX Runtime (where its CPU provider has the
op), on fresh random inputs, in f32 and f16. Tolerances: f32 1e-5 relative
to the output's largest magnitude; f16 the type's rounding (about 1e-3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from onnx_helpers import ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError  # noqa: E402

MS = "com.microsoft"
CODE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
NPT = {"f32": np.float32, "f16": np.float16}
TOL = {"f32": 1e-5, "f16": 2e-3}
_erf = np.vectorize(math.erf)


def _model(op, shapes, d, outs, domain=MS, **attrs):
    """One `op` node of inputs i0.. (`shapes`; None: absent) and outputs `outs` (names; "" absent)."""
    names = ["" if s is None else f"i{k}" for k, s in enumerate(shapes)]
    ins = [helper.make_tensor_value_info(f"i{k}", CODE[d], s) for k, s in enumerate(shapes) if s is not None]
    vis = [helper.make_tensor_value_info(o, TensorProto.FLOAT if o in ("mean", "inv") else CODE[d], None) for o in outs if o]
    g = helper.make_graph([helper.make_node(op, names, outs, domain=domain, name="n", **attrs)], "g", ins, vis)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def _feeds(rng, shapes, d, scale=1.5):
    return {f"i{k}": (rng.normal(0, scale, s)).astype(NPT[d]) for k, s in enumerate(shapes) if s is not None}


def _run(model, feeds):
    module, params = rlxc.from_onnx(model)
    return rlxc.compile(module, "numpy", params=params).run(feeds)


def _close(got, want, d):
    w = np.asarray(want, np.float64)
    tol = TOL[d] * max(1.0, np.abs(w).max())
    np.testing.assert_allclose(np.asarray(got, np.float64), w, rtol=TOL[d], atol=tol)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("op", ["Gelu", "BiasGelu", "FastGelu", "FastGeluNoBias", "QuickGelu"])
def test_gelus(op, d):
    rng = np.random.default_rng()
    shapes = [[3, 5, 16]] if op in ("Gelu", "QuickGelu") else [[3, 5, 16], None if op == "FastGeluNoBias" else [16]]
    attrs = {"alpha": 1.3} if op == "QuickGelu" else {}
    model = _model(op.replace("NoBias", ""), shapes, d, ["y"], **attrs)
    feeds = _feeds(rng, shapes, d, 2.0)
    x = feeds["i0"].astype(np.float64) + (feeds["i1"].astype(np.float64) if "i1" in feeds else 0)
    if d == "f16" and "i1" in feeds:
        x = x.astype(np.float16).astype(np.float64)  # the input plus the bias, rounded to f16 as a model's Add is
    want = {"Gelu": _gelu, "BiasGelu": _gelu, "FastGelu": _gelu_tanh, "FastGeluNoBias": _gelu_tanh,
            "QuickGelu": lambda v: v / (1 + np.exp(-1.3 * v))}[op](x)
    got = _run(model, feeds)[0]
    _close(got, want, d)
    _close(got, ort_run(model, feeds)[0], d)


@pytest.mark.parametrize("d", ["f32", "f16"])
def test_bias_add(d):
    """X + bias + skip (ONNX Runtime has no CPU kernel: float64 numpy only)."""
    rng = np.random.default_rng()
    shapes = [[2, 9, 8], [8], [2, 9, 8]]
    feeds = _feeds(rng, shapes, d)
    want = feeds["i0"].astype(np.float64) + feeds["i1"] + feeds["i2"].astype(np.float64)
    _close(_run(_model("BiasAdd", shapes, d, ["y"]), feeds)[0], want, d)


def _norm_ref(s, gamma, beta, eps, rms):
    if rms:
        return s / np.sqrt((s * s).mean(-1, keepdims=True) + eps) * gamma
    m = s.mean(-1, keepdims=True)
    v = ((s - m) ** 2).mean(-1, keepdims=True)
    return (s - m) / np.sqrt(v + eps) * gamma + beta


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("form", ["bias", "no-bias", "broadcast-skip"])
def test_skip_layer_norms(rms, form, d):
    """SkipLayerNormalization / SkipSimplifiedLayerNormalization of input +
    skip (+ bias): the norm and the sum (input_skip_bias_sum) against float64
    numpy and ONNX Runtime; f32 SkipLayerNormalization also its mean and
    inv_std_var. Hidden 384, a row count that is not a power of two."""
    rng = np.random.default_rng()
    b, s, h = 2, 7, 384
    skip = [1, s, h] if form == "broadcast-skip" else [b, s, h]
    shapes = [[b, s, h], skip, [h]] + ([] if rms else [[h]]) + ([[h]] if form == "bias" else [])
    op = "SkipSimplifiedLayerNormalization" if rms else "SkipLayerNormalization"
    stats = d == "f32" and not rms
    outs = ["y", "mean" if stats else "", "inv" if stats else "", "sum"]
    model = _model(op, shapes, d, outs, epsilon=1e-6)
    feeds = _feeds(rng, shapes, d)
    f = {k: v.astype(np.float64) for k, v in feeds.items()}
    total = f["i0"] + f["i1"] + (f[f"i{len(shapes) - 1}"] if form == "bias" else 0)
    gamma, beta = f["i2"], (0 if rms else f["i3"])
    got = _run(model, feeds)
    want = ort_run(model, feeds)
    _close(got[0], _norm_ref(total, gamma, beta, 1e-6, rms), d)
    _close(got[-1], total, d)
    if stats:
        _close(got[1], total.mean(-1, keepdims=True), d)
        _close(got[2], 1 / np.sqrt(total.var(-1, keepdims=True) + 1e-6), d)
    for g_, w_ in zip(got, want):
        _close(g_, w_, d)


@pytest.mark.parametrize("d", ["f32", "f16"])
def test_simplified_layer_norm(d):
    """ai.onnx SimplifiedLayerNormalization (ONNX Runtime's RMS norm) over hidden 768."""
    rng = np.random.default_rng()
    shapes = [[3, 5, 768], [768]]
    model = _model("SimplifiedLayerNormalization", shapes, d, ["y"], domain="", epsilon=1e-6)
    feeds = _feeds(rng, shapes, d)
    got = _run(model, feeds)[0]
    _close(got, _norm_ref(feeds["i0"].astype(np.float64), feeds["i1"].astype(np.float64), 0, 1e-6, True), d)
    _close(got, ort_run(model, feeds)[0], d)


def test_contrib_errors_name_the_node():
    """A skip of another hidden size, and the simplified norm's statistics outputs."""
    with pytest.raises(OnnxImportError, match="SkipLayerNormalization node 'n'.*skip \\[2, 3, 5\\]"):
        rlxc.from_onnx(_model("SkipLayerNormalization", [[2, 3, 4], [2, 3, 5], [4], [4]], "f32", ["y"]))
    with pytest.raises(OnnxImportError, match="SkipSimplifiedLayerNormalization node 'n'.*the mean and inv_std_var outputs"):
        rlxc.from_onnx(_model("SkipSimplifiedLayerNormalization", [[2, 3, 4], [2, 3, 4], [4]], "f32", ["y", "", "inv"]))

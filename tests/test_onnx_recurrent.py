"""ONNX RNN, GRU and LSTM (rlxc/frontends/onnx/recurrent.py: unrolled over
the static sequence) against ONNX Runtime on fresh random weights and
inputs: every direction and layout, the optional inputs, sequence_lens
(known at import, or a runtime input),
clip, the activation table with its alphas and betas, GRU's
linear_before_reset, LSTM's peepholes and input_forget; f16/bf16 models;
the import errors; the lowered kernels compiled by NVRTC; and a CUDA twin
on the GPU machine. ONNX Runtime's CPU kernels take layout 0 only, so a
layout-1 model is checked against its layout-0 twin on transposed data."""

import copy

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_helpers import make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ONNX_TYPE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}


def _round(a: np.ndarray, dtype: str) -> np.ndarray:
    """f32 values rounded to `dtype` (still f32)."""
    if dtype == "f16":
        return a.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        from rlxc.values import round_bf16

        return round_bf16(a)
    return a


def _model(op, steps, batch, inputs, hidden, rng, direction="forward", layout=0, bias=True, h0=True, c0=True,
           peep=False, lens=None, outputs=("Y", "Y_h", "Y_c"), dtype="f32", lens_input=False, **attrs):
    """(model, feeds, f32 reference model, f32 reference feeds): the op over
    random weights (initializers) and inputs, values rounded to `dtype`."""
    nd = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    arrays = {"W": (nd, g * hidden, inputs), "R": (nd, g * hidden, hidden)}
    if bias:
        arrays["B"] = (nd, 2 * g * hidden)
    if op == "LSTM" and peep:
        arrays["P"] = (nd, 3 * hidden)
    weights = {k: _round((rng.standard_normal(s) * 0.5).astype(np.float32), dtype) for k, s in arrays.items()}
    xs, hs = ([batch, steps, inputs], [batch, nd, hidden]) if layout else ([steps, batch, inputs], [nd, batch, hidden])
    feeds = {"X": _round(rng.standard_normal(xs).astype(np.float32), dtype)}
    names = ["X", "W", "R", "B" if bias else "", "L" if lens is not None else "", "H0" if h0 else ""]
    if h0:
        feeds["H0"] = _round(rng.standard_normal(hs).astype(np.float32), dtype)
    if op == "LSTM":
        names += ["C0" if c0 else "", "P" if peep else ""]
        if c0:
            feeds["C0"] = _round(rng.standard_normal(hs).astype(np.float32), dtype)
    while names[-1] == "":
        names.pop()
    outs = [o for o in outputs if op == "LSTM" or o != "Y_c"]

    def build(d, lay, fd):
        t = ONNX_TYPE[d]
        shapes = {"X": xs, "H0": hs, "C0": hs} if lay == layout else {
            k: [v[1], v[0], *v[2:]] for k, v in {"X": xs, "H0": hs, "C0": hs}.items()}
        ins = [helper.make_tensor_value_info(k, t, shapes[k]) for k in fd]
        inits = [numpy_helper.from_array(v.astype(np.float16) if d == "f16" else v, k) for k, v in weights.items()]
        if d == "bf16":
            inits = [helper.make_tensor(k, t, v.shape, v.ravel().tolist()) for k, v in weights.items()]
        if lens is not None:
            if lens_input:
                ins.append(helper.make_tensor_value_info("L", TensorProto.INT32, [batch]))
            else:
                inits.append(numpy_helper.from_array(np.array(lens, np.int32), "L"))
        node = helper.make_node(op, names, outs, hidden_size=hidden, direction=direction, layout=lay, **attrs)
        go = [helper.make_tensor_value_info(o, t, None) for o in outs if o]
        return make_model([node], ins, go, inits, opset=14)

    ref_feeds = {k: np.ascontiguousarray(np.swapaxes(v, 0, 1)) if layout else v for k, v in feeds.items()}
    typed = {k: v.astype(np.float16) if dtype == "f16" else v for k, v in feeds.items()}  # bf16: f32 carriers
    if lens_input:  # the lengths a runtime input
        ref_feeds["L"] = typed["L"] = np.array(lens, np.int32)
    return build(dtype, layout, feeds), typed, build("f32", 0, feeds), ref_feeds


def _reference(op, ref_model, ref_feeds, layout, outputs):
    """ONNX Runtime's outputs of the layout-0 f32 twin, in the model's layout."""
    want = ort_run(ref_model, ref_feeds)
    names = [o for o in outputs if o and (op == "LSTM" or o != "Y_c")]
    if layout:
        want = [np.transpose(w, (2, 0, 1, 3)) if n == "Y" else np.swapaxes(w, 0, 1) for w, n in zip(want, names)]
    return want


def _as_f32(a):
    a = np.asarray(a)
    if a.dtype == np.uint16:  # bf16 as raw words
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


CONFIGS = [
    *({"direction": d, "layout": lay} for d in ("forward", "reverse", "bidirectional") for lay in (0, 1)),
    {"bias": False, "h0": False, "c0": False},
    *({"direction": d, "lens": [5, 3, 1, 4]} for d in ("forward", "reverse", "bidirectional")),
    {"direction": "bidirectional", "layout": 1, "lens": [2, 5, 5, 3]},
    *({"direction": d, "lens": [4, 5, 1, 3], "lens_input": True} for d in ("forward", "reverse", "bidirectional")),
    {"direction": "bidirectional", "layout": 1, "lens": [5, 5, 5, 5], "lens_input": True},
    {"clip": 0.6},
    {"direction": "bidirectional", "clip": 0.4, "lens": [4, 5, 2, 5]},
    {"outputs": ("", "Y_h", "Y_c")},
]
ACTIVATIONS = {
    "RNN": [["Relu"], ["LeakyRelu"], ["Affine"], ["ScaledTanh"], ["HardSigmoid"], ["Elu"], ["Softsign"],
            ["Softplus"], ["ThresholdedRelu"], ["Sigmoid"]],
    "GRU": [["HardSigmoid", "Softsign"], ["Sigmoid", "Relu"], ["Affine", "ScaledTanh", "Elu", "Tanh"]],
    "LSTM": [["HardSigmoid", "Tanh", "Softsign"], ["Sigmoid", "Elu", "Affine"],
             ["Sigmoid", "Tanh", "Tanh", "LeakyRelu", "ScaledTanh", "HardSigmoid"]],
}


def _check(op, dtype="f32", target="numpy", steps=5, batch=4, inputs=3, hidden=6, **cfg):
    rng = np.random.default_rng()
    outputs = cfg.pop("outputs", ("Y", "Y_h", "Y_c"))
    model, feeds, ref_model, ref_feeds = _model(op, steps, batch, inputs, hidden, rng, outputs=outputs,
                                                dtype=dtype, **cfg)
    want = _reference(op, ref_model, ref_feeds, cfg.get("layout", 0), outputs)
    module, params = from_onnx(model)
    if target == "numpy":
        got = rlxc.interpret(module, feeds, params)
    else:
        got = rlxc.compile(module, target, params=params).run(feeds)
    assert len(got) == len(want)
    # ‖got - want‖ / ‖want‖ (the device tool's METHOD.md): f32 arithmetic in another order (unbounded
    # activations such as Affine let the state grow and the rounding with it), and for f16/bf16 the
    # outputs' one rounding of the f32 result
    tol = {"f32": 1e-5, "f16": 1e-3, "bf16": 8e-3}[dtype]
    for g_, w in zip(got, want):
        g_ = _as_f32(g_).astype(np.float64)
        assert g_.shape == w.shape and np.isfinite(g_).all()
        assert np.linalg.norm(g_ - w) <= tol * np.linalg.norm(w), (np.linalg.norm(g_ - w) / np.linalg.norm(w))


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_recurrent_matches_onnxruntime(op, cfg):
    _check(op, **copy.deepcopy(cfg))


@pytest.mark.parametrize("op,acts", [(op, a) for op, lists in ACTIVATIONS.items() for a in lists])
def test_recurrent_activations_match_onnxruntime(op, acts):
    """The activation table, alphas and betas consumed in order (a list for
    each direction where it has twice the functions)."""
    direction = "bidirectional" if len(acts) == 2 * {"RNN": 1, "GRU": 2, "LSTM": 3}[op] else "forward"
    _check(op, direction=direction, activations=acts, activation_alpha=[0.3, 0.7, 1.3, 0.2],
           activation_beta=[0.2, 0.4, 0.9])


@pytest.mark.parametrize("cfg", [{}, {"direction": "bidirectional", "lens": [2, 5, 3, 5]}])
def test_gru_linear_before_reset(cfg):
    _check("GRU", linear_before_reset=1, **cfg)


@pytest.mark.parametrize("cfg", [{"peep": True}, {"peep": True, "direction": "bidirectional", "layout": 1},
                                 {"input_forget": 1}, {"input_forget": 1, "peep": True, "clip": 0.5}])
def test_lstm_peepholes_and_input_forget(cfg):
    _check("LSTM", **cfg)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_recurrent_16_bit_models(op, dtype):
    """An f16/bf16 model runs its recurrence in f32 and rounds its outputs
    once: within the output type's rounding of the f32 result on the same
    (rounded) weights and inputs."""
    _check(op, dtype=dtype, direction="bidirectional", steps=7)


def test_recurrent_import_errors():
    rng = np.random.default_rng()
    model, *_ = _model("RNN", 5, 4, 3, 6, rng, activations=["Gelu"])
    with pytest.raises(OnnxImportError, match="RNN node .*activation 'Gelu' is not supported"):
        from_onnx(model)
    model, *_ = _model("GRU", 5, 4, 3, 6, rng, activations=["Sigmoid", "Tanh", "Tanh"])
    with pytest.raises(OnnxImportError, match="GRU node .*3 activations for 1 direction"):
        from_onnx(model)
    model, *_ = _model("GRU", 5, 4, 3, 6, rng, lens=[5, 3, 9, 4])
    with pytest.raises(OnnxImportError, match=r"sequence_lens \[5, 3, 9, 4\]"):
        from_onnx(model)


def test_recurrent_kernels_compile():
    """The lowered LSTM and GRU (bidirectional, sequence_lens, peepholes):
    every generated kernel compiles with NVRTC for sm_90 (no GPU needed)."""
    from test_codegen import compile_all

    rng = np.random.default_rng()
    for op, extra in (("LSTM", {"peep": True}), ("GRU", {"linear_before_reset": 1})):
        model, *_ = _model(op, 6, 3, 5, 8, rng, direction="bidirectional", lens=[6, 2, 4], **extra)
        module, _ = from_onnx(model)
        lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}")
        assert compile_all(lowered, "sm_90") > 0


def test_recurrent_kernels_do_not_grow_with_the_sequence():
    """Each step reads its input projections by a gather of constant rows
    (a slice would bake its offset into a kernel of its own): the lowered
    module has the same kernels at 6 steps as at 24, only more launches."""
    rng = np.random.default_rng()
    counts = []
    for steps in (6, 24):
        model, *_ = _model("LSTM", steps, 3, 5, 8, rng, direction="bidirectional", lens=[steps, 2, 4])
        lowered = rlxc.run_pipeline(from_onnx(model)[0], "rlx-cuda{arch=sm_90}")
        kernels = {op.source.data for op in lowered.ops if op.name == "rlx_cuda.kernel"}
        launches = sum(1 for op in lowered.walk() if op.name in ("rlx_cuda.launch", "rlx_cuda.gemm"))
        counts.append((len(kernels), launches))
    assert counts[0][0] == counts[1][0], counts
    assert counts[1][1] > 3 * counts[0][1], counts


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("op,cfg", [
    ("RNN", {"direction": "bidirectional", "lens": [5, 3, 1, 4]}),
    ("GRU", {"direction": "reverse", "layout": 1, "linear_before_reset": 1}),
    ("LSTM", {"direction": "bidirectional", "peep": True, "lens": [2, 5, 5, 3], "clip": 0.5}),
    ("GRU", {"direction": "bidirectional", "lens": [4, 5, 1, 3], "lens_input": True}),
    ("LSTM", {"dtype": "f16", "steps": 16, "batch": 8, "inputs": 64, "hidden": 128}),
    ("GRU", {"dtype": "bf16", "steps": 16, "batch": 8, "inputs": 64, "hidden": 128}),
])
def test_recurrent_on_cuda_matches_onnxruntime(op, cfg):
    _check(op, target="cuda", **copy.deepcopy(cfg))

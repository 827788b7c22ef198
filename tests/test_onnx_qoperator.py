"""ONNX Runtime's quantized contrib ops (com.microsoft: QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool,
QLinearConcat, QLinearSoftmax, QGemm) against ONNX Runtime itself on fresh
random inputs: each op between QuantizeLinear and DequantizeLinear, then a
CNN as `quantize_static(..., quant_format=QuantFormat.QOperator)` writes it.

Tolerance: ONNX Runtime computes several of these ops through lookup tables
of the 256 inputs or scale ratios, in f32 as rlxc does, but in another
order; an output within f32's rounding of a half step may round the other
way. So each output is at most one step (its scale) from ORT's, and such
outputs are rare (2% at most, or one of an output of under 50 values)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx_helpers import BACKENDS, make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError  # noqa: E402

MS = "com.microsoft"
NP = {"UINT8": np.uint8, "INT8": np.int8}


def _init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _ms_model(nodes, ins, outs, inits, opset=17):
    return make_model(nodes, ins, outs, inits, opset=opset, domains={MS: 1})


def _vi(name, shape, code=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, code, list(shape))


def _quant(rng, name, qtype, lo=0.01, hi=0.05):
    """A random scale and zero point (initializers `<name>_s`, `<name>_z`)."""
    z = rng.integers(100, 156) if qtype == "UINT8" else rng.integers(-28, 28)
    return [_init(f"{name}_s", np.float32(rng.uniform(lo, hi))), _init(f"{name}_z", NP[qtype](z))]


def _compare(model, feeds, y_scales, backend="numpy", most=1, share=0.02):
    """rlxc's outputs against ORT's: at most `most` steps of each output's
    scale apart, and rarely (`share` of the values, or one)."""
    module, params = rlxc.from_onnx(model)
    got = rlxc.compile(module, backend, params=params).run(feeds)
    want = ort_run(model, feeds)
    for g, w, s in zip(got, want, y_scales):
        assert g.shape == w.shape
        steps = np.abs(g.astype(np.float64) - w) / s
        assert steps.max() <= most + 1e-4, steps.max()
        assert (steps > 0.5).sum() <= max(1, share * steps.size)  # rare, or one of a small output
        assert len(np.unique(w)) > 4  # not all saturated
    return module


def _single(op, xs, qtype, attrs=None, out_shape=None, const_b=None, rng=None, y_range=(0.02, 0.08), extra=()):
    """x<i> -> QuantizeLinear -> `op` (com.microsoft) -> DequantizeLinear -> y;
    `const_b`: B a quantized initializer instead of a second input."""
    nodes, inits, ins, qins = [], [], [], []
    for i, x in enumerate(xs):
        inits += _quant(rng, f"x{i}", qtype)
        if const_b is not None and i == 1:
            inits.append(_init("x1_q", const_b))
        else:
            ins.append(_vi(f"x{i}", x.shape))
            nodes.append(helper.make_node("QuantizeLinear", [f"x{i}", f"x{i}_s", f"x{i}_z"], [f"x{i}_q"]))
        qins += [f"x{i}_q", f"x{i}_s", f"x{i}_z"]
    inits += _quant(rng, "y", qtype, *y_range)
    if op == "QLinearConcat":
        qins = ["y_s", "y_z", *qins]
    else:
        qins += ["y_s", "y_z"]
    nodes.append(helper.make_node(op, [*qins, *extra], ["y_q"], domain=MS, name="qop", **(attrs or {})))
    nodes.append(helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"]))
    model = _ms_model(nodes, ins, [_vi("y", out_shape or xs[0].shape)], inits)
    ys = float(numpy_helper.to_array(next(t for t in inits if t.name == "y_s")))
    feeds = {f"x{i}": x for i, x in enumerate(xs) if not (const_b is not None and i == 1)}
    return model, feeds, ys


@pytest.mark.parametrize("qtype", list(NP))
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_add_mul(op, qtype):
    """Broadcast [2, 3, 4, 5] by [5], and by a quantized initializer of [4, 1]."""
    rng = np.random.default_rng()
    a = rng.normal(0, 1.5, (2, 3, 4, 5)).astype(np.float32)
    model, feeds, ys = _single(op, [a, rng.normal(0, 1.5, 5).astype(np.float32)], qtype, rng=rng,
                               y_range=(0.02, 0.08) if op == "QLinearAdd" else (0.01, 0.04))
    _compare(model, feeds, [ys])
    b = rng.integers(-100, 100, (4, 1)).astype(NP[qtype]) if qtype == "INT8" else rng.integers(30, 220, (4, 1)).astype(np.uint8)
    model, feeds, ys = _single(op, [a, np.zeros((4, 1), np.float32)], qtype, rng=rng, const_b=b)
    _compare(model, feeds, [ys])


@pytest.mark.parametrize("qtype", list(NP))
@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
def test_qlinear_sigmoid_leaky_relu(op, qtype):
    rng = np.random.default_rng()
    x = rng.normal(0, 2, (3, 7, 11)).astype(np.float32)
    attrs = {"alpha": 0.2} if op == "QLinearLeakyRelu" else {}
    model, feeds, ys = _single(op, [x], qtype, attrs, rng=rng, y_range=(0.003, 0.008) if op == "QLinearSigmoid" else (0.02, 0.05))
    _compare(model, feeds, [ys])


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("qtype", list(NP))
def test_qlinear_pools(qtype, channels_last):
    """QLinearAveragePool (3 x 3, stride 2, padded, the padding not counted)
    and QLinearGlobalAveragePool, NCHW and NHWC."""
    rng = np.random.default_rng()
    shape = (2, 9, 11, 6) if channels_last else (2, 6, 9, 11)
    x = rng.normal(0, 1.5, shape).astype(np.float32)
    out = (2, 5, 6, 6) if channels_last else (2, 6, 5, 6)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "channels_last": channels_last}
    model, feeds, ys = _single("QLinearAveragePool", [x], qtype, attrs, out, rng=rng, y_range=(0.005, 0.02))
    _compare(model, feeds, [ys])
    # 12 means of 99 values: channel offsets of about 0.3 apart, read in steps of 0.01 (none saturates)
    x = (rng.normal(0, 1.5, shape) + rng.normal(0, 0.3, (1, 1, 1, 6) if channels_last else (1, 6, 1, 1))).astype(np.float32)
    out = (2, 1, 1, 6) if channels_last else (2, 6, 1, 1)
    model, feeds, ys = _single("QLinearGlobalAveragePool", [x], qtype, {"channels_last": channels_last}, out, rng=rng,
                               y_range=(0.008, 0.012))
    _compare(model, feeds, [ys])


def test_qlinear_concat():
    """Three inputs of their own scales and zero points, along the last axis."""
    rng = np.random.default_rng()
    xs = [rng.normal(0, 1, (4, 3, n)).astype(np.float32) for n in (5, 2, 7)]
    model, feeds, ys = _single("QLinearConcat", xs, "UINT8", {"axis": -1}, (4, 3, 14), rng=rng)
    _compare(model, feeds, [ys])


@pytest.mark.parametrize("opset", [12, 13])
def test_qlinear_softmax(opset):
    """Opset 13's softmax along axis 1 of [4, 6, 10]; opset 12's over the
    input coerced to [4, 60] at axis 1. The output scale 1/256, as
    ONNX Runtime's quantizer gives it."""
    rng = np.random.default_rng()
    x = rng.normal(0, 3, (4, 6, 10)).astype(np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
             helper.make_node("QLinearSoftmax", ["xq", "x_s", "x_z", "y_s", "y_z"], ["yq"], domain=MS, axis=1, opset=opset),
             helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"])]
    inits = [_init("x_s", np.float32(0.05)), _init("x_z", np.uint8(128)), _init("y_s", np.float32(1 / 256)), _init("y_z", np.uint8(0))]
    model = _ms_model(nodes, [_vi("x", x.shape)], [_vi("y", x.shape)], inits)
    _compare(model, {"x": x}, [1 / 256])


def _qgemm_model(rng, m, k, nn, trans_a, quantized_y, alpha=1.0):
    a_shape = (k, m) if trans_a else (m, k)
    w = rng.integers(-127, 128, (nn, k)).astype(np.int8)  # transB: [N, K]
    sb = rng.uniform(0.002, 0.006, nn).astype(np.float32)
    inits = [_init("a_s", np.float32(0.03)), _init("a_z", np.uint8(120)), _init("w", w), _init("b_s", sb),
             _init("b_z", np.zeros(nn, np.int8)), _init("c", rng.integers(-3000, 3000, nn).astype(np.int32))]
    ins = ["aq", "a_s", "a_z", "w", "b_s", "b_z", "c"]
    if quantized_y:
        inits += [_init("y_s", np.float32(0.1)), _init("y_z", np.uint8(128))]
        ins += ["y_s", "y_z"]
    nodes = [helper.make_node("QuantizeLinear", ["a", "a_s", "a_z"], ["aq"]),
             helper.make_node("QGemm", ins, ["yq" if quantized_y else "y"], domain=MS, transA=int(trans_a), transB=1, alpha=alpha)]
    if quantized_y:
        nodes.append(helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]))
    return _ms_model(nodes, [_vi("a", a_shape)], [_vi("y", (m, nn))], inits), a_shape


@pytest.mark.parametrize("trans_a", [False, True])
def test_qgemm(trans_a):
    """QGemm: uint8 A (transposed or not), int8 B stored transposed with a
    scale per column, an int32 C; quantized output (alpha 0.5: C and the
    product both scaled by it), and f32 output without y_scale."""
    rng = np.random.default_rng()
    m, k, nn = 9, 700, 12
    model, a_shape = _qgemm_model(rng, m, k, nn, trans_a, True, alpha=0.5)
    a = rng.normal(0, 2, a_shape).astype(np.float32)
    _compare(model, {"a": a}, [0.1])
    model, _ = _qgemm_model(rng, m, k, nn, trans_a, False)
    module, params = rlxc.from_onnx(model)
    got = rlxc.compile(module, "numpy", params=params).run({"a": a})[0]
    want = ort_run(model, {"a": a})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def _cnn(rng):
    """A small CNN with every op ORT's QOperator quantizer turns into a contrib op."""
    def init(n, shape, s):
        return _init(n, rng.normal(0, s, shape).astype(np.float32))
    nodes = [helper.make_node("Conv", ["x", "W1", "B1"], ["h"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["h"], ["h2"]),
             helper.make_node("Conv", ["h2", "W2"], ["h3"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["h3", "h2"], ["h4"]),
             helper.make_node("Sigmoid", ["h4"], ["h5"]), helper.make_node("Mul", ["h5", "h4"], ["h6"]),
             helper.make_node("LeakyRelu", ["h6"], ["h7"], alpha=0.1),
             helper.make_node("AveragePool", ["h7"], ["h8"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Concat", ["h8", "h8"], ["h9"], axis=1),
             helper.make_node("GlobalAveragePool", ["h7"], ["g"]), helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "WF", "BF"], ["y"]), helper.make_node("Softmax", ["y"], ["p"])]
    inits = [init("W1", (8, 3, 3, 3), 0.3), init("B1", (8,), 0.1), init("W2", (8, 8, 3, 3), 0.2),
             init("WF", (8, 5), 0.3), init("BF", (5,), 0.1)]
    return make_model(nodes, [_vi("x", (2, 3, 8, 8))], [_vi("p", (2, 5)), _vi("h9", (2, 16, 4, 4))], inits)


@pytest.mark.parametrize("backend", BACKENDS)
def test_qoperator_cnn_matches_onnxruntime(backend, tmp_path):
    """`quantize_static` in the QOperator format (uint8 activations, int8
    weights) of a CNN with convolutions, a residual add, sigmoid, mul,
    leaky relu, average and global pools, concat, gemm and softmax: every
    contrib op present. A step moved early (see the module's note) moves
    later values, by a step or two more: each output at most 3 steps from
    ORT's, 5% of them moved at most."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng()
    onnx.save(_cnn(rng), tmp_path / "f.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.normal(0, 1, (2, 3, 8, 8)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(tmp_path / "f.onnx", tmp_path / "q.onnx", Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    ops = {nd.op_type for nd in model.graph.node if nd.domain == MS}
    assert ops == {"QLinearAdd", "QLinearSigmoid", "QLinearMul", "QLinearLeakyRelu", "QLinearAveragePool",
                   "QLinearGlobalAveragePool", "QLinearConcat", "QGemm", "QLinearSoftmax"}
    scales = {t.name: float(numpy_helper.to_array(t)) for t in model.graph.initializer if t.name.endswith("_scale")}
    x = rng.normal(0, 1, (2, 3, 8, 8)).astype(np.float32)
    _compare(model, {"x": x}, [scales["p_scale"], scales["h9_scale"]], backend, most=3, share=0.05)


def test_qoperator_errors_name_the_node():
    """A scale not known at import, a scale per channel where the op takes
    one per tensor, a zero point of another type than its input's, and a
    contrib op rlxc does not import: each an error naming the node."""
    rng = np.random.default_rng()
    x = rng.normal(0, 1, (3, 4)).astype(np.float32)
    model, _, _ = _single("QLinearSigmoid", [x], "UINT8", rng=rng)
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    for t in bad.graph.initializer:
        if t.name == "y_s":
            t.CopyFrom(_init("y_s", np.full(4, 0.01, np.float32)))
    with pytest.raises(OnnxImportError, match="QLinearSigmoid node 'qop'.*the output's scale .* must be a scalar"):
        rlxc.from_onnx(bad)
    for k, what in ((4, "the output's zero point"), (2, "X's zero point")):  # INT8 beside a UINT8 input
        bad.CopyFrom(model)
        bad.graph.initializer.append(_init("z_i8", np.int8(0)))
        bad.graph.node[1].input[k] = "z_i8"
        with pytest.raises(OnnxImportError, match=f"QLinearSigmoid node 'qop'.*{what}'s type INT8 differs from its input's UINT8"):
            rlxc.from_onnx(bad)
    bad.CopyFrom(model)
    bad.graph.node[1].input[3] = "x0"  # a scale computed at run time
    with pytest.raises(OnnxImportError, match="QLinearSigmoid node 'qop'.*the output's scale \\(input #3\\) must be known at import"):
        rlxc.from_onnx(bad)
    bad.CopyFrom(model)
    bad.graph.node[1].op_type = "QLinearReduceMean"
    with pytest.raises(OnnxImportError, match="QLinearReduceMean node 'qop' \\(domain 'com.microsoft'\\): this op type is not supported"):
        rlxc.from_onnx(bad)


def _ort_op_by_op(model, feeds):
    """ONNX Runtime with its graph optimizations off: each node as the model
    says (its optimized run fuses QDQ pairs into integer kernels that round
    elsewhere)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("fmt", ["QOperator", "QDQ"])
@pytest.mark.parametrize("name", ["torch_bert_tiny_ts.onnx", "torch_gpt2_tiny_ts.onnx"])
def test_statically_quantized_exports_match_onnxruntime(name, fmt, tmp_path):
    """The committed TorchScript exports of a tiny BERT and GPT-2,
    `quantize_static` (uint8 activations, int8 weights, 4 calibration
    batches) in both formats: QLinearMatMul, QLinearAdd, QLinearMul,
    QLinearSoftmax and QGemm, Split and Reshape on 8-bit values (QOperator),
    or QuantizeLinear/DequantizeLinear pairs (QDQ); against ONNX Runtime
    running node by node, on padded batches. Both models run float ops
    (GELU's tanh and pow, layer norms, softmax's exp) between their
    quantizations, whose last-ulp differences can move a quantized value one
    step and later values with it (each quantized op alone matches ONNX
    Runtime's exactly; seen: up to 45% of the outputs moved, by 0.2% of the
    output's largest magnitude on average and 2% at most; most runs equal
    to f32 rounding): the bounds are 1% on average, 10% at most."""
    from pathlib import Path

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng()
    src = Path(__file__).resolve().parent / "models" / name
    b, s = 2, 11

    def feeds():
        mask = np.ones((b, s), np.int64)
        mask[1, rng.integers(3, s):] = 0
        return {"input_ids": rng.integers(0, 128, (b, s)).astype(np.int64), "attention_mask": mask}

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([feeds() for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(src, tmp_path / "q.onnx", Reader(), quant_format=getattr(QuantFormat, fmt),
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    f = feeds()
    f = {i.name: f[i.name] for i in model.graph.input}
    module, params = rlxc.from_onnx(model, input_shapes={k: list(v.shape) for k, v in f.items()})
    got = rlxc.compile(module, "numpy", params=params).run(f)
    for g, w in zip(got, _ort_op_by_op(model, f)):
        scale = np.abs(w).max()
        d = np.abs(g - w)  # a step moved early moves later values
        assert d.max() < 0.1 * scale and d.mean() < 0.01 * scale, (d.max() / scale, d.mean() / scale)
        assert np.median(d) <= 0.02 * scale  # most values near: the model's own result, not a saturated one

"""QuantizeLinear / DequantizeLinear (the QDQ form of quantized models)
against ONNX's reference evaluator and ONNX Runtime, on fresh random inputs:
activations quantized and dequantized (per tensor, per axis, per block; every
integer type; f32, f16 and bf16), weights and biases stored as integers and
dequantized at import, and the errors for what rlx cannot hold."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnx_helpers import BACKENDS, make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError  # noqa: E402

NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "UINT16": np.uint16}
RANGES = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767), "UINT16": (0, 65535)}


def _run(model, feeds, backend="numpy"):
    module, params = rlxc.from_onnx(model)
    return rlxc.compile(module, backend, params=params).run(feeds)


def _init(name, a, code=None):
    t = numpy_helper.from_array(np.asarray(a), name)
    if code is not None:  # int4 and the like: numpy_helper's packing
        t = helper.make_tensor(name, code, list(np.shape(a)), np.ravel(a).tolist())
    return t


def _qdq_model(shape, qtype, scale, zp, axis=1, block=0, opset=21, x_type=TensorProto.FLOAT):
    """x -> QuantizeLinear -> DequantizeLinear -> y, scale and zero point initializers."""
    attrs = {"axis": axis} | ({"block_size": block} if block else {})
    code = getattr(TensorProto, qtype)
    inits = [_init("s", scale)] + ([_init("z", zp, code)] if zp is not None else [])
    zn = ["z"] if zp is not None else []
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", *zn], ["q"], **attrs,
                              **({} if zp is not None else {"output_dtype": code})),
             helper.make_node("DequantizeLinear", ["q", "s", *zn], ["y"], **attrs)]
    return make_model(nodes, [helper.make_tensor_value_info("x", x_type, list(shape))],
                      [helper.make_tensor_value_info("y", x_type, list(shape))], inits, opset=opset)


def _spread(rng, shape, scale, lo, hi, zp=0):
    """Values over the type's range and past it, with exact ties (k + 0.5) * scale."""
    s = np.broadcast_to(scale, shape).astype(np.float64)
    q = rng.uniform(lo - zp - 8, hi - zp + 8, size=shape)
    q[..., ::3] = np.round(q[..., ::3]) + 0.5  # ties: rint rounds half to even
    return (q * s).astype(np.float32)


@pytest.mark.parametrize("qtype", list(NP))
def test_qdq_per_tensor_every_type(qtype):
    rng = np.random.default_rng()
    lo, hi = RANGES[qtype]
    scale = np.float32(rng.uniform(0.01, 0.2))
    zp = np.asarray(rng.integers(lo, hi // 2 + 1), NP[qtype])
    x = _spread(rng, (7, 33), scale, lo, hi, int(zp))
    model = _qdq_model(x.shape, qtype, scale, zp)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = _run(model, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    # the integers themselves: the reference's quantized values
    q = np.clip(np.rint(x / scale).astype(np.int64) + int(zp), lo, hi)
    np.testing.assert_array_equal(got, ((q - int(zp)) * np.float64(scale)).astype(np.float32))


def test_qdq_without_zero_point_is_uint8_and_saturates():
    rng = np.random.default_rng()
    x = rng.normal(0, 40, size=(5, 64)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, 1e30, -1e30]
    model = _qdq_model(x.shape, "UINT8", np.float32(0.5), None)
    got = _run(model, {"x": x})[0]
    want = np.clip(np.rint(x.astype(np.float64) / 0.5), 0, 255) * 0.5
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_qdq_per_axis(axis):
    rng = np.random.default_rng()
    shape = (6, 5, 9)
    n = shape[axis]
    scale = rng.uniform(0.02, 0.3, size=n).astype(np.float32)
    zp = rng.integers(-20, 20, size=n).astype(np.int8)
    dims = [1, 1, 1]
    dims[axis] = n
    x = _spread(rng, shape, scale.reshape(dims), -128, 127)
    model = _qdq_model(shape, "INT8", scale, zp, axis=axis, opset=19)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(_run(model, {"x": x})[0], want)
    np.testing.assert_allclose(_run(model, {"x": x})[0], ort_run(model, {"x": x})[0], rtol=0, atol=0)


@pytest.mark.parametrize("block", [4, 3])
def test_qdq_per_block(block):
    """opset 21's blocked quantization, a block size that divides the axis
    and one that leaves a shorter last block."""
    rng = np.random.default_rng()
    shape = (8, 12)
    nb = -(-shape[1] // block)
    scale = rng.uniform(0.02, 0.3, size=(8, nb)).astype(np.float32)
    zp = rng.integers(0, 30, size=(8, nb)).astype(np.uint8)
    x = _spread(rng, shape, np.repeat(scale, block, axis=1)[:, :12], 0, 255)
    model = _qdq_model(shape, "UINT8", scale, zp, axis=1, block=block)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(_run(model, {"x": x})[0], want)


@pytest.mark.parametrize("ftype", ["FLOAT16", "BFLOAT16"])
def test_qdq_16_bit_floats(ftype):
    """The division in the input's type (as the reference), the dequantized
    product rounded once to the scale's type."""
    rng = np.random.default_rng()
    code = getattr(TensorProto, ftype)
    x32 = _spread(rng, (4, 40), 0.125, -128, 127)
    scale = np.float32(0.125)  # exact in both types
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    s = helper.make_tensor("s", code, [], [float(scale)])
    z = numpy_helper.from_array(np.asarray(3, np.int8), "z")
    model = make_model(nodes, [helper.make_tensor_value_info("x", code, [4, 40])],
                       [helper.make_tensor_value_info("y", code, [4, 40])], [s, z], opset=19)
    if ftype == "FLOAT16":
        x32 = x32.astype(np.float16).astype(np.float32)
    else:  # bf16: the carrier's values rounded to bf16 (nearest even)
        u = x32.view(np.uint32).astype(np.uint64)
        x32 = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    got = _run(model, {"x": x32.astype(np.float16) if ftype == "FLOAT16" else x32})[0]
    # x / 0.125 is exact, so the division's rounding to the input type changes nothing
    want = (np.clip(np.rint(x32.astype(np.float64) / 0.125) + 3, -128, 127) - 3) * 0.125
    np.testing.assert_array_equal(np.asarray(got, np.float64), want)


def _qdq_matmul_model(rng, k=48, n=24, m=10):
    """A QDQ MatMul as quantization tools write it: the activation quantized
    to UINT8 per tensor, the weight stored INT8 per output channel (axis 1
    of [K, N]), the bias INT32 at scale_x * scale_w, all dequantized."""
    w = rng.normal(0, 0.5, size=(k, n)).astype(np.float32)
    sw = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    wq = np.clip(np.rint(w / sw), -127, 127).astype(np.int8)
    sx, zx = np.float32(0.02), np.uint8(128)
    b = rng.normal(0, 0.5, size=n).astype(np.float32)
    bq = np.rint(b / (sx * sw)).astype(np.int32)
    inits = [_init("wq", wq), _init("sw", sw), _init("zw", np.zeros(n, np.int8)), _init("sx", sx), _init("zx", zx),
             _init("bq", bq), _init("sb", (sx * sw).astype(np.float32))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=1),
             helper.make_node("DequantizeLinear", ["bq", "sb"], ["bd"], axis=0),
             helper.make_node("MatMul", ["xd", "wd"], ["mm"]),
             helper.make_node("Add", ["mm", "bd"], ["y"])]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits, opset=19)


def test_qdq_matmul_weights_fold_to_float_params():
    rng = np.random.default_rng()
    model = _qdq_matmul_model(rng)
    x = rng.normal(0, 1, size=(10, 48)).astype(np.float32)
    module, params = rlxc.from_onnx(model)
    text = str(module)
    # the integer weight and bias are dequantized at import into float params named after them
    assert sorted(params) == ["bd", "wd"] and all(a.dtype == np.float32 for a in params.values())
    assert "rlx.param" in text and "i32" not in text and "dense<\"0x" not in text
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_qdq_conv_per_channel_weights():
    """A QDQ Conv as ORT's quantizer writes it (INT8 weights per output
    channel, axis 0), against ONNX Runtime."""
    rng = np.random.default_rng()
    w = rng.normal(0, 0.3, size=(8, 3, 3, 3)).astype(np.float32)
    sw = (np.abs(w).reshape(8, -1).max(axis=1) / 127).astype(np.float32)
    wq = np.clip(np.rint(w / sw[:, None, None, None]), -127, 127).astype(np.int8)
    inits = [_init("wq", wq), _init("sw", sw), _init("zw", np.zeros(8, np.int8)), _init("sx", np.float32(0.03)),
             _init("zx", np.int8(-3))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["y"], pads=[1, 1, 1, 1])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 9])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 9, 9])], inits, opset=19)
    x = rng.normal(0, 1, size=(2, 3, 9, 9)).astype(np.float32)
    np.testing.assert_allclose(_run(model, {"x": x})[0], ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_int4_weights_per_block():
    """INT4 weights (opset 21, blocked along the input axis), dequantized at import."""
    rng = np.random.default_rng()
    k, n, block = 16, 6, 8
    wq = rng.integers(-8, 8, size=(k, n))
    sw = rng.uniform(0.01, 0.1, size=(k // block, n)).astype(np.float32)
    inits = [_init("wq", wq, TensorProto.INT4), _init("sw", sw)]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "sw"], ["wd"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "wd"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, k])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, n])], inits, opset=21)
    x = rng.normal(0, 1, size=(3, k)).astype(np.float32)
    want = x.astype(np.float64) @ (wq * np.repeat(sw, block, axis=0))
    np.testing.assert_allclose(_run(model, {"x": x})[0], want, rtol=1e-5, atol=1e-5)


def test_quantized_values_move_through_layout_ops():
    """Exporters put Transpose/Reshape/Identity between a quantized weight or
    activation and its DequantizeLinear; the values stay quantized through
    them (and only a DequantizeLinear, or another such op, may read them)."""
    rng = np.random.default_rng()
    wq = rng.integers(-127, 128, size=(6, 8)).astype(np.int8)  # stored [N, K]: transposed before use
    inits = [_init("wq", wq), _init("sw", np.float32(0.05)), _init("zw", np.int8(1)), _init("sx", np.float32(0.1)),
             _init("zx", np.uint8(100)), _init("shape", np.array([4, 8], np.int64))]
    nodes = [helper.make_node("Transpose", ["wq"], ["wt"], perm=[1, 0]),
             helper.make_node("Identity", ["wt"], ["wi"]),
             helper.make_node("DequantizeLinear", ["wi", "sw", "zw"], ["wd"]),
             helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("Reshape", ["xq", "shape"], ["xr"]),
             helper.make_node("DequantizeLinear", ["xr", "sx", "zx"], ["xd"]),
             helper.make_node("MatMul", ["xd", "wd"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 8])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])], inits, opset=19)
    x = rng.normal(0, 3, size=(2, 2, 8)).astype(np.float32)
    module, params = rlxc.from_onnx(model)
    assert list(params) == ["wd"]  # the transposed weight dequantized at import, a param
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    # Both sides sum f32 products in their own order: the error bound is a few
    # ulps of the sum of |terms|, not of the (possibly cancelled) result.
    xd = (np.clip(np.rint(x / np.float32(0.1)) + 100, 0, 255) - 100) * 0.1
    wd = (wq.T.astype(np.float64) - 1) * 0.05
    bound = np.abs(xd.reshape(4, 8)) @ np.abs(wd)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert np.all(np.abs(got - want) <= 8 * np.finfo(np.float32).eps * bound + 1e-7)
    bad = make_model([*nodes[3:5], helper.make_node("Relu", ["xr"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 8])],
                     [helper.make_tensor_value_info("y", TensorProto.UINT8, [4, 8])], inits, opset=19)
    with pytest.raises(OnnxImportError, match="Relu node 'y' reads 'xr' of ONNX type UINT8"):
        rlxc.from_onnx(bad)


def test_quantized_values_only_flow_into_dequantize():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    s, z = _init("s", np.float32(0.1)), _init("z", np.int8(0))
    # a QuantizeLinear's output as a graph output
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], [x],
                   [helper.make_tensor_value_info("q", TensorProto.INT8, [4])], [s, z])
    with pytest.raises(OnnxImportError, match="graph output 'q' has ONNX type INT8"):
        rlxc.from_onnx(m)
    # read by another op
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]), helper.make_node("Abs", ["q"], ["y"])],
                   [x], [helper.make_tensor_value_info("y", TensorProto.INT8, [4])], [s, z])
    with pytest.raises(OnnxImportError, match="Abs node 'y' reads 'q' of ONNX type INT8"):
        rlxc.from_onnx(m)
    # an INT8 initializer read by another op
    m = make_model([helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT)], [],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [_init("w", np.int8([1, 2]))])
    with pytest.raises(OnnxImportError, match="reads 'w' of ONNX type INT8"):
        rlxc.from_onnx(m)
    # a scale that is not known at import
    m = make_model([helper.make_node("QuantizeLinear", ["x", "sv", "z"], ["q"]),
                    helper.make_node("DequantizeLinear", ["q", "sv", "z"], ["y"])],
                   [x, helper.make_tensor_value_info("sv", TensorProto.FLOAT, [])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [z])
    with pytest.raises(OnnxImportError, match="must be a constant at import|must be known at import"):
        rlxc.from_onnx(m)
    # float8
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=TensorProto.FLOAT8E4M3FN),
                    helper.make_node("DequantizeLinear", ["q", "s"], ["y"])], [x],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [s], opset=21)
    with pytest.raises(OnnxImportError, match="quantizing to FLOAT8E4M3FN is not supported"):
        rlxc.from_onnx(m)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_qdq_matmul_on_cuda():
    rng = np.random.default_rng()
    model = _qdq_matmul_model(rng, k=256, n=128, m=64)
    x = rng.normal(0, 1, size=(64, 256)).astype(np.float32)
    got = _run(model, {"x": x}, "cuda")[0]
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _vi(name, code, shape):
    return helper.make_tensor_value_info(name, code, shape)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # the reference's NaN to int32
def test_quantize_nan_and_negative_zero():
    """NaN (and 0 / 0) quantize to the type's lowest value, as the reference's
    integer cast gives; rint(-0.3) is 0, not -0, so 1 / dequantized is +inf."""
    x = np.array([np.nan, -0.01, -0.0, 0.01, 3.0], np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=TensorProto.INT8),
             helper.make_node("DequantizeLinear", ["q", "s"], ["d"]),
             helper.make_node("Reciprocal", ["d"], ["y"])]
    model = make_model(nodes, [_vi("x", TensorProto.FLOAT, [5])], [_vi("y", TensorProto.FLOAT, [5])],
                       [_init("s", np.float32(0.5))], opset=21)
    got = _run(model, {"x": x})[0]
    np.testing.assert_array_equal(got, np.array([1 / -64.0, np.inf, np.inf, np.inf, 1 / 3.0], np.float32))
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_quantized_values_through_control_flow():
    """A QuantizeLinear's output returned by an If branch stays quantized (an
    error where something else reads it); sibling branches may reuse a name
    for a value that is not quantized; a Loop's DequantizeLinear with a
    per-iteration scale folds a fresh param each iteration (against ONNX
    Runtime: ONNX's reference evaluator gets this loop wrong)."""
    x, s, z = _vi("x", TensorProto.FLOAT, [4]), _init("s", np.float32(0.1)), _init("z", np.int8(0))
    c = numpy_helper.from_array(np.array(True), "c")
    then = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["t"])], "then", [],
                             [_vi("t", TensorProto.INT8, [4])])
    other = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["u"])], "else", [],
                              [_vi("u", TensorProto.INT8, [4])])
    m = make_model([helper.make_node("If", ["c"], ["q"], then_branch=then, else_branch=other),
                    helper.make_node("Relu", ["q"], ["y"])], [x], [_vi("y", TensorProto.INT8, [4])], [s, z, c], opset=19)
    with pytest.raises(OnnxImportError, match="Relu node 'y' reads 'q' of ONNX type INT8"):
        rlxc.from_onnx(m)
    relu = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Abs", ["t"], ["a"])], "b2", [],
                             [_vi("a", TensorProto.FLOAT, [4])])
    m = make_model([helper.make_node("If", ["c"], ["q"], then_branch=then, else_branch=other),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
                    helper.make_node("If", ["c"], ["r"], then_branch=relu, else_branch=relu),
                    helper.make_node("Add", ["d", "r"], ["y"])],
                   [x], [_vi("y", TensorProto.FLOAT, [4])], [s, z, c], opset=19)
    xv = np.array([0.14, -3.0, 100.0, 0.25], np.float32)
    np.testing.assert_allclose(_run(m, {"x": xv})[0], [0.1 + 0.14, -3.0 + 0.0, 12.7 + 100.0, 0.2 + 0.25], rtol=1e-6)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["fi", "one"], ["sc"]), helper.make_node("DequantizeLinear", ["wq", "sc"], ["wd"]),
         helper.make_node("Add", ["acc", "wd"], ["acc2"])], "body",
        [_vi("i", TensorProto.INT64, []), _vi("cin", TensorProto.BOOL, []), _vi("acc", TensorProto.FLOAT, [4])],
        [_vi("cout", TensorProto.BOOL, []), _vi("acc2", TensorProto.FLOAT, [4])], [_init("one", np.float32(1.0))])
    m = make_model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], [x], [_vi("y", TensorProto.FLOAT, [4])],
                   [_init("wq", np.array([1, -2, 3, -4], np.int8)), _init("n", np.array(3, np.int64))], opset=19)
    got = _run(m, {"x": xv})[0]
    np.testing.assert_allclose(got, xv + 6.0 * np.array([1, -2, 3, -4], np.float32), rtol=1e-6)
    np.testing.assert_allclose(got, ort_run(m, {"x": xv})[0], rtol=1e-6)


def test_quantization_parameter_errors_name_the_node():
    x = _vi("x", TensorProto.FLOAT, [4, 6])
    for scale, block in ((np.full(3, 0.1, np.float32), 2), (np.full((4, 2), 0.1, np.float32), 2)):
        m = make_model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"], axis=1, block_size=block),
                        helper.make_node("DequantizeLinear", ["q", "s"], ["y"], axis=1, block_size=block)],
                       [x], [_vi("y", TensorProto.FLOAT, [4, 6])], [_init("s", scale)], opset=21)
        with pytest.raises(OnnxImportError, match="QuantizeLinear node 'q': the scale of shape"):
            rlxc.from_onnx(m)
    # Shape of a quantized value reads only its shape
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"]), helper.make_node("Shape", ["q"], ["y"])],
                   [x], [_vi("y", TensorProto.INT64, [2])], [_init("s", np.float32(0.1))], opset=19)
    np.testing.assert_array_equal(_run(m, {"x": np.zeros((4, 6), np.float32)})[0], [4, 6])


# --------------------------------------------------------------------------- dynamic quantization


def _float_mlp(rng, k=1000, hidden=32, out=16):
    w = rng.normal(0, 0.2, (k, hidden)).astype(np.float32)
    b = rng.normal(0, 0.1, (hidden,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (hidden, out)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "B"], ["h2"]),
             helper.make_node("Relu", ["h2"], ["h3"]), helper.make_node("MatMul", ["h3", "W2"], ["y"])]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, k])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, out])],
                      [_init("W", w), _init("B", b), _init("W2", w2)])


def _dynamic_quantized(rng, tmp_path, k=1000):
    """The MLP as ONNX Runtime's `quantize_dynamic` writes it: DynamicQuantizeLinear
    of each activation, MatMulInteger by INT8 weights, Cast, Mul by the scales."""
    pytest.importorskip("onnxruntime")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    onnx.save(_float_mlp(rng, k), tmp_path / "f.onnx")
    quantize_dynamic(tmp_path / "f.onnx", tmp_path / "q.onnx", weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {nd.op_type for nd in model.graph.node}
    return model


def test_dynamic_quantized_mlp_matches_onnxruntime(tmp_path):
    """A dynamically quantized MLP (reduced axis 1000: the f32 products are
    summed in 2 chunks of up to 518, each exact) gives ONNX's reference
    evaluator's outputs exactly and ONNX Runtime's; the weights minus their
    zero points are f32 params."""
    rng = np.random.default_rng()
    model = _dynamic_quantized(rng, tmp_path)
    module, params = rlxc.from_onnx(model)
    assert all(a.dtype == np.float32 for a in params.values()) and "W_quantized_f32" in params
    assert str(module).count("rlx.matmul") == 3  # 1000 = 518 + 482, then 32
    x = rng.normal(0, 1, (2, 3, 1000)).astype(np.float32)
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])
    want = ort_run(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_dynamic_quantized_mlp_on_cuda(tmp_path):
    rng = np.random.default_rng()
    model = _dynamic_quantized(rng, tmp_path, k=3000)
    x = rng.normal(0, 1, (2, 3, 3000)).astype(np.float32)
    got = _run(model, {"x": x}, "cuda")[0]
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    # the hidden layer's f32 math may round differently on the device (fused,
    # contracted), and an activation then quantize a step apart: a step of
    # the hidden scale times a weight, far below a wrong scale or zero point
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())




@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_integer_is_exact_past_f32s_integers(backend):
    """Worst-case MatMulInteger: uint8 activations of 200-255 (zero point 0)
    times int8 weights of -128 with a per-column zero point of 127 (|b - z|
    = 255) over 4096: sums near 2.7e8, past f32's exact integers (2**24),
    exact as int32 (chunks of 258, each summed exactly in f32)."""
    rng = np.random.default_rng()
    m, k, nn = 3, 4096, 5
    a = rng.integers(200, 256, (m, k))
    b = rng.integers(-128, -120, (k, nn)).astype(np.int8)
    bz = np.full(nn, 127, np.int8)
    inits = [_init("s", np.float32(1)), _init("az", np.uint8(0)), _init("b", b), _init("bz", bz)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "az"], ["aq"]),
             helper.make_node("MatMulInteger", ["aq", "b", "az", "bz"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                       [helper.make_tensor_value_info("y", TensorProto.INT32, [m, nn])], inits, opset=13)
    module, params = rlxc.from_onnx(model)
    assert str(module).count("rlx.matmul") == 16  # 4096 / 258
    got = rlxc.compile(module, backend, params=params).run({"x": a.astype(np.float32)})[0]
    want = a.astype(np.int64) @ (b.astype(np.int64) - bz)
    assert np.abs(want).max() > 2**24
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_dynamic_quantize_linear_matches_the_reference():
    """DynamicQuantizeLinear's scale, zero point and values (read back as y -
    z through MatMulInteger by an int8 identity) equal ONNX's reference, for
    a mixed-sign, an all-positive, an all-negative and an all-zero input."""
    k = 24
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
             helper.make_node("MatMulInteger", ["y", "eye", "z"], ["d"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, k])],
                       [helper.make_tensor_value_info("d", TensorProto.INT32, [3, k]),
                        helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
                       [_init("eye", np.eye(k, dtype=np.int8))], opset=13)
    rng = np.random.default_rng()
    module, params = rlxc.from_onnx(model)
    compiled = rlxc.compile(module, "numpy", params=params)
    ref = ReferenceEvaluator(helper.make_model(helper.make_graph(
        nodes[:1], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, k])],
        [helper.make_tensor_value_info(v, c, None) for v, c in (("y", TensorProto.UINT8), ("s", TensorProto.FLOAT),
                                                                ("z", TensorProto.UINT8))]),
        opset_imports=[helper.make_opsetid("", 13)]))
    for x in (rng.normal(0, 3, (3, k)), rng.uniform(0.5, 4, (3, k)), -rng.uniform(0.5, 4, (3, k)), np.zeros((3, k))):
        x = x.astype(np.float32)
        d, s = compiled.run({"x": x})
        y, rs, rz = ref.run(None, {"x": x})
        assert np.float32(s) == rs
        np.testing.assert_array_equal(d, y.astype(np.int32) - np.int32(rz))


def test_matmul_integer_errors_name_the_node():
    """A float operand, or a zero point of another type, is an error naming the node."""
    inits = [_init("b", np.ones((4, 2), np.int8)), _init("bz", np.uint8(3))]
    for nodes, what in (([helper.make_node("MatMulInteger", ["x", "b"], ["y"], name="mmi")], "A of type f32"),
                        ([helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
                          helper.make_node("MatMulInteger", ["q", "b", "z", "bz"], ["y"], name="mmi")],
                         "zero point of type UINT8 differs from B's INT8")):
        model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                           [helper.make_tensor_value_info("y", TensorProto.INT32, [3, 2])], inits, opset=13)
        with pytest.raises(OnnxImportError, match=f"MatMulInteger node 'mmi'.*{what}"):
            rlxc.from_onnx(model)


def test_dynamic_quantized_cnn_matches_onnxruntime(tmp_path):
    """`quantize_dynamic` of a two-conv CNN (UINT8 weights): ConvInteger by
    weights minus their zero points, the second over 64 input channels of
    3 x 3 taps in 2 chunks (an activation's zero point known only at run
    time), equal to ONNX's reference and ONNX Runtime."""
    pytest.importorskip("onnxruntime")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng()
    w1 = rng.normal(0, 0.3, (64, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.1, (8, 64, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W1"], ["h"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["h"], ["h2"]),
             helper.make_node("Conv", ["h2", "W2"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])]
    onnx.save(make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 12])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 6, 6])],
                         [_init("W1", w1), _init("W2", w2)]), tmp_path / "f.onnx")
    quantize_dynamic(tmp_path / "f.onnx", tmp_path / "q.onnx", weight_type=QuantType.QUInt8, op_types_to_quantize=["Conv"])
    model = onnx.load(tmp_path / "q.onnx")
    assert [nd.op_type for nd in model.graph.node].count("ConvInteger") == 2
    module, params = rlxc.from_onnx(model)
    assert str(module).count("rlx.conv2d") == 3
    x = rng.normal(0, 1, (2, 3, 12, 12)).astype(np.float32)
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])
    want = ort_run(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_integer_is_exact_past_f32s_integers(backend):
    """Worst-case ConvInteger: uint8 inputs of 200-255 by int8 weights of
    -128 with a per-output-channel zero point of 127, 120 input channels of
    3 x 3 taps (sums near 7e7, past 2**24): 5 chunks of 28 channels, exact
    against numpy in int64; a grouped convolution that would need chunks is
    an error naming the node."""
    rng = np.random.default_rng()
    c, m = 120, 4
    a = rng.integers(200, 256, (1, c, 5, 5))
    w = rng.integers(-128, -120, (m, c, 3, 3)).astype(np.int8)
    inits = [_init("s", np.float32(1)), _init("az", np.uint8(0)), _init("w", w), _init("wz", np.full(m, 127, np.int8))]

    def model(group, wz="wz"):
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "az"], ["aq"]),
                 helper.make_node("ConvInteger", ["aq", "w", "az", wz], ["y"], pads=[1, 1, 1, 1], group=group, name="ci")]
        return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c * group, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [1, m, 5, 5])], inits, opset=13)

    module, params = rlxc.from_onnx(model(1))
    assert str(module).count("rlx.conv2d") == 5
    got = rlxc.compile(module, backend, params=params).run({"x": a.astype(np.float32)})[0]
    ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.int64)  # zeros after the zero point's subtraction (0)
    wd = w.astype(np.int64) - 127
    want = np.zeros((1, m, 5, 5), np.int64)
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,oc->nohw", ap[:, :, i:i + 5, j:j + 5], wd[:, :, i, j])
    assert np.abs(want).max() > 2**24
    np.testing.assert_array_equal(got, want)
    with pytest.raises(OnnxImportError, match="ConvInteger node 'ci'.*grouped ConvInteger of 120 input channels"):
        rlxc.from_onnx(model(2))


def test_qlinear_matmul_matches_onnxruntime():
    """QLinearMatMul (the QOperator form) between a QuantizeLinear and a
    DequantizeLinear: uint8 activations, int8 weights with a scale per
    column, over 1200 (two exact chunks: |x - 120| <= 135, |w| <= 127: 978
    a chunk). Against ONNX Runtime and ONNX's
    reference: the product's requantization is in f32 here and in ORT, in
    float64 in the reference, so an output within f32's rounding of a half
    step may land one step apart; no more than one, and rarely."""
    rng = np.random.default_rng()
    m, k, nn = 16, 1200, 24
    sw = rng.uniform(0.001, 0.007, (nn,)).astype(np.float32)
    inits = [_init("sx", np.float32(0.05)), _init("zx", np.uint8(120)),
             _init("w", rng.integers(-127, 128, (k, nn)).astype(np.int8)), _init("sw", sw),
             _init("zw", np.zeros(nn, np.int8)), _init("sy", np.float32(0.2)), _init("zy", np.uint8(128))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("QLinearMatMul", ["xq", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, nn])], inits, opset=21)
    module, params = rlxc.from_onnx(model)
    assert str(module).count("rlx.matmul") == 2
    x = rng.normal(0, 2, (m, k)).astype(np.float32)
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    for want in (ort_run(model, {"x": x})[0], ReferenceEvaluator(model).run(None, {"x": x})[0]):
        steps = np.abs(got.astype(np.float64) - want) / 0.2
        assert steps.max() <= 1 + 1e-6 and (steps > 0.5).mean() < 0.01
        assert np.abs(want).max() > 10  # not all saturated or zero
    bad = make_model([nodes[0], helper.make_node("QLinearMatMul", ["xq", "sx", "zx", "w", "sw", "zw", "x", "zy"], ["yq"],
                                                 name="qmm"), nodes[2]],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, nn])], inits, opset=21)
    with pytest.raises(OnnxImportError, match="QLinearMatMul node 'qmm'.*y_scale .* must be known at import"):
        rlxc.from_onnx(bad)
    for zy in (np.int16(3), np.zeros(2, np.uint8)):  # ONNX's y zero point: an 8-bit scalar (or one a tensor)
        bad = make_model([nodes[0], helper.make_node("QLinearMatMul", ["xq", "sx", "zx", "w", "sw", "zw", "sy", "zy2"], ["yq"],
                                                     name="qmm"), nodes[2]],
                         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, nn])], [*inits, _init("zy2", zy)], opset=21)
        with pytest.raises(OnnxImportError, match="QLinearMatMul node 'qmm'.*y_zero_point .* scalar INT8 or UINT8"):
            rlxc.from_onnx(bad)


def test_qlinear_conv_matches_onnxruntime():
    """QLinearConv (the QOperator form) with an int32 bias, int8 weights with
    a scale per output channel, 120 input channels of 3 x 3 taps (two exact
    chunks: 108 channels a chunk), padded; against ONNX Runtime and ONNX's
    reference, one step apart at most and rarely (as QLinearMatMul)."""
    rng = np.random.default_rng()
    cin, m = 120, 8
    inits = [_init("sx", np.float32(0.05)), _init("zx", np.uint8(120)),
             _init("w", rng.integers(-127, 128, (m, cin, 3, 3)).astype(np.int8)),
             _init("sw", rng.uniform(0.0005, 0.002, (m,)).astype(np.float32)), _init("zw", np.zeros(m, np.int8)),
             _init("sy", np.float32(0.1)), _init("zy", np.uint8(128)), _init("b", rng.integers(-2000, 2000, (m,)).astype(np.int32))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["yq"], pads=[1, 1, 1, 1]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, cin, 7, 7])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, m, 7, 7])], inits, opset=21)
    module, params = rlxc.from_onnx(model)
    assert str(module).count("rlx.conv2d") == 2
    x = rng.normal(0, 2, (2, cin, 7, 7)).astype(np.float32)
    got = rlxc.compile(module, "numpy", params=params).run({"x": x})[0]
    for want in (ort_run(model, {"x": x})[0], ReferenceEvaluator(model).run(None, {"x": x})[0]):
        steps = np.abs(got.astype(np.float64) - want) / 0.1
        assert steps.max() <= 1 + 1e-6 and (steps > 0.5).mean() < 0.01
        assert (np.abs(want) < 12.7).mean() > 0.5  # mostly not saturated
    inits[-1] = _init("b", np.zeros(m, np.int64))
    bad = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, cin, 7, 7])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, m, 7, 7])], inits, opset=21)
    with pytest.raises(OnnxImportError, match="QLinearConv node .*the bias must be INT32"):
        rlxc.from_onnx(bad)

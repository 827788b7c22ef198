"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against ONNX
Runtime on fresh random scores and targets: every reduction, class weights,
an ignore_index that targets hold (and that lies outside the classes), 2-D
and 4-D inputs, int32 and int64 targets, the log-probabilities output, f16
scores."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_helpers import make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402


def _case(op, shape, reduction, weight, ignore, ttype=TensorProto.INT64, dtype=TensorProto.FLOAT):
    rng = np.random.default_rng()
    c = shape[1]
    tshape = [shape[0], *shape[2:]]
    target = rng.integers(0, c, tshape)
    if ignore is not None:
        target[rng.random(tshape) < 0.3] = ignore
    np_t = np.int64 if ttype == TensorProto.INT64 else np.int32
    np_x = np.float32 if dtype == TensorProto.FLOAT else np.float16
    feeds = {"x": rng.standard_normal(shape).astype(np_x), "t": target.astype(np_t)}
    names, inits = ["x", "t"], []
    if weight:
        names.append("w")
        inits.append(numpy_helper.from_array(rng.uniform(0.2, 2.0, c).astype(np_x), "w"))
    attrs = {"reduction": reduction, **({"ignore_index": ignore} if ignore is not None else {})}
    outs = ["y", "lp"] if op == "SoftmaxCrossEntropyLoss" else ["y"]
    node = helper.make_node(op, names, outs, **attrs)
    model = make_model([node], [helper.make_tensor_value_info("x", dtype, shape), helper.make_tensor_value_info("t", ttype, tshape)],
                       [helper.make_tensor_value_info(o, dtype, None) for o in outs], inits, opset=13)
    return model, feeds


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("shape,reduction,weight,ignore", [
    ([6, 5], "mean", False, None), ([6, 5], "sum", True, 2), ([3, 4, 5, 6], "none", True, None),
    ([3, 4, 5, 6], "mean", True, 1), ([2, 7, 9], "mean", False, -100), ([2, 7, 9], "none", False, 3),
])
def test_losses_match_onnxruntime(op, shape, reduction, weight, ignore):
    model, feeds = _case(op, shape, reduction, weight, ignore)
    want = ort_run(model, feeds)
    module, params = from_onnx(model)
    got = rlxc.interpret(module, feeds, params)
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=2e-5, atol=2e-6)


def test_losses_int32_targets_and_f16():
    model, feeds = _case("SoftmaxCrossEntropyLoss", [4, 10, 3], "mean", True, 0, TensorProto.INT32, TensorProto.FLOAT16)
    ref, _ = _case("SoftmaxCrossEntropyLoss", [4, 10, 3], "mean", True, 0, TensorProto.INT32)
    ref.graph.initializer[0].CopyFrom(numpy_helper.from_array(
        numpy_helper.to_array(model.graph.initializer[0]).astype(np.float32), "w"))
    want = ort_run(ref, {"x": feeds["x"].astype(np.float32), "t": feeds["t"]})
    module, params = from_onnx(model)
    got = rlxc.interpret(module, feeds, params)
    for g_, w in zip(got, want):
        assert g_.dtype == np.float16
        np.testing.assert_allclose(g_.astype(np.float32), w, rtol=2e-3, atol=2e-3)


def test_loss_import_errors():
    model, _ = _case("NegativeLogLikelihoodLoss", [6, 5], "max", False, None)
    with pytest.raises(OnnxImportError, match="reduction 'max' is not supported"):
        from_onnx(model)

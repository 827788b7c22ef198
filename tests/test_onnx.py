"""The ONNX front end (rlxc.frontends.onnx): a model with shape plumbing
against ONNX Runtime, the errors, and ONNX's own node test cases for the op
types whose cases all import and pass (numpy backend)."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402

#: Op types whose every ONNX node test case passes here (the others are
#: partly supported; see the closing note of the ONNX issue).
PASSING = [
    "Abs", "And", "Ceil", "Concat", "Conv", "Cos", "Elu", "Erf", "Exp", "Floor", "Gather",
    "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid", "HardSwish",
    "LeakyRelu", "Log", "LogSoftmax", "MatMul", "Neg", "Not", "Or", "Reciprocal", "Relu",
    "Round", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Softmax", "Softplus", "Sqrt", "Tanh",
    "Transpose", "Where", "Xor",
]  # fmt: skip


def _shape_model(batch_dim="batch"):
    rng = np.random.default_rng()
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8,)).astype(np.float32)
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
            helper.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
            helper.make_node("Concat", ["bu", "m1"], ["shp"], axis=0),
            helper.make_node("MatMul", ["x", "W"], ["h"]),
            helper.make_node("Add", ["h", "B"], ["hb"]),
            helper.make_node("Gelu", ["hb"], ["a"]),
            helper.make_node("Reshape", ["a", "shp"], ["r"]),
            helper.make_node("Softmax", ["r"], ["y"], axis=-1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch_dim, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch_dim, 8])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
         ints("zero", 0), ints("ax0", [0]), ints("m1", [-1])],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


def test_shape_plumbing_folds_and_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = _shape_model()
    module, params = from_onnx(model, {"x": [4, 16]})
    text = str(module)
    assert "rlx.param \"W\"" in text and "%hb = rlx.add" in text  # ONNX names survive
    assert sorted(params) == ["B", "W"]  # the shape-only initializers were folded away
    x = np.random.default_rng().standard_normal((4, 16)).astype(np.float32)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_unbound_symbolic_dimension_is_named():
    with pytest.raises(OnnxImportError, match=r"input 'x' dimension 0 \('batch'\) is symbolic"):
        from_onnx(_shape_model())


def test_unsupported_op_names_type_node_and_support():
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det0")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"Det node 'det0'.*not supported; supported ops: Abs, "):
        from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _node_cases():
    from onnx.backend.test.loader import load_model_tests

    out = []
    for case in load_model_tests(kind="node"):
        if case.model is None:
            continue
        ops = {n.op_type for n in case.model.graph.node}
        if len(ops) == 1 and ops <= set(PASSING):
            out.append(pytest.param(case, id=case.name))
    return out


@pytest.mark.parametrize("case", _node_cases())
def test_onnx_node_case(case):
    m = case.model
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    for inputs, outputs in case.data_sets:
        feeds = {n: np.asarray(a) for n, a in zip(names, inputs)}
        module, params = from_onnx(m, {n: list(a.shape) for n, a in feeds.items()})
        got = rlxc.interpret(module, feeds, params)
        for g, w in zip(got, outputs):
            w = np.asarray(w)
            assert g.shape == w.shape
            if w.dtype.kind == "f":
                tol = 1e-2 if w.dtype == np.float16 else max(case.rtol, 1e-4)
                np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=max(case.atol, 1e-6))
            else:
                np.testing.assert_array_equal(g.astype(w.dtype), w)

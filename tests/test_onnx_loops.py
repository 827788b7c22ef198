"""ONNX Loop and Scan (unrolled at import: rlxc/frontends/onnx/loops.py) and
ReverseSequence against ONNX Runtime on fresh random inputs: a loop of
layers with a condition that ends it early, scans in both directions over
other axes, ReverseSequence on either axis order; the import errors; the
kernels of a scan the same at any length; and a CUDA twin on the GPU
machine."""

from functools import partial

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_helpers import make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402

F = TensorProto.FLOAT



_model = partial(make_model, opset=17)  # this file's models' opset


def _close(got, want, rtol=1e-5):
    assert len(got) == len(want)
    for g_, w in zip(got, want):
        g_ = np.asarray(g_, np.float64)
        assert g_.shape == w.shape and np.isfinite(g_).all()
        assert np.linalg.norm(g_ - w) <= rtol * max(np.linalg.norm(w), 1e-30)


def _layer_loop(trip: int, stop: int, d: int = 16, trip_input: bool = False):
    """x <- tanh(x · W + b) for `trip` iterations or until the iteration
    count reaches `stop` (the body's condition: i + 1 < stop), each x also
    a scan output; W and b outer-scope initializers."""
    rng = np.random.default_rng()
    w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    b = rng.standard_normal(d).astype(np.float32)
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["x_in", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["xwb"]),
            helper.make_node("Tanh", ["xwb"], ["x_out"]),
            helper.make_node("Identity", ["x_out"], ["x_scan"]),
            helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))),
            helper.make_node("Add", ["i", "one"], ["next"]),
            helper.make_node("Constant", [], ["stop"], value=numpy_helper.from_array(np.array(stop, np.int64))),
            helper.make_node("Less", ["next", "stop"], ["cond_out"]),
        ],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", F, [3, d])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("x_out", F, [3, d]),
         helper.make_tensor_value_info("x_scan", F, [3, d])],
    )  # fmt: skip
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(True), "cond")]
    ins = [helper.make_tensor_value_info("x", F, [3, d])]
    if trip_input:
        ins.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(trip, np.int64), "M"))
    node = helper.make_node("Loop", ["M", "cond", "x"], ["x_final", "xs"], body=body)
    model = _model([node], ins, [helper.make_tensor_value_info("x_final", F, None),
                                 helper.make_tensor_value_info("xs", F, None)], inits)
    return model, {"x": rng.standard_normal((3, d)).astype(np.float32)}


@pytest.mark.parametrize("trip,stop", [(6, 100), (9, 4), (1, 100)])
def test_loop_matches_onnxruntime(trip, stop):
    """The trip count ends it, or the body's condition first (9 iterations
    asked, 4 run): the final value and the stacked scan output."""
    model, feeds = _layer_loop(trip, stop)
    want = ort_run(model, feeds)
    assert want[1].shape[0] == min(trip, stop)
    module, params = from_onnx(model)
    _close(rlxc.interpret(module, feeds, params), want)


def _scan_model(steps: int, in_axis: int, in_rev: int, out_axis: int, out_rev: int, d: int = 5):
    """A running sum and running product (states) over a [2, steps, d] (scan
    axis 1) or [steps, 2, d] input, the sum's tanh a scan output."""
    rng = np.random.default_rng()
    xs = [2, steps, d] if in_axis == 1 else [steps, 2, d]
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Mul", ["p_in", "x_t"], ["p_out"]),
         helper.make_node("Tanh", ["s_out"], ["y_t"])],
        "body",
        [helper.make_tensor_value_info(n, F, [2, d]) for n in ("s_in", "p_in", "x_t")],
        [helper.make_tensor_value_info(n, F, [2, d]) for n in ("s_out", "p_out", "y_t")],
    )  # fmt: skip
    node = helper.make_node("Scan", ["s0", "p0", "x"], ["s", "p", "y"], body=body, num_scan_inputs=1,
                            scan_input_axes=[in_axis], scan_input_directions=[in_rev],
                            scan_output_axes=[out_axis], scan_output_directions=[out_rev])
    model = _model([node], [helper.make_tensor_value_info(n, F, s) for n, s in (("s0", [2, d]), ("p0", [2, d]), ("x", xs))],
                   [helper.make_tensor_value_info(n, F, None) for n in ("s", "p", "y")])
    feeds = {"s0": rng.standard_normal((2, d)).astype(np.float32),
             "p0": rng.standard_normal((2, d)).astype(np.float32),
             "x": (1 + 0.1 * rng.standard_normal(xs)).astype(np.float32)}
    return model, feeds


@pytest.mark.parametrize("in_axis,in_rev,out_axis,out_rev", [(0, 0, 0, 0), (1, 1, 1, 0), (1, 0, -1, 1), (0, 1, 2, 1)])
def test_scan_matches_onnxruntime(in_axis, in_rev, out_axis, out_rev):
    model, feeds = _scan_model(7, in_axis, in_rev, out_axis, out_rev)
    want = ort_run(model, feeds)
    module, params = from_onnx(model)
    _close(rlxc.interpret(module, feeds, params), want)


@pytest.mark.parametrize("time_axis,batch_axis,shape", [(0, 1, (6, 4, 3)), (1, 0, (4, 6, 2, 3)), (0, 1, (5, 3))])
def test_reverse_sequence_matches_onnxruntime(time_axis, batch_axis, shape):
    rng = np.random.default_rng()
    steps, batch = shape[time_axis], shape[batch_axis]
    lens = rng.integers(0, steps + 1, batch).astype(np.int64)
    lens[0] = steps
    node = helper.make_node("ReverseSequence", ["x", "L"], ["y"], time_axis=time_axis, batch_axis=batch_axis)
    model = _model([node], [helper.make_tensor_value_info("x", F, list(shape))], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(lens, "L")])
    feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
    want = ort_run(model, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    np.testing.assert_array_equal(got, want[0])


def test_loop_and_scan_import_errors():
    model, _ = _layer_loop(4, 100, trip_input=True)
    with pytest.raises(OnnxImportError, match="Loop node .*trip count .*must be known at import"):
        from_onnx(model)
    model, _ = _layer_loop(5000, 10000)
    with pytest.raises(OnnxImportError, match="more than 4096 iterations"):
        from_onnx(model)
    node = helper.make_node("ReverseSequence", ["x", "L"], ["y"])
    model = _model([node], [helper.make_tensor_value_info("x", F, [4, 3]),
                            helper.make_tensor_value_info("L", TensorProto.INT64, [3])],
                   [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(OnnxImportError, match="sequence_lens .*must be a constant at import"):
        from_onnx(model)


def test_scan_kernels_do_not_grow_with_its_steps():
    """A scan's slices are gathers of a constant index: the lowered module
    has as many kernels at 48 steps as at 16 (the first steps' fusions
    differ: 4 steps have fewer)."""
    kernels = []
    for steps in (16, 48):
        model, _ = _scan_model(steps, 1, 1, 1, 0)
        lowered = rlxc.run_pipeline(from_onnx(model)[0], "rlx-cuda{arch=sm_90}")
        kernels.append({op.source.data for op in lowered.ops if op.name == "rlx_cuda.kernel"})
    assert len(kernels[0]) == len(kernels[1]), [len(k) for k in kernels]


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_loop_and_scan_on_cuda_match_onnxruntime():
    for model, feeds in (_layer_loop(9, 6, d=64), _scan_model(12, 1, 1, -1, 1)):
        want = ort_run(model, feeds)
        module, params = from_onnx(model)
        _close(rlxc.compile(module, "cuda", params=params).run(feeds), want, rtol=1e-4)

"""ONNX GridSample and AffineGrid (rlxc/frontends/onnx/sampling.py) on fresh
random inputs: every mode, padding mode and align_corners over 2-D inputs
against ONNX Runtime, with grid points well outside [-1, 1] (the padding
modes at work, reflection over several widths); 3-D (volumetric) sampling
against ONNX's reference evaluator; AffineGrid in 2-D and 3-D against ONNX
Runtime, then fed to GridSample (a spatial transformer); f16 inputs; the
import errors; a CUDA twin on the GPU machine. Cubic sampling with border
padding is checked against ONNX's reference evaluator (see `_oracle`)."""

from functools import partial

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_helpers import make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402


_model = partial(make_model, opset=20)  # this file's models' opset


def _grid_sample(x_shape, out, mode, pad, align, dtype=TensorProto.FLOAT, opset=20):
    d = len(x_shape) - 2
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=align)
    return _model([node], [helper.make_tensor_value_info("x", dtype, list(x_shape)),
                           helper.make_tensor_value_info("grid", dtype, [x_shape[0], *out, d])],
                  [helper.make_tensor_value_info("y", dtype, None)], opset=opset)


def _feeds(x_shape, out, spread=1.7, dtype=np.float32):
    rng = np.random.default_rng()
    d = len(x_shape) - 2
    return {"x": rng.standard_normal(x_shape).astype(dtype),
            "grid": rng.uniform(-spread, spread, (x_shape[0], *out, d)).astype(dtype)}


def _oracle(model, feeds, cubic_border=False):
    """ONNX Runtime's outputs, or for cubic sampling with border padding
    ONNX's reference evaluator's (the definition): ONNX Runtime 1.23 takes
    each tap of a point just outside the border around the point as it is
    (PyTorch's way) where ONNX's reference first moves the point to the
    border, and rlxc follows ONNX (its node tests agree)."""
    if cubic_border:
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model).run(None, feeds)
    return ort_run(model, feeds)


def _rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape and np.isfinite(got).all()
    return np.linalg.norm(got - want) / np.linalg.norm(want)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_matches_onnxruntime(mode, pad, align):
    shape, out = (2, 3, 5, 7), [4, 6]
    model = _grid_sample(shape, out, mode, pad, align)
    feeds = _feeds(shape, out)
    (want,) = _oracle(model, feeds, mode == "cubic" and pad == "border")
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    assert _rel(got, want) < 1e-5


@pytest.mark.parametrize("mode,pad", [("linear", "zeros"), ("nearest", "reflection"), ("cubic", "border")])
def test_grid_sample_3d_matches_the_onnx_reference(mode, pad):
    from onnx.reference import ReferenceEvaluator

    shape, out = (1, 2, 3, 4, 5), [2, 3, 2]
    model = _grid_sample(shape, out, mode, pad, 0)
    feeds = _feeds(shape, out, 1.3)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    assert _rel(got, want) < 1e-5


def test_grid_sample_f16_and_opset_16_names():
    """An f16 model (computed in f32, rounded once) with opset 16's mode
    names (bilinear, bicubic)."""
    shape, out = (1, 4, 6, 6), [5, 5]
    for mode in ("bilinear", "bicubic"):
        model = _grid_sample(shape, out, mode, "border", 1, TensorProto.FLOAT16, opset=16)
        feeds = _feeds(shape, out, 1.2, np.float16)
        ref = _grid_sample(shape, out, {"bilinear": "linear", "bicubic": "cubic"}[mode], "border", 1)
        (want,) = _oracle(ref, {k: v.astype(np.float32) for k, v in feeds.items()}, mode == "bicubic")
        module, params = from_onnx(model)
        (got,) = rlxc.interpret(module, feeds, params)
        assert got.dtype == np.float16 and _rel(got, want) < 1e-3


@pytest.mark.parametrize("size,align", [([2, 3, 5, 7], 0), ([2, 3, 5, 7], 1), ([1, 2, 3, 4, 5], 0), ([1, 2, 3, 4, 5], 1)])
def test_affine_grid_then_grid_sample_match_onnxruntime(size, align):
    """A spatial transformer: AffineGrid of random thetas, then GridSample
    of the input at that grid."""
    rng = np.random.default_rng()
    d = len(size) - 2
    theta = (np.eye(d, d + 1) + 0.3 * rng.standard_normal((size[0], d, d + 1))).astype(np.float32)
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
             helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align)]
    model = _model(nodes, [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [size[0], d, d + 1]),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, size)],
                   [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(np.array(size, np.int64), "size")])
    feeds = {"theta": theta, "x": rng.standard_normal(size).astype(np.float32)}
    if d == 2:
        want = ort_run(model, feeds)
    else:
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(model).run(None, feeds)
    module, params = from_onnx(model)
    got = rlxc.interpret(module, feeds, params)
    assert _rel(got[0], want[0]) < 1e-6 and _rel(got[1], want[1]) < 1e-5


def test_sampling_import_errors():
    model = _grid_sample((1, 2, 4, 4), [3, 3], "area", "zeros", 0)
    with pytest.raises(OnnxImportError, match="GridSample node .*mode 'area' is not supported"):
        from_onnx(model)
    model = _grid_sample((1, 2, 4, 4), [3, 3], "linear", "wrap", 0)
    with pytest.raises(OnnxImportError, match="padding_mode 'wrap' is not supported"):
        from_onnx(model)
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"])
    model = _model([node], [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3]),
                            helper.make_tensor_value_info("size", TensorProto.INT64, [4])],
                   [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)])
    with pytest.raises(OnnxImportError, match="size .*must be a constant at import"):
        from_onnx(model)


def test_grid_sample_kernels_compile():
    """Cubic reflection sampling lowered for sm_90: every kernel compiles with
    NVRTC (no GPU needed)."""
    from test_codegen import compile_all

    module, _ = from_onnx(_grid_sample((2, 3, 8, 9), [5, 7], "cubic", "reflection", 0))
    assert compile_all(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"), "sm_90") > 0


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("mode,pad", [("linear", "zeros"), ("nearest", "border"), ("cubic", "reflection")])
def test_grid_sample_on_cuda_matches_onnxruntime(mode, pad):
    shape, out = (4, 16, 32, 48), [24, 40]
    model = _grid_sample(shape, out, mode, pad, 0)
    feeds = _feeds(shape, out)
    (want,) = _oracle(model, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.compile(module, "cuda", params=params).run(feeds)
    assert _rel(got, want) < 1e-5

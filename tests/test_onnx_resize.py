"""Resize's modes rlx.resize does not have, imported as gathers of each
output's taps times their weights (`spatial._resize_by_taps`): cubic (any
coordinate transformation, cubic_coeff_a, exclude_outside), antialiased
linear and cubic downsampling, and tf_crop_and_resize (a region of interest,
the extrapolation value); against ONNX Runtime and ONNX's reference
evaluator (float64), on fresh random inputs, on the numpy backend and on
CUDA where a GPU is."""

import os
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import rlxc

sys.path.insert(0, os.path.dirname(__file__))
from onnx_helpers import BACKENDS, assert_kernels_compile, make_model, ort_run  # noqa: E402

ONNX_T = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}

CASES = [
    # input shape, scales or sizes (by the axes), attributes, roi
    ([2, 3, 5, 7], dict(scales=[1, 1, 2.0, 1.5]), dict(mode="cubic"), None),
    ([1, 2, 9, 8], dict(sizes=[1, 2, 5, 6]), dict(mode="cubic", coordinate_transformation_mode="align_corners"), None),
    ([1, 2, 9, 8], dict(scales=[1, 1, 0.6, 0.75]), dict(mode="cubic", coordinate_transformation_mode="align_corners"), None),
    ([1, 2, 6, 7], dict(sizes=[1, 2, 13, 4]), dict(mode="cubic", coordinate_transformation_mode="asymmetric",
                                                   cubic_coeff_a=-0.5, exclude_outside=1), None),
    ([2, 2, 5, 5], dict(scales=[1, 1, 1.7, 2.3]), dict(mode="cubic", coordinate_transformation_mode="pytorch_half_pixel"), None),
    ([1, 3, 16, 12], dict(scales=[1, 1, 0.5, 0.4]), dict(mode="linear", antialias=1), None),
    ([1, 3, 15, 17], dict(sizes=[1, 3, 6, 5]), dict(mode="cubic", antialias=1), None),
    ([1, 2, 12, 10], dict(sizes=[7, 4], axes=[2, 3]), dict(mode="cubic", antialias=1, exclude_outside=1), None),
    ([1, 2, 8, 9], dict(sizes=[5, 6]), dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                          extrapolation_value=2.5, axes=[2, 3]), [0.2, -0.1, 1.1, 0.7]),
    ([2, 2, 8, 9], dict(sizes=[2, 2, 5, 11]), dict(mode="cubic", coordinate_transformation_mode="tf_crop_and_resize"),
     [0, 0, 0.1, 0.3, 1, 1, 0.8, 0.9]),
    ([2, 2, 8, 9], dict(sizes=[2, 2, 6, 4]), dict(mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
                                                  extrapolation_value=-1.0), [0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3]),
    ([1, 2, 10, 6], dict(sizes=[5, 5], axes=[2, 3]), dict(mode="cubic", keep_aspect_ratio_policy="not_larger"), None),
]  # fmt: skip


def _model(shape, sizing, attrs, roi, dt):
    attrs = dict(attrs)
    axes = sizing.get("axes", attrs.pop("axes", None))
    if axes is not None:
        attrs["axes"] = axes
    inits = [numpy_helper.from_array(np.asarray(roi if roi is not None else [], np.float32), "roi")]
    names = ["x", "roi"]
    if "scales" in sizing:
        inits.append(numpy_helper.from_array(np.asarray(sizing["scales"], np.float32), "scales"))
        names.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.asarray(sizing["sizes"], np.int64), "sizes"))
        names += ["", "sizes"]
    node = helper.make_node("Resize", names, ["y"], **attrs)
    return make_model([node], [helper.make_tensor_value_info("x", ONNX_T[dt], shape)],
                      [helper.make_tensor_value_info("y", ONNX_T[dt], None)], inits, opset=19)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_resize_by_taps_matches_reference_and_onnxruntime(case, dt, backend):
    """Each case against ONNX's reference evaluator in float64 (f32 within
    1e-5, f16 within 1e-2 relative of the output's largest magnitude: the
    input and result rounded once) and, in f32, against ONNX Runtime
    (within 1e-4: its antialiased weights are f32), but for align_corners
    with scales whose resized length is not whole: ONNX Runtime rounds that
    length in the coordinate transformation, ONNX's reference (and rlx)
    does not."""
    shape, sizing, attrs, roi = CASES[case]
    x = np.random.default_rng().standard_normal(shape).astype(np.float16 if dt == "f16" else np.float32)
    model = _model(shape, sizing, attrs, roi, dt)
    module, params = rlxc.from_onnx(model)
    assert "rlx.resize" not in str(module)
    got = np.asarray(rlxc.compile(module, backend, params=params).run({"x": x})[0], np.float64)
    want = np.asarray(ReferenceEvaluator(_model(shape, sizing, attrs, roi, "f32")).run(None, {"x": x.astype(np.float64).astype(np.float32)})[0], np.float64)
    assert got.shape == want.shape
    tol = 1e-5 if dt == "f32" else 1e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    if dt == "f32" and ("scales" not in sizing or attrs.get("coordinate_transformation_mode") != "align_corners"):
        np.testing.assert_allclose(got, ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_resize_taps_refuse_what_onnx_does_not_define():
    """antialias with nearest and tf_crop_and_resize without a constant roi
    are import errors naming the node."""
    with pytest.raises(rlxc.OnnxImportError, match=r"antialias=1 with mode='nearest'"):
        rlxc.from_onnx(_model([1, 1, 4, 4], dict(scales=[1, 1, 0.5, 0.5]), dict(mode="nearest", antialias=1), None, "f32"))
    with pytest.raises(rlxc.OnnxImportError, match=r"roi"):
        rlxc.from_onnx(_model([1, 1, 4, 4], dict(scales=[1, 1, 0.5, 0.5]),
                              dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize"), None, "f32"))


def test_resize_by_taps_compiles_for_the_gpu():
    """Without a GPU: a cubic antialiased and a tf_crop_and_resize model (f16)
    through the CUDA pipeline, every generated kernel compiled by NVRTC for
    sm_90 with no spills."""
    for case in (6, 8):
        shape, sizing, attrs, roi = CASES[case]
        assert_kernels_compile(rlxc.from_onnx(_model(shape, sizing, attrs, roi, "f16"))[0])


@pytest.mark.parametrize("mode, anti", [("cubic", 1), ("cubic", 0), ("linear", 1)])
def test_resize_taps_at_coordinates_a_rounding_off_a_sample(mode, anti):
    """half_pixel_symmetric upsampling by 1.5 puts some outputs a rounding
    away from an input sample (2.0000000000000004): their weights stay on
    the samples around it (the input itself there), as in ONNX Runtime.
    ONNX's reference evaluator picks its neighbours from the coordinate
    shifted by its padding, where the rounding is lost, and so weighs the
    sample one to the left."""
    shape = [1, 1, 7, 10]
    model = _model(shape, dict(scales=[1, 1, 1.5, 1.0]), dict(mode=mode, antialias=anti, exclude_outside=1,
                                                             coordinate_transformation_mode="half_pixel_symmetric"), None, "f32")
    x = np.random.default_rng().standard_normal(shape).astype(np.float32)
    module, params = rlxc.from_onnx(model)
    got = rlxc.interpret(module, {"x": x}, params)[0]
    want = ort_run(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    np.testing.assert_allclose(got[0, 0, 3], x[0, 0, 2], rtol=1e-5, atol=1e-6)  # output 3 lies on sample 2


@pytest.mark.parametrize("t, np_t", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
def test_nearest_tf_crop_and_resize_of_integers_is_exact(t, np_t):
    """nearest tf_crop_and_resize on integer inputs (values past f32's 24
    bits): each output one input sample gathered as it is, or the
    extrapolation value (a whole one: ONNX Runtime truncates 7.9, ONNX's
    reference and rlxc round it); equal to ONNX's reference and, for int32,
    ONNX Runtime. Linear
    on integers with tf_crop_and_resize is an import error, not a wrong
    answer."""
    shape = [1, 3, 8, 8]
    inits = [numpy_helper.from_array(np.asarray([0, 0, -0.2, 0.1, 1, 1, 0.9, 1.2], np.float32), "roi"),
             numpy_helper.from_array(np.asarray([1, 3, 6, 6], np.int64), "sizes")]

    def model(mode):
        node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode, extrapolation_value=7.0,
                                coordinate_transformation_mode="tf_crop_and_resize")
        return make_model([node], [helper.make_tensor_value_info("x", t, shape)], [helper.make_tensor_value_info("y", t, None)],
                          inits, opset=19)

    x = np.random.default_rng().integers(2**26, 2**30, shape).astype(np_t)
    module, params = rlxc.from_onnx(model("nearest"))
    got = rlxc.interpret(module, {"x": x}, params)[0]
    want = ReferenceEvaluator(model("nearest")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    if np_t is np.int32:  # ONNX Runtime has no int64 Resize
        np.testing.assert_array_equal(got, ort_run(model("nearest"), {"x": x})[0])
    assert (got == 7).any() and np.isin(got[got != 7], x).all()
    with pytest.raises(rlxc.OnnxImportError, match=r"mode='linear' .* on a i(32|64) input"):
        rlxc.from_onnx(model("linear"))

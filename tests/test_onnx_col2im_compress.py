"""ONNX Col2Im (a transposed convolution by a one-hot weight) and Compress
(a gather of the selected slices) against ONNX Runtime on fresh random
inputs: strides, dilations and pads, strides that leave the last rows
short; Compress along each axis, flattened, with a short condition; the
import errors; a CUDA twin on the GPU machine."""

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


_model = partial(make_model, opset=18)  # this file's models' opset



def _col2im(n, c, image, block, strides, dil, pads):
    out = [(image[a] + pads[a] + pads[a + 2] - dil[a] * (block[a] - 1) - 1) // strides[a] + 1 for a in range(2)]
    shape = [n, c * block[0] * block[1], out[0] * out[1]]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=strides, dilations=dil, pads=pads)
    model = _model([node], [helper.make_tensor_value_info("x", F, shape)], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(np.array(image, np.int64), "image"),
                    numpy_helper.from_array(np.array(block, np.int64), "block")])
    return model, {"x": np.random.default_rng().standard_normal(shape).astype(np.float32)}


COL2IM = [((2, 3), [7, 9], [3, 3], [1, 1], [1, 1], [0, 0, 0, 0]), ((1, 4), [10, 11], [3, 2], [2, 3], [1, 1], [1, 0, 2, 1]),
          ((2, 2), [9, 8], [2, 3], [2, 2], [2, 1], [0, 1, 1, 0]), ((1, 1), [6, 6], [1, 1], [2, 2], [1, 1], [0, 0, 0, 0])]


@pytest.mark.parametrize("nc,image,block,strides,dil,pads", COL2IM)
def test_col2im_matches_onnxruntime(nc, image, block, strides, dil, pads):
    model, feeds = _col2im(*nc, image, block, strides, dil, pads)
    (want,) = ort_run(model, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axis,cond", [(0, [1, 0, 1]), (1, [0, 1, 1, 0, 1]), (-1, [1, 1]), (None, [0, 1, 0, 0, 1, 1, 0, 1])])
def test_compress_matches_onnxruntime(axis, cond):
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], **attrs)
    model = _model([node], [helper.make_tensor_value_info("x", F, [3, 5, 4])], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(np.array(cond, bool), "c")], opset=11)
    feeds = {"x": np.random.default_rng().standard_normal((3, 5, 4)).astype(np.float32)}
    (want,) = ort_run(model, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    np.testing.assert_array_equal(got, want)


def test_col2im_and_compress_import_errors():
    node = helper.make_node("Compress", ["x", "c"], ["y"], axis=0)
    model = _model([node], [helper.make_tensor_value_info("x", F, [3, 2])], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(np.array([0, 0, 0], bool), "c")], opset=11)
    with pytest.raises(OnnxImportError, match="Compress node .*selects nothing"):
        from_onnx(model)
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"])
    model = _model([node], [helper.make_tensor_value_info("x", F, [1, 9, 30])], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(np.array([7, 9], np.int64), "image"),
                    numpy_helper.from_array(np.array([3, 3], np.int64), "block")])
    with pytest.raises(OnnxImportError, match="30 blocks, but image \\[7, 9\\] with block \\[3, 3\\] holds 5 x 7"):
        from_onnx(model)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("nc,image,block,strides,dil,pads", COL2IM[:3])
def test_col2im_on_cuda_matches_onnxruntime(nc, image, block, strides, dil, pads):
    model, feeds = _col2im(*nc, image, block, strides, dil, pads)
    (want,) = ort_run(model, feeds)
    module, params = from_onnx(model)
    (got,) = rlxc.compile(module, "cuda", params=params).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

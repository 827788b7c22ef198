"""ONNX Col2Im (a transposed convolution by a one-hot weight; 3-D blocks
too) and Compress (a gather of the selected slices) against ONNX Runtime
and a float64 block-by-block sum on fresh random inputs: strides,
dilations and pads, strides that leave the last rows short; Compress along each axis, flattened, with a short condition; the
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
    nd = len(block)
    out = [(image[a] + pads[a] + pads[a + nd] - dil[a] * (block[a] - 1) - 1) // strides[a] + 1 for a in range(nd)]
    shape = [n, c * int(np.prod(block)), int(np.prod(out))]
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


def col2im_reference(x, c, image, block, strides, dil, pads):
    """Col2Im in float64, block by block: column l's tap t of channel ch
    added at the image position l's block start (its index times the
    strides, less the begin pads) plus t's offset times the dilations,
    where that lies inside the image."""
    x = np.asarray(x, np.float64)
    nd = len(block)
    out = [(image[a] + pads[a] + pads[a + nd] - dil[a] * (block[a] - 1) - 1) // strides[a] + 1 for a in range(nd)]
    y = np.zeros((x.shape[0], c, *image))
    k = int(np.prod(block))
    for l, pos in enumerate(np.ndindex(*out)):
        for t, tap in enumerate(np.ndindex(*block)):
            at = [pos[a] * strides[a] - pads[a] + tap[a] * dil[a] for a in range(nd)]
            if all(0 <= at[a] < image[a] for a in range(nd)):
                for ch in range(c):
                    y[(slice(None), ch, *at)] += x[:, ch * k + t, l]
    return y


COL2IM_3D = [((2, 2), [4, 5, 6], [2, 2, 3], [1, 1, 1], [1, 1, 1], [0, 0, 0, 0, 0, 0]),
             ((1, 3), [7, 6, 5], [3, 2, 2], [2, 2, 1], [1, 2, 1], [1, 0, 1, 1, 1, 0]),
             ((1, 2), [8, 5, 7], [2, 3, 2], [3, 1, 2], [2, 1, 1], [0, 1, 0, 1, 0, 1])]


@pytest.mark.parametrize("nc,image,block,strides,dil,pads", COL2IM + COL2IM_3D)
def test_col2im_matches_reference(nc, image, block, strides, dil, pads):
    """2-D and 3-D blocks against the float64 block-by-block sum (within
    1e-5: the one-hot transposed convolution adds the same f32 values)."""
    model, feeds = _col2im(*nc, image, block, strides, dil, pads)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    want = col2im_reference(feeds["x"], nc[1], image, block, strides, dil, pads)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


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
    model = _model([node], [helper.make_tensor_value_info("x", F, [1, 9, 30])], [helper.make_tensor_value_info("y", F, None)],
                   [numpy_helper.from_array(np.array([2, 9], np.int64), "image"),
                    numpy_helper.from_array(np.array([3, 3], np.int64), "block")])
    with pytest.raises(OnnxImportError, match="no whole block along an axis .image axis 0: window 3 "):
        from_onnx(model)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("nc,image,block,strides,dil,pads", COL2IM[:3] + COL2IM_3D[1:])
def test_col2im_on_cuda_matches_reference(nc, image, block, strides, dil, pads):
    model, feeds = _col2im(*nc, image, block, strides, dil, pads)
    want = col2im_reference(feeds["x"], nc[1], image, block, strides, dil, pads)
    module, params = from_onnx(model)
    (got,) = rlxc.compile(module, "cuda", params=params).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

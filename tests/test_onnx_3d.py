"""3-D (NCDHW) Conv, imported as one 2-D convolution over depth-stacked
slices (`spatial._conv3d`), ConvTranspose, as 2-D ones tap by tap along the
depth (`spatial._conv_transpose3d`), and MaxPool, AveragePool and LpPool, imported as
two 2-D pools (`spatial._pool3d`), and MaxPool's Indices output (1-D to
3-D: `spatial._max_pool_with_indices`): against float64 references written here
(convolutions summed tap by tap; a pool over each 3-D window, no
separability assumed) and against ONNX Runtime, on fresh random inputs, on
the numpy backend and on CUDA where a GPU is."""

import os
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import rlxc

sys.path.insert(0, os.path.dirname(__file__))
from onnx_helpers import BACKENDS, assert_kernels_compile, make_model, ort_run  # noqa: E402

ONNX_T = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
NP_T = {"f32": np.float32, "f16": np.float16}


def _out_size(size: int, k: int, s: int, pb: int, pe: int, d: int, ceil: bool) -> int:
    span = (k - 1) * d + 1
    q = (size + pb + pe - span) / s
    out = (int(np.ceil(q)) if ceil else int(np.floor(q))) + 1
    if ceil and (out - 1) * s >= size + pb:  # the last window starts past the input and its left padding
        out -= 1
    return out


def pool3d_reference(x, op, kernel, strides, pads, dil, ceil=False, include_pad=False, p=2):
    """The pool of x [N, C, D, H, W] in float64, window by window: max over
    its elements in the input; the mean over them divided by its elements
    in the input (or, with include_pad, in the padded input: ceil_mode's
    windows past the padding count only what lies inside it); LpPool
    (Σ |x|^p)^(1/p) over its elements in the input."""
    x = np.asarray(x, np.float64)
    sizes = x.shape[2:]
    outs = [_out_size(sizes[a], kernel[a], strides[a], pads[a], pads[a + 3], dil[a], ceil) for a in range(3)]
    y = np.empty(x.shape[:2] + tuple(outs))
    for o in np.ndindex(*outs):
        idx, padded = [], 1
        for a in range(3):
            start = o[a] * strides[a] - pads[a]
            pos = start + dil[a] * np.arange(kernel[a])
            idx.append(pos[(pos >= 0) & (pos < sizes[a])])
            padded *= int(np.sum(pos < sizes[a] + pads[a + 3]))
        win = x[:, :, idx[0]][:, :, :, idx[1]][:, :, :, :, idx[2]].reshape(*x.shape[:2], -1)
        if op == "MaxPool":
            y[(slice(None), slice(None), *o)] = win.max(-1)
        elif op == "AveragePool":
            y[(slice(None), slice(None), *o)] = win.sum(-1) / (padded if include_pad else win.shape[-1])
        else:
            y[(slice(None), slice(None), *o)] = (np.abs(win) ** p).sum(-1) ** (1.0 / p)
    return y


CASES = [
    # op, input shape, attributes
    ("MaxPool", [2, 3, 6, 7, 5], dict(kernel_shape=[2, 3, 2])),
    ("MaxPool", [1, 2, 7, 9, 8], dict(kernel_shape=[3, 3, 2], strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 0], dilations=[1, 2, 2])),
    ("MaxPool", [1, 2, 8, 7, 6], dict(kernel_shape=[3, 2, 3], strides=[2, 2, 2], ceil_mode=1, pads=[1, 1, 0, 0, 0, 1])),
    ("MaxPool", [2, 2, 5, 6, 7], dict(kernel_shape=[2, 3, 3], strides=[2, 1, 2], auto_pad="SAME_UPPER")),
    ("AveragePool", [2, 3, 6, 7, 5], dict(kernel_shape=[2, 3, 2])),
    ("AveragePool", [1, 2, 7, 9, 8], dict(kernel_shape=[3, 3, 2], strides=[2, 2, 1], pads=[1, 1, 1, 1, 1, 0],
                                          count_include_pad=1)),
    ("AveragePool", [1, 2, 7, 9, 8], dict(kernel_shape=[3, 3, 2], strides=[2, 2, 1], pads=[1, 1, 1, 1, 1, 0])),
    ("AveragePool", [1, 2, 8, 7, 6], dict(kernel_shape=[3, 2, 3], strides=[2, 2, 2], ceil_mode=1, pads=[1, 0, 1, 0, 1, 1])),
    ("AveragePool", [1, 2, 8, 7, 6], dict(kernel_shape=[3, 2, 3], strides=[2, 2, 2], ceil_mode=1, pads=[1, 0, 1, 0, 1, 1],
                                          count_include_pad=1)),
    ("AveragePool", [1, 2, 9, 8, 9], dict(kernel_shape=[2, 2, 3], dilations=[2, 3, 1], strides=[1, 2, 2])),
    ("AveragePool", [2, 2, 5, 6, 7], dict(kernel_shape=[2, 3, 3], strides=[2, 1, 2], auto_pad="SAME_LOWER")),
    ("LpPool", [2, 2, 6, 5, 7], dict(kernel_shape=[2, 2, 3], strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1], p=2)),
    ("LpPool", [1, 3, 5, 6, 6], dict(kernel_shape=[3, 2, 2], p=3)),
]  # fmt: skip


def _compare(got, want, dt, tol32, model, x):
    """got against the float64 reference `want` (f32 within tol32, f16
    within 1e-2, relative and of want's largest magnitude) and, in f32,
    against ONNX Runtime's run of `model` on x."""
    assert got.shape == want.shape
    tol = tol32 if dt == "f32" else 1e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    if dt == "f32":
        np.testing.assert_allclose(got, ort_run(model, {"x": x})[0], rtol=tol32, atol=tol32 * np.abs(want).max())


def _model(op, shape, attrs, dt, opset):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    return make_model([node], [helper.make_tensor_value_info("x", ONNX_T[dt], shape)],
                      [helper.make_tensor_value_info("y", ONNX_T[dt], None)], opset=opset)


def _resolved(shape, attrs):
    """kernel, strides, pads, dilations of `attrs` with auto_pad resolved (as
    ONNX defines SAME_UPPER/LOWER: the total padding that keeps ceil(size /
    stride) outputs, the odd element at the end for UPPER)."""
    k = attrs["kernel_shape"]
    nd = len(k)
    s = attrs.get("strides", [1] * nd)
    d = attrs.get("dilations", [1] * nd)
    auto = attrs.get("auto_pad", "NOTSET")
    if auto.startswith("SAME"):
        totals = [max(0, (-(-n // st) - 1) * st + (kk - 1) * dd + 1 - n) for n, kk, st, dd in zip(shape[2:], k, s, d)]
        small = [t // 2 for t in totals]
        begin = small if auto == "SAME_UPPER" else [t - b for t, b in zip(totals, small)]
        pads = begin + [t - b for t, b in zip(totals, begin)]
    else:
        pads = attrs.get("pads", [0] * 2 * nd)
    return k, s, pads, d


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_pool3d_matches_reference_and_onnxruntime(case, dt, backend):
    """Each case against the float64 window-by-window reference (f32 within
    1e-5, f16 within 1e-2 relative of the output's largest magnitude: one
    rounding of the result and of the input's |x|^p in f32) and, in f32,
    against ONNX Runtime."""
    op, shape, attrs = CASES[case]
    opset = 19 if "dilations" in attrs and op == "AveragePool" else 18
    model = _model(op, shape, attrs, dt, opset)
    x = np.random.default_rng().standard_normal(shape).astype(NP_T[dt])
    module, params = rlxc.from_onnx(model)
    got = np.asarray(rlxc.compile(module, backend, params=params).run({"x": x})[0], np.float64)
    k, s, pads, d = _resolved(shape, attrs)
    want = pool3d_reference(x, op, k, s, pads, d, bool(attrs.get("ceil_mode", 0)), bool(attrs.get("count_include_pad", 0)),
                            attrs.get("p", 2))
    _compare(got, want, dt, 1e-5, model, x)


def test_pool3d_keeps_its_errors():
    """A 4-D pool and 3-D LpPool with ceil_mode are import errors naming the
    op, not wrong answers."""
    with pytest.raises(rlxc.OnnxImportError, match=r"4-D pool"):
        rlxc.from_onnx(_model("MaxPool", [1, 1, 3, 3, 3, 3], dict(kernel_shape=[2, 2, 2, 2]), "f32", 18))
    with pytest.raises(rlxc.OnnxImportError, match=r"ceil_mode=1"):
        rlxc.from_onnx(_model("LpPool", [1, 1, 5, 5, 5], dict(kernel_shape=[2, 2, 2], ceil_mode=1), "f32", 18))


def _run_conv(op: str, x, w, b, attrs: dict, dt: str, backend: str):
    """A one-node model of `op` (Conv or ConvTranspose) with w (and b, if
    given) as initializers, and its output on `backend` for x, as float64."""
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if b is not None else [])
    node = helper.make_node(op, ["x", "w"] + (["b"] if b is not None else []), ["y"], **attrs)
    model = make_model([node], [helper.make_tensor_value_info("x", ONNX_T[dt], list(x.shape))],
                       [helper.make_tensor_value_info("y", ONNX_T[dt], None)], inits)
    module, params = rlxc.from_onnx(model)
    return model, np.asarray(rlxc.compile(module, backend, params=params).run({"x": x})[0], np.float64)


def conv3d_reference(x, w, b, strides, pads, dil, groups):
    """The 3-D convolution in float64, tap by tap: y[n, o] = b[o] + Σ over
    the kernel's (i, j, k) and o's group's channels of w[o, c, i, j, k] ·
    the zero-padded x at (d · sd + i · dd, h · sh + j · dh, w · sw + k · dw)."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[a], pads[a + 3]) for a in range(3)])
    kernel = w.shape[2:]
    outs = [(xp.shape[2 + a] - (kernel[a] - 1) * dil[a] - 1) // strides[a] + 1 for a in range(3)]
    o, cg = w.shape[0], w.shape[1]
    og = o // groups
    y = np.zeros((x.shape[0], o, *outs))
    for tap in np.ndindex(*kernel):
        sl = tuple(slice(tap[a] * dil[a], tap[a] * dil[a] + strides[a] * (outs[a] - 1) + 1, strides[a]) for a in range(3))
        patch = xp[(slice(None), slice(None), *sl)]
        for gi in range(groups):
            y[:, gi * og:(gi + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch[:, gi * cg:(gi + 1) * cg],
                                                     w[gi * og:(gi + 1) * og, :, *tap])
    return y if b is None else y + np.asarray(b, np.float64)[None, :, None, None, None]


CONV_CASES = [
    # x shape, w shape, bias, attributes
    ([2, 3, 5, 6, 7], [4, 3, 3, 3, 3], True, {}),
    ([1, 4, 9, 8, 7], [6, 4, 3, 2, 3], False, dict(strides=[2, 1, 2], pads=[1, 0, 1, 2, 1, 0], dilations=[2, 1, 1])),
    ([2, 4, 6, 5, 6], [6, 2, 2, 3, 3], True, dict(group=2, pads=[0, 1, 1, 1, 1, 1])),
    ([1, 6, 7, 6, 5], [6, 1, 3, 3, 3], True, dict(group=6, strides=[1, 2, 1], pads=[1, 1, 1, 1, 1, 1])),  # depthwise
    ([2, 3, 6, 7, 5], [5, 3, 2, 3, 2], True, dict(strides=[2, 2, 1], auto_pad="SAME_UPPER")),
    ([1, 3, 4, 6, 6], [5, 3, 1, 3, 3], True, dict(pads=[0, 1, 1, 0, 1, 1])),  # kernel depth 1
    ([1, 2, 8, 5, 5], [3, 2, 3, 1, 1], False, dict(strides=[3, 1, 1], dilations=[2, 1, 1])),
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv3d_matches_reference_and_onnxruntime(case, dt, backend):
    """Each case against the float64 tap-by-tap convolution (f32 within
    1e-4, f16 within 1e-2 of the output's largest magnitude: sums of up to
    108 products) and, in f32, against ONNX Runtime."""
    xs, ws, bias, attrs = CONV_CASES[case]
    rng = np.random.default_rng()
    x = rng.standard_normal(xs).astype(NP_T[dt])
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(NP_T[dt])
    b = rng.standard_normal(ws[0]).astype(NP_T[dt]) if bias else None
    model, got = _run_conv("Conv", x, w, b, attrs, dt, backend)
    k, s, pads, d = _resolved(xs, dict(attrs, kernel_shape=ws[2:]))
    want = conv3d_reference(x, w, b, s, pads, d, attrs.get("group", 1))
    _compare(got, want, dt, 1e-4, model, x)


def test_conv3d_refuses_a_kernel_past_the_input():
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"])],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 4, 4])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.ones((1, 1, 3, 2, 2), np.float32), "w")])
    with pytest.raises(rlxc.OnnxImportError, match=r"kernel depth of 3"):
        rlxc.from_onnx(model)


def conv_transpose3d_reference(x, w, b, strides, pads, dil, out_pad, groups):
    """The 3-D transposed convolution in float64, tap by tap: x[n, c, d, h,
    w] · w[c, o, i, j, k] added at output (d · sd + i · dd, h · sh + j · dh,
    w · sw + k · dw) of the full output (output_padding past its end), then
    the pads cropped and the bias added."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    cg, og = x.shape[1] // groups, w.shape[1]
    kernel = w.shape[2:]
    full = [(x.shape[2 + a] - 1) * strides[a] + (kernel[a] - 1) * dil[a] + 1 + out_pad[a] for a in range(3)]
    y = np.zeros((x.shape[0], og * groups, *full))
    for tap in np.ndindex(*kernel):
        sl = tuple(slice(tap[a] * dil[a], tap[a] * dil[a] + strides[a] * (x.shape[2 + a] - 1) + 1, strides[a]) for a in range(3))
        for gi in range(groups):
            y[(slice(None), slice(gi * og, (gi + 1) * og), *sl)] += np.einsum(
                "ncdhw,co->nodhw", x[:, gi * cg:(gi + 1) * cg], w[gi * cg:(gi + 1) * cg, :, *tap])
    y = y[(slice(None), slice(None), *(slice(pads[a], full[a] - pads[a + 3]) for a in range(3)))]
    return y if b is None else y + np.asarray(b, np.float64)[None, :, None, None, None]


CONV_T_CASES = [
    # x shape, w shape, bias, attributes (output_shape: against ONNX Runtime alone)
    ([2, 3, 3, 4, 5], [3, 4, 3, 3, 3], True, {}),
    ([1, 4, 4, 3, 5], [4, 2, 3, 2, 3], False, dict(strides=[2, 1, 2], pads=[1, 0, 1, 2, 1, 0], dilations=[2, 1, 1])),
    ([2, 4, 3, 4, 4], [4, 3, 2, 3, 3], True, dict(group=2, strides=[3, 2, 2], output_padding=[2, 1, 0])),
    ([1, 3, 4, 4, 3], [3, 2, 1, 3, 3], True, dict(strides=[2, 2, 1], pads=[0, 1, 1, 0, 1, 1])),  # kernel depth 1
    ([1, 2, 3, 4, 4], [2, 3, 3, 3, 3], True, dict(strides=[2, 2, 2], output_shape=[6, 8, 8])),
    ([1, 2, 3, 4, 4], [2, 3, 3, 3, 2], False, dict(strides=[2, 2, 2], auto_pad="SAME_UPPER")),
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", range(len(CONV_T_CASES)))
def test_conv_transpose3d_matches_reference_and_onnxruntime(case, dt, backend):
    """Each case with explicit pads against the float64 tap-by-tap
    transposed convolution (f32 within 1e-4, f16 within 1e-2 of the output's
    largest magnitude) and, in f32, every case against ONNX Runtime."""
    xs, ws, bias, attrs = CONV_T_CASES[case]
    rng = np.random.default_rng()
    x = rng.standard_normal(xs).astype(NP_T[dt])
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[2:]) * ws[0])).astype(NP_T[dt])
    b = rng.standard_normal(ws[1] * attrs.get("group", 1)).astype(NP_T[dt]) if bias else None
    model, got = _run_conv("ConvTranspose", x, w, b, attrs, dt, backend)
    scale = max(np.abs(got).max(), 1e-30)
    if "output_shape" not in attrs and "auto_pad" not in attrs:
        want = conv_transpose3d_reference(x, w, b, attrs.get("strides", [1] * 3), attrs.get("pads", [0] * 6),
                                          attrs.get("dilations", [1] * 3), attrs.get("output_padding", [0] * 3),
                                          attrs.get("group", 1))
        assert got.shape == want.shape
        tol = 1e-4 if dt == "f32" else 1e-2
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    if dt == "f32":
        want = ort_run(model, {"x": x})[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


def max_pool_indices_reference(x, kernel, strides, pads, dil, ceil, storage_order):
    """MaxPool's values and Indices window by window: the first largest
    element in row-major scan order among the window's elements inside the
    input, and its flat index in x (NC then the spatial axes, column-major
    with storage_order=1)."""
    nd = len(kernel)
    sizes = x.shape[2:]
    outs = [_out_size(sizes[a], kernel[a], strides[a], pads[a], pads[a + nd], dil[a], ceil) for a in range(nd)]
    vals = np.empty(x.shape[:2] + tuple(outs), x.dtype)
    idx = np.empty(x.shape[:2] + tuple(outs), np.int64)
    plane = int(np.prod(sizes))
    for nc in np.ndindex(*x.shape[:2]):
        for o in np.ndindex(*outs):
            best, at = None, None
            for tap in np.ndindex(*kernel):
                p = [o[a] * strides[a] - pads[a] + tap[a] * dil[a] for a in range(nd)]
                if all(0 <= p[a] < sizes[a] for a in range(nd)) and (best is None or x[(*nc, *p)] > best):
                    best, at = x[(*nc, *p)], p
            flat = 0
            for a in (range(nd) if storage_order == 0 else reversed(range(nd))):
                flat = flat * sizes[a] + at[a]
            vals[(*nc, *o)] = best
            idx[(*nc, *o)] = (nc[0] * x.shape[1] + nc[1]) * plane + flat
    return vals, idx


INDEX_CASES = [
    ([2, 3, 9], dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ([2, 2, 7, 8], dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1])),
    ([1, 3, 8, 7], dict(kernel_shape=[2, 3], strides=[2, 2], dilations=[2, 1], ceil_mode=1, storage_order=1)),
    ([1, 2, 6, 6], dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 1])),
    ([1, 2, 5, 6, 7], dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[0, 1, 1, 1, 1, 0])),
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_max_pool_indices_match_reference(case, dt, backend):
    """MaxPool's values and Indices (1-D, 2-D, 3-D; pads, strides, dilations,
    ceil_mode, storage_order) exactly equal to the window-by-window
    reference (fresh random inputs: no ties) and, for the 2-D f32 cases, to
    ONNX Runtime's."""
    shape, attrs = INDEX_CASES[case]
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    model = make_model([node], [helper.make_tensor_value_info("x", ONNX_T[dt], shape)],
                       [helper.make_tensor_value_info("y", ONNX_T[dt], None), helper.make_tensor_value_info("i", TensorProto.INT64, None)],
                       opset=12)
    x = np.random.default_rng().standard_normal(shape).astype(NP_T[dt])
    module, params = rlxc.from_onnx(model)
    vals, idx = rlxc.compile(module, backend, params=params).run({"x": x})
    k, s, pads, d = _resolved(shape, attrs)
    want_v, want_i = max_pool_indices_reference(x, k, s, pads, d, bool(attrs.get("ceil_mode", 0)), attrs.get("storage_order", 0))
    np.testing.assert_array_equal(np.asarray(vals), want_v)
    np.testing.assert_array_equal(idx, want_i)
    if dt == "f32" and len(shape) == 4:
        ort_v, ort_i = ort_run(model, {"x": x})
        np.testing.assert_array_equal(vals, ort_v)
        np.testing.assert_array_equal(idx, ort_i)


def test_max_pool_indices_refuses_a_window_past_the_padded_input():
    """A MaxPool with Indices whose window (4, dilated 2: 7 wide) is wider
    than its padded axis (5 + 1) is an import error naming the axis."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 4], dilations=[1, 2], pads=[0, 1, 0, 0])
    model = make_model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 5])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                        helper.make_tensor_value_info("i", TensorProto.INT64, None)], opset=12)
    with pytest.raises(rlxc.OnnxImportError, match=r"window covers more than the padded input .*spatial axis 1: "
                                                      r"window 4 \(dilation 2\) does not fit an extent of 5 padded by 1\+0"):
        rlxc.from_onnx(model)


def _first_models():
    """One model per import path this file tests (a 3-D pool, Conv,
    ConvTranspose, MaxPool with indices; f16 where the path has a 16-bit
    form), built as the tests build them."""
    op, shape, attrs = CASES[5]  # AveragePool, count_include_pad, pads
    models = [_model(op, shape, attrs, "f16", 18)]
    xs, ws, _, attrs = CONV_CASES[2]  # groups
    models.append(make_model([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                             [numpy_helper.from_array(np.ones(ws, np.float32), "w")]))
    xs, ws, _, attrs = CONV_T_CASES[2]  # groups, strides, output_padding
    models.append(make_model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)],
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT16, xs)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)],
                             [numpy_helper.from_array(np.ones(ws, np.float16), "w")]))
    shape, attrs = INDEX_CASES[2]  # ceil_mode, dilations, storage_order=1
    models.append(make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)],
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                              helper.make_tensor_value_info("i", TensorProto.INT64, None)], opset=12))
    return models


@pytest.mark.parametrize("which", range(4))
def test_3d_models_compile_for_the_gpu(which):
    """Without a GPU: each path's model through the CUDA pipeline, every
    generated kernel compiled by NVRTC for sm_90 with no spills (the -inf
    padding of MaxPool's unfolded windows among them)."""
    module, _ = rlxc.from_onnx(_first_models()[which])
    assert_kernels_compile(module)


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_video_network_matches_onnxruntime(backend):
    """A small 3-D network as a video model's stem and head: Conv (stride 2,
    pads) + BatchNormalization + Relu, MaxPool, a depthwise Conv, Add (a
    residual), ConvTranspose (stride 2), AveragePool, GlobalAveragePool,
    Flatten, Gemm; against ONNX Runtime in f32 on fresh random inputs and
    weights (within 1e-4 of the output's largest magnitude)."""
    rng = np.random.default_rng()

    def w(name, shape, scale=None):
        scale = scale if scale is not None else 1 / np.sqrt(np.prod(shape[1:]))
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [w("w1", [8, 3, 3, 5, 5]), w("b1", [8], 0.1), w("bn_s", [8], 0.2), w("bn_b", [8], 0.2), w("bn_m", [8], 0.2),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn_v"),
             w("w2", [8, 1, 3, 3, 3]), w("wt", [8, 4, 2, 2, 2]), w("bt", [4], 0.1), w("wf", [10, 4]), w("bf", [10], 0.1)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[1, 2, 2], pads=[1, 2, 2, 1, 2, 2]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[1, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], group=8, pads=[1, 1, 1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "p1"], ["a2"]),
        helper.make_node("ConvTranspose", ["a2", "wt", "bt"], ["t3"], strides=[2, 2, 2]),
        helper.make_node("AveragePool", ["t3"], ["p3"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        helper.make_node("GlobalAveragePool", ["p3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 32, 32])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])], inits)
    x = rng.standard_normal((2, 3, 6, 32, 32)).astype(np.float32)
    module, params = rlxc.from_onnx(model)
    got = rlxc.compile(module, backend, params=params).run({"x": x})[0]
    want = ort_run(model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())

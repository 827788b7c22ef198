"""ONNX DFT, STFT and MelWeightMatrix (rlxc/frontends/onnx/spectral.py)
against float64 numpy (numpy.fft) on fresh random signals: forward and
inverse, full and one-sided (rfft, irfft), real and complex inputs, every
axis, dft_length cutting and padding the signal, both opsets' forms;
STFT with and without a window; the mel filter bank against ONNX's
reference evaluator; a log-mel spectrogram end to end; f16; the import
errors; the kernels compiled by NVRTC; a CUDA twin on the GPU machine."""

from functools import partial

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_helpers import make_model  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402

F = TensorProto.FLOAT


_model = partial(make_model, opset=20)  # this file's models' opset


def _ints(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def _rel(got, want):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.isfinite(got).all()
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def _complex(a):
    return a[..., 0] + 1j * a[..., 1] if a.shape[-1] == 2 else a[..., 0]


def _pack(z):
    return np.stack([z.real, z.imag], -1)


def _dft_case(shape, axis, length, inverse, onesided, opset):
    ins = [helper.make_tensor_value_info("x", F, list(shape))]
    names, inits, attrs = ["x", "L" if length else ""], [], {"inverse": int(inverse), "onesided": int(onesided)}
    if length:
        inits.append(_ints("L", length))
    if opset >= 20:
        names.append("A")
        inits.append(_ints("A", axis))
    else:
        attrs["axis"] = axis
    while names[-1] == "":
        names.pop()
    node = helper.make_node("DFT", names, ["y"], **attrs)
    return _model([node], ins, [helper.make_tensor_value_info("y", F, None)], inits, opset=opset)


CASES = [  # shape (last axis: 1 real, 2 complex), axis, dft_length, inverse, onesided
    ((3, 40, 1), 1, None, False, False), ((3, 40, 2), 1, None, False, False), ((4, 37, 2), 1, None, False, True),
    ((2, 30, 1), 1, 48, False, True), ((2, 30, 2), 1, 20, False, False), ((5, 6, 33, 2), -2, None, False, False),
    ((5, 33, 6, 1), 1, None, False, True), ((3, 40, 2), 1, None, True, False), ((3, 21, 2), 1, None, True, True),
    ((3, 21, 2), 1, 41, True, True), ((2, 12, 9, 2), 2, 16, True, False), ((2, 17, 1), 1, None, True, False),
]


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("shape,axis,length,inverse,onesided", CASES)
def test_dft_matches_numpy_fft(shape, axis, length, inverse, onesided, opset):
    if opset == 17 and axis < 0:
        axis += len(shape)
    rng = np.random.default_rng()
    x = rng.standard_normal(shape).astype(np.float32)
    ax = axis % len(shape)
    z = _complex(x.astype(np.float64))
    if inverse and onesided:
        n = length or 2 * (shape[ax] - 1)
        want = np.fft.irfft(z, n=n, axis=ax)[..., None]
    elif inverse:
        want = _pack(np.fft.ifft(z, n=length, axis=ax))
    else:
        y = np.fft.fft(z, n=length, axis=ax)
        if onesided:
            y = np.take(y, np.arange(y.shape[ax] // 2 + 1), ax)
        want = _pack(y)
    module, params = from_onnx(_dft_case(shape, axis, length, inverse, onesided, opset))
    (got,) = rlxc.interpret(module, {"x": x}, params)
    assert _rel(got, want) < 2e-6


def _stft_model(batch, length, step, frame, window, onesided=1, channels=1, dtype=F):
    names = ["x", "step", "w" if window else "", "fl"]
    ins = [helper.make_tensor_value_info("x", dtype, [batch, length, channels])]
    if window:
        ins.append(helper.make_tensor_value_info("w", dtype, [frame]))
    node = helper.make_node("STFT", names, ["y"], onesided=onesided)
    return _model([node], ins, [helper.make_tensor_value_info("y", dtype, None)],
                  [_ints("step", step), _ints("fl", frame)], opset=17)


def _stft_reference(x, step, frame, window, onesided):
    z = _complex(x.astype(np.float64))
    frames = 1 + (z.shape[1] - frame) // step
    idx = np.arange(frames)[:, None] * step + np.arange(frame)[None, :]
    f = z[:, idx] * (np.ones(frame) if window is None else window.astype(np.float64))
    y = np.fft.fft(f, axis=-1)
    return _pack(y[..., : frame // 2 + 1] if onesided else y)


@pytest.mark.parametrize("length,step,frame,window,onesided,channels", [
    (1600, 160, 400, True, 1, 1), (1000, 128, 256, False, 1, 1), (999, 100, 200, True, 0, 2), (300, 7, 64, True, 1, 2),
])
def test_stft_matches_numpy(length, step, frame, window, onesided, channels):
    rng = np.random.default_rng()
    x = rng.standard_normal((2, length, channels)).astype(np.float32)
    w = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame) / frame)).astype(np.float32) if window else None
    feeds = {"x": x, **({"w": w} if window else {})}
    module, params = from_onnx(_stft_model(2, length, step, frame, window, onesided, channels))
    (got,) = rlxc.interpret(module, feeds, params)
    assert _rel(got, _stft_reference(x, step, frame, w, onesided)) < 2e-6


@pytest.mark.parametrize("mels,length,rate,lo,hi", [(8, 16, 8192, 0, 4096), (80, 400, 16000, 0.0, 8000.0),
                                                    (40, 512, 22050, 20.0, 8000.0), (13, 256, 16000, 300.0, 7600.0)])
def test_mel_weight_matrix_matches_the_onnx_reference(mels, length, rate, lo, hi):
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("MelWeightMatrix", ["m", "n", "r", "lo", "hi"], ["y"])
    inits = [_ints("m", mels), _ints("n", length), _ints("r", rate),
             numpy_helper.from_array(np.array(lo, np.float32), "lo"), numpy_helper.from_array(np.array(hi, np.float32), "hi")]
    model = _model([node], [], [helper.make_tensor_value_info("y", F, None)], inits, opset=17)
    (want,) = ReferenceEvaluator(model).run(None, {})
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {}, params)
    np.testing.assert_array_equal(got, want)


def _log_mel_model(length, dtype=F):
    """Whisper's front end in ONNX ops: STFT (Hann window, 400 / 160), power,
    mel filter bank (80 of 201 bins), log10 of at least 1e-10."""
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)).astype(np.float32)
    nodes = [
        helper.make_node("STFT", ["x", "step", "hann", "fl"], ["s"]),
        helper.make_node("Mul", ["s", "s"], ["s2"]),
        helper.make_node("ReduceSum", ["s2", "last"], ["power"], keepdims=0),
        helper.make_node("MelWeightMatrix", ["m", "fl", "r", "lo", "hi"], ["mel"]),
        helper.make_node("MatMul", ["power", "mel"], ["mp"]),
        helper.make_node("Max", ["mp", "eps"], ["mc"]),
        helper.make_node("Log", ["mc"], ["ln"]),
        helper.make_node("Div", ["ln", "ln10"], ["y"]),
    ]
    f = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
    inits = [_ints("step", 160), _ints("fl", 400), numpy_helper.from_array(hann, "hann"), _ints("last", [-1]),
             _ints("m", 80), _ints("r", 16000), f("lo", 0.0), f("hi", 8000.0), f("eps", 1e-10), f("ln10", np.log(10.0))]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [1, length, 1])],
                  [helper.make_tensor_value_info("y", F, None)], inits, opset=17)


def test_log_mel_spectrogram_matches_float64():
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng()
    x = (0.1 * rng.standard_normal((1, 16000, 1))).astype(np.float32)  # a second of audio
    model = _log_mel_model(16000)
    mel = ReferenceEvaluator(make_model([model.graph.node[3]], [], [helper.make_tensor_value_info("mel", F, None)],
                                        model.graph.initializer)).run(None, {})[0].astype(np.float64)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    power = (np.abs(_complex(_stft_reference(x, 160, 400, hann, 1))) ** 2)
    want = np.log10(np.maximum(power @ mel, 1e-10))
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    assert got.shape == (1, 98, 80) and _rel(got, want) < 1e-5


def test_dft_f16_is_computed_in_f32():
    rng = np.random.default_rng()
    x = rng.standard_normal((2, 64, 1)).astype(np.float16)
    node = helper.make_node("DFT", ["x"], ["y"], axis=1, onesided=1)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 64, 1])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], opset=17)
    want = _pack(np.fft.rfft(x[..., 0].astype(np.float64), axis=1))
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    assert got.dtype == np.float16 and _rel(got, want) < 1e-3


def test_spectral_import_errors():
    node = helper.make_node("DFT", ["x"], ["y"], axis=2)
    model = _model([node], [helper.make_tensor_value_info("x", F, [2, 8, 2])], [helper.make_tensor_value_info("y", F, None)],
                   opset=17)
    with pytest.raises(OnnxImportError, match="DFT node .*axis is the complex axis"):
        from_onnx(model)
    node = helper.make_node("DFT", ["x"], ["y"], axis=1)
    model = _model([node], [helper.make_tensor_value_info("x", F, [2, 8, 3])], [helper.make_tensor_value_info("y", F, None)],
                   opset=17)
    with pytest.raises(OnnxImportError, match="last axis has 3 elements"):
        from_onnx(model)
    node = helper.make_node("STFT", ["x", "step"], ["y"])
    model = _model([node], [helper.make_tensor_value_info("x", F, [1, 100, 1]),
                            helper.make_tensor_value_info("step", TensorProto.INT64, [])],
                   [helper.make_tensor_value_info("y", F, None)], opset=17)
    with pytest.raises(OnnxImportError, match="frame_step .*must be a constant at import"):
        from_onnx(model)


def test_spectral_kernels_compile():
    """The log-mel front end lowered for sm_90: every kernel compiles with
    NVRTC (no GPU needed)."""
    from test_codegen import compile_all

    module, _ = from_onnx(_log_mel_model(4000))
    assert compile_all(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"), "sm_90") > 0


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_log_mel_and_dft_on_cuda_match_float64():
    """On CUDA the DFT matmuls run on cuBLASLt, whose f32 gemms may use
    TF32 (METHOD.md: near 3e-4)."""
    rng = np.random.default_rng()
    x = (0.1 * rng.standard_normal((1, 16000, 1))).astype(np.float32)
    module, params = from_onnx(_log_mel_model(16000))
    ref, rparams = from_onnx(_log_mel_model(16000))
    (want,) = rlxc.interpret(ref, {"x": x}, rparams)
    (got,) = rlxc.compile(module, "cuda", params=params).run({"x": x})
    assert _rel(got, np.asarray(want, np.float64)) < 1e-3
    z = rng.standard_normal((8, 512, 2)).astype(np.float32)
    module, params = from_onnx(_dft_case((8, 512, 2), 1, None, False, False, 20))
    (got,) = rlxc.compile(module, "cuda", params=params).run({"x": z})
    assert _rel(got, _pack(np.fft.fft(_complex(z.astype(np.float64)), axis=1))) < 1e-3

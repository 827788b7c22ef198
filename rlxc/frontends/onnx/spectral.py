"""Emitters of DFT, STFT and MelWeightMatrix (audio front ends: a log-mel
spectrogram's STFT and filter bank). A DFT of a static length N is two
matmuls by constant cosine and sine matrices (built in float64 at import,
stored as f32): O(N²) work a transform, which the gemm units make cheap
at the lengths audio models frame with (400-2048); computed in f32 for
f16/bf16 inputs, rounded once. Complex values are ONNX's: a last axis of 2
(real, imaginary), or 1 for a real signal."""

from __future__ import annotations

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Const, Node, Value, _dtype_of, as_type, cast_const, emitter, in_f32


def _const(n: Node, a: np.ndarray) -> Tensor:
    return n.imp.constant(np.asarray(a, np.float32), "f32")


def _parts(n: Node, x: Tensor) -> tuple[Tensor, Tensor | None]:
    """x [..., 1 or 2] (f32) as its real and imaginary parts (None: real)."""
    g, c = n.g, x.shape[-1]
    if c not in (1, 2):
        raise n.error(f"the last axis has {c} elements; it must be 1 (real) or 2 (real, imaginary)")
    drop = list(x.shape[:-1])
    re = g.reshape(g.slice(x, [0], [1], [x.ndim - 1]), drop)
    im = g.reshape(g.slice(x, [1], [2], [x.ndim - 1]), drop) if c == 2 else None
    return re, im


def _fit(n: Node, t: Tensor, length: int) -> Tensor:
    """t's last axis cut or zero-padded to `length` (numpy.fft's `n`)."""
    have = t.shape[-1]
    if have > length:
        return n.g.slice(t, [0], [length], [t.ndim - 1])
    if have < length:
        return n.g.pad(t, [0] * t.ndim, [0] * (t.ndim - 1) + [length - have])
    return t


def _transform(n: Node, re: Tensor, im: Tensor | None, length: int, inverse: bool, onesided: bool
               ) -> tuple[Tensor, Tensor | None]:
    """The DFT of length `length` over the last axis of (re, im): its real
    and imaginary parts (imaginary None for the inverse of a one-sided
    spectrum, a real signal)."""
    g = n.g
    if inverse and onesided:  # numpy.fft.irfft: the first length // 2 + 1 bins, Hermitian
        k_in = length // 2 + 1
        re = _fit(n, re, k_in)
        k, j = np.meshgrid(np.arange(k_in), np.arange(length), indexing="ij")
        w = np.full(k_in, 2.0)
        w[0] = 1.0
        if length % 2 == 0:
            w[-1] = 1.0
        ang = 2.0 * np.pi * ((k * j) % length) / length
        y = g.matmul(re, _const(n, w[:, None] * np.cos(ang) / length))
        if im is not None:
            y = g.sub(y, g.matmul(_fit(n, im, k_in), _const(n, w[:, None] * np.sin(ang) / length)))
        return y, None
    re = _fit(n, re, length)
    im = _fit(n, im, length) if im is not None else None
    bins = length // 2 + 1 if onesided else length
    j, k = np.meshgrid(np.arange(length), np.arange(bins), indexing="ij")
    ang = 2.0 * np.pi * ((j * k) % length) / length  # exact phases: (j k) mod N before the float
    scale = 1.0 / length if inverse else 1.0
    cos, sin = _const(n, np.cos(ang) * scale), _const(n, np.sin(ang) * scale)
    sign = 1.0 if inverse else -1.0  # e^{∓2πi jk/N}
    yr, yi = g.matmul(re, cos), g.matmul(re, sin)
    if sign < 0:
        yi = g.neg(yi)
    if im is not None:  # (a + ib)(cos ± i sin) = a cos ∓ b sin + i(b cos ± a sin)
        b_sin = g.matmul(im, sin)
        yr = g.add(yr, b_sin) if sign < 0 else g.sub(yr, b_sin)
        yi = g.add(yi, g.matmul(im, cos))
    return yr, yi


def _complex(n: Node, re: Tensor, im: Tensor | None) -> Tensor:
    """(re, im) as ONNX's [..., 2] (or [..., 1] without im)."""
    g = n.g
    one = list(re.shape) + [1]
    parts = [g.reshape(re, one)] + ([g.reshape(im, one)] if im is not None else [])
    return g.concat(parts, re.ndim) if len(parts) > 1 else parts[0]


def _dft(n: Node, axis: int) -> list[Value]:
    x = n.tensor(0)
    if x.ndim < 2:
        raise n.error(f"a rank-{x.ndim} input: DFT needs a signal axis and the complex axis")
    axis = axis % x.ndim
    if axis == x.ndim - 1:
        raise n.error("axis is the complex axis (the last)")
    inverse, onesided = bool(n.attr("inverse", 0)), bool(n.attr("onesided", 0))
    length = n.const(1, "dft_length")
    length = (int(np.ravel(length)[0]) if length is not None
              else 2 * (x.shape[axis] - 1) if inverse and onesided else x.shape[axis])
    if length < 1:
        raise n.error(f"dft_length {length}")
    g = n.g

    def dft(xf: Tensor) -> Tensor:
        re, im = _parts(n, xf)
        last = re.ndim - 1
        perm = [a for a in range(re.ndim) if a != axis] + [axis]
        back = np.argsort(perm).tolist()
        if axis != last:
            re = g.transpose(re, perm)
            im = g.transpose(im, perm) if im is not None else None
        yr, yi = _transform(n, re, im, length, inverse, onesided)
        if axis != last:
            yr = g.transpose(yr, back)
            yi = g.transpose(yi, back) if yi is not None else None
        return _complex(n, yr, yi)

    return [in_f32(n, x, dft)]


@emitter("DFT", since=17)
def _dft17(n: Node) -> list[Value]:
    """The signal axis an attribute (default 1), dft_length input #1."""
    return _dft(n, int(n.attr("axis", 1)))


@emitter("DFT", since=20)
def _dft20(n: Node) -> list[Value]:
    """The signal axis input #2 (default -2), known at import."""
    axis = n.const(2, "axis")
    return _dft(n, -2 if axis is None else int(np.ravel(axis)[0]))


@emitter("STFT")
def _stft(n: Node) -> list[Value]:
    """signal [batch, length, 1 or 2] -> [batch, frames, bins, 2]: frames of
    frame_length every frame_step (1 + (length - frame_length) // step of
    them, gathered by constant indices), each times the window (ones when
    absent), then its DFT (onesided: frame_length // 2 + 1 bins)."""
    x = n.tensor(0)
    if x.ndim != 3:
        raise n.error(f"signal {x.shape}: it must be [batch, length, 1 or 2]")
    step = n.const(1, "frame_step")
    if step is None:
        raise n.error("frame_step (input #1) is required")
    step = int(np.ravel(step)[0])
    window = n.tensor(2) if n.input(2) is not None else None
    fl = n.const(3, "frame_length")
    fl = int(np.ravel(fl)[0]) if fl is not None else window.shape[0] if window is not None else x.shape[1]
    if window is not None and window.shape != (fl,):
        raise n.error(f"a window of {window.shape} for frames of {fl}")
    if step < 1 or fl < 1 or fl > x.shape[1]:
        raise n.error(f"frames of {fl} every {step} over a signal of {x.shape[1]}")
    frames = 1 + (x.shape[1] - fl) // step
    g = n.g
    idx = n.imp.constant((np.arange(frames)[:, None] * step + np.arange(fl)[None, :]).astype(np.int64), "i64")

    def stft(xf: Tensor) -> Tensor:
        re, im = _parts(n, xf)  # [batch, length]
        re = g.gather(re, idx, 1)  # [batch, frames, frame_length]
        im = g.gather(im, idx, 1) if im is not None else None
        if window is not None:
            w = as_type(g, window, "f32")
            re = g.mul(re, w)
            im = g.mul(im, w) if im is not None else None
        return _complex(n, *_transform(n, re, im, fl, False, bool(n.attr("onesided", 1))))

    return [in_f32(n, x, stft)]


@emitter("MelWeightMatrix")
def _mel_weight_matrix(n: Node) -> list[Value]:
    """The [dft_length // 2 + 1, num_mel_bins] triangular filter bank, built
    at import as ONNX's reference builds it (HTK mel scale, bins rounded down
    to DFT indices), as output_datatype."""
    vals = [n.const(i, name) for i, name in enumerate(
        ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"))]
    if any(v is None for v in vals):
        raise n.error("all five inputs are required")
    mels, length, rate = (int(np.ravel(v)[0]) for v in vals[:3])
    lo, hi = (float(np.ravel(v)[0]) for v in vals[3:])
    if mels < 1 or length < 1 or rate < 1:
        raise n.error(f"num_mel_bins {mels}, dft_length {length}, sample_rate {rate}")
    bins = length // 2 + 1
    lo_mel = 2595 * np.log1p(lo / 700) / np.log(10)
    hi_mel = 2595 * np.log1p(hi / 700) / np.log(10)
    points = np.arange(mels + 2) * ((hi_mel - lo_mel) / (mels + 2)) + lo_mel
    points = ((length + 1) * (700 * np.expm1(points / 2595 * np.log(10)))) // rate
    points = points.astype(int)
    if points.min() < 0 or points.max() >= bins + 1:
        raise n.error(f"edges {lo}-{hi} Hz at {rate} Hz fall outside the {bins} DFT bins")
    out = np.zeros((bins + 1, mels))  # one spare row: a right edge at `bins` (no weight there)
    for i in range(mels):
        left, centre, right = points[i], points[i + 1], points[i + 2]
        if centre == left:
            out[centre, i] = 1
        else:
            out[left:centre + 1, i] = (np.arange(left, centre + 1) - left) / (centre - left)
        if right > centre:
            out[centre:right, i] = (right - np.arange(centre, right)) / (right - centre)
    to = _dtype_of(int(n.attr("output_datatype", 1)), f"{n.where}: output_datatype")
    return [cast_const(n, Const(out[:bins].astype(np.float32), "f32"), to)]

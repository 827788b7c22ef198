"""Emitters of Conv, ConvTranspose, MaxPool, AveragePool, the global pools and
Resize (1-D forms as 2-D with a height of 1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.conv import resize_source_coords, window_out
from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    Node,
    Value,
    as_type,
    emitter,
    in_f32,
)


def _split_pads(totals: Sequence[int], auto: str) -> list[int]:
    """ONNX pads [begins..., ends...] from each axis's total padding: SAME_UPPER
    puts the odd element at the end, anything else (SAME_LOWER, and
    ConvTranspose's explicit output_shape) at the beginning."""
    upper = auto == "SAME_UPPER"
    begin = [t // 2 if upper else t - t // 2 for t in totals]
    return begin + [t - b for t, b in zip(totals, begin)]


def _spatial_pads(n: Node, x_shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                  dilations: Sequence[int]) -> list[int]:
    """ONNX pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...], auto_pad resolved."""
    auto = n.attr("auto_pad", "NOTSET")
    nd = len(kernel)
    if auto in ("NOTSET", "VALID"):
        pads = list(n.attr("pads", [0] * 2 * nd)) if auto == "NOTSET" else [0] * 2 * nd
        return pads
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise n.unsupported(f"auto_pad={auto}", "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    totals = [max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
              for size, k, s, d in zip(x_shape, kernel, strides, dilations)]
    return _split_pads(totals, auto)


@emitter("Conv")
def _conv(n: Node) -> list[Value]:
    """2-D convolutions as they are; 1-D ones as 2-D with a height of 1
    (views); 3-D ones as one 2-D convolution (`_conv3d`)."""
    return [conv(n, n.tensor(0), n.tensor(1), n.tensor(2) if n.input(2) is not None else None)]


def conv(n: Node, x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """`n`'s convolution (its attributes) of x by w (+ b): 2-D as it is, 1-D
    as 2-D with a height of 1 (views), 3-D as a 2-D one (`_conv3d`)."""
    nd = x.ndim - 2
    if nd not in (1, 2, 3):
        raise n.unsupported(f"a {nd}-D convolution", "1-D, 2-D and 3-D")
    kernel = list(w.shape[2:])
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    pads = _spatial_pads(n, x.shape[2:], kernel, strides, dil)
    if nd == 3:
        return _conv3d(n, x, w, b, strides, pads, dil, n.attr("group", 1))
    if nd == 1:
        x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
        w = n.g.reshape(w, [*w.shape[:2], 1, w.shape[2]])
        strides, dil, pads = [1, *strides], [1, *dil], [0, pads[0], 0, pads[1]]
    y = n.g.conv2d(x, w, b, strides, pads, dil, n.attr("group", 1))
    return n.g.reshape(y, [*y.shape[:2], y.shape[3]]) if nd == 1 else y


def _conv3d(n: Node, x: Tensor, w: Tensor, b: Tensor | None, strides: list[int], pads: list[int], dil: list[int],
            groups: int) -> Tensor:
    """A 3-D convolution of x [N, C, D, H, W] by w [O, C/g, kd, kh, kw] as one
    2-D convolution: x padded along D, its kd depth slices of each output
    depth (d · stride + i · dilation, i < kd) stacked into the channels in
    (group, i, channel) order with the output depths folded into the batch,
    [N · D', g · kd · C/g, H, W], by w as [O, kd · C/g, kh, kw]; then
    [N, D', O, H', W'] back to [N, O, D', H', W']. The stacked input is kd
    times x's size (the depth axis's im2col)."""
    nb, c, d, h, wd = x.shape
    o, cg, kd = w.shape[0], w.shape[1], w.shape[2]
    try:
        dout = window_out("depth", d, kd, strides[0], pads[0], pads[3], dil[0])
    except VerifyException:
        raise n.unsupported(f"a kernel depth of {(kd - 1) * dil[0] + 1} (dilated) over a padded depth of "
                            f"{d + pads[0] + pads[3]}", "kernels that fit the padded input") from None
    if pads[0] or pads[3]:
        x = n.g.pad(x, [0, 0, pads[0], 0, 0], [0, 0, pads[3], 0, 0])
    taps = []
    for i in range(kd):
        start = i * dil[0]
        s = n.g.slice(x, [start], [start + (dout - 1) * strides[0] + 1], [2], [strides[0]])  # [N, C, D', H, W]
        taps.append(n.g.reshape(s, [nb, groups, 1, cg, dout, h, wd]))
    stacked = taps[0] if kd == 1 else n.g.concat(taps, 2)  # [N, g, kd, C/g, D', H, W]
    x2 = n.g.reshape(n.g.transpose(stacked, [0, 4, 1, 2, 3, 5, 6]), [nb * dout, groups * kd * cg, h, wd])
    w2 = n.g.reshape(n.g.transpose(w, [0, 2, 1, 3, 4]), [o, kd * cg, *w.shape[3:]])
    y = n.g.conv2d(x2, w2, b, strides[1:], [pads[1], pads[2], pads[4], pads[5]], dil[1:], groups)  # [N·D', O, H', W']
    y = n.g.reshape(y, [nb, dout, o, *y.shape[2:]])
    return n.g.transpose(y, [0, 2, 1, 3, 4])


@emitter("MaxPool", "AveragePool", "LpPool")
def _pool(n: Node) -> list[Value]:
    """2-D pools as they are; 1-D pools as 2-D with a height of 1 (views);
    3-D pools as two 2-D pools (`_pool3d`). LpPool is (Σ |x|^p)^(1/p) over
    each window: an average pool of |x|^p counting the padding, times the
    window's size (in f32 for 16-bit)."""
    x = n.tensor(0)
    nd = x.ndim - 2
    if nd not in (1, 2, 3):
        raise n.unsupported(f"a {nd}-D pool", "1-D (NCW), 2-D (NCHW) and 3-D (NCDHW)")
    kernel = list(n.attr("kernel_shape"))
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    pads = _spatial_pads(n, x.shape[2:], kernel, strides, dil)
    ceil = bool(n.attr("ceil_mode", 0))
    if n.op_type == "MaxPool" and len(n.proto.output) > 1 and n.proto.output[1]:
        return _max_pool_with_indices(n, x, kernel, strides, pads, dil, ceil, int(n.attr("storage_order", 0)))
    include = bool(n.attr("count_include_pad", 0))

    def pool2d(x: Tensor, kernel: list[int], strides: list[int], pads: list[int], dil: list[int]) -> Tensor:
        if n.op_type == "MaxPool":
            return n.g.max_pool2d(x, kernel, strides, pads, dilation=dil, ceil_mode=ceil)
        if n.op_type == "LpPool":
            return n.g.avg_pool2d(x, kernel, strides, pads, True, dilation=dil)
        return n.g.avg_pool2d(x, kernel, strides, pads, include, dilation=dil, ceil_mode=ceil)

    def pool(x: Tensor) -> Tensor:
        if nd == 3:
            return _pool3d(n, x, pool2d, kernel, strides, pads, dil)
        if nd == 1:
            x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
            y = pool2d(x, [1, *kernel], [1, *strides], [0, pads[0], 0, pads[1]], [1, *dil])
            return n.g.reshape(y, [*y.shape[:2], y.shape[3]])
        return pool2d(x, kernel, strides, pads, dil)

    if n.op_type == "LpPool":
        if ceil:  # windows past the padding would average over fewer than the kernel's elements
            raise n.unsupported("ceil_mode=1", "ceil_mode=0")
        p = float(n.attr("p", 2))
        return [in_f32(n, x, lambda x: _lp_root(n, n.g.mul(pool(_lp_power(n, x, p)),
                                                          n.imp.scalar(float(np.prod(kernel)), x.dtype)), p))]
    if n.op_type == "AveragePool" and nd == 3:  # the first pass's means not rounded to 16 bits
        return [in_f32(n, x, pool)]
    return [pool(x)]


def _max_pool_with_indices(n: Node, x: Tensor, kernel: list[int], strides: list[int], pads: list[int], dil: list[int],
                           ceil: bool, storage_order: int) -> list[Value]:
    """MaxPool with its Indices output: the windows unfolded, a strided
    slice of x (padded with -inf) per kernel tap stacked on a last axis, the
    max and its first tap (`rlx.argmax`, the taps in row-major order, as
    ONNX's reference scans them), and the tap mapped to the input element's
    flat index in x (NCHW..., the spatial part column-major with
    storage_order=1) through a constant table of each output's taps.
    Padded positions are never the index unless the window's real elements
    are all -inf."""
    g, nd = n.g, len(kernel)
    sizes = list(x.shape[2:])
    try:
        out = [window_out(f"spatial axis {a}", sizes[a], kernel[a], strides[a], pads[a], pads[a + nd], dil[a], ceil)
               for a in range(nd)]
    except VerifyException as e:
        raise n.error(f"the window covers more than the padded input ({sizes} with pads {pads}): {e}") from None
    ends = [max(pads[a + nd], (out[a] - 1) * strides[a] + (kernel[a] - 1) * dil[a] + 1 - sizes[a] - pads[a]) for a in range(nd)]
    xp = g.pad(x, [0, 0, *pads[:nd]], [0, 0, *ends], value=float("-inf"))
    taps = list(np.ndindex(*kernel))
    cut = []
    for tap in taps:
        starts = [tap[a] * dil[a] for a in range(nd)]
        stops = [starts[a] + (out[a] - 1) * strides[a] + 1 for a in range(nd)]
        cut.append(g.reshape(g.slice(xp, starts, stops, list(range(2, 2 + nd)), strides), [*x.shape[:2], *out, 1]))
    stacked = g.concat(cut, 2 + nd) if len(cut) > 1 else cut[0]
    values = g.reduce_max(stacked, [2 + nd])
    which = g.argmax(stacked, 2 + nd)  # [N, C, *out], i64
    # table[o, t]: the flat spatial index of output o's tap t (clamped where padded: never picked but for all -inf)
    grid = np.stack(np.meshgrid(*[np.arange(o) for o in out], indexing="ij"), -1).reshape(-1, 1, nd)
    pos = grid * np.asarray(strides) - np.asarray(pads[:nd]) + np.asarray(taps).reshape(1, -1, nd) * np.asarray(dil)
    pos = np.clip(pos, 0, np.asarray(sizes) - 1)
    order = range(nd) if storage_order == 0 else reversed(range(nd))
    flat = np.zeros(pos.shape[:2], np.int64)
    for a in order:
        flat = flat * sizes[a] + pos[..., a]
    t = len(taps)
    rows = n.imp.constant((np.arange(int(np.prod(out))) * t).reshape(out), "i64")
    spatial = g.gather(n.imp.constant(flat.reshape(-1), "i64"), g.add(which, rows), 0)
    planes = n.imp.constant((np.arange(x.shape[0] * x.shape[1]) * int(np.prod(sizes))).reshape(x.shape[0], x.shape[1],
                                                                                                  *[1] * nd), "i64")
    return [values, g.add(spatial, planes)]


def _pool3d(n: Node, x: Tensor, pool2d, kernel: list[int], strides: list[int], pads: list[int],
            dil: list[int]) -> Tensor:
    """A 3-D pool of x [N, C, D, H, W] as two 2-D ones: over (H, W) with D
    folded into the channels, then over D with H × W as one axis (kernel,
    stride and dilation 1, no padding). Max, average and Lp pools are
    separable this way: the max of maxima; the mean of means, as a window's
    count (its elements in the padded or the unpadded input, with or
    without ceil_mode's clipping) is the product of its per-axis counts."""
    nb, c, d, h, w = x.shape
    y = pool2d(n.g.reshape(x, [nb, c * d, h, w]), kernel[1:], strides[1:], [pads[1], pads[2], pads[4], pads[5]], dil[1:])
    h2, w2 = y.shape[2:]
    z = pool2d(n.g.reshape(y, [nb, c, d, h2 * w2]), [kernel[0], 1], [strides[0], 1], [pads[0], 0, pads[3], 0], [dil[0], 1])
    return n.g.reshape(z, [nb, c, z.shape[2], h2, w2])


def _lp_power(n: Node, x: Tensor, p: float) -> Tensor:
    """|x|^p (x² for p = 2), the summands of an Lp norm."""
    return n.g.mul(x, x) if p == 2 else n.g.pow(n.g.abs(x), n.imp.scalar(p, x.dtype))


def _lp_root(n: Node, total: Tensor, p: float) -> Tensor:
    """total^(1/p) (the square root for p = 2): an Lp norm from its sum."""
    return n.g.sqrt(total) if p == 2 else n.g.pow(total, n.imp.scalar(1.0 / p, total.dtype))


@emitter("GlobalLpPool")
def _global_lp_pool(n: Node) -> list[Value]:
    """(Σ |x|^p)^(1/p) over the spatial axes, kept as extents of 1 (in f32 for 16-bit)."""
    x = n.tensor(0)
    p = float(n.attr("p", 2))
    return [in_f32(n, x, lambda x: _lp_root(n, n.g.reduce_sum(_lp_power(n, x, p), list(range(2, x.ndim)), True), p))]


@emitter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = list(range(2, x.ndim))
    fn = n.g.reduce_mean if n.op_type == "GlobalAveragePool" else n.g.reduce_max
    return [fn(x, axes, True)]



@emitter("ConvTranspose")
def _conv_transpose(n: Node) -> list[Value]:
    """`rlx.conv_transpose2d`; 1-D as 2-D with a height of 1; 3-D as 2-D
    ones tap by tap along the depth (`_conv_transpose3d`). An explicit
    output_shape (or auto_pad SAME_*) becomes the pads that give it."""
    x, w = n.tensor(0), n.tensor(1)
    b = n.tensor(2) if n.input(2) is not None else None
    nd = x.ndim - 2
    if nd not in (1, 2, 3):
        raise n.unsupported(f"a {nd}-D transposed convolution", "1-D, 2-D and 3-D")
    kernel = list(w.shape[2:])
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    out_pad = list(n.attr("output_padding", [0] * nd))
    auto = n.attr("auto_pad", "NOTSET")
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise n.unsupported(f"auto_pad={auto}", "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    out_shape = n.attr("output_shape")
    if out_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        spatial = x.shape[2:]
        want = list(out_shape)[-nd:] if out_shape is not None else [d * s for d, s in zip(spatial, strides)]
        totals = []
        for i in range(nd):
            full = strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1
            total = full - want[i]
            if total < 0:  # a larger output than the kernel reaches: the rest is output padding
                out_pad[i] -= total
                total = 0
            totals.append(total)
        pads = _split_pads(totals, auto)
    else:
        pads = list(n.attr("pads", [0] * 2 * nd)) if auto == "NOTSET" else [0] * 2 * nd
    if nd == 3:
        return [_conv_transpose3d(n, x, w, b, strides, pads, dil, out_pad, n.attr("group", 1))]
    if nd == 1:
        x = n.g.reshape(x, [*x.shape[:2], 1, x.shape[2]])
        w = n.g.reshape(w, [*w.shape[:2], 1, w.shape[2]])
        strides, dil, out_pad, pads = [1, *strides], [1, *dil], [0, *out_pad], [0, pads[0], 0, pads[1]]
    y = n.g.conv_transpose2d(x, w, b, strides, pads, dil, out_pad, n.attr("group", 1))
    return [n.g.reshape(y, [*y.shape[:2], y.shape[3]]) if nd == 1 else y]


def _conv_transpose3d(n: Node, x: Tensor, w: Tensor, b: Tensor | None, strides: list[int], pads: list[int],
                      dil: list[int], out_pad: list[int], groups: int) -> Tensor:
    """A 3-D transposed convolution of x [N, C, D, H, W] by w [C, O/g, kd,
    kh, kw] as kd 2-D ones, one per kernel depth i, with x's depths folded
    into the batch: tap i's [N, D, O, H', W'] goes to output depths
    d · stride + i · dilation (spread by the stride, zeros between, and
    shifted), the taps summed, the depth pads cropped, the bias added, and
    [N, D', O, H', W'] back to [N, O, D', H', W']."""
    nb, c, d, h, wd = x.shape
    kd, sd = w.shape[2], strides[0]
    full = (d - 1) * sd + (kd - 1) * dil[0] + 1 + out_pad[0]
    dout = full - pads[0] - pads[3]
    if dout < 1:
        raise n.unsupported(f"depth pads {pads[0]} and {pads[3]} over a full output depth of {full}", "an output depth of 1 or more")
    x2 = n.g.reshape(n.g.transpose(x, [0, 2, 1, 3, 4]), [nb * d, c, h, wd])
    spread = (d - 1) * sd + 1
    total = None
    for i in range(kd):
        wi = n.g.reshape(n.g.slice(w, [i], [i + 1], [2]), [c, w.shape[1], *w.shape[3:]])
        z = n.g.conv_transpose2d(x2, wi, None, strides[1:], [pads[1], pads[2], pads[4], pads[5]], dil[1:], out_pad[1:],
                                 groups)  # [N·D, O, H', W']
        o, h2, w2 = z.shape[1:]
        z = n.g.reshape(z, [nb, d, 1, o * h2 * w2])
        if sd > 1:  # the stride's zeros between the depths
            z = n.g.slice(n.g.reshape(n.g.pad(z, [0, 0, 0, 0], [0, 0, sd - 1, 0]), [nb, d * sd, o * h2 * w2]), [0], [spread], [1])
        else:
            z = n.g.reshape(z, [nb, d, o * h2 * w2])
        z = n.g.pad(z, [0, i * dil[0], 0], [0, full - i * dil[0] - spread, 0])
        total = z if total is None else n.g.add(total, z)
    assert total is not None
    y = n.g.reshape(n.g.slice(total, [pads[0]], [pads[0] + dout], [1]), [nb, dout, o, h2, w2])
    if b is not None:
        y = n.g.add(y, n.g.reshape(b, [1, 1, o, 1, 1]))
    return n.g.transpose(y, [0, 2, 1, 3, 4])


_RESIZE_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                  "half_pixel_symmetric", "tf_half_pixel_for_nn")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@emitter("Resize", since=10)
def _resize_10(n: Node) -> list[Value]:
    """Resize-10: (X, scales), asymmetric coordinates, floor for nearest."""
    return _resized(n, "asymmetric", "floor", n.const(1, "scales"), None)


@emitter("Upsample", since=7)
def _upsample_7(n: Node) -> list[Value]:
    """Upsample-7 (deprecated; older YOLO exports): scales as an attribute,
    Resize-10's coordinates (asymmetric, floor for nearest)."""
    scales = n.attr("scales")
    if scales is None:
        raise n.error("Upsample-7 needs its scales attribute")
    return _resized(n, "asymmetric", "floor", _upsample_scales(n, scales), None)


@emitter("Upsample", since=9)
def _upsample_9(n: Node) -> list[Value]:
    """Upsample-9: scales as an input, as Resize-10."""
    return _resized(n, "asymmetric", "floor", _upsample_scales(n, n.const(1, "scales")), None)


def _upsample_scales(n: Node, scales) -> np.ndarray:
    """Upsample's scales, one per axis of the input."""
    scales = np.ravel(np.asarray(scales, np.float32))
    rank = len(n.tensor(0).shape)
    if scales.size != rank:
        raise n.error(f"{scales.size} scales for an input of rank {rank}: Upsample needs one per axis")
    return scales


@emitter("Resize", since=11)
def _resize(n: Node) -> list[Value]:
    """Resize-11..19: (X, roi, scales, sizes)."""
    return _resized(
        n,
        n.attr("coordinate_transformation_mode", "half_pixel"),
        n.attr("nearest_mode", "round_prefer_floor"),
        n.const(2, "scales"),
        n.const(3, "sizes"),
    )


def _resized(n: Node, coord: str, nearest: str, scales_in, sizes_in) -> list[Value]:
    """`rlx.resize` (nearest, linear): output extents and the scales of the
    coordinate transform are computed here, as ONNX defines them."""
    x = n.tensor(0)
    mode = n.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise n.unsupported(f"mode='{mode}'", "nearest, linear, cubic")
    if coord not in (*_RESIZE_COORDS, "tf_crop_and_resize"):
        raise n.unsupported(f"coordinate_transformation_mode='{coord}'", ", ".join((*_RESIZE_COORDS, "tf_crop_and_resize")))
    if nearest not in _NEAREST_MODES:
        raise n.unsupported(f"nearest_mode='{nearest}'", ", ".join(_NEAREST_MODES))
    antialias = bool(n.attr("antialias", 0))
    if antialias and mode == "nearest":
        raise n.unsupported("antialias=1 with mode='nearest'", "antialias for linear and cubic")
    r = x.ndim
    axes = [a % r for a in (n.attr("axes") or range(r))]
    policy = n.attr("keep_aspect_ratio_policy", "stretch")
    if sizes_in is not None and sizes_in.size:
        out = list(x.shape)
        for i, a in enumerate(axes):
            out[a] = int(sizes_in[i])
        scales = [o / d for o, d in zip(out, x.shape)]
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise n.unsupported(f"keep_aspect_ratio_policy='{policy}'", "stretch, not_larger, not_smaller")
            pick = min if policy == "not_larger" else max
            sc = pick(scales[a] for a in axes)
            scales = [sc if i in axes else 1.0 for i in range(r)]
            out = [int(sc * d + 0.5) if i in axes else d for i, d in enumerate(x.shape)]
    elif scales_in is not None and scales_in.size:
        scales = [1.0] * r
        for i, a in enumerate(axes):
            scales[a] = float(scales_in[i])
        out = [int(s * d) for s, d in zip(scales, x.shape)]
    else:
        raise n.error("one of scales and sizes must be given")
    roi = None
    if coord == "tf_crop_and_resize":
        given = n.const(1, "roi")
        if given is None or np.size(given) != 2 * len(axes):
            raise n.error(f"tf_crop_and_resize needs a constant roi of {2 * len(axes)} values (starts, ends of the axes)")
        given = np.ravel(np.asarray(given, np.float64))
        roi = [0.0] * r + [1.0] * r
        for i, a in enumerate(axes):
            roi[a], roi[r + a] = float(given[i]), float(given[len(axes) + i])
    elif out == list(x.shape) and all(s == 1.0 for s in scales):
        return [x]
    if mode == "cubic" or antialias or roi is not None:
        taps = dict(mode=mode, coord=coord, nearest=nearest, antialias=antialias, a=float(n.attr("cubic_coeff_a", -0.75)),
                    exclude=bool(n.attr("exclude_outside", 0)), extrapolation=float(n.attr("extrapolation_value", 0.0)))
        if mode == "nearest":  # one sample an output: gathered as it is, exact in every type
            return [_resize_by_taps(n, x, out, scales, roi, **taps)]
        if x.dtype not in ("f32", "f16", "bf16"):
            raise n.unsupported(f"mode='{mode}' with antialias or tf_crop_and_resize on a {x.dtype} input",
                                "float inputs (nearest for integers)")
        return [in_f32(n, x, lambda x: _resize_by_taps(n, x, out, scales, roi, **taps))]
    return [n.g.resize(x, out, scales, mode, coord, nearest)]


def _keys_cubic(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel W(t) with parameter a (ONNX's
    cubic_coeff_a): (a+2)|t|³ - (a+3)|t|² + 1 within 1, a|t|³ - 5a|t|² +
    8a|t| - 4a within 2, 0 past."""
    t = np.abs(t)
    near = (a + 2) * t**3 - (a + 3) * t**2 + 1
    far = a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def resize_taps(size: int, out: int, scale: float, mode: str, coord: str, nearest: str = "round_prefer_floor",
                antialias: bool = False, a: float = -0.75, exclude: bool = False,
                roi: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One axis of an ONNX Resize as taps, in float64: for each of the `out`
    outputs, the input indices it reads ([out, n], clamped into the axis:
    the edge repeated), their weights ([out, n]) and whether the output is
    the extrapolation value instead ([out]: tf_crop_and_resize's outputs
    mapped outside the input). The source coordinate is the coordinate
    transformation's; its fraction r past the sample below (1, not 0, on a
    sample: the left neighbour preferred) weighs the n samples nearest it:
    linear 1 - r, r; cubic Keys' W at 1 + r, r, 1 - r, 2 - r; antialiased
    (downsampling) linear and cubic the kernel widened by 1 / scale over
    as many samples, normalized; nearest the rounding of nearest_mode; the
    samples from x - r on, as ONNX's reference picks them (its neighbours
    from x shifted by the padding, which a rounding can move one sample off
    r's: ONNX Runtime's weights are ours there). With exclude, the weights of samples outside the axis are dropped and the
    rest renormalized."""
    extra = np.zeros(out, bool)
    if coord == "tf_crop_and_resize":
        assert roi is not None
        width = scale * size  # the resized length unrounded, as rlx.resize's coordinates take it
        x = (np.full(out, (roi[1] - roi[0]) * (size - 1) / 2) if width == 1
             else np.arange(out, dtype=np.float64) * (roi[1] - roi[0]) * (size - 1) / (width - 1))
        x = x + roi[0] * (size - 1)
        extra = (x < 0) | (x > size - 1)
    else:
        x = resize_source_coords(coord, size, out, scale)
    below = np.floor(x)
    on_sample = x == below
    ratio = np.where(on_sample, 1.0, x - below)[:, None]
    base = np.where(on_sample, below - 1, below).astype(np.int64)[:, None]  # x - ratio: the sample r before x
    if mode == "linear" and not antialias:
        offsets, w = np.arange(2), np.concatenate([1 - ratio, ratio], 1)
    elif mode == "cubic" and not antialias:
        offsets, w = np.arange(-1, 3), _keys_cubic(np.concatenate([1 + ratio, ratio, 1 - ratio, 2 - ratio], 1), a)
    elif mode == "nearest":
        up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio < 0, "ceil": ratio >= 0}
        pick = np.where(ratio == 1.0, True, up[nearest])  # on a sample: the sample itself
        offsets, w = np.arange(2), np.concatenate([~pick, pick], 1).astype(np.float64)
    else:  # antialiased: the kernel stretched over 1 / scale samples when downsampling
        s = min(scale, 1.0)
        first = int(np.floor((-2 if mode == "cubic" else -1) / s) + 1)
        offsets = np.arange(first, 2 - first)
        t = (offsets[None, :] - ratio) * s
        w = _keys_cubic(t, a) if mode == "cubic" else np.clip(1 - np.abs(t), 0, 1)
        w = w / w.sum(1, keepdims=True)
    # each weight's sample: base + its offset (the samples nearest x, the left one first on a tie); from the
    # same base as r, so a coordinate a rounding away from a sample keeps its weights on the right samples
    idx = base + offsets[None, :]
    if exclude:
        w = np.where((idx < 0) | (idx >= size), 0.0, w)
        total = w.sum(1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    w = np.where(extra[:, None], 0.0, w)
    return np.clip(idx, 0, size - 1), w, extra


def _resize_by_taps(n: Node, x: Tensor, out: list[int], scales: list[float], roi: list[float] | None, mode: str,
                    coord: str, nearest: str, antialias: bool, a: float, exclude: bool, extrapolation: float) -> Tensor:
    """A Resize rlx.resize does not do (cubic, antialiased, tf_crop_and_resize)
    axis by axis, as ONNX defines it: per resized axis, a gather of each
    output's taps (`resize_taps`, constants), times their weights, summed
    over the taps (plus the extrapolation value where tf_crop_and_resize
    maps an output outside the input). x is f32, or of any type for
    nearest (each output one gathered sample, or the extrapolation value:
    rounded for integers, as ONNX's reference casts it)."""
    g, r = n.g, x.ndim
    for axis in range(r):
        size = x.shape[axis]
        span = None if roi is None else (roi[axis], roi[r + axis])
        if out[axis] == size and np.isclose(scales[axis], 1.0) and (span is None or np.allclose(span, (0.0, 1.0))):
            continue
        idx, w, extra = resize_taps(size, out[axis], scales[axis], mode, coord, nearest, antialias, a, exclude, span)
        m, taps = w.shape
        if mode == "nearest":  # the one sample of weight 1 (an extrapolated output's: the value, below)
            x = g.gather(x, n.imp.constant(idx[np.arange(m), w.argmax(1)], "i64"), axis)
            if extra.any():
                fill = extrapolation if x.dtype in ("f32", "f16", "bf16") else int(np.rint(extrapolation))
                where = n.imp.constant(extra.reshape([1] * axis + [m] + [1] * (r - axis - 1)), "i1")
                x = g.select(where, n.imp.scalar(fill, x.dtype), x)
            continue
        picked = g.gather(x, n.imp.constant(idx.reshape(-1), "i64"), axis)
        picked = g.reshape(picked, [*x.shape[:axis], m, taps, *x.shape[axis + 1:]])
        weights = n.imp.constant(w.reshape([1] * axis + [m, taps] + [1] * (r - axis - 1)), "f32")
        x = g.reduce_sum(g.mul(picked, weights), [axis + 1])
        if extra.any() and extrapolation != 0.0:
            x = g.add(x, n.imp.constant((extra * extrapolation).reshape([1] * axis + [m] + [1] * (r - axis - 1)), "f32"))
    return x


@emitter("Col2Im")
def _col2im(n: Node) -> list[Value]:
    """[N, C·∏k, L] columns summed back into [N, C, *image] images: a
    transposed convolution of the columns (as [N, C·∏k, *blocks]) by a
    constant one-hot weight, C groups of ∏k channels each, with the node's
    strides, dilations and pads (output padding where the strides leave the
    last rows short). 2-D blocks, and 3-D ones through the 3-D transposed
    convolution (`_conv_transpose3d`)."""
    x = n.tensor(0)
    image, block = n.const(1, "image_shape"), n.const(2, "block_shape")
    if image is None or block is None:
        raise n.error("image_shape (input #1) and block_shape (input #2) are required")
    image, block = [int(v) for v in np.ravel(image)], [int(v) for v in np.ravel(block)]
    nd = len(block)
    if len(image) != nd or nd not in (2, 3):
        raise n.unsupported(f"a {len(block)}-D block of a {len(image)}-D image", "2-D and 3-D blocks of images of as many axes")
    k = int(np.prod(block))
    strides = list(n.attr("strides", [1] * nd))
    dil = list(n.attr("dilations", [1] * nd))
    pads = list(n.attr("pads", [0] * 2 * nd))
    if x.ndim != 3 or x.shape[1] % k:
        raise n.error(f"input {x.shape}: it must be [N, C·{'·'.join(map(str, block))}, L]")
    c = x.shape[1] // k
    try:
        out = [window_out(f"image axis {a}", image[a], block[a], strides[a], pads[a], pads[a + nd], dil[a])
               for a in range(nd)]
    except VerifyException as e:
        raise n.error(f"{x.shape[2]} blocks, but image {image} with block {block}: no whole block along an axis "
                      f"({e})") from None
    if int(np.prod(out)) != x.shape[2]:
        raise n.error(f"{x.shape[2]} blocks, but image {image} with block {block} holds {' x '.join(map(str, out))}")
    short = [image[a] - ((out[a] - 1) * strides[a] - pads[a] - pads[a + nd] + dil[a] * (block[a] - 1) + 1)
             for a in range(nd)]
    w = np.zeros((c * k, 1, *block), np.float32)
    for ch in range(c):
        for t, tap in enumerate(np.ndindex(*block)):
            w[(ch * k + t, 0, *tap)] = 1.0
    g = n.g
    cols = g.reshape(x, [x.shape[0], c * k, *out])
    weight = as_type(g, n.imp.constant(w, "f32"), x.dtype)
    if nd == 3:
        return [_conv_transpose3d(n, cols, weight, None, strides, pads, dil, short, c)]
    return [g.conv_transpose2d(cols, weight, None, strides, pads, dil, short, groups=c)]

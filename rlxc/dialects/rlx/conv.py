"""Windowed and spatial ops on NCHW images: `rlx.conv2d` (cross-correlation
with groups, dilation and an optional bias), `rlx.conv_transpose2d` (its
transpose, ONNX ConvTranspose), the pools `rlx.max_pool2d` and
`rlx.avg_pool2d` (dilation, ceil mode), `rlx.im2col` (a convolution's
patches, channels last, for convolutions as gemms), and `rlx.resize` (ONNX
Resize, nearest and n-linear, on any rank)."""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import (
    OPAQUE,
    RlxOp,
    _int,
    _ints,
    _Operands,
    _require_dtype,
    _require_same_dtype,
    _require_shape,
    _t,
)
from rlxc.dialects.types import FLOAT_TYPES, INT_TYPES, fmt_shape, shape_of


def window_out(
    what: str, size: int, k: int, stride: int, pad0: int, pad1: int, dil: int, ceil: bool = False
) -> int:
    """Output extent of a sliding window: floor((size + pads - span) / stride) + 1,
    or with `ceil` the ceiling, less one where the last window would start past
    the input and its begin padding (ONNX's and PyTorch's rule)."""
    span = dil * (k - 1) + 1
    room = size + pad0 + pad1 - span
    if room < 0:
        raise VerifyException(
            f"{what}: window {k} (dilation {dil}) does not fit an extent of {size} "
            f"padded by {pad0}+{pad1}"
        )
    n = (-(-room // stride) if ceil else room // stride) + 1
    if ceil and (n - 1) * stride >= size + pad0:
        n -= 1
    return n


def _window_extents(props: Mapping[str, Attribute], h: int, w: int, kh: int, kw: int,
                    ceil: bool = False) -> tuple[int, int]:
    """(oh, ow): the extents of kh x kw windows over an h x w image with the
    props' stride, dilation and padding (`window_out` on each axis)."""
    sh, sw = _ints(props.get("stride"))
    dh, dw = _ints(props.get("dilation"))
    pt, pl, pb, pr = _ints(props.get("padding"))
    return (window_out("height", h, kh, sh, pt, pb, dh, ceil), window_out("width", w, kw, sw, pl, pr, dw, ceil))


def _image(what: str, xs: Sequence[int], channels_last: bool) -> tuple[int, int, int, int]:
    """(n, c, h, w) of a rank-4 image stored NHWC (`channels_last`) or NCHW."""
    if len(xs) != 4:
        layout = "NHWC" if channels_last else "NCHW"
        raise VerifyException(f"{what} takes an {layout} input (rank 4), got {fmt_shape(xs)}")
    n, a, b, c = xs
    return (n, c, a, b) if channels_last else (n, a, b, c)


def _check_pairs(props: Mapping[str, Attribute], names_2: Sequence[str]) -> None:
    for n in names_2:
        v = _ints(props.get(n))
        if len(v) != 2 or any(x < 1 for x in v):
            raise VerifyException(f"{n} must be two positive integers, got {v}")
    pad = _ints(props.get("padding"))
    if len(pad) != 4 or any(p < 0 for p in pad):
        raise VerifyException(
            f"padding must be four non-negative integers [top, left, bottom, right], got {pad}"
        )


def _with_defaults(props: Mapping[str, Attribute], op: type[RlxOp]) -> dict[str, Attribute]:
    """`props` with the op's default property values filled in (the builder
    infers types before the op exists, so defaults are not there yet)."""
    out = dict(props)
    for name, d in op.get_irdl_definition().properties.items():
        default = getattr(d, "default_value", None)
        if name not in out and default is not None:
            out[name] = default
    return out


def _rank4(what: str, xs: tuple[int, ...], ws: tuple[int, ...], layout: str) -> None:
    if len(xs) != 4 or len(ws) != 4:
        raise VerifyException(
            f"{what} takes an NCHW input and an {layout} weight (rank 4), got "
            f"{fmt_shape(xs)} and {fmt_shape(ws)}"
        )


def _check_kernel(ws, out_per_group: int) -> None:
    """At least one output channel and a kernel of positive extent."""
    if ws[2] < 1 or ws[3] < 1 or out_per_group < 1:
        raise VerifyException(
            f"weight {fmt_shape(ws)} needs at least one output channel and a "
            "kernel of positive height and width"
        )


def _check_bias(x: TensorType, b, out: int) -> None:
    """A bias, where there is one, of shape [out] and x's type."""
    if b is not None:
        assert isinstance(b, TensorType)
        _require_shape("bias", b, (out,))
        _require_same_dtype("input and bias", x, b)


class _ConvBase(RlxOp):
    """What the two convolutions share: input, weight, optional bias, the
    window properties and the checks of their types."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), OPAQUE)

    @staticmethod
    def _checked(operands: _Operands, props: Mapping[str, Attribute]):
        """(input type, bias type or None, input shape, weight shape, groups),
        dtypes and the stride/dilation pairs checked."""
        x, w, b = operands
        assert isinstance(x, TensorType) and isinstance(w, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _require_same_dtype("input and weight", x, w)
        _check_pairs(props, ("stride", "dilation"))
        return x, b, shape_of(x), shape_of(w), _int(props.get("groups"))


@irdl_op_definition
class Conv2dOp(_ConvBase):
    """2-D cross-correlation, NCHW input, OIHW weight ([out, in/groups, kh, kw]),
    optional bias [out]; padding is [top, left, bottom, right] of zeros.
    With `channels_last` the input and result are NHWC ([n, h, w, c] ->
    [n, oh, ow, out]; the weight stays OIHW): `rlx-conv-to-gemm` moves the
    convolutions it does not make gemms (grouped and depthwise ones) into a
    channels-last chain there. With `weight_hwio` too (channels last only)
    the weight is [kh, kw, in/groups, out], TensorFlow's HWIO: a tap's
    output channels are adjacent (the pass gives a depthwise convolution
    its weight so, transposed once at compile time, and the kernel reads a
    tap of 8 f16 channels as one 16-byte load).

    Optional clamps, each max then min as `rlx.maximum`/`rlx.minimum` (NaN
    stays NaN): `input_min`/`input_max` on each input element before the
    window reads it (the zero padding is not clamped: the clamped tensor,
    padded), `clamp_min`/`clamp_max` on the result (after the bias).
    `rlx-conv-to-gemm` folds ReLU and ReLU6 (ONNX's Clip) on either side of
    a direct convolution into them.

    `%y = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : ...`
    """

    name = "rlx.conv2d"
    channels_last = opt_prop_def(UnitAttr)
    weight_hwio = opt_prop_def(UnitAttr)
    input_min = opt_prop_def(FloatAttr[Float64Type])
    input_max = opt_prop_def(FloatAttr[Float64Type])
    clamp_min = opt_prop_def(FloatAttr[Float64Type])
    clamp_max = opt_prop_def(FloatAttr[Float64Type])
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? `stride` `=` $stride `padding` `=` "
        "$padding `dilation` `=` $dilation `groups` `=` $groups (`channels_last` $channels_last^)? (`weight_hwio` $weight_hwio^)? "
        "(`input_min` $input_min^)? (`input_max` $input_max^)? (`clamp_min` $clamp_min^)? (`clamp_max` $clamp_max^)? "
        "attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)"
    )

    def bounds(self) -> tuple[float | None, float | None, float | None, float | None]:
        """(input_min, input_max, clamp_min, clamp_max), None where unset."""
        return tuple(None if a is None else float(a.value.data)  # pyright: ignore
                     for a in (self.input_min, self.input_max, self.clamp_min, self.clamp_max))

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, b, xs, ws, groups = cls._checked(operands, props)
        last = props.get("channels_last") is not None
        hwio = props.get("weight_hwio") is not None
        if hwio and not last:
            raise VerifyException("weight_hwio needs channels_last (an NHWC input)")
        if last and len(xs) == 4 and len(ws) == 4:
            xs = _image("conv2d", xs, True)
            if hwio:  # [kh, kw, in/groups, out] -> the OIHW shape the checks below read
                ws = (ws[3], ws[2], ws[0], ws[1])
        _rank4("conv2d", xs, ws, "HWIO" if hwio else "OIHW")
        n, c, h, wd = xs
        o, cg, kh, kw = ws
        _check_kernel(ws, o)
        if groups < 1 or c % groups or o % groups or cg * groups != c:
            raise VerifyException(
                f"weight {fmt_shape(ws)} with groups={groups} does not fit {c} input "
                f"channels: expected weight.shape[1] * groups == {c} and {o} "
                "divisible by groups"
            )
        _check_bias(x, b, o)
        oh, ow = _window_extents(props, h, wd, kh, kw)
        return [_t((n, oh, ow, o) if last else (n, o, oh, ow), x)]


@irdl_op_definition
class ConvTranspose2dOp(_ConvBase):
    """2-D transposed convolution (ONNX ConvTranspose, the gradient of conv2d
    with respect to its input): NCHW input, weight [in, out/groups, kh, kw],
    optional bias [out]. Input pixel (iy, ix) scatters its weighted kernel to
    output rows iy*stride - top + ky*dilation (and columns alike); padding
    [top, left, bottom, right] crops the full result, output_padding adds
    rows/columns at the bottom/right. Output extent:
    stride*(in-1) + output_padding + dilation*(k-1) + 1 - begin - end.

    `%y = rlx.conv_transpose2d %x, %w stride = [2, 2] padding = [1, 1, 1, 1] output_padding = [1, 1] dilation = [1, 1] groups = 1 : ...`
    """

    name = "rlx.conv_transpose2d"
    output_padding = prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? `stride` `=` $stride `padding` `=` "
        "$padding `output_padding` `=` $output_padding `dilation` `=` $dilation "
        "`groups` `=` $groups attr-dict `:` type($input) `,` type($weight) "
        "(`,` type($bias)^)? `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, b, xs, ws, groups = cls._checked(operands, props)
        opad = _ints(props.get("output_padding"))
        if len(opad) != 2 or any(p < 0 for p in opad):
            raise VerifyException(f"output_padding must be two non-negative integers, got {opad}")
        _rank4("conv_transpose2d", xs, ws, "IOHW")
        n, c, h, wd = xs
        ci, og, kh, kw = ws
        _check_kernel(ws, og)
        if groups < 1 or ci != c or c % groups:
            raise VerifyException(
                f"weight {fmt_shape(ws)} with groups={groups} does not fit {c} input "
                f"channels: expected weight.shape[0] == {c}, divisible by groups"
            )
        o = og * groups
        _check_bias(x, b, o)
        sh, sw = _ints(props.get("stride"))
        dh, dw = _ints(props.get("dilation"))
        pt, pl, pb, pr = _ints(props.get("padding"))
        ext = []
        for what, size, k, s, d, op_, p0, p1 in (
            ("height", h, kh, sh, dh, opad[0], pt, pb),
            ("width", wd, kw, sw, dw, opad[1], pl, pr),
        ):
            full = s * (size - 1) + op_ + d * (k - 1) + 1
            if full - p0 - p1 < 1:
                raise VerifyException(
                    f"{what}: padding {p0}+{p1} crops all {full} rows of the transposed "
                    f"convolution of an extent of {size} (stride {s}, kernel {k}, "
                    f"dilation {d}, output_padding {op_})"
                )
            ext.append(full - p0 - p1)
        return [_t((n, o, *ext), x)]


_ONE_ONE = DenseArrayBase.from_list(i64, [1, 1])


class Pool2dOp(RlxOp, abc.ABC):
    """A 2-D pool over NCHW windows: kernel, stride, padding [top, left,
    bottom, right], dilation (default [1, 1]) and `ceil_mode` (round the output
    extent up, keeping only windows that start inside the input or its begin
    padding), as ONNX MaxPool/AveragePool. With `channels_last` the input
    and result are NHWC ([n, h, w, c] -> [n, oh, ow, c]; `rlx-conv-to-gemm`
    moves pools between channels-last convolutions there)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64), default_value=_ONE_ONE)
    ceil_mode = opt_prop_def(UnitAttr)
    channels_last = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), OPAQUE)

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        props = _with_defaults(props, cls)
        _require_dtype("input", x, FLOAT_TYPES)
        _check_pairs(props, ("kernel", "stride", "dilation"))
        last = props.get("channels_last") is not None
        xs = _image("pooling", shape_of(x), last)
        kh, kw = _ints(props.get("kernel"))
        pt, pl, pb, pr = _ints(props.get("padding"))
        if pt >= kh or pb >= kh or pl >= kw or pr >= kw:
            raise VerifyException(
                f"padding {[pt, pl, pb, pr]} must be smaller than the kernel {[kh, kw]}"
            )
        oh, ow = _window_extents(props, xs[2], xs[3], kh, kw, props.get("ceil_mode") is not None)
        return [_t((xs[0], oh, ow, xs[1]) if last else (xs[0], xs[1], oh, ow), x)]


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Maximum over each window; padding never wins (it is -inf).

    `%y = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : ...`
    (`dilation = [2, 2]` and `ceil_mode` follow the padding where not default)
    """

    name = "rlx.max_pool2d"
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "(`dilation` `=` $dilation^)? (`ceil_mode` $ceil_mode^)? (`channels_last` $channels_last^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Mean over each window. Without `count_include_pad` (ONNX's default) the
    divisor counts only the real elements; with it, the window's taps inside
    the padded input (all of them, except where `ceil_mode` lets a window hang
    past the end padding), as ONNX and PyTorch.

    `%y = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : ...`
    """

    name = "rlx.avg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "(`dilation` `=` $dilation^)? (`ceil_mode` $ceil_mode^)? "
        "(`count_include_pad` $count_include_pad^)? (`channels_last` $channels_last^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )


@irdl_op_definition
class Im2colOp(RlxOp):
    """The patches of a 2-D convolution, channels last: an NHWC input
    [n, h, w, c] -> [n, oh, ow, kh * kw * c], where element
    [b, oy, ox, (ky * kw + kx) * c + ci] is input[b, oy * sh - top + ky * dh,
    ox * sw - left + kx * dw, ci], or 0 where that falls in the padding.
    Each patch is in the order of an OIHW weight transposed to OHWI and
    reshaped to [o, kh * kw * c], so the NCHW convolution conv2d(x, w)
    (groups 1) is linear(im2col(transpose(x, [0, 2, 3, 1])), that weight)
    transposed back by [0, 3, 1, 2]: what `rlx-conv-to-gemm` rewrites a
    convolution into on cuda, where the linear runs on cuBLASLt.

    `channels_first` reads an NCHW input instead (the same patches, without
    the transpose; for an image of a few channels). `columns` (at least
    kh * kw * c) widens each patch with zeros at its end, so that rows of a
    few channels stay aligned for the gemm (a 7x7 kernel over 3 channels:
    147 -> 152).

    `%y = rlx.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] : ...`
    """

    name = "rlx.im2col"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    channels_first = opt_prop_def(UnitAttr)
    columns = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "`dilation` `=` $dilation (`channels_first` $channels_first^)? (`columns` `=` $columns^)? "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def input_nhwc(self) -> tuple[int, int, int, int]:
        """The input's (n, h, w, c), whichever its layout."""
        n, a, b, c = shape_of(self.input.type)
        return (n, b, c, a) if self.channels_first is not None else (n, a, b, c)

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _check_pairs(props, ("kernel", "stride", "dilation"))
        n, c, h, w = _image("im2col", shape_of(x), props.get("channels_first") is None)
        kh, kw = _ints(props.get("kernel"))
        oh, ow = _window_extents(props, h, w, kh, kw)
        cols = props.get("columns")
        k = kh * kw * c if cols is None else _int(cols)
        if k < kh * kw * c:
            raise VerifyException(f"columns {k} is fewer than the patch's kh * kw * c = {kh * kw * c}")
        return [_t((n, oh, ow, k), x)]


# --------------------------------------------------------------------------- resize

RESIZE_MODES = ("nearest", "linear")
COORDINATE_MODES = (
    "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
    "half_pixel_symmetric", "tf_half_pixel_for_nn",
)  # fmt: skip
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _str(attr: Attribute | None) -> str:
    assert isinstance(attr, StringAttr)
    return attr.data


def resize_source_coords(
    coordinate_mode: str, in_size: int, out_size: int, scale: float
) -> np.ndarray:
    """ONNX Resize's coordinate transformation: for each output index x along
    one axis, the (float64) input coordinate it samples. `scale` is the
    axis's scale; the "resized length" of ONNX's formulas is scale * in_size
    (not rounded), as in ONNX's reference implementation."""
    x = np.arange(out_size, dtype=np.float64)
    length = scale * in_size
    if coordinate_mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if coordinate_mode == "pytorch_half_pixel":
        return np.full(out_size, -0.5) if length == 1 else (x + 0.5) / scale - 0.5
    if coordinate_mode == "align_corners":
        return np.zeros(out_size) if length == 1 else x * (in_size - 1) / (length - 1)
    if coordinate_mode == "asymmetric":
        return x / scale
    if coordinate_mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / length)
        return offset + (x + 0.5) / scale - 0.5
    if coordinate_mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    raise ValueError(f"unknown coordinate_transformation_mode {coordinate_mode!r}")


def resize_nearest_index(coords: np.ndarray, nearest_mode: str, in_size: int) -> np.ndarray:
    """The input index each coordinate takes in nearest mode (rounded as
    `nearest_mode` says; ties only exist at .5), clamped into the input."""
    lo = np.floor(coords)
    frac = coords - lo
    if nearest_mode == "round_prefer_floor":
        idx = np.where(frac > 0.5, lo + 1, lo)
    elif nearest_mode == "round_prefer_ceil":
        idx = np.where(frac >= 0.5, lo + 1, lo)
    elif nearest_mode == "floor":
        idx = lo
    elif nearest_mode == "ceil":
        idx = np.ceil(coords)
    else:
        raise ValueError(f"unknown nearest_mode {nearest_mode!r}")
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def resize_linear_taps(coords: np.ndarray, in_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, t) per coordinate for linear mode: the value is
    (1 - t) * in[lo] + t * in[hi], with lo = floor(c), hi = lo + 1 clamped into
    the input (so coordinates past either border take the border value)."""
    lo = np.floor(coords)
    t = coords - lo
    lo_i = np.clip(lo, 0, in_size - 1).astype(np.int64)
    hi_i = np.clip(lo + 1, 0, in_size - 1).astype(np.int64)
    return lo_i, hi_i, t


@irdl_op_definition
class ResizeOp(RlxOp):
    """ONNX Resize (opsets 11-19) in modes "nearest" and "linear" on a tensor
    of any rank; the result type gives the output shape. `scales[i]` is the
    scale of axis i's coordinate transformation (ONNX's scales where given,
    else out/in). An axis is resized unless its extent is unchanged and its
    scale is 1; linear interpolates separably over every resized axis
    (bilinear for NCHW images). `coordinate_transformation_mode`
    (default half_pixel) is one of half_pixel, pytorch_half_pixel,
    align_corners, asymmetric, half_pixel_symmetric, or (nearest only)
    tf_half_pixel_for_nn; `nearest_mode` (default round_prefer_floor) one of
    round_prefer_floor, round_prefer_ceil, floor, ceil.

    `%y = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "linear" : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>`
    """

    name = "rlx.resize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    scales = prop_def(DenseArrayBase.constr(f64))
    mode = prop_def(StringAttr)
    coordinate_transformation_mode = prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$input `scales` `=` $scales `mode` `=` $mode "
        "(`coordinate_transformation_mode` `=` $coordinate_transformation_mode^)? "
        "(`nearest_mode` `=` $nearest_mode^)? attr-dict `:` type($input) `->` type($result)"
    )

    def scale_values(self) -> list[float]:
        return [float(v) for v in self.scales.get_values()]

    def resized_axes(self) -> list[int]:
        """The axes resize changes: extent changed, or scale not 1."""
        xs, ys = shape_of(self.input.type), shape_of(self.result.type)
        return [
            a for a, (i, o, s) in enumerate(zip(xs, ys, self.scale_values()))
            if not (i == o and math.isclose(s, 1.0))
        ]  # fmt: skip

    def source_coords(self, axis: int) -> np.ndarray:
        """Axis `axis`'s input coordinate for each output index (float64)."""
        xs, ys = shape_of(self.input.type), shape_of(self.result.type)
        return resize_source_coords(
            self.coordinate_transformation_mode.data, xs[axis], ys[axis],
            self.scale_values()[axis],
        )  # fmt: skip

    def nearest_indices(self, axis: int) -> np.ndarray:
        """Nearest mode: the input index each output index of `axis` takes."""
        n_in = shape_of(self.input.type)[axis]
        return resize_nearest_index(self.source_coords(axis), self.nearest_mode.data, n_in)

    def linear_taps(self, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Linear mode: (lo, hi, t) per output index of `axis` (see
        `resize_linear_taps`)."""
        return resize_linear_taps(self.source_coords(axis), shape_of(self.input.type)[axis])

    def verify_extra(self) -> None:
        x, r = self.input.type, self.result.type
        assert isinstance(x, TensorType) and isinstance(r, TensorType)
        mode = _str(self.mode)
        ctm = self.coordinate_transformation_mode.data
        nm = self.nearest_mode.data
        if mode not in RESIZE_MODES:
            raise VerifyException(
                f"mode {mode!r} is not supported; expected one of {', '.join(RESIZE_MODES)}"
            )
        allowed = COORDINATE_MODES if mode == "nearest" else COORDINATE_MODES[:-1]
        if ctm not in allowed:
            raise VerifyException(
                f"coordinate_transformation_mode {ctm!r} is not supported in {mode} mode; "
                f"expected one of {', '.join(allowed)}"
            )
        if nm not in NEAREST_MODES:
            raise VerifyException(
                f"nearest_mode {nm!r} is not supported; expected one of {', '.join(NEAREST_MODES)}"
            )
        _require_dtype("input", x, FLOAT_TYPES + (INT_TYPES if mode == "nearest" else ()))
        _require_same_dtype("input and result", x, r)
        xs, ys = shape_of(x), shape_of(r)
        if len(xs) != len(ys):
            raise VerifyException(
                f"result rank {len(ys)} differs from input rank {len(xs)} "
                f"({fmt_shape(ys)} vs {fmt_shape(xs)})"
            )
        if any(d < 1 for d in xs) or any(d < 1 for d in ys):
            raise VerifyException(
                f"resize needs non-empty input and result, got {fmt_shape(xs)} -> {fmt_shape(ys)}"
            )
        scales = self.scale_values()
        if len(scales) != len(xs) or not all(s > 0 and math.isfinite(s) for s in scales):
            raise VerifyException(
                f"scales must be {len(xs)} positive finite numbers (one per axis), got {scales}"
            )

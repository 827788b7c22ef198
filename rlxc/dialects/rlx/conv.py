"""Windowed ops on NCHW images: `rlx.conv2d` (cross-correlation with groups,
dilation and an optional bias) and the pools `rlx.max_pool2d` and
`rlx.avg_pool2d`."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, TensorType, UnitAttr, i64
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
from rlxc.dialects.types import FLOAT_TYPES, fmt_shape, shape_of


def _window_out(what: str, size: int, k: int, stride: int, pad0: int, pad1: int, dil: int) -> int:
    span = dil * (k - 1) + 1
    n = (size + pad0 + pad1 - span) // stride + 1
    if n <= 0:
        raise VerifyException(
            f"{what}: window {k} (dilation {dil}) does not fit an extent of {size} "
            f"padded by {pad0}+{pad1}"
        )
    return n


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


@irdl_op_definition
class Conv2dOp(RlxOp):
    """2-D cross-correlation, NCHW input, OIHW weight ([out, in/groups, kh, kw]),
    optional bias [out]; padding is [top, left, bottom, right] of zeros.

    `%y = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : ...`
    """

    name = "rlx.conv2d"
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
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? `stride` `=` $stride `padding` `=` "
        "$padding `dilation` `=` $dilation `groups` `=` $groups attr-dict `:` "
        "type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, w, b = operands
        assert isinstance(x, TensorType) and isinstance(w, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _require_same_dtype("input and weight", x, w)
        _check_pairs(props, ("stride", "dilation"))
        groups = _int(props.get("groups"))
        xs, ws = shape_of(x), shape_of(w)
        if len(xs) != 4 or len(ws) != 4:
            raise VerifyException(
                f"conv2d takes an NCHW input and an OIHW weight (rank 4), got "
                f"{fmt_shape(xs)} and {fmt_shape(ws)}"
            )
        n, c, h, wd = xs
        o, cg, kh, kw = ws
        if kh < 1 or kw < 1 or o < 1:
            raise VerifyException(
                f"weight {fmt_shape(ws)} needs at least one output channel and a "
                "kernel of positive height and width"
            )
        if groups < 1 or c % groups or o % groups or cg * groups != c:
            raise VerifyException(
                f"weight {fmt_shape(ws)} with groups={groups} does not fit {c} input "
                f"channels: expected weight.shape[1] * groups == {c} and {o} "
                "divisible by groups"
            )
        if b is not None:
            assert isinstance(b, TensorType)
            _require_shape("bias", b, (o,))
            _require_same_dtype("input and bias", x, b)
        sh, sw = _ints(props.get("stride"))
        dh, dw = _ints(props.get("dilation"))
        pt, pl, pb, pr = _ints(props.get("padding"))
        oh = _window_out("height", h, kh, sh, pt, pb, dh)
        ow = _window_out("width", wd, kw, sw, pl, pr, dw)
        return [_t((n, o, oh, ow), x)]


class Pool2dOp(RlxOp, abc.ABC):
    """A 2-D pool over NCHW windows (floor rounding of the output extent)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure(), OPAQUE)

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _check_pairs(props, ("kernel", "stride"))
        xs = shape_of(x)
        if len(xs) != 4:
            raise VerifyException(f"pooling takes an NCHW input (rank 4), got {fmt_shape(xs)}")
        kh, kw = _ints(props.get("kernel"))
        sh, sw = _ints(props.get("stride"))
        pt, pl, pb, pr = _ints(props.get("padding"))
        if pt >= kh or pb >= kh or pl >= kw or pr >= kw:
            raise VerifyException(
                f"padding {[pt, pl, pb, pr]} must be smaller than the kernel {[kh, kw]}"
            )
        oh = _window_out("height", xs[2], kh, sh, pt, pb, 1)
        ow = _window_out("width", xs[3], kw, sw, pl, pr, 1)
        return [_t((xs[0], xs[1], oh, ow), x)]


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Maximum over each window; padding never wins (it is -inf).

    `%y = rlx.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : ...`
    """

    name = "rlx.max_pool2d"
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "attr-dict `:` type($input) `->` type($result)"
    )


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Mean over each window. Without `count_include_pad` (ONNX's default) the
    divisor counts only the real elements; with it, the whole window (PyTorch's).

    `%y = rlx.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : ...`
    """

    name = "rlx.avg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "(`count_include_pad` $count_include_pad^)? attr-dict `:` type($input) `->` "
        "type($result)"
    )

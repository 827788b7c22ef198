"""Ops that are neither reductions nor elementwise: the prefix sum
`rlx.cumsum` (a scan), `rlx.topk` (a selection with two results) and
`rlx.scatter_nd` (writes at positions given at run time). All are opaque to
fusion: each is a kernel of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import OPAQUE, RlxOp, _int, _Operands, _require_dtype, _require_same_dtype, _t
from rlxc.dialects.rlx.shape import _index_types
from rlxc.dialects.types import NUMERIC_TYPES, fmt_shape, normalize_axis, shape_of


@irdl_op_definition
class CumsumOp(RlxOp):
    """ONNX CumSum: running sums along `axis`. Element j sums elements 0..j
    (`exclusive`: 0..j-1, so the first is 0); with `reverse` the sums run from
    the end (j..n-1, or j+1..n-1). Floats are summed wide and rounded once to
    the result type; integers wrap as their type does.

    `%y = rlx.cumsum %x axis = 1 exclusive reverse : tensor<4x8xf32>`
    """

    name = "rlx.cumsum"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$input `axis` `=` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)? "
        "attr-dict `:` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, NUMERIC_TYPES)
        normalize_axis(_int(props.get("axis")), x.get_num_dims())
        return [x]


@irdl_op_definition
class TopKOp(RlxOp):
    """ONNX TopK: the `k` largest (`smallest`: smallest) elements along `axis`
    and their indices (i64), best first; equal elements come in index order,
    and NaN counts as larger than every number. `unsorted` (ONNX's
    sorted=0) allows any order of the k; rlxc still returns them sorted.

    `%v, %i = rlx.topk %x k = 3 axis = 1 smallest : tensor<4x10xf32> -> tensor<4x3xf32>, tensor<4x3xi64>`
    """

    name = "rlx.topk"
    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64])
    smallest = opt_prop_def(UnitAttr)
    unsorted = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$input `k` `=` $k `axis` `=` $axis (`smallest` $smallest^)? "
        "(`unsorted` $unsorted^)? attr-dict `:` type($input) `->` type($values) `,` "
        "type($indices)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, NUMERIC_TYPES)
        shape = list(shape_of(x))
        axis = normalize_axis(_int(props.get("axis")), len(shape))
        k = _int(props.get("k"))
        if not 0 <= k <= shape[axis]:
            raise VerifyException(
                f"k = {k} must be in [0, {shape[axis]}] (axis {axis} of {fmt_shape(shape)})"
            )
        shape[axis] = k
        return [_t(shape, x), TensorType(i64, shape)]


#: ScatterND's ways of combining an update with the element it lands on.
SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


@irdl_op_definition
class ScatterNDOp(RlxOp):
    """ONNX ScatterND: the input with slices replaced. The last axis of
    `indices` (length k) indexes the input's first k axes; each index tuple
    names a slice of shape input.shape[k:], whose elements become the
    matching elements of `updates` (shape indices.shape[:-1] +
    input.shape[k:]), or are combined with them by `reduction` (add, mul,
    max, min), tuple after tuple in order. Negative indices count from the
    end; out-of-range ones are an error. With reduction "none", tuples that
    name the same slice leave it unspecified which write lands (ONNX: the
    output is undefined); every other reduction combines them all.
    ONNX ScatterElements imports as this op, its index tuples built from
    each update's own coordinates.

    `%y = rlx.scatter_nd %x[%i] = %u reduction = "add" : tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>`
    """

    name = "rlx.scatter_nd"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(T)
    reduction = prop_def(StringAttr)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$input `[` $indices `]` `=` $updates `reduction` `=` $reduction attr-dict `:` "
        "type($input) `,` type($indices) `,` type($updates)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, idx, upd = operands
        assert isinstance(x, TensorType) and isinstance(idx, TensorType) and isinstance(upd, TensorType)
        _require_dtype("input", x, NUMERIC_TYPES)
        _index_types("indices", idx)
        _require_same_dtype("updates", upd, x)
        red = props.get("reduction")
        if not isinstance(red, StringAttr) or red.data not in SCATTER_REDUCTIONS:
            got = red.data if isinstance(red, StringAttr) else red
            raise VerifyException(f"reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, got {got!r}")
        xs, ids, us = tuple(shape_of(x)), tuple(shape_of(idx)), tuple(shape_of(upd))
        if not xs or not ids:
            raise VerifyException(f"input {fmt_shape(xs)} and indices {fmt_shape(ids)} need rank >= 1")
        k = ids[-1]
        if not 1 <= k <= len(xs):
            raise VerifyException(
                f"indices' last extent {k} must be in [1, {len(xs)}] (the input's rank)"
            )
        want = (*ids[:-1], *xs[k:])
        if us != want:
            raise VerifyException(
                f"updates of shape {fmt_shape(us)} do not fit: indices {fmt_shape(ids)} into "
                f"input {fmt_shape(xs)} take updates of shape {fmt_shape(want)}"
            )
        return [x]

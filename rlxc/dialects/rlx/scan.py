"""Ops along one axis that are neither reductions nor elementwise: the prefix
sum `rlx.cumsum` (a scan) and `rlx.topk` (a selection with two results).
Both are opaque to fusion: each is a kernel of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i64
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

from rlxc.dialects.rlx.base import OPAQUE, RlxOp, _int, _Operands, _require_dtype, _t
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

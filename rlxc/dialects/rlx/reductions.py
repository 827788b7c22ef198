"""Reductions: ops whose output elements each combine a set of input elements
along some axes. `rlx.reduce_{sum,mean,max,min,prod}`, `rlx.argmax`, and the
row-normalising ops `rlx.softmax`, `rlx.log_softmax`, `rlx.layer_norm` and
`rlx.rms_norm`, which are composites: each states its `decompose` into
reductions and elementwise ops for targets without a kernel for it.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
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

from rlxc.dialects.rlx.base import (
    REDUCTION,
    Composite,
    RlxOp,
    TakesPrologue,
    _float,
    _int,
    _ints,
    _Operands,
    _require_dtype,
    _require_same_dtype,
    _require_shape,
    _t,
    i64_array,
)
from rlxc.dialects.rlx.decompose import DecomposeBuilder
from rlxc.dialects.rlx.elementwise import (
    AddOp,
    DivOp,
    ExpOp,
    LogOp,
    MulOp,
    RsqrtOp,
    SubOp,
)
from rlxc.dialects.types import (
    FLOAT_TYPES,
    NUMERIC_TYPES,
    fmt_shape,
    normalize_axis,
    reduced_shape,
    shape_of,
)

# --------------------------------------------------------------------------- reduce


class ReduceOp(RlxOp, abc.ABC):
    """`%r = rlx.<op> %x axes = [1] keepdims : tensor<4x16xf32> -> tensor<4x1xf32>`.

    Reduces over the listed axes (negative counts from the end); `keepdims`
    keeps them as extent 1. Accumulates in f32 or better.
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = (
        "$input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, cls.ALLOWED_TYPES)
        axes = _ints(props.get("axes"))
        if not axes:
            raise VerifyException("axes must name at least one axis")
        return [_t(reduced_shape(shape_of(x), axes, "keepdims" in props), x)]


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over axes."""

    name = "rlx.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over axes (floating point)."""

    name = "rlx.reduce_mean"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over axes (NaN propagates)."""

    name = "rlx.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over axes (NaN propagates)."""

    name = "rlx.reduce_min"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over axes."""

    name = "rlx.reduce_prod"


@irdl_op_definition
class ArgMaxOp(RlxOp):
    """Index (i64) of the largest element along `axis`; ties give the first.

    `%i = rlx.argmax %x axis = 1 : tensor<4x16xf32> -> tensor<4xi64>`
    """

    name = "rlx.argmax"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    keepdims = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = (
        "$input `axis` `=` $axis (`keepdims` $keepdims^)? attr-dict `:` "
        "type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, NUMERIC_TYPES)
        axis = _int(props.get("axis"))
        shape = reduced_shape(shape_of(x), [axis], "keepdims" in props)
        if shape_of(x)[axis % x.get_num_dims()] == 0 and 0 not in shape:
            raise VerifyException(f"argmax over axis {axis} of extent 0 (input {x}): no element to pick")
        return [TensorType(i64, list(shape))]


REDUCE_OPS: tuple[type[ReduceOp], ...] = (
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
)  # fmt: skip


def _reduce_keepdims(
    b: DecomposeBuilder, op_type: type[ReduceOp], x: SSAValue, axes: list[int]
) -> SSAValue:
    return b(op_type, [x], {"axes": i64_array(axes), "keepdims": UnitAttr()})


# --------------------------------------------------------------------------- softmax


class AxisNormalizeOp(RlxOp, abc.ABC):
    """`%y = rlx.<op> %x axis = -1 : tensor<...>` (max-subtracted, f32 accumulation)."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)), TakesPrologue())
    assembly_format = "$input `axis` `=` $axis attr-dict `:` type($result)"

    def verify_extra(self) -> None:
        x = self.input.type
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        normalize_axis(_int(self.axis), x.get_num_dims())

    def _shifted_exp_sum(self, b: DecomposeBuilder) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(x - max, exp(x - max), sum(exp(x - max))) along the axis, kept as
        extent 1, in f32 for f16/bf16 input (the result is `b.narrowed`)."""
        (x,) = b.widened(self.input)
        axis = _int(self.axis) % len(shape_of(x.type))
        shifted = b(SubOp, [x, _reduce_keepdims(b, ReduceMaxOp, x, [axis])])
        ex = b.unary(ExpOp, shifted)
        return shifted, ex, _reduce_keepdims(b, ReduceSumOp, ex, [axis])


@irdl_op_definition
class SoftmaxOp(AxisNormalizeOp):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""

    name = "rlx.softmax"

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        _, ex, total = self._shifted_exp_sum(b)
        return [b.narrowed(b(DivOp, [ex, total]), self.result.type)]


@irdl_op_definition
class LogSoftmaxOp(AxisNormalizeOp):
    """x - max - log(sum(exp(x - max))) along `axis`."""

    name = "rlx.log_softmax"

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        shifted, _, total = self._shifted_exp_sum(b)
        return [b.narrowed(b(SubOp, [shifted, b.unary(LogOp, total)]), self.result.type)]


# --------------------------------------------------------------------------- norms


def _check_norm_params(x: TensorType, gamma: TensorType, beta: TensorType | None):
    _require_dtype("input", x, FLOAT_TYPES)
    g = shape_of(gamma)
    xs = shape_of(x)
    if len(g) == 0 or len(g) > len(xs) or xs[len(xs) - len(g) :] != g:
        raise VerifyException(
            f"gamma has shape {fmt_shape(g)}, expected the trailing dimensions of the "
            f"input {fmt_shape(xs)} (for example {fmt_shape(xs[-1:])})"
        )
    _require_same_dtype("input and gamma", x, gamma)
    if beta is not None:
        _require_shape("beta", beta, g)
        _require_same_dtype("input and beta", x, beta)


def _trailing_axes(x: SSAValue, gamma: SSAValue) -> list[int]:
    """The axes of `x` that `gamma` spans (its trailing ones)."""
    r, k = len(shape_of(x.type)), len(shape_of(gamma.type))
    return list(range(r - k, r))


@irdl_op_definition
class LayerNormOp(RlxOp):
    """(x - mean) / sqrt(var + eps) * gamma + beta, over gamma's trailing axes
    (biased variance, f32 accumulation).

    `%y = rlx.layer_norm %x, %g, %b eps = 1.0e-05 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.layer_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    G: ClassVar = VarConstraint("G", base(TensorType))
    input = operand_def(T)
    gamma = operand_def(G)
    beta = operand_def(G)
    result = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)), TakesPrologue())
    assembly_format = (
        "$input `,` $gamma `,` $beta `eps` `=` $eps attr-dict `:` type($input) `,` "
        "type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, self.beta.type)  # pyright: ignore

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """Mean, centred values, variance, rsqrt: in f32 for f16/bf16 (one rounding, at the end)."""
        x, gamma, beta = b.widened(self.input, self.gamma, self.beta)
        axes = _trailing_axes(x, gamma)
        d = b(SubOp, [x, _reduce_keepdims(b, ReduceMeanOp, x, axes)])
        var = _reduce_keepdims(b, ReduceMeanOp, b(MulOp, [d, d]), axes)
        inv = b.unary(RsqrtOp, b(AddOp, [var, b.scalar(_float(self.eps), x)]))
        y = b(MulOp, [b(MulOp, [d, inv]), gamma])
        return [b.narrowed(b(AddOp, [y, beta]), self.result.type)]


@irdl_op_definition
class RmsNormOp(RlxOp):
    """x / sqrt(mean(x**2) + eps) * gamma, over gamma's trailing axes.

    `%y = rlx.rms_norm %x, %g eps = 1.0e-06 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.rms_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    gamma = operand_def(TensorType)
    result = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)), TakesPrologue())
    assembly_format = (
        "$input `,` $gamma `eps` `=` $eps attr-dict `:` type($input) `,` type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, None)  # pyright: ignore

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """Mean square, rsqrt: in f32 for f16/bf16 (one rounding, at the end)."""
        x, gamma = b.widened(self.input, self.gamma)
        ms = _reduce_keepdims(b, ReduceMeanOp, b(MulOp, [x, x]), _trailing_axes(x, gamma))
        inv = b.unary(RsqrtOp, b(AddOp, [ms, b.scalar(_float(self.eps), x)]))
        return [b.narrowed(b(MulOp, [b(MulOp, [x, inv]), gamma]), self.result.type)]

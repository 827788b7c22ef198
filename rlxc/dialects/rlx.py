"""The `rlx` dialect: rlxc's graph level, on static ranked builtin tensors.

Op facts live on the ops, never in passes:

* `Pure()` on every op (no memory effects: cse/dce may move and delete them);
* `Fusion(kind)`: TVM's pattern kind (elementwise, broadcast, injective,
  reduction, opaque) that `rlx-fuse-elementwise` reads;
* `Composite(native_targets)`: an op that `rlx-unfuse` may split into
  primitives, and the targets that keep a kernel for it.

Every op's result types are a function of its operands and properties
(`infer_result_types`), except where the result type *is* the information
(`reshape`, `expand`, `cast`, `param`, `constant`). The verifier and the graph
builder call the same function, so a shape error reads the same in both.

Families share a base class as in `xdsl.dialects.arith`: the base declares the
operands, results, constraints and assembly format; a concrete op is its name,
its docstring and, where it differs, the element types it accepts.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    NoneAttr,
    FloatAttr,
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.dialects import math
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    ConstantLike,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    OpTrait,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.scalar import ScalarEmitter
from rlxc.dialects.types import (
    broadcasts_to,
    dtype,
    is_float,
    ALL_TYPES,
    FLOAT_TYPES,
    NUMERIC_TYPES,
    broadcast_shapes,
    dtype_name,
    fmt_shape,
    matmul_shape,
    normalize_axis,
    reduced_shape,
    shape_of,
    slice_extent,
)

# --------------------------------------------------------------------------- traits


class FusionKind(Enum):
    """TVM's operator pattern kinds, in fusion-friendliness order."""

    ELEMENTWISE = "elementwise"
    BROADCAST = "broadcast"
    INJECTIVE = "injective"
    REDUCTION = "reduction"
    OPAQUE = "opaque"


@dataclass(frozen=True)
class Fusion(OpTrait):
    """The op's fusion pattern kind; `rlx-fuse-elementwise` reads it."""

    kind: FusionKind


@dataclass(frozen=True)
class Composite(OpTrait):
    """A composite op that `rlx-unfuse` may split into primitives.

    `native_targets` names the targets that have a kernel for the op itself and
    so keep it whole.
    """

    native_targets: tuple[str, ...] = ()

    def is_native_on(self, op: Operation, target: str) -> bool:
        """Whether `target` has a kernel for this op instance: the target is
        listed, and the op's own `native_on(target)` (if it has one) agrees."""
        if target not in self.native_targets:
            return False
        check = getattr(op, "native_on", None)
        return check(target) if check is not None else True


@dataclass(frozen=True)
class IsView(OpTrait):
    """The op's result is its first operand's bytes under another type: no
    kernel runs, the planner gives the result its input's arena slot, and the
    emitter and the runtime find it there. The one definition of "view" that
    `rlx-plan-memory`, `rlx-emit-cuda` and the runtime read (via `is_view`).

    `same_type_only`: a view only where the result's type equals the input's
    (`rlx.cast` to its own type)."""

    same_type_only: bool = False


def is_view(op: Operation) -> bool:
    """Whether `op` is a view of its first operand (see `IsView`)."""
    trait = op.get_trait(IsView)
    if trait is None:
        return False
    return not trait.same_type_only or op.operands[0].type == op.results[0].type


def fusion_kind(op: Operation) -> FusionKind:
    """The op's fusion kind; ops of other dialects are opaque."""
    trait = op.get_trait(Fusion)
    return trait.kind if trait is not None else FusionKind.OPAQUE


ELEMENTWISE = Fusion(FusionKind.ELEMENTWISE)
BROADCAST = Fusion(FusionKind.BROADCAST)
INJECTIVE = Fusion(FusionKind.INJECTIVE)
REDUCTION = Fusion(FusionKind.REDUCTION)
OPAQUE = Fusion(FusionKind.OPAQUE)

#: linear activation -> the cuBLASLt epilogue that applies it after the bias
#: (cuBLASLt's GELU is the tanh form, so exact `gelu` is not here).
CUDA_EPILOGUES = {"relu": "bias_relu", "gelu_tanh": "bias_gelu"}

#: The activations `rlx.linear` may carry as an epilogue.
LINEAR_ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh")

# --------------------------------------------------------------------------- helpers

_Operands = Sequence["TensorType | None | Sequence[TensorType]"]


def _ints(attr: Attribute | None) -> list[int]:
    assert isinstance(attr, DenseArrayBase)
    return [int(v) for v in attr.get_values()]


def _int(attr: Attribute | None) -> int:
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def _float(attr: Attribute | None) -> float:
    assert isinstance(attr, FloatAttr)
    return float(attr.value.data)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), Float64Type())


def _t(shape: Sequence[int], like: TensorType | Attribute) -> TensorType:
    el = like.get_element_type() if isinstance(like, TensorType) else like
    return TensorType(el, list(shape))


def _require_dtype(what: str, t: TensorType, allowed: Sequence[Attribute]) -> None:
    el = t.get_element_type()
    if el not in allowed:
        raise VerifyException(
            f"{what} has element type {dtype_name(el)}, expected one of "
            f"{', '.join(dtype_name(a) for a in allowed)}"
        )


def _require_same_dtype(what: str, a: TensorType, b: TensorType) -> None:
    if a.get_element_type() != b.get_element_type():
        raise VerifyException(
            f"{what}: element types differ ({dtype_name(a.get_element_type())} vs "
            f"{dtype_name(b.get_element_type())}); they must be equal"
        )


def _require_shape(what: str, t: TensorType, shape: Sequence[int]) -> None:
    if shape_of(t) != tuple(shape):
        raise VerifyException(
            f"{what} has shape {fmt_shape(shape_of(t))}, expected {fmt_shape(shape)}"
        )


def check_tensor_type(t: Attribute, what: str) -> None:
    """rlx values are static ranked tensors of f32/f16/bf16/i32/i64/i1."""
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {t}")
    if any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"{what} must have a static shape, got {t}")
    if not isinstance(t.encoding, NoneAttr):
        raise VerifyException(f"{what} must be a tensor without an encoding, got {t}")
    if t.get_element_type() not in ALL_TYPES:
        raise VerifyException(
            f"{what} has unsupported element type {t.get_element_type()} "
            "(expected f32, f16, bf16, i32, i64 or i1)"
        )


# --------------------------------------------------------------------------- base


class RlxCanonicalization(HasCanonicalizationPatternsTrait):
    """Every rlx op's canonicalization patterns (its own rewrites and constant
    folding), defined in `rlxc.passes.canonicalization` and used by xDSL's
    `canonicalize` pass."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from rlxc.passes.canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


class RlxOp(IRDLOperation, abc.ABC):
    """Base of every rlx op: tensor-type checks, then the op's own shape rules."""

    traits = traits_def(RlxCanonicalization())

    @classmethod
    def infer_result_types(
        cls, operands: _Operands, props: Mapping[str, Attribute]
    ) -> list[TensorType] | None:
        """Result types from operand types (in operand-definition order: a type,
        None for an absent optional operand, a list for a variadic one) and
        properties; raises VerifyException naming what is wrong. None where the
        result type is not derivable (the op's own `verify_extra` checks it)."""
        return None

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue | None | Sequence[SSAValue]],
        properties: Mapping[str, Attribute] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ):
        """Creates the op (not inserted), inferring result types where the op
        can; operands in definition order as for `infer_result_types`."""
        props = dict(properties or {})
        if result_types is None:
            types = [
                None if o is None
                else o.type if isinstance(o, SSAValue)
                else [v.type for v in o]
                for o in operands
            ]  # fmt: skip
            result_types = cls.infer_result_types(types, props)  # pyright: ignore
            if result_types is None:
                raise VerifyException(f"{cls.name} needs explicit result types")
        return cls.build(
            operands=list(operands), result_types=list(result_types), properties=props
        )

    def operand_types_by_def(self) -> list[TensorType | None | list[TensorType]]:
        out: list[TensorType | None | list[TensorType]] = []
        for name, _ in type(self).get_irdl_definition().operands:
            v = getattr(self, name)
            if v is None:
                out.append(None)
            elif isinstance(v, SSAValue):
                out.append(v.type)  # pyright: ignore[reportArgumentType]
            else:
                out.append([x.type for x in v])  # pyright: ignore
        return out

    def verify_(self) -> None:
        for i, v in enumerate(self.operands):
            check_tensor_type(v.type, f"operand #{i}")
        for i, r in enumerate(self.results):
            check_tensor_type(r.type, f"result #{i}")
        expected = type(self).infer_result_types(
            self.operand_types_by_def(), self.properties
        )
        if expected is not None:
            got = [r.type for r in self.results]
            for i, (e, g) in enumerate(zip(expected, got, strict=True)):
                if e != g:
                    raise VerifyException(
                        f"result #{i} has type {g}, but the operands and attributes "
                        f"give {e}"
                    )
        self.verify_extra()

    def verify_extra(self) -> None:
        """Checks beyond result-type inference (override where needed)."""


# --------------------------------------------------------------------------- leaves


@irdl_op_definition
class ParamOp(RlxOp):
    """A named weight, bound at compile or run time (`params` of `rlxc.interpret`).

    `%w = rlx.param "w" : tensor<16x8xf32>`
    """

    name = "rlx.param"
    param_name = prop_def(StringAttr, prop_name="name")
    result = result_def(TensorType)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = "$name attr-dict `:` type($result)"

    def verify_extra(self) -> None:
        if not self.param_name.data:
            raise VerifyException("rlx.param needs a non-empty name")


@irdl_op_definition
class ConstantOp(RlxOp, HasFolderInterface):
    """A dense constant tensor: `%c = rlx.constant dense<1.0> : tensor<4xf32>`."""

    name = "rlx.constant"
    T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)
    traits = traits_def(Pure(), ConstantLike(), OPAQUE)
    assembly_format = "$value attr-dict"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return (self.value,)

    def splat(self) -> float | int | None:
        """The single value of a constant whose elements are all equal (bitwise),
        else None."""
        data = self.value.data.data
        n = self.value.type.element_count()
        size = dtype(self.value.get_element_type()).bytes
        if n == 0 or (len(data) != size and data != data[:size] * n):
            return None
        return self.value.get_values()[0]

    def verify_extra(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"value has type {self.value.type} but the result is {self.result.type}"
            )


# --------------------------------------------------------------------------- unary


class UnaryElementwiseOp(RlxOp, abc.ABC):
    """`%y = rlx.<op> %x : tensor<...>`: one input, same type out."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$input attr-dict `:` type($result)"

    #: The element types the op accepts (floating point unless it says otherwise).
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    def verify_extra(self) -> None:
        _require_dtype("input", self.input.type, self.ALLOWED_TYPES)  # pyright: ignore


class SignedUnaryOp(UnaryElementwiseOp, abc.ABC):
    """A unary op that also applies to signed integers."""

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES


@irdl_op_definition
class NegOp(SignedUnaryOp):
    """-x."""

    name = "rlx.neg"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.neg(x)


@irdl_op_definition
class AbsOp(SignedUnaryOp):
    """|x|."""

    name = "rlx.abs"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.AbsFOp if is_float(x.type) else math.AbsIOp, x)


@irdl_op_definition
class SignOp(SignedUnaryOp):
    """-1, 0 or 1 by the sign of x (NaN stays NaN)."""

    name = "rlx.sign"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        zero, one = e.const(0, x), e.const(1, x)
        inner = e.select(e.cmp("lt", x, zero), e.neg(one), x if is_float(x.type) else zero)
        return e.select(e.cmp("gt", x, zero), one, inner)


@irdl_op_definition
class ReluOp(SignedUnaryOp):
    """max(x, 0)."""

    name = "rlx.relu"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.maximum(x, e.const(0, x))


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """e**x."""

    name = "rlx.exp"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.exp(x)


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm."""

    name = "rlx.log"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.LogOp, x)


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root."""

    name = "rlx.sqrt"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.SqrtOp, x)


@irdl_op_definition
class RsqrtOp(UnaryElementwiseOp):
    """1 / sqrt(x)."""

    name = "rlx.rsqrt"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.RsqrtOp, x)


@irdl_op_definition
class ReciprocalOp(UnaryElementwiseOp):
    """1 / x."""

    name = "rlx.reciprocal"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.div(e.const(1.0, x), x)


@irdl_op_definition
class SinOp(UnaryElementwiseOp):
    """sin(x), x in radians, full range (no fast-math reduction)."""

    name = "rlx.sin"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.SinOp, x)


@irdl_op_definition
class CosOp(UnaryElementwiseOp):
    """cos(x), x in radians, full range (no fast-math reduction)."""

    name = "rlx.cos"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.CosOp, x)


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """Hyperbolic tangent."""

    name = "rlx.tanh"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.TanhOp, x)


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """1 / (1 + e**-x)."""

    name = "rlx.sigmoid"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.sigmoid(x)


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """Exact GELU: x * (1 + erf(x / sqrt(2))) / 2."""

    name = "rlx.gelu"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        half_x = e.mul(x, e.const(0.5, x))
        erf = e.unary(math.ErfOp, e.mul(x, e.const(0.7071067811865476, x)))
        return e.mul(half_x, e.add(e.const(1.0, x), erf))


@irdl_op_definition
class GeluTanhOp(UnaryElementwiseOp):
    """Tanh-approximated GELU: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))."""

    name = "rlx.gelu_tanh"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        cube = e.mul(e.mul(x, x), x)
        inner = e.mul(e.const(0.7978845608028654, x), e.add(x, e.mul(e.const(0.044715, x), cube)))
        t = e.unary(math.TanhOp, inner)
        return e.mul(e.mul(x, e.const(0.5, x)), e.add(e.const(1.0, x), t))


@irdl_op_definition
class SiluOp(UnaryElementwiseOp):
    """x * sigmoid(x)."""

    name = "rlx.silu"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.mul(x, e.sigmoid(x))


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    """The Gauss error function."""

    name = "rlx.erf"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.ErfOp, x)


@irdl_op_definition
class FloorOp(UnaryElementwiseOp):
    """Largest integer not greater than x."""

    name = "rlx.floor"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.FloorOp, x)


@irdl_op_definition
class CeilOp(UnaryElementwiseOp):
    """Smallest integer not less than x."""

    name = "rlx.ceil"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.CeilOp, x)


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """Round to nearest, ties to even (numpy.rint, CUDA rintf)."""

    name = "rlx.round"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.unary(math.RoundEvenOp, x)


# --------------------------------------------------------------------------- binary


class BinaryBroadcastOp(RlxOp, abc.ABC):
    """`%z = rlx.<op> %a, %b : tensor<A>, tensor<B> -> tensor<C>` with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES

    @classmethod
    def result_element_type(cls, operand: TensorType) -> Attribute:
        return operand.get_element_type()

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        a, b = operands
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        _require_same_dtype("operands", a, b)
        _require_dtype("operands", a, cls.ALLOWED_TYPES)
        shape = broadcast_shapes(shape_of(a), shape_of(b))
        return [TensorType(cls.result_element_type(a), list(shape))]


@irdl_op_definition
class AddOp(BinaryBroadcastOp):
    """a + b."""

    name = "rlx.add"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.add(a, b)


@irdl_op_definition
class SubOp(BinaryBroadcastOp):
    """a - b."""

    name = "rlx.sub"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.sub(a, b)


@irdl_op_definition
class MulOp(BinaryBroadcastOp):
    """a * b."""

    name = "rlx.mul"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.mul(a, b)


@irdl_op_definition
class DivOp(BinaryBroadcastOp):
    """a / b; on integers, truncation toward zero (as C and CUDA divide)."""

    name = "rlx.div"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.div(a, b)


@irdl_op_definition
class PowOp(BinaryBroadcastOp):
    """a ** b (floating point)."""

    name = "rlx.pow"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.binary(math.PowFOp, a, b)
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES


@irdl_op_definition
class MaximumOp(BinaryBroadcastOp):
    """Elementwise maximum; NaN in either operand gives NaN."""

    name = "rlx.maximum"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.maximum(a, b)


@irdl_op_definition
class MinimumOp(BinaryBroadcastOp):
    """Elementwise minimum; NaN in either operand gives NaN."""

    name = "rlx.minimum"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.minimum(a, b)


class CompareOp(BinaryBroadcastOp, abc.ABC):
    """A broadcasting comparison with an i1 result (ordered: NaN compares false, except ne)."""

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ALL_TYPES

    @classmethod
    def result_element_type(cls, operand: TensorType) -> Attribute:
        return i1


@irdl_op_definition
class EqOp(CompareOp):
    """a == b."""

    name = "rlx.eq"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("eq", a, b)


@irdl_op_definition
class NeOp(CompareOp):
    """a != b (true when either is NaN)."""

    name = "rlx.ne"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("ne", a, b)


@irdl_op_definition
class LtOp(CompareOp):
    """a < b."""

    name = "rlx.lt"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("lt", a, b)


@irdl_op_definition
class LeOp(CompareOp):
    """a <= b."""

    name = "rlx.le"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("le", a, b)


@irdl_op_definition
class GtOp(CompareOp):
    """a > b."""

    name = "rlx.gt"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("gt", a, b)


@irdl_op_definition
class GeOp(CompareOp):
    """a >= b."""

    name = "rlx.ge"

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.cmp("ge", a, b)


@irdl_op_definition
class SelectOp(RlxOp):
    """`cond ? a : b` elementwise; the three operands broadcast together.

    `%r = rlx.select %c, %a, %b : tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>`
    """

    name = "rlx.select"

    @classmethod
    def scalar(cls, e: ScalarEmitter, c: SSAValue, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.select(c, a, b)
    cond = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = (
        "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` "
        "type($on_true) `,` type($on_false) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        c, a, b = operands
        assert isinstance(c, TensorType) and isinstance(a, TensorType)
        assert isinstance(b, TensorType)
        _require_dtype("condition", c, (i1,))
        _require_same_dtype("select branches", a, b)
        shape = broadcast_shapes(shape_of(c), shape_of(a), shape_of(b))
        return [_t(shape, a)]


@irdl_op_definition
class CastOp(RlxOp):
    """Element type conversion, same shape. Float to int truncates toward zero;
    to i1 is `x != 0`; between floats rounds to nearest even.

    `%y = rlx.cast %x : tensor<4xf32> -> tensor<4xf16>`
    """

    name = "rlx.cast"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        assert isinstance(result, TensorType)
        return e.cast(x, result.get_element_type())
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE, IsView(same_type_only=True))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_extra(self) -> None:
        _require_shape("result", self.result.type, shape_of(self.input.type))  # pyright: ignore


# --------------------------------------------------------------------------- reductions


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
        shape = reduced_shape(shape_of(x), [_int(props.get("axis"))], "keepdims" in props)
        return [TensorType(i64, list(shape))]


class AxisNormalizeOp(RlxOp, abc.ABC):
    """`%y = rlx.<op> %x axis = -1 : tensor<...>` (max-subtracted, f32 accumulation)."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = "$input `axis` `=` $axis attr-dict `:` type($result)"

    def verify_extra(self) -> None:
        x = self.input.type
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        normalize_axis(_int(self.axis), x.get_num_dims())


@irdl_op_definition
class SoftmaxOp(AxisNormalizeOp):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""

    name = "rlx.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisNormalizeOp):
    """x - max - log(sum(exp(x - max))) along `axis`."""

    name = "rlx.log_softmax"


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
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $gamma `,` $beta `eps` `=` $eps attr-dict `:` type($input) `,` "
        "type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, self.beta.type)  # pyright: ignore


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
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $gamma `eps` `=` $eps attr-dict `:` type($input) `,` type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, None)  # pyright: ignore


# --------------------------------------------------------------------------- matmul


@irdl_op_definition
class MatMulOp(RlxOp):
    """numpy.matmul on operands of rank >= 2: batch dimensions broadcast.

    `%c = rlx.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<2x4x3xf32>`
    """

    name = "rlx.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        a, b = operands
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        _require_dtype("lhs", a, FLOAT_TYPES)
        _require_same_dtype("matmul operands", a, b)
        return [_t(matmul_shape(shape_of(a), shape_of(b)), a)]


# --------------------------------------------------------------------------- shape ops


@irdl_op_definition
class ReshapeOp(RlxOp):
    """Same elements in row-major order, new shape. A view: the planner aliases it.

    `%y = rlx.reshape %x : tensor<4x16xf32> -> tensor<64xf32>`
    """

    name = "rlx.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), INJECTIVE, IsView())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_extra(self) -> None:
        x, r = self.input.type, self.result.type
        assert isinstance(x, TensorType) and isinstance(r, TensorType)
        _require_same_dtype("reshape", x, r)
        if x.element_count() != r.element_count():
            raise VerifyException(
                f"cannot reshape {fmt_shape(shape_of(x))} ({x.element_count()} elements) "
                f"to {fmt_shape(shape_of(r))} ({r.element_count()} elements)"
            )


@irdl_op_definition
class TransposeOp(RlxOp):
    """Permutes axes: result axis i is input axis perm[i].

    `%y = rlx.transpose %x perm = [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>`
    """

    name = "rlx.transpose"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure(), INJECTIVE)
    assembly_format = (
        "$input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        perm = _ints(props.get("perm"))
        shape = shape_of(x)
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(
                f"perm {perm} is not a permutation of the {len(shape)} axes of "
                f"{fmt_shape(shape)}"
            )
        return [_t([shape[p] for p in perm], x)]


@irdl_op_definition
class ExpandOp(RlxOp):
    """numpy.broadcast_to: size-1 (or missing leading) axes repeat.

    `%y = rlx.expand %x : tensor<1x16xf32> -> tensor<4x16xf32>`
    """

    name = "rlx.expand"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return x  # broadcasting is the region's indexing, not a scalar op
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), BROADCAST)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_extra(self) -> None:
        x, r = self.input.type, self.result.type
        assert isinstance(x, TensorType) and isinstance(r, TensorType)
        _require_same_dtype("expand", x, r)
        xs, rs = shape_of(x), shape_of(r)
        if not broadcasts_to(xs, rs):
            raise VerifyException(
                f"cannot expand {fmt_shape(xs)} to {fmt_shape(rs)}: each input axis "
                "must equal the result's or be 1"
            )


@irdl_op_definition
class ConcatOp(RlxOp):
    """Joins tensors along `axis`; other axes must match.

    `%y = rlx.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>`
    """

    name = "rlx.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), INJECTIVE)
    assembly_format = (
        "$inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (xs,) = operands
        assert isinstance(xs, Sequence) and not isinstance(xs, TensorType)
        if not xs:
            raise VerifyException("concat needs at least one input")
        first = xs[0]
        rank = first.get_num_dims()
        axis = normalize_axis(_int(props.get("axis")), rank)
        total = 0
        for i, t in enumerate(xs):
            _require_same_dtype(f"input #{i}", first, t)
            s = shape_of(t)
            if len(s) != rank or any(
                s[k] != shape_of(first)[k] for k in range(rank) if k != axis
            ):
                raise VerifyException(
                    f"input #{i} has shape {fmt_shape(s)}; it must match input #0 "
                    f"{fmt_shape(shape_of(first))} on every axis but {axis}"
                )
            total += s[axis]
        shape = list(shape_of(first))
        shape[axis] = total
        return [_t(shape, first)]


@irdl_op_definition
class SliceOp(RlxOp):
    """Strided slice on every axis: element i of axis k is starts[k] + i*steps[k],
    for i in range(starts[k], ends[k], steps[k]). Starts and ends are absolute
    (the builder normalises python-style ones); with a negative step an end of
    -1 means "through index 0".

    `%y = rlx.slice %x starts = [0, 2] ends = [4, 16] steps = [1, 2] : tensor<4x16xf32> -> tensor<4x7xf32>`
    """

    name = "rlx.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(DenseArrayBase.constr(i64))
    ends = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure(), INJECTIVE)
    assembly_format = (
        "$input `starts` `=` $starts `ends` `=` $ends `steps` `=` $steps attr-dict "
        "`:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        shape = shape_of(x)
        starts, ends, steps = (_ints(props.get(k)) for k in ("starts", "ends", "steps"))
        if not len(starts) == len(ends) == len(steps) == len(shape):
            raise VerifyException(
                f"starts, ends and steps need one entry per axis ({len(shape)}), got "
                f"{len(starts)}, {len(ends)} and {len(steps)}"
            )
        out = []
        for k, (s, e, st, d) in enumerate(zip(starts, ends, steps, shape)):
            if st == 0:
                raise VerifyException(f"step of axis {k} is 0")
            n = slice_extent(s, e, st)
            if n and not (0 <= s < d and 0 <= s + (n - 1) * st < d):
                raise VerifyException(
                    f"axis {k}: range({s}, {e}, {st}) leaves the axis extent {d}"
                )
            out.append(n)
        return [_t(out, x)]


@irdl_op_definition
class GatherOp(RlxOp):
    """numpy.take along `axis` (embedding lookup with axis 0); indices may be
    negative (counting from the end); out-of-range indices are an error.

    `%y = rlx.gather %table[%ids] axis = 0 : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>`
    """

    name = "rlx.gather"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), INJECTIVE)
    assembly_format = (
        "$input `[` $indices `]` `axis` `=` $axis attr-dict `:` type($input) `,` "
        "type($indices) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, idx = operands
        assert isinstance(x, TensorType) and isinstance(idx, TensorType)
        _require_dtype("indices", idx, NUMERIC_TYPES[3:])
        s = shape_of(x)
        axis = normalize_axis(_int(props.get("axis")), len(s))
        return [_t((*s[:axis], *shape_of(idx), *s[axis + 1 :]), x)]


# --------------------------------------------------------------------------- conv / pool


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


# --------------------------------------------------------------------------- composites


@irdl_op_definition
class LinearOp(RlxOp):
    """x · wᵀ + b, then an optional activation; w is [out, in], b is [out].

    `%y = rlx.linear %x, %w bias %b activation "gelu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>`
    """

    name = "rlx.linear"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    activation = opt_prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), OPAQUE, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? (`activation` $activation^)? attr-dict "
        "`:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)"
    )

    def native_on(self, target: str) -> bool:
        """cuda runs linear as one cuBLASLt matmul whose epilogue adds the bias
        and applies relu or the tanh GELU; other activations are split off."""
        if target == "cuda" and self.activation is not None:
            return self.bias is not None and self.activation.data in CUDA_EPILOGUES
        return True

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, w, b = operands
        assert isinstance(x, TensorType) and isinstance(w, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _require_same_dtype("input and weight", x, w)
        xs, ws = shape_of(x), shape_of(w)
        if len(ws) != 2 or len(xs) < 1 or xs[-1] != ws[1]:
            raise VerifyException(
                f"weight has shape {fmt_shape(ws)}, expected [out, {xs[-1] if xs else '?'}]"
                f" for an input of shape {fmt_shape(xs)}"
            )
        if b is not None:
            assert isinstance(b, TensorType)
            _require_shape("bias", b, (ws[0],))
            _require_same_dtype("input and bias", x, b)
        act = props.get("activation")
        if act is not None:
            assert isinstance(act, StringAttr)
            if act.data not in LINEAR_ACTIVATIONS:
                raise VerifyException(
                    f"unknown activation '{act.data}', expected one of "
                    f"{', '.join(LINEAR_ACTIVATIONS)}"
                )
        return [_t((*xs[:-1], ws[0]), x)]


@irdl_op_definition
class FusedResidualLayerNormOp(RlxOp):
    """s = x + residual; returns (s, layer_norm(s, gamma, beta, eps)).

    `%s, %y = rlx.fused_residual_layer_norm %x, %r, %g, %b eps = 1.0e-05 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.fused_residual_layer_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    G: ClassVar = VarConstraint("G", base(TensorType))
    input = operand_def(T)
    residual = operand_def(T)
    gamma = operand_def(G)
    beta = operand_def(G)
    sum = result_def(T)
    normed = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $residual `,` $gamma `,` $beta `eps` `=` $eps attr-dict `:` "
        "type($input) `,` type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, self.beta.type)  # pyright: ignore


@irdl_op_definition
class FusedResidualRmsNormOp(RlxOp):
    """s = x + residual; returns (s, rms_norm(s, gamma, eps)).

    `%s, %y = rlx.fused_residual_rms_norm %x, %r, %g eps = 1.0e-06 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.fused_residual_rms_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    residual = operand_def(T)
    gamma = operand_def(TensorType)
    sum = result_def(T)
    normed = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $residual `,` $gamma `eps` `=` $eps attr-dict `:` type($input) `,` "
        "type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, None)  # pyright: ignore


@irdl_op_definition
class SwigluOp(RlxOp):
    """Splits the last axis in halves a (first, the gate) and b: silu(a) * b.

    `%y = rlx.swiglu %x : tensor<4x32xf32> -> tensor<4x16xf32>`
    """

    name = "rlx.swiglu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), INJECTIVE, Composite())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        s = shape_of(x)
        if not s or s[-1] % 2:
            raise VerifyException(
                f"swiglu needs an even last axis, got shape {fmt_shape(s)}"
            )
        return [_t((*s[:-1], s[-1] // 2), x)]


@irdl_op_definition
class AttentionOp(RlxOp):
    """softmax(q·kᵀ · scale + mask [+ causal]) · v over [batch, heads, seq, head_dim].

    `scale` defaults to 1/sqrt(head_dim). `causal` masks key j > query i
    (top-left aligned, as PyTorch's `is_causal`). `mask` is additive and
    broadcasts to [batch, heads, q_seq, k_seq].

    `%o = rlx.attention %q, %k, %v causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>`
    """

    name = "rlx.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    causal = opt_prop_def(UnitAttr)
    scale = opt_prop_def(FloatAttr[Float64Type])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), OPAQUE, Composite())
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)? "
        "(`scale` $scale^)? attr-dict `:` type($query) `,` type($key) `,` "
        "type($value) (`,` type($mask)^)? `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        q, k, v, m = operands
        assert isinstance(q, TensorType) and isinstance(k, TensorType)
        assert isinstance(v, TensorType)
        _require_dtype("query", q, FLOAT_TYPES)
        _require_same_dtype("query and key", q, k)
        _require_same_dtype("query and value", q, v)
        qs, ks, vs = shape_of(q), shape_of(k), shape_of(v)
        if len(qs) != 4 or len(ks) != 4 or len(vs) != 4:
            raise VerifyException(
                "attention takes [batch, heads, seq, head_dim] query, key and value, got "
                f"{fmt_shape(qs)}, {fmt_shape(ks)}, {fmt_shape(vs)}"
            )
        if qs[:2] != ks[:2] or qs[:2] != vs[:2] or qs[3] != ks[3] or ks[2] != vs[2]:
            raise VerifyException(
                f"query {fmt_shape(qs)}, key {fmt_shape(ks)} and value {fmt_shape(vs)} "
                "disagree: batch and heads must match, key's head_dim must equal "
                "query's, and key and value need the same sequence length"
            )
        if m is not None:
            assert isinstance(m, TensorType)
            _require_same_dtype("query and mask", q, m)
            scores = (qs[0], qs[1], qs[2], ks[2])
            if not broadcasts_to(shape_of(m), scores):
                raise VerifyException(
                    f"mask has shape {fmt_shape(shape_of(m))}, which does not broadcast "
                    f"to the scores' {fmt_shape(scores)}"
                )
        return [_t((qs[0], qs[1], qs[2], vs[3]), q)]


@irdl_op_definition
class RopeOp(RlxOp):
    """Rotary position embedding, rotate-half form:
    x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2]).
    cos and sin broadcast to x (typically [seq, head_dim]).

    `%y = rlx.rope %x, %cos, %sin : tensor<1x2x8x4xf32>, tensor<8x4xf32>`
    """

    name = "rlx.rope"
    T: ClassVar = VarConstraint("T", base(TensorType))
    C: ClassVar = VarConstraint("C", base(TensorType))
    input = operand_def(T)
    cos = operand_def(C)
    sin = operand_def(C)
    result = result_def(T)
    traits = traits_def(Pure(), INJECTIVE, Composite())
    assembly_format = "$input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos)"

    def verify_extra(self) -> None:
        x, c = self.input.type, self.cos.type
        assert isinstance(x, TensorType) and isinstance(c, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _require_same_dtype("input and cos", x, c)
        xs, cs = shape_of(x), shape_of(c)
        if not xs or xs[-1] % 2:
            raise VerifyException(f"rope needs an even last axis, got {fmt_shape(xs)}")
        if not broadcasts_to(cs, xs):
            raise VerifyException(
                f"cos/sin of shape {fmt_shape(cs)} do not broadcast to the input "
                f"{fmt_shape(xs)}"
            )


# --------------------------------------------------------------------------- regions

#: Dialects whose ops may appear in an elementwise region body (scalar ops only).
REGION_BODY_DIALECTS = ("arith", "math")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates an `rlx.elementwise_region` body with one scalar per result."""

    name = "rlx.yield"
    values = var_operand_def()
    traits = lazy_traits_def(
        lambda: (IsTerminator(), Pure(), HasParent(ElementwiseRegionOp))
    )
    assembly_format = "$values attr-dict `:` type($values)"


@irdl_op_definition
class ElementwiseRegionOp(RlxOp):
    """A fused elementwise kernel: the body maps one scalar of each input
    (broadcast to the common shape) to one scalar of each result.

    ```
    %r = rlx.elementwise_region ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      rlx.yield %s : f32
    }
    ```

    Every result has the same shape (the iteration space) and every input
    broadcasts to it (an `expand` folds into a region as a smaller input). The body is one block
    of pure `arith`/`math` ops that reads only its arguments (isolated from
    above), as `linalg.generic`'s does.
    """

    name = "rlx.elementwise_region"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure(), ELEMENTWISE, IsolatedFromAbove())
    assembly_format = (
        "`ins` `(` $inputs `:` type($inputs) `)` `->` type($outputs) "
        "attr-dict-with-keyword $body"
    )

    def verify_extra(self) -> None:
        if not self.inputs:
            raise VerifyException("elementwise_region needs at least one input")
        if not self.outputs:
            raise VerifyException("elementwise_region needs at least one result")
        shape = shape_of(self.outputs[0].type)
        for i, r in enumerate(self.outputs):
            if shape_of(r.type) != shape:
                raise VerifyException(
                    f"result #{i} has shape {fmt_shape(shape_of(r.type))}, but result #0 "
                    f"has {fmt_shape(shape)}: all results share the iteration shape"
                )
        for i, v in enumerate(self.inputs):
            vs = shape_of(v.type)
            if not broadcasts_to(vs, shape):
                raise VerifyException(
                    f"input #{i} of shape {fmt_shape(vs)} does not broadcast to the "
                    f"result shape {fmt_shape(shape)}"
                )
        block = self.body.block
        if len(block.args) != len(self.inputs):
            raise VerifyException(
                f"body has {len(block.args)} arguments, expected one per input "
                f"({len(self.inputs)})"
            )
        for i, (arg, v) in enumerate(zip(block.args, self.inputs)):
            el = v.type.get_element_type()  # pyright: ignore
            if arg.type != el:
                raise VerifyException(
                    f"body argument #{i} has type {arg.type}, expected the element type "
                    f"{el} of input #{i}"
                )
        for op in block.ops:
            if isinstance(op, YieldOp):
                continue
            scalar = all(
                t in ALL_TYPES for t in (*op.operand_types, *op.result_types)
            )
            if op.dialect_name() not in REGION_BODY_DIALECTS or op.regions or not scalar:
                raise VerifyException(
                    f"'{op.name}' may not appear in an elementwise region body: only "
                    f"region-free {' and '.join(REGION_BODY_DIALECTS)} ops on scalars"
                )
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("body must end with rlx.yield")
        if len(term.values) != len(self.outputs):
            raise VerifyException(
                f"rlx.yield gives {len(term.values)} values, expected one per result "
                f"({len(self.outputs)})"
            )
        for i, (v, r) in enumerate(zip(term.values, self.outputs)):
            el = r.type.get_element_type()  # pyright: ignore
            if v.type != el:
                raise VerifyException(
                    f"yielded value #{i} has type {v.type}, expected the element type "
                    f"{el} of result #{i}"
                )


# --------------------------------------------------------------------------- dialect

UNARY_OPS: tuple[type[UnaryElementwiseOp], ...] = (
    NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, SinOp, CosOp, TanhOp,
    SigmoidOp, ReluOp, GeluOp, GeluTanhOp, SiluOp, ErfOp, FloorOp, CeilOp, RoundOp,
    SignOp,
)  # fmt: skip
BINARY_OPS: tuple[type[BinaryBroadcastOp], ...] = (
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp,
)  # fmt: skip
COMPARE_OPS: tuple[type[CompareOp], ...] = (EqOp, NeOp, LtOp, LeOp, GtOp, GeOp)
REDUCE_OPS: tuple[type[ReduceOp], ...] = (
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
)  # fmt: skip

Rlx = Dialect(
    "rlx",
    [
        ParamOp, ConstantOp, *UNARY_OPS, *BINARY_OPS, *COMPARE_OPS, SelectOp, CastOp,
        *REDUCE_OPS, ArgMaxOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp,
        MatMulOp, ReshapeOp, TransposeOp, ExpandOp, ConcatOp, SliceOp, GatherOp,
        Conv2dOp, MaxPool2dOp, AvgPool2dOp, LinearOp, FusedResidualLayerNormOp,
        FusedResidualRmsNormOp, SwigluOp, AttentionOp, RopeOp, ElementwiseRegionOp,
        YieldOp,
    ],  # fmt: skip
    [],
)

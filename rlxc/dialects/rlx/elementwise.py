"""Elementwise ops: one output element from the input elements at the same
(broadcast) index. Unary math (`rlx.exp`, `rlx.gelu`, ...), binary arithmetic
with numpy broadcasting (`rlx.add`, ...), comparisons to i1 (`rlx.eq`, ...),
`rlx.select` and `rlx.cast`.

Each op also states its scalar form, which `rlx-fuse-elementwise` builds into
a region body through a `ScalarEmitter`. Where that form is one op, it is data
on the op, as `py_operation` is in `xdsl.dialects.arith`: a unary op names its
`math` op (`MATH_OP`), a binary op the emitter method (`EMITTER`), a
comparison its predicate (`PREDICATE`); the family's `scalar` applies it. Ops
whose expression is more than that (gelu, sign, cast, ...) define `scalar`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects import math
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlxc.dialects.rlx.base import (
    ELEMENTWISE,
    IsView,
    RlxOp,
    _Operands,
    _require_dtype,
    _require_same_dtype,
    _require_shape,
    _t,
)
from rlxc.dialects.scalar import ErfcOp, ScalarEmitter
from rlxc.dialects.types import (
    ALL_TYPES,
    FLOAT_TYPES,
    NUMERIC_TYPES,
    broadcast_shapes,
    is_float,
    shape_of,
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

    #: The `math` op that is the op's scalar form (unless the op defines `scalar`).
    MATH_OP: ClassVar[type[Operation]]

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        """The scalar form on `x`: `MATH_OP` applied to it."""
        return e.unary(cls.MATH_OP, x)

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
    MATH_OP: ClassVar = math.ExpOp


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm."""

    name = "rlx.log"
    MATH_OP: ClassVar = math.LogOp


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root."""

    name = "rlx.sqrt"
    MATH_OP: ClassVar = math.SqrtOp


@irdl_op_definition
class RsqrtOp(UnaryElementwiseOp):
    """1 / sqrt(x)."""

    name = "rlx.rsqrt"
    MATH_OP: ClassVar = math.RsqrtOp


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
    MATH_OP: ClassVar = math.SinOp


@irdl_op_definition
class CosOp(UnaryElementwiseOp):
    """cos(x), x in radians, full range (no fast-math reduction)."""

    name = "rlx.cos"
    MATH_OP: ClassVar = math.CosOp


@irdl_op_definition
class TanOp(UnaryElementwiseOp):
    """tan(x), x in radians, full range."""

    name = "rlx.tan"
    MATH_OP: ClassVar = math.TanOp


@irdl_op_definition
class AsinOp(UnaryElementwiseOp):
    """arcsin(x) in [-pi/2, pi/2]; NaN outside [-1, 1]."""

    name = "rlx.asin"
    MATH_OP: ClassVar = math.AsinOp


@irdl_op_definition
class AcosOp(UnaryElementwiseOp):
    """arccos(x) in [0, pi]; NaN outside [-1, 1]."""

    name = "rlx.acos"
    MATH_OP: ClassVar = math.AcosOp


@irdl_op_definition
class AtanOp(UnaryElementwiseOp):
    """arctan(x) in (-pi/2, pi/2)."""

    name = "rlx.atan"
    MATH_OP: ClassVar = math.AtanOp


@irdl_op_definition
class SinhOp(UnaryElementwiseOp):
    """Hyperbolic sine (to full relative precision near 0)."""

    name = "rlx.sinh"
    MATH_OP: ClassVar = math.SinhOp


@irdl_op_definition
class CoshOp(UnaryElementwiseOp):
    """Hyperbolic cosine."""

    name = "rlx.cosh"
    MATH_OP: ClassVar = math.CoshOp


@irdl_op_definition
class AsinhOp(UnaryElementwiseOp):
    """Inverse hyperbolic sine."""

    name = "rlx.asinh"
    MATH_OP: ClassVar = math.AsinhOp


@irdl_op_definition
class AcoshOp(UnaryElementwiseOp):
    """Inverse hyperbolic cosine, in [0, inf); NaN below 1."""

    name = "rlx.acosh"
    MATH_OP: ClassVar = math.AcoshOp


@irdl_op_definition
class AtanhOp(UnaryElementwiseOp):
    """Inverse hyperbolic tangent; -inf and inf at -1 and 1, NaN outside [-1, 1]."""

    name = "rlx.atanh"
    MATH_OP: ClassVar = math.AtanhOp


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """Hyperbolic tangent."""

    name = "rlx.tanh"
    MATH_OP: ClassVar = math.TanhOp


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """1 / (1 + e**-x)."""

    name = "rlx.sigmoid"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return e.sigmoid(x)


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """Exact GELU: x * (1 + erf(x / sqrt(2))) / 2, computed as the same
    function x/2 * erfc(-x / sqrt(2)) everywhere, with no branch: 1 + erf
    cancels below 0 (in f32 it keeps few bits from -3 and is 0 below about
    -5.5), erfc does not.

    f32: `math.erfc`, rendered as `rlx_erfcf` (28 instructions; within 8 ulp
    of GELU with its argument rounded as the kernel rounds it, over
    [-13.5, 8) on an H100: test_f32_gelu_erfc_within_ulps_on_gpu). Until
    session 23 the f32 form was 1 + erff from x = -3 up and an erfc tail
    below, a branch: a warp whose inputs straddle -3 computed both (bias +
    GELU's inputs do, often), so erfc everywhere is 0-7% faster there
    (benchmarks/RESULTS.md, session 23) and as fast elsewhere.

    f16/bf16 results (computed in f32, rounded once: `scalar_16`) take
    `math.erfc fastmath<afn>`: an erfc within 1e-5 relative of the exact one
    (`rlx_erfc_afn`, about 17 instructions where erff takes 25), which the
    rounding to 16 bits hides: over all 65536 inputs the f16 results differ
    from the correctly rounded GELU by 1 ulp in 7 and the bf16 ones in 64,
    where the 1 + erff form missed 331 f16 ones by up to 2 (its tail
    cancels: bf16 was 0 below x = -5.5). bf16 results under 1e-38 (6 inputs
    from x = -13.19) are 0: its 2^x flushes subnormals. On the H200, where
    f16/bf16 GELU was bound by its instructions, 8-12% faster (bias + GELU
    13-21%; benchmarks/RESULTS.md, session 22)."""

    name = "rlx.gelu"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return cls._erfc_form(e, x, approx=False)

    @classmethod
    def scalar_16(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return cls._erfc_form(e, x, approx=True)

    @staticmethod
    def _erfc_form(e: ScalarEmitter, x: SSAValue, *, approx: bool) -> SSAValue:
        erfc = e.unary(ErfcOp, e.mul(x, e.const(-0.7071067811865476, x)), approx=approx)
        return e.mul(e.mul(x, e.const(0.5, x)), erfc)


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
class SoftplusOp(UnaryElementwiseOp):
    """log(1 + e**x), computed as max(x, 0) + log1p(e**-|x|) so that no
    intermediate overflows."""

    name = "rlx.softplus"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        tail = e.unary(math.Log1pOp, e.exp(e.neg(e.unary(math.AbsFOp, x))))
        return e.add(e.maximum(x, e.const(0.0, x)), tail)


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    """The Gauss error function."""

    name = "rlx.erf"
    MATH_OP: ClassVar = math.ErfOp


@irdl_op_definition
class FloorOp(UnaryElementwiseOp):
    """Largest integer not greater than x."""

    name = "rlx.floor"
    MATH_OP: ClassVar = math.FloorOp


@irdl_op_definition
class CeilOp(UnaryElementwiseOp):
    """Smallest integer not less than x."""

    name = "rlx.ceil"
    MATH_OP: ClassVar = math.CeilOp


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """Round to nearest, ties to even (numpy.rint, CUDA rintf)."""

    name = "rlx.round"
    MATH_OP: ClassVar = math.RoundEvenOp


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

    #: The `ScalarEmitter` method that builds the op's scalar form (`"add"`).
    EMITTER: ClassVar[str]

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        """The scalar form on `a`, `b`: the emitter's `EMITTER` method."""
        return getattr(e, cls.EMITTER)(a, b)

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
    EMITTER: ClassVar = "add"


@irdl_op_definition
class SubOp(BinaryBroadcastOp):
    """a - b."""

    name = "rlx.sub"
    EMITTER: ClassVar = "sub"


@irdl_op_definition
class MulOp(BinaryBroadcastOp):
    """a * b."""

    name = "rlx.mul"
    EMITTER: ClassVar = "mul"


@irdl_op_definition
class DivOp(BinaryBroadcastOp):
    """a / b; on integers, truncation toward zero (as C and CUDA divide)."""

    name = "rlx.div"
    EMITTER: ClassVar = "div"


@irdl_op_definition
class PowOp(BinaryBroadcastOp):
    """a ** b (floating point)."""

    name = "rlx.pow"
    EMITTER: ClassVar = "pow"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES


@irdl_op_definition
class RemOp(BinaryBroadcastOp):
    """a - trunc(a / b) * b, exactly: the remainder with a's sign (C's fmod
    on floats, % on integers); a rem 0 is NaN on floats (as fmod), 0 on
    integers (as rlx.div's a / 0)."""

    name = "rlx.rem"
    EMITTER: ClassVar = "rem"


@irdl_op_definition
class MaximumOp(BinaryBroadcastOp):
    """Elementwise maximum; NaN in either operand gives NaN."""

    name = "rlx.maximum"
    EMITTER: ClassVar = "maximum"


@irdl_op_definition
class MinimumOp(BinaryBroadcastOp):
    """Elementwise minimum; NaN in either operand gives NaN."""

    name = "rlx.minimum"
    EMITTER: ClassVar = "minimum"


class CompareOp(BinaryBroadcastOp, abc.ABC):
    """A broadcasting comparison with an i1 result (ordered: NaN compares false, except ne)."""

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ALL_TYPES

    #: The comparison, one of eq/ne/lt/le/gt/ge (`ScalarEmitter.cmp` picks the
    #: float, signed or unsigned predicate by the operand type).
    PREDICATE: ClassVar[str]

    @classmethod
    def scalar(cls, e: ScalarEmitter, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        """The scalar form on `a`, `b`: a compare by `PREDICATE`."""
        return e.cmp(cls.PREDICATE, a, b)

    @classmethod
    def result_element_type(cls, operand: TensorType) -> Attribute:
        return i1


@irdl_op_definition
class EqOp(CompareOp):
    """a == b."""

    name = "rlx.eq"
    PREDICATE: ClassVar = "eq"


@irdl_op_definition
class NeOp(CompareOp):
    """a != b (true when either is NaN)."""

    name = "rlx.ne"
    PREDICATE: ClassVar = "ne"


@irdl_op_definition
class LtOp(CompareOp):
    """a < b."""

    name = "rlx.lt"
    PREDICATE: ClassVar = "lt"


@irdl_op_definition
class LeOp(CompareOp):
    """a <= b."""

    name = "rlx.le"
    PREDICATE: ClassVar = "le"


@irdl_op_definition
class GtOp(CompareOp):
    """a > b."""

    name = "rlx.gt"
    PREDICATE: ClassVar = "gt"


@irdl_op_definition
class GeOp(CompareOp):
    """a >= b."""

    name = "rlx.ge"
    PREDICATE: ClassVar = "ge"


# --------------------------------------------------------------------------- select, cast


@irdl_op_definition
class SelectOp(RlxOp):
    """`cond ? a : b` elementwise; the three operands broadcast together.

    `%r = rlx.select %c, %a, %b : tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>`
    """

    name = "rlx.select"
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
    def scalar(cls, e: ScalarEmitter, c: SSAValue, a: SSAValue, b: SSAValue, *, result: Attribute) -> SSAValue:
        return e.select(c, a, b)

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
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE, IsView(same_type_only=True))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        assert isinstance(result, TensorType)
        return e.cast(x, result.get_element_type())

    def verify_extra(self) -> None:
        _require_shape("result", self.result.type, shape_of(self.input.type))  # pyright: ignore


UNARY_OPS: tuple[type[UnaryElementwiseOp], ...] = (
    NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, SinOp, CosOp, TanOp,
    AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, TanhOp,
    SigmoidOp, ReluOp, GeluOp, GeluTanhOp, SiluOp, ErfOp, FloorOp, CeilOp, RoundOp,
    SignOp, SoftplusOp,
)  # fmt: skip
BINARY_OPS: tuple[type[BinaryBroadcastOp], ...] = (
    AddOp, SubOp, MulOp, DivOp, RemOp, PowOp, MaximumOp, MinimumOp,
)  # fmt: skip
COMPARE_OPS: tuple[type[CompareOp], ...] = (EqOp, NeOp, LtOp, LeOp, GtOp, GeOp)

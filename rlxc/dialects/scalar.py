"""`ScalarEmitter`: builds the scalar `arith`/`math` form of elementwise ops.

Each elementwise rlx op states its scalar expression (its class's
`scalar(e, *args, result=...)`) in terms of this emitter, either as data its
family applies (a unary op's `MATH_OP`, a binary op's `EMITTER` method name, a
comparison's `PREDICATE`) or as an explicit expression. The emitter picks the
float or integer `arith` op by the operand's type, so an expression like
`e.add(x, e.const(1.0, x))` reads the same for f32, f16 and i32. The fusion
pass collects the created ops into a region body; codegen later renders the
same ops through its C++ table.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, TensorType, bf16, f16
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure, SameOperandsAndResultType

from rlxc.dialects.types import dtype, is_float as _is_float


def _width(t: Attribute) -> int:
    return dtype(t).bits


_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_CMPI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMPI1 = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


@irdl_op_definition
class ErfcOp(math.FloatingPointLikeUnaryMathOperation):
    """`math.erfc`, the complementary error function 1 - erf(x), as upstream
    MLIR's math dialect has it (xDSL 0.74's lacks it; `make_context` loads
    it beside xDSL's `math` ops). Exact GELU needs it: x/2 * erfc(-x/sqrt 2)
    keeps its relative precision for negative x, where 1 + erf cancels."""

    name = "math.erfc"

    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """`arith.remf`, upstream MLIR's float remainder: a - trunc(a / b) * b
    computed exactly, with a's sign (C's fmod; NaN for b = 0 or an infinite
    a). xDSL 0.74's arith lacks it; `make_context` loads it beside xDSL's
    `arith` ops. rlx.rem needs it (ONNX Mod of floats)."""

    name = "arith.remf"

    traits = traits_def(Pure())


class ScalarEmitter:
    """Creates scalar ops in order; `ops` lists them for insertion into a block."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def _add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    # -- leaves
    def const(self, value: float | int | bool, like: SSAValue | Attribute) -> SSAValue:
        t = like.type if isinstance(like, SSAValue) else like
        if _is_float(t):
            return self._add(arith.ConstantOp(FloatAttr(float(value), t)))  # pyright: ignore
        return self._add(arith.ConstantOp(IntegerAttr(int(value), t)))  # pyright: ignore

    # -- arithmetic, float or signed integer by operand type
    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.AddfOp(a, b) if _is_float(a.type) else arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.SubfOp(a, b) if _is_float(a.type) else arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MulfOp(a, b) if _is_float(a.type) else arith.MuliOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.DivfOp(a, b) if _is_float(a.type) else arith.DivSIOp(a, b))

    def rem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """The remainder with the dividend's sign: arith.remf (C's fmod) or remsi (C's %)."""
        return self._add(RemFOp(a, b) if _is_float(a.type) else arith.RemSIOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        if _is_float(a.type):
            return self._add(arith.NegfOp(a))
        return self.sub(self.const(0, a), a)

    def maximum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MaximumfOp(a, b) if _is_float(a.type) else arith.MaxSIOp(a, b))

    def minimum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MinimumfOp(a, b) if _is_float(a.type) else arith.MinSIOp(a, b))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """pred in eq/ne/lt/le/gt/ge: ordered for floats (ne is unordered:
        NaN != x), signed for integers, unsigned for i1."""
        if _is_float(a.type):
            return self._add(arith.CmpfOp(a, b, _CMPF[pred]))
        table = _CMPI1 if _width(a.type) == 1 else _CMPI
        return self._add(arith.CmpiOp(a, b, table[pred]))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.SelectOp(c, a, b))

    def unary(self, op_type: type[Operation], a: SSAValue, approx: bool = False) -> SSAValue:
        """A `math` op of one operand (math.ExpOp, math.ErfOp, ...);
        `approx` sets its `fastmath<afn>` flag (an approximate function is
        allowed: only where the value is rounded to f16/bf16 after)."""
        if approx:
            return self._add(op_type(a, FastMathFlagsAttr([FastMathFlag.APPROX_FUNC])))  # pyright: ignore[reportCallIssue]
        return self._add(op_type(a))  # pyright: ignore[reportCallIssue]

    def binary(self, op_type: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
        """A `math` op of two operands (math.PowFOp)."""
        return self._add(op_type(a, b))  # pyright: ignore[reportCallIssue]

    def pow(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a ** b (floating point)."""
        return self.binary(math.PowFOp, a, b)

    def exp(self, a: SSAValue) -> SSAValue:
        return self.unary(math.ExpOp, a)

    def sigmoid(self, a: SSAValue) -> SSAValue:
        one = self.const(1.0, a)
        return self.div(one, self.add(one, self.exp(self.neg(a))))

    def cast(self, a: SSAValue, to: Attribute) -> SSAValue:
        """Element conversion with rlx.cast's rules: float->int truncates,
        anything->i1 is `!= 0`, i1->number is 0/1."""
        src = a.type
        if src == to:
            return a
        if _width(to) == 1:
            return self.cmp("ne", a, self.const(0, a))
        if _is_float(src) and _is_float(to):
            if _width(src) == 16 and _width(to) == 16:  # f16 <-> bf16 through f32
                a = self._add(arith.ExtFOp(a, Float32Type()))
                return self._add(arith.TruncFOp(a, to))
            op = arith.ExtFOp(a, to) if _width(to) > _width(src) else arith.TruncFOp(a, to)
            return self._add(op)
        if _is_float(src):
            return self._add(arith.FPToSIOp(a, to))
        if _width(src) == 1:  # i1 is unsigned: true -> 1
            if _is_float(to):
                return self._add(arith.UIToFPOp(a, to))
            return self._add(arith.ExtUIOp(a, to))
        if _is_float(to):
            return self._add(arith.SIToFPOp(a, to))
        if _width(to) > _width(src):
            return self._add(arith.ExtSIOp(a, to))
        return self._add(arith.TruncIOp(a, to))


def emit_scalar(op: Operation, e: ScalarEmitter, args: Sequence[SSAValue]) -> SSAValue:
    """The scalar form of one single-result elementwise rlx op on `args`.

    An f16/bf16 op whose form takes several steps (silu, gelu, softplus,
    ...) computes them in f32 and rounds once, to its result type, as the
    reference does for every op (the kernels round each f16/bf16 value, so
    its steps in the op's own type would each round). An op class may give
    a cheaper f32 form for 16-bit results as `scalar_16` (GELU)."""
    result = op.results[0].type
    el = result.get_element_type() if isinstance(result, TensorType) else result
    if not (args and el in (f16, bf16) and all(a.type == el for a in args)):
        return type(op).scalar(e, *args, result=result)  # pyright: ignore
    plain = ScalarEmitter()  # the form in the op's own type: kept where it is one step
    y = type(op).scalar(plain, *args, result=result)  # pyright: ignore
    if sum(not isinstance(o, arith.ConstantOp) for o in plain.ops) <= 1:
        e.ops.extend(plain.ops)
        return y
    for o in plain.ops:
        o.drop_all_references()  # dropped: no dangling uses of `args` left behind
    wide = [e.cast(a, Float32Type()) for a in args]
    form = getattr(type(op), "scalar_16", type(op).scalar)  # an op's own form for a 16-bit result, if it has one
    y = form(e, *wide, result=TensorType(Float32Type(), result.get_shape()))  # pyright: ignore
    return e.cast(y, el)

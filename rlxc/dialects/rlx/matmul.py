"""Matrix products: `rlx.matmul` (numpy.matmul with broadcast batch axes) and
the composite `rlx.linear` (x · wᵀ + b, then an optional activation), with
`ACTIVATIONS`, the unary ops a linear may apply."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import (
    OPAQUE,
    Composite,
    RlxOp,
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
    GeluOp,
    GeluTanhOp,
    ReluOp,
    SigmoidOp,
    SiluOp,
    TanhOp,
    UnaryElementwiseOp,
)
from rlxc.dialects.rlx.shape import ReshapeOp, TransposeOp
from rlxc.dialects.types import FLOAT_TYPES, fmt_shape, matmul_shape, shape_of


@irdl_op_definition
class MatMulOp(RlxOp):
    """numpy.matmul on operands of rank >= 2: batch dimensions broadcast.

    `transpose_lhs` / `transpose_rhs` (optional) say an operand is stored
    with its last two axes swapped: the product uses its transpose, as BLAS's
    transpose flags do (rlx-fold-layout folds `rlx.transpose`s into them;
    the gemm reads the operand where it is).

    `%c = rlx.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<2x4x3xf32>`
    `%c = rlx.matmul %a, %k transpose_rhs : tensor<2x4x8xf32>, tensor<2x3x8xf32> -> tensor<2x4x3xf32>`
    """

    name = "rlx.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_lhs = opt_prop_def(UnitAttr)
    transpose_rhs = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), OPAQUE)
    assembly_format = (
        "$lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)? "
        "attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    @staticmethod
    def logical_shapes(a: TensorType, b: TensorType, props: Mapping[str, Attribute]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The operands' shapes as the product uses them (flags applied)."""
        sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
        if props.get("transpose_lhs") is not None and len(sa) >= 2:
            sa = (*sa[:-2], sa[-1], sa[-2])
        if props.get("transpose_rhs") is not None and len(sb) >= 2:
            sb = (*sb[:-2], sb[-1], sb[-2])
        return sa, sb

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        a, b = operands
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        _require_dtype("lhs", a, FLOAT_TYPES)
        _require_same_dtype("matmul operands", a, b)
        if props.get("transpose_lhs") is None and props.get("transpose_rhs") is None:
            return [_t(matmul_shape(shape_of(a), shape_of(b)), a)]
        try:
            return [_t(matmul_shape(*cls.logical_shapes(a, b, props)), a)]
        except VerifyException as e:
            raise VerifyException(f"{e} (shapes as the transpose flags read the operands)") from None


#: The activations `rlx.linear` may carry: each is the name of a unary op,
#: which defines it.
ACTIVATIONS: dict[str, type[UnaryElementwiseOp]] = {
    op.name.removeprefix("rlx."): op
    for op in (ReluOp, GeluOp, GeluTanhOp, SiluOp, SigmoidOp, TanhOp)
}
LINEAR_ACTIVATIONS = tuple(ACTIVATIONS)

#: target -> the activations it applies inside the gemm, after the bias (on
#: cuda, cuBLASLt's epilogues; `rlxc.codegen.GEMM_EPILOGUES` names them there;
#: its GELU is the tanh form, so exact `gelu` is not here).
EPILOGUE_ACTIVATIONS: dict[str, tuple[str, ...]] = {"cuda": ("relu", "gelu_tanh")}


@irdl_op_definition
class LinearOp(RlxOp):
    """x · wᵀ + b (+ r), then an optional activation (the unary op of that
    name, see `ACTIVATIONS`); w is [out, in], b is [out]. The optional
    `residual` r has the result's type and needs a bias: a residual add
    folded into the gemm (on cuda, cuBLASLt's C matrix with beta 1, before
    the bias and activation epilogue; `rlx-conv-to-gemm` folds ResNet's).

    `%y = rlx.linear %x, %w bias %b activation "gelu" : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x8xf32>`
    `%y = rlx.linear %x, %w bias %b residual %r : tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>`
    """

    name = "rlx.linear"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    result = result_def(TensorType)
    activation = opt_prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), OPAQUE, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? (`residual` $residual^)? (`activation` $activation^)? attr-dict "
        "`:` type($input) `,` type($weight) (`,` type($bias)^)? (`,` type($residual)^)? `->` type($result)"
    )

    def native_on(self, target: str) -> bool:
        """cuda runs linear as one cuBLASLt matmul whose epilogue adds the bias
        and applies relu or the tanh GELU; other activations are split off."""
        if target == "cuda" and self.activation is not None:
            return self.bias is not None and self.activation.data in EPILOGUE_ACTIVATIONS[target]
        return True

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """On a target with a linear kernel, only the activation is split off
        (the epilogue is what it lacks); elsewhere: transpose, matmul, add, and
        the activation, in f32 for f16/bf16 (cast back at the end)."""
        composite = self.get_trait(Composite)
        assert composite is not None
        if self.activation is not None and b.target in composite.native_targets:
            # Keep the matmul, bias and residual as one native linear; the
            # activation becomes an elementwise op that fusion puts in a region.
            y = b(LinearOp, [self.input, self.weight, self.bias, self.residual])
            return [b.unary(ACTIVATIONS[self.activation.data], y)]
        # f16/bf16 in f32 (a gemm accumulates and applies its epilogue in f32): one rounding, at the end
        x, w, *bias = b.widened(self.input, self.weight, *([self.bias] if self.bias is not None else []))
        res = b.widened(self.residual)[0] if self.residual is not None else None
        xs = shape_of(x.type)
        el = x.type.get_element_type()  # pyright: ignore
        if len(xs) == 1:
            x = b(ReshapeOp, [x], types=[TensorType(el, [1, xs[0]])])
        wt = b(TransposeOp, [w], {"perm": i64_array([1, 0])})
        y = b(MatMulOp, [x, wt])
        if len(xs) == 1:
            y = b(ReshapeOp, [y], types=[TensorType(el, shape_of(self.result.type))])
        if bias:
            y = b(AddOp, [y, bias[0]])
        if res is not None:
            y = b(AddOp, [y, res])
        if self.activation is not None:
            y = b.unary(ACTIVATIONS[self.activation.data], y)
        return [b.narrowed(y, self.result.type)]

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, w, b, r = operands
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
        out = _t((*xs[:-1], ws[0]), x)
        if r is not None:
            if b is None:
                raise VerifyException("a residual needs a bias")
            if r != out:
                raise VerifyException(f"residual has type {r}, expected the result's {out}")
        return [out]

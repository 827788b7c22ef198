"""What every rlx op shares: the traits passes read, the property and type
helpers, the canonicalization hook and `RlxOp`, the base class whose verifier
checks tensor types and then the op's own shape rules."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    NoneAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, traits_def
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, OpTrait
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.types import ALL_TYPES, dtype_name, fmt_shape, shape_of

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
class TakesPrologue(OpTrait):
    """A reduction whose kernel can compute its operand #`operand` with an
    elementwise prologue while it reads it (the row ops: the prologue runs
    per element of the row), so `rlx-fuse-reductions` may fold the
    `rlx.elementwise_region` producing that operand into one `rlx.fusion`.
    Only rows over the trailing axes take one (an `axis` property, where the
    op has it, must name the last axis)."""

    operand: int = 0

    def accepts(self, op: Operation) -> bool:
        axis = getattr(op, "axis", None)
        if axis is None:
            return True
        rank = len(shape_of(op.operands[self.operand].type))  # pyright: ignore[reportArgumentType]
        return rank > 0 and axis.value.data % rank == rank - 1  # pyright: ignore[reportAttributeAccessIssue]


def takes_prologue(op: Operation) -> TakesPrologue | None:
    """The op's `TakesPrologue` trait, where it has one and accepts this instance."""
    trait = op.get_trait(TakesPrologue)
    return trait if trait is not None and trait.accepts(op) else None


@dataclass(frozen=True)
class Composite(OpTrait):
    """A composite op that `rlx-unfuse` may split into primitives with the
    op's own `decompose(b)`.

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
        can; operands in definition order as for `infer_result_types`
        (trailing optional ones may be left out: None)."""
        props = dict(properties or {})
        operands = [*operands, *[None] * (len(cls.get_irdl_definition().operands) - len(operands))]
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

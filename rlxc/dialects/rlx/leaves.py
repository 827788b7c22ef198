"""Leaf ops: values that read no other value, a named weight (`rlx.param`)
and a dense constant (`rlx.constant`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, StringAttr, TensorType
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import OPAQUE, RlxOp
from rlxc.dialects.types import dtype


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

"""The rlx dialect's op facts that passes and the interpreter read from the ops:
scalar forms declared on each elementwise op (or its family), a `decompose`
on each composite, and `rlx.linear`'s activations as unary ops by name."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.irdl import irdl_op_definition, result_def, traits_def
from xdsl.utils.exceptions import PassFailedException

from rlxc.dialects import rlx
from rlxc.dialects.scalar import ScalarEmitter
from rlxc.passes.unfuse import UnfusePass
from rlxc.interp.rlx_numpy import UNARY

OPS = list(rlx.Rlx.operations)


@pytest.mark.parametrize("op", rlx.UNARY_OPS, ids=lambda o: o.name)
def test_unary_op_states_its_scalar_form(op):
    """Its own `scalar`, or the `math` op its family's `scalar` applies."""
    assert "scalar" in vars(op) or "MATH_OP" in vars(op), op.name


@pytest.mark.parametrize("op", rlx.BINARY_OPS, ids=lambda o: o.name)
def test_binary_op_names_an_emitter_method(op):
    assert callable(getattr(ScalarEmitter, op.EMITTER, None)), op.name


@pytest.mark.parametrize("op", rlx.COMPARE_OPS, ids=lambda o: o.name)
def test_compare_op_names_its_predicate(op):
    assert op.PREDICATE == op.name.removeprefix("rlx.")


@pytest.mark.parametrize(
    "op", [o for o in OPS if o.get_trait(rlx.Composite) is not None], ids=lambda o: o.name
)
def test_every_composite_decomposes(op):
    assert callable(getattr(op, "decompose", None)), op.name


def test_linear_activations_are_unary_ops_by_name():
    assert rlx.LINEAR_ACTIVATIONS == tuple(rlx.ACTIVATIONS)
    for name, op in rlx.ACTIVATIONS.items():
        assert op.name == f"rlx.{name}" and op in rlx.UNARY_OPS and op in UNARY
    # the activations linear keeps in its cuda gemm are the ones codegen has
    # a cuBLASLt epilogue for
    from rlxc.codegen import GEMM_EPILOGUES

    assert set(rlx.EPILOGUE_ACTIVATIONS["cuda"]) == set(GEMM_EPILOGUES) <= set(rlx.ACTIVATIONS)


@irdl_op_definition
class _UndecomposableOp(rlx.RlxOp):
    name = "test.undecomposable"
    result = result_def(TensorType)
    traits = traits_def(rlx.Composite())


def test_unfuse_rejects_a_composite_without_decompose():
    module = ModuleOp([_UndecomposableOp.build(result_types=[TensorType(f32, [2])])])
    with pytest.raises(PassFailedException, match="'test.undecomposable' is marked composite but has no decomposition"):
        UnfusePass(target="none").apply(Context(), module)

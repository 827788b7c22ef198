"""Fixes to xDSL 0.74.0 (pinned) that rlxc's passes depend on, applied once
on import of `rlxc.passes` (which every pipeline, `rlxc-opt` and plain
`xdsl-opt` through the universe entry point go through). Each names what it
fixes and the test that shows it; drop one when the pin moves past the fix.

- `Operation.is_structurally_equivalent` compares operands, attributes,
  properties and regions but not result types, so `cse` merges two
  `rlx.elementwise_region`s whose bodies differ only in a result type:
  `arith.truncf %x : f32 to f16` and `... to bf16` (a cast through f16 and
  one through bf16 of the same input became one kernel; found by the random
  graph GPU test). MLIR's OperationEquivalence compares result types; here
  the same check runs first (tests/test_passes_differential.py,
  filecheck/passes/cse-result-types.mlir).
"""

from __future__ import annotations

from xdsl.ir import Operation

_structurally_equivalent = Operation.is_structurally_equivalent


def _is_structurally_equivalent(self, other, context=None) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(other, Operation) and self.result_types != other.result_types:
        return False
    return _structurally_equivalent(self, other, context)


if not getattr(Operation.is_structurally_equivalent, "_rlxc_fix", False):
    _is_structurally_equivalent._rlxc_fix = True  # type: ignore[attr-defined]
    Operation.is_structurally_equivalent = _is_structurally_equivalent  # type: ignore[method-assign]

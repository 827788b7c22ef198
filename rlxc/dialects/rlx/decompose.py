"""`DecomposeBuilder`: what a composite op's `decompose(b)` builds with.

A composite op (one with the `Composite` trait) states its own split into more
primitive rlx ops, as MLIR's `AggregatedOpInterface::decomposeOperation`
does; `rlx-unfuse` constructs this builder at the op and calls
`op.decompose(b)`, which returns the values that replace the op's results.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, bf16, f16, f32, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rlxc.dialects.rlx.base import RlxOp
from rlxc.dialects.rlx.elementwise import CastOp
from rlxc.dialects.rlx.leaves import ConstantOp


class DecomposeBuilder:
    """Creates rlx ops (result types inferred by the op) before `at`, the
    composite being decomposed.

    `target` is the target the decomposition is for: a decomposition may keep
    the part the target has a kernel for (`rlx.linear` on cuda keeps its
    matmul and bias whole and splits off only the activation).
    """

    def __init__(self, rewriter: PatternRewriter, at: Operation, target: str):
        self.rewriter = rewriter
        self.at = at
        self.target = target

    def __call__(
        self,
        op_type: type[RlxOp],
        operands: Sequence[SSAValue | None | Sequence[SSAValue]],
        props: dict[str, Attribute] | None = None,
        types: Sequence[Attribute] | None = None,
    ) -> SSAValue:
        """Inserts `op_type.make(operands, props, types)` and returns its
        first result."""
        op = op_type.make(operands, props, types)
        self.rewriter.insert(op, InsertPoint.before(self.at))
        return op.results[0]

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type."""
        el = like.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
        t = TensorType(el, [])
        attr = DenseIntOrFPElementsAttr.from_list(t, [value])  # pyright: ignore
        return self(ConstantOp, [], {"value": attr}, [t])

    def widened(self, *values: SSAValue) -> list[SSAValue]:
        """`values` cast to f32 where they are f16/bf16, the others as they
        are: the arithmetic of a composite that promises f32 accumulation
        (softmax, the norms), so that its split rounds once, at the end
        (`narrowed`), not after every step (in f16 an eps of 1e-12 would
        round to 0 and a square past 256 overflow)."""
        out = []
        for v in values:
            t = v.type
            if isinstance(t, TensorType) and t.get_element_type() in (f16, bf16):
                v = self(CastOp, [v], types=[TensorType(f32, t.get_shape())])
            out.append(v)
        return out

    def narrowed(self, value: SSAValue, like: Attribute) -> SSAValue:
        """`value` cast back to the type `like` (a `widened` result), where it differs."""
        return value if value.type == like else self(CastOp, [value], types=[like])

    def keep_mask(self, keep: np.ndarray) -> SSAValue:
        """An i1 constant of `keep`'s shape and values."""
        t = TensorType(i1, list(keep.shape))
        attr = DenseIntOrFPElementsAttr.from_list(t, [int(v) for v in keep.ravel()])  # pyright: ignore
        return self(ConstantOp, [], {"value": attr}, [t])

    def unary(self, op_type: type[RlxOp], x: SSAValue) -> SSAValue:
        """A unary elementwise op on `x` (result of `x`'s type)."""
        return self(op_type, [x], types=[x.type])

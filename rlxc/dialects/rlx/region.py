"""Fused regions: `rlx.elementwise_region`, one elementwise kernel whose body
maps scalars to scalars with `arith`/`math` ops, ended by `rlx.yield`
(`rlx-fuse-elementwise` builds them from chains of elementwise and broadcast
ops); and `rlx.fusion`, one kernel whose body is a small graph of tensor ops
around a root reduction (`rlx-fuse-reductions` builds them: an elementwise
prologue computing a row op's input)."""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import DenseArrayBase, TensorType, i64
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import ELEMENTWISE, REDUCTION, FusionKind, RlxOp, fusion_kind
from rlxc.dialects.types import ALL_TYPES, broadcasts_to, fmt_shape, shape_of

#: Dialects whose ops may appear in an elementwise region body (scalar ops only).
REGION_BODY_DIALECTS = ("arith", "math")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates an `rlx.elementwise_region` body with one scalar per result,
    or an `rlx.fusion` body with one tensor per result."""

    name = "rlx.yield"
    values = var_operand_def()
    traits = lazy_traits_def(
        lambda: (IsTerminator(), Pure(), HasParent(ElementwiseRegionOp, FusionOp))
    )
    assembly_format = "$values attr-dict `:` type($values)"


class RegionKernelOp(RlxOp, abc.ABC):
    """An op whose body runs as one kernel: `ins(...) -> results { body }`,
    the body isolated from above (it reads only its arguments) and ended by
    `rlx.yield`. `rlx.elementwise_region` (a scalar body) and `rlx.fusion` (a
    body of tensor ops) share this shape and syntax."""

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    assembly_format = (
        "`ins` `(` $inputs `:` type($inputs) `)` `->` type($outputs) "
        "attr-dict-with-keyword $body"
    )


@irdl_op_definition
class ElementwiseRegionOp(RegionKernelOp):
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

    `windows` (optional; triples `input, offset, width`): the body sees
    that input's columns `offset .. offset + width` along its last axis, a
    slice read in place (the gate and up halves of a merged projection):
    `windows = [0, 0, 64, 1, 64, 64]` reads input 0's first 64
    columns and input 1's next 64.
    """

    name = "rlx.elementwise_region"
    traits = traits_def(Pure(), ELEMENTWISE, IsolatedFromAbove())
    windows = opt_prop_def(DenseArrayBase.constr(i64))
    assembly_format = (
        "`ins` `(` $inputs `:` type($inputs) `)` (`windows` `=` $windows^)? `->` type($outputs) "
        "attr-dict-with-keyword $body"
    )

    def input_windows(self) -> dict[int, tuple[int, int]]:
        """Input index -> (offset, width) of its window along the last axis."""
        if self.windows is None:
            return {}
        v = self.windows.get_values()
        return {int(v[i]): (int(v[i + 1]), int(v[i + 2])) for i in range(0, len(v) - 2, 3)}

    def input_shape(self, j: int) -> tuple[int, ...]:
        """The shape the body sees of input j: its window's, if it has one."""
        s = shape_of(self.inputs[j].type)
        w = self.input_windows().get(j)
        return s if w is None else (*s[:-1], w[1])

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
        if self.windows is not None:
            v = self.windows.get_values()
            if len(v) % 3:
                raise VerifyException(f"windows holds {len(v)} values: (input, offset, width) triples expected")
            seen: set[int] = set()
            for k in range(0, len(v), 3):
                j, off, width = (int(x) for x in v[k : k + 3])
                if not 0 <= j < len(self.inputs) or j in seen:
                    raise VerifyException(f"window #{k // 3} names input {j}: one window per input, 0 <= input < {len(self.inputs)}")
                seen.add(j)
                full = shape_of(self.inputs[j].type)
                if not full or off < 0 or width < 1 or off + width > full[-1]:
                    raise VerifyException(
                        f"window of input #{j} (offset {off}, width {width}) does not fit its last axis "
                        f"({fmt_shape(full)})"
                    )
        for i, v in enumerate(self.inputs):
            vs = self.input_shape(i)
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


@irdl_op_definition
class FusionOp(RegionKernelOp):
    """One kernel for a small graph of tensor ops: a root reduction (a row op:
    softmax, log_softmax, layer_norm, rms_norm) whose data input is computed
    by an `rlx.elementwise_region` prologue inside the body, as XLA's input
    fusions and TVM's fused reduction functions are. The kernel computes the
    prologue element by element while it reads the row, so the prologue's
    value never goes to memory unless it is also a result (a residual sum
    used later).

    ```
    %y, %s = rlx.fusion ins(%x, %r, %g, %b : tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>, tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>, %c: tensor<2x8xf32>, %gg: tensor<8xf32>, %bb: tensor<8xf32>):
      %sum = rlx.elementwise_region ins(%a, %c : tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
      ^bb0(%p: f32, %q: f32):
        %t = arith.addf %p, %q : f32
        rlx.yield %t : f32
      }
      %n = rlx.layer_norm %sum, %gg, %bb eps = 1.000000e-05 : tensor<2x8xf32>, tensor<8xf32>
      rlx.yield %n, %sum : tensor<2x8xf32>, tensor<2x8xf32>
    }
    ```

    The body is one block of rlx tensor ops (no params or constants: those
    are inputs), isolated from above, ended by `rlx.yield`; its arguments
    take the inputs' types and the yielded values the results' types. Which
    bodies a target can run as one kernel is the target's business
    (`rlxc.codegen.fusion` for cuda: elementwise prologue regions feeding
    one row op, the row op's result yielded first).
    """

    name = "rlx.fusion"
    traits = traits_def(Pure(), REDUCTION, IsolatedFromAbove())

    def verify_extra(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(
                "body arguments must take the inputs' types, got "
                f"({', '.join(str(a.type) for a in block.args)}) for inputs "
                f"({', '.join(str(v.type) for v in self.inputs)})"
            )
        for op in block.ops:
            if isinstance(op, YieldOp):
                continue
            if op.dialect_name() != "rlx" or isinstance(op, FusionOp) or fusion_kind(op) is FusionKind.OPAQUE:
                raise VerifyException(
                    f"'{op.name}' may not appear in an rlx.fusion body: only rlx elementwise, "
                    "broadcast, injective and reduction ops"
                )
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("body must end with rlx.yield")
        got = [v.type for v in term.values]
        want = [r.type for r in self.outputs]
        if got != want:
            raise VerifyException(
                f"rlx.yield gives ({', '.join(map(str, got))}), expected the results' types "
                f"({', '.join(map(str, want))})"
            )

    def root(self):
        """The op producing the first result: the fusion's reduction."""
        term = self.body.block.last_op
        assert isinstance(term, YieldOp)
        return term.values[0].owner

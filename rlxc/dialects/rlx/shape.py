"""Shape ops: the same elements at other indices. `rlx.reshape` (a view),
`rlx.transpose`, `rlx.expand` (broadcast), `rlx.concat`, `rlx.slice`,
`rlx.pad`, and the gathers `rlx.gather` (numpy.take),
`rlx.gather_elements` and `rlx.gather_nd` (ONNX's GatherElements and
GatherND)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import (
    BROADCAST,
    INJECTIVE,
    IsView,
    RlxOp,
    _float,
    _int,
    _ints,
    _Operands,
    _require_dtype,
    _require_same_dtype,
    _t,
)
from rlxc.dialects.scalar import ScalarEmitter
from rlxc.dialects.types import (
    BOOL_TYPES,
    INT_TYPES,
    NUMERIC_TYPES,
    broadcasts_to,
    dtype_name,
    fmt_shape,
    normalize_axis,
    shape_of,
    slice_extent,
)


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
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), BROADCAST)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def scalar(cls, e: ScalarEmitter, x: SSAValue, *, result: Attribute) -> SSAValue:
        return x  # broadcasting is the region's indexing, not a scalar op

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

    def last_axis_window(self) -> tuple[int, int] | None:
        """(offset, width) where this slice takes a non-empty unit-step run
        of the input's last axis and every other axis whole (a window a
        consumer may read in place), else None."""
        src = shape_of(self.input.type)
        starts, ends, steps = (_ints(a) for a in (self.starts, self.ends, self.steps))
        if not src or any(st != 1 for st in steps):
            return None
        if any(starts[k] != 0 or ends[k] != src[k] for k in range(len(src) - 1)):
            return None
        width = ends[-1] - starts[-1]
        return (starts[-1], width) if width > 0 else None  # an empty slice has nothing to read in place


class _GatherBase(RlxOp):
    """What the gather ops share: an input read at positions given by an
    integer `indices` tensor, injective, written `$input[$indices] <prop> = ...`."""

    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), INJECTIVE)

    @staticmethod
    def _checked(operands: _Operands) -> tuple[TensorType, tuple[int, ...], tuple[int, ...]]:
        """(input type, input shape, indices shape), the indices' type checked."""
        x, idx = operands
        assert isinstance(x, TensorType) and isinstance(idx, TensorType)
        _index_types("indices", idx)
        return x, tuple(shape_of(x)), tuple(shape_of(idx))


#: The syntax of the gathers along one axis.
_AXIS_GATHER_FORMAT = (
    "$input `[` $indices `]` `axis` `=` $axis attr-dict `:` type($input) `,` "
    "type($indices) `->` type($result)"
)


@irdl_op_definition
class GatherOp(_GatherBase):
    """numpy.take along `axis` (embedding lookup with axis 0); indices may be
    negative (counting from the end); out-of-range indices are an error.

    `%y = rlx.gather %table[%ids] axis = 0 : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>`
    """

    name = "rlx.gather"
    axis = prop_def(IntegerAttr[I64])
    assembly_format = _AXIS_GATHER_FORMAT

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, s, ids = cls._checked(operands)
        axis = normalize_axis(_int(props.get("axis")), len(s))
        return [_t((*s[:axis], *ids, *s[axis + 1 :]), x)]


#: `rlx.pad`'s modes (numpy.pad's names, ONNX Pad's semantics).
PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(RlxOp):
    """ONNX Pad (numpy.pad): `low[k]` elements before and `high[k]` after axis
    k, each non-negative. The new elements are `value` ("constant"), the
    mirror image without the edge ("reflect", which needs pads shorter than
    the axis), the edge element repeated ("edge") or the axis repeated
    cyclically ("wrap"). `value` is a float64; for integer and i1 tensors it
    must be an integer (0 or 1 for i1).

    `%y = rlx.pad %x low = [1, 0] high = [0, 2] mode = "reflect" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<5x7xf32>`
    """

    name = "rlx.pad"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    value = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), INJECTIVE)
    assembly_format = (
        "$input `low` `=` $low `high` `=` $high `mode` `=` $mode `value` `=` $value "
        "attr-dict `:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        shape = shape_of(x)
        low, high = _ints(props.get("low")), _ints(props.get("high"))
        mode = props.get("mode")
        assert isinstance(mode, StringAttr)
        if mode.data not in PAD_MODES:
            raise VerifyException(
                f"mode '{mode.data}' is not one of {', '.join(PAD_MODES)}"
            )
        if not len(low) == len(high) == len(shape):
            raise VerifyException(
                f"low and high need one entry per axis ({len(shape)}), got {len(low)} "
                f"and {len(high)}"
            )
        for k, (lo, hi, d) in enumerate(zip(low, high, shape)):
            if lo < 0 or hi < 0:
                raise VerifyException(f"axis {k}: pads ({lo}, {hi}) must be non-negative")
            if mode.data == "reflect" and max(lo, hi) >= d:
                raise VerifyException(
                    f"axis {k}: reflect pads ({lo}, {hi}) must be shorter than the axis "
                    f"extent {d}"
                )
            if mode.data in ("edge", "wrap") and d == 0 and max(lo, hi) > 0:
                raise VerifyException(f"axis {k}: {mode.data} padding of an empty axis")
        return [_t([lo + d + hi for lo, d, hi in zip(low, shape, high)], x)]

    def verify_extra(self) -> None:
        el = self.input.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
        v = _float(self.value)
        if el in INT_TYPES and not (math.isfinite(v) and v == int(v)):
            raise VerifyException(f"value {v} is not an integer, as an {dtype_name(el)} tensor needs")
        if el in BOOL_TYPES and v not in (0.0, 1.0):
            raise VerifyException(f"value {v} is not 0 or 1, as an i1 tensor needs")


def _index_types(what: str, idx: TensorType) -> None:
    _require_dtype(what, idx, NUMERIC_TYPES[3:])


@irdl_op_definition
class GatherElementsOp(_GatherBase):
    """ONNX GatherElements (numpy.take_along_axis): result[i] is
    input[i with its `axis` coordinate replaced by indices[i]]. The indices
    have the input's rank and no larger extents off `axis`; the result has
    their shape. Negative indices count from the end; out-of-range ones are
    an error.

    `%y = rlx.gather_elements %x[%i] axis = 1 : tensor<3x4xf32>, tensor<3x2xi64> -> tensor<3x2xf32>`
    """

    name = "rlx.gather_elements"
    axis = prop_def(IntegerAttr[I64])
    assembly_format = _AXIS_GATHER_FORMAT

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, xs, ids = cls._checked(operands)
        axis = normalize_axis(_int(props.get("axis")), len(xs))
        if len(ids) != len(xs) or any(
            i > d for k, (i, d) in enumerate(zip(ids, xs)) if k != axis
        ):
            raise VerifyException(
                f"indices of shape {fmt_shape(ids)} do not fit input {fmt_shape(xs)}: "
                f"they need its rank and extents no larger off axis {axis}"
            )
        return [_t(ids, x)]


@irdl_op_definition
class GatherNDOp(_GatherBase):
    """ONNX GatherND: the last axis of `indices` (length m) indexes the first
    m axes of `input` after its `batch_dims` leading axes, which input and
    indices share. The result's shape is indices.shape[:-1] +
    input.shape[batch_dims + m:]. Negative indices count from the end;
    out-of-range ones are an error.

    `%y = rlx.gather_nd %x[%i] batch_dims = 0 : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>`
    """

    name = "rlx.gather_nd"
    batch_dims = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$input `[` $indices `]` `batch_dims` `=` $batch_dims attr-dict `:` "
        "type($input) `,` type($indices) `->` type($result)"
    )

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        x, xs, ids = cls._checked(operands)
        b = _int(props.get("batch_dims"))
        if not xs or not ids:
            raise VerifyException(
                f"input {fmt_shape(xs)} and indices {fmt_shape(ids)} need rank >= 1"
            )
        if not 0 <= b < min(len(xs), len(ids)):
            raise VerifyException(
                f"batch_dims {b} must be in [0, {min(len(xs), len(ids))}) for input "
                f"{fmt_shape(xs)} and indices {fmt_shape(ids)}"
            )
        if xs[:b] != ids[:b]:
            raise VerifyException(
                f"the {b} batch axes differ: input {fmt_shape(xs)}, indices {fmt_shape(ids)}"
            )
        m = ids[-1]
        if not 1 <= m <= len(xs) - b:
            raise VerifyException(
                f"indices' last extent {m} must be in [1, {len(xs) - b}] (the input's rank "
                f"{len(xs)} less batch_dims {b})"
            )
        return [_t((*ids[:-1], *xs[b + m :]), x)]

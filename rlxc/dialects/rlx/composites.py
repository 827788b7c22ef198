"""Composite ops with no family of their own: the fused residual norms
(`rlx.fused_residual_layer_norm`, `rlx.fused_residual_rms_norm`),
`rlx.swiglu`, `rlx.attention` and `rlx.rope`. Each states its `decompose`
into more primitive rlx ops, which `rlx-unfuse` applies on targets without a
kernel for it (the other composites, linear and the row norms, live with
their families)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, Float64Type, FloatAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects.rlx.base import (
    INJECTIVE,
    OPAQUE,
    REDUCTION,
    Composite,
    RlxOp,
    _float,
    _ints,
    _Operands,
    _require_dtype,
    _require_same_dtype,
    _t,
    i64_array,
    i64_attr,
)
from rlxc.dialects.rlx.decompose import DecomposeBuilder
from rlxc.dialects.rlx.elementwise import AddOp, MulOp, NegOp, SelectOp, SiluOp
from rlxc.dialects.rlx.matmul import MatMulOp
from rlxc.dialects.rlx.reductions import (
    LayerNormOp,
    RmsNormOp,
    SoftmaxOp,
    _check_norm_params,
)
from rlxc.dialects.rlx.shape import ConcatOp, ExpandOp, ReshapeOp, SliceOp, TransposeOp
from rlxc.dialects.types import (
    FLOAT_TYPES,
    broadcasts_to,
    dtype,
    fmt_shape,
    shape_of,
)


def _last_axis_halves(b: DecomposeBuilder, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """x[..., :D/2] and x[..., D/2:] as two slices."""
    shape = shape_of(x.type)
    half = shape[-1] // 2
    starts = [0] * len(shape)
    steps = [1] * len(shape)

    def part(lo: int, hi: int) -> SSAValue:
        s, en = list(starts), list(shape)
        s[-1], en[-1] = lo, hi
        return b(SliceOp, [x], {"starts": i64_array(s), "ends": i64_array(en), "steps": i64_array(steps)})

    return part(0, half), part(half, shape[-1])


# --------------------------------------------------------------------------- residual norms


@irdl_op_definition
class FusedResidualLayerNormOp(RlxOp):
    """s = x + residual; returns (s, layer_norm(s, gamma, beta, eps)).

    `%s, %y = rlx.fused_residual_layer_norm %x, %r, %g, %b eps = 1.0e-05 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.fused_residual_layer_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    G: ClassVar = VarConstraint("G", base(TensorType))
    input = operand_def(T)
    residual = operand_def(T)
    gamma = operand_def(G)
    beta = operand_def(G)
    sum = result_def(T)
    normed = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $residual `,` $gamma `,` $beta `eps` `=` $eps attr-dict `:` "
        "type($input) `,` type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, self.beta.type)  # pyright: ignore

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """An add and a `rlx.layer_norm` (which the target may split again)."""
        s = b(AddOp, [self.input, self.residual])
        y = b(LayerNormOp, [s, self.gamma, self.beta], {"eps": self.eps}, [s.type])
        return [s, y]


@irdl_op_definition
class FusedResidualRmsNormOp(RlxOp):
    """s = x + residual; returns (s, rms_norm(s, gamma, eps)).

    `%s, %y = rlx.fused_residual_rms_norm %x, %r, %g eps = 1.0e-06 : tensor<4x16xf32>, tensor<16xf32>`
    """

    name = "rlx.fused_residual_rms_norm"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    residual = operand_def(T)
    gamma = operand_def(TensorType)
    sum = result_def(T)
    normed = result_def(T)
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), REDUCTION, Composite(("cuda",)))
    assembly_format = (
        "$input `,` $residual `,` $gamma `eps` `=` $eps attr-dict `:` type($input) `,` "
        "type($gamma)"
    )

    def verify_extra(self) -> None:
        _check_norm_params(self.input.type, self.gamma.type, None)  # pyright: ignore

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """An add and a `rlx.rms_norm` (which the target may split again)."""
        s = b(AddOp, [self.input, self.residual])
        return [s, b(RmsNormOp, [s, self.gamma], {"eps": self.eps}, [s.type])]


# --------------------------------------------------------------------------- gated / attention


@irdl_op_definition
class SwigluOp(RlxOp):
    """Splits the last axis in halves a (first, the gate) and b: silu(a) * b.

    `%y = rlx.swiglu %x : tensor<4x32xf32> -> tensor<4x16xf32>`
    """

    name = "rlx.swiglu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), INJECTIVE, Composite())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        (x,) = operands
        assert isinstance(x, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        s = shape_of(x)
        if not s or s[-1] % 2:
            raise VerifyException(
                f"swiglu needs an even last axis, got shape {fmt_shape(s)}"
            )
        return [_t((*s[:-1], s[-1] // 2), x)]

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """Two slices, silu and a multiply."""
        gate, up = _last_axis_halves(b, self.input)
        return [b(MulOp, [b.unary(SiluOp, gate), up])]


#: The properties giving attention's operands' physical layouts, in operand order.
ATTENTION_LAYOUTS = ("q_layout", "k_layout", "v_layout", "out_layout")

#: The properties giving the head windows of query, key and value.
ATTENTION_WINDOWS = ("q_heads", "k_heads", "v_heads")

IDENTITY_LAYOUT = (0, 1, 2, 3)


def inverse_perm(perm: Sequence[int]) -> list[int]:
    """The permutation undoing `perm`."""
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _repeat_heads(b: DecomposeBuilder, x: SSAValue, heads: int) -> SSAValue:
    """[B, G, S, D] -> [B, heads, S, D], each head repeated heads / G times in
    place (grouped-query attention's key and value); x itself where G == heads."""
    bs, g, s, d = shape_of(x.type)
    if g == heads:
        return x
    et = x.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
    x5 = b(ReshapeOp, [x], {}, [TensorType(et, [bs, g, 1, s, d])])
    wide = b(ExpandOp, [x5], {}, [TensorType(et, [bs, g, heads // g, s, d])])
    return b(ReshapeOp, [wide], {}, [TensorType(et, [bs, heads, s, d])])


@irdl_op_definition
class AttentionOp(RlxOp):
    """softmax(q·kᵀ · scale + mask [+ causal]) · v over [batch, heads, seq, head_dim].

    `scale` defaults to 1/sqrt(head_dim); either is taken as the nearest
    f32 value (`scale_value()`) by every backend (the CUDA kernel folds it
    with log2(e) into one f32 constant, a rounding more). `causal` masks key j > query i
    (top-left aligned, as PyTorch's `is_causal`). `mask` is additive and
    broadcasts to [batch, heads, q_seq, k_seq].

    Key and value may have fewer heads than query (grouped-query attention):
    with H query heads and G key (value) heads, G dividing H, query head h
    reads key (value) head h // (H / G), as if each were repeated H / G
    times along the heads axis (PyTorch's `repeat_interleave`, Hugging
    Face's `repeat_kv`), without the copy.

    `q_layout`, `k_layout`, `v_layout` and `out_layout` (optional, identity
    by default) give the physical layout of query, key, value and the result
    as a permutation of the logical [batch, heads, seq, head_dim] axes:
    physical.shape[i] = logical.shape[perm[i]] (the tensor is the logical
    one transposed by perm), so a [batch, seq, heads, head_dim] tensor is
    read without a transpose with layout [0, 2, 1, 3]. head_dim stays the
    last axis (perm[3] == 3). The mask is always logical.

    `%o = rlx.attention %q, %k, %v causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>`
    """

    name = "rlx.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    causal = opt_prop_def(UnitAttr)
    scale = opt_prop_def(FloatAttr[Float64Type])
    q_layout = opt_prop_def(DenseArrayBase.constr(i64))
    k_layout = opt_prop_def(DenseArrayBase.constr(i64))
    v_layout = opt_prop_def(DenseArrayBase.constr(i64))
    out_layout = opt_prop_def(DenseArrayBase.constr(i64))
    q_heads = opt_prop_def(DenseArrayBase.constr(i64))
    k_heads = opt_prop_def(DenseArrayBase.constr(i64))
    v_heads = opt_prop_def(DenseArrayBase.constr(i64))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), OPAQUE, Composite(("cuda",)))
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)? "
        "(`scale` $scale^)? (`q_layout` `=` $q_layout^)? (`k_layout` `=` $k_layout^)? "
        "(`v_layout` `=` $v_layout^)? (`out_layout` `=` $out_layout^)? "
        "(`q_heads` `=` $q_heads^)? (`k_heads` `=` $k_heads^)? (`v_heads` `=` $v_heads^)? attr-dict `:` "
        "type($query) `,` type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)"
    )

    @staticmethod
    def layouts_of(props: Mapping[str, Attribute]) -> list[list[int]]:
        """The four layouts (query, key, value, result) from properties,
        identity where absent; raises VerifyException for an invalid one."""
        out = []
        for name in ATTENTION_LAYOUTS:
            attr = props.get(name)
            if attr is None:
                out.append(list(IDENTITY_LAYOUT))
                continue
            perm = _ints(attr)
            if sorted(perm) != list(IDENTITY_LAYOUT) or perm[3] != 3:
                raise VerifyException(
                    f"{name} {perm} must be a permutation of [0, 1, 2, 3] that keeps "
                    "head_dim last (perm[3] == 3)"
                )
            out.append(perm)
        return out

    def layouts(self) -> list[list[int]]:
        """[q, k, v, out] layouts, identity where not set."""
        return self.layouts_of(self.properties)

    #: The longest head_dim (query/key or value) cuda's fused kernel takes;
    #: longer ones are split into matmuls and a softmax (its simt form keeps
    #: a query and an output row per group of 32 lanes in registers and a
    #: tile of at least 4 key and value rows in shared memory as f32: a
    #: head_dim of 20001 asked for 640 KB). Models' head_dims are 64-256.
    CUDA_MAX_HEAD_DIM: ClassVar[int] = 512

    def native_on(self, target: str) -> bool:
        """cuda's kernel takes head_dims up to CUDA_MAX_HEAD_DIM (the last
        axis of query and value in every layout)."""
        if target == "cuda":
            dk, dv = shape_of(self.query.type)[-1], shape_of(self.value.type)[-1]
            return max(dk, dv) <= self.CUDA_MAX_HEAD_DIM
        return True

    @staticmethod
    def windows_of(props: Mapping[str, Attribute]) -> list[tuple[int, int] | None]:
        """The head windows (offset, count) of query, key and value, None
        where not set; raises VerifyException for a malformed one."""
        out: list[tuple[int, int] | None] = []
        for name in ATTENTION_WINDOWS:
            attr = props.get(name)
            if attr is None:
                out.append(None)
                continue
            w = _ints(attr)
            if len(w) != 2 or w[0] < 0 or w[1] < 1:
                raise VerifyException(
                    f"{name} {w} must be [offset, count] with offset >= 0 and count >= 1"
                )
            out.append((w[0], w[1]))
        return out

    def windows(self) -> list[tuple[int, int] | None]:
        """[q, k, v] head windows, None where not set."""
        return self.windows_of(self.properties)

    @classmethod
    def infer_result_types(cls, operands: _Operands, props: Mapping[str, Attribute]):
        q, k, v, m = operands
        assert isinstance(q, TensorType) and isinstance(k, TensorType)
        assert isinstance(v, TensorType)
        _require_dtype("query", q, FLOAT_TYPES)
        _require_same_dtype("query and key", q, k)
        _require_same_dtype("query and value", q, v)
        lq, lk, lv, lo = cls.layouts_of(props)
        qs, ks, vs = shape_of(q), shape_of(k), shape_of(v)
        if len(qs) != 4 or len(ks) != 4 or len(vs) != 4:
            raise VerifyException(
                "attention takes [batch, heads, seq, head_dim] query, key and value, got "
                f"{fmt_shape(qs)}, {fmt_shape(ks)}, {fmt_shape(vs)}"
            )
        # logical shapes: logical[perm[i]] = physical[i]
        qs, ks, vs = (tuple(s[i] for i in inverse_perm(p)) for s, p in ((qs, lq), (ks, lk), (vs, lv)))
        windowed = []
        for name, s, w in zip(ATTENTION_WINDOWS, (qs, ks, vs), cls.windows_of(props)):
            if w is not None:
                if w[0] + w[1] > s[1]:
                    raise VerifyException(
                        f"{name} [{w[0]}, {w[1]}] reaches past the operand's {s[1]} heads"
                    )
                s = (s[0], w[1], s[2], s[3])
            windowed.append(s)
        qs, ks, vs = windowed
        if (
            qs[0] != ks[0] or qs[0] != vs[0] or qs[1] % ks[1] or qs[1] % vs[1]
            or qs[3] != ks[3] or ks[2] != vs[2]
        ):  # fmt: skip
            raise VerifyException(
                f"query {fmt_shape(qs)}, key {fmt_shape(ks)} and value {fmt_shape(vs)} "
                "disagree: batch must match, key's and value's heads must divide the query's, "
                "key's head_dim must equal query's, and key and value need the same sequence length"
                + ("" if (lq, lk, lv) == ([0, 1, 2, 3],) * 3 else " (shapes in the logical layout)")
            )
        if m is not None:
            assert isinstance(m, TensorType)
            _require_same_dtype("query and mask", q, m)
            scores = (qs[0], qs[1], qs[2], ks[2])
            if not broadcasts_to(shape_of(m), scores):
                raise VerifyException(
                    f"mask has shape {fmt_shape(shape_of(m))}, which does not broadcast "
                    f"to the scores' {fmt_shape(scores)}"
                )
        out = (qs[0], qs[1], qs[2], vs[3])
        return [_t([out[p] for p in lo], q)]

    def scale_value(self) -> float:
        """The scale every backend applies: the `scale` attribute, or
        1/sqrt(head_dim), rounded to the nearest f32 (the kernels scale f32
        scores; the interpreter and the decomposition, which computes in f32
        for f16/bf16, use the same value)."""
        if self.scale is not None:
            s = _float(self.scale)
        else:
            s = 1.0 / float(np.sqrt(shape_of(self.query.type)[-1]))  # head_dim is last in every layout
        return float(np.float32(s))

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """Transposes to the logical layout (where a layout is set), transpose,
        matmul, scale, mask (the causal one as a select against the type's
        lowest value), a `rlx.softmax`, matmul, and a transpose to the
        result's layout; f16/bf16 operands cast to f32 first and the result
        back (the kernels compute scores, softmax and sums in f32)."""
        lq, lk, lv, lo = self.layouts()
        wq, wk, wv = self.windows()

        def logical(x: SSAValue, perm: list[int], w: tuple[int, int] | None) -> SSAValue:
            if perm != list(IDENTITY_LAYOUT):
                x = b(TransposeOp, [x], {"perm": i64_array(inverse_perm(perm))})
            if w is not None:
                s = shape_of(x.type)
                x = b(SliceOp, [x], {
                    "starts": i64_array([0, w[0], 0, 0]),
                    "ends": i64_array([s[0], w[0] + w[1], s[2], s[3]]),
                    "steps": i64_array([1, 1, 1, 1]),
                })  # fmt: skip
            return x

        q, k, v = logical(self.query, lq, wq), logical(self.key, lk, wk), logical(self.value, lv, wv)
        hq = shape_of(q.type)[1]
        k, v = _repeat_heads(b, k, hq), _repeat_heads(b, v, hq)
        out_type = TensorType(q.type.get_element_type(), [*shape_of(q.type)[:3], shape_of(v.type)[3]])  # pyright: ignore
        # f16/bf16 in f32 (the kernels' scores, softmax and sums are f32): one rounding, at the end
        q, k, v = b.widened(q, k, v)
        qs, ks = shape_of(q.type), shape_of(k.type)
        kt = b(TransposeOp, [k], {"perm": i64_array([0, 1, 3, 2])})
        s = b(MulOp, [b(MatMulOp, [q, kt]), b.scalar(self.scale_value(), q)])
        if self.mask is not None:
            s = b(AddOp, [s, *b.widened(self.mask)])
        if self.causal is not None:
            keep = np.tril(np.ones((qs[2], ks[2]), dtype=bool))
            lowest = dtype(s.type).lowest  # the most negative finite value: a masked score
            s = b(SelectOp, [b.keep_mask(keep), s, b.scalar(lowest, s)])
        p = b(SoftmaxOp, [s], {"axis": i64_attr(-1)}, [s.type])
        out = b.narrowed(b(MatMulOp, [p, v]), out_type)
        if lo != list(IDENTITY_LAYOUT):
            out = b(TransposeOp, [out], {"perm": i64_array(lo)})
        return [out]


@irdl_op_definition
class RopeOp(RlxOp):
    """Rotary position embedding, rotate-half form:
    x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2]).
    cos and sin broadcast to x (typically [seq, head_dim]).

    `%y = rlx.rope %x, %cos, %sin : tensor<1x2x8x4xf32>, tensor<8x4xf32>`
    """

    name = "rlx.rope"
    T: ClassVar = VarConstraint("T", base(TensorType))
    C: ClassVar = VarConstraint("C", base(TensorType))
    input = operand_def(T)
    cos = operand_def(C)
    sin = operand_def(C)
    result = result_def(T)
    traits = traits_def(Pure(), INJECTIVE, Composite(("cuda",)))
    assembly_format = "$input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos)"

    #: whether cuda runs rope as one kernel (`codegen.indexing.rope_kernel`)
    #: instead of its slices, concat and two elementwise kernels
    NATIVE_ON_CUDA: ClassVar[bool] = True

    def native_on(self, target: str) -> bool:
        """cuda's rope kernel takes cos/sin whose last axis is the input's
        (the usual [seq, head_dim] tables, broadcast over the rest); others
        are split."""
        if target == "cuda":
            xs, cs = shape_of(self.input.type), shape_of(self.cos.type)
            return RopeOp.NATIVE_ON_CUDA and bool(cs) and cs[-1] == xs[-1]
        return True

    def verify_extra(self) -> None:
        x, c = self.input.type, self.cos.type
        assert isinstance(x, TensorType) and isinstance(c, TensorType)
        _require_dtype("input", x, FLOAT_TYPES)
        _require_same_dtype("input and cos", x, c)
        xs, cs = shape_of(x), shape_of(c)
        if not xs or xs[-1] % 2:
            raise VerifyException(f"rope needs an even last axis, got {fmt_shape(xs)}")
        if not broadcasts_to(cs, xs):
            raise VerifyException(
                f"cos/sin of shape {fmt_shape(cs)} do not broadcast to the input "
                f"{fmt_shape(xs)}"
            )

    def decompose(self, b: DecomposeBuilder) -> list[SSAValue]:
        """Two slices, a negation and a concat for rotate_half, then
        multiplies and an add."""
        x1, x2 = _last_axis_halves(b, self.input)
        rot = b(ConcatOp, [[b.unary(NegOp, x2), x1]], {"axis": i64_attr(-1)})
        return [b(AddOp, [b(MulOp, [self.input, self.cos]), b(MulOp, [rot, self.sin])])]

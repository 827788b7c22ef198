"""`rlx-unfuse{target=...}`: composite ops the target has no kernel for -> primitives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from rlxc.dialects import rlx
from rlxc.dialects.rlx import Composite, _float, _int, f64_attr, i64_array, i64_attr
from rlxc.dialects.types import dtype, shape_of

#: Targets rlx-unfuse knows; `none` keeps no composite.
TARGETS = ("cuda", "none")


class _Emit:
    """Creates rlx ops (types inferred by the op) before the matched op."""

    def __init__(self, rewriter: PatternRewriter, at: Operation):
        self.rewriter = rewriter
        self.at = at

    def __call__(
        self,
        op_type: type[rlx.RlxOp],
        operands: Sequence[SSAValue | None | Sequence[SSAValue]],
        props: dict[str, Attribute] | None = None,
        types: Sequence[Attribute] | None = None,
    ) -> SSAValue:
        op = op_type.make(operands, props, types)
        self.rewriter.insert(op, InsertPoint.before(self.at))
        return op.results[0]

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type."""
        el = like.type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue]
        t = TensorType(el, [])
        attr = DenseIntOrFPElementsAttr.from_list(t, [value])  # pyright: ignore
        return self(rlx.ConstantOp, [], {"value": attr}, [t])

    def keep_mask(self, keep: np.ndarray) -> SSAValue:
        """An i1 constant of `keep`'s shape and values."""
        t = TensorType(rlx.i1, list(keep.shape))
        attr = DenseIntOrFPElementsAttr.from_list(t, [int(v) for v in keep.ravel()])  # pyright: ignore
        return self(rlx.ConstantOp, [], {"value": attr}, [t])

    def unary(self, op_type: type[rlx.RlxOp], x: SSAValue) -> SSAValue:
        return self(op_type, [x], types=[x.type])


def _lowest(like: SSAValue) -> float:
    """The most negative finite value of the element type (a masked score)."""
    return dtype(like.type).lowest


def _trailing_axes(x: SSAValue, gamma: SSAValue) -> list[int]:
    r, k = len(shape_of(x.type)), len(shape_of(gamma.type))
    return list(range(r - k, r))


def _reduce(e: _Emit, op_type, x: SSAValue, axes: list[int]) -> SSAValue:
    return e(op_type, [x], {"axes": i64_array(axes), "keepdims": UnitAttr()})


def layer_norm(e: _Emit, x, gamma, beta, eps: float) -> SSAValue:
    axes = _trailing_axes(x, gamma)
    d = e(rlx.SubOp, [x, _reduce(e, rlx.ReduceMeanOp, x, axes)])
    var = _reduce(e, rlx.ReduceMeanOp, e(rlx.MulOp, [d, d]), axes)
    inv = e.unary(rlx.RsqrtOp, e(rlx.AddOp, [var, e.scalar(eps, x)]))
    y = e(rlx.MulOp, [e(rlx.MulOp, [d, inv]), gamma])
    return y if beta is None else e(rlx.AddOp, [y, beta])


def rms_norm(e: _Emit, x, gamma, eps: float) -> SSAValue:
    ms = _reduce(e, rlx.ReduceMeanOp, e(rlx.MulOp, [x, x]), _trailing_axes(x, gamma))
    inv = e.unary(rlx.RsqrtOp, e(rlx.AddOp, [ms, e.scalar(eps, x)]))
    return e(rlx.MulOp, [e(rlx.MulOp, [x, inv]), gamma])


def softmax(e: _Emit, x, axis: int, log: bool = False) -> SSAValue:
    axis %= len(shape_of(x.type))
    shifted = e(rlx.SubOp, [x, _reduce(e, rlx.ReduceMaxOp, x, [axis])])
    ex = e.unary(rlx.ExpOp, shifted)
    total = _reduce(e, rlx.ReduceSumOp, ex, [axis])
    if log:
        return e(rlx.SubOp, [shifted, e.unary(rlx.LogOp, total)])
    return e(rlx.DivOp, [ex, total])


def _last_axis_halves(e: _Emit, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    shape = shape_of(x.type)
    half = shape[-1] // 2
    starts = [0] * len(shape)
    steps = [1] * len(shape)

    def part(lo: int, hi: int) -> SSAValue:
        s, en = list(starts), list(shape)
        s[-1], en[-1] = lo, hi
        return e(rlx.SliceOp, [x], {"starts": i64_array(s), "ends": i64_array(en), "steps": i64_array(steps)})

    return part(0, half), part(half, shape[-1])


_ACTIVATIONS: dict[str, type[rlx.RlxOp]] = {
    "relu": rlx.ReluOp,
    "gelu": rlx.GeluOp,
    "gelu_tanh": rlx.GeluTanhOp,
    "silu": rlx.SiluOp,
    "sigmoid": rlx.SigmoidOp,
    "tanh": rlx.TanhOp,
}

# ---------------------------------------------------------------- decompositions
# Each takes the emitter and the composite op, and returns its results' values.


def _linear(e: _Emit, op: rlx.LinearOp, target: str) -> list[SSAValue]:
    if target == "cuda" and op.activation is not None:
        # Keep the matmul and bias as one native linear; the activation
        # becomes an elementwise op that fusion puts in a region.
        y = e(rlx.LinearOp, [op.input, op.weight, op.bias])
        return [e.unary(_ACTIVATIONS[op.activation.data], y)]
    x: SSAValue = op.input
    xs = shape_of(x.type)
    if len(xs) == 1:
        x = e(rlx.ReshapeOp, [x], types=[TensorType(x.type.get_element_type(), [1, xs[0]])])  # pyright: ignore
    wt = e(rlx.TransposeOp, [op.weight], {"perm": i64_array([1, 0])})
    y = e(rlx.MatMulOp, [x, wt])
    if len(xs) == 1:
        y = e(rlx.ReshapeOp, [y], types=[op.result.type])
    if op.bias is not None:
        y = e(rlx.AddOp, [y, op.bias])
    if op.activation is not None:
        y = e.unary(_ACTIVATIONS[op.activation.data], y)
    return [y]


def _layer_norm(e: _Emit, op: rlx.LayerNormOp, target: str) -> list[SSAValue]:
    return [layer_norm(e, op.input, op.gamma, op.beta, _float(op.eps))]


def _rms_norm(e: _Emit, op: rlx.RmsNormOp, target: str) -> list[SSAValue]:
    return [rms_norm(e, op.input, op.gamma, _float(op.eps))]


def _softmax(e: _Emit, op: rlx.SoftmaxOp, target: str) -> list[SSAValue]:
    return [softmax(e, op.input, _int(op.axis))]


def _log_softmax(e: _Emit, op: rlx.LogSoftmaxOp, target: str) -> list[SSAValue]:
    return [softmax(e, op.input, _int(op.axis), log=True)]


def _fused_residual_layer_norm(e: _Emit, op: rlx.FusedResidualLayerNormOp, target: str) -> list[SSAValue]:
    s = e(rlx.AddOp, [op.input, op.residual])
    y = e(rlx.LayerNormOp, [s, op.gamma, op.beta], {"eps": op.eps}, [s.type])
    return [s, y]


def _fused_residual_rms_norm(e: _Emit, op: rlx.FusedResidualRmsNormOp, target: str) -> list[SSAValue]:
    s = e(rlx.AddOp, [op.input, op.residual])
    return [s, e(rlx.RmsNormOp, [s, op.gamma], {"eps": op.eps}, [s.type])]


def _swiglu(e: _Emit, op: rlx.SwigluOp, target: str) -> list[SSAValue]:
    a, b = _last_axis_halves(e, op.input)
    return [e(rlx.MulOp, [e.unary(rlx.SiluOp, a), b])]


def _attention(e: _Emit, op: rlx.AttentionOp, target: str) -> list[SSAValue]:
    q, k, v = op.query, op.key, op.value
    qs, ks = shape_of(q.type), shape_of(k.type)
    scale = _float(op.scale) if op.scale is not None else 1.0 / float(np.sqrt(qs[-1]))
    kt = e(rlx.TransposeOp, [k], {"perm": i64_array([0, 1, 3, 2])})
    s = e(rlx.MulOp, [e(rlx.MatMulOp, [q, kt]), e.scalar(scale, q)])
    if op.mask is not None:
        s = e(rlx.AddOp, [s, op.mask])
    if op.causal is not None:
        keep = np.tril(np.ones((qs[2], ks[2]), dtype=bool))
        s = e(rlx.SelectOp, [e.keep_mask(keep), s, e.scalar(_lowest(s), s)])
    p = e(rlx.SoftmaxOp, [s], {"axis": i64_attr(-1)}, [s.type])
    return [e(rlx.MatMulOp, [p, v])]


def _rope(e: _Emit, op: rlx.RopeOp, target: str) -> list[SSAValue]:
    x1, x2 = _last_axis_halves(e, op.input)
    rot = e(rlx.ConcatOp, [[e.unary(rlx.NegOp, x2), x1]], {"axis": i64_attr(-1)})
    return [e(rlx.AddOp, [e(rlx.MulOp, [op.input, op.cos]), e(rlx.MulOp, [rot, op.sin])])]


#: Composite op -> its decomposition into (more) primitive rlx ops.
DECOMPOSITIONS: dict[type[Operation], Callable[[_Emit, Operation, str], list[SSAValue]]] = {
    rlx.LinearOp: _linear,
    rlx.LayerNormOp: _layer_norm,
    rlx.RmsNormOp: _rms_norm,
    rlx.SoftmaxOp: _softmax,
    rlx.LogSoftmaxOp: _log_softmax,
    rlx.FusedResidualLayerNormOp: _fused_residual_layer_norm,
    rlx.FusedResidualRmsNormOp: _fused_residual_rms_norm,
    rlx.SwigluOp: _swiglu,
    rlx.AttentionOp: _attention,
    rlx.RopeOp: _rope,
}  # pyright: ignore[reportAssignmentType]


@dataclass
class UnfuseComposite(RewritePattern):
    """Splits one composite op unless the target keeps it native."""

    target: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        trait = op.get_trait(Composite)
        if trait is None or trait.is_native_on(op, self.target):
            return
        decompose = DECOMPOSITIONS.get(type(op))
        if decompose is None:
            raise PassFailedException(
                f"rlx-unfuse: '{op.name}' is marked composite but has no decomposition"
            )
        results = decompose(_Emit(rewriter, op), op, self.target)
        for old, new in zip(op.results, results, strict=True):
            if new.name_hint is None and old.name_hint is not None:
                new.name_hint = old.name_hint
        rewriter.replace(op, [], results)


@dataclass(frozen=True)
class UnfusePass(ModulePass):
    """Replaces composite ops the target has no native kernel for with primitives.

    Which composites a target keeps is declared on the ops (the `Composite`
    trait's `native_targets` and an op's `native_on`), not here: for `cuda`,
    linear (with a bias and relu / tanh-GELU epilogue; another activation is
    split off into an elementwise op), layer_norm, rms_norm, softmax,
    log_softmax and the fused residual norms stay; attention, swiglu and rope
    are split. The split is
    repeated until nothing splittable is left (a fused residual norm becomes an
    add and a layer_norm, which `target=none` splits again).

    Options:
    * `target`: `cuda` (default) or `none` (split every composite).
    """

    name = "rlx-unfuse"

    target: str = "cuda"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target not in TARGETS:
            raise PassFailedException(
                f"rlx-unfuse: unknown target '{self.target}', expected one of {', '.join(TARGETS)}"
            )
        PatternRewriteWalker(UnfuseComposite(self.target)).rewrite_module(op)

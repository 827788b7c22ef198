"""`rlx-conv-to-gemm`: convolutions -> channels-last patches and one gemm each.

    %y = rlx.conv2d %x, %w bias %b ...       %t = rlx.transpose %x perm = [0, 2, 3, 1]         [n, h, w, c]
         : [n, c, h, w], [o, c, kh, kw]  ->  %p = rlx.im2col %t kernel = [kh, kw] ...          [n, oh, ow, kh*kw*c]
                                             %v = rlx.transpose %w perm = [0, 2, 3, 1]         [o, kh, kw, c]
                                             %m = rlx.reshape %v                              [o, kh*kw*c]
                                             %l = rlx.linear %p, %m bias %b                   [n, oh, ow, o]
                                             %y = rlx.transpose %l perm = [0, 3, 1, 2]         [n, o, oh, ow]

The linear is one cuBLASLt gemm of n*oh*ow rows, on tensor cores in f16
and bf16, with the bias (and a following ReLU) as its epilogue; rlx.conv2d's
own kernel is a thread per output element looping over c*kh*kw taps. A 1x1
convolution of stride 1 without padding needs no patches: the transposed
input is the gemm's operand already. Patches of a few channels (an RGB
image) are read from the NCHW input directly (`channels_first`), and rows
whose length is not a whole number of 16-byte units are widened with zero
columns (`columns`; the weight gets zero columns to match), so the gemm's
rows stay aligned.

The transposes then move down through elementwise ops whose operands are
all transposed alike (a ReLU, a residual add: `relu(T(l))` ->
`T(relu(l))`) and through pools (which run `channels_last`), so that one
convolution's output transpose meets the next one's input transpose and the
pass composes the pair away (canonicalize's pattern): a chain of
convolutions runs channels last, and a transpose is left only where an op
needs NCHW (a graph result, an op with no channels-last form). A ReLU that
reaches a linear with a bias becomes its activation (cuBLASLt's bias + ReLU
epilogue), and a residual add of the linear's result and a value of its
type becomes the linear's `residual` (cuBLASLt's C, beta 1): ResNet's add +
ReLU after a block's last 1x1 convolution leave no kernel of their own.

What is rewritten: convolutions of one group whose patches take at most
`max_col_bytes` bytes (a temporary of the arena; a convolution over a large
image would need gigabytes, and keeps the direct kernel). Grouped and
depthwise convolutions keep the direct kernel, whose loop is short there;
inside a channels-last chain they run it channels last (`channels_last`:
NHWC in and out, a depthwise tap of 8 f16 channels one 16-byte load), so
MobileNet's blocks move no layout either, and ReLU, ReLU6 and ONNX's Clip on
either side of a direct convolution become its clamp bounds (`input_min`...
`clamp_max`) where that is exact: a MobileNet block is then gemm,
depthwise conv, gemm, with no elementwise kernel.
The weight's transpose and reshape are of a param, which `rlxc.compile`
computes once. Runs first in `rlx-optimize{target=cuda}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlxc.dialects import rlx
from rlxc.dialects.rlx import FusionKind, _int, _ints, f64_attr, fusion_kind, i64_array, i64_attr
from rlxc.dialects.types import dtype, shape_of, tensor_bytes
from rlxc.passes.canonicalization import TransposeOfTranspose, _splat_value

#: Whether convolutions left direct (grouped, depthwise) move into channels-last chains
#: (`ConvChannelsLast`); off: they read NCHW between transposes
CONV_CHANNELS_LAST = True
#: Whether a channels-last depthwise convolution takes its weight HWIO (`weight_hwio`: a
#: tap's channels adjacent, read as one access with the input's); off: OIHW
DEPTHWISE_HWIO = True
#: Whether the pass rewrites anything (off: every conv keeps its direct
#: kernel; for measuring the two, as benchmarks/convnets.py does).
CONV_AS_GEMM = True

#: The largest patch tensor a convolution is rewritten with, in bytes (the
#: pass's default `max_col_bytes`).
MAX_COL_BYTES = 1 << 30

TO_NHWC = [0, 2, 3, 1]
TO_NCHW = [0, 3, 1, 2]


def _transposed(x: SSAValue, perm: list[int]) -> Operation:
    return rlx.TransposeOp.make([x], {"perm": i64_array(perm)})


class ConvToGemm(RewritePattern):
    """rlx.conv2d of one group -> transpose, im2col (none for a plain 1x1),
    linear by the OHWI weight, transpose back."""

    def __init__(self, max_col_bytes: int):
        super().__init__()
        self.max_col_bytes = max_col_bytes

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.Conv2dOp, rewriter: PatternRewriter):
        if _int(op.groups) != 1:
            return
        xt, wt, yt = op.input.type, op.weight.type, op.result.type
        assert isinstance(xt, TensorType) and isinstance(wt, TensorType) and isinstance(yt, TensorType)
        n, c, _, _ = shape_of(xt)
        o, _, kh, kw = shape_of(wt)
        _, _, oh, ow = shape_of(yt)
        if 0 in (n, c, o, oh, ow):  # nothing to multiply: the direct kernel writes the bias (or nothing)
            return
        el = xt.get_element_type()
        plain = (kh, kw) == (1, 1) and _ints(op.stride) == [1, 1] and _ints(op.padding) == [0, 0, 0, 0]
        k = kh * kw * c
        # rows of whole 16-byte units for the gemm: a 7x7 kernel over 3 channels, 147 -> 152 columns
        unit = 16 // dtype(el).bytes
        cols = k if plain or k % unit == 0 else k + unit - k % unit
        patches = TensorType(el, [n, oh, ow, cols])
        if not plain and tensor_bytes(patches) > self.max_col_bytes:
            return
        # a few channels, not from a channels-last producer: the patches read the NCHW input as it is
        first = not plain and c < unit and not isinstance(op.input.owner, rlx.TransposeOp)
        new: list[Operation] = [] if first else [_transposed(op.input, TO_NHWC)]
        if not plain:
            props: dict[str, Attribute] = {"kernel": i64_array([kh, kw]), "stride": op.stride, "padding": op.padding,
                                           "dilation": op.dilation}  # fmt: skip
            if first:
                props["channels_first"] = UnitAttr()
            if cols != k:
                props["columns"] = i64_attr(cols)
            new.append(rlx.Im2colOp.make([op.input if first else new[0].results[0]], props, [patches]))
        w = _transposed(op.weight, TO_NHWC)
        w2 = rlx.ReshapeOp.make([w.results[0]], None, [TensorType(el, [o, k])])
        weights: list[Operation] = [w, w2]
        if cols != k:  # zero columns for the patches' zero columns
            weights.append(rlx.PadOp.make([w2.results[0]], {"low": i64_array([0, 0]), "high": i64_array([0, cols - k]),
                                                            "mode": StringAttr("constant"), "value": f64_attr(0.0)}))  # fmt: skip
        lin = rlx.LinearOp.make([new[-1].results[0], weights[-1].results[0], op.bias])
        y = _transposed(lin.results[0], TO_NCHW)
        rewriter.replace(op, [*new, *weights, lin, y], [y.results[0]])


def _to_nchw(v: SSAValue) -> rlx.TransposeOp | None:
    """The NHWC -> NCHW transpose defining `v`, if one does."""
    src = v.owner
    return src if isinstance(src, rlx.TransposeOp) and _ints(src.perm) == TO_NCHW else None


def _move_below_transpose(rewriter: PatternRewriter, op: Operation, moved: Operation,
                          sources: list[rlx.TransposeOp]) -> None:
    """Replaces `op` by `moved` (its channels-last form) transposed to NCHW,
    and erases the `sources` transposes it read that nothing else reads, so
    the values they transposed count their uses right (`_bare_linear`)."""
    rewriter.replace(op, [moved, _transposed(moved.results[0], TO_NCHW)])
    for src in set(sources):
        if not any(r.uses for r in src.results):
            rewriter.erase(src)


class SinkTranspose(RewritePattern):
    """An elementwise op whose tensor operands are all NHWC -> NCHW
    transposes, of the result's shape (rank-0 operands aside) -> the op on
    the channels-last values, transposed once: `relu(T(a))` -> `T(relu(a))`,
    `add(T(a), T(b))` -> `T(add(a, b))`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, rlx.RlxOp) or len(op.results) != 1 or op.regions:  # a fused region keeps its place
            return
        if fusion_kind(op) not in (FusionKind.ELEMENTWISE, FusionKind.BROADCAST):
            return
        out = op.results[0].type
        assert isinstance(out, TensorType)
        inner: list[SSAValue] = []
        sources: list[rlx.TransposeOp] = []
        for v in op.operands:
            t = v.type
            if isinstance(t, TensorType) and not shape_of(t):
                inner.append(v)
                continue
            src = _to_nchw(v)
            if src is None or shape_of(t) != shape_of(out):
                return
            sources.append(src)
            inner.append(src.input)
        if not sources:
            return
        shape = [shape_of(out)[i] for i in TO_NHWC]
        moved = type(op).make(inner, dict(op.properties), [TensorType(out.get_element_type(), shape)])
        _move_below_transpose(rewriter, op, moved, sources)


class PoolChannelsLast(RewritePattern):
    """max/avg_pool2d of an NHWC -> NCHW transpose -> the pool channels last,
    transposed after: `pool(T(a))` -> `T(pool_cl(a))`, so a pool between two
    convolutions (ResNet's stem) or before the classifier moves no layout."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, rlx.Pool2dOp) or op.channels_last is not None:
            return
        src = _to_nchw(op.input)
        if src is None:
            return
        pooled = type(op).make([src.input], {**op.properties, "channels_last": UnitAttr()})
        _move_below_transpose(rewriter, op, pooled, [src])


class ConvChannelsLast(RewritePattern):
    """A conv2d left direct (grouped or depthwise, or patches too big) of an NHWC ->
    NCHW transpose -> the conv channels last, transposed after:
    `conv(T(a))` -> `T(conv_cl(a))`, so MobileNet's depthwise convolutions
    between 1x1 gemms move no layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.Conv2dOp, rewriter: PatternRewriter, /):
        if op.channels_last is not None or not CONV_CHANNELS_LAST:
            return
        src = _to_nchw(op.input)
        if src is None:
            return
        props = {**op.properties, "channels_last": UnitAttr()}
        o, cg, _, _ = shape_of(op.weight.type)
        weight, new = op.weight, []
        if DEPTHWISE_HWIO and cg == 1 and o == _int(op.groups):  # depthwise: a tap's channels adjacent
            new = [_transposed(op.weight, [2, 3, 1, 0])]  # OIHW -> HWIO, of a param: computed once
            weight, props["weight_hwio"] = new[0].results[0], UnitAttr()
        conv = rlx.Conv2dOp.make([src.input, weight, op.bias], props)
        for w in new:
            rewriter.insert(w, InsertPoint.before(op))
        _move_below_transpose(rewriter, op, conv, [src])


def _clamp_of(op: Operation) -> tuple[SSAValue, str, float] | None:
    """(x, "min" or "max", c) where `op` is max(x, c) (ReLU: c = 0) or
    min(x, c) for a splat constant c, of x's type (no broadcast of x)."""
    if isinstance(op, rlx.ReluOp):
        return op.input, "max", 0.0
    if not isinstance(op, rlx.MaximumOp | rlx.MinimumOp):
        return None
    side = "max" if isinstance(op, rlx.MaximumOp) else "min"
    for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        value = _splat_value(c)
        if value is not None and x.type == op.result.type and value == value:  # a NaN bound is no clamp
            return x, side, value
    return None


def _with_bound(conv: rlx.Conv2dOp, name: str, value: float, tighter) -> dict[str, Attribute]:
    props = dict(conv.properties)
    old = props.get(name)
    props[name] = f64_attr(value if old is None else tighter(float(old.value.data), value))  # pyright: ignore
    return props


class ClampIntoConv(RewritePattern):
    """A direct conv2d's result clamped (ReLU, max or min with a constant:
    ReLU6 is min(relu(x), 6), ONNX's Clip max then min) -> the conv's
    `clamp_min`/`clamp_max`, applied before its result is rounded (the
    bounds are of its type, so clamping first rounds alike). A max folds
    only while no `clamp_max` is set (max then min is the op's order)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        clamp = _clamp_of(op)
        if clamp is None:
            return
        x, side, c = clamp
        conv = x.owner
        if not isinstance(conv, rlx.Conv2dOp) or not x.has_one_use():
            return
        if side == "max" and conv.clamp_max is not None:
            return
        props = _with_bound(conv, "clamp_min" if side == "max" else "clamp_max", c, max if side == "max" else min)
        rewriter.replace(op, [rlx.Conv2dOp.make(list(conv.operands), props, [conv.result.type])])
        rewriter.erase(conv)


class InputClampIntoConv(RewritePattern):
    """A direct conv2d of a clamped value (ReLU, max or min with a
    constant), the conv its only reader -> the conv's `input_min` /
    `input_max` on the unclamped value: MobileNet's ReLU6 after an
    expansion gemm (whose ReLU is the gemm's epilogue) is then read by the
    depthwise convolution, not written by a kernel of its own. The clamp
    runs before the conv's own input bounds; a min folds only where it
    keeps their max-then-min order (no `input_min` above it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.Conv2dOp, rewriter: PatternRewriter, /):
        src = op.input.owner
        if src is None or not op.input.has_one_use():
            return
        clamp = _clamp_of(src)  # pyright: ignore[reportArgumentType]
        if clamp is None:
            return
        x, side, c = clamp
        in_lo, _, _, _ = op.bounds()
        if side == "min" and in_lo is not None and in_lo > c:
            return
        props = _with_bound(op, "input_min" if side == "max" else "input_max", c, max if side == "max" else min)
        rewriter.replace(op, [rlx.Conv2dOp.make([x, *op.operands[1:]], props, [op.result.type])])
        rewriter.erase(src)  # pyright: ignore[reportArgumentType]


def _bare_linear(v: SSAValue) -> rlx.LinearOp | None:
    """The linear defining `v`, where it has a bias, no activation and no
    other use than the one being folded into it."""
    lin = v.owner
    if isinstance(lin, rlx.LinearOp) and lin.bias is not None and lin.activation is None and v.has_one_use():
        return lin
    return None


class ResidualIntoLinear(RewritePattern):
    """add(linear(x, w, b), r) -> linear(x, w, b, residual r), r of the
    result's type (ResNet's residual add: on cuda, cuBLASLt reads r as its C
    matrix instead of an elementwise kernel reading both and writing the sum)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.AddOp, rewriter: PatternRewriter, /):
        for mine, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            lin = _bare_linear(mine)
            if (lin is not None and lin.residual is None and other is not mine
                    and mine.type == other.type == op.result.type):  # no broadcast on either side
                rewriter.replace(op, [rlx.LinearOp.make([lin.input, lin.weight, lin.bias, other])])
                return


class ReluIntoLinear(RewritePattern):
    """relu(linear(x, w, b [, r])) -> linear(x, w, b [, r], activation
    "relu"), where the linear has a bias, no activation and no other use (on
    cuda, the bias + ReLU epilogue). The same value: ReLU commutes with the
    rounding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.ReluOp, rewriter: PatternRewriter, /):
        lin = _bare_linear(op.input)
        if lin is None:
            return
        new = rlx.LinearOp.make([lin.input, lin.weight, lin.bias, lin.residual], {"activation": StringAttr("relu")})
        rewriter.replace(op, [new])


@dataclass(frozen=True)
class ConvToGemmPass(ModulePass):
    """Rewrites `rlx.conv2d` of one group into channels-last patches and a
    gemm, and moves the layout transposes through elementwise ops so that
    chains of convolutions stay channels last (see the module docstring).
    `max_col_bytes` bounds the patch tensor (0: `MAX_COL_BYTES`)."""

    name = "rlx-conv-to-gemm"
    max_col_bytes: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not CONV_AS_GEMM:
            return
        limit = self.max_col_bytes or MAX_COL_BYTES
        changed = PatternRewriteWalker(ConvToGemm(limit), apply_recursively=False).rewrite_module(op)
        if changed or any(isinstance(o, rlx.Conv2dOp) for o in op.walk()):  # direct convs take their clamps
            patterns = [SinkTranspose(), PoolChannelsLast(), ConvChannelsLast(), TransposeOfTranspose(),
                        ResidualIntoLinear(), ReluIntoLinear(), ClampIntoConv(), InputClampIntoConv()]
            PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)

"""Emitters of reductions and normalisations: Softmax, Reduce*, ArgMax/ArgMin,
CumSum, TopK, and Layer/RMS/Instance/Group/Batch normalisation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlxc.dialects.types import dtype
from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    LARGEST_FINITE,
    Const,
    Node,
    Value,
    as_type,
    emitter,
    in_f32,
    positions,
)


@emitter("Softmax", "LogSoftmax", since=13)
def _softmax(n: Node) -> list[Value]:
    """Softmax-13: along one axis (default the last)."""
    fn = n.g.softmax if n.op_type == "Softmax" else n.g.log_softmax
    return [fn(n.tensor(0), n.attr("axis", -1))]


@emitter("Softmax", "LogSoftmax")
def _softmax_flat(n: Node) -> list[Value]:
    """Softmax-1/11: the input coerced to 2-D at `axis` (default 1), each row
    normalised (views around the axis form)."""
    x = n.tensor(0)
    fn = n.g.softmax if n.op_type == "Softmax" else n.g.log_softmax
    axis = n.attr("axis", 1) % max(x.ndim, 1)
    rows = int(np.prod(x.shape[:axis]))
    flat = n.g.reshape(x, [rows, int(np.prod(x.shape[axis:]))])
    return [n.g.reshape(fn(flat, -1), x.shape)]


_REDUCE = {
    "ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min", "ReduceProd": "reduce_prod", "ReduceL2": "reduce_sum",
    "ReduceSumSquare": "reduce_sum",
}  # fmt: skip


#: A reduction's value over no elements (ONNX's identities).
_EMPTY_REDUCE = {
    "ReduceSum": 0.0, "ReduceMean": np.nan, "ReduceMax": -np.inf, "ReduceMin": np.inf,
    "ReduceProd": 1.0, "ReduceL2": 0.0, "ReduceSumSquare": 0.0, "ReduceL1": 0.0,
    "ReduceLogSum": -np.inf, "ReduceLogSumExp": -np.inf,
}  # fmt: skip


def _reduce_axes(n: Node, x: Tensor) -> list[int] | None:
    """A Reduce* node's axes, sorted and non-negative (all where none are
    given); None where noop_with_empty_axes makes the node the identity."""
    axes = n.ints(1, "axes", "axes")
    if not axes:
        if n.attr("noop_with_empty_axes", 0):
            return None
        axes = list(range(x.ndim))
    return sorted({a % x.ndim for a in axes}) if x.ndim else []


def _over_nothing(n: Node, x: Tensor, axes: list[int], keep: bool) -> Const | None:
    """A reduction of `x` over `axes` where one has extent 0: the op's value
    over no elements (`_EMPTY_REDUCE`, infinities as the integer type's
    extremes) in the output's shape; None where there are elements."""
    if not (x.ndim and any(x.shape[a] == 0 for a in axes)):
        return None
    shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes]
    fill = _EMPTY_REDUCE[n.op_type]
    if x.dtype in ("i32", "i64", "i1"):
        info = np.iinfo(np.int64 if x.dtype == "i64" else np.int32)
        fill = {-np.inf: info.min, np.inf: info.max}.get(fill, fill)
        if x.dtype == "i1":
            fill = {info.min: False, info.max: True}.get(fill, bool(fill))
    return Const(np.full(shape, fill, dtype=dtype(x.dtype).carrier), x.dtype)


@emitter(*_REDUCE)
def _reduce(n: Node) -> list[Value]:
    x = n.tensor(0)
    keep = bool(n.attr("keepdims", 1))
    axes = _reduce_axes(n, x)
    if axes is None:  # noop_with_empty_axes: each element alone, its square or norm still taken
        if n.op_type == "ReduceSumSquare":  # (as onnxruntime and onnx.reference; ReduceL1 and LogSum alike)
            return [n.g.mul(x, x)]
        return [n.g.abs(x) if n.op_type == "ReduceL2" else x]
    if (empty := _over_nothing(n, x, axes, keep)) is not None:  # over no elements: the identity
        return [empty]
    boolean = x.dtype == "i1"
    if boolean:  # max/min of booleans: any/all, on 0/1 integers
        if n.op_type not in ("ReduceMax", "ReduceMin"):
            raise n.unsupported("a bool input", "bool for ReduceMax and ReduceMin")
        x = n.g.cast(x, "i32")

    def reduce(v: Tensor) -> Tensor:
        if n.op_type in ("ReduceL2", "ReduceSumSquare"):
            v = n.g.mul(v, v)
        if v.ndim > 0:  # a scalar is its own reduction
            v = getattr(n.g, _REDUCE[n.op_type])(v, axes, keep)
        return n.g.sqrt(v) if n.op_type == "ReduceL2" else v

    # ReduceL2's squares in f32 for 16-bit inputs: a norm that fits f16 can have squares that do not
    y = in_f32(n, x, reduce) if n.op_type == "ReduceL2" else reduce(x)
    return [n.g.cast(y, "i1") if boolean else y]


@emitter("ArgMax", "ArgMin")
def _argmax(n: Node) -> list[Value]:
    """ArgMin is ArgMax of the negation (exact); select_last_index=1 is the
    first index on the axis reversed, mapped back (n - 1 - i)."""
    x = n.tensor(0)
    axis = n.attr("axis", 0) % max(x.ndim, 1)
    keep = bool(n.attr("keepdims", 1))
    if n.op_type == "ArgMin":
        x = n.g.neg(x) if x.dtype != "i1" else n.g.eq(x, n.imp.scalar(False, "i1"))
    if x.dtype == "i1":
        x = n.g.cast(x, "i32")
    if not n.attr("select_last_index", 0):
        return [n.g.argmax(x, axis, keep)]
    extent = x.shape[axis]
    rev = _reverse(n, x, axis)
    i = n.g.argmax(rev, axis, keep)
    return [n.g.sub(n.imp.scalar(extent - 1, "i64"), i)]


def _reverse(n: Node, x: Tensor, axis: int) -> Tensor:
    """x with `axis` reversed: a gather of the indices n-1, ..., 0."""
    idx = n.imp.constant(np.arange(x.shape[axis] - 1, -1, -1, dtype=np.int64), "i64")
    return n.g.gather(x, idx, axis)


def _stats(n: Node, x: Tensor, axes: list[int], eps: float) -> tuple[Tensor, Tensor]:
    """(mean, 1/sqrt(var + eps)) over `axes`, kept as extents of 1, in f32."""
    if x.dtype != "f32":
        x = n.g.cast(x, "f32")
    mean = n.g.reduce_mean(x, axes, True)
    d = n.g.sub(x, mean)
    var = n.g.reduce_mean(n.g.mul(d, d), axes, True)
    return mean, n.g.rsqrt(n.g.add(var, n.imp.scalar(eps, "f32")))


def _affine_param(n: Node, i: int, shape: Sequence[int], d: str, fill: float) -> Tensor:
    """Input `i` (scale or bias) broadcast to `shape`; `fill` where it is absent."""
    if n.input(i) is None:
        return n.imp.constant(np.full(shape, fill), d)
    t = n.tensor(i)
    if t.dtype != d:
        t = n.g.cast(t, d)
    return t if t.shape == tuple(shape) else n.g.expand(t, list(shape))


@emitter("LayerNormalization")
def _layer_norm(n: Node) -> list[Value]:
    """`rlx.layer_norm` over the axes from `axis` on (its statistics are f32,
    ONNX's default stash type); the optional Mean and InvStdDev outputs are
    the same statistics computed beside it."""
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    eps = float(n.attr("epsilon", 1e-5))
    if n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    norm_shape = x.shape[axis:]
    scale = _affine_param(n, 1, norm_shape, x.dtype, 1.0)
    bias = _affine_param(n, 2, norm_shape, x.dtype, 0.0)
    outs: list[Value] = [n.g.layer_norm(x, scale, bias, eps)]
    if any(o for o in n.proto.output[1:]):
        outs += list(_stats(n, x, list(range(axis, x.ndim)), eps))
    return outs


@emitter("RMSNormalization")
def _rms_norm(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    if n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    scale = _affine_param(n, 1, x.shape[axis:], x.dtype, 1.0)
    return [n.g.rms_norm(x, scale, float(n.attr("epsilon", 1e-5)))]


@emitter("InstanceNormalization", "GroupNormalization")
def _group_norm(n: Node) -> list[Value]:
    """Normalisation over groups of channels (all spatial positions): a
    `rlx.layer_norm` over [N, G, C/G * spatial], then the per-channel affine.
    InstanceNormalization is the case G = C."""
    x = n.tensor(0)
    c = x.shape[1]
    groups = c if n.op_type == "InstanceNormalization" else int(n.attr("num_groups"))
    if c % groups:
        raise n.error(f"{c} channels do not split into {groups} groups")
    if n.op_type == "GroupNormalization" and n.attr("stash_type", 1) != 1:
        raise n.unsupported(f"stash_type={n.attr('stash_type')}", "1 (float32 statistics)")
    eps = float(n.attr("epsilon", 1e-5))
    inner = int(np.prod(x.shape[1:])) // groups
    flat = n.g.reshape(x, [x.shape[0], groups, inner])
    ones = n.imp.constant(np.ones(inner), x.dtype)
    zeros = n.imp.constant(np.zeros(inner), x.dtype)
    y = n.g.reshape(n.g.layer_norm(flat, ones, zeros, eps), list(x.shape))
    per_channel = [c] + [1] * (x.ndim - 2)
    scale, bias = n.tensor(1), n.tensor(2)
    if scale.shape[0] != c:  # GroupNormalization opset 18: one scale per group
        scale = n.g.reshape(n.g.expand(n.g.reshape(scale, [groups, 1]), [groups, c // groups]), [c])
        bias = n.g.reshape(n.g.expand(n.g.reshape(bias, [groups, 1]), [groups, c // groups]), [c])
    scale, bias = (as_type(n.g, t, x.dtype) for t in (scale, bias))
    return [n.g.add(n.g.mul(y, n.g.reshape(scale, per_channel)), n.g.reshape(bias, per_channel))]


@emitter("BatchNormalization")
def _batch_norm(n: Node) -> list[Value]:
    """Inference form, folded into a per-channel scale and shift; training
    mode (opset 14 on) as `_batch_norm_training`."""
    if n.attr("training_mode", 0) and n.opset >= 14:
        return _batch_norm_training(n)
    if n.attr("training_mode", 0) or any(o for o in n.proto.output[1:]):
        raise n.unsupported("training mode before opset 14 (its saved statistics' outputs)",
                            "inference (one output), and training_mode=1 from opset 14")
    x = n.tensor(0)
    scale, bias, mean, var = (n.const(i, name) for i, name in enumerate(("scale", "B", "mean", "var"), 1))
    s = scale / np.sqrt(var.astype(np.float64) + n.attr("epsilon", 1e-5))
    t = bias - mean * s
    tail = [1] * (x.ndim - 2)
    s_t = n.imp.constant(s.reshape(-1, *tail), x.dtype)
    t_t = n.imp.constant(t.reshape(-1, *tail), x.dtype)
    return [n.g.add(n.g.mul(x, s_t), t_t)]



def _batch_norm_training(n: Node) -> list[Value]:
    """BatchNormalization-14/15 in training mode: x normalized by its own
    batch statistics (per channel over the batch and spatial axes, the
    population variance), then scaled and shifted; the running mean and
    variance outputs are input_mean · momentum + batch mean · (1 -
    momentum), and the same of the variances. In f32 for 16-bit inputs
    (scale, B, mean and var may have their own float types: each output
    takes its input's)."""
    g = n.g
    x = n.tensor(0)
    scale, bias, mean, var = (n.tensor(i) for i in range(1, 5))
    eps, momentum = float(n.attr("epsilon", 1e-5)), float(n.attr("momentum", 0.9))
    axes = [0, *range(2, x.ndim)]
    c = x.shape[1]
    tail = [1] * (x.ndim - 2)

    xf = as_type(g, x, "f32")
    m = g.reduce_mean(xf, axes, True)
    d = g.sub(xf, m)
    v = g.reduce_mean(g.mul(d, d), axes, True)
    k = g.div(g.reshape(as_type(g, scale, "f32"), [c, *tail]), g.sqrt(g.add(v, n.imp.scalar(eps, "f32"))))
    y = g.add(g.mul(d, k), g.reshape(as_type(g, bias, "f32"), [c, *tail]))
    outs = [as_type(g, y, x.dtype)]
    for running, batch in ((mean, m), (var, v)):
        r = g.add(g.mul(as_type(g, running, "f32"), n.imp.scalar(momentum, "f32")),
                  g.mul(g.reshape(batch, [c]), n.imp.scalar(1.0 - momentum, "f32")))
        outs.append(as_type(g, r, running.dtype))
    return outs[:max(1, len(n.proto.output))]


@emitter("CumSum")
def _cumsum(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = int(np.ravel(n.const(1, "axis"))[0])
    return [n.g.cumsum(x, axis % x.ndim, bool(n.attr("exclusive", 0)), bool(n.attr("reverse", 0)))]



@emitter("TopK")
def _topk_attr(n: Node) -> list[Value]:
    """TopK-1: k as an attribute."""
    return _topk_of(n, int(n.attr("k")))


@emitter("TopK", since=10)
def _topk(n: Node) -> list[Value]:
    """TopK-10/11: K as an input known at import."""
    return _topk_of(n, int(np.ravel(n.const(1, "K"))[0]))


def _topk_of(n: Node, k: int) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", -1) % x.ndim
    values, indices = n.g.topk(x, k, axis, bool(n.attr("largest", 1)), bool(n.attr("sorted", 1)))
    return [values, indices]


@emitter("ReduceL1", "ReduceLogSum", "ReduceLogSumExp")
def _reduce_composite(n: Node) -> list[Value]:
    """sum |x|, log(sum x), and log(sum e^(x - max)) + max (the max kept
    where the sum is taken, so large inputs do not overflow)."""
    x = n.tensor(0)
    if x.dtype not in ("f32", "f16", "bf16") and not (n.op_type == "ReduceL1" and x.dtype in ("i32", "i64")):
        raise n.unsupported(f"an input of {x.dtype}", "f32, f16, bf16 (ReduceL1: i32, i64 too)")
    keep = bool(n.attr("keepdims", 1))
    axes = _reduce_axes(n, x)
    if not axes:  # noop_with_empty_axes, or a scalar: each element alone
        return [{"ReduceL1": n.g.abs, "ReduceLogSum": n.g.log}.get(n.op_type, lambda t: t)(x)]
    if (empty := _over_nothing(n, x, axes, keep)) is not None:  # over no elements: sum 0 (log: -inf)
        return [empty]
    if n.op_type == "ReduceL1":
        return [n.g.reduce_sum(n.g.abs(x), axes, keep)]
    if n.op_type == "ReduceLogSum":
        return [n.g.log(n.g.reduce_sum(x, axes, keep))]
    m = n.g.reduce_max(x, axes, True)
    # shifted by 0 where the max is not finite: a slice of only -inf (sum 0, log -inf), one
    # holding +inf (the sum +inf, not inf - inf), or NaN (NaN either way)
    big = n.imp.scalar(LARGEST_FINITE[x.dtype], x.dtype)
    finite = n.g.select(n.g.le(n.g.abs(m), big), m, n.imp.scalar(0, x.dtype))
    s = n.g.log(n.g.reduce_sum(n.g.exp(n.g.sub(x, finite)), axes, keep))
    return [n.g.add(s, finite if keep else n.g.reshape(finite, list(s.shape)))]


@emitter("Hardmax", since=13)
def _hardmax(n: Node) -> list[Value]:
    """1 at the first largest element along `axis` (default the last), 0 elsewhere."""
    x = n.tensor(0)
    axis = n.attr("axis", -1) % max(x.ndim, 1)
    return [_one_at_argmax(n, x, axis)]


@emitter("Hardmax")
def _hardmax_flat(n: Node) -> list[Value]:
    """Hardmax-1/11: over the input coerced to 2-D at `axis` (default 1)."""
    x = n.tensor(0)
    axis = n.attr("axis", 1) % max(x.ndim, 1)
    flat = n.g.reshape(x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])
    return [n.g.reshape(_one_at_argmax(n, flat, 1), list(x.shape))]


def _one_at_argmax(n: Node, x: Tensor, axis: int) -> Tensor:
    at = n.g.argmax(x, axis, True)
    one = n.g.eq(at, positions(n, x.shape[axis], axis, x.ndim, at.dtype))
    return n.g.select(one, n.imp.scalar(1, x.dtype), n.imp.scalar(0, x.dtype))


@emitter("LpNormalization")
def _lp_normalization(n: Node) -> list[Value]:
    """x over its L1 or L2 norm along `axis` (default the last); 0 where the norm is 0."""
    x = n.tensor(0)
    axis, p = n.attr("axis", -1) % max(x.ndim, 1), n.attr("p", 2)
    if p not in (1, 2):
        raise n.unsupported(f"p={p}", "1, 2")

    def normalized(x: Tensor) -> Tensor:
        norm = (n.g.reduce_sum(n.g.abs(x), [axis], True) if p == 1
                else n.g.sqrt(n.g.reduce_sum(n.g.mul(x, x), [axis], True)))
        zero = n.imp.scalar(0, x.dtype)
        return n.g.select(n.g.eq(norm, zero), zero, n.g.div(x, norm))
    return [in_f32(n, x, normalized)]


@emitter("LRN")
def _lrn(n: Node) -> list[Value]:
    """x / (bias + alpha / size · Σ x²)^beta, the sum over `size` neighbouring
    channels (floor((size - 1) / 2) before, the rest after, clipped at the
    edges): an average pool of x² over the channel axis seen as a [N, 1, C,
    rest] image, zero padding counted, times size. In f32 for f16/bf16."""
    x = n.tensor(0)
    if n.attr("size") is None:
        raise n.error("LRN needs its size attribute")
    size = int(n.attr("size"))
    alpha, beta, bias = n.attr("alpha", 1e-4), n.attr("beta", 0.75), n.attr("bias", 1.0)
    if x.ndim < 2:
        raise n.error(f"input of shape {list(x.shape)}: LRN needs [N, C, ...]")
    N, C = x.shape[0], x.shape[1]
    rest = int(np.prod(x.shape[2:]))
    before = (size - 1) // 2

    def lrn(x: Tensor) -> Tensor:
        sq = n.g.reshape(n.g.mul(x, x), [N, 1, C, rest])
        window = n.g.avg_pool2d(sq, [size, 1], [1, 1], [before, 0, size - 1 - before, 0], count_include_pad=True)
        s = lambda v: n.imp.scalar(v, x.dtype)  # noqa: E731
        scale = n.g.add(s(bias), n.g.mul(n.g.reshape(window, list(x.shape)), s(alpha)))  # mean x alpha = alpha/size x sum
        return n.g.mul(x, n.g.pow(scale, s(-beta)))
    return [in_f32(n, x, lrn)]


@emitter("MeanVarianceNormalization")
def _mean_variance_normalization(n: Node) -> list[Value]:
    """(x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3), as ONNX's
    function body; the variance as the mean of squared deviations (two
    passes), in f32 for f16/bf16 inputs."""
    x = n.tensor(0)
    axes = sorted({a % x.ndim for a in n.attr("axes", [0, 2, 3])}) if x.ndim else []

    def mvn(t: Tensor) -> Tensor:
        g = n.g
        dev = g.sub(t, g.reduce_mean(t, axes, True))
        std = g.sqrt(g.reduce_mean(g.mul(dev, dev), axes, True))
        return g.div(dev, g.add(std, n.imp.scalar(1e-9, t.dtype)))

    return [in_f32(n, x, mvn) if axes else n.g.mul(x, n.imp.scalar(0.0, x.dtype))]


def _nll(n: Node, logp: Tensor, target: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """ONNX's negative log-likelihood of f32 log-probabilities [N, C, ...] at
    integer targets [N, ...]: -logp[n, target, ...] times the target's class
    weight, 0 where the target is ignore_index; reduced by `reduction`
    (mean: over the weights' sum where there are weights or an ignored
    index, else over the elements)."""
    g = n.g
    if reduction not in ("none", "sum", "mean"):
        raise n.unsupported(f"reduction '{reduction}'", "none, sum, mean")
    if target.dtype not in ("i32", "i64") or logp.ndim < 2 or target.shape != (logp.shape[0], *logp.shape[2:]):
        raise n.error(f"input {logp.shape} and target {target.shape} ({target.dtype}): the target must be "
                      "[N, d1, ...] of integers for an input [N, C, d1, ...]")
    t = as_type(g, target, "i64")
    ignore = n.attr("ignore_index")
    keep = g.ne(t, n.imp.scalar(int(ignore), "i64")) if ignore is not None else None
    c = logp.shape[1]
    idx = g.minimum(g.maximum(t, n.imp.scalar(0, "i64")), n.imp.scalar(c - 1, "i64"))  # ignored ones: any class
    picked = g.gather_elements(logp, g.reshape(idx, [t.shape[0], 1, *t.shape[1:]]), 1)
    loss = g.neg(g.reshape(picked, list(t.shape)))
    w = None
    if weight is not None:
        w = g.gather(as_type(g, weight, "f32"), idx, 0)
    if keep is not None:
        w = g.select(keep, w if w is not None else n.imp.scalar(1.0, "f32"), n.imp.scalar(0.0, "f32"))
    if w is not None:
        loss = g.mul(loss, w)
    if reduction == "none":
        return loss
    total = g.reduce_sum(loss)
    if reduction == "sum":
        return total
    return g.div(total, g.reduce_sum(w)) if w is not None else g.reduce_mean(loss)


@emitter("NegativeLogLikelihoodLoss")
def _nll_loss(n: Node) -> list[Value]:
    """input [N, C, d1, ...] (log-probabilities), target [N, d1, ...], an
    optional weight per class; computed in f32."""
    w = n.tensor(2) if n.input(2) is not None else None
    return [in_f32(n, n.tensor(0), lambda xf: _nll(n, xf, n.tensor(1), w, n.attr("reduction", "mean")))]


@emitter("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(n: Node) -> list[Value]:
    """log_softmax of the scores over axis 1, then NegativeLogLikelihoodLoss;
    the optional second output is the log-probabilities."""
    x = n.tensor(0)
    logp = n.g.log_softmax(as_type(n.g, x, "f32"), axis=1)
    w = n.tensor(2) if n.input(2) is not None else None
    y = _nll(n, logp, n.tensor(1), w, n.attr("reduction", "mean"))
    return [as_type(n.g, y, x.dtype), as_type(n.g, logp, x.dtype)]

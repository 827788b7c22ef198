"""Hypothesis strategies for random valid rlx graphs, shared by every pass
test and by `rlxc fuzz` (hypothesis is a test dependency: import this module
only where it is installed).

    from rlxc.testing.strategies import graphs, random_inputs

    @given(graphs())
    def test_my_pass(case):
        inputs, params = random_inputs(case.module, np.random.default_rng())
        ...

A drawn `GraphCase` holds a verified module built with `GraphBuilder`
(so every graph is valid by construction) and a description of the ops drawn,
which hypothesis prints when a test fails. Graphs mix elementwise chains,
broadcasts, reductions, norms, matmul/linear, shape ops and composites, with
inputs kept in each op's domain (log of |x| + 0.5, exp of tanh(x), ...), so
interpreting them gives finite numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from rlxc.frontends.builder import GraphBuilder, Tensor
from rlxc.interp import signature

UNARY_ANY = ["neg", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh",
             "silu", "erf", "floor", "ceil", "round", "sign", "softplus", "atan", "asinh"]  # fmt: skip
UNARY_POSITIVE = ["log", "sqrt", "rsqrt", "reciprocal"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]

OP_KINDS = [
    "unary", "unary_positive", "exp", "binary", "div", "pow", "select", "reduce",
    "softmax", "layer_norm", "rms_norm", "matmul", "linear", "reshape", "transpose",
    "expand", "concat", "slice", "cast", "swiglu", "fused_residual", "constant_binary",
    "attention", "rope", "conv", "gather", "argmax", "pad", "cumsum", "topk",
    "matmul_t", "attention_heads",
]  # fmt: skip


@dataclass
class GraphCase:
    """A drawn graph: the module and the ops that built it (for failure reports)."""

    module: ModuleOp
    ops: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"GraphCase(ops={self.ops})\n{self.module}"

    def _repr_pretty_(self, p, cycle) -> None:
        # hypothesis's printer would otherwise walk the dataclass's fields
        # into the IR objects (megabytes of repr for a small graph).
        p.text(repr(self))


def _positive(g: GraphBuilder, x: Tensor) -> Tensor:
    half = g.constant(np.full((), 0.5, np.float32), dtype=x.dtype)
    return g.add(g.abs(x), half)


@st.composite
def graphs(
    draw: st.DrawFn,
    min_ops: int = 1,
    max_ops: int = 12,
    dtypes: tuple[str, ...] = ("f32",),
    kinds: tuple[str, ...] | None = None,
    last_dims: tuple[int, ...] | None = None,
) -> GraphCase:
    """A random valid rlx graph of `min_ops`..`max_ops` drawn op steps.
    `last_dims`: the inputs' last axis drawn from these (the row lengths
    whose kernel forms differ), the others 1-5 as without it."""
    kinds_list = list(kinds or OP_KINDS)
    dtype = draw(st.sampled_from(dtypes))
    g = GraphBuilder()
    rank = draw(st.integers(1, 3))
    base = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    if last_dims:
        base[-1] = draw(st.sampled_from(last_dims))
    values: list[Tensor] = []
    used: set[int] = set()
    log: list[str] = []

    n_inputs = draw(st.integers(1, 3))
    for i in range(n_inputs):
        # Broadcast-compatible with `base`: drop leading axes, set some to 1.
        drop = draw(st.integers(0, rank - 1)) if i else 0
        shape = [d if not draw(st.booleans()) or i == 0 else 1 for d in base[drop:]]
        values.append(g.input(f"in{i}", shape, dtype))

    def pick(pred=lambda t: True) -> Tensor | None:
        cands = [v for v in values if pred(v)]
        if not cands:
            return None
        v = draw(st.sampled_from(cands))
        used.add(id(v))
        return v

    n_ops = draw(st.integers(min_ops, max_ops))
    pcount = 0
    for _ in range(n_ops):
        kind = draw(st.sampled_from(kinds_list))
        x = pick()
        assert x is not None
        out: Tensor | None = None
        if kind == "unary":
            name = draw(st.sampled_from(UNARY_ANY))
            out = getattr(g, name)(x)
        elif kind == "unary_positive":
            name = draw(st.sampled_from(UNARY_POSITIVE))
            out = getattr(g, name)(_positive(g, x))
        elif kind == "exp":
            name = "exp"
            out = g.exp(g.tanh(x))
        elif kind in ("binary", "div", "pow"):
            y = pick(lambda t: _broadcasts(t.shape, x.shape))
            if y is None:
                continue
            if kind == "binary":
                name = draw(st.sampled_from(BINARY))
                out = getattr(g, name)(x, y)
            elif kind == "div":  # a divisor away from 0: div, or rem (the remainder)
                name = draw(st.sampled_from(["div", "rem"]))
                out = getattr(g, name)(x, _positive(g, y))
            else:
                name = "pow"
                out = g.pow(_positive(g, x), g.tanh(y))
        elif kind == "constant_binary":
            name = "constant"
            c = draw(st.floats(-2, 2, width=32))
            out = g.mul(x, g.constant(np.full(x.shape[-1:], c, np.float32), dtype=dtype))
        elif kind == "select":
            y = pick(lambda t: _broadcasts(t.shape, x.shape))
            if y is None:
                continue
            name = "select/" + draw(st.sampled_from(COMPARE))
            cond = getattr(g, name.split("/")[1])(x, y)
            out = g.select(cond, x, y)
        elif kind == "reduce":
            name = draw(st.sampled_from(REDUCE))
            axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
            out = getattr(g, name)(x, axes=axes, keepdims=draw(st.booleans()) or x.ndim == len(axes))
        elif kind == "softmax":
            name = draw(st.sampled_from(["softmax", "log_softmax"]))
            out = getattr(g, name)(x, axis=draw(st.integers(-x.ndim, x.ndim - 1)))
        elif kind in ("layer_norm", "rms_norm", "fused_residual"):
            name = kind
            n = x.shape[-1]
            pcount += 1
            gamma = g.param(f"gamma{pcount}", [n], dtype)
            if kind == "layer_norm":
                out = g.layer_norm(x, gamma, g.param(f"beta{pcount}", [n], dtype))
            elif kind == "rms_norm":
                out = g.rms_norm(x, gamma)
            else:
                r = pick(lambda t: t.shape == x.shape and t is not x) or x
                s, out = g.fused_residual_rms_norm(x, r, gamma)
                values.append(s)
        elif kind in ("matmul", "linear"):
            name = kind
            k = x.shape[-1]
            m = draw(st.integers(1, 5))
            pcount += 1
            if kind == "matmul":
                if x.ndim < 2:
                    continue
                out = g.matmul(x, g.param(f"w{pcount}", [k, m], dtype))
            else:
                act = draw(st.sampled_from([None, "relu", "gelu", "silu", "tanh"]))
                b = g.param(f"b{pcount}", [m], dtype) if draw(st.booleans()) else None
                out = g.linear(x, g.param(f"w{pcount}", [m, k], dtype), b, activation=act)
        elif kind == "matmul_t":
            # a product through transposed operands (rlx-fold-layout: transpose flags)
            if x.ndim < 2:
                continue
            m = draw(st.integers(1, 5))
            pcount += 1
            if draw(st.booleans()):
                name = "matmul_t/lhs"
                out = g.matmul(g.transpose(x, [*range(x.ndim - 2), x.ndim - 1, x.ndim - 2]),
                               g.param(f"w{pcount}", [x.shape[-2], m], dtype))
            else:
                name = "matmul_t/rhs"
                w = g.param(f"w{pcount}", [m, x.shape[-1]], dtype)
                out = g.matmul(x, g.transpose(w, [1, 0]))
        elif kind == "attention_heads":
            # q, k, v as slices of whole heads of one [1, rows, cols] tensor, to
            # heads and transposed (a merged projection's shape: head windows)
            cols = x.shape[-1]
            rows = int(np.prod(x.shape[:-1]))
            ds = [d for d in range(1, cols + 1) if cols % d == 0 and cols // d >= 3]
            if not ds:
                continue
            name = "attention_heads"
            d = draw(st.sampled_from(ds))
            h = draw(st.integers(1, cols // d // 3))
            x3 = g.reshape(x, [1, rows, cols])
            at = draw(st.permutations([0, 1, 2]))

            def heads(i: int) -> Tensor:
                part = g.slice(x3, [at[i] * h * d], [(at[i] + 1) * h * d], axes=[2])
                return g.transpose(g.reshape(part, [1, rows, h, d]), [0, 2, 1, 3])

            a = g.attention(heads(0), heads(1), heads(2), causal=draw(st.booleans()))
            out = g.reshape(g.transpose(a, [0, 2, 1, 3]), [rows, h * d])
        elif kind == "reshape":
            name = "reshape"
            out = g.reshape(x, [-1]) if x.ndim > 1 else g.reshape(x, [1, *x.shape])
        elif kind == "transpose":
            name = "transpose"
            perm = draw(st.permutations(list(range(x.ndim))))
            out = g.transpose(x, perm)
        elif kind == "expand":
            name = "expand"
            shape = [d if d != 1 else draw(st.integers(1, 4)) for d in x.shape]
            out = g.expand(x, [draw(st.integers(1, 3)), *shape] if draw(st.booleans()) else shape)
        elif kind == "concat":
            name = "concat"
            y = pick(lambda t: t.ndim == x.ndim and t.shape[1:] == x.shape[1:])
            out = g.concat([x, y or x], axis=0)
        elif kind == "slice":
            name = "slice"
            ax = draw(st.integers(0, x.ndim - 1))
            d = x.shape[ax]
            start = draw(st.integers(-d, d - 1))
            step = draw(st.sampled_from([1, 2, -1]))
            end = draw(st.integers(-d - 1, d + 1))
            out = g.slice(x, [start], [end], axes=[ax], steps=[step])
            if 0 in out.shape:
                continue
        elif kind == "cast":
            name = "cast"
            out = g.cast(g.cast(x, draw(st.sampled_from(["f16", "bf16", "f32"]))), dtype)
        elif kind == "swiglu":
            name = "swiglu"
            if x.shape[-1] % 2:
                x = g.concat([x, x], axis=-1)
            out = g.swiglu(x)
        elif kind in ("attention", "rope", "conv"):
            # View x as one [1, 1, rows, cols] image / sequence.
            name = kind
            cols = x.shape[-1]
            rows = int(np.prod(x.shape[:-1]))
            x4 = g.reshape(x, [1, 1, rows, cols])
            pcount += 1
            if kind == "attention":
                mask = None
                if draw(st.booleans()):
                    mask = g.param(f"mask{pcount}", [rows, rows], dtype)
                y4 = g.attention(x4, x4, x4, mask=mask, causal=draw(st.booleans()))
            elif kind == "rope":
                if cols % 2:
                    continue
                c = g.cos(g.param(f"theta{pcount}", [rows, cols], dtype))
                s_ = g.sin(g.param(f"theta{pcount}", [rows, cols], dtype))
                y4 = g.rope(x4, c, s_)
            else:
                kh, kw = draw(st.integers(1, rows)), draw(st.integers(1, cols))
                w = g.param(f"conv{pcount}", [2, 1, kh, kw], dtype)
                y4 = g.conv2d(x4, w, padding=draw(st.integers(0, 1)))
                if draw(st.booleans()):
                    # MobileNet's shape: a clamp (ReLU, ReLU6, a min), a depthwise conv of the two
                    # channels, another clamp (rlx-conv-to-gemm runs it channels last, bounds folded)
                    def clamp(v):
                        v = g.relu(v) if draw(st.booleans()) else v
                        if draw(st.booleans()):
                            v = g.minimum(v, g.constant(np.full((), draw(st.floats(-1, 2, width=16)), np.float32), dtype=dtype))
                        return v

                    dh, dw_ = draw(st.integers(1, y4.shape[2])), draw(st.integers(1, y4.shape[3]))
                    wd = g.param(f"dw{pcount}", [2, 1, dh, dw_], dtype)
                    y4 = clamp(g.conv2d(clamp(y4), wd, padding=draw(st.integers(0, 1)), groups=2))
                y4 = (g.max_pool2d if draw(st.booleans()) else g.avg_pool2d)(
                    y4, 1, padding=0
                )
            out = y4
        elif kind == "gather":
            name = "gather"
            ids = g.constant(
                np.array(draw(st.lists(st.integers(-x.shape[0], x.shape[0] - 1), min_size=1, max_size=4)), np.int64)
            )
            out = g.gather(x, ids, axis=0)
        elif kind == "argmax":
            name = "argmax"
            idx = g.argmax(x, axis=-1, keepdims=True)
            out = g.add(x, g.cast(idx, dtype))
        elif kind == "pad":
            mode = draw(st.sampled_from(["constant", "reflect", "edge", "wrap"]))
            name = f"pad/{mode}"
            most = [d - 1 if mode == "reflect" else 2 for d in x.shape]
            low = [draw(st.integers(0, min(2, m))) for m in most]
            high = [draw(st.integers(0, min(2, m))) for m in most]
            out = g.pad(x, low, high, mode, value=draw(st.floats(-2, 2, width=16)))
        elif kind == "cumsum":
            name = "cumsum"
            out = g.cumsum(x, draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.booleans()), draw(st.booleans()))
        elif kind == "topk":
            name = "topk"  # the values: near-equal ones may swap places between targets, indices with them
            axis = draw(st.integers(-x.ndim, x.ndim - 1))
            out, _ = g.topk(x, draw(st.integers(1, x.shape[axis])), axis, largest=draw(st.booleans()))
        else:  # pragma: no cover - a kind name typo
            raise AssertionError(kind)
        if out is not None:
            values.append(out)
            log.append(name)

    sinks = [v for v in values if id(v) not in used and v.builder is g]
    args = {id(a) for a in values[:n_inputs]}
    outputs = [v for v in sinks if id(v) not in args] or [values[-1]]
    return GraphCase(g.build(outputs), log)


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def random_array(shape, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Fresh random values of an rlx dtype, in its numpy carrier."""
    if dtype in ("f32", "bf16"):
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == "f16":
        return rng.standard_normal(shape).astype(np.float16)
    if dtype in ("i32", "i64"):
        return rng.integers(-8, 8, size=shape).astype(np.int32 if dtype == "i32" else np.int64)
    if dtype == "i1":
        return rng.integers(0, 2, size=shape).astype(bool)
    raise ValueError(dtype)


def random_inputs(module: ModuleOp, rng: np.random.Generator):
    """Random inputs and params for every argument and `rlx.param` of @main."""
    from rlxc.dialects.types import dtype_name

    sig = signature(module)

    def arr(t):
        return random_array(tuple(t.get_shape()), dtype_name(t.get_element_type()), rng)

    return {n: arr(t) for n, t in sig.inputs}, {n: arr(t) for n, t in sig.params.items()}

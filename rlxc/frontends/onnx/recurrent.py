"""Emitters of the recurrent ops RNN, GRU and LSTM, unrolled over the
sequence (its length is static in rlx).

Each direction's input projections for all steps are one gemm (x · Wᵀ + the
two biases), then each step is a gemm of the hidden state by Rᵀ and the
gates' elementwise math, which the fusion passes merge into one kernel a
step. f16/bf16 models run the recurrence in f32 (the states would drift by
an ulp a step otherwise) and round the outputs once.

Supported as ONNX defines them: the three directions, `layout` 0 and 1, the
optional B, initial_h, initial_c and P (peepholes) inputs, `activations`
(Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
HardSigmoid, Elu, Softsign, Softplus; names in any case) with
`activation_alpha` / `activation_beta` consumed in order, `clip`,
`input_forget` (LSTM: f = 1 - i) and `linear_before_reset` (GRU). `clip`
bounds the gates' sums before their activations (not LSTM's cell state
before h, as in ONNX Runtime).
`sequence_lens` (known at import, or a runtime input): a batch entry of
length L keeps its state from step L on, its outputs there are 0, and the
reverse direction reads its L steps backwards from step L - 1 (as ONNX
Runtime does); with runtime lengths the masks and the reverse direction's
row indices are computed on the device.
"""

from __future__ import annotations

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Const, Node, Value, as_type, emitter, reversed_within

#: Activation -> (default alpha, default beta, how many of the two it reads).
_ACTIVATIONS = {
    "relu": (0.0, 0.0, 0), "tanh": (0.0, 0.0, 0), "sigmoid": (0.0, 0.0, 0), "softsign": (0.0, 0.0, 0),
    "softplus": (0.0, 0.0, 0), "affine": (1.0, 0.0, 2), "leakyrelu": (0.01, 0.0, 1),
    "thresholdedrelu": (1.0, 0.0, 1), "scaledtanh": (1.0, 1.0, 2), "hardsigmoid": (0.2, 0.5, 2),
    "elu": (1.0, 0.0, 1),
}  # fmt: skip


def _activations(n: Node, defaults: list[str], directions: int) -> list[list[tuple[str, float, float]]]:
    """Per direction, the op's activation functions as (name, alpha, beta)."""
    names = [str(a.decode() if isinstance(a, bytes) else a) for a in n.attr("activations", [])] or defaults * directions
    if len(names) == len(defaults) and directions == 2:
        names = names * 2  # one list for both directions
    if len(names) != len(defaults) * directions:
        raise n.error(f"{len(names)} activations for {directions} direction(s) of {len(defaults)} functions each")
    alphas, betas = list(n.attr("activation_alpha", [])), list(n.attr("activation_beta", []))
    out = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATIONS:
            raise n.unsupported(f"activation '{name}'", ", ".join(sorted(_ACTIVATIONS)))
        alpha, beta, reads = _ACTIVATIONS[key]
        if reads >= 1 and alphas:
            alpha = float(alphas.pop(0))
        if reads >= 2 and betas:
            beta = float(betas.pop(0))
        out.append((key, alpha, beta))
    return [out[d * len(defaults):(d + 1) * len(defaults)] for d in range(directions)]


def _apply(n: Node, fn: tuple[str, float, float], x: Tensor, scalar) -> Tensor:
    """One activation function of the recurrent ops' table, on an f32 tensor
    (`scalar(v)`: the f32 constant v)."""
    g, name = n.g, fn[0]
    if name in ("relu", "tanh", "sigmoid", "softplus"):
        return getattr(g, name)(x)
    alpha, beta, zero, one = scalar(fn[1]), scalar(fn[2]), scalar(0.0), scalar(1.0)
    if name == "softsign":
        return g.div(x, g.add(g.abs(x), one))
    if name == "affine":
        return g.add(g.mul(x, alpha), beta)
    if name == "leakyrelu":
        return g.select(g.lt(x, zero), g.mul(x, alpha), x)
    if name == "thresholdedrelu":
        return g.select(g.gt(x, alpha), x, zero)
    if name == "scaledtanh":
        return g.mul(alpha, g.tanh(g.mul(x, beta)))
    if name == "hardsigmoid":
        return g.minimum(g.maximum(g.add(g.mul(x, alpha), beta), zero), one)
    assert name == "elu"
    return g.select(g.lt(x, zero), g.mul(alpha, g.sub(g.exp(x), one)), x)


class _Recurrence:
    """What the three ops share: the inputs in [steps, batch, ...] layout and
    f32, the step order and masks of each direction, and the outputs."""

    def __init__(self, n: Node, gates: int, defaults: list[str]):
        self.n, self.g = n, n.g
        direction = n.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise n.unsupported(f"direction '{direction}'", "forward, reverse, bidirectional")
        self.reverse = [False, True] if direction == "bidirectional" else [direction == "reverse"]
        self.layout = int(n.attr("layout", 0))
        if self.layout not in (0, 1):
            raise n.unsupported(f"layout {self.layout}", "0, 1")
        x, w, r = n.tensor(0), n.tensor(1), n.tensor(2)
        if x.ndim != 3 or w.ndim != 3 or r.ndim != 3:
            raise n.error(f"X, W and R must have rank 3 (got {x.shape}, {w.shape}, {r.shape})")
        self.dtype = x.dtype
        if self.dtype not in ("f32", "f16", "bf16"):
            raise n.unsupported(f"element type {self.dtype}", "f32, f16, bf16")
        self.x = self.f32(self.g.transpose(x, [1, 0, 2]) if self.layout else x)  # [steps, batch, input]
        self.steps, self.batch, _ = self.x.shape
        nd = len(self.reverse)
        self.hidden = r.shape[-1]
        h = self.hidden
        hidden_size = n.attr("hidden_size")
        if hidden_size is not None and int(hidden_size) != h:
            raise n.error(f"hidden_size {hidden_size} but R has {h} columns")
        if w.shape[0] != nd or r.shape[0] != nd or w.shape[1] != gates * h or r.shape[1] != gates * h:
            raise n.error(f"W {w.shape} and R {r.shape} do not fit {nd} direction(s) of {gates} gates of {h}")
        self.w, self.r = self.f32(w), self.f32(r)
        self.b = self.f32(n.tensor(3)) if n.input(3) is not None else None
        self.acts = _activations(n, defaults, nd)
        clip = n.attr("clip")
        self.clip = None if clip is None else float(clip)
        #: the entries' lengths: None (all full), an array known at import, or an i64 [batch] tensor
        self.lens: np.ndarray | Tensor | None = None
        v = n.input(4)
        if isinstance(v, Const):
            lens = np.asarray(v.array, np.int64).reshape(-1)
            if lens.shape != (self.batch,) or (lens < 0).any() or (lens > self.steps).any():
                raise n.error(f"sequence_lens {lens.tolist()} for a batch of {self.batch} and {self.steps} steps")
            self.lens = None if (lens == self.steps).all() else lens
        elif v is not None:
            t = n.tensor(4)
            if t.shape != (self.batch,) or t.dtype not in ("i32", "i64"):
                raise n.error(f"sequence_lens {t.shape} ({t.dtype}) for a batch of {self.batch}: it must be "
                              f"[{self.batch}] integers")
            self.lens = as_type(self.g, t, "i64")

    def f32(self, t: Tensor) -> Tensor:
        return as_type(self.g, t, "f32")

    def state(self, i: int) -> Tensor | None:
        """Initial state input `i` (initial_h, initial_c) as [directions, batch, hidden] f32."""
        if self.n.input(i) is None:
            return None
        t = self.n.tensor(i)
        return self.f32(self.g.transpose(t, [1, 0, 2]) if self.layout else t)

    def pick(self, t: Tensor, d: int) -> Tensor:
        """Direction d of a [directions, ...] tensor, without its first axis."""
        s = self.g.slice(t, [d], [d + 1], [0])
        return self.g.reshape(s, list(t.shape[1:]))

    def cols(self, t: Tensor, k: int) -> Tensor:
        """Gate k's hidden-wide columns of t's last axis."""
        h = self.hidden
        return self.g.slice(t, [k * h], [(k + 1) * h], [t.ndim - 1])

    def clipped(self, t: Tensor) -> Tensor:
        if self.clip is None:
            return t
        return self.g.minimum(self.g.maximum(t, self.scalar(-self.clip)), self.scalar(self.clip))

    def act(self, d: int, k: int, t: Tensor, clip: bool = True) -> Tensor:
        """Direction d's activation k of t; `clip`: of t clipped first (the
        gates' sums; LSTM's h(Ct) is not, as in ONNX Runtime)."""
        return _apply(self.n, self.acts[d][k], self.clipped(t) if clip else t, self.scalar)

    def scalar(self, v: float) -> Tensor:
        """The f32 constant v (the importer makes one per value, not one per step)."""
        return self.n.imp.scalar(v, "f32")

    def order(self, d: int) -> np.ndarray | None:
        """[steps, batch]: the time index each step of direction d reads per
        batch entry (reverse within each entry's length; past it, the step's
        own), known at import; None where it is the identity or depends on
        runtime lengths (see `rows`). The map is its own inverse: step s
        wrote time order[s, b], and time t is written by step order[t, b]."""
        if not self.reverse[d] or isinstance(self.lens, Tensor):
            return None
        return reversed_within(self.steps, np.full(self.batch, self.steps) if self.lens is None else self.lens)

    def reordered(self, d: int) -> bool:
        """Whether direction d's steps read times other than their own."""
        return self.reverse[d] and (isinstance(self.lens, Tensor) or not (self.order(d) == np.arange(self.steps)[:, None]).all())

    def rows(self, d: int, t: int) -> Tensor:
        """The rows of a [steps × batch, ...] stack that step t of direction d
        reads (an i64 [batch]): constant indices, or computed from runtime
        lengths L (L - 1 - t where t < L, else t) for the reverse direction."""
        b = np.arange(self.batch)
        if self.reverse[d] and isinstance(self.lens, Tensor):
            g, i64 = self.g, (lambda v: self.n.imp.scalar(v, "i64"))  # noqa: E731
            k = g.select(g.lt(i64(t), self.lens), g.sub(g.sub(self.lens, i64(1)), i64(t)), i64(t))
            return g.add(g.mul(k, i64(self.batch)), self.n.imp.constant(b, "i64"))
        order = self.order(d)
        return self.n.imp.constant((t if order is None else order[t]) * self.batch + b, "i64")

    def projections(self, d: int, bias: Tensor | None, rows: list[Tensor]) -> list[Tensor]:
        """Per step of direction d, x_t · Wᵀ + bias as [batch, gates × hidden]
        (`rows`: each step's rows, `rows(d, t)`)."""
        g = self.g
        flat = g.reshape(self.x, [self.steps * self.batch, self.x.shape[2]])
        xw = g.linear(flat, self.pick(self.w, d), bias)  # [steps × batch, gates × hidden]
        # a gather of each step's rows by constant indices, not a slice: the slices' offsets are in
        # their kernels' source (a kernel per step to compile), the gathers' in their index data
        return [g.gather(xw, r, 0) for r in rows]

    def mask(self, t: int) -> Tensor | None:
        """[batch, 1] bool: the entries still in their sequence at step t (None: all)."""
        if isinstance(self.lens, Tensor):
            return self.g.reshape(self.g.lt(self.n.imp.scalar(t, "i64"), self.lens), [self.batch, 1])
        if self.lens is None or (t < self.lens).all():
            return None
        return self.n.imp.constant((t < self.lens)[:, None], "i1")

    def keep(self, m: Tensor | None, new: Tensor, old: Tensor) -> Tensor:
        return new if m is None else self.g.select(m, new, old)

    def sequence(self, d: int, hs: list[Tensor], masks: list[Tensor | None], rows: list[Tensor]) -> Tensor:
        """Direction d's outputs [steps, batch, hidden] in time order (0 past
        each entry's length; `masks` and `rows`: each step's `mask` and `rows`)."""
        g = self.g
        zero = g.expand(self.scalar(0.0), [self.batch, self.hidden])
        ys = [self.keep(m, h, zero) for m, h in zip(masks, hs)]
        stacked = g.concat([g.reshape(y, [1, self.batch, self.hidden]) for y in ys], 0)
        if not self.reordered(d):
            return stacked
        # time t of entry b was written by step order[t, b] (the map is its own inverse)
        order = self.order(d)  # known at import: one constant index, else the steps' computed rows
        idx = (g.concat(rows, 0) if order is None
               else self.n.imp.constant((order * self.batch + np.arange(self.batch)).reshape(-1), "i64"))
        flat = g.reshape(stacked, [self.steps * self.batch, self.hidden])
        return g.reshape(g.gather(flat, idx, 0), [self.steps, self.batch, self.hidden])

    def outputs(self, ys: list[Tensor], finals: list[list[Tensor]]) -> list[Value]:
        """Y and the final states (Y_h, Y_c) in the node's layout and type."""
        g, nd, h = self.g, len(self.reverse), self.hidden
        y = g.concat([g.reshape(v, [self.steps, 1, self.batch, h]) for v in ys], 1)  # [steps, nd, batch, hidden]
        states = [g.concat([g.reshape(v, [1, self.batch, h]) for v in per_dir], 0) for per_dir in finals]
        if self.layout:
            y = g.transpose(y, [2, 0, 1, 3])
            states = [g.transpose(s, [1, 0, 2]) for s in states]
        back = (lambda t: t) if self.dtype == "f32" else (lambda t: g.cast(t, self.dtype))  # noqa: E731
        return [back(y), *(back(s) for s in states)]

    def initial(self, state: Tensor | None, d: int) -> Tensor:
        if state is not None:
            return self.pick(state, d)
        return self.g.expand(self.scalar(0.0), [self.batch, self.hidden])

    def unroll(self, initials: list[Tensor | None], direction) -> list[Value]:
        """The op over every direction and step: `direction(d)` gives the
        bias of d's input projections and its step, `step(xw_t, states) ->
        new states` (the hidden state first); entries past their length keep
        their states. `initials`: the initial-state inputs (None: zeros)."""
        ys: list[Tensor] = []
        finals: list[list[Tensor]] = [[] for _ in initials]
        masks = [self.mask(t) for t in range(self.steps)]  # the same in both directions
        for d in range(len(self.reverse)):
            bias, step = direction(d)
            rows = [self.rows(d, t) for t in range(self.steps)]  # read by the projections and the outputs
            states = [self.initial(s, d) for s in initials]
            hs = []
            for xw, m in zip(self.projections(d, bias, rows), masks):
                new = step(xw, states)
                states = [self.keep(m, a, b) for a, b in zip(new, states)]
                hs.append(new[0])
            ys.append(self.sequence(d, hs, masks, rows))
            for k, v in enumerate(states):
                finals[k].append(v)
        return self.outputs(ys, finals)


def _biases(rec: _Recurrence, d: int, gates: int) -> tuple[Tensor | None, Tensor | None]:
    """Direction d's (Wb + Rb for the input projections, Rb alone) [gates × hidden]."""
    if rec.b is None:
        return None, None
    b = rec.pick(rec.b, d)  # [2 × gates × hidden]
    gh = gates * rec.hidden
    wb, rb = rec.g.slice(b, [0], [gh], [0]), rec.g.slice(b, [gh], [2 * gh], [0])
    return rec.g.add(wb, rb), rb


@emitter("RNN")
def _rnn(n: Node) -> list[Value]:
    """Ht = f(Xt·Wᵀ + Ht-1·Rᵀ + Wb + Rb)."""
    rec = _Recurrence(n, 1, ["Tanh"])

    def direction(d: int):
        bias, _ = _biases(rec, d, 1)
        r = rec.pick(rec.r, d)
        return bias, lambda xw, s: [rec.act(d, 0, rec.g.add(xw, rec.g.linear(s[0], r)))]

    return rec.unroll([rec.state(5)], direction)


@emitter("GRU")
def _gru(n: Node) -> list[Value]:
    """z, r, h gates (that order in W, R and B): zt = f(..z), rt = f(..r),
    ht = g(Xt·Whᵀ + (rt ⊙ Ht-1)·Rhᵀ + Rbh + Wbh), or with
    linear_before_reset g(Xt·Whᵀ + rt ⊙ (Ht-1·Rhᵀ + Rbh) + Wbh);
    Ht = (1 - zt) ⊙ ht + zt ⊙ Ht-1."""
    rec = _Recurrence(n, 3, ["Sigmoid", "Tanh"])
    g = rec.g
    before = int(n.attr("linear_before_reset", 0))
    one = rec.scalar(1.0)

    def direction(d: int):
        both, rb = _biases(rec, d, 3)
        # the input projections carry Wb + Rb of z and r, Wb of h (+ Rbh too unless it sits inside rt ⊙ (...))
        bias = both
        if both is not None and before:
            bias = g.concat([rec.cols(both, 0), rec.cols(both, 1), g.sub(rec.cols(both, 2), rec.cols(rb, 2))], 0)
        r = rec.pick(rec.r, d)
        r_zr, r_h = g.slice(r, [0], [2 * rec.hidden], [0]), rec.cols(g.transpose(r, [1, 0]), 2)
        rbh = rec.cols(rb, 2) if rb is not None and before else None

        def step(xw: Tensor, s: list[Tensor]) -> list[Tensor]:
            h = s[0]
            hr = g.linear(h, r_zr)  # [batch, 2 × hidden]
            z = rec.act(d, 0, g.add(rec.cols(xw, 0), rec.cols(hr, 0)))
            rt = rec.act(d, 0, g.add(rec.cols(xw, 1), rec.cols(hr, 1)))
            if before:
                hh = g.matmul(h, r_h)
                if rbh is not None:
                    hh = g.add(hh, rbh)
                cand = g.add(rec.cols(xw, 2), g.mul(rt, hh))
            else:
                cand = g.add(rec.cols(xw, 2), g.matmul(g.mul(rt, h), r_h))
            return [g.add(g.mul(g.sub(one, z), rec.act(d, 1, cand)), g.mul(z, h))]

        return bias, step

    return rec.unroll([rec.state(5)], direction)


@emitter("LSTM")
def _lstm(n: Node) -> list[Value]:
    """i, o, f, c gates (that order in W, R and B), peepholes P in i, o, f
    order: it = f(.. + Pi ⊙ Ct-1), ft = f(.. + Pf ⊙ Ct-1) (1 - it with
    input_forget), ct = g(..), Ct = ft ⊙ Ct-1 + it ⊙ ct,
    ot = f(.. + Po ⊙ Ct), Ht = ot ⊙ h(Ct)."""
    rec = _Recurrence(n, 4, ["Sigmoid", "Tanh", "Tanh"])
    g = rec.g
    p = rec.f32(n.tensor(7)) if n.input(7) is not None else None
    forget = int(n.attr("input_forget", 0))
    one = rec.scalar(1.0)

    def peep(pre: Tensor, w: Tensor | None, state: Tensor) -> Tensor:
        return pre if w is None else g.add(pre, g.mul(w, state))

    def direction(d: int):
        bias, _ = _biases(rec, d, 4)
        r = rec.pick(rec.r, d)
        pd = rec.pick(p, d) if p is not None else None
        pi, po, pf = (rec.cols(pd, k) for k in range(3)) if pd is not None else (None, None, None)

        def step(xw: Tensor, s: list[Tensor]) -> list[Tensor]:
            h, c = s
            gates = g.add(xw, g.linear(h, r))
            i = rec.act(d, 0, peep(rec.cols(gates, 0), pi, c))
            f = g.sub(one, i) if forget else rec.act(d, 0, peep(rec.cols(gates, 2), pf, c))
            c_new = g.add(g.mul(f, c), g.mul(i, rec.act(d, 1, rec.cols(gates, 3))))
            o = rec.act(d, 0, peep(rec.cols(gates, 1), po, c_new))
            return [g.mul(o, rec.act(d, 2, c_new, clip=False)), c_new]

        return bias, step

    return rec.unroll([rec.state(5), rec.state(6)], direction)

"""Emitters of GridSample and AffineGrid (spatial transformers, optical
flow, deformable attention): composites of elementwise math and
`rlx.gather_elements`, any number of spatial axes, computed in f32 (16-bit
inputs rounded once at the end), with ONNX's reference semantics: PyTorch's
unnormalization with and without align_corners, padding zeros / border /
reflection (the coordinate reflected, then each neighbour's index),
nearest (half to even), linear and cubic (Keys, a = -0.75) interpolation."""

from __future__ import annotations

import itertools

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Node, Value, as_type, emitter, in_f32

_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic", "cubic": "cubic"}


class _Coords:
    """Elementwise helpers on f32 [N, P] coordinate tensors of one node."""

    def __init__(self, n: Node):
        self.n, self.g = n, n.g

    def c(self, v: float) -> Tensor:
        """The f32 constant v."""
        return self.n.imp.scalar(v, "f32")

    def clamp(self, v: Tensor, lo: float, hi: float) -> Tensor:
        return self.g.minimum(self.g.maximum(v, self.c(lo)), self.c(hi))

    def trunc(self, v: Tensor) -> Tensor:
        """Toward zero (C's int conversion)."""
        g = self.g
        return g.select(g.lt(v, self.c(0.0)), g.ceil(v), g.floor(v))

    def reflect(self, v: Tensor, lo: float, hi: float) -> Tensor:
        """v reflected by the near border until it lies in [lo, hi] (ONNX's
        `_gs_reflect`)."""
        g, span = self.g, hi - lo
        if span <= 0:
            return g.expand(self.c(lo), list(v.shape))
        below, above = g.lt(v, self.c(lo)), g.gt(v, self.c(hi))
        dx = g.select(below, g.sub(self.c(lo), v), g.sub(v, self.c(hi)))
        k = g.floor(g.div(dx, self.c(span)))
        r = g.sub(dx, g.mul(k, self.c(span)))
        even = g.eq(g.rem(k, self.c(2.0)), self.c(0.0))
        from_lo, from_hi = g.add(self.c(lo), r), g.sub(self.c(hi), r)
        return g.select(below, g.select(even, from_lo, from_hi), g.select(above, g.select(even, from_hi, from_lo), v))


def _cubic(cs: _Coords, t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (a = -0.75) of the 4 neighbours
    x0 - 1 .. x0 + 2 at fraction t."""
    g, c, a = cs.g, cs.c, -0.75

    def far(d: Tensor) -> Tensor:  # ((a(d) - 5a) d + 8a) d - 4a, for 1 < d < 2
        return g.sub(g.mul(g.add(g.mul(g.sub(g.mul(d, c(a)), c(5 * a)), d), c(8 * a)), d), c(4 * a))

    def near(d: Tensor) -> Tensor:  # ((a + 2) d - (a + 3)) d² + 1, for d <= 1
        return g.add(g.mul(g.mul(g.sub(g.mul(d, c(a + 2)), c(a + 3)), d), d), c(1.0))

    one_t = g.sub(c(1.0), t)
    return [far(g.add(t, c(1.0))), near(t), near(one_t), far(g.sub(c(2.0), t))]


@emitter("GridSample", since=16)
def _grid_sample(n: Node) -> list[Value]:
    """X [N, C, *S] sampled at grid [N, *O, D] (D = len(S) normalized
    coordinates, the last spatial axis's first) -> [N, C, *O]."""
    x, grid = n.tensor(0), n.tensor(1)
    mode = _MODES.get(n.attr("mode", "bilinear" if n.opset < 20 else "linear"))
    if mode is None:
        raise n.unsupported(f"mode '{n.attr('mode')}'", ", ".join(_MODES))
    pad = n.attr("padding_mode", "zeros")
    if pad not in ("zeros", "border", "reflection"):
        raise n.unsupported(f"padding_mode '{pad}'", "zeros, border, reflection")
    align = bool(n.attr("align_corners", 0))
    if x.ndim < 3 or grid.ndim != x.ndim or grid.shape[-1] != x.ndim - 2 or grid.shape[0] != x.shape[0]:
        raise n.error(f"X {x.shape} and grid {grid.shape}: grid must be [N, *out, {x.ndim - 2}]")
    g, cs = n.g, _Coords(n)
    batch, chans, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    out, d = list(grid.shape[1:-1]), len(sizes)
    p = int(np.prod(out, dtype=np.int64))
    gf = g.reshape(as_type(g, grid, "f32"), [batch, p, d])
    xf = g.reshape(as_type(g, x, "f32"), [batch, chans, int(np.prod(sizes, dtype=np.int64))])
    per_axis = []  # per spatial axis: [(index (f32, integral, in range), weight or None, valid or None)]
    for k, size in enumerate(sizes):
        v = g.reshape(g.slice(gf, [d - 1 - k], [d - k], [2]), [batch, p])
        v = (g.mul(g.add(v, cs.c(1.0)), cs.c((size - 1) / 2.0)) if align
             else g.div(g.sub(g.mul(g.add(v, cs.c(1.0)), cs.c(float(size))), cs.c(1.0)), cs.c(2.0)))
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        if mode == "nearest":
            v = g.round(v)
        if pad == "border":  # only points outside [lo, hi] move (to 0 or size - 1)
            v = g.select(g.lt(v, cs.c(lo)), cs.c(0.0), g.select(g.gt(v, cs.c(hi)), cs.c(size - 1.0), v))
        elif pad == "reflection":
            v = cs.reflect(v, lo, hi)
        if mode == "nearest":
            taps = [(cs.trunc(v), None)]
        else:
            x0 = g.floor(v)
            t = g.sub(v, x0)
            if mode == "linear":
                taps = [(x0, g.sub(cs.c(1.0), t)), (g.add(x0, cs.c(1.0)), t)]
            else:
                taps = [(g.add(x0, cs.c(float(o))), w) for o, w in zip((-1, 0, 1, 2), _cubic(cs, t))]
        fetched = []
        for i, w in taps:
            valid = None
            if pad == "zeros":
                inside = g.ge(i, cs.c(0.0))
                valid = g.select(inside, g.lt(i, cs.c(float(size))), inside)  # 0 <= i < size
            elif pad == "reflection":
                i = cs.trunc(cs.reflect(i, lo, hi))
            fetched.append((cs.clamp(i, 0.0, size - 1.0), w, valid))
        per_axis.append(fetched)
    strides = [int(np.prod(sizes[k + 1:], dtype=np.int64)) for k in range(d)]
    total = None
    for combo in itertools.product(*per_axis):
        flat, weight, valid = None, None, None
        for (i, w, ok), stride in zip(combo, strides):
            term = g.mul(i, cs.c(float(stride))) if stride != 1 else i
            flat = term if flat is None else g.add(flat, term)
            weight = w if weight is None else (weight if w is None else g.mul(weight, w))
            valid = ok if valid is None else (valid if ok is None else g.select(valid, ok, valid))
        if valid is not None:
            weight = g.select(valid, weight if weight is not None else cs.c(1.0), cs.c(0.0))
        idx = g.expand(g.reshape(g.cast(flat, "i64"), [batch, 1, p]), [batch, chans, p])
        val = g.gather_elements(xf, idx, 2)
        if weight is not None:
            val = g.mul(val, g.reshape(weight, [batch, 1, p]))
        total = val if total is None else g.add(total, val)
    y = g.reshape(total, [batch, chans, *out])
    return [as_type(g, y, x.dtype)]


@emitter("AffineGrid")
def _affine_grid(n: Node) -> list[Value]:
    """theta [N, D, D + 1] applied to the normalized base grid of `size`
    ([N, C, *S], known at import): [N, *S, D], coordinates x (the last
    axis) first."""
    theta = n.tensor(0)
    size = n.const(1, "size")
    if size is None:
        raise n.error("size (input #1) is required")
    size = [int(v) for v in np.ravel(size)]
    sizes, d = size[2:], len(size) - 2
    if d not in (2, 3) or theta.shape != (size[0], d, d + 1):
        raise n.error(f"theta {theta.shape} for size {size}: theta must be [N, {d}, {d + 1}] with 2 or 3 spatial axes")
    align = bool(n.attr("align_corners", 0))
    axes = []
    for s in sizes:  # as ONNX's reference spaces them
        if align:
            axes.append(np.arange(-1, 1 + 0.0001, 2.0 / (s - 1)) if s > 1 else np.array([-1.0]))
        else:
            axes.append(np.arange(-1 + 1.0 / s, 1, 2.0 / s))
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*(m.reshape(-1) for m in reversed(mesh)), np.ones(mesh[0].size)], 1)  # [P, D + 1]: x first
    g = n.g

    def affine(t: Tensor) -> Tensor:
        grid = g.matmul(t, n.imp.constant(base.T.astype(np.float32), "f32"))  # [N, D, P]
        return g.reshape(g.transpose(grid, [0, 2, 1]), [size[0], *sizes, d])

    return [in_f32(n, theta, affine)]

"""Indexing kernels: `pad` (each output element is an input element or the
fill value) and the gathers of ONNX, `gather_elements` and `gather_nd`
(each output element is the input element its indices name). A thread per
output element through `injective`'s grid-stride loop; extents and strides
are baked in.

Kernels cannot raise: a gather index still out of range after counting
negative ones from the end is clamped (the interpreter reports it).
"""

from __future__ import annotations

from collections.abc import Sequence

from rlxc.codegen.common import (
    KernelSpec,
    eltype,
    float_of,
    index_expr,
    int_of,
    ints,
    numel,
    shape,
    strides,
)
from rlxc.codegen.cuda_c import literal, load, store
from rlxc.codegen.injective import injective
from rlxc.dialects import rlx


def _coord(i: str, k: int, s: Sequence[int]) -> str:
    """Axis k's coordinate of linear index `i` in a row-major tensor of shape `s`."""
    st = strides(s)
    c = f"({i} / {st[k]}LL)" if st[k] != 1 else i
    return c if k == 0 else f"({c} % {s[k]}LL)"


def _index(var: str, extent: int, src: str) -> str:
    """`long long var` from index element `src`: negative counts from the end, then clamped."""
    return (
        f"long long {var} = (long long){src}; if ({var} < 0) {var} += {extent}LL; "
        f"{var} = {var} < 0 ? 0 : ({var} >= {extent}LL ? {extent - 1}LL : {var});"
    )


def pad_kernel(op: rlx.PadOp, sm_count: int) -> KernelSpec:
    """ONNX Pad: each output coordinate minus `low` is mapped into the axis
    (reflected, clamped or wrapped), or, in "constant" mode, marks the element
    as fill when it falls outside."""
    xs, ys = shape(op.input), shape(op.result)
    low, high = ints(op.low), ints(op.high)
    mode = op.mode.data
    t = eltype(op.input)
    xst = strides(xs)
    lines = ["long long src = 0;"]
    if mode == "constant":
        lines.append("bool inside = true;")
    for k, (d, lo, hi) in enumerate(zip(xs, low, high)):
        if ys[k] == 1 and lo == hi == 0:
            continue  # the coordinate is always 0
        c = _coord("i", k, ys)
        if lo == hi == 0:
            lines.append(f"src += {c} * {xst[k]}LL;")
            continue
        j = f"j{k}"
        lines.append(f"long long {j} = {c} - {lo}LL;")
        if mode == "constant":
            lines.append(f"inside = inside && {j} >= 0 && {j} < {d}LL;")
        elif mode == "reflect":  # pads < d: one reflection reaches the axis
            lines.append(f"{j} = {j} < 0 ? -{j} : ({j} >= {d}LL ? {2 * (d - 1)}LL - {j} : {j});")
        elif mode == "edge":
            lines.append(f"{j} = {j} < 0 ? 0 : ({j} >= {d}LL ? {d - 1}LL : {j});")
        else:  # wrap
            lines.append(f"{j} = (({j} % {d}LL) + {d}LL) % {d}LL;")
        lines.append(f"src += {j} * {xst[k]}LL;")
    if mode == "constant":
        fill = store(literal(float_of(op.value), t), t)
        lines.append(f"y[i] = inside ? x[src] : {fill};")
    else:
        lines.append("y[i] = x[src];")
    return injective(f"pad_{mode}", op.result, [("x", op.input)], lines, sm_count)


def gather_elements_kernel(op: rlx.GatherElementsOp, sm_count: int) -> KernelSpec:
    """numpy.take_along_axis: the output's coordinates, with the one on `axis`
    replaced by the index there."""
    xs, ys = shape(op.input), shape(op.result)
    axis = int_of(op.axis) % len(xs)
    xst = strides(xs)
    terms = [f"{_coord('i', k, ys)} * {xst[k]}LL" for k in range(len(ys)) if k != axis and ys[k] != 1]
    terms.append(f"q * {xst[axis]}LL")
    lines = [_index("q", xs[axis], "ids[i]"), f"y[i] = x[{' + '.join(terms)}];"]
    return injective("gather_elements", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)


def gather_nd_kernel(op: rlx.GatherNDOp, sm_count: int) -> KernelSpec:
    """ONNX GatherND: output element i is slice element `r` of index tuple `j`
    (i = j * slice + r); the tuple's batch is j / tuples-per-batch."""
    xs, ids = shape(op.input), shape(op.indices)
    b = int_of(op.batch_dims)
    m = ids[-1]
    xst = strides(xs)
    inner = numel(xs[b + m :])  # elements per gathered slice
    per_batch = numel(ids[b:-1])  # index tuples per batch
    lines = [
        f"const long long r = i % {inner}LL, j = i / {inner}LL;",
        f"long long src = (j / {per_batch}LL) * {numel(xs[b:])}LL + r;",
    ]
    for t in range(m):
        lines.append(_index(f"q{t}", xs[b + t], f"ids[j * {m}LL + {t}]"))
        lines.append(f"src += q{t} * {xst[b + t]}LL;")
    lines.append("y[i] = x[src];")
    return injective("gather_nd", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)


def rope_kernel(op: rlx.RopeOp, sm_count: int) -> KernelSpec:
    """Rotary position embedding, rotate-half form, an element a thread: y =
    x * cos + rotate_half(x) * sin, where rotate_half(x)[d] is -x[d + D/2]
    for d < D/2 and x[d - D/2] after; cos and sin broadcast to x (their last
    axis is x's: `RopeOp.native_on`). The math in f32, rounded once, as the
    interpreter rounds its wide result once."""
    xs, cs = shape(op.input), shape(op.cos)
    t = eltype(op.input)
    d, h = xs[-1], xs[-1] // 2
    x, xlo, xhi = load("x[i]", t), load(f"x[i - {h}LL]", t), load(f"x[i + {h}LL]", t)
    c, s = load("c[ci]", t), load("s[ci]", t)
    lines = [
        f"const float xr = i % {d}LL < {h}LL ? -{xhi} : {xlo};  // rotate_half(x)",
        f"const long long ci = {index_expr('i', xs, cs)};",
        f"y[i] = {store(f'{x} * {c} + xr * {s}', t)};",
    ]
    return injective("rope", op.result, [("x", op.input), ("c", op.cos), ("s", op.sin)], lines, sm_count)

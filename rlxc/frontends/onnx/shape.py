"""Emitters of shape and indexing ops: Reshape, Transpose, Squeeze, Unsqueeze,
Flatten, Concat, Split, Slice, Gather, GatherElements, GatherND, Expand,
Tile, Trilu, Pad."""

from __future__ import annotations

import numpy as np

from rlxc.dialects import rlx
from rlxc.dialects.types import dtype
from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    Const,
    Node,
    Value,
    _dtype_of,
    as_type,
    emitter,
    import_time_flag,
    positions,
    reversed_within,
)


@emitter("Reshape")
def _reshape(n: Node) -> list[Value]:
    x = n.tensor(0)
    shape = [int(s) for s in n.const(1, "the shape")]
    allow_zero = n.attr("allowzero", 0)
    out = [x.shape[i] if s == 0 and not allow_zero else s for i, s in enumerate(shape)]
    if out.count(-1) > 1:
        raise n.error(f"shape {shape} has more than one -1")
    if -1 in out:
        known = int(np.prod([s for s in out if s != -1]))
        out[out.index(-1)] = int(np.prod(x.shape)) // max(known, 1)
    return [n.g.reshape(x, out)]


@emitter("Flatten")
def _flatten(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    return [n.g.reshape(x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])]


@emitter("Squeeze")
def _squeeze(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = n.ints(1, "axes", "axes")
    axes = [a % x.ndim for a in axes] if axes else [i for i, d in enumerate(x.shape) if d == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise n.error(f"cannot squeeze axis {a} of extent {x.shape[a]}")
    return [n.g.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])]


@emitter("Unsqueeze")
def _unsqueeze(n: Node) -> list[Value]:
    x = n.tensor(0)
    axes = n.ints(1, "axes", "axes") or []
    rank = x.ndim + len(axes)
    axes = sorted(a % rank for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return [n.g.reshape(x, shape)]


@emitter("Transpose")
def _transpose(n: Node) -> list[Value]:
    x = n.tensor(0)
    perm = n.attr("perm")
    return [n.g.transpose(x, list(perm) if perm is not None else list(range(x.ndim))[::-1])]


@emitter("Concat")
def _concat(n: Node) -> list[Value]:
    xs = [n.tensor(i) for i in range(len(n.inputs)) if n.input(i) is not None]
    return [n.g.concat(xs, n.attr("axis"))]


@emitter("Split")
def _split(n: Node) -> list[Value]:
    x = n.tensor(0)
    axis = n.attr("axis", 0) % x.ndim
    sizes = n.ints(1, "split", "split")
    outs = len(n.proto.output)
    if not sizes:
        per = -(-x.shape[axis] // outs)
        sizes = [min(per, x.shape[axis] - i * per) for i in range(outs)]
    result, start = [], 0
    for s in sizes:
        result.append(n.g.slice(x, [start], [start + s], [axis]))
        start += s
    return result


@emitter("Slice")
def _slice_attrs(n: Node) -> list[Value]:
    """Slice-1: starts, ends and axes as attributes."""
    x = n.tensor(0)
    return [n.g.slice(x, list(n.attr("starts")), list(n.attr("ends")), n.attr("axes"))]


@emitter("Slice", since=10)
def _slice(n: Node) -> list[Value]:
    """Slice-10: starts, ends, axes and steps as inputs known at import."""
    x = n.tensor(0)
    starts, ends = n.ints(1, "-", "starts"), n.ints(2, "-", "ends")
    axes, steps = n.ints(3, "-", "axes"), n.ints(4, "-", "steps")
    return [n.g.slice(x, list(starts), list(ends), axes, steps)]


@emitter("Gather")
def _gather(n: Node) -> list[Value]:
    return [n.g.gather(n.tensor(0), n.tensor(1), n.attr("axis", 0))]


@emitter("Expand")
def _expand(n: Node) -> list[Value]:
    x = n.tensor(0)
    shape = [int(s) for s in n.const(1, "the shape")]
    out = np.broadcast_shapes(x.shape, tuple(shape))
    return [x if tuple(out) == x.shape else n.g.expand(x, list(out))]


@emitter("Tile")
def _tile(n: Node) -> list[Value]:
    """numpy.tile as a view, a broadcast and a view: each axis d becomes
    [repeats, d], expanded, then merged."""
    x = n.tensor(0)
    reps = [int(r) for r in n.const(1, "repeats")]
    if len(reps) != x.ndim:
        raise n.error(f"repeats has {len(reps)} entries for a rank-{x.ndim} input")
    if all(r == 1 for r in reps):
        return [x]
    inter = [v for d in x.shape for v in (1, d)]
    big = [v for r, d in zip(reps, x.shape) for v in (r, d)]
    y = n.g.expand(n.g.reshape(x, inter), big)
    return [n.g.reshape(y, [r * d for r, d in zip(reps, x.shape)])]


@emitter("Trilu")
def _trilu(n: Node) -> list[Value]:
    """The lower (upper=0) or upper triangle of the last two axes from
    diagonal k: a select with a mask known at import."""
    x = n.tensor(0)
    k = int(np.ravel(n.const(1, "k"))[0]) if n.input(1) is not None else 0
    rows, cols = x.shape[-2:]
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    keep = (j - i >= k) if n.attr("upper", 1) else (j - i <= k)
    zero = n.imp.scalar(0, x.dtype)
    return [n.g.select(n.imp.constant(keep, "i1"), x, zero)]



@emitter("Pad")
def _pad_attrs(n: Node) -> list[Value]:
    """Pad-2: pads and value as attributes."""
    x = n.tensor(0)
    return _padded(n, x, list(n.attr("pads")), float(n.attr("value", 0.0)), list(range(x.ndim)))


@emitter("Pad", since=11)
def _pad(n: Node) -> list[Value]:
    """Pad-11/18: pads, constant_value and axes as inputs known at import."""
    x = n.tensor(0)
    cv = n.const(2, "constant_value")
    value = float(np.ravel(cv)[0]) if cv is not None and cv.size else 0.0
    axes = n.ints(3, "-", "axes") or list(range(x.ndim))
    return _padded(n, x, [int(p) for p in n.const(1, "pads")], value, axes)


def _padded(n: Node, x: Tensor, pads: list[int], value: float, axes: list[int]) -> list[Value]:
    """`rlx.pad` (constant, reflect, edge, wrap); negative pads crop first."""
    mode = n.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise n.unsupported(f"mode='{mode}'", "constant, reflect, edge, wrap")
    axes = [a % x.ndim for a in axes]
    if len(pads) != 2 * len(axes):
        raise n.error(f"pads has {len(pads)} entries for {len(axes)} axes")
    low, high = [0] * x.ndim, [0] * x.ndim
    for i, a in enumerate(axes):
        low[a], high[a] = pads[i], pads[len(axes) + i]
    if any(p < 0 for p in low + high):  # cropping: a slice, then the rest
        starts = [max(-lo, 0) for lo in low]
        ends = [d - max(-hi, 0) for d, hi in zip(x.shape, high)]
        x = n.g.slice(x, starts, ends)
        low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
    if not any(low + high):
        return [x]
    return [n.g.pad(x, low, high, mode, value)]



@emitter("GatherElements")
def _gather_elements(n: Node) -> list[Value]:
    x = n.tensor(0)
    return [n.g.gather_elements(x, n.tensor(1), n.attr("axis", 0) % x.ndim)]


@emitter("GatherND")
def _gather_nd(n: Node) -> list[Value]:
    return [n.g.gather_nd(n.tensor(0), n.tensor(1), n.attr("batch_dims", 0))]


def _reduction(n: Node) -> str:
    red = n.attr("reduction", "none")
    if red not in rlx.SCATTER_REDUCTIONS:
        raise n.unsupported(f"reduction '{red}'", ", ".join(rlx.SCATTER_REDUCTIONS))
    return red


@emitter("ScatterND")
def _scatter_nd(n: Node) -> list[Value]:
    return [n.g.scatter_nd(n.tensor(0), n.tensor(1), n.tensor(2), _reduction(n))]


@emitter("ScatterElements", "Scatter")
def _scatter_elements(n: Node) -> list[Value]:
    """ScatterElements (and opset 9-10's Scatter) as rlx.scatter_nd: update p
    goes to p with its `axis` coordinate replaced by indices[p], so its index
    tuple is p's coordinates (constants: the shapes are static) with
    indices[p] on `axis`."""
    x, idx, upd = n.tensor(0), n.tensor(1), n.tensor(2)
    if x.ndim == 0 or idx.ndim != x.ndim or tuple(upd.shape) != tuple(idx.shape):
        raise n.error(f"indices {list(idx.shape)} and updates {list(upd.shape)} must have one shape, of the "
                      f"data's rank {x.ndim} (at least 1)")
    axis = n.attr("axis", 0) % x.ndim
    g, shape = n.g, list(idx.shape)
    coords = np.indices(shape, dtype=np.int64)
    parts = [g.reshape(as_type(g, idx, "i64"), [*shape, 1]) if a == axis
             else g.constant(coords[a][..., None], "i64") for a in range(x.ndim)]
    tuples = parts[0] if len(parts) == 1 else g.concat(parts, axis=-1)
    return [g.scatter_nd(x, tuples, upd, _reduction(n))]


@emitter("DepthToSpace")
def _depth_to_space(n: Node) -> list[Value]:
    """[N, C, H, W] -> [N, C / b², H b, W b]: a reshape to six axes, a
    transpose and a reshape back; DCR (the default) takes the depth as
    (b, b, C / b²), CRD as (C / b², b, b)."""
    x = n.tensor(0)
    b, mode = int(n.attr("blocksize")), n.attr("mode", "DCR")
    if x.ndim != 4 or x.shape[1] % (b * b):
        raise n.error(f"input of shape {list(x.shape)}: DepthToSpace needs [N, C, H, W] with C a multiple of {b * b}")
    if mode not in ("DCR", "CRD"):
        raise n.unsupported(f"mode '{mode}'", "DCR, CRD")
    N, C, H, W = x.shape
    c = C // (b * b)
    if mode == "DCR":
        t = n.g.transpose(n.g.reshape(x, [N, b, b, c, H, W]), [0, 3, 4, 1, 5, 2])
    else:
        t = n.g.transpose(n.g.reshape(x, [N, c, b, b, H, W]), [0, 1, 4, 2, 5, 3])
    return [n.g.reshape(t, [N, c, H * b, W * b])]


@emitter("SpaceToDepth")
def _space_to_depth(n: Node) -> list[Value]:
    """[N, C, H, W] -> [N, C b², H / b, W / b], the depth as (b, b, C) (DCR,
    the default) or (C, b, b) (CRD): DepthToSpace's inverse."""
    x = n.tensor(0)
    b, mode = int(n.attr("blocksize")), n.attr("mode", "DCR")
    if x.ndim != 4 or x.shape[2] % b or x.shape[3] % b:
        raise n.error(f"input of shape {list(x.shape)}: SpaceToDepth needs [N, C, H, W] with H and W multiples of {b}")
    if mode not in ("DCR", "CRD"):
        raise n.unsupported(f"mode '{mode}'", "DCR, CRD")
    N, C, H, W = x.shape
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    t = n.g.transpose(n.g.reshape(x, [N, C, H // b, b, W // b, b]), perm)
    return [n.g.reshape(t, [N, C * b * b, H // b, W // b])]


@emitter("EyeLike")
def _eye_like(n: Node) -> list[Value]:
    """A constant: ones on diagonal k of a matrix of the input's shape."""
    v = n.input(0)
    assert v is not None
    if len(v.shape) != 2:
        raise n.error(f"input of shape {list(v.shape)}: EyeLike takes a matrix")
    d = _dtype_of(n.attr("dtype"), f"{n.where}: the output type") if "dtype" in n.attrs else v.dtype
    eye = np.eye(v.shape[0], v.shape[1], k=int(n.attr("k", 0)))
    return [Const(eye.astype(dtype(d).carrier), d)]


@emitter("OneHot")
def _one_hot(n: Node) -> list[Value]:
    """values[1] where an index (negative: from the end; float indices cast to
    int64 first, truncated) equals the position on the new axis, values[0]
    elsewhere (indices outside [-depth, depth) match none)."""
    idx = n.tensor(0)
    depth = int(np.ravel(n.const(1, "the depth"))[0])
    values = n.tensor(2)
    axis = n.attr("axis", -1)
    if not -idx.ndim - 1 <= axis <= idx.ndim:
        raise n.error(f"axis {axis} is out of range for indices of rank {idx.ndim} (the output has rank {idx.ndim + 1})")
    axis = axis + idx.ndim + 1 if axis < 0 else axis
    if idx.dtype not in ("i32", "i64"):  # float indices are cast to int64 (truncated), as ONNX says
        idx = n.g.cast(idx, "i64")
    wrapped = n.g.select(n.g.lt(idx, n.imp.scalar(0, idx.dtype)), n.g.add(idx, n.imp.scalar(depth, idx.dtype)), idx)
    shape = list(idx.shape)
    at = n.g.reshape(wrapped, shape[:axis] + [1] + shape[axis:])
    off, on = n.g.slice(values, [0], [1]), n.g.slice(values, [1], [2])
    return [n.g.select(n.g.eq(at, positions(n, depth, axis, idx.ndim + 1, idx.dtype)), on, off)]


@emitter("If")
def _if(n: Node) -> list[Value]:
    """The branch its condition picks, imported in place: the condition must
    be known at import (shape checks, flags), as rlx has no control flow."""
    v = n.input(0)
    if v is None:
        raise n.error("the condition (input #0) is required")
    taken = "then_branch" if import_time_flag(n, v, "the condition (input #0)", "the branch is chosen") else "else_branch"
    branch = n.attr(taken)
    if branch is None:
        raise n.error(f"the node has no {taken}")
    outs = n.imp.inline(branch, f"{n.where}'s {taken}")
    if len(outs) != len(n.proto.output):
        raise n.error(f"its {taken} has {len(outs)} outputs, the node {len(n.proto.output)}")
    return outs


@emitter("CenterCropPad")
def _center_crop_pad(n: Node) -> list[Value]:
    """Each of `axes` (default all) cropped or zero-padded about its centre
    to the length `shape` gives it (the extra element of an odd difference
    at the end)."""
    x = n.tensor(0)
    sizes = n.const(1, "shape")
    assert sizes is not None
    sizes = [int(v) for v in np.ravel(sizes)]
    axes = [a % x.ndim for a in n.attr("axes", list(range(x.ndim)))]
    if len(axes) != len(sizes) or len(set(axes)) != len(axes):
        raise n.error(f"shape gives {len(sizes)} lengths for axes {axes}")
    starts, ends, cut, low, high = [], [], [], [0] * x.ndim, [0] * x.ndim
    for a, want in zip(axes, sizes):
        have = x.shape[a]
        if want < 0:
            raise n.error(f"a negative length ({want}) for axis {a}")
        if want < have:
            first = (have - want) // 2
            starts.append(first)
            ends.append(first + want)
            cut.append(a)
        elif want > have:
            low[a] = (want - have) // 2
            high[a] = want - have - low[a]
    if cut:
        x = n.g.slice(x, starts, ends, axes=cut)
    if any(low) or any(high):
        x = n.g.pad(x, low, high)
    return [x]


@emitter("ReverseSequence")
def _reverse_sequence(n: Node) -> list[Value]:
    """Each batch entry's first sequence_lens[b] steps along time_axis in
    reverse, the rest as they are: one gather of rows by indices built at
    import (sequence_lens must be known there)."""
    x = n.tensor(0)
    lens = n.const(1, "sequence_lens")
    if lens is None:
        raise n.error("sequence_lens (input #1) is required")
    t_ax, b_ax = int(n.attr("time_axis", 0)), int(n.attr("batch_axis", 1))
    if x.ndim < 2 or {t_ax, b_ax} != {0, 1}:
        raise n.error(f"time_axis {t_ax} and batch_axis {b_ax} of a rank-{x.ndim} input: they must be 0 and 1")
    steps, batch = x.shape[t_ax], x.shape[b_ax]
    lens = np.asarray(lens, np.int64).reshape(-1)
    if lens.shape != (batch,) or (lens < 0).any() or (lens > steps).any():
        raise n.error(f"sequence_lens {lens.tolist()} for a batch of {batch} and {steps} steps")
    perm = [t_ax, b_ax, *range(2, x.ndim)]
    xt = n.g.transpose(x, perm) if t_ax else x  # [steps, batch, ...]
    rest = list(xt.shape[2:])
    flat = n.g.reshape(xt, [steps * batch, int(np.prod(rest, dtype=np.int64))])
    rows = (reversed_within(steps, lens) * batch + np.arange(batch)[None, :]).reshape(-1)
    y = n.g.reshape(n.g.gather(flat, n.imp.constant(rows, "i64"), 0), [steps, batch, *rest])
    return [n.g.transpose(y, perm) if t_ax else y]


@emitter("Compress")
def _compress(n: Node) -> list[Value]:
    """The slices along `axis` (of the flattened input without one) where
    the condition, known at import, is true (its first extent entries; a
    shorter condition selects from the first ones): one gather."""
    x = n.tensor(0)
    cond = n.const(1, "condition")
    if cond is None:
        raise n.error("condition (input #1) is required")
    axis = n.attr("axis")
    if axis is None:
        x, axis = n.g.reshape(x, [int(np.prod(x.shape, dtype=np.int64))]), 0
    axis = int(axis) % x.ndim
    picked = np.nonzero(np.ravel(cond).astype(bool)[: x.shape[axis]])[0]
    if picked.size == 0:
        raise n.error("the condition selects nothing: rlx has no empty tensors")
    return [n.g.gather(x, n.imp.constant(picked.astype(np.int64), "i64"), axis)]

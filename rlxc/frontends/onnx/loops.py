"""Emitters of Loop and Scan: unrolled at import, as rlx has no control
flow. A Loop needs its trip count and condition known at import (and its
body's condition output foldable there each iteration: a counter, a flag,
shape arithmetic); a Scan's steps are its scan inputs' static extent. The
body is imported once per iteration in place (`OnnxImporter.inline`), its
iteration number and condition bound as import-time values, so shape
arithmetic on them folds; values known at import stay so (a Loop that only
computes constants, as Range's function body does, folds whole). Scan
slices are gathers of a constant index, so a body's kernels are the same
every step. At most MAX_ITERATIONS iterations unroll."""

from __future__ import annotations

import numpy as np

from rlxc.dialects.types import dtype
from rlxc.frontends.onnx.core import Const, Node, Value, emitter, import_time_flag

#: Iterations a Loop or Scan may unroll into at most (each copies its body into the graph).
MAX_ITERATIONS = 4096


def _flag(v: Value, what: str, n: Node) -> bool:
    return import_time_flag(n, v, what, "the loop is unrolled")


def _stack(n: Node, values: list[Value], axis: int, what: str) -> Value:
    """The per-iteration values stacked along a new axis `axis` (in the
    result's rank), a Const where every one is."""
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) != 1:
        raise n.error(f"{what} has shapes {sorted(shapes)} in different iterations; rlx shapes are static")
    (shape,) = shapes
    axis = axis % (len(shape) + 1)
    # quantized values (a QuantizeLinear's in the body) stack into quantized values
    kinds = {n.imp.quantized_value(v) for v in values}
    if len(kinds) != 1:
        raise n.error(f"{what} is quantized ({', '.join(sorted(k or 'not quantized' for k in kinds))}) "
                      "differently in different iterations")
    (kind,) = kinds
    if all(isinstance(v, Const) for v in values):
        return Const(np.stack([v.array for v in values], axis), values[0].dtype, narrow=kind)
    one = [*shape[:axis], 1, *shape[axis:]]
    out = n.g.concat([n.g.reshape(n.imp.tensor(v), one) for v in values], axis)
    if kind is not None:
        n.imp.carried[out.value] = kind
    return out


def _take(n: Node, x: Value, index: int, axis: int) -> Value:
    """x[..., index, ...] along `axis` (the axis removed): numpy for an
    import-time value, else a gather of a constant index (the same kernel
    whatever the index)."""
    if isinstance(x, Const):
        return Const(np.take(x.array, index, axis), x.dtype)
    return n.g.gather(x, n.imp.constant(np.asarray(index, np.int64), "i64"), axis)


def _const(a, d: str) -> Const:
    return Const(np.asarray(a, dtype=dtype(d).carrier), d)


@emitter("Loop")
def _loop(n: Node) -> list[Value]:
    """Inputs M (trip count), cond, then the loop-carried values; the body's
    inputs (iteration, cond, carried...) and outputs (cond, carried...,
    scan outputs...). The node's outputs: the final carried values, then
    each scan output stacked over the iterations along a new first axis."""
    body = n.attr("body")
    if body is None:
        raise n.error("the node has no body")
    trip = n.input(0)
    cond = n.input(1)
    most = None if trip is None else int(np.ravel(trip.array)[0]) if isinstance(trip, Const) else None
    if trip is not None and most is None:
        raise n.error("the trip count (input #0) must be known at import: rlx has no control flow, so the "
                      "loop is unrolled when the model is imported")
    going = True if cond is None else _flag(cond, "the condition (input #1)", n)
    if most is None and cond is None:
        raise n.error("neither a trip count nor a condition: the loop would not end")
    carried = list(n.inputs[2:])
    if any(v is None for v in carried):
        raise n.error("a loop-carried input is missing")
    names = [i.name for i in body.input]
    outs = [o.name for o in body.output]
    if len(names) != 2 + len(carried) or len(outs) < 1 + len(carried):
        raise n.error(f"its body has {len(names)} inputs and {len(outs)} outputs for {len(carried)} loop-carried values")
    scans: list[list[Value]] = [[] for _ in range(len(outs) - 1 - len(carried))]
    i = 0
    while going and (most is None or i < most):
        if i == MAX_ITERATIONS:
            raise n.error(f"more than {MAX_ITERATIONS} iterations to unroll")
        bound = {names[0]: _const(i, "i64"), names[1]: _const(True, "i1"), **dict(zip(names[2:], carried))}
        got = n.imp.inline(body, f"{n.where}'s body (iteration {i})", bound)
        going = _flag(got[0], f"the body's condition output (iteration {i})", n)
        carried = got[1:1 + len(carried)]
        for k, v in enumerate(got[1 + len(carried):]):
            scans[k].append(v)
        i += 1
    if scans and i == 0:
        raise n.error("no iteration runs, so its scan outputs (empty) have no shape rlx can give them")
    return [*carried, *(_stack(n, vs, 0, f"scan output {k}") for k, vs in enumerate(scans))]


def _scan_steps(n: Node, body, states: list[Value], xs: list[Value], in_axes: list[int], in_rev: list[int],
                out_axes: list[int], out_rev: list[int]) -> list[Value]:
    """One Scan (opset 9 form) over scan inputs `xs` along `in_axes`: the
    final states, then the scan outputs stacked along `out_axes`."""
    extents = {x.shape[a] for x, a in zip(xs, in_axes)}
    if len(extents) != 1:
        raise n.error(f"scan inputs of {sorted(extents)} steps along their scan axes; they must agree")
    (steps,) = extents
    if steps > MAX_ITERATIONS:
        raise n.error(f"{steps} steps: more than {MAX_ITERATIONS} to unroll")
    names = [i.name for i in body.input]
    if len(names) != len(states) + len(xs):
        raise n.error(f"its body has {len(names)} inputs for {len(states)} states and {len(xs)} scan inputs")
    scans: list[list[Value]] = [[] for _ in range(len(body.output) - len(states))]
    for t in range(steps):
        slices = [_take(n, x, steps - 1 - t if r else t, a) for x, a, r in zip(xs, in_axes, in_rev)]
        got = n.imp.inline(body, f"{n.where}'s body (step {t})", dict(zip(names, [*states, *slices])))
        states = got[:len(states)]
        for k, v in enumerate(got[len(states):]):
            scans[k].append(v)
    if scans and steps == 0:
        raise n.error("no steps, so its scan outputs (empty) have no shape rlx can give them")
    stacked = [_stack(n, vs[::-1] if out_rev[k] else vs, out_axes[k], f"scan output {k}") for k, vs in enumerate(scans)]
    return [*states, *stacked]


@emitter("Scan", since=9)
def _scan(n: Node) -> list[Value]:
    """Inputs: the initial states, then `num_scan_inputs` scan inputs, each
    sliced along its scan_input_axes entry (reversed where its
    scan_input_directions entry is 1); outputs: the final states, then the
    body's scan outputs stacked along scan_output_axes (reversed where
    scan_output_directions says)."""
    body, m = n.attr("body"), int(n.attr("num_scan_inputs", 0))
    if body is None or m < 1 or m > len(n.inputs):
        raise n.error("needs a body and num_scan_inputs between 1 and its inputs")
    states, xs = list(n.inputs[:len(n.inputs) - m]), list(n.inputs[len(n.inputs) - m:])
    if any(v is None for v in [*states, *xs]):
        raise n.error("an input is missing")
    k = len(body.output) - len(states)
    in_axes = [int(a) % len(x.shape) for a, x in zip(n.attr("scan_input_axes", [0] * m), xs)]
    in_rev = list(n.attr("scan_input_directions", [0] * m))
    out_axes = list(n.attr("scan_output_axes", [0] * k))
    out_rev = list(n.attr("scan_output_directions", [0] * k))
    return _scan_steps(n, body, states, xs, in_axes, in_rev, out_axes, out_rev)


@emitter("Scan", since=8)
def _scan8(n: Node) -> list[Value]:
    """Opset 8's form: a first input sequence_lens (absent, or every batch
    entry's full length), a batch axis 0 on every input and output, the
    scan axis 1, `directions` for the scan inputs; each batch entry scanned
    on its own."""
    body, m = n.attr("body"), int(n.attr("num_scan_inputs", 0))
    rest = list(n.inputs[1:])
    if body is None or m < 1 or m > len(rest):
        raise n.error("needs a body and num_scan_inputs between 1 and its inputs")
    states, xs = rest[:len(rest) - m], rest[len(rest) - m:]
    batch = {v.shape[0] for v in [*states, *xs]}
    if len(batch) != 1:
        raise n.error(f"inputs of batch sizes {sorted(batch)}")
    (b,) = batch
    steps = xs[0].shape[1]
    lens = n.input(0)
    if lens is not None and (not isinstance(lens, Const) or (np.ravel(lens.array) != steps).any()):
        raise n.unsupported("sequence_lens shorter than the scan inputs (or not known at import)",
                            "absent, or every entry the full length")
    k = len(body.output) - len(states)
    rev = list(n.attr("directions", [0] * m))
    per = [_scan_steps(n, body, [_take(n, s, j, 0) for s in states], [_take(n, x, j, 0) for x in xs], [0] * m, rev,
                       [0] * k, [0] * k) for j in range(b)]
    return [_stack(n, [p[i] for p in per], 0, f"output {i}") for i in range(len(per[0]))]

"""An independent checker of `rlx-plan-memory`'s contract, written from the
contract alone: it recomputes liveness from program order and reads the
offsets and sizes the pass attached."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp

from rlxc.dialects import rlx

ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "i1": 1}


def _ints(attr) -> list[int]:
    if isinstance(attr, IntegerAttr):
        return [attr.value.data]
    assert isinstance(attr, DenseArrayBase)
    return list(attr.get_values())


def _nbytes(t) -> int:
    from rlxc.dialects.types import dtype_name

    return t.element_count() * ELEMENT_BYTES[dtype_name(t.get_element_type())]


def check_plan(module: ModuleOp) -> dict[str, int]:
    """Asserts the plan is sound; returns arena, peak and the recomputed bound."""
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    block = f.body.block
    ops = list(block.ops)
    info: dict = {}  # value -> [start, end, offset, bytes, root]
    for a, off in zip(block.args, _ints(f.attributes["rlx.arg_offsets"])):
        info[a] = [-1, -1, off, _nbytes(a.type), a]
    for i, op in enumerate(ops):
        for v in op.operands:
            if v in info:
                root = info[v][4]
                info[root][1] = max(info[root][1], i)
                info[v][1] = max(info[v][1], i)
        if isinstance(op, rlx.ParamOp | rlx.ConstantOp | func.ReturnOp):
            continue
        offs, sizes = _ints(op.attributes["rlx.offset"]), _ints(op.attributes["rlx.bytes"])
        assert len(offs) == len(sizes) == len(op.results), op.name
        for r, off, n in zip(op.results, offs, sizes):
            assert n == _nbytes(r.type), (op.name, n)
            assert off % 256 == 0, (op.name, off)
            is_view = isinstance(op, rlx.ReshapeOp) or (
                isinstance(op, rlx.CastOp) and op.input.type == op.result.type
            )
            root = info[op.operands[0]][4] if is_view and op.operands[0] in info else r
            if root is not r:
                assert off == info[root][2], f"view {op.name} does not alias its input"
            info[r] = [i, i, off, n, root]
    arena = f.attributes["rlx.arena_bytes"].value.data
    # Roots (storage) only: views extend their root's interval.
    roots = {v: x for v, x in info.items() if x[4] is v}
    for v, x in info.items():
        if x[4] is not v:
            roots[x[4]][1] = max(roots[x[4]][1], x[1])
    items = list(roots.values())
    for x in items:
        assert 0 <= x[2] and x[2] + x[3] <= arena, "tensor outside the arena"
    items.sort(key=lambda x: x[0])
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if b[0] > a[1]:
                break
            # simultaneously live: their byte ranges must not overlap
            assert a[2] + a[3] <= b[2] or b[2] + b[3] <= a[2], (a, b)
    events = {}
    for s, e, _, n, _ in items:
        n = (n + 255) // 256 * 256
        events[s] = events.get(s, 0) + n
        events[e + 1] = events.get(e + 1, 0) - n
    live = bound = 0
    for p in sorted(events):
        live += events[p]
        bound = max(bound, live)
    peak = f.attributes["rlx.peak_live_bytes"].value.data
    assert peak == bound, (peak, bound)
    return {"arena": arena, "peak": peak}

"""`rlx-verify-plan`: every plan rlx-plan makes passes it, and a plan with two
live tensors on the same bytes (or a slot out of place) is caught, naming both."""

from __future__ import annotations

import time
from io import StringIO

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

import rlxc
from rlxc.dialects import plan as P
from rlxc.passes.plan_memory import liveness
from rlxc.passes.verify_plan import VerifyPlanPass
from strategies import graphs

CTX = rlxc.make_context()


def verify(module) -> None:
    VerifyPlanPass().apply(CTX, module)


def main_of(module) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


PLANNERS = ["rlx-plan", "rlx-plan{strategy=naive}", "rlx-plan-memory"]


@given(graphs(), st.sampled_from(PLANNERS))
def test_every_plan_of_a_random_graph_verifies(case, pipeline):
    verify(rlxc.run_pipeline(case.module, pipeline))


INPLACE_READ_LATER = """
func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = rlx.exp %x : tensor<64xf32>
  %b = rlx.neg %a : tensor<64xf32>
  %c = rlx.tanh %a : tensor<64xf32>
  func.return %b, %c : tensor<64xf32>, tensor<64xf32>
}
"""


def test_in_place_planning_of_an_input_read_later_verifies():
    """rlx-verify-plan found rlx-plan-memory{inplace=true} writing %b over %a
    though %c reads %a after it (the planner compared the input's last use
    *so far*); now it compares the input's last use."""
    planned = rlxc.run_pipeline(rlxc.parse_module(INPLACE_READ_LATER), "rlx-plan-memory{inplace=true}")
    verify(planned)
    offsets = [P.offsets(op) for op in main_of(planned).body.block.ops if P.offsets(op) is not None]
    assert offsets[0] != offsets[1]  # %b does not take %a's slot


def _move_onto_live_neighbour(module, pick: int):
    """Moves one op-defined tensor (and its views) onto the offset of another
    that is alive at the same time at more than the op where one dies and the
    other is born; returns the two buffers, or None."""
    f = main_of(module)
    fp = P.function_plan(f)
    assert fp is not None
    buffers = [b for b in liveness(f.body.block, inplace=False) if b.size > 0]
    offset_of = dict(zip(f.body.block.args, fp.arg_offsets))
    for op in f.body.block.ops:
        if (offs := P.offsets(op)) is not None:
            offset_of.update(zip(op.results, offs))
    pairs = [
        (a, b)
        for a in buffers
        for b in buffers
        if a is not b and a.start >= 0 and a.start <= b.end and b.start <= a.end
        and b.end != a.start and a.end != b.start  # else one may update the other in place
        and offset_of[b.values[0]] + a.size <= fp.arena_bytes
        and offset_of[a.values[0]] != offset_of[b.values[0]]
    ]  # fmt: skip
    if not pairs:
        return None
    moved, onto = pairs[pick % len(pairs)]
    target = offset_of[onto.values[0]]
    for v in moved.values:
        op = v.owner
        offs, sizes = P.offsets(op), P.sizes(op)
        offs[list(op.results).index(v)] = target
        P.set_slots(op, offs, sizes)
    return moved, onto


@given(graphs(min_ops=2), st.integers(0, 1000))
def test_a_tensor_moved_onto_a_live_neighbour_is_caught(case, pick):
    planned = rlxc.run_pipeline(case.module, "rlx-plan")
    found = _move_onto_live_neighbour(planned, pick)
    if found is None:
        return
    with pytest.raises(PassFailedException) as e:
        verify(planned)
    msg = str(e.value)
    assert "overlap in the arena" in msg, msg
    # The moved tensor is named as the printer names it (it may be caught
    # against its new neighbour or another tensor its bytes now reach).
    printer = Printer(stream=StringIO())
    printer.print_op(planned)
    moved = found[0].values[0]
    assert f"%{printer._ssa_values[moved]} ({moved.owner.name}, op #{found[0].start})" in msg, msg


MODULE = """
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4096xf32> {
  %w = rlx.param "w" : tensor<1024xf32>
  %a = rlx.exp %x : tensor<4x1024xf32>
  %b = rlx.add %x, %w : tensor<4x1024xf32>, tensor<1024xf32> -> tensor<4x1024xf32>
  %c = rlx.mul %a, %b : tensor<4x1024xf32>, tensor<4x1024xf32> -> tensor<4x1024xf32>
  %d = rlx.tanh %c : tensor<4x1024xf32>
  %r = rlx.reshape %d : tensor<4x1024xf32> -> tensor<4096xf32>
  func.return %r : tensor<4096xf32>
}
"""


def planned_example(pipeline: str = "rlx-plan-memory"):
    module = rlxc.run_pipeline(rlxc.parse_module(MODULE), pipeline)
    ops = {op.results[0].name_hint: op for op in main_of(module).body.block.ops if op.results}
    return module, ops


def test_the_message_names_both_values_their_intervals_and_ranges():
    module, ops = planned_example()
    verify(module)
    # %a (op #1, live to %c at op #3) onto %b (op #2, live to op #3)
    P.set_slots(ops["a"], P.offsets(ops["b"]), P.sizes(ops["a"]))
    with pytest.raises(PassFailedException) as e:
        verify(module)
    off = P.offsets(ops["b"])[0]
    msg = str(e.value)
    assert f"at bytes [{off}, {off + 16384})" in msg
    assert f"%a (rlx.exp, op #1): live [op #1, op #3], bytes [{off}, {off + 16384})" in msg
    assert f"%b (rlx.add, op #2): live [op #2, op #3], bytes [{off}, {off + 16384})" in msg


def test_an_argument_and_a_view_are_named():
    module, ops = planned_example()
    f = main_of(module)
    # %c at op #3 onto %x (an argument, live from the entry to op #2)? Not
    # live together; %b (op #2) onto %x (read at op #2) is.
    P.set_slots(ops["b"], P.function_plan(f).arg_offsets, P.sizes(ops["b"]))
    with pytest.raises(PassFailedException) as e:
        verify(module)
    assert "%x (argument #0): live [the entry, op #2]" in str(e.value)
    module, ops = planned_example()
    P.set_slots(ops["r"], [P.offsets(ops["d"])[0] + 256], P.sizes(ops["r"]))
    with pytest.raises(PassFailedException, match=r"op #5 \(%r = rlx.reshape\) is a view of %d"):
        verify(module)


def test_misaligned_out_of_arena_wrong_size_and_unplanned_slots():
    module, ops = planned_example()
    P.set_slots(ops["c"], [P.offsets(ops["c"])[0] + 4], P.sizes(ops["c"]))
    with pytest.raises(PassFailedException, match="not a multiple of 256"):
        verify(module)
    module, ops = planned_example()
    P.set_slots(ops["c"], [P.function_plan(main_of(module)).arena_bytes], P.sizes(ops["c"]))
    with pytest.raises(PassFailedException, match="ends past the arena"):
        verify(module)
    module, ops = planned_example()
    P.set_slots(ops["c"], P.offsets(ops["c"]), [4])
    with pytest.raises(PassFailedException, match="takes 16384 bytes"):
        verify(module)
    module, ops = planned_example()
    del ops["c"].attributes[P.OFFSET]
    with pytest.raises(PassFailedException, match="the plan misses it"):
        verify(module)
    with pytest.raises(PassFailedException, match="no func.func carries a memory plan"):
        verify(rlxc.parse_module(MODULE))


def test_a_wrong_lower_bound_is_caught():
    module, _ = planned_example()
    f = main_of(module)
    fp = P.function_plan(f)
    P.set_function_plan(f, P.FunctionPlan(fp.arg_offsets, fp.arena_bytes, fp.peak_live_bytes - 256))
    with pytest.raises(PassFailedException, match="rlx.peak_live_bytes = 48896"):
        verify(module)


def test_in_place_only_over_an_input_that_dies_there():
    module, ops = planned_example("rlx-plan-memory{inplace=true}")
    assert P.offsets(ops["c"]) == P.offsets(ops["a"])  # the planner did update in place
    verify(module)
    # %b is an input of %c too and dies there, but %a has the slot: %c on
    # %b's bytes while %a lives elsewhere is another legal in-place plan;
    # %d (tanh of %c) on %b's bytes is not: %b is dead by then, fine, but
    # %a on %b's bytes is an overlap of two tensors live at op #2..#3.
    P.set_slots(ops["a"], P.offsets(ops["b"]), P.sizes(ops["a"]))
    with pytest.raises(PassFailedException, match="overlap in the arena"):
        verify(module)


def test_a_large_graph_verifies_quickly():
    g = rlxc.GraphBuilder()
    x = g.input("x", [16, 64], "f32")
    vals = [x]
    rng = np.random.default_rng(0)
    for i in range(3000):
        a = vals[-1]
        b = vals[int(rng.integers(max(0, len(vals) - 20), len(vals)))]
        vals.append(g.tanh(g.add(a, b)) if i % 3 else g.mul(a, b))
    module = rlxc.run_pipeline(g.build([vals[-1]]), "rlx-plan-memory")
    start = time.perf_counter()
    verify(module)
    assert time.perf_counter() - start < 2.0

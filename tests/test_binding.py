"""rlxc.runtime.binding (no GPU): which outputs' kernels can write them in
place in the output pool (executable.BIND_OUTPUTS) and which inputs kernels
can read where the caller has them (BIND_INPUTS), from the lowered, planned
module alone; the cases that must not be bound are refused with their
reason; on random graphs (f32/f16/bf16), every argument the runtime moves
holds a value that lives where it is moved at that launch, and every
argument of such a value is moved."""

from __future__ import annotations

import rlxc
from hypothesis import given
from strategies import graphs
from xdsl.dialects.builtin import ArrayAttr

from rlxc.dialects import plan as P
from rlxc.dialects import rlx_cuda
from rlxc.dialects.types import tensor_bytes
from rlxc.runtime import binding as B


def _lowered(build):
    g = rlxc.GraphBuilder()
    low = rlxc.run_pipeline(g.build(build(g)), "rlx-cuda{arch=sm_90 gemm=cublaslt}")
    (f,) = [op for op in low.ops if op.name == "func.func"]
    return f


def _bind(f):
    return B.bind_outputs(f, P.function_plan(f).arg_offsets)


def _softmaxes(g, n):
    x = g.input("x", [64, 256], "f32")
    vals = [x]
    for _ in range(n):
        vals.append(g.softmax(vals[-1]))
    return vals


def test_a_kernels_result_is_bound_from_its_launch():
    f = _lowered(lambda g: [_softmaxes(g, 1)[1]])
    (launch,) = B.launch_ops(f)
    bound, why = _bind(f)
    assert why == {} and bound == [B.Binding(0, P.offsets(launch)[0], 64 * 256 * 4, 0)]
    b = bound[0]
    assert b.covers(0, b.offset) and b.covers(0, b.offset + b.nbytes - 1)
    assert not b.covers(0, b.offset + b.nbytes) and not b.covers(0, b.offset - 1)


def test_what_is_not_a_kernels_result_is_copied():
    """A gemm's result is bound from the gemm on; a view of a bound value
    returned beside it is copied from where it was bound; a function
    argument and a param are copied."""

    def build(g):
        x, a, b, c = _softmaxes(g, 3)
        d = g.matmul(c, g.param("w", [256, 128], "f32"))
        return [d, a, g.reshape(d, [64 * 128]), x, g.param("p", [3], "f32"), a]

    f = _lowered(build)
    ops = B.launch_ops(f)
    bound, why = _bind(f)
    assert [(b.output, b.first) for b in bound] == [(0, 3), (1, 0)]
    assert isinstance(ops[3], rlx_cuda.GemmOp)
    assert why == {2: "its value is output 0's, bound there", 3: "a function argument",
                   4: "a param or constant", 5: "its value is output 1's, bound there"}
    assert bound[0].offset == P.offsets(ops[3])[0] and bound[1].offset == P.offsets(ops[0])[0]


def test_in_place_and_shared_slots_are_refused():
    """Slots the plan shares (made so here by moving a slot by hand) keep
    the arena: a producer reading its own slot, a later launch writing into
    an output's slot, a later argument inside it that is not its value."""
    f = _lowered(lambda g: [_softmaxes(g, 2)[2]])
    first, second = B.launch_ops(f)
    P.set_slots(second, P.offsets(first), P.sizes(first))  # the second softmax writes over its operand
    second.properties["args"] = ArrayAttr([rlx_cuda.arena(P.offsets(first)[0])] * 2)
    assert _bind(f) == ([], {0: "its producer (launch 1) reads an operand in its slot (in place)"})

    f = _lowered(lambda g: (lambda v: [v[1], v[3]])(_softmaxes(g, 3)))
    ops = B.launch_ops(f)
    P.set_slots(ops[2], [P.offsets(ops[0])[0] + 256], P.sizes(ops[2]))  # the third softmax over the first's
    bound, why = _bind(f)
    assert [b.output for b in bound] == [1] and why == {0: "launch 2 writes into its slot"}

    f = _lowered(lambda g: (lambda v: [v[1], v[2]])(_softmaxes(g, 2)))
    ops = B.launch_ops(f)
    args = list(ops[1].args.data)
    args[0] = rlx_cuda.arena(args[0].value.value.data + 16)  # a pointer into the middle of output 0's slot
    ops[1].properties["args"] = ArrayAttr(args)
    bound, why = _bind(f)
    assert [b.output for b in bound] == [1]
    assert why == {0: "launch 1 passes an argument inside its slot that is not its value"}


def test_location_follows_views_params_and_arguments():
    def build(g):
        x = g.input("x", [4, 6], "f32")
        return [g.reshape(g.softmax(x), [24]), g.param("p", [2], "f32"), x]

    f = _lowered(build)
    ret = f.body.block.last_op
    plan = P.function_plan(f)
    (launch,) = B.launch_ops(f)
    locs = [B.location(f, plan.arg_offsets, v) for v in ret.arguments]
    assert [(a.kind.data, a.value.value.data) for a in locs] == [
        ("arena", P.offsets(launch)[0]), ("param", 0), ("arena", plan.arg_offsets[0])]


def _empty_first(g):
    x, e = g.input("x", [4, 8], "f32"), g.input("e", [0, 8], "f32")
    z = g.softmax(e)  # planned at the start of the slot that softmax(softmax(x)) gets later
    return [z, g.softmax(g.softmax(x)), z]


def test_empty_outputs_are_not_bound():
    """A slot of no bytes may start where a live one does: it is not bound
    (and does not stand in for the live one); a later launch passing an
    empty value's slot inside a bound one's is refused (it cannot be told
    from the output's own)."""
    f = _lowered(_empty_first)
    ops = B.launch_ops(f)
    assert P.offsets(ops[0]) == P.offsets(ops[2])  # the empty slot and the live one start together
    bound, why = _bind(f)
    assert [(b.output, b.nbytes, b.first) for b in bound] == [(1, 128, 2)]
    assert why == {0: "empty", 2: "its value is output 0's"}

    def later(g):
        x, e = g.input("x", [4, 8], "f32"), g.input("e", [0, 8], "f32")
        return [g.softmax(g.softmax(x)), g.softmax(e)]

    f = _lowered(later)
    ops = B.launch_ops(f)
    assert P.offsets(ops[1]) == P.offsets(ops[2])
    assert _bind(f) == ([], {0: "launch 2 passes an argument inside its slot that is not its value", 1: "empty"})


def _fake_executable(build):
    """A CudaExecutable's loader state without a GPU: made-up arena, param
    and pool addresses, the output pool faked, then `_bind_outputs`."""
    from types import SimpleNamespace

    from rlxc.runtime import executable as E
    from rlxc.signature import signature

    g = rlxc.GraphBuilder()
    low = rlxc.run_pipeline(g.build(build(g)), "rlx-cuda{arch=sm_90 gemm=cublaslt}")
    exe = object.__new__(E.CudaExecutable)
    exe.sig = signature(low)
    exe.func = exe.sig.func
    exe.arg_offsets = P.function_plan(exe.func).arg_offsets
    exe.arena, exe.params = 1 << 32, 1 << 40
    ret = exe.func.body.block.last_op
    exe.output_locations = [exe._location_of(v) for v in ret.arguments]
    exe._outputs = [(t, exe._ptr(loc), tensor_bytes(t)) for loc, t in zip(exe.output_locations, exe.sig.outputs)]
    buf = SimpleNamespace(ptr=1 << 36, nbytes=len(exe._outputs) << 20)
    pool = [SimpleNamespace(ptr=(1 << 36) + (k << 20), _owner=buf) for k in range(len(exe._outputs))]

    def make_pool():
        exe._pool = pool
        return pool

    exe._output_pool = make_pool
    exe.bindings, exe.unbound = [], {}
    exe._pool_range = (0, 0)
    before = list(exe._outputs)
    exe._bind_outputs()
    return exe, before, pool


def test_the_loader_moves_bound_outputs_and_their_readers_to_the_pool():
    """`_bind_outputs` and `_ptr`: a bound output and the outputs returning
    its value are read from its pool slot; each launch's arguments in its
    slot from its producer on point there (before it, at the arena); the
    other outputs stay where they were."""

    def build(g):
        x, a, b, c = _softmaxes(g, 3)
        d = g.matmul(c, g.param("w", [256, 128], "f32"))
        return [d, a, g.reshape(d, [64 * 128]), x, g.param("p", [3], "f32"), a, g.softmax(a)]

    exe, before, pool = _fake_executable(build)
    assert [b.output for b in exe.bindings] == [0, 1, 6]
    srcs = [src for _, src, _ in exe._outputs]
    assert srcs[0] == srcs[2] == pool[0].ptr and srcs[1] == srcs[5] == pool[1].ptr and srcs[6] == pool[6].ptr
    assert srcs[3:5] == [before[3][1], before[4][1]]  # the argument and the param
    ops = B.launch_ops(exe.func)
    moved = 0
    for i, op in enumerate(ops):
        for a in B.op_args(op):
            got, arena = exe._ptr(a, i), exe._ptr(a)
            owner = [b for b in exe.bindings if b.covers(i, a.value.value.data)] if a.kind.data == "arena" else []
            if owner:
                assert got == pool[owner[0].output].ptr + a.value.value.data - owner[0].offset
                moved += 1
            else:
                assert got == arena
    # a's producer writes it, the second softmax and the last read it; the gemm writes d; the last softmax writes its own
    assert moved == 5


def test_an_empty_output_at_a_live_slot_moves_nothing():
    exe, before, pool = _fake_executable(_empty_first)
    assert [b.output for b in exe.bindings] == [1]
    assert [src for _, src, _ in exe._outputs] == [before[0][1], pool[1].ptr, before[2][1]]


# ------------------------------------------------------------------ inputs read in place (BIND_INPUTS)


def _bind_in(f):
    return B.bind_inputs(f, P.function_plan(f).arg_offsets)


def test_an_input_read_by_kernels_is_bound_up_to_its_last_reader():
    """Every launch passing the input's slot up to its last reader is
    named with the argument positions; the slot's reuse after that is not."""

    def build(g):
        x = g.input("x", [64, 256], "f32")
        a = g.softmax(x)
        return [g.softmax(g.add(a, x)), a]

    f = _lowered(build)
    ops = B.launch_ops(f)
    start = P.function_plan(f).arg_offsets[0]
    bound, why = _bind_in(f)
    assert why == {} and len(bound) == 1
    b = bound[0]
    assert (b.input, b.offset, b.nbytes) == (0, start, 64 * 256 * 4)
    readers = [i for i, op in enumerate(ops) if any(v.name_hint == "x" or v is f.body.block.args[0] for v in op.operands)]
    assert [i for i, _ in b.args] == readers and len(readers) == 2
    for i, at in b.args:
        args = B.op_args(ops[i])
        assert at and all(args[j].value.value.data == start for j in at)
        assert [j for j, a in enumerate(args) if a.kind.data == "arena" and a.value.value.data == start] == list(at)


def test_inputs_not_read_in_place():
    """A gemm's operand, a returned input, an input written in place and one
    whose slot holds another value's argument before its last reader keep
    their copy, each with its reason; an empty input is neither."""

    def build(g):
        x, y = g.input("x", [64, 256], "f32"), g.input("y", [64, 256], "f32")
        e = g.input("e", [0, 4], "f32")
        return [g.matmul(g.softmax(x), g.param("w", [256, 8], "f32")), g.matmul(y, g.param("v", [256, 8], "f32")),
                x, g.softmax(e)]

    f = _lowered(build)
    bound, why = _bind_in(f)
    ops = B.launch_ops(f)
    gemm = [i for i, op in enumerate(ops) if isinstance(op, rlx_cuda.GemmOp) and f.body.block.args[1] in op.operands]
    assert bound == [] and why == {0: "it is returned (the output is copied from its slot)",
                                   1: f"launch {gemm[0]} (a gemm) reads it"}

    f = _lowered(lambda g: [_softmaxes(g, 2)[2]])
    first, second = B.launch_ops(f)
    start = P.function_plan(f).arg_offsets[0]
    P.set_slots(first, [start], P.sizes(first))  # the first softmax writes over its input
    assert _bind_in(f) == ([], {0: "launch 0 writes into its slot (in place)"})

    f = _lowered(lambda g: (lambda x: [g.softmax(g.add(g.softmax(g.softmax(x)), x))])(g.input("x", [64, 256], "f32")))
    ops = B.launch_ops(f)
    start = P.function_plan(f).arg_offsets[0]
    k = next(i for i, op in enumerate(ops) if f.body.block.args[0] not in op.operands)  # the softmax of a softmax
    args = list(ops[k].args.data)
    args[0] = rlx_cuda.arena(start + 256)  # another value's pointer inside the input's slot, before its last reader
    ops[k].properties["args"] = ArrayAttr(args)
    assert k < max(i for i, op in enumerate(ops) if f.body.block.args[0] in op.operands)
    assert _bind_in(f) == ([], {0: f"launch {k} passes an argument inside its slot that is not its start"})


def test_a_launch_reading_two_inputs_names_both():
    def build(g):
        x, y = g.input("x", [33, 77], "bf16"), g.input("y", [33, 77], "bf16")
        return [g.mul(g.add(x, y), y)]

    f = _lowered(build)
    bound, why = _bind_in(f)
    assert why == {} and [b.input for b in bound] == [0, 1]
    assert {i for b in bound for i, _ in b.args} == {0}


def test_a_slot_reused_after_the_last_reader_is_not_the_inputs():
    f = _lowered(lambda g: [_softmaxes(g, 3)[3]])
    ops = B.launch_ops(f)
    start = P.function_plan(f).arg_offsets[0]
    P.set_slots(ops[2], [start], P.sizes(ops[2]))  # the third softmax's result where x was
    args = list(ops[2].args.data)
    args[-1] = rlx_cuda.arena(start)
    ops[2].properties["args"] = ArrayAttr(args)
    bound, why = _bind_in(f)
    assert why == {} and [(b.input, b.args) for b in bound] == [(0, ((0, (0,)),))]


def test_inputs_are_read_in_place_only_where_aligned_and_outside_the_written_pool():
    """`_in_place_ok`: a pointer off the plan's alignment, or overlapping the
    pool whose slots the kernels write, sends the call to the copying path;
    elsewhere (the unwritten pool too) the input is read in place."""
    exe, _, pool = _fake_executable(lambda g: [_softmaxes(g, 1)[1]])
    assert exe.bindings and exe._pool_range == (1 << 36, (1 << 36) + (1 << 20))
    exe._bound_srcs, exe.input_bindings = [1], [B.InputBinding(0, 0, 4096, ())]
    arena = 1 << 32
    assert exe._in_place_ok([0, arena])
    assert not exe._in_place_ok([0, arena + 16]) and not exe._in_place_ok([0, arena + P.ALIGN // 2])
    assert not exe._in_place_ok([0, pool[0].ptr]) and not exe._in_place_ok([0, pool[0].ptr - 256])
    assert exe._in_place_ok([0, pool[0].ptr - 4096]) and exe._in_place_ok([0, (1 << 36) + (1 << 20)])
    exe._pool_range = (0, 0)  # outputs copied out: the pool is written after every kernel has read
    assert exe._in_place_ok([0, pool[0].ptr])


# ------------------------------------------------------------------ random graphs


def _places(f, bound_out, bound_in):
    """For every arena argument of every launch: where the runtime points it
    (the caller's array of a bound input at a reader's listed position, a
    bound output's pool slot from its producer on, else the arena), beside
    where each value the argument may hold (operands and results whose slot
    holds that offset) lives at that launch."""
    ret = f.body.block.last_op
    offs = P.function_plan(f).arg_offsets
    args = list(f.body.block.args)
    out_base = {B.base(ret.arguments[b.output]): b for b in bound_out}
    in_of = {args[b.input]: b for b in bound_in}
    for i, op in enumerate(B.launch_ops(f)):
        vals = []
        for v in [*op.operands, *op.results]:
            loc = B.location(f, offs, v)
            if loc.kind.data == "arena":
                vals.append((v, loc.value.value.data, max(tensor_bytes(v.type), 1)))

        def value_place(v, off):
            b = B.base(v)
            if b in in_of and v in op.operands:  # a reader of a bound input: the caller's array
                return ("caller", in_of[b].input, off - in_of[b].offset)
            if b in out_base and i >= out_base[b].first:
                return ("pool", out_base[b].output, off - out_base[b].offset)
            return ("arena", off)

        for j, a in enumerate(B.op_args(op)):
            if a.kind.data != "arena":
                continue
            off = a.value.value.data
            ins_ = [b for b in bound_in if any(k == i and j in at for k, at in b.args)]
            outs_ = [b for b in bound_out if b.covers(i, off)]
            runtime = (("caller", ins_[0].input, off - ins_[0].offset) if ins_ else
                       ("pool", outs_[0].output, off - outs_[0].offset) if outs_ else ("arena", off))
            held = [value_place(v, off) for v, start, n in vals if start <= off < start + n]
            yield i, j, runtime, held


@given(case=graphs(max_ops=14, dtypes=("f32", "f16", "bf16")))
def test_bound_arguments_point_where_their_values_are(case):
    """On random graphs lowered for sm_90: every argument the runtime moves
    to a caller's array or the output pool is one whose value lives there at
    that launch (a bound input's reader, a bound output from its producer
    on), and every argument of a value that lives there is moved; nothing is
    written into a caller's array; no bound slot is shared with another
    value while bound."""
    low = rlxc.run_pipeline(case.module, "rlx-cuda{arch=sm_90 gemm=cublaslt}")
    (f,) = [op for op in low.ops if op.name == "func.func"]
    offs = P.function_plan(f).arg_offsets
    bound_out, _ = B.bind_outputs(f, offs)
    bound_in, _ = B.bind_inputs(f, offs)
    ops = B.launch_ops(f)
    for b in bound_in:  # its readers, each passing the slot's start
        for i, at in b.args:
            assert any(B.base(x) is f.body.block.args[b.input] for x in ops[i].operands), (case, b)
            assert all(B.op_args(ops[i])[j].value.value.data == b.offset for j in at), (case, b)
    for i, j, runtime, held in _places(f, bound_out, bound_in):
        if held:
            assert all(h == runtime for h in held), (case, i, j, runtime, held)
        else:  # an argument no operand or result of its launch holds: left in the arena
            assert runtime[0] == "arena", (case, i, j, runtime)

"""Generated kernels run on the CPU (`rlxc.runtime.emulator`: the CUDA source
NVRTC compiles, built by the host's C++ compiler, a thread per CUDA thread)
against the numpy interpreter, on fresh random inputs with the arena
poisoned, with the GPU tests' tolerances (`test_gpu.assert_matches`). So CI,
which has no GPU, checks the values of the row forms, the elementwise and
injective kernels and random graphs, not only that NVRTC compiles them.
Skipped where there is no host C++ compiler."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import StringAttr

import rlxc
from rlxc.codegen import HEADERS
from rlxc.dialects import rlx_cuda
from rlxc.runtime import emulator
from strategies import graphs
from test_codegen_kernels11 import row_ops_module
from test_gpu import assert_matches, check_inputs

pytestmark = pytest.mark.skipif(not emulator.available(), reason="no host C++ compiler that builds the emulator (g++ 12+)")

def lower(module, sm_count: int = 132):
    """`module` lowered for sm_90 with matmuls as generated kernels; a few
    multiprocessors (`sm_count`) give the forms that fill them other shapes."""
    return rlxc.run_pipeline(module.clone(), f"rlx-cuda{{arch=sm_90 sm_count={sm_count} gemm=kernel}}")


def emulated(module, rng=None, params=None, tol_scale=1.0, offset=0.0, lowered=None, fix=None):
    """`module` lowered for sm_90 and run on the CPU, against the interpreter
    (the random inputs first passed through `fix`, where given); returns the
    lowered module's kernel sources."""
    rng = rng or np.random.default_rng()
    inputs, params = check_inputs(module, params, rng, offset)
    if fix:
        fix(inputs, rng)
    want = rlxc.interpret(module, inputs, params)
    lowered = lowered or lower(module)
    got = emulator.run(lowered, inputs, params, headers=HEADERS)
    assert_matches(module, inputs, params, want, got, rng, tol_scale)
    return [op.source.data for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]


def form(src: str) -> tuple:
    """A row kernel's form as its source's third line names it: warp or
    block, whether a thread takes a row, staged through shared memory,
    peeled at the row's 16-byte boundaries."""
    line = src.splitlines()[2]
    return (line.removeprefix("// row form: ").split(" (")[0], "a thread per row" in line, "staged" in line,
            "16-byte boundaries" in line)


#: lengths that take each of the row forms short of the cluster form: a
#: thread a row (7-31), staged over lanes (77, 1001), rows of whole vectors
#: over a warp (768), over 37 rows (an odd count: partial groups and
#: blocks); the block form peeled (2049) and aligned (4096) and even rows
#: peeled past 8192 (8194), over 5 rows
ROW_LENGTHS = {"f32": ((7, 31, 77, 1001), (2049, 8194)), "f16": ((13, 77, 768, 1001), (2049, 8194)),
               "bf16": ((9, 31, 1001), (4096, 8194))}


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_row_forms(d):
    """softmax, log_softmax, layer_norm and rms_norm over rows of each of
    ROW_LENGTHS[d], every output against the interpreter; they take at
    least four forms."""
    short, long = ROW_LENGTHS[d]
    srcs = emulated(row_ops_module(short, 37, d), offset=0.5) + emulated(row_ops_module(long, 5, d), offset=0.5)
    assert len({form(s) for s in srcs}) >= 4, sorted({form(s) for s in srcs})


#: long rows in clusters of 2-8 blocks (windowed, aligned, 16-bit rows
#: held packed) and softmax's stream form over a cluster of two, 3 rows each
CLUSTER_LENGTHS = {"f32": (40000,), "f16": (16385,), "bf16": (32768, 50257)}


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_cluster_forms(d):
    """The row ops over CLUSTER_LENGTHS[d]: a cluster's blocks run at once,
    each with its own shared memory, their statistics met through the
    others' slots (distributed shared memory on the GPU)."""
    srcs = emulated(row_ops_module(CLUSTER_LENGTHS[d], 3, d), offset=0.5)
    assert any("__cluster_dims__" in s for s in srcs)


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_grid_forms(d, monkeypatch):
    """The forms whose blocks wait for each other through global memory
    (`rlx.co_resident`), lowered for 8 multiprocessors so that a row's or a
    group's blocks are few and run at once: rows split over 2-3 blocks (the
    grid form, taken before the cluster form here), a few long rows streamed
    over 4 blocks each, a long middle axis over few rows spread over blocks
    (16-bit: in 16-byte items); the blocks take tickets and meet through
    counters every block of the launch shares."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "GRID_FIRST", True)
    g = rlxc.GraphBuilder()
    x, w = g.input("x", [3, 40001], d), g.input("w", [3, 32768], d)
    s, c = g.input("s", [2, 300001], d), g.input("c", [4, 3000, 64], d)
    outs = [g.softmax(x), g.layer_norm(w, g.param("gm", [32768], d), g.param("bt", [32768], d)),
            g.rms_norm(x, g.param("rw", [40001], d)), g.log_softmax(s), g.softmax(c, axis=1)]
    module = g.build(outs)
    lowered = lower(module, sm_count=8)
    resident = [k.attributes[rlx_cuda.CO_RESIDENT] for k in lowered.ops
                if isinstance(k, rlx_cuda.KernelOp) and rlx_cuda.CO_RESIDENT in k.attributes]
    assert len(resident) >= 4, resident
    emulated(module, lowered=lowered, offset=0.5)


def test_a_broken_grid_reduction_is_caught(monkeypatch):
    """A grid-form kernel told its rows are of one block (each block's
    statistics its own third of the row's) is out of tolerance."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "GRID_FIRST", True)
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("x", [3, 40001]))])
    lowered = lower(module, sm_count=8)
    kernel = next(op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp) and "rlx_grid_reduce<3>" in op.source.data)
    kernel.properties["source"] = StringAttr(kernel.source.data.replace("rlx_grid_reduce<3>", "rlx_grid_reduce<1>"))
    with pytest.raises(AssertionError):
        emulated(module, lowered=lowered)


def test_a_broken_cluster_reduction_is_caught():
    """A cluster kernel told its clusters are of one block (each block's
    statistics its own half of the row's) is out of tolerance."""
    module = row_ops_module((16385,), 3, "f16")
    lowered = lower(module)
    kernel = next(op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp) and "rlx_cluster_reduce<2" in op.source.data)
    kernel.properties["source"] = StringAttr(kernel.source.data.replace("rlx_cluster_reduce<2", "rlx_cluster_reduce<1"))
    with pytest.raises(AssertionError):
        emulated(module, lowered=lowered)


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_fused_residual_norms_and_argmax(d):
    """The fused residual norms (the row computed as x + residual) and
    argmax over the last axis, over short, odd and long rows."""
    g = rlxc.GraphBuilder()
    outs = []
    for n in (13, 333, 4097):
        x, r = g.input(f"x{n}", [9, n], d), g.input(f"r{n}", [9, n], d)
        outs += [*g.fused_residual_layer_norm(x, r, g.param(f"g{n}", [n], d), g.param(f"b{n}", [n], d)),
                 *g.fused_residual_rms_norm(x, r, g.param(f"w{n}", [n], d)), g.argmax(x, axis=-1)]
    emulated(g.build(outs))


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_short_middle_axes_in_few_slices(d):
    """softmax, log_softmax and argmax over middle axes of 33-64 elements,
    lowered for 4 multiprocessors so that 8192 rows fill them: the columns
    form's slices only as many as that takes (rows.COLUMN_FORM_SHORT_AXIS;
    one here, 20-64 elements a thread held in registers, 8 before session 55),
    16-bit argmax's packed vectors in 8 slices (ARGMAX_PACKED_SHORT_AXIS);
    an inner axis 8 does not divide takes the element-wide form."""
    g = rlxc.GraphBuilder()
    x, y, z = g.input("x", [64, 40, 128], d), g.input("y", [64, 33, 128], d), g.input("z", [60, 64, 138], d)
    outs = [g.softmax(x, axis=1), g.log_softmax(y, axis=1), g.softmax(z, axis=1),
            g.argmax(x, axis=1), g.argmax(y, axis=1), g.argmax(z, axis=1)]
    module = g.build(outs)
    lowered = lower(module, sm_count=4)
    srcs = emulated(module, lowered=lowered)
    slices = [int(re.search(r"x (\d+) slices", line).group(1)) for src in srcs for line in src.splitlines()
              if line.startswith("// row form: columns")]
    assert len(slices) == 3 and max(slices) <= 2, slices


@pytest.mark.parametrize("d,nbytes", [("f32", 8), ("f16", 4), ("f16", 8), ("bf16", 4)])
def test_packed_columns_softmax(d, nbytes, monkeypatch):
    """softmax and log_softmax over middle axes in the packed columns form
    (rows.COLUMN_PACKED, `nbytes` a thread's access; f32 with COLUMN_PACKED_F32
    and axes from 256 set here), lowered for 8
    multiprocessors: one block a group of rows ([33, 256, 64]: no meeting
    across blocks), 3 blocks over an axis 48 slices do not divide ([1, 701,
    64]: the last item guarded), 2 over [3, 300, 64]; against the
    interpreter, with a column all -inf (NaN, as the reference), one of a
    single finite value among -inf and one of large values (the max
    subtracted before the exponential)."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_PACKED_F32", True)
    monkeypatch.setattr(R, "COLUMN_PACKED_MIN_AXIS", 256)
    monkeypatch.setattr(R, "COLUMN_PACKED_BYTES", nbytes)
    monkeypatch.setattr(R, "COLUMN_PACKED_MIN_WAVE", 0)  # blocks fewer than the multiprocessors too
    shapes = [(33, 256, 64), (1, 701, 64), (3, 300, 64)]
    g = rlxc.GraphBuilder()
    xs = [g.input(f"x{i}", list(s), d) for i, s in enumerate(shapes)]
    module = g.build([g.softmax(xs[0], axis=1), g.log_softmax(xs[1], axis=1), g.softmax(xs[2], axis=1),
                      g.log_softmax(xs[0], axis=1)])
    lowered = lower(module, sm_count=8)
    forms = [line for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)
             for line in op.source.data.splitlines() if line.startswith("// row form:")]
    assert len(forms) == 4 and all(f.startswith("// row form: packed columns") for f in forms), forms
    assert [re.search(r"(\d+) blocks per", f).group(1) if "blocks per" in f else "1" for f in forms] == \
        ["1", "3", "2", "1"], forms

    def specials(inputs, rng):
        for i, s in enumerate(shapes):
            v = inputs[f"x{i}"]
            v[0, :, 1] = -np.inf  # all -inf: NaN, as the reference
            v[0, :, 2] = -np.inf
            v[0, s[1] // 2, 2] = 1.5  # one finite value: 1 there (0 in log_softmax), 0 (-inf) elsewhere
            v[-1, :, 5] = v[-1, :, 5] * 0.01 + 60.0  # large values: exp(60) overflows f16 unless the max goes first
            inputs[f"x{i}"] = v

    emulated(module, lowered=lowered, fix=specials)


@pytest.mark.parametrize("spread", [True, False])
@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_argmax_columns_forms_meet_their_slices(d, spread, monkeypatch):
    """argmax over middle axes in the vector columns forms (16-bit: packed
    pairs), lowered for 4 multiprocessors: a block's slices met by every
    thread an output each (rows.ARGMAX_COLUMN_FOLD_SPREAD; not f32's
    unsplit form) or by threads y == 0 all of them, unsplit ([16, 200, 64])
    and split over grid.y ([2, 3001, 64], f32 [2, 4099, 64]), against the interpreter
    exactly: ties (few values: the first index wins within and across
    slices and chunks), the first NaN, a column all -inf, -0.0 before +0.0."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "ARGMAX_COLUMN_FOLD_SPREAD", spread)
    shapes = [(16, 200, 64), (2, 4099 if d == "f32" else 3001, 64)]
    g = rlxc.GraphBuilder()
    module = g.build([g.argmax(g.input(f"x{i}", list(s), d), axis=1) for i, s in enumerate(shapes)])
    lowered = lower(module, sm_count=4)
    forms = [line for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)
             for line in op.source.data.splitlines() if line.startswith("// argmax form: columns")]
    assert len(forms) == 2 and "split" in forms[1] and "split" not in forms[0], forms
    assert all("x 1 slices" not in f for f in forms), forms

    def ties_and_nans(inputs, rng):
        for i, s in enumerate(shapes):
            v = rng.integers(-3, 4, size=s).astype(inputs[f"x{i}"].dtype)  # few values: many ties
            n = s[1]
            v[0, :, 0] = 2  # all equal: index 0
            v[0, n - 1, 1] = 9  # the largest at the end
            v[0, 5, 2] = v[0, n - 2, 2] = np.nan  # the first NaN wins
            v[1, :, 3] = -np.inf  # all -inf: index 0
            v[1, :, 4] = -1
            v[1, n // 3, 4], v[1, n - 1, 4] = -0.0, 0.0  # equal zeros: the first
            inputs[f"x{i}"] = v

    emulated(module, lowered=lowered, fix=ties_and_nans)


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_elementwise_and_injective(d):
    """Fused elementwise regions with broadcasts (GELU, bias + GELU over odd
    rows), the heads' transpose, concat, slice, expand, gather, and sums
    over the last and a middle axis."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [6, 1001], d)
    h = g.input("h", [2, 7, 3, 16], d)
    ids = g.input("ids", [5], "i64")
    m = g.input("m", [4, 33, 24], d)
    outs = [g.gelu(x), g.gelu(g.add(x, g.param("bias", [1001], d))),
            g.transpose(h, [0, 2, 1, 3]), g.concat([x, x], axis=1), g.slice(x, [1], [500], [1]),
            g.expand(g.param("row", [1, 1001], d), [6, 1001]), g.gather(x, ids, axis=0),
            g.reduce_sum(x, axes=[1]), g.reduce_sum(m, axes=[1])]
    module = g.build(outs)

    def ids_in_range(inputs, rng):
        inputs["ids"] = rng.integers(-6, 6, 5).astype(np.int64)  # negative ids count from the end

    emulated(module, fix=ids_in_range)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=graphs(dtypes=("f32", "f16", "bf16")))
def test_random_graphs(case):
    """Random graphs (`rlxc.testing.strategies`), lowered with matmuls as
    generated kernels, every kernel on the CPU; a graph with a kernel the
    emulator does not run (attention's tensor-core form, the grid forms) or
    of over 200k CUDA threads is skipped."""
    lowered = lower(case.module)
    if emulator.launched_threads(lowered) > emulator.QUICK_MAX_THREADS:  # too slow as OS threads for CI
        return
    try:
        emulated(case.module, lowered=lowered)
    except emulator.EmulationUnsupported:
        return


def test_a_broken_kernel_is_caught():
    """The check can fail: a row kernel told its rows are one element
    shorter leaves each row's last element unwritten (poisoned: NaN), and a
    softmax whose outputs are off by one part in a thousand is out of
    tolerance."""
    module = row_ops_module((1001,), 5, "f32")
    for old, new in (("1001LL", "1000LL"), ("= v[j] * inv;", "= v[j] * inv * 1.001f;")):
        lowered = lower(module)
        kernel = next(op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp) and old in op.source.data)
        kernel.properties["source"] = StringAttr(kernel.source.data.replace(old, new))
        with pytest.raises(AssertionError):
            emulated(module, lowered=lowered)


def test_unsupported_kernels_are_named():
    """A module with a cuBLASLt gemm, or a kernel whose blocks wait for each
    other, more of them than run at once here (a row streamed over many
    blocks of a GPU of 132 multiprocessors), is refused with the op or
    kernel named, not run wrongly."""
    g = rlxc.GraphBuilder()
    module = g.build([g.matmul(g.input("a", [8, 16]), g.input("b", [16, 4]))])
    with pytest.raises(emulator.EmulationUnsupported, match="rlx_cuda.gemm"):
        emulator.run(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"), {"a": np.ones((8, 16), np.float32),
                     "b": np.ones((16, 4), np.float32)}, headers=HEADERS)
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 600000])
    module = g.build([g.softmax(x)])
    lowered = lower(module)
    if not any(rlx_cuda.CO_RESIDENT in k.attributes for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp)):
        pytest.skip("this row is no longer in the grid form")
    with pytest.raises(emulator.EmulationUnsupported, match="resident together"):
        emulator.run(lowered, {"x": np.ones((2, 600000), np.float32)}, headers=HEADERS)


@pytest.mark.skipif(not emulator.available("thread"), reason="no ThreadSanitizer runtime for the host compiler")
def test_a_race_is_an_error():
    """Under the thread sanitizer, block kernels whose reduction lost its
    last barrier (rlx_block_reduce's, in the shared header: a thread may
    read the block's result before the first warp writes it) are an error
    naming the launch, where the unbroken header runs clean."""
    module = row_ops_module((2049,), 3, "f32")
    lowered = lower(module)
    inputs = {"x2049": np.ones((3, 2049), np.float32)}
    params = {f"{p}2049": np.ones(2049, np.float32) for p in "gbw"}
    emulator.run(lowered, inputs, params, headers=HEADERS, sanitize="thread")
    (name, text), = HEADERS.items()
    last = "    if (lane == 0) smem[0] = v;\n  }\n  __syncthreads();\n  return smem[0];"
    assert last in text
    broken = {name: text.replace(last, "    if (lane == 0) smem[0] = v;\n  }\n  return smem[0];")}
    with pytest.raises(emulator.EmulationError, match="(?s)launch #.*ThreadSanitizer"):
        emulator.run(lowered, inputs, params, headers=broken, sanitize="thread")

"""CUDA codegen without a GPU: every generated kernel (the fallback gemm
too) compiles with NVRTC to a cubin for sm_80 and sm_90, with the shared
header given as text; the disk cache hits, misses, detects corruption and
survives concurrent writers; failures carry the log and the source."""

from __future__ import annotations

import multiprocessing as mp
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import IntegerAttr, i64

import rlxc
from rlxc.codegen import HEADER_NAME, HEADERS
from rlxc.dialects import rlx_cuda
from rlxc.runtime import nvrtc
from rlxc.signature import signature
from forms import block_form_up_to
from strategies import graphs, random_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from models import EXAMPLES  # noqa: E402

ARCHS = ["sm_80", "sm_90"]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path / "cache"))


def kernels_of(module):
    return [op for op in module.ops if isinstance(op, rlx_cuda.KernelOp)]


def launched(module):
    """(source, grid, block) of each launch of a lowered module, in order."""
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(module)}
    return [(by_sym[op.kernel.root_reference.data], op.grid.get_values(), op.block.get_values())
            for op in module.walk() if isinstance(op, rlx_cuda.LaunchOp)]


def compile_all(module, arch):
    ks = kernels_of(module)
    cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], arch, headers=HEADERS)
    for k, c in zip(ks, cubins):
        assert c[:4] == b"\x7fELF", k.sym_name.data  # a cubin is an ELF image
    return len(ks)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_kernels_compile(example, arch):
    module, _ = EXAMPLES[example]()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch}}}")
    assert compile_all(lowered, arch) >= 1
    for op in lowered.walk():  # nothing left at the graph level but views and leaves
        if op.name.startswith("rlx.") and op.parent_op() is not None:
            assert op.name in ("rlx.param", "rlx.constant", "rlx.reshape"), op.name


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_every_unary_op_compiles(arch, dtype):
    """Each rlx unary op of a float type, a kernel of its own (an output
    each), lowers and compiles; its scalar form's C++ call is in the source
    (the trigonometric and hyperbolic ops as CUDA's full-precision f32
    functions, f16/bf16 computed in f32)."""
    from rlxc.dialects import rlx

    g = rlxc.GraphBuilder()
    x = g.input("x", [5, 33], dtype)
    names = [op.name.removeprefix("rlx.") for op in rlx.UNARY_OPS]
    lowered = rlxc.run_pipeline(g.build([getattr(g, n)(x) for n in names]), f"rlx-cuda{{arch={arch}}}")
    assert compile_all(lowered, arch) >= 1
    sources = "\n".join(k.source.data for k in kernels_of(lowered))
    for fn in ("tanf", "asinf", "acosf", "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf"):
        assert re.search(rf"\b{fn}\(", sources), fn


@pytest.mark.parametrize("arch", ARCHS)
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=graphs(dtypes=("f32", "f16", "bf16")))
def test_random_graph_kernels_compile(arch, case):
    lowered = rlxc.run_pipeline(case.module, f"rlx-cuda{{arch={arch}}}")
    compile_all(lowered, arch)


def _large_shapes():
    """Kernels only large shapes select: column reductions (enough outputs,
    innermost axis kept) and 64-bit elementwise indices (over 2^31 elements)."""
    g = rlxc.GraphBuilder()
    outs = [g.reduce_sum(g.input("a", [3, 9000]), axes=[0]),
            g.reduce_max(g.input("b", [4, 5, 3000], "i32"), axes=[1], keepdims=True),
            g.reduce_mean(g.input("c", [2, 64, 9000], "f16"), axes=[0, 1]),
            g.add(g.input("d", [2**29, 5]), g.input("e", [5]))]
    return g.build(outs)


def _long_rows():
    """Rows past BLOCK_ROW_MAX: shared-memory rows up to SMEM_ROW_BYTES, then
    the streamed forms (online softmax and Welford statistics)."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 20000])
    z = g.input("z", [2, 60000])
    outs = [g.softmax(x), g.log_softmax(g.input("h", [2, 9000], "f16")),
            g.layer_norm(x, g.param("g", [20000]), g.param("b", [20000])),
            *g.fused_residual_layer_norm(x, x, g.param("g2", [20000]), g.param("b2", [20000])),
            *g.fused_residual_rms_norm(g.input("y", [2, 9000], "bf16"), g.input("r", [2, 9000], "bf16"), g.param("g3", [9000], "bf16")),
            g.softmax(z), g.layer_norm(z, g.param("g4", [60000]), g.param("b4", [60000])),
            g.log_softmax(g.input("o", [2, 60001], "f16"))]
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("grid", [False, True])
def test_long_row_kernels_compile(arch, grid, monkeypatch):
    """Without clusters (sm_80, or USE_CLUSTERS off on sm_90): shared-memory
    rows, then the grid form (rows over blocks that meet through global
    memory), or with it off the streamed forms."""
    from rlxc.codegen import rows
    from rlxc.codegen.rows import SMEM_ROW_BYTES

    monkeypatch.setattr(rows, "USE_CLUSTERS", False)
    monkeypatch.setattr(rows, "GRID_ROWS", grid)
    block_form_up_to(monkeypatch, 8192)  # the forms past the block form at these lengths (by default up to 16384-32768)
    lowered = rlxc.run_pipeline(_long_rows(), f"rlx-cuda{{arch={arch}}}")
    sources = [k.source.data for k in kernels_of(lowered)]
    smem = [s for s in sources if "// row form: smem" in s]
    # f32 rows are kept as f32; f16/bf16 norm rows as themselves (half the bytes);
    # softmax rows as f32 (its cached statistics update the elements)
    assert len(smem) == 5
    assert sum("extern __shared__ __align__(16) float srow[];" in s for s in smem) == 4
    assert sum("extern __shared__ __align__(16) unsigned short srow[];" in s for s in smem) == 1
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    assert sorted(op.smem.value.data for op in launches if op.smem.value.data)[-1] == 20000 * 4 <= SMEM_ROW_BYTES
    if grid:  # past the shared-memory limit: the rows of 60000 and 60001 over 4 blocks of 480 threads
        forms = [line for src in sources for line in src.splitlines() if line.startswith("// row form: grid")]
        assert len(forms) == 3 and all("grid (4 blocks of 480 threads per row" in f for f in forms), forms
        assert all("rlx_grid_reduce<4>(" in src and "_ticket, 1ull);" in src
                   for src in sources if "// row form: grid" in src)
        assert compile_all(lowered, arch) == 8
        return
    # past the shared-memory limit: online softmax and Welford, f32 rows as float4
    assert sum("rlx_ms_add(st," in src for src in sources) == 2
    assert sum("rlx_welford_add(st," in src for src in sources) == 1
    assert sum("float4 q = reinterpret_cast<const float4*>(x + base)[k4];" in src for src in sources) == 2
    assert compile_all(lowered, arch) == 8


def test_long_rows_on_sm90_split_over_clusters(monkeypatch):
    """On sm_90 the same rows (all within 2-8 blocks of up to 1024 threads)
    take the cluster form: the block count in `__cluster_dims__`, a slot
    row per statistic, the first reduction waiting on the opening arrive;
    on sm_80 none does. (With rows.STREAM_ROWS off: the f16 log_softmax of
    60001 takes the stream form otherwise, test_stream_form_rows.)"""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "STREAM_ROWS", False)
    block_form_up_to(monkeypatch, 8192)  # the forms past the block form at these lengths (by default up to 16384-32768)
    lowered = rlxc.run_pipeline(_long_rows(), "rlx-cuda{arch=sm_90}")
    sources = [k.source.data for k in kernels_of(lowered)]
    assert all("// row form: cluster (" in s for s in sources), [s.splitlines()[2] for s in sources]
    softmax = next(s for s in sources if "20000" in s and "rlx_maxf" in s)
    assert "__cluster_dims__(4, 1, 1) __launch_bounds__(160)" in softmax  # 20000 f32: 625 threads of 128 bytes
    # 4 elements per access (the last accesses past the row skipped whole): the max and the
    # exponentials' sum merged into one cluster reduction (rows.MERGED_STATS_CLUSTER)
    assert "4 elements per access" in softmax and "if ((long long)(c * 640 + lane) * 4 < 20000LL) {" in softmax
    assert "__shared__ RlxMS cl_slots0[4];" in softmax and "cl_slots1" not in softmax
    assert ("rlx_cluster_reduce<4, true>(RlxMS{m, s}, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem, cl_slots0)"
            in softmax)
    launches = {op.kernel.root_reference.data: op for op in lowered.walk() if op.name == "rlx_cuda.launch"}
    k = next(k for k in kernels_of(lowered) if k.source.data == softmax)
    assert launches[k.sym_name.data].grid.get_values()[0] == 3 * 4  # a cluster per row
    assert compile_all(lowered, "sm_90") == 8
    old = rlxc.run_pipeline(_long_rows(), "rlx-cuda{arch=sm_80}")
    assert not any("row form: cluster" in k.source.data for k in kernels_of(old))


def test_stream_form_rows(monkeypatch):
    """rows.STREAM_ROWS on sm_90: softmax/log_softmax over f16/bf16 rows of
    30000-65536 elements and those 8 does not divide from 8193 (through
    their windows) take the stream form; rows of 16384, 8191 or 131072, f32 rows, a prologue, layer_norm,
    sm_80 and USE_CLUSTERS off keep the forms they had. Every kernel compiles."""
    from rlxc.codegen import rows

    block_form_up_to(monkeypatch, 8192)  # the forms past the block form at these lengths (by default up to 16384-32768)
    g = rlxc.GraphBuilder()
    xs = [g.input(f"x{n}", [3, n], "f16") for n in (16384, 8191, 10001, 16385, 30522, 32000, 50257, 65536, 131072)]
    b, f = g.input("b", [3, 32768], "bf16"), g.input("f", [3, 32768])
    outs = [g.softmax(v) for v in xs] + [g.log_softmax(b), g.softmax(f), g.softmax(g.mul(b, b)),
                                                  g.layer_norm(b, g.param("w", [32768], "bf16"), g.param("c", [32768], "bf16"))]
    module = g.build(outs)
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}")
    forms = [k.source.data.splitlines()[2].split(" (")[0] for k in kernels_of(lowered)]
    stream = "// row form: stream"
    assert [f == stream for f in forms] == [False, False, True, True, True, True, True, True, False, True, False,
                                            False, False], forms
    assert compile_all(lowered, "sm_90") == len(forms)
    assert not any(stream in k.source.data for k in kernels_of(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_80}")))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rows, "USE_CLUSTERS", False)
        assert not any(stream in k.source.data for k in kernels_of(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}")))


def test_stream_form_threads_by_accesses(monkeypatch):
    """rows.STREAM_WINDOW_THREADS: windowed 16-bit softmax rows of few
    16-byte accesses take blocks of fewer threads, as many more blocks per
    multiprocessor (`__launch_bounds__`), and (STREAM_WINDOW_ROW_MIN 8193)
    every windowed row past the block form takes the stream form; aligned
    rows keep blocks of 1024, and an empty table gives every row 1024.
    Every kernel compiles."""
    from rlxc.codegen import rows

    block_form_up_to(monkeypatch, 8192)  # the forms past the block form at these lengths (by default up to 16384-32768)
    g = rlxc.GraphBuilder()
    lengths = (8193, 10001, 16385, 24001, 28002, 32768)  # accesses (windowed: + 1) 1026, 1252, 2050, 3002, 3502, 4096
    outs = [g.softmax(g.input(f"x{n}", [3, n], "f16")) for n in lengths]
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}")
    sources = [k.source.data for k in kernels_of(lowered)]
    want = [256, 256, 512, 512, 1024, 1024]
    for src, threads in zip(sources, want, strict=True):
        assert f"row form: stream (a block of {threads} threads per row" in src, src[:300]
        assert f"__launch_bounds__({threads}, {2048 // threads})" in src, src[:600]
    launches = [str(op) for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    assert [f"block [{t}, 1, 1]" in op for op, t in zip(launches, want, strict=True)] == [True] * len(want), launches
    assert compile_all(lowered, "sm_90") == len(lengths)
    monkeypatch.setattr(rows, "STREAM_WINDOW_THREADS", ())
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input(f"x{n}", [3, n], "f16")) for n in lengths]
    sources = [k.source.data for k in kernels_of(rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}"))]
    assert all("row form: stream (a block of 1024 threads per row" in src for src in sources), [s[:200] for s in sources]


def test_stream_form_rows_past_64kb_take_a_cluster(monkeypatch):
    """rows.STREAM_CLUSTER: 16-bit stream rows past 64 KB split over a
    cluster of 2 blocks (grid = rows x 2), their (max, sum) merged across the
    cluster, the window's edges taken by the cluster's first two threads,
    each block sized for whole trips of loads (`stream_cluster_threads`);
    rows of 64 KB keep a block each, and so does every row with the switch
    off. Every kernel compiles."""
    from rlxc.codegen import rows

    lengths = (32768, 40000, 50257, 65536)
    want = {40000: 640, 50257: 800, 65536: 1024}  # 2500, 3142, 4096 accesses a block: 2 trips of 2 loads
    assert {n: rows.stream_cluster_threads(n, 2) for n in want} == want

    def lowered():
        g = rlxc.GraphBuilder()
        outs = [g.softmax(g.input(f"x{n}{dt}", [3, n], dt)) for n in lengths for dt in ("f16", "bf16")]
        return rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}")

    low = lowered()
    sources = [k.source.data for k in kernels_of(low)]
    grids = [op.grid.get_values()[0] for op in low.walk() if op.name == "rlx_cuda.launch"]
    for i, (src, grid) in enumerate(zip(sources, grids, strict=True)):
        n = lengths[i // 2]
        if n not in want:
            assert "row form: stream (a block of 1024 threads per row" in src and "__cluster_dims__" not in src
            assert grid == 3
            continue
        t = want[n]
        assert f"row form: stream (a cluster of 2 blocks of {t} threads per row" in src, src[:300]
        assert f"__cluster_dims__(2, 1, 1) __launch_bounds__({t}, {2048 // t})" in src
        assert f"const int lane = (int)rlx_cluster_rank() * {t} + threadIdx.x;" in src
        assert "rlx_cluster_reduce<2, true>(st, RlxMSMerge()" in src
        assert f"k0 += 2 * {2 * t}" in src
        assert ("if (lane < 2) {  // the window's first and last accesses" in src) == (n % 8 != 0)
        assert grid == 3 * 2
    assert compile_all(low, "sm_90") == len(sources)
    monkeypatch.setattr(rows, "STREAM_CLUSTER", 0)
    assert not any("cluster" in k.source.data for k in kernels_of(lowered()))


@pytest.mark.parametrize("loads", [1, 2, 4])
def test_stream_form_windows_at_any_loads(loads, monkeypatch):
    """rows.STREAM_LOADS: 16-bit stream rows 8 does not divide are read
    through their 16-byte windows however many loads a thread keeps in
    flight (with 1 they were read as 16-byte vectors from the row's own
    start: a misaligned address on the GPU, session 35); aligned rows read
    from the row's start. Every kernel compiles."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "STREAM_LOADS", loads)
    g = rlxc.GraphBuilder()
    lengths = (30522, 50257, 32768)
    outs = [g.softmax(g.input(f"x{n}", [3, n], "bf16")) for n in lengths]
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}")
    sources = [k.source.data for k in kernels_of(lowered)]
    for src, n in zip(sources, lengths, strict=True):
        assert f"read twice, 8 elements per access, {loads} loads in flight" in src, src[:300]
        windowed = n % 8 != 0
        assert ("reinterpret_cast<const uint4*>(x + (base - h))" in src) == windowed, src
        assert ("reinterpret_cast<const uint4*>(x + base)" in src) == (not windowed), src
    assert compile_all(lowered, "sm_90") == len(lengths)


def test_warp_form_block_by_row_bytes():
    """rows.WARP_SHORT_THREADS: warp-form rows of at most 512 bytes (f32
    rows of 64 and 128, f16 rows of 256) take blocks of 128 threads,
    longer ones (f32 of 129 and 384, f16 of 257) blocks of 256; the row
    index steps by the block's rows (threads / lanes per row)."""
    g = rlxc.GraphBuilder()
    shapes = [(64, "f32"), (128, "f32"), (256, "f16"), (129, "f32"), (384, "f32"), (257, "f16")]
    outs = [g.softmax(g.input(f"x{k}", [1000, n], t)) for k, (n, t) in enumerate(shapes)]
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90 sm_count=132}")
    got = [(src.splitlines()[2].split(" (")[0], block[0]) for src, _, block in launched(lowered)]
    assert got == [("// row form: warp", t) for t in (128, 128, 128, 256, 256, 256)], got
    srcs = [src for src, _, _ in launched(lowered)]
    assert "(long long)blockIdx.x * 8 + (threadIdx.x / 16)" in srcs[0]  # 16 lanes a row of 64 f32, 8 rows a block
    assert "(long long)blockIdx.x * 4 + (threadIdx.x / 32)" in srcs[1]
    assert "(long long)blockIdx.x * 8 + (threadIdx.x / 32)" in srcs[3]
    assert compile_all(lowered, "sm_90") == len(shapes)


def test_row_per_block_forms_have_no_row_loop(monkeypatch):
    """rows.ROW_PER_BLOCK: the stream form and the block form whose grid is
    the rows take their row from blockIdx.x, no loop over rows; the block
    form with its grid capped (BLOCK_BLOCKS_PER_SM) keeps the loop, as the
    warp form does unless named, where its groups then cover the rows.
    Every kernel compiles."""
    from rlxc.codegen import rows

    def lower(n_rows=3):
        g = rlxc.GraphBuilder()
        outs = [g.softmax(g.input("s", [n_rows, 32768], "bf16")),  # stream
                g.layer_norm(g.input("b", [n_rows, 4097]), g.param("g", [4097]), g.param("c", [4097])),  # block
                g.rms_norm(g.input("w", [n_rows, 768], "f16"), g.param("h", [768], "f16"))]  # warp
        lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90 sm_count=132}")
        srcs = [k.source.data for k in kernels_of(lowered)]
        assert [s.splitlines()[2].split(" (")[0] for s in srcs] == ["// row form: stream", "// row form: block",
                                                                 "// row form: warp"], srcs
        return lowered, srcs

    loop = "for (long long r = blockIdx.x"
    lowered, (stream, block, warp) = lower()
    assert loop not in stream and loop not in block and "const long long r = blockIdx.x;" in block
    assert "r += (long long)gridDim.x" in warp
    assert compile_all(lowered, "sm_90") == 3
    monkeypatch.setattr(rows, "BLOCK_BLOCKS_PER_SM", 1)  # 132 blocks for 1000 rows: the loop again
    _, (_, block, _) = lower(1000)
    assert loop in block
    monkeypatch.setattr(rows, "ROW_PER_BLOCK", ("warp",))
    lowered, (stream, _, warp) = lower()
    assert loop in stream and "r += (long long)gridDim.x" not in warp and "if (r < 3LL) {" in warp, warp
    assert compile_all(lowered, "sm_90") == 3


def test_window_whole_chunks(monkeypatch):
    """rows.WINDOW_WHOLE_CHUNKS: in the windowed cluster
    rows, the accesses every thread holds wholly inside the row for every
    start offset (c = 1 .. K, K = (cols / width) / lanes - 1) take no test:
    the whole-access test and the load's window test begin with constants
    once c's loop is unrolled. Every kernel compiles; off, the sources are
    as before."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "STREAM_ROWS", False)
    block_form_up_to(monkeypatch, 8192)  # the forms past the block form at these lengths (by default up to 16384-32768)

    def lower():
        g = rlxc.GraphBuilder()
        outs = []
        for k, (cols, d) in enumerate([(50257, "f16"), (10001, "bf16"), (30522, "f16"), (50257, "f32")]):
            x = g.input(f"x{k}", [3, cols], d)
            gamma, beta = g.param(f"g{k}", [cols], d), g.param(f"b{k}", [cols], d)
            outs += [g.softmax(x), g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma)]
        return rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}")

    monkeypatch.setattr(rows, "WINDOW_WHOLE_CHUNKS", False)
    off = [k.source.data for k in kernels_of(lower())]
    assert not any("(c >= 1 && c <=" in src for src in off)
    monkeypatch.setattr(rows, "WINDOW_WHOLE_CHUNKS", True)
    lowered = lower()
    on = [k.source.data for k in kernels_of(lowered)]
    # layer_norm f16 of 50257: 896 lanes of 8 elements, 6282 whole accesses for every h: c = 1 .. 6
    norm = on[1]
    assert "4 blocks of 224 threads per row, 896 threads per row" in norm, norm[:300]
    assert "if ((c >= 1 && c <= 6) || (k0 >= 0 && k0 + 8 <= 50257LL)) {" in norm, norm
    assert "if (c <= 6 || c * 896 + lane < nb) {" in norm, norm
    assert all("(c >= 1 && c <=" in src for src in on if "const int nb = (h + " in src)
    # every row here is windowed but softmax's f16 of 30522 (even: 4-byte accesses, WINDOW_EVEN_16)
    assert sum("const int nb = (h + " in src for src in on) == 11
    assert compile_all(lowered, "sm_90") == 12


def test_rows_past_a_cluster_take_the_grid_form():
    """On sm_90, rows longer than 8 blocks of 1024 threads hold (262144 f32
    elements at 128 bytes a thread) split over more blocks that meet through
    global memory: a ticket per block, one arrival counter per row, a slot
    array per statistic, the blocks per row at most half the
    multiprocessors; rows longer than that are streamed."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 300000])
    h = g.input("h", [2, 600001], "f16")
    module = g.build([g.softmax(x), g.layer_norm(h, g.param("g", [600001], "f16"), g.param("b", [600001], "f16")),
                      g.rms_norm(g.input("w", [2, 5000000]), g.param("gw", [5000000]))])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    forms = [next(line for line in by_sym[op.kernel.root_reference.data].splitlines() if "row form" in line)
             for op in launches]
    # 300000 f32: 9375 lanes of 128 bytes, 19 blocks of 512; 600001 f16 kept as 16 bits: 9376 lanes, 19 of 512
    assert forms[0].startswith("// row form: grid (19 blocks of 512 threads per row"), forms
    assert forms[1].startswith("// row form: grid (19 blocks of 512 threads per row"), forms
    # 5000000: 40 blocks of 1024 would pass 132 / 2; streamed, two rows over 132 / 2 blocks each
    assert forms[2] == "// row form: float4 (66 blocks of 512 threads per row, read twice)", forms
    assert [op.grid.get_values()[0] for op in launches[:2]] == [3 * 19, 2 * 19]
    softmax = by_sym[launches[0].kernel.root_reference.data]
    assert "_arrived[48] = {};" in softmax and "RlxMS rlx_softmax" in softmax and "_part0[57];" in softmax
    assert "const long long g_at = (long long)(g_ticket % 57ull);" in softmax
    assert "rlx_grid_reduce<19>(RlxMS{m, s}, RlxMSMerge()" in softmax and "__cluster_dims__" not in softmax
    # the blocks of a row wait for each other: the runtime checks the device holds them (rlx.co_resident)
    co = {k.sym_name.data: k.attributes.get("rlx.co_resident") for k in kernels_of(lowered)}
    assert [co[op.kernel.root_reference.data] for op in launches] == [IntegerAttr(19, i64), IntegerAttr(19, i64),
                                                                       IntegerAttr(66, i64)]
    assert compile_all(lowered, "sm_90") == 3


@pytest.fixture
def no_packed_columns(monkeypatch):
    """The columns forms' own tests with the packed form (rows.COLUMN_PACKED,
    taken before them for 16-bit softmax where it applies) off; it has its
    own tests (test_emulated_kernels, test_gpu)."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_PACKED", False)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_softmax_over_a_middle_axis_takes_the_columns_form(arch, monkeypatch):
    """softmax / log_softmax over a non-contiguous axis with at least
    rows.COLUMN_FORM_MIN_ROWS rows: blocks of 256 / Y rows x Y slices of
    the axis (Y: 8, or the axis's length rounded up to a power of two, or
    on short axes as few as the rows need to fill the GPU; doubled, up to
    32, while the blocks are fewer than rows.COLUMN_FORM_FILL_BLOCKS_PER_SM
    per multiprocessor and each slice keeps 16 elements); fewer rows keep
    the looping form (a block per row). (Slices held in registers,
    rows.COLUMN_CACHED_ELEMS, off here: test_columns_form_held_in_registers.)"""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 0)
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 0)
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [2, 21, 64, 64], "bf16"), axis=1),  # 8192 rows of 21
            g.log_softmax(g.input("b", [2, 6, 130, 77]), axis=-2),  # 924 rows (under 1024): looping
            g.softmax(g.input("c", [1, 3, 4099], "f16"), axis=1),  # 4099 rows of 3: 4 slices
            g.softmax(g.input("d", [2, 1000, 2100]), axis=1)]  # 4200 rows of 1000: 8 slices, 132 blocks
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    got = [(next(line for line in by_sym[op.kernel.root_reference.data].splitlines() if "row form" in line),
            op.grid.get_values(), op.block.get_values()) for op in launches]
    cols = "// row form: columns (32 rows x {} slices of the reduced axis per block, an element at a time)"
    sms = 132 if arch == "sm_90" else 108  # the architecture's default multiprocessors
    assert got == [(cols.format(8), (256, 1, 1), (32, 8, 1)), ("// row form: looping", (924, 1, 1), (256, 1, 1)),
                   (cols.format(4).replace("32 rows", "64 rows"), (65, 1, 1), (64, 4, 1)),
                   (cols.format(32).replace("32 rows", "8 rows"), (525, 1, 1), (8, 32, 1))], got
    assert R.column_slices(R.Rows.of([1, 3, 4099], [1])) == 4 and R.Rows.of([1, 3, 4099], [1]).inner == 4099
    # short axes over rows enough to give every multiprocessor 2048 threads: one slice each
    assert R.column_slices(R.Rows.of([2, 21, 150000], [1]), 132) == 1
    assert R.column_slices(R.Rows.of([2, 21, 50000], [1]), 132) == 4  # 100000 rows: 132 x 2048 / 100000 = 2.7
    assert R.column_slices(R.Rows.of([2, 128, 150000], [1]), 132) == 8  # a longer axis keeps 8
    # few rows, a long axis: more slices while under 4 blocks per multiprocessor
    assert R.column_slices(R.Rows.of([131, 1000, 128], [1]), 132) == 16  # 524 blocks of 8 slices, 1048 of 16
    assert R.column_slices(R.Rows.of([131, 1000, 128], [1]), 0) == 8  # the multiprocessors unknown: as before
    assert R.column_slices(R.Rows.of([2, 40, 2100], [1]), 132) == 8  # 40 elements: no slice of 16 at 16 slices
    # 8192 rows: 32 slices would leave blocks of 8 rows, 16 bytes of 2-byte elements (COLUMN_FORM_MIN_RUN_BYTES)
    assert R.column_slices(R.Rows.of([64, 4096, 128], [1]), 132, 2) == 16
    assert R.column_slices(R.Rows.of([64, 4096, 128], [1]), 132, 4) == 32
    assert R.Rows.of([2, 5, 6, 7], [1, 2]).inner == 7 and R.Rows.of([2, 5, 6, 7], [0, 2]).inner == 0
    src = by_sym[launches[2].kernel.root_reference.data]
    assert "const long long r = min((long long)blockIdx.x * 64 + threadIdx.x, 4098LL);" in src
    assert "st = rlx_column_ms_reduce<4, 1, 1>(RlxMSN<1>{{st}}, col_slots0, nullptr, nullptr, 0).a[0];" in src
    assert compile_all(lowered, arch) == 4


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_with_vectors(arch, monkeypatch):
    """rows.COLUMN_VECTORS: softmax over a middle axis whose following rows
    (`inner`) hold 16-byte vectors gives each thread 4 (f32) or 8
    (f16/bf16) neighbouring rows, read and written 16 bytes at a time, one
    online (max, sum) per row, each reduced over the slices; other lengths
    keep the element-wide columns form. By default only in f16/bf16 and
    where that leaves COLUMN_VECTOR_BLOCKS_PER_SM blocks per
    multiprocessor; both gates lifted below. (Slices held in registers,
    rows.COLUMN_CACHED_ELEMS, off here.)"""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 0)
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 0)

    def forms(*inputs):
        g = rlxc.GraphBuilder()
        outs = [g.softmax(g.input(f"x{i}", s, t), axis=1) for i, (s, t) in enumerate(inputs)]
        lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
        by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
        return [next(line for line in by_sym[op.kernel.root_reference.data].splitlines() if "row form" in line)
                for op in lowered.walk() if op.name == "rlx_cuda.launch"]

    # defaults: 16-bit vectors over [4, 64, 65536] (1024 blocks); [2, 128, 16384] has 128; f32 never
    got = forms(([4, 64, 65536], "f16"), ([2, 128, 128, 128], "bf16"), ([64, 21, 4096], "f32"))
    assert "8 elements per 16-byte access" in got[0] and "an element at a time" in got[1] \
        and "an element at a time" in got[2], got
    monkeypatch.setattr(R, "COLUMN_VECTORS_F32", True)
    monkeypatch.setattr(R, "COLUMN_VECTOR_BLOCKS_PER_SM", 0)
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [2, 128, 128, 128], "bf16"), axis=1),
            g.log_softmax(g.input("b", [64, 21, 4096]), axis=1),
            g.softmax(g.input("c", [1, 3, 4099], "f16"), axis=1),  # 4099: no vectors
            g.softmax(g.input("d", [2, 1000, 2100], "f16"), axis=1)]  # 2100 = 8 x 262 + 4: no 16-bit vectors
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    got = [(next(line for line in by_sym[op.kernel.root_reference.data].splitlines() if "row form" in line),
            op.grid.get_values(), op.block.get_values()) for op in launches]
    assert got[0] == ("// row form: columns (32 threads of 8 rows x 8 slices of the reduced axis per block, "
                      "8 elements per 16-byte access)", (128, 1, 1), (32, 8, 1)), got
    # 21 channels, a short axis: slices as the multiprocessors need (8 of 132, 4 of 108)
    y = 8 if arch == "sm_90" else 4
    assert got[1][0].startswith(f"// row form: columns ({256 // y} threads of 4 rows x {y} slices"), got
    assert got[1][1] == (65536 // (256 // y), 1, 1) and got[1][2] == (256 // y, y, 1), got
    assert "an element at a time" in got[2][0] and "an element at a time" in got[3][0], got
    bf16 = by_sym[launches[0].kernel.root_reference.data]
    assert "const long long r = min((long long)blockIdx.x * 32 + threadIdx.x, 4095LL) * 8;" in bf16
    # 8 slices of 16: statistics and output read 4 loads at a time (COLUMN_VECTOR_LOADS, COLUMN_FORM_OUT_LOADS)
    assert bf16.count("raw[j] = *reinterpret_cast<const uint4*>(x + o);") == 2 and "rlx_ms_add(st_7, f3.y);" in bf16
    assert bf16.count("const uint4 fu = raw[j];") == 2
    assert "st_7 = rlx_column_ms_reduce<8, 1, 1>(RlxMSN<1>{{st_7}}, col_slots7, nullptr, nullptr, 0).a[0];" in bf16
    assert "rlx_st2_bf16(expf(f3.x - m_6) * inv_6, expf(f3.y - m_7) * inv_7)" in bf16
    f32 = by_sym[launches[1].kernel.root_reference.data]
    assert "make_float4((q.x - m_0) - ls_0, (q.y - m_1) - ls_1, (q.z - m_2) - ls_2, (q.w - m_3) - ls_3)" in f32
    assert compile_all(lowered, arch) == 4


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_forms_filled_vectors_and_batched_output(arch, monkeypatch):
    """Where the 16-byte columns form leaves too few blocks, more slices per
    row (rows.COLUMN_VECTOR_FILLED_BLOCKS_PER_SM: [262, 1000, 128] f16 over
    axis 1 takes 32 slices, 524 blocks, where 8 slices gave 131); the output
    pass issues COLUMN_FORM_OUT_LOADS loads before its stores in the element
    and the vector forms; argmax takes 16-byte reads of 8 (4) rows per thread
    (rows.ARGMAX_COLUMN_VECTORS), one (value, index) per row, merged over
    the slices. Every kernel compiles. (Slices held in registers,
    rows.COLUMN_CACHED_ELEMS, off here.)"""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 0)
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 0)
    monkeypatch.setattr(R, "ARGMAX_COLUMN_PACKED", False)  # (test_argmax_packed_columns_form)

    def lower(*ops):
        g = rlxc.GraphBuilder()
        outs = [getattr(g, op)(g.input(f"x{i}", s, t), axis=1) for i, (op, s, t) in enumerate(ops)]
        lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
        by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
        launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
        return lowered, [(by_sym[op.kernel.root_reference.data], op.grid.get_values(), op.block.get_values())
                         for op in launches]

    def form(src):
        return next(line for line in src.splitlines() if " form: " in line)

    cases = (("softmax", [262, 1000, 128], "f16"), ("argmax", [262, 1000, 128], "bf16"),
             ("softmax", [131, 1000, 128], "f32"), ("argmax", [2048, 128, 128], "f32"))
    _, off = lower(*cases)  # the defaults
    assert [form(s) for s, _, _ in off] == [
        "// row form: columns (32 rows x 8 slices of the reduced axis per block, an element at a time)",
        "// argmax form: columns (32 rows x 8 slices of the axis per block, one element per access)",
        "// row form: columns (16 rows x 16 slices of the reduced axis per block, an element at a time)",
        # f32 argmax's vector form is on (rows.ARGMAX_COLUMN_VECTORS_F32)
        "// argmax form: columns (32 threads of 4 rows x 8 slices of the axis per block, 4 elements per 16-byte access)"], off
    monkeypatch.setattr(R, "COLUMN_VECTOR_FILLED_BLOCKS_PER_SM", 3)
    monkeypatch.setattr(R, "COLUMN_FORM_OUT_LOADS", 4)
    monkeypatch.setattr(R, "ARGMAX_COLUMN_VECTORS", True)
    lowered, on = lower(*cases)
    assert [(form(s), g, b) for s, g, b in on] == [
        ("// row form: columns (8 threads of 8 rows x 32 slices of the reduced axis per block, "
         "8 elements per 16-byte access)", (524, 1, 1), (8, 32, 1)),
        ("// argmax form: columns (8 threads of 8 rows x 32 slices of the axis per block, "
         "8 elements per 16-byte access)", (524, 1, 1), (8, 32, 1)),
        # f32 keeps the element form (COLUMN_VECTORS_F32 off), its output pass batched
        ("// row form: columns (16 rows x 16 slices of the reduced axis per block, an element at a time)",
         (1048, 1, 1), (16, 16, 1)),
        ("// argmax form: columns (32 threads of 4 rows x 8 slices of the axis per block, "
         "4 elements per 16-byte access)", (2048, 1, 1), (32, 8, 1))], on
    soft, arg, f32, arg32 = (s for s, _, _ in on)
    # the vector softmax's output pass: 4 uint4 loads, then the stores
    assert soft.count("// 4 loads in flight") == 2 and "raw[j] = *reinterpret_cast<const uint4*>(x + o);" in soft
    assert "st_7 = rlx_column_ms_reduce<32, 1, 1>(RlxMSN<1>{{st_7}}, col_slots7, nullptr, nullptr, 0).a[0];" in soft
    assert ("for (int j = 0; j < 4; ++j) { const long long k = k0 + j * 16; if (k < 1000LL) { const long long o = "
            "base + (k * 128LL); const float v = vs[j]; y[o] = expf(v - m) * inv; } }") in f32
    assert "const long long r = (gt < 4192LL ? gt : 4191LL) * 8;" in arg
    assert ("{ const float v7 = f3.y; if (bi[7] < 0 || (v7 != v7 && bv[7] == bv[7]) || (v7 > bv[7] && bv[7] == bv[7])) "
            "{ bv[7] = v7; bi[7] = k; } }") in arg
    assert "for (int e = 0; e < 8; ++e) y[r + e] = bi[e];" in arg and "__shared__ long long col_i[2048];" in arg
    assert "const float4 q = raw[j];" in arg32 and "{ const float v3 = q.w;" in arg32
    assert compile_all(lowered, arch) == 4


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_held_in_registers(arch, monkeypatch):
    """rows.COLUMN_CACHED_ELEMS: each thread of the columns form keeps its
    slice of the axis in registers (read once), the slices doubled until a
    slice is that short (64 f32, 32 f16/bf16: COLUMN_CACHED_ELEMS_16);
    the statistics merged into one reduction over the slices; ragged slices
    guard each element; taken before the 16-byte vector form. Every kernel
    compiles."""
    from rlxc.codegen import rows as R

    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [131, 1000, 128]), axis=1), g.log_softmax(g.input("b", [64, 2048, 128]), axis=1),
            g.softmax(g.input("c", [64, 21, 4096], "bf16"), axis=1), g.softmax(g.input("d", [8, 256, 128], "f16"), axis=1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    srcs = [by_sym[op.kernel.root_reference.data] for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    forms = [next(line for line in src.splitlines() if "row form" in line) for src in srcs]
    assert forms[0] == "// row form: columns (16 rows x 16 slices of the reduced axis per block, 63 elements per slice held in registers)"
    assert forms[1] == "// row form: columns (8 rows x 32 slices of the reduced axis per block, 64 elements per slice held in registers)"
    assert "11 elements per slice held in registers" in forms[2]  # before the vector form (COLUMN_CACHED_OVER_VECTORS)
    assert "16 elements per slice held in registers" in forms[3], forms  # 1024 rows: 256 over 16 slices
    a = srcs[0]
    assert "float v[63];  // this thread's slice, in registers" in a
    # 1000 = 16 x 62.5: only the slices' last element guarded (rows.COLUMN_SLICE_PEEL)
    assert ("for (int j = 0; j < 62; ++j) { const long long k = threadIdx.y + j * 16; { const long long o = "
            "base + (k * 128LL); v[j] = x[o]; } }\n  { const int j = 62; const long long k = threadIdx.y + j * 16; "
            "if (k < 1000LL) { const long long o = base + (k * 128LL); v[j] = x[o]; } }") in a
    assert "const RlxMS st = rlx_column_ms_reduce<16, 1, 1>(RlxMSN<1>{{RlxMS{m, s}}}, col_slots0, nullptr, nullptr, 0).a[0];" in a and a.count("x[o]") == 2  # read once (peeled)
    assert "for (int j = 0; j < 64; ++j) { v[j] = v[j] - mz; s += expf(v[j]); }" in srcs[1]  # 2048 = 32 x 64: no guard
    assert compile_all(lowered, arch) == 4
    monkeypatch.setattr(R, "COLUMN_CACHED_OVER_VECTORS", False)
    monkeypatch.setattr(R, "COLUMN_CACHED_MERGED", False)
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("c", [64, 21, 4096], "bf16"), axis=1), g.softmax(g.input("d", [8, 256, 128], "f16"), axis=1),
            g.softmax(g.input("e", [262, 1000, 128], "f16"), axis=1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    c, d, e = (by_sym[op.kernel.root_reference.data] for op in lowered.walk() if op.name == "rlx_cuda.launch")
    assert "8 elements per 16-byte access" in c  # the vector form first
    # not merged: the max and the sum each reduced over the slices
    assert "16 elements per slice held in registers" in d and d.count("rlx_column_reduce") == 2, d
    # f16 slices of 63 are too long to hold (16 rows x 32 slices would be 16 bytes wide): the slices
    # spread over 4 blocks of 32 rows (rows.COLUMN_GRID, COLUMN_GRID_ROWS_16), merged once
    assert "columns over blocks (32 rows x 8 slices of the reduced axis per block, 4 blocks per 32 rows, 32 " \
        "elements per slice held in registers)" in e and e.count("rlx_column_grid_reduce<8, 4>") == 2, e
    assert compile_all(lowered, arch) == 3
    monkeypatch.setattr(R, "COLUMN_GRID", False)  # the element form
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("e", [262, 1000, 128], "f16"), axis=1)])
    e = kernels_of(rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count=132}}"))[0].source.data
    assert "32 rows x 8 slices of the reduced axis per block, an element at a time" in e, e


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_over_blocks(arch, monkeypatch):
    """rows.COLUMN_GRID: where a block's slices cannot hold the axis in
    registers (f16 slices of more than 32, f32 of more than 64), a group of
    16 rows' slices spread over C blocks, each block's tickets giving its
    group and rank, the statistics merged over the block column and then
    over the C blocks through global slots; C grows until the blocks fill
    the GPU (few rows). Every kernel compiles. (16 rows for 2-byte elements
    too here: COLUMN_GRID_ROWS_16's 32 are the next test's.)"""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_GRID_ROWS_16", 16)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTORS", False)  # the f16 cases' form: the next tests'
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [32, 8192, 128], "f16"), axis=1),
            g.log_softmax(g.input("b", [128, 8192, 128]), axis=1),
            g.softmax(g.input("c", [3, 5000, 7]), axis=1),  # 21 rows: 2 groups, the second 5 rows
            g.softmax(g.input("d", [64, 100, 4096]), axis=1),  # a block holds it (COLUMN_CACHED_ELEMS)
            g.softmax(g.input("e", [1, 32768, 128], "f16"), axis=1)]  # 64 blocks, not doubled past half the SMs
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    (a, ga, ba), (b, gb, _), (c, gc, _), (d, _, _), (e, ge, _) = launched(lowered)
    assert ("// row form: columns over blocks (16 rows x 16 slices of the reduced axis per block, 16 blocks per 16 "
            "rows, 32 elements per slice held in registers)") in a and ga == (4096, 1, 1) and ba == (16, 16, 1)
    assert "const long long g_at = (long long)(g_ticket % 4096ull);" in a and "const int sl = rank * 16 + threadIdx.y;" in a
    assert "v[j] = rlx_ld_f16(x[o]); } }" in a and a.count("x[o]") == 1  # the row read once
    assert ("rlx_column_ms_reduce<16, 16, 1>(RlxMSN<1>{{RlxMS{m, s}}}, col_slots0, ENTRY_part0 + g * 256, "
            "ENTRY_arrived + g * 16, rank).a[0];").replace("ENTRY", a.split("__device__ unsigned long long ")[1].split("_ticket")[0]) in a
    assert "8 blocks per 16 rows, 64 elements per slice" in b and gb == (8192, 1, 1)
    # 21 rows: 2 groups; 5000 over 5 x 16 slices of 63 elements, doubled to 10 blocks while the blocks are few
    assert "10 blocks per 16 rows, 32 elements per slice" in c and gc == (20, 1, 1)
    assert "const long long r = min(g * 16 + threadIdx.x, 20LL);" in c
    assert "row form: columns (" in d and "columns over blocks" not in d
    assert "64 blocks per 16 rows, 32 elements per slice" in e and ge == (512, 1, 1)
    assert compile_all(lowered, arch) == 5
    for k in kernels_of(lowered)[:3]:
        assert k.attributes["rlx.co_resident"].value.data in (16, 8, 10)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_over_blocks_of_32_rows_for_2_byte_elements(arch, monkeypatch):
    """rows.COLUMN_GRID_ROWS_16: 2-byte elements take groups of 32 rows (a
    warp reads 64 consecutive bytes of one slice), 8 slices a block, where
    C stays within its cap; else 16 rows; f32 keeps 16. Every kernel
    compiles. (The f16/bf16 cases with an inner axis of 128 take
    rows.COLUMN_GRID_VECTORS by default: the next test's.)"""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_GRID_VECTORS", False)
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [32, 8192, 128], "f16"), axis=1),
            g.softmax(g.input("e", [1, 32768, 128], "bf16"), axis=1),  # 32 rows would need 128 blocks: 16
            g.softmax(g.input("h", [5, 3000, 49], "f16"), axis=1),  # groups across outer indices
            g.log_softmax(g.input("b", [128, 8192, 128]), axis=1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    (a, ga, ba), (e, ge, be), (h, gh, bh), (b, gb, bb) = launched(lowered)
    assert ("// row form: columns over blocks (32 rows x 8 slices of the reduced axis per block, 32 blocks per 32 "
            "rows, 32 elements per slice held in registers)") in a and ga == (4096, 1, 1) and ba == (32, 8, 1)
    assert "const long long r = min(g * 32 + threadIdx.x, 4095LL);" in a and "const int sl = rank * 8 + threadIdx.y;" in a
    assert "rlx_column_ms_reduce<8, 32, 1>(RlxMSN<1>{{RlxMS{m, s}}}, col_slots0, " in a and "_part0 + g * 1024, " in a
    assert "16 rows x 16 slices of the reduced axis per block, 64 blocks per 16 rows" in e and ge == (512, 1, 1) \
        and be == (16, 16, 1)
    assert "32 rows x 8 slices of the reduced axis per block, 12 blocks per 32 rows" in h and gh == (96, 1, 1)
    assert "const long long r = min(g * 32 + threadIdx.x, 244LL);" in h
    assert "16 rows x 16 slices of the reduced axis per block, 8 blocks per 16 rows" in b and bb == (16, 16, 1)
    assert compile_all(lowered, arch) == 4
    assert [k.attributes["rlx.co_resident"].value.data for k in kernels_of(lowered)] == [32, 64, 12, 8]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_over_blocks_in_16_byte_items(arch, monkeypatch):
    """rows.COLUMN_GRID_VECTORS (held, then lagged: COLUMN_GRID_VECTOR_LAG):
    f16/bf16 softmax over a middle axis whose
    inner axis 16 bytes divide, past what one block holds: TX threads of 8
    rows (16 bytes each, 128 bytes a position at most: all of an inner axis
    of 64, 8 of 16 items of one of 128, 7 of 175 of one of 1400) x TY
    positions a block, 8 items a thread held in registers, C blocks a group
    of rows (the last block's positions guarded where C x span exceeds the
    axis), met in groups of 16 blocks and then over the groups; C = 4
    (an axis of 1000) under COLUMN_GRID_VECTOR_MIN_BLOCKS, an axis whose C
    would pass half of what 132 multiprocessors hold (131072: 512 blocks
    over 264), f32 (off by default; the form's f32 source with it on) and
    an inner axis 8 does not divide keep COLUMN_GRID or its fallbacks.
    Every kernel compiles, the new ones spilling 8 bytes at most."""
    from rlxc.codegen import rows as R
    from rlxc.runtime import nvrtc

    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG", 0)  # the held form first (COLUMN_GRID_VECTOR_LAG below)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG_CAP", True)
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [8, 32768, 128], "bf16"), axis=1),
            g.log_softmax(g.input("b", [2, 3000, 1400], "f16"), axis=1),
            g.softmax(g.input("c", [4, 20000, 64], "f16"), axis=-2),
            g.softmax(g.input("d", [262, 1000, 128], "f16"), axis=1),  # C = 4: COLUMN_GRID
            g.softmax(g.input("e", [1, 131072, 128], "bf16"), axis=1),  # C = 512 > 264: COLUMN_GRID's fallbacks
            g.softmax(g.input("f", [16, 8192, 128], "f32"), axis=1),  # f32: COLUMN_GRID
            g.softmax(g.input("h", [4, 8192, 130], "f16"), axis=1)]  # 130 rows: 8 does not divide them
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    (a, ga, ba), (b, gb, bb), (c, gc, bc), (d, _, _), (e, _, _), (f, _, _), (h, _, _) = launched(lowered)
    assert ("// row form: columns over blocks in 16-byte items (8 threads of 8 rows x 32 positions per block, 128 "
            "blocks per 64 rows, 8 items per thread held in registers, met in groups of 16)") in a
    assert ga == (16 * 128, 1, 1) and ba == (8, 32, 1) and "__launch_bounds__(256, 4)" in a
    assert "const long long base = (g / 2) * 4194304LL + (g % 2) * 64 + threadIdx.x * 8 + at * 128LL;" in a
    assert a.count("*reinterpret_cast<const uint4*>(x + base") == 8 and "if (at +" not in a  # 32768 = 128 x 256
    assert "rlx_ld2v_bf16(q[7].w)" in a and "rlx_ex2f((p7_3.y - mo[7]) * 1.44269504f) * so[7]" in a  # x - max first
    assert "_arrived[(g * 8 + sub) * 16], 1ull)" in a and "% 8 == 7;" in a  # 8 groups of 16 blocks
    assert "(7 threads of 8 rows x 36 positions per block, 11 blocks per 56 rows" in b and gb == (50 * 11, 1, 1)
    assert bb == (7, 36, 1) and "if (at + 252 < 3000) {" in b and "(p0_0.x - mo[0]) - so[0]" in b  # log_softmax
    assert "(8 threads of 8 rows x 32 positions per block, 79 blocks per 64 rows" in c and gc == (4 * 79, 1, 1)
    assert "members = sub == 4 ? 15 : 16;" in c  # 79 = 4 x 16 + 15
    assert "columns over blocks (32 rows x 8 slices" in d
    assert all("16-byte items" not in k for k in (d, e, f, h)), (d, e, f, h)
    for k in kernels_of(lowered)[:3]:
        assert nvrtc.resources(k.source.data, arch, headers=HEADERS).spill_stores <= 8
    assert compile_all(lowered, arch) == 7
    assert [k.attributes["rlx.co_resident"].value.data for k in kernels_of(lowered)[:3]] == [128, 11, 79]
    monkeypatch.setattr(R, "COLUMN_GRID_VECTORS_F32", True)
    g = rlxc.GraphBuilder()
    f = kernels_of(rlxc.run_pipeline(g.build([g.softmax(g.input("f", [16, 8192, 128]), axis=1)]),
                                     f"rlx-cuda{{arch={arch} sm_count=132}}"))[0].source.data
    assert "(8 threads of 4 rows x 32 positions per block, 32 blocks per 32 rows" in f and "expf(q[0].x - mo[0])" in f
    # COLUMN_GRID_VECTOR_SHARED (off): 7 more items a thread in shared memory (8 would pass 48 KB), copied in
    # first, without registers; an axis of 8192 then over 18 blocks
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHARED", 8)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHUFFLE", False)  # (with the shuffles sm_80 spills 16 bytes: both off)
    g = rlxc.GraphBuilder()
    lowered = rlxc.run_pipeline(g.build([g.softmax(g.input("a", [4, 8192, 128], "bf16"), axis=1)]),
                                f"rlx-cuda{{arch={arch} sm_count=132}}")
    s = kernels_of(lowered)[0].source.data
    assert "18 blocks per 64 rows, 8 items per thread held in registers and 7 in shared memory" in s
    assert "__shared__ uint4 qs[1792];" in s and "rlx_cp_async16(&qs[1536 + t], x + base + 57344LL);" in s
    assert s.index("rlx_cp_async16(&qs[0 + t]") < s.index("q[0] = *reinterpret_cast") < s.index("rlx_cp_async_wait_all")
    assert "const uint4 u14 = qs[1536 + t];" in s and "if (at + 448 < 8192)" in s  # 18 x 480 positions > 8192
    assert compile_all(lowered, arch) == 1
    assert nvrtc.resources(s, arch, headers=HEADERS).spill_stores <= 8
    # COLUMN_GRID_VECTOR_LAG: ticket T takes the statistics of its items and writes those of ticket T - LAG's
    # (4 x 132 = 528 tickets back; at least C), read again (streamed); the launch LAG blocks longer, no co-residency
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHARED", 0)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG", 4)

    def lagged(*outs):
        g = rlxc.GraphBuilder()
        lowered = rlxc.run_pipeline(g.build([getattr(g, op)(g.input(f"x{i}", sh, ty), axis=1) for i, (op, sh, ty) in
                                             enumerate(outs)]), f"rlx-cuda{{arch={arch} sm_count=132}}")
        return lowered, launched(lowered)

    # C = 128 lagged, C = 11 (under COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS) held, C = 512 (past half of what 132
    # multiprocessors hold) not this form
    lowered, ((a, ga, _), (b, gb, _), (e, _, _)) = lagged(
        ("softmax", [8, 32768, 128], "bf16"), ("log_softmax", [2, 3000, 1400], "f16"), ("softmax", [1, 131072, 128], "bf16"))
    assert "8 items per thread read for the statistics, read again 528 blocks later for the output" in a
    assert ga == (16 * 128 + 528, 1, 1) and gb == (50 * 11, 1, 1) and "held in registers" in b
    assert "const long long g_at = (long long)(g_ticket % 2576ull);" in a and "if (g_at < 2048) {" in a
    assert "if (g_at >= 528) {" in a and "const long long g = (g_at - 528) / 128;" in a
    assert "q[7] = __ldcs(reinterpret_cast<const uint4*>(x + base + 28672LL));" in a  # the second read
    assert a.index("q[7] = __ldcs(") < a.index("rlx_wait_count(")  # in flight while it waits
    assert "q[7] = *reinterpret_cast<const uint4*>(x + base + 28672LL);" in a  # the first
    assert "__stcs(reinterpret_cast<uint4*>(y + base + 28672LL), " in a and "rlx_ld2v_bf16(q[7].w)" in a
    assert "rlx_wait_count(&" in a and "g_launch + 1ull, 64);" in a and "g_round + 1ull" not in a
    assert "16-byte items" not in e
    assert compile_all(lowered, arch) == 3
    assert [k.attributes.get("rlx.co_resident") is None for k in kernels_of(lowered)[:2]] == [True, False]
    assert nvrtc.resources(a, arch, headers=HEADERS).spill_stores <= 8
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS", 2)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG_CAP", False)
    lowered, ((b, gb, _), (e, ge, _)) = lagged(("log_softmax", [2, 3000, 1400], "f16"), ("softmax", [1, 131072, 128], "bf16"))
    assert gb == (50 * 11 + 528, 1, 1) and "if (at + 252 < 3000) { q[7] = __ldcs(" in b
    assert "512 blocks per 64 rows, 8 items per thread read for the statistics, read again 528 blocks later" in e
    assert ge == (2 * 512 + 528, 1, 1) and compile_all(lowered, arch) == 2
    # COLUMN_GRID_VECTOR_SHUFFLE (on by default): each warp's 4 positions (TX = 8) folded by shuffles, then 8 warps' in
    # shared memory; TX = 7 (an inner axis of 1400) keeps the fold over all 36 positions
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHUFFLE", True)
    lowered, ((a, _, _), (b, _, _)) = lagged(("softmax", [8, 32768, 128], "bf16"), ("log_softmax", [2, 3000, 1400], "f16"))
    assert "st = RlxMSMerge()(st, rlx_shfl(st, 8)); st = RlxMSMerge()(st, rlx_shfl(st, 16));" in " ".join(a.split())
    assert "if (threadIdx.y % 4 == 0) red[(threadIdx.y / 4 * 8 + e) * 8 + threadIdx.x] = st;" in a
    assert "for (int b = 1; b < 8; ++b) st = RlxMSMerge()(st, red[b * 64 + t]);" in a
    assert "rlx_shfl" not in b and "for (int b = 1; b < 36; ++b)" in b
    assert compile_all(lowered, arch) == 2 and nvrtc.resources(a, arch, headers=HEADERS).spill_stores <= 8
    monkeypatch.undo()  # the defaults: lagged 2 x 132 tickets where C is 16 or more, C not capped
    g = rlxc.GraphBuilder()
    lowered, ((a, ga, _), (b, _, _), (e, ge, _)) = lagged(
        ("softmax", [8, 32768, 128], "bf16"), ("softmax", [8, 2048, 128], "f16"), ("softmax", [1, 131072, 128], "bf16"))
    assert "read again 264 blocks later" in a and ga == (16 * 128 + 264, 1, 1) and "held in registers" in b
    assert "512 blocks per 64 rows" in e and "read again 512 blocks later" in e and ge == (2 * 512 + 512, 1, 1)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_over_the_whole_inner_axis(arch):
    """rows.COLUMN_INNER_ROWS: over a middle axis whose inner axis is short
    and 16 does not divide it (7 x 7 pixels), a block takes all of the
    inner axis (X = 49) and Y slices, so that its reads at each step are one
    run of consecutive elements; only where a block moves 4096 bytes or more
    (COLUMN_INNER_MIN_BYTES: f16 21 x 49 stays as it was). Every kernel
    compiles."""
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [1337, 256, 49]), axis=1), g.log_softmax(g.input("b", [300, 64, 49], "bf16"), axis=1),
            g.softmax(g.input("c", [1000, 21, 49], "f16"), axis=1), g.softmax(g.input("d", [50, 256, 7]), axis=-2)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    (a, ga, ba), (b, _, bb), (c, _, _), (d, gd, bd) = launched(lowered)
    assert ("// row form: columns (49 rows (all of the inner axis: one read of consecutive elements) x 5 slices of the "
            "reduced axis per block, 52 elements per slice held in registers)") in a and ga == (1337, 1, 1) and ba == (49, 5, 1)
    assert "__launch_bounds__(245)" in a and "const long long r = min((long long)blockIdx.x * 49 + threadIdx.x, 65512LL);" in a
    assert "rlx_column_ms_reduce<5, 1, 1>(RlxMSN<1>{{RlxMS{m, s}}}, col_slots0, nullptr, nullptr, 0).a[0]" in a and "__shared__ RlxMS col_slots0[245];" in a
    assert "x 5 slices of the reduced axis per block, 13 elements per slice" in b and bb == (49, 5, 1)
    assert "all of the inner axis" not in c  # 21 x 49 x 2 bytes a block: too few
    # at most 16 slices (rows.COLUMN_INNER_MAX_SLICES), not 256 / 7
    assert "(7 rows (all of the inner axis" in d and "x 16 slices" in d and gd == (50, 1, 1) and bd == (7, 16, 1)
    assert compile_all(lowered, arch) == 4


@pytest.mark.parametrize("arch", ARCHS)
def test_columns_slab_form(arch):
    """rows.COLUMN_SLAB_ELEMS: softmax over a middle axis whose short inner
    axis 16 does not divide, where whole-inner-axis blocks would be too
    small: a block reads as many outer indices' elements as fit in shared
    memory, in order, takes each column's max and sum there (2 threads per
    column where the columns leave threads over: `rlx_group_reduce`), and
    writes in order: as 16-byte items where an outer index's elements fill
    whole items (rows.COLUMN_SLAB_VECTORS), else one at a time; each outer
    index's elements padded where that spreads the column statistics' loads
    over the banks (rows.COLUMN_SLAB_PAD). Every kernel compiles."""
    g = rlxc.GraphBuilder()
    outs = [g.softmax(g.input("a", [37449, 64, 7]), axis=1), g.log_softmax(g.input("b", [1000, 21, 31], "f16"), axis=1),
            g.softmax(g.input("c", [5, 300, 3], "bf16"), axis=1), g.softmax(g.input("d", [1000, 21, 49], "f16"), axis=1),
            g.softmax(g.input("e", [4096, 2, 3]), axis=1), g.log_softmax(g.input("f", [9000, 64, 3], "bf16"), axis=1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    (a, ga, _), (b, gb, _), (c, gc, _), (d, _, _), (e, ge, _), (f, _, _) = launched(lowered)
    # 17 x 448 elements and 2 x 17 x 7 column statistics: 7854 floats of at most 8192 (padding
    # would spread the column statistics' loads 1.5x, under rows.COLUMN_SLAB_PAD: none)
    assert ("// row form: columns slab (17 outer indices per block: 17 x 64 x 7 consecutive elements in shared memory, "
            "read and written in order, 16-byte items (4 elements); 2 threads per column)") in a and ga == (2203, 1, 1)
    assert "__shared__ __align__(16) float slab[7616];" in a and "m = rlx_group_reduce<2>(m, RlxMax());" in a
    assert "*reinterpret_cast<float4*>(slab + p4 * 4) = f;" in a
    assert "const int count = (int)min(17LL, 37449LL - o0) * 448;" in a
    assert "const float4 f = reinterpret_cast<const float4*>(x + base)[p4];" in a
    # the 4 elements of an item lie in one outer index (4 divides 448); their columns wrap around 7
    assert "const int cb = (p4 * 4 / 448) * 7, r = p4 * 4 % 7;" in a
    assert "float r3; { const int c = cb + (r + 3) % 7; const float v = v3; r3 = expf(v - cm[c]) * cv[c]; }" in a
    assert "reinterpret_cast<float4*>(y + base)[p4] = make_float4(r0, r1, r2, r3);" in a
    # bf16, 192 elements an outer index: 8-element items, converted two at a time
    assert "16-byte items (8 elements)" in f and "const float2 h0 = rlx_ld2_bf16(hu.x);" in f
    assert "reinterpret_cast<uint4*>(y + base)[p4] = make_uint4(rlx_st2_bf16((v0 - cm[c]) - cv[c]" not in f  # per element
    assert "r7 = (v - cm[c]) - cv[c]; }" in f and "make_uint4(rlx_st2_bf16(r0, r1)" in f
    # 651 f16 elements (1302 bytes) an outer index: one at a time
    assert "16-byte items" not in b and "16-byte items" not in c and "16-byte items" not in e
    assert "7 outer indices per block" in b and "1 thread per column" in b and "rlx_group_reduce" not in b
    assert "y[base + p] = rlx_st_f16((v - cm[c]) - cv[c]);" in b and "cv[c] = logf(s);" in b and gb == (143, 1, 1)
    # 5 outer indices: one a block (a block per multiprocessor where they allow), 16 threads for each of 3 columns
    assert "1 outer indices per block" in c and "16 threads per column" in c and gc == (5, 1, 1)
    assert "padding" not in c and "slab[900]" in c  # one outer index a block: nothing to spread
    assert "slab" not in d  # an inner axis of 32 or more: a warp's rows straddle at most one end (COLUMN_SLAB_INNER)
    # an axis of 2: the column statistics count (31 x 6 x 4 floats: 32 KB within 48 KB of static shared memory)
    assert "31 outer indices per block" in e and "__shared__ float cm[93], cv[93];" in e and ge == (133, 1, 1)
    # 64 x 3 = 192 floats (0 modulo 32 banks) an outer index: 20 floats of padding, 37 outer indices
    assert "37 outer indices per block: 37 x 64 x 3 consecutive elements in shared memory (20 floats of padding each)" in f
    assert "float4* sp = reinterpret_cast<float4*>(slab + (p4 * 8) / 192 * 212 + (p4 * 8) % 192);" in f
    assert "const float* col = slab + (c / 3) * 212 + (c % 3);" in f
    assert compile_all(lowered, arch) == 6


def test_slab_padding_model():
    """rows._slab_wavefronts counts the column statistics' shared-memory
    wavefronts of a slab block: unpadded outer indices of 64 x 3 floats put
    a warp's 32 loads on 6 banks (5.75 words a bank); padded, the same
    block's loads spread (the count the codegen compares)."""
    from rlxc.codegen.rows import _slab_wavefronts

    q, m = 2, 41
    unpadded = _slab_wavefronts(3, 64, m, q, 192)
    # 123 columns x 2 threads: 8 warps (the last of 22 lanes), 32 loads each, 2 passes, 1 shuffle step each
    assert unpadded == 2 * (8 * 32 * 5.75 + 8)
    padded = _slab_wavefronts(3, 64, m, q, 200)
    assert padded < unpadded / 2.5
    assert _slab_wavefronts(3, 64, 1, 16, 192) == _slab_wavefronts(3, 64, 1, 16, 212)  # one outer index: no change


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.usefixtures("no_packed_columns")
def test_columns_form_paired_rows(arch, monkeypatch):
    """rows.COLUMN_PAIRED_ELEMS: f16/bf16 softmax over a middle axis whose
    slices are too long for the single-row form held in registers: two
    neighbouring rows per thread (`inner` even; 4-byte accesses), both
    slices held as f32 pairs, one merged (max, sum) reduction per row; odd
    `inner` keeps the other forms. Every kernel compiles."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_PAIRED_ELEMS", 32)
    monkeypatch.setattr(R, "COLUMN_GRID", False)  # before it
    g = rlxc.GraphBuilder()
    outs = [g.log_softmax(g.input("a", [262, 1000, 128], "f16"), axis=1),
            g.softmax(g.input("b", [64, 2048, 128], "bf16"), axis=1), g.softmax(g.input("c", [262, 1000, 127], "f16"), axis=1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    (a, ga, ba), (b, _, _), (c, _, _) = ((by_sym[op.kernel.root_reference.data], op.grid.get_values(), op.block.get_values())
                                         for op in launches)
    assert ("// row form: columns (8 threads of 2 rows x 32 slices of the reduced axis per block, "
            "32 element pairs per slice held in registers)") in a and ga == (2096, 1, 1) and ba == (8, 32, 1)
    assert "v[j] = rlx_ld2_f16(*reinterpret_cast<const unsigned int*>(x + o));" in a
    assert "*reinterpret_cast<unsigned int*>(y + o) = rlx_st2_f16(v[j].x - ls0, v[j].y - ls1);" in a
    assert "const RlxMS st1 = rlx_column_ms_reduce<32, 1, 1>(RlxMSN<1>{{RlxMS{m1, s1}}}, col_slots1, nullptr, nullptr, 0).a[0];" in a
    assert "64 element pairs" not in b and "element pairs" not in c, (b, c)  # 2048 / 32 = 64 > 32; 127 odd
    assert compile_all(lowered, arch) == 3


@pytest.mark.parametrize("arch", ARCHS)
def test_argmax_lane_groups(arch, monkeypatch):
    """rows.ARGMAX_GROUP_ITEMS: argmax rows short enough that a warp's lanes
    would take fewer than that many 16-byte accesses each take a group of
    fewer lanes (a power of two), shuffling within the group's mask."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "ARGMAX_GROUP_ITEMS", 4)
    g = rlxc.GraphBuilder()
    outs = [g.argmax(g.input("a", [1000, 256], "f16"), axis=-1), g.argmax(g.input("b", [100, 8]), axis=-1),
            g.argmax(g.input("c", [100, 4096], "bf16"), axis=-1)]
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch} sm_count=132}}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    (a, ga), (b, gb), (c, _) = ((by_sym[op.kernel.root_reference.data], op.grid.get_values()) for op in launches)
    assert "// argmax form: lane groups (8 lanes per row, 32 rows per block), 8 elements per 16-byte access" in a
    assert "const unsigned int gmask = 255u << ((threadIdx.x & 31) & ~7);  // this row's lanes" in a
    assert "const float ov = __shfl_xor_sync(gmask, bv, s);" in a and ga == (32, 1, 1)
    assert "lane groups (1 lane per row, 256 rows per block)" in b and "for (int s = 0; s > 0;" in b and gb == (1, 1, 1)
    assert "// argmax form: warp (8 rows per block)" in c  # 512 accesses: 16 a lane
    assert compile_all(lowered, arch) == 3


@pytest.mark.parametrize("arch", ARCHS)
def test_argmax_over_a_middle_axis_in_the_columns_form(arch, monkeypatch):
    """rows.ARGMAX_COLUMNS (on by default): argmax over a non-contiguous
    axis takes the columns form where softmax's would: each thread scans its
    slice of the axis, the slices' (value, index) pairs merged in shared
    memory by rlx_argmax_better; the threads past the last row store
    nothing. Off, the warp form as before (a whole warp per row here: lane
    groups, rows.ARGMAX_GROUP_ITEMS, are test_argmax_lane_groups')."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "ARGMAX_GROUP_ITEMS", 0)

    def forms():
        g = rlxc.GraphBuilder()
        outs = [g.argmax(g.input("a", [2, 21, 64, 64], "f16"), axis=1),  # 8192 rows of 21: 32 x 8
                g.argmax(g.input("b", [1, 5, 300001]), axis=1, keepdims=True),  # short axis, many rows: 1 slice
                g.argmax(g.input("c", [3, 100, 40], "i32"), axis=1)]  # 120 rows: the warp form
        lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
        by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
        launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
        return lowered, [(next(line for line in by_sym[op.kernel.root_reference.data].splitlines() if "argmax form" in line),
                          op.block.get_values(), by_sym[op.kernel.root_reference.data]) for op in launches]

    monkeypatch.setattr(R, "ARGMAX_COLUMNS", False)
    _, off = forms()
    assert [f for f, _, _ in off] == ["// argmax form: warp (8 rows per block), one element per access"] * 3
    monkeypatch.setattr(R, "ARGMAX_COLUMNS", True)
    lowered, on = forms()
    assert [(f, b) for f, b, _ in on] == [
        ("// argmax form: columns (32 rows x 8 slices of the axis per block, one element per access)", (32, 8, 1)),
        ("// argmax form: columns (256 rows x 1 slices of the axis per block, one element per access)", (256, 1, 1)),
        ("// argmax form: warp (8 rows per block), one element per access", (256, 1, 1))], on
    src = on[0][2]
    # 8 slices of at most 3 elements: the loads first, 4 in flight (rows.ARGMAX_COLUMN_LOADS)
    assert "for (long long k0 = threadIdx.y; k0 < 21LL; k0 += 4 * 8) {  // 4 loads in flight" in src
    assert "if (k < 21LL) { const long long o = base + (k * 4096LL); vs[j] = (float)rlx_ld_f16(x[o]); }" in src
    assert "col_v[threadIdx.y * 32 + threadIdx.x] = bv; col_i[threadIdx.y * 32 + threadIdx.x] = bi;" in src
    assert "rlx_argmax_better(ov, oi, bv, bi)" in src and "if (rt < 8192LL) y[r] = bi;" in src
    assert "col_v" not in on[1][2] and "if (rt < 300001LL) y[r] = bi;" in on[1][2]
    # one slice of 5: from 0 and unrolled whole, its loads in flight together (rows.ARGMAX_ONE_SLICE_UNROLL)
    assert "  #pragma unroll\n  for (long long k = 0; k < 5LL; k += 1) { const long long o = base + (k * 300001LL);" in on[1][2]
    assert compile_all(lowered, arch) == 3


@pytest.mark.parametrize("arch", ARCHS)
def test_streamed_rows_split_over_blocks(arch):
    """Rows past the grid form's reach are read twice (online statistics,
    then the output). Where they are too few to fill the GPU a block each,
    each row is split over blocks that meet through global memory
    (rows.STREAM_GRID): about 2 blocks per multiprocessor in all, at most
    half the multiprocessors per row; f32 rows move float4s, f16/bf16 rows of
    a length 8 divides 8 elements per uint4 (converted in pairs, the column
    params too), other lengths and prologues an element at a time. Rows
    enough to fill the GPU keep a block per row."""
    from rlxc.codegen import rows as R

    assert R.stream_split(2, 1250000, 132) == 66  # capped at half the multiprocessors per row (GRID_SHARE)
    assert R.stream_split(5, 1250000, 132) == 53  # ceil(264 / 5)
    assert R.stream_split(300, 1250000, 132) == 0  # 300 rows fill 132 multiprocessors
    assert R.stream_split(2, 8 * 512 * 3, 132) == 3  # at least 8 accesses per thread
    assert R.stream_split(2, 8 * 512, 132) == 0
    g = rlxc.GraphBuilder()
    h = g.input("h", [2, 4500000], "bf16")
    o = g.input("o", [3, 4500001], "f16")
    x = g.input("x", [300, 2500000])
    gamma, beta = g.param("g", [4500000], "bf16"), g.param("b", [4500000], "bf16")
    s, n = g.fused_residual_layer_norm(h, h, gamma, beta)
    module = g.build([g.softmax(h), g.layer_norm(h, gamma, beta), g.log_softmax(o), s, n, g.rms_norm(x, g.param("gx", [2500000]))])
    sms = 132 if arch == "sm_90" else 108
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    by_sym = {k.sym_name.data: k for k in kernels_of(lowered)}
    got = {}  # op name -> (form line, grid, block, co_resident)
    for op in lowered.walk():
        if op.name == "rlx_cuda.launch":
            k = by_sym[op.kernel.root_reference.data]
            lines = k.source.data.splitlines()
            co = k.attributes.get("rlx.co_resident")
            got[lines[1].split()[1]] = (lines[2], op.grid.get_values()[0], op.block.get_values()[0],
                                        co.value.data if co is not None else None)
            if "softmax (" in lines[1] or "layer_norm (" in lines[1]:
                got[lines[1].split()[1] + " source"] = k.source.data
    c3 = sms // 2  # three rows: ceil(2 x multiprocessors / 3) blocks each, capped at half the multiprocessors
    half = sms // 2
    assert got["rlx.softmax"][:4] == (f"// row form: uint4 ({half} blocks of 512 threads per row, read twice)",
                                      2 * half, 512, half), got
    assert got["rlx.layer_norm"][:4] == (f"// row form: uint4 ({half} blocks of 512 threads per row, read twice)",
                                         2 * half, 512, half), got
    assert got["rlx.log_softmax"] == (f"// row form: looping ({c3} blocks of 512 threads per row, read twice)",
                                      3 * c3, 512, c3), got
    # the residual sum is a prologue: an element at a time
    assert got["rlx.fused_residual_layer_norm"] == (
        f"// row form: looping ({half} blocks of 512 threads per row, read twice)", 2 * half, 512, half), got
    assert got["rlx.rms_norm"] == ("// row form: float4", min(300, sms * 16), 256, None), got
    softmax, norm = got["rlx.softmax source"], got["rlx.layer_norm source"]
    assert "__launch_bounds__(512, 2)" in softmax  # 2 blocks per multiprocessor: the check's room for 2C - 1
    assert f"for (long long k8 = lane; k8 < 562500LL; k8 += {half * 512}) {{" in softmax
    assert "const float2 f0 = rlx_ld2_bf16(fu.x);" in softmax and "rlx_ms_add(st, f3.y);" in softmax
    assert f"st = rlx_grid_reduce<{half}>(st, RlxMSMerge()" in softmax
    assert "make_uint4(rlx_st2_bf16(expf(f0.x - m) * inv, expf(f0.y - m) * inv)" in softmax
    assert "const uint4 gfu = reinterpret_cast<const uint4*>(g + 0)[k8];" in norm
    assert "rlx_st2_bf16((f0.x - mean) * inv * gf0.x + bf0.x" in norm
    assert compile_all(lowered, arch) == 5


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_argmax_peeled_rows(arch, monkeypatch):
    """rows.ARGMAX_PEEL: contiguous rows whose length 16 bytes do not divide
    (odd lengths, vocabularies) are scanned peeled in every form: the head
    before the row's first 16-byte boundary, then the aligned middle, then
    the tail (so a thread meets its indices in increasing order); rows under
    PEEL_REDUCE_MIN vectors, a middle axis and rows 16 bytes divide are read
    as before. Off: an element per access."""
    from rlxc.codegen import rows

    def forms():
        g = rlxc.GraphBuilder()
        module = g.build([g.argmax(g.input("a", [3, 300001], "f16")), g.argmax(g.input("b", [100, 1001])),
                          g.argmax(g.input("c", [64, 77], "bf16")), g.argmax(g.input("d", [64, 27], "bf16")),
                          g.argmax(g.input("e", [9, 1001, 3], "f16"), axis=1), g.argmax(g.input("f", [5, 1000], "f16")),
                          g.argmax(g.input("h", [3, 33], "i64"))])
        lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count=132}}")
        by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
        srcs = [by_sym[op.kernel.root_reference.data] for op in lowered.walk() if op.name == "rlx_cuda.launch"]
        return [next(line for line in s.splitlines() if "argmax form" in line) for s in srcs], srcs, lowered

    named, srcs, lowered = forms()
    peeled = ", peeled: the row's 16-byte aligned middle as items, the fewer than {} elements before and after it one at a time"
    assert named[0].startswith("// argmax form: block, 8 elements per 16-byte access" + peeled.format(8))
    assert "split in" in named[0]  # 3 rows: split over grid.y
    loads = ", 2 loads in flight a lane"
    assert named[1] == "// argmax form: warp (8 rows per block), 4 elements per 16-byte access" + peeled.format(4) + loads
    held = ", the best of 4 items held (their largest element by packed maxima, its index found after the scan)"  # (_16)
    assert named[2] == ("// argmax form: lane groups (2 lanes per row, 128 rows per block), 8 elements per 16-byte access"
                        + peeled.format(8) + held)  # rows.ARGMAX_HELD_DTYPES
    assert "one element per access" in named[3] and "peeled" not in named[3]  # 27 < 4 vectors of 8
    assert "peeled" not in named[4]  # a middle axis
    assert "8 elements per 16-byte access" in named[5] and "peeled" not in named[5]  # 1000: no edges
    assert named[6].endswith("2 elements per 16-byte access" + peeled.format(2) + loads)
    a = srcs[0]
    # head, middle (16-byte items counted from the buffer's start), tail, in that order
    head, mid, tail = a.index("e < hc;"), a.index("reinterpret_cast<const uint4*>(x)[k4]"), a.index("e < tc;")
    assert head < mid < tail
    assert "oi = (gk + j * 256LL) * 8LL + i - base; }" in a  # the held-best form's index (rows.ARGMAX_HELD_DTYPES)
    assert "const long long va = (base + 7LL) / 8LL, vb = (base + 300001LL) / 8LL;" in a
    assert compile_all(lowered, arch) == 7
    monkeypatch.setattr(rows, "ARGMAX_PEEL", False)
    named, _, _ = forms()
    assert not any("peeled" in f for f in named)
    assert "one element per access" in named[0] and "one element per access" in named[1]


def test_argmax_vector_scans_screen_items_and_batch_loads(monkeypatch):
    """rows.ARGMAX_VECTOR_MAX: the block form's threads that scan at least
    ARGMAX_SCREEN_ITEMS 16-byte items take each item's largest element (and
    a NaN probe) first and compare its elements only where it may win; the
    warp forms load ARGMAX_VECTOR_LOADS items a lane before comparing, the
    screened block form ARGMAX_SCREEN_LOADS a thread, in increasing order of
    index (16-bit rows without the held-best form, rows.ARGMAX_HELD_DTYPES)."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "ARGMAX_HELD_DTYPES", ())
    g = rlxc.GraphBuilder()
    module = g.build([g.argmax(g.input("a", [256, 1048576], "f16")), g.argmax(g.input("b", [2048, 32768], "bf16")),
                      g.argmax(g.input("c", [256, 1048576])), g.argmax(g.input("d", [1000, 4096], "bf16"))])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    a, b, c, d = (by_sym[op.kernel.root_reference.data] for op in lowered.walk() if op.name == "rlx_cuda.launch")
    assert rows.ARGMAX_SCREEN_ITEMS == 64 and rows.ARGMAX_VECTOR_LOADS == 2 and rows.ARGMAX_SCREEN_LOADS == 4
    # 256 rows of 131072 items in 3 chunks: 171 items a thread
    assert ("8 elements per 16-byte access, items screened by their largest element, 4 loads in flight a thread, "
            "each row split in 3") in a
    assert "for (long long k0 = k_lo + threadIdx.x; k0 < k_hi; k0 += 1024LL) {" in a  # 4 items of 256 threads
    assert "for (int i = 1; i < 8; ++i) m = fmaxf(m, ve[i]);" in a
    assert "if (bi < 0 || probe != probe || (m > bv && bv == bv)) {  // this item may win" in a
    assert "screened" not in b and "probe" not in b  # 16 items a thread
    assert "compare chains" in c and "screened" not in c  # f32: four chains instead
    assert "// argmax form: warp (8 rows per block), 8 elements per 16-byte access, 2 loads in flight a lane" in d
    assert "for (long long k0 = lane; k0 < 512LL; k0 += 64LL) {" in d and "if (k4 >= 512LL) break;" in d
    assert compile_all(lowered, "sm_90") == 4


def test_argmax_of_few_long_rows_splits_them():
    """argmax rows whose blocks would number under ARGMAX_SPLIT_BELOW per
    multiprocessor are split over grid.y: each chunk's (value, index) to
    scratch, the row's last block to arrive picking the best and resetting
    its counter; enough rows keep a block each."""
    from rlxc.codegen import rows

    g = rlxc.GraphBuilder()
    module = g.build([g.argmax(g.input("a", [2, 1000003], "bf16")), g.argmax(g.input("b", [200, 300000])),
                      g.argmax(g.input("c", [600, 30000]))])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    by_sym = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    a, b, c = (by_sym[op.kernel.root_reference.data] for op in launches)
    assert rows.ARGMAX_SPLIT_BELOW * 132 > 200
    # 2 rows of 1000003 (peeled: 125000 16-byte items): towards 4 blocks per SM
    # (264 chunks), each thread still ARGMAX_SPLIT_MIN_ITEMS (4) items or more:
    # 122 chunks of 1025
    assert rows.ARGMAX_SPLIT_MIN_ITEMS == 4
    assert "peeled: the row's 16-byte aligned middle as items" in a
    assert "each row split in 122 chunks of 1025 items (grid.y)" in a
    assert "== 121u) {  // the row's last block" in a and "_count[r] = 0u;" in a
    assert tuple(launches[0].grid.get_values()) == (2, 122, 1)
    # the first chunk takes the row's head, the last its tail
    assert "if (blockIdx.y == 0) for (int e = threadIdx.x; e < hc; e += 256)" in a
    assert "if (blockIdx.y == gridDim.y - 1) for (int e = threadIdx.x; e < tc; e += 256)" in a
    assert "4 elements per 16-byte access (4 compare chains), each row split in 3 chunks" in b  # 200 rows: 3 blocks each
    assert "split" not in c and launches[2].grid.get_values()[1] == 1  # 600 rows: a block each
    assert compile_all(lowered, "sm_90") == 3


def _empty_reductions(dt: str):
    """Reductions and row ops over tensors with a zero extent (no rows, an
    empty reduced axis, no outputs), in `dt`."""
    g = rlxc.GraphBuilder()
    outs = []
    for i, shape in enumerate(([0, 1000], [3, 0], [0, 300000], [4, 0, 128], [2, 3, 0], [0, 0])):
        x = g.input(f"x{i}", shape, dt)
        last = len(shape) - 1
        outs += [g.reduce_sum(x, axes=[last]), g.reduce_max(x, axes=[last]), g.reduce_min(x, axes=[0]),
                 g.reduce_prod(x, axes=[0]), g.reduce_max(x, axes=list(range(len(shape))))]
        if dt != "i32":
            gamma = g.param(f"g{i}", [shape[-1]], dt)
            outs += [g.reduce_mean(x, axes=[last]), g.softmax(x), g.log_softmax(x), g.rms_norm(x, gamma),
                     *g.fused_residual_layer_norm(x, g.input(f"r{i}", shape, dt), gamma, g.param(f"b{i}", [shape[-1]], dt))]
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt", ["f32", "bf16", "i32"])
def test_zero_extent_reductions_and_rows_compile(arch, dt):
    """A reduction over an empty axis fills its outputs with the empty
    reduction's value (0, 1, -inf / +inf or the integer type's least /
    greatest, NaN for a mean: `reduce form: fill`); row ops over no
    elements launch a kernel that does nothing. Before, these divided by
    zero in the codegen (a split over zero blocks, a group of zero items)
    or declared zero-sized scratch arrays NVRTC refused."""
    lowered = rlxc.run_pipeline(_empty_reductions(dt), f"rlx-cuda{{arch={arch}}}")
    sources = [k.source.data for k in kernels_of(lowered)]
    fills = [src for src in sources if "// reduce form: fill" in src]
    assert fills and not any("split" in src for src in sources)
    if dt == "i32":  # max / min of nothing: the type's least / greatest, not int64's truncated
        assert any("(-2147483647LL - 1)" in src for src in fills) and any("2147483647LL" in src for src in fills)
    else:
        assert any("// row form: none (no elements)" in src for src in sources)
    assert compile_all(lowered, arch) == len(sources)


@pytest.mark.parametrize("dt", ["f32", "bf16", "i32"])
def test_zero_extent_reductions_and_rows_interpret(dt):
    """The interpreter (the GPU test's reference) runs the same module: row
    ops over rows of no elements give empty outputs (numpy's max of an
    empty row raised, its mean warned), reductions their fill values."""
    import warnings

    module = _empty_reductions(dt)
    inputs, params = random_inputs(module, np.random.default_rng())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rlxc.interpret(module, inputs, params)
    shapes = [tuple(t.get_shape()) for t in signature(module).outputs]
    assert [o.shape for o in out] == shapes
    # x1 is [3, 0]: its sum, max over the last axis are 0 and the least value
    per = 11 if dt != "i32" else 5
    s, m = out[per], out[per + 1]
    np.testing.assert_array_equal(s, np.zeros(3, s.dtype))
    least = -np.inf if dt != "i32" else np.iinfo(np.int32).min
    np.testing.assert_array_equal(m, np.full(3, least, m.dtype))


def test_long_rows_of_no_rows_compile():
    """Zero rows of a length that would take the grid form, or argmax's
    split: the guarded streamed forms (no zero-sized scratch arrays, no
    ticket modulo zero, no division by the row count)."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [0, 600000])
    module = g.build([g.softmax(x), g.rms_norm(x, g.param("w", [600000])), g.argmax(g.input("a", [0, 300000]))])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    sources = [k.source.data for k in kernels_of(lowered)]
    assert not any("row form: grid" in src or "split" in src for src in sources)
    assert compile_all(lowered, "sm_90") == 3


@pytest.mark.parametrize("cols,form", [(400000, "cluster (8 blocks of 800"), (450000, "grid (14 blocks of 512"),
                                       (524288, "grid (16 blocks of 512")])
def test_cluster_rows_that_would_spill_take_the_grid_form(cols, form):
    """bf16 softmax rows hold 64 f32 registers of row per thread: a cluster
    block of 800 threads still fits (800 × 80 registers), of 896 or 1024
    it would spill (CLUSTER_REG_OVERHEAD), so those take the grid form."""
    g = rlxc.GraphBuilder()
    lowered = rlxc.run_pipeline(g.build([g.softmax(g.input("x", [2, cols], "bf16"))]),
                                "rlx-cuda{arch=sm_90 sm_count=132}")
    (src,) = [k.source.data for k in kernels_of(lowered)]
    assert f"// row form: {form} threads per row" in src, src[:400]


@pytest.mark.parametrize("peeled_guards", [True, False])
def test_peeled_head_tail_element_in_every_statistic(peeled_guards, monkeypatch):
    """The peeled form's head/tail element (v[16] in rows of 4097 halves)
    takes part in the max and the sum, whichever guards the loops use (with
    PEELED_ACCESS_GUARDS off it once fell into the guarded rows' per-access
    loop, which covers v[0..15] only)."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "PEELED_ACCESS_GUARDS", peeled_guards)
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("x", [3, 4097], "f16"))])
    (k,) = kernels_of(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"))
    src = k.source.data
    assert "17 per thread" in src
    if peeled_guards:  # the whole vectors per access, then the one element
        assert src.count("{ const int j = 16; const long long k = (threadIdx.x < h ?") == 2
    else:  # every slot, the element's column tested
        assert src.count("for (int j = 0; j < 17; ++j) { const long long k =") == 2
    assert compile_all(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"), "sm_90") == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_large_shape_kernels_compile(arch):
    lowered = rlxc.run_pipeline(_large_shapes(), f"rlx-cuda{{arch={arch}}}")
    entries = [k.entry.data for k in kernels_of(lowered)]
    assert sum(e.startswith("rlx_reduce_cols_") for e in entries) == 3, entries
    assert "const long long w0" in kernels_of(lowered)[-1].source.data
    assert compile_all(lowered, arch) == 4


def _indexing_scans():
    """pad (each mode), gather_elements, gather_nd, cumsum (both forms) and
    topk in every type they take."""
    g = rlxc.GraphBuilder()
    outs = []
    for dt in ("f32", "f16", "bf16", "i32", "i64"):
        x = g.input(f"x{dt}", [3, 4, 300], dt)
        for mode in ("constant", "reflect", "edge", "wrap"):
            outs.append(g.pad(x, [1, 0, 2], [0, 3, 1], mode, value=-3.0))
        outs += [g.gather_elements(x, g.input(f"e{dt}", [3, 2, 300], "i32"), 1),
                 g.gather_nd(x, g.input(f"n{dt}", [3, 5, 2], "i64"), batch_dims=1),
                 g.cumsum(x, 1), g.cumsum(x, -1, exclusive=True, reverse=True),  # a thread per line; a block per row
                 *g.topk(x, 3), *g.topk(x, 2, axis=0, largest=False)]
    outs.append(g.pad(g.input("b", [2, 3], "i1"), [1, 1], [0, 2], value=1.0))
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
def test_indexing_and_scan_kernels_compile(arch):
    lowered = rlxc.run_pipeline(_indexing_scans(), f"rlx-cuda{{arch={arch}}}")
    entries = [k.entry.data for k in kernels_of(lowered)]
    # data movement is the same kernel for f16 and bf16 (both 16-bit patterns)
    for family, count in (("pad_constant", 6), ("pad_reflect", 4), ("pad_edge", 4), ("pad_wrap", 4),
                          ("gather_elements", 4), ("gather_nd", 4), ("cumsum_rows", 5), ("topk", 10)):
        assert sum(e.startswith(f"rlx_{family}_") for e in entries) == count, (family, entries)
    assert sum(e.startswith("rlx_cumsum_") and not e.startswith("rlx_cumsum_rows_") for e in entries) == 5
    assert compile_all(lowered, arch) == 46


def _spatial():
    """conv_transpose2d (bias, groups, stride, dilation, output_padding),
    dilated/ceil-mode pools and resize (nearest in every numeric type, linear
    in each float type, ranks 3 to 5) in every type they take."""
    g = rlxc.GraphBuilder()
    outs = []
    for dt in ("f32", "f16", "bf16"):
        x = g.input(f"x{dt}", [2, 4, 7, 6], dt)
        outs += [g.conv_transpose2d(x, g.param(f"w{dt}", [4, 3, 3, 3], dt), g.param(f"b{dt}", [6], dt),
                                    stride=2, padding=(1, 0, 1, 2), output_padding=(1, 0), dilation=(1, 2), groups=2),
                 g.conv_transpose2d(x, g.param(f"v{dt}", [4, 5, 2, 2], dt)),
                 g.max_pool2d(x, 3, 2, 1, dilation=(2, 1), ceil_mode=True),
                 g.avg_pool2d(x, 3, 2, 1, count_include_pad=True, ceil_mode=True),
                 g.avg_pool2d(x, (2, 3), 2, dilation=2, ceil_mode=True),
                 g.resize(x, [2, 4, 14, 3], [1, 1, 2, 0.55], "linear", "half_pixel_symmetric"),
                 g.resize(g.input(f"r{dt}", [3, 5, 2], dt), [3, 9, 2], [1, 1.8, 1], "linear", "align_corners"),
                 g.resize(g.input(f"q{dt}", [1, 2, 3, 4, 5], dt), [1, 2, 5, 6, 4], [1, 1, 5 / 3, 1.5, 0.8], "linear")]
    for dt in ("f32", "f16", "i32", "i64"):
        outs.append(g.resize(g.input(f"n{dt}", [1, 3, 5, 6], dt), [1, 3, 10, 4], [1, 1, 2, 2 / 3], "nearest",
                             "tf_half_pixel_for_nn", "ceil"))  # fmt: skip
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
def test_spatial_kernels_compile(arch):
    lowered = rlxc.run_pipeline(_spatial(), f"rlx-cuda{{arch={arch}}}")
    entries = [k.entry.data for k in kernels_of(lowered)]
    for family, count in (("conv_transpose2d", 6), ("maxpool", 3), ("avgpool", 6), ("resize", 13)):
        assert sum(e.startswith(f"rlx_{family}_") for e in entries) == count, (family, entries)
    assert compile_all(lowered, arch) == 28


def _gemms():
    """Every gemm shape the codegen emits: linear (transposed weight) with
    bias and each epilogue activation, without bias, batched, broadcast."""
    g = rlxc.GraphBuilder()
    outs = []
    for dt in ("f32", "f16", "bf16"):
        x, w, b = g.input(f"x{dt}", [5, 24], dt), g.param(f"w{dt}", [40, 24], dt), g.param(f"b{dt}", [40], dt)
        a = g.input(f"a{dt}", [2, 3, 5, 7], dt)
        outs += [g.linear(x, w, b, activation="relu"), g.linear(x, w, b, activation="gelu_tanh"),
                 g.linear(x, w, b), g.linear(x, w), g.matmul(a, g.input(f"m{dt}", [7, 6], dt)),
                 g.matmul(a, g.input(f"n{dt}", [2, 3, 7, 6], dt))]
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
def test_fallback_gemm_kernels_compile(arch):
    lowered = rlxc.run_pipeline(_gemms(), f"rlx-cuda{{arch={arch} gemm=kernel}}")
    assert not [op for op in lowered.walk() if isinstance(op, rlx_cuda.GemmOp)]
    gemms = [k for k in kernels_of(lowered) if k.entry.data.startswith("rlx_gemm_")]
    assert len(gemms) == 18
    sources = [k.source.data for k in gemms]
    # the activations come from the ops' scalar expressions: relu is rlx_maxf, GELU's tanh form
    assert sum("rlx_maxf(v, v0)" in src for src in sources) == 3
    assert sum("tanhf(" in src for src in sources) == 3
    launches = [op for op in lowered.walk() if isinstance(op, rlx_cuda.LaunchOp)]
    batched = [op for op in launches if op.grid.get_values()[2] == 6]
    assert len(batched) == 6 and all(tuple(op.block.get_values()) == (16, 16, 1) for op in batched)
    assert compile_all(lowered, arch) == len(kernels_of(lowered))


def test_sources_include_the_header_and_name_their_op():
    g = rlxc.GraphBuilder()
    x, y = g.input("x", [4, 16]), g.input("y", [4, 16])
    lowered = rlxc.run_pipeline(g.build([g.softmax(x), g.softmax(y)]), "rlx-cuda")
    (k,) = kernels_of(lowered)  # equal kernels are emitted once
    lines = k.source.data.split("\n")
    assert lines[0] == f'#include "{HEADER_NAME}"' and lines[1] == "// rlx.softmax (op #0 of @main)"
    assert "rlx_block_reduce" not in k.source.data.split("extern")[0]  # helpers live in the header
    with pytest.raises(nvrtc.NvrtcError, match="headers="):
        nvrtc.compile_cubin(k.source.data, "sm_90", "no_headers.cu")


def test_launch_level_round_trips():
    module, _ = EXAMPLES["mlp"](rows=8, hidden=16, ffn=32)
    lowered = rlxc.run_pipeline(module, "rlx-cuda")
    text = str(lowered)
    assert "rlx_cuda.gemm" in text and "rlx_cuda.launch" in text
    assert str(rlxc.parse_module(text)) == text


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_runtime_kernels_compile(arch):
    """The runtime's own kernels (executable.RUNTIME_SOURCE: the memset
    fills and SIGNAL_WAIT's "kernel" flag write) compile with NVRTC, each
    a kernel of its own name, no spill."""
    from rlxc.runtime.executable import RUNTIME_SOURCE

    assert nvrtc.compile_cubin(RUNTIME_SOURCE, arch, "rlx_runtime.cu")
    res = nvrtc.resources(RUNTIME_SOURCE, arch, "rlx_runtime.cu")
    assert res.spill_stores == 0
    for name in ("rlx_fill16", "rlx_fill", "rlx_signal"):
        assert f"Compiling entry function '{name}'" in res.log


# ------------------------------------------------------------------ the cache

SOURCE = 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n'


def test_cache_miss_then_hit():
    stats = nvrtc.CompileStats()
    a = nvrtc.compile_cached(SOURCE, "sm_90", stats=stats)
    b = nvrtc.compile_cached(SOURCE, "sm_90", stats=stats)
    assert (stats.misses, stats.hits) == (1, 1) and a == b
    nvrtc.compile_cached(SOURCE, "sm_80", stats=stats)  # another arch: another entry
    nvrtc.compile_cached(SOURCE.replace("1.0f", "2.0f"), "sm_90", stats=stats)
    assert stats.misses == 3


def test_cache_key_covers_source_options_arch_and_version():
    k = nvrtc.cache_key(SOURCE, "sm_90", nvrtc.DEFAULT_OPTIONS)
    assert k != nvrtc.cache_key(SOURCE + " ", "sm_90", nvrtc.DEFAULT_OPTIONS)
    assert k != nvrtc.cache_key(SOURCE, "sm_80", nvrtc.DEFAULT_OPTIONS)
    assert k != nvrtc.cache_key(SOURCE, "sm_90", ("--std=c++17",))
    with_header = nvrtc.cache_key(SOURCE, "sm_90", nvrtc.DEFAULT_OPTIONS, {"h.cuh": "// a"})
    assert with_header != k
    assert with_header != nvrtc.cache_key(SOURCE, "sm_90", nvrtc.DEFAULT_OPTIONS, {"h.cuh": "// b"})
    assert nvrtc.nvrtc_version() in ("12.%d" % i for i in range(10)) or nvrtc.nvrtc_version().startswith("13.")


def test_corrupt_entry_is_detected_and_recompiled():
    stats = nvrtc.CompileStats()
    good = nvrtc.compile_cached(SOURCE, "sm_90", stats=stats)
    (entry,) = list((nvrtc.cache_dir() / "sm_90").glob("*.cubin"))
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF  # flip bits in the payload
    entry.write_bytes(bytes(data))
    again = nvrtc.compile_cached(SOURCE, "sm_90", stats=stats)
    assert stats.corrupt == 1 and again == good
    entry.write_bytes(b"truncated")
    assert nvrtc.compile_cached(SOURCE, "sm_90", stats=stats) == good
    assert stats.corrupt == 2


def _compile_in_child(args):
    cache, i = args
    import os

    os.environ["RLXC_CACHE_DIR"] = cache
    from rlxc.runtime import nvrtc as n

    return n.compile_cached(SOURCE, "sm_90")


def test_two_processes_writing_at_once(tmp_path):
    cache = str(tmp_path / "shared")
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.map(_compile_in_child, [(cache, 0), (cache, 1), (cache, 2), (cache, 3)])
    assert len(set(results)) == 1
    files = list(Path(cache).rglob("*"))
    assert [f for f in files if f.suffix == ".cubin"] and not [f for f in files if f.suffix == ".tmp"]
    assert nvrtc._read_entry(next(f for f in files if f.suffix == ".cubin")) == results[0]


def test_compile_error_carries_log_and_source_path():
    with pytest.raises(nvrtc.NvrtcError) as info:
        nvrtc.compile_cubin('extern "C" __global__ void k() { undefined_thing(); }', "sm_90", "bad.cu")
    err = info.value
    assert "undefined_thing" in err.log and "identifier" in err.log
    assert err.source_path is not None and "undefined_thing" in err.source_path.read_text()
    assert str(err.source_path) in str(err)


def test_op_without_lowering_names_itself():
    g = rlxc.GraphBuilder()
    x = g.input("x", [4])
    module = rlxc.run_pipeline(g.build([g.exp(x)]), "rlx-plan-memory")  # not fused
    with pytest.raises(Exception, match=r"'rlx.exp' \(op #0 of @main.*\) has no lowering for target cuda sm_90 \(run rlx-fuse-elementwise"):
        rlxc.run_pipeline(module, "rlx-emit-cuda")


def test_unplanned_ir_is_refused():
    g = rlxc.GraphBuilder()
    x = g.input("x", [4])
    with pytest.raises(Exception, match="has no memory plan; run rlx-plan-memory"):
        rlxc.run_pipeline(g.build([g.exp(x)]), "rlx-optimize,rlx-emit-cuda")


def test_gemm_option_is_checked():
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 4])
    with pytest.raises(Exception, match="gemm must be one of cublaslt, kernel, got 'cublas'"):
        rlxc.run_pipeline(g.build([g.matmul(x, x)]), "rlx-cuda{gemm=cublas}")


def test_arch_and_sm_count_options_are_checked():
    """rlx-emit-cuda refuses an arch not shaped sm_XY and a negative
    multiprocessor count (kernels sized for it would be wrong), naming the
    option and the value."""
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("x", [100, 64, 3]), axis=1)])
    with pytest.raises(Exception, match="arch must look like sm_90, got 'sm_9x'"):
        rlxc.run_pipeline(module, "rlx-cuda{arch=sm_9x}")
    with pytest.raises(Exception, match=r"sm_count must be 0 \(the usual count for sm_90\) or more, got -3"):
        rlxc.run_pipeline(module, "rlx-cuda{sm_count=-3}")
    assert rlxc.run_pipeline(module, "rlx-cuda{sm_count=0}") is not None


def _softmax_every_form():
    """softmax and log_softmax in each row form: lane groups (64), a warp
    (1000), a block (4096, and 4097 f16: peeled), clusters (32768; 10001
    f16: windowed) and, behind a scale-and-mask prologue, a fused softmax."""
    g = rlxc.GraphBuilder()
    outs = []
    for k, (cols, d) in enumerate([(64, "f16"), (1000, "f32"), (4096, "bf16"), (4097, "f16"), (32768, "f32"),
                                   (10001, "f16")]):
        x = g.input(f"x{k}", [3, cols], d)
        outs += [g.softmax(x), g.log_softmax(x)]
    s, m = g.input("s", [2, 4, 128, 128], "f16"), g.input("m", [2, 1, 1, 128], "f16")
    outs.append(g.softmax(s * g.constant(0.125, "f16") + m))
    return g.build(outs)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("merged", [True, False])
def test_softmax_merged_statistics_compile_in_every_form(arch, merged, monkeypatch):
    """With rows.MERGED_STATS_<FORM> on, every cached form's softmax reduces
    the threads' (max, sum) pairs once (RlxMSMerge through shuffles, the
    block's shared memory or the cluster's), and compiles; off, two
    reductions (max, then sum) as before."""
    from rlxc.codegen import rows

    for form in ("WARP", "BLOCK", "CLUSTER", "SMEM"):
        monkeypatch.setattr(rows, f"MERGED_STATS_{form}", merged)
    monkeypatch.setattr(rows, "STREAM_ROWS", False)  # 10001 f16 through the cluster form, not the stream form
    lowered = rlxc.run_pipeline(_softmax_every_form(), f"rlx-cuda{{arch={arch}}}")
    sources = [k.source.data for k in kernels_of(lowered)]
    assert len(sources) == 13
    forms = {s.split("// row form: ")[1].split(" ")[0] for s in sources}
    assert forms == ({"warp", "block", "cluster"} if arch == "sm_90" else {"warp", "block", "smem"}), forms
    for src in sources:
        one = "one element per access" in src
        assert ("RlxMSMerge()" in src) == (merged and not one), src
        assert ("RlxMax()" in src) != (merged and not one), src
    if merged and arch == "sm_90":  # one reduction: a single cluster slot array, of (max, sum) pairs
        cluster = [src for src in sources if "row form: cluster" in src and "RlxMSMerge" in src]
        assert cluster and all("__shared__ RlxMS cl_slots0[" in src and "cl_slots1" not in src for src in cluster)
    assert compile_all(lowered, arch) == 13


def _norms_over(g, shapes) -> list:
    """layer_norm and rms_norm (sharing gamma, both params) over [3, cols]
    rows of each (cols, dtype)."""
    outs = []
    for k, (cols, d) in enumerate(shapes):
        x = g.input(f"x{k}", [3, cols], d)
        gamma, beta = g.param(f"g{k}", [cols], d), g.param(f"b{k}", [cols], d)
        outs += [g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma)]
    return outs


@pytest.mark.parametrize("vector_params", [True, False])
def test_windowed_norms_read_params_realigned(vector_params, monkeypatch):
    """In the windowed cluster form (f16/bf16 rows whose length 8 does not
    divide; f32 odd rows with WINDOW_F32), gamma and beta are read inside the
    row as 16-byte vectors shifted to the row's start (`rlx_ld_window`; with
    PARAM_COPIES off, or for a computed gamma), at the window's edges an
    element at a time; with WINDOW_VECTOR_PARAMS off, an element at a time
    everywhere. Every kernel compiles for sm_90."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "WINDOW_VECTOR_PARAMS", vector_params)
    monkeypatch.setattr(rows, "WINDOW_F32", True)
    monkeypatch.setattr(rows, "PARAM_COPIES", False)
    g = rlxc.GraphBuilder()
    outs = _norms_over(g, [(30522, "f16"), (50257, "bf16"), (50257, "f32")])
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90}")
    sources = [k.source.data for k in kernels_of(lowered)]
    assert len(sources) == 6
    for src in sources:
        assert "row form: cluster" in src and "k0 >= 0 && k0 + " in src, src  # windowed
        realigned = src.count("= rlx_ld_window(")
        assert realigned == ((2 if "rlx.layer_norm" in src else 1) if vector_params else 0), src
        assert "rlx_ld_f16(g[k])" in src or "rlx_ld_bf16(g[k])" in src or "g[k]" in src  # the edges
    assert compile_all(lowered, "sm_90") == 6


def test_norm_params_read_from_shifted_copies(monkeypatch):
    """rows.PARAM_COPIES (on by default): the windowed
    cluster form and the peeled block form read layer_norm's gamma and beta
    (PARAM_COPIES_MIN_COLUMNS: not rms_norm's gamma alone, unless 1), where
    they are params, as one aligned 16-byte read from the param's shifted
    copies (`rlx_ld_copy`, a `<name>_c` kernel parameter after the others);
    rlx-emit-cuda lays the copies out once per param in the parameter buffer
    (`rlx.param_copies`, rms_norm then sharing layer_norm's gamma copies)
    and sizes the buffer for them. A computed
    gamma keeps the realignment (windowed, each param on its own) or
    element reads (peeled: all params or none). Off, no copies. Every
    kernel compiles."""
    from xdsl.dialects import func as F

    from rlxc.codegen import rows
    from rlxc.dialects import plan as P

    monkeypatch.setattr(rows, "PARAM_COPIES", True)
    monkeypatch.setattr(rows, "PARAM_COPIES_MIN_COLUMNS", 1)
    block_form_up_to(monkeypatch, 16384)  # f32 layer_norm of 20001 in the cluster form (by default a block)

    def lower():
        g = rlxc.GraphBuilder()
        outs = _norms_over(g, [(50257, "f16"), (4097, "bf16"), (20001, "f32")])
        x, gi = g.input("xi", [3, 30522], "f16"), g.input("gi", [30522], "f16")  # a computed gamma
        outs.append(g.layer_norm(x, gi, g.param("bi", [30522], "f16")))
        lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90 sm_count=132}")
        fn = next(o for o in lowered.walk() if isinstance(o, F.FuncOp))
        return lowered, [k.source.data for k in kernels_of(lowered)], fn

    lowered, srcs, fn = lower()
    forms = [s.splitlines()[2].split(" (")[0] for s in srcs]
    assert forms == ["// row form: cluster"] * 2 + ["// row form: block"] * 2 + ["// row form: cluster"] * 3, forms
    assert "rlx_ld_copy(g_c, h, 100544LL, (k0 + h) * 2)" in srcs[0] and "rlx_ld_copy(b_c, h, 100544LL" in srcs[0]
    assert ", const unsigned short* __restrict__ g_c, const unsigned short* __restrict__ b_c)" in srcs[0]
    assert "rlx_ld_window(" not in srcs[0] and "rlx_ld_f16(g[k])" in srcs[0]  # the edges from the param itself
    # peeled bf16 rows of 4097: vectors p + (h ? 1 : 0) of copy (8 - h) & 7, 8224 bytes a copy
    assert "rlx_ld_copy(g_c, (8 - h) & 7, 8224LL, (long long)(c * 256 + threadIdx.x) * 16 + (h ? 16 : 0))" in srcs[2]
    assert "rlx_ld_copy(g_c, h, 80032LL, (k0 + h) * 4)" in srcs[4]  # f32: 4 copies of 20001 + 4, 16-byte rounded
    # windowed: each param on its own (the computed gamma realigned, the param beta from its copies)
    assert "rlx_ld_window(g, (k0 + h) * 2, h * 2)" in srcs[6] and "rlx_ld_copy(b_c, h, 61072LL" in srcs[6]
    assert "g_c" not in srcs[6]
    copies = P.param_copies(fn)
    assert [(c.elements, c.elem_bytes, c.copies, c.copy_bytes) for c in copies] == [
        (50257, 2, 8, 100544), (50257, 2, 8, 100544), (4097, 2, 8, 8224), (4097, 2, 8, 8224),
        (20001, 4, 4, 80032), (20001, 4, 4, 80032), (30522, 2, 8, 61072)]
    offsets = sorted([(c.offset, c.nbytes) for c in copies])
    assert all(a + n <= b for (a, n), (b, _) in zip(offsets, offsets[1:]))  # no overlap
    assert offsets[-1][0] + offsets[-1][1] <= P.param_bytes(fn)
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    assert str(launches[1]).count("#rlx_cuda.arg<param") == 2  # rms_norm: its gamma and layer_norm's gamma copies
    assert compile_all(lowered, "sm_90") == 7
    # the fused residual norm's peeled rows (a prologue, the same row base) read them too
    g = rlxc.GraphBuilder()
    x, r = g.input("x", [3, 4097], "f16"), g.input("r", [3, 4097], "f16")
    fused = rlxc.run_pipeline(g.build(list(g.fused_residual_layer_norm(x, r, g.param("w", [4097], "f16"),
                                                                        g.param("b", [4097], "f16")))),
                              "rlx-cuda{arch=sm_90 sm_count=132}")
    (src,) = [k.source.data for k in kernels_of(fused)]
    assert "row form: block" in src and "rlx_ld_copy(g_c, (8 - h) & 7, 8224LL" in src and "sum[" in src, src
    assert compile_all(fused, "sm_90") == 1
    monkeypatch.setattr(rows, "PARAM_COPIES_MIN_COLUMNS", 2)  # the default: layer_norm's, not rms_norm's
    _, srcs, fn = lower()
    assert ["rlx_ld_copy" in s for s in srcs] == [True, False, True, False, True, False, True]
    assert len(P.param_copies(fn)) == 7  # layer_norm's gamma and beta copies, three times, and the last one's beta
    monkeypatch.setattr(rows, "PARAM_COPIES", False)
    _, srcs, fn = lower()
    assert not any("rlx_ld_copy" in s for s in srcs) and P.param_copies(fn) == []


def test_param_copies_hold_what_the_kernels_read(monkeypatch):
    """rows.PARAM_COPIES end to end on the CPU: the parameter buffer the
    runtime would upload (`param_images`: params, then the copies at the
    offsets rlx-emit-cuda chose) holds, at every address the kernels'
    `rlx_ld_copy` reads for every row start offset and whole access, the
    gamma and beta elements of that access (the windowed cluster form over
    f16 rows of 50257, the peeled block form over bf16 rows of 4097)."""
    import re

    from xdsl.dialects import func as F

    from rlxc.codegen import rows
    from rlxc.dialects import plan as P
    from rlxc.runtime.executable import param_images
    from rlxc.testing.strategies import random_array
    from rlxc.values import round_bf16

    monkeypatch.setattr(rows, "PARAM_COPIES", True)
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    shapes = [(50257, "f16"), (4097, "bf16")]
    outs = _norms_over(g, shapes)[::2]  # the layer_norms
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90 sm_count=132}")
    fn = next(o for o in lowered.walk() if isinstance(o, F.FuncOp))
    params = {f"{n}{k}": random_array((cols,), d, rng) for k, (cols, d) in enumerate(shapes) for n in "gb"}
    buf = np.zeros(P.param_bytes(fn), np.uint8)
    for off, data, _ in param_images(fn, params):
        raw = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        buf[off:off + raw.size] = raw
    kernels = {k.sym_name.data: k.source.data for k in kernels_of(lowered)}
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    rows_n = 9
    for k, ((cols, d), launch) in enumerate(zip(shapes, launches, strict=True)):
        src = kernels[launch.kernel.root_reference.data]
        names = re.findall(r"__restrict__ (\w+)", src.split("{", 1)[0])
        where = {n: a.value.value.data for n, a in zip(names, launch.args.data, strict=True)}
        for p in "gb":
            want = params[f"{p}{k}"]
            want = (round_bf16(want).view(np.uint32) >> 16).astype(np.uint16) if d == "bf16" else want.view(np.uint16)
            copy = int(re.search(rf"rlx_ld_copy\({p}_c, [^,]+, (\d+)LL", src).group(1))
            for r in range(rows_n):
                base = r * cols
                if "row form: cluster" in src:  # windowed: h elements of window before the row
                    h = base & 7
                    got = [(k0, buf[where[f"{p}_c"] + h * copy + (k0 + h) * 2:][:16].view(np.uint16))
                           for k0 in range(-h, cols, 8) if k0 >= 0 and k0 + 8 <= cols]
                else:  # peeled: h elements before the row's first 16-byte boundary, then whole vectors
                    h = (8 - (base & 7)) & 7
                    s = (8 - h) & 7
                    got = [(h + 8 * q, buf[where[f"{p}_c"] + s * copy + 16 * q + (16 if h else 0):][:16].view(np.uint16))
                           for q in range((cols - h) // 8)]
                assert len(got) >= cols // 8 - 1
                for k0, vec in got:
                    assert np.array_equal(vec, want[k0:k0 + 8]), (d, p, r, h, k0)


def test_shifted_copies_bytes():
    """The runtime's shifted copies (rows.PARAM_COPIES): copy s holds the
    param's bytes from element s on, zeros around, each copy_bytes long."""
    from rlxc.dialects.plan import ParamCopies
    from rlxc.runtime.executable import shifted_copies

    rng = np.random.default_rng()
    n = int(rng.integers(17, 200))
    p = rng.standard_normal(n).astype(np.float16)
    c = ParamCopies(offset=0, source=0, elements=n, elem_bytes=2, copies=8, copy_bytes=-(-(n + 8) // 8) * 16)
    out = shifted_copies(p, c).view(np.float16).reshape(8, -1)
    for s in range(8):
        want = np.zeros(c.copy_bytes // 2, np.float16)
        want[s:s + n] = p
        assert np.array_equal(out[s], want)
        # 16-byte vector q of copy s is the param's elements 8q - s .. 8q - s + 7
        q = int(rng.integers(1, n // 8))
        assert np.array_equal(out[s, 8 * q:8 * q + 8], p[8 * q - s:8 * q - s + 8])
    with pytest.raises(Exception, match="do not fit"):
        shifted_copies(p[:-1], c)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_16bit_multi_step_ops_round_once(dtype):
    """An f16/bf16 op whose scalar form takes several steps (gelu: two
    multiplies, erfc, a multiply) computes them in f32 and rounds once,
    as the reference rounds every op once; its constants stay f32 (1/sqrt(2)
    was rounded to bf16, 0.70703125). One-step ops are left as they were."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 64], dtype)
    module = g.build([g.add(g.gelu(x), x)])
    fused = rlxc.run_pipeline(module, "rlx-fuse-elementwise")
    (region,) = [op for op in fused.walk() if op.name == "rlx.elementwise_region"]
    names = [op.name for op in region.body.block.ops]
    assert names[0] == "arith.extf" and names.count("arith.extf") == 1 and names.count("arith.truncf") == 1
    assert names[-2:] == ["arith.addf", "rlx.yield"]  # the add: in the type itself, one step
    (k,) = kernels_of(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"))
    src = k.source.data
    assert "0.7071067690849304f" in src and "0.70703125f" not in src
    round_fn = "rlx_round_f16(" if dtype == "f16" else "rlx_round_bf16_cvt("
    assert src.count(round_fn) == 1, src  # the gelu's result, once (the add's is the store's)
    assert compile_all(rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90}"), "sm_90") == 1


def test_elementwise_block_shapes():
    """elementwise.BLOCK_THREADS x UNROLL: blocks of 128 threads moving 2
    vectors each (f32 GELU with a tail, f32 bias + GELU, relu, f16 GELU);
    f16/bf16 regions reading a broadcast input as vectors (a bias row)
    take BROADCAST16_THREADS x BROADCAST16_UNROLL (256 x 4); the grid
    covers the vectors and the tail's thread."""
    from rlxc.codegen import elementwise

    g = rlxc.GraphBuilder()
    x, b = g.input("x", [1001, 1283]), g.input("b", [1283])
    hb = g.input("hb", [64], "bf16")
    module = g.build([g.gelu(x), g.gelu(g.add(x, b)), g.relu(x), g.gelu(g.input("h", [64, 64], "f16")),
                      g.gelu(g.add(g.input("h2", [64, 64], "bf16"), hb))])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    (a, ga, ba), (c, _, bc), (d, _, _), (e, _, _), (f, gf, bf) = launched(lowered)
    assert (elementwise.BLOCK_THREADS, elementwise.UNROLL) == (128, 2)
    assert a.splitlines()[2].endswith("a tail of 3 elements, 2 trips per thread, 128 threads a block") and "rlx_erfcf(" in a
    assert all("if (v" not in k and "erff(" not in k for k in (a, c, e))
    assert "float4 p0[2];" in a and "blockIdx.x * 256u" in a and "__launch_bounds__(128)" in a
    assert ga == (-(-(1001 * 1283 // 4 + 1) // 256), 1, 1) and ba == bc == (128, 1, 1)
    assert all(k.splitlines()[2].endswith("2 trips per thread, 128 threads a block") for k in (c, d, e))
    assert f.splitlines()[2].endswith("4 trips per thread, 256 threads a block") and "__launch_bounds__(256)" in f
    assert "uint4 p1[4];" in f and gf == (-(-(64 * 64 // 8) // 1024), 1, 1) and bf == (256, 1, 1)
    assert compile_all(lowered, "sm_90") == 5


def test_param_images_name_what_they_upload():
    """`param_images` labels each upload (the runtime's cuMemcpyHtoD error
    names it): a param by its name, a constant by its place in the param
    buffer; a param not given is named in the error."""
    from xdsl.dialects import func as F

    from rlxc.runtime.executable import param_images

    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 3])
    y = g.add(g.mul(x, g.param("scale", [3])), g.constant(np.array([1.0, 2.0, 3.0], np.float32)))
    lowered = rlxc.run_pipeline(g.build([y]), "rlx-cuda{arch=sm_90 sm_count=132}")
    fn = next(o for o in lowered.walk() if isinstance(o, F.FuncOp))
    whats = [w for _, _, w in param_images(fn, {"scale": np.ones(3, np.float32)})]
    assert "param 'scale'" in whats and any(w.startswith("constant at byte ") for w in whats), whats
    with pytest.raises(rlxc.InputError, match="param 'scale' is missing: expected shape 3 and dtype f32"):
        list(param_images(fn, {}))


def test_scatter_nd_kernels_compile_in_every_type_and_reduction():
    """rlx.scatter_nd's kernel for f32/f16/bf16/i32/i64 and each reduction:
    native atomics where CUDA has them (f32/i32/i64 add, integer max/min),
    compare-and-swap loops elsewhere (16-bit elements on their 32-bit word);
    its blocks co-resident (at most 2 per multiprocessor), which the kernel
    op records; all compile for sm_90."""
    g = rlxc.GraphBuilder()
    outs = []
    for d in ["f32", "f16", "bf16", "i32", "i64"]:
        x, i, u = g.input(f"x{d}", [4, 5, 3], d), g.input(f"i{d}", [2, 6, 2], "i32"), g.input(f"u{d}", [2, 6, 3], d)
        outs += [g.scatter_nd(x, i, u, r) for r in ["none", "add", "mul", "max", "min"]]
    outs.append(g.scatter_nd(g.input("big", [3000, 64]), g.input("bi", [20000, 1], "i64"), g.input("bu", [20000, 64]), "add"))
    lowered = rlxc.run_pipeline(g.build(outs), "rlx-cuda{arch=sm_90 sm_count=132}")
    sources = [k.source.data for k in kernels_of(lowered)]
    assert sum("atomicAdd(y + dst, u[j]);" in s for s in sources) == 3  # f32, i32 and the big f32
    assert sum("rlx_atomic16<true>(y + dst, rlx_ld_bf16(u[j]), RlxProd());" in s for s in sources) == 1
    assert sum("atomicMax(y + dst, u[j]);" in s for s in sources) == 2  # i32, i64
    assert sum("rlx_atomic(y + dst, u[j], RlxMax());" in s for s in sources) == 1  # f32
    big = next(s for s in sources if "1280000LL" in s)
    assert "264 co-resident blocks" in big and "rlx_arrive_and_wait<264>" in big
    co = [k.attributes.get("rlx.co_resident") for k in kernels_of(lowered) if k.source.data == big]
    assert co and co[0] is not None
    assert compile_all(lowered, "sm_90") == len(sources)

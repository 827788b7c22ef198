"""Issue 11's kernel forms without a GPU: every form of the elementwise,
injective and reduction kernels, in f32, f16 and bf16 (and the integer
types where they apply), compiles with NVRTC for sm_80 and sm_90, and each
kernel names its form in its source. The same graphs run against the
interpreter on a GPU in tests/test_gpu_kernels11.py (CASES is shared)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import rlxc
from rlxc.codegen import HEADERS
from rlxc.codegen.injective import coalesce
from rlxc.codegen.rows import reduce_layout
from rlxc.dialects import rlx_cuda
from rlxc.runtime import nvrtc
from strategies import graphs

ARCHS = ["sm_80", "sm_90"]
DTYPES = ["f32", "f16", "bf16"]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path / "cache"))


# --------------------------------------------------------------------------- the cases


def elementwise(g, d):
    """Vector forms with and without a tail, the scalar form, a vector
    broadcast row, a per-element broadcast column, casts across widths and a
    boolean output."""
    outs = []
    for k, s in enumerate(([3], [5], [8], [3, 37], [250, 77], [4099], [64, 128], [16, 2, 24])):
        x, y, b = g.input(f"x{k}", s, d), g.input(f"y{k}", s, d), g.input(f"b{k}", [s[-1]], d)
        # gelu's chain of bf16 roundings may differ from the reference's by
        # an ulp here and there: over a handful of elements that is over the
        # tolerance, so the shortest take one rounding
        outs += [g.gelu(g.add(x, b)) if np.prod(s) >= 64 else g.add(x, b), g.mul(x, y)]
    x, col = g.input("c", [33, 64], d), g.input("col", [33, 1], d)
    other = "f32" if d != "f32" else "bf16"
    outs += [g.sub(x, col), g.cast(g.tanh(x), other), g.lt(x, col), g.select(g.lt(x, col), x, g.exp(col))]
    z = g.input("z", [129, 8], other)  # narrow and wide buffers in one region
    outs.append(g.add(g.cast(z, d), g.input("w", [129, 8], d)))
    return outs


def transposes(g, d):
    """Runs moved as vectors (the head transpose), odd runs, tiled
    transposes (2-D, batched, general), and permutations that move only
    size-1 axes (copies)."""
    cases = [([2, 33, 12, 64], [0, 2, 1, 3]), ([2, 5, 3, 7], [0, 2, 1, 3]), ([2, 16, 24], [1, 0, 2]),
             ([3, 40, 70], [0, 2, 1]), ([70, 33], [1, 0]), ([2, 3, 4, 5], [2, 0, 3, 1]), ([4, 1, 8], [1, 0, 2]),
             ([6, 1, 40, 3], [3, 1, 0, 2]), ([65, 2, 33], [2, 1, 0])]
    return [g.transpose(g.input(f"t{k}", s, d), p) for k, (s, p) in enumerate(cases)]


def slices_concats_gathers(g, d):
    s = g.input("s", [9, 64], d)
    outs = [g.slice(s, [1, 8], [7, 40]), g.slice(g.input("s2", [9, 8], d), [-2, 1], [0, 7], steps=[-3, 2]),
            g.slice(g.input("s3", [5, 30], d), [0, 3], [5, 27])]
    outs += [g.concat([g.input("a", [2, 5], d), g.input("b", [3, 5], d)], axis=0),
             g.concat([g.input("c", [2, 8], d), g.input("e", [2, 16], d)], axis=1),
             g.concat([g.input("f", [3, 7], d), g.input("h", [3, 5], d)], axis=-1),
             g.concat([g.input("i", [2, 3, 64], d), g.input("j", [2, 5, 64], d)], axis=1)]
    outs += [g.gather(g.input("t", [10, 16], d), g.constant(np.array([[3, -1], [0, 9]], np.int64)), axis=0),
             g.gather(g.input("u", [4, 7, 3], d), g.constant(np.array([6, 0, -7], np.int32)), axis=1),
             g.gather(g.input("v", [50, 64], d), g.constant(np.array([49, 0, 7, -3, 12], np.int64)), axis=0),
             g.gather(g.input("w", [3, 10, 24], d), g.constant(np.array([[9, 1], [-1, 4]], np.int64)), axis=1)]
    # the row form of 16-bit rows an element at a time (rows of 256 items or more; f32 rows
    # keep the one-trip form): a partly filled last chunk, an outer axis, rows of 2 chunks
    outs += [g.gather(g.input("r", [40, 1001], d), g.constant(np.array([39, -40, 7, 0, -1, 7], np.int64)), axis=0),
             g.gather(g.input("q", [2, 6, 2057], d), g.constant(np.array([[5, -1], [0, 2]], np.int32)), axis=1),
             g.gather(g.input("o", [5, 4099], d), g.constant(np.array([4, -5, 2], np.int64)), axis=0)]
    return outs


#: Row lengths of the trailing-axis reductions: group form (1..2048
#: elements, odd and unaligned ones too), block form (longer); rows the full
#: 16-byte width does not divide (100, 1001, 4097, 30522 in f16) peeled.
REDUCE_ROWS = [1, 3, 8, 64, 100, 128, 768, 1000, 1001, 2048, 4097, 30522, 32768]


def reductions_last(g, d):
    outs = []
    for n in REDUCE_ROWS:
        x = g.input(f"x{n}", [max(2, min(50, 2**16 // n)), n], d)
        outs += [g.reduce_sum(x, axes=[1]), g.reduce_mean(x, axes=[-1], keepdims=True), g.reduce_max(x, axes=[1])]
        if n <= 8:
            outs += [g.reduce_prod(x, axes=[1]), g.reduce_min(x, axes=[1])]
    return outs


def reductions_other(g, d):
    """Kept innermost axes (the columns form: many outputs, few outputs and
    long reduced axes, odd widths), several reduced axes, everything."""
    outs = []
    for k, (a, n, c) in enumerate([(4, 64, 128), (3, 100, 130), (2, 5000, 8), (5, 7, 3), (2, 3000, 64), (1, 40000, 16)]):
        x = g.input(f"m{k}", [a, n, c], d)
        outs += [g.reduce_sum(x, axes=[1]), g.reduce_max(x, axes=[1], keepdims=True)]
    outs += [g.reduce_mean(g.input("l", [900, 24], d), axes=[0]), g.reduce_min(g.input("l2", [33, 900], d), axes=[0])]
    outs += [g.reduce_max(g.input("w", [2, 7, 3, 30], d), axes=[1, 2], keepdims=True),
             g.reduce_sum(g.input("y", [6, 3, 5], d), axes=[0, 2], keepdims=True),
             g.reduce_mean(g.input("z", [37, 41], d), axes=[0, 1]),
             g.reduce_sum(g.input("o", [5, 1, 6], d), axes=[1])]
    return outs


def reductions_int(g, d):
    return [g.reduce_sum(g.input("a", [4, 5, 3000], d), axes=[1]), g.reduce_max(g.input("b", [9, 900], d), axes=[0]),
            g.reduce_sum(g.input("c", [30, 100], d), axes=[1]), g.reduce_min(g.input("e", [7, 64], d), axes=[-1]),
            g.reduce_prod(g.input("f", [40, 3], d), axes=[1])]


def reductions_split(g, d):
    """Few outputs, long reductions: the columns and block forms split the
    reduced axis over more blocks (a middle axis, few long rows, odd
    lengths, everything, integers)."""
    if d in ("i32", "i64"):
        return [g.reduce_sum(g.input("a", [2, 300000], d), axes=[1]), g.reduce_max(g.input("b", [60000, 5], d), axes=[0])]
    return [g.reduce_sum(g.input("m", [2, 20000, 64], d), axes=[1]), g.reduce_max(g.input("n", [3, 9001, 24], d), axes=[1]),
            g.reduce_sum(g.input("r", [3, 200000], d), axes=[1]), g.reduce_max(g.input("o", [2, 99999], d), axes=[-1]),
            g.reduce_mean(g.input("e", [300000], d), axes=[0]), g.reduce_mean(g.input("c", [150000, 3], d), axes=[0])]


def argmaxes(g, d):
    """A warp per row up to 4096 elements, a block beyond; 16-byte reads of
    contiguous rows whose length allows, element by element otherwise
    (odd lengths, a middle axis, rows of one)."""
    outs = [g.argmax(g.input(f"x{n}", [r, n], d), axis=-1)
            for r, n in ((7, 300), (5, 1024), (3, 1025), (2, 4096), (3, 32768), (2, 1), (9, 8))]
    outs += [g.argmax(g.input("m", [4, 6, 5], d), axis=1, keepdims=True), g.argmax(g.input("l", [2, 3000, 3], d), axis=1)]
    return outs


def rows_narrow(g, d):
    """Warp-form rows of accesses under 16 bytes, several rows a group
    (rows.warp_batch; a lane's accesses past a row's end left out), and
    16-bit rows of 5-7 elements staged through shared memory."""
    outs = []
    for r, n in ((1000, 65), (999, 197), (999, 66), (3001, 3), (5000, 7)):
        x = g.input(f"x{n}", [r, n], d)
        outs += [g.softmax(x), g.layer_norm(x, g.param(f"g{n}", [n], d), g.param(f"b{n}", [n], d)),
                 g.rms_norm(x, g.param(f"w{n}", [n], d))]
    return outs


#: name -> (builder(g, dtype), dtypes, the forms its kernels must name)
CASES = {
    "elementwise": (elementwise, DTYPES, ["elementwise form: vector", "a tail of", "elementwise form: scalar", "cyclic:"]),
    "transpose": (transposes, DTYPES, ["batched copy of runs", "16-byte item", "tiled transpose"]),
    "slice_concat_gather": (slices_concats_gathers, DTYPES, ["strided slice", "concat along axis 1", "gather along axis 0",
                                                                       "gather along axis 1"]),
    "reduce_last": (reductions_last, DTYPES, ["reduce form: group", "reduce form: block", "peeled"]),
    "reduce_other": (reductions_other, DTYPES, ["reduce form: columns", "reduce form: strided"]),
    "reduce_split": (reductions_split, [*DTYPES, "i32"], ["the reduced axis split", "each row split"]),
    "reduce_int": (reductions_int, ["i32", "i64"], ["reduce form: columns", "reduce form: group"]),
    "rows_narrow": (rows_narrow, DTYPES, ["rows per group", "one element per access"]),
    "argmax": (argmaxes, [*DTYPES, "i32", "i64"], ["argmax form: warp", "argmax form: block",
                                                    "elements per 16-byte access", "one element per access"]),
}

PARAMS = [(name, d) for name, (_, dts, _) in CASES.items() for d in dts]


def build(name: str, d: str):
    g = rlxc.GraphBuilder()
    return g.build(CASES[name][0](g, d))


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name,d", PARAMS)
def test_kernel_forms_compile_and_name_their_form(name, d):
    module = build(name, d)
    for arch in ARCHS:
        lowered = rlxc.run_pipeline(module.clone(), f"rlx-cuda{{arch={arch}}}")
        ks = [op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]
        cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], arch, headers=HEADERS)
        assert all(c[:4] == b"\x7fELF" for c in cubins)
        text = "\n".join(k.source.data for k in ks)
        for form in CASES[name][2]:
            assert form in text, form


def _sources(build_fn) -> str:
    g = rlxc.GraphBuilder()
    lowered = rlxc.run_pipeline(g.build(build_fn(g)), "rlx-cuda{arch=sm_90}")
    return "\n".join(op.source.data for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp))


def test_halves_move_16_bytes_and_convert_in_pairs():
    for d in ("f16", "bf16"):
        src = _sources(lambda g: [g.gelu(g.add(g.input("x", [64, 128], d), g.input("b", [128], d)))])
        assert "vector: 8 elements per thread" in src
        assert "p0[u] = reinterpret_cast<const uint4*>(in0)[w];" in src
        assert "p1[u] = reinterpret_cast<const uint4*>(in1)[((w % 16u))];" in src  # the bias row as vectors
        assert f"rlx_ld8_{d}(p0[u], q0);" in src
        assert f"reinterpret_cast<uint4*>(out0)[w] = rlx_st8_{d}(r0);" in src
        assert "rlx_round" not in src.split("r0[l] =")[-2].splitlines()[-1]  # the stored value is rounded once, by the store
    src = _sources(lambda g: [g.gelu(g.input("x", [64, 128]))])
    assert "p0[u] = reinterpret_cast<const float4*>(in0)[w];" in src  # f32 keeps float4


def test_cyclic_bias_rows_split_at_the_wrap(monkeypatch):
    """elementwise.CYCLIC_SPLIT: a bias row of 8191 elements (no vector
    divides it) is read with no wrap test where a vector's columns do not
    wrap, with one where they do; NVRTC compiles both with no spills."""
    from rlxc.codegen import elementwise

    for d, w in (("f32", 4), ("f16", 8), ("bf16", 8)):
        for on in (False, True):
            monkeypatch.setattr(elementwise, "CYCLIC_SPLIT", on)
            src = _sources(lambda g: [g.gelu(g.add(g.input("x", [33, 8191], d), g.param("b", [8191], d)))])
            assert "cyclic: 8191 elements" in src
            assert (f"if (c1 + {w}u <= 8191u) {{  // columns c..c+{w - 1}: no wrap" in src) == on
            assert f"for (int l = 0; l < {w}; ++l) {{ b1[u][l] = in1[c1]; c1 = c1 + 1u == 8191u ? 0u : c1 + 1u; }}" in src
            assert nvrtc.resources(src, "sm_90", headers=HEADERS).spill_stores == 0


def test_cyclic_rows_of_moves_as_shifted_vectors(monkeypatch):
    """elementwise.CYCLIC_WINDOW: an expand of a row no vector divides reads
    it as one shifted 16-byte vector where a vector's columns do not wrap
    (f32, f16, bf16, i32: the vector types of 16 bytes); a region that
    computes (x + bias) keeps W loads of one element unless "all"; NVRTC
    compiles both with no spills."""
    from rlxc.codegen import elementwise

    for d, w, make in (("f32", 4, "make_float4(__uint_as_float(v.x)"), ("i32", 4, "make_int4((int)(v.x)"),
                       ("f16", 8, "p0[u] = v;"), ("bf16", 8, "p0[u] = v;")):
        for window in ("none", "move", "all"):
            monkeypatch.setattr(elementwise, "CYCLIC_WINDOW", window)
            src = _sources(lambda g: [g.expand(g.input("x", [1, 8191], d), [33, 8191])])
            assert (f"if (c0 + {w}u <= 8191u) {{  // columns c..c+{w - 1}: no wrap, one shifted vector" in src) == (window != "none")
            assert (make in src) == (window != "none")
            assert nvrtc.resources(src, "sm_90", headers=HEADERS).spill_stores == 0
            if d != "i32":
                src = _sources(lambda g: [g.gelu(g.add(g.input("x", [33, 8191], d), g.param("b", [8191], d)))])
                assert ("rlx_ld_window(in1" in src) == (window == "all")
                assert nvrtc.resources(src, "sm_90", headers=HEADERS).spill_stores == 0


def test_long_middle_axis_reductions_take_wider_blocks_and_split():
    """rows.SPLIT_LONG_BELOW and COLUMN_LONG_MIN_BYTES: over a middle axis of
    16384 or more, the columns form keeps 128 bytes of outputs a block and
    splits the axis below 2 blocks a multiprocessor; shorter axes keep 64
    bytes and split below 1."""
    def form(shape, d):
        src = _sources(lambda g: [g.reduce_sum(g.input("x", shape, d), axes=[1])])
        return src.splitlines()[2]

    assert "8 items of 8 adjacent outputs per block" in form([128, 16384, 128], "f16")
    assert "the reduced axis split in 2 chunks of 8192" in form([128, 16384, 128], "f16")
    assert "the reduced axis split in 4 chunks of 8192" in form([64, 32768, 128], "bf16")
    assert "8 items of 4 adjacent outputs per block" in form([64, 16384, 128], "f32")
    short = form([64, 4096, 128], "f16")
    assert "4 items of 8 adjacent outputs per block" in short and "split" not in short


def test_split_whole_wave(monkeypatch):
    """rows.SPLIT_WHOLE_WAVE (on): the split's chunks rounded down,
    so that the blocks number at most SPLIT_BLOCKS_PER_SM (4) a
    multiprocessor: [128, 16384, 128] f16 in 2 chunks of its 256 tiles (512
    blocks, not 3 and 768), [64, 32768, 128] in 4 (not 5); [8, 32768, 128]
    in 33 either way (16 tiles: 528 blocks exactly); NVRTC compiles them."""
    from rlxc.codegen import rows

    def forms():
        srcs = [_sources(lambda g: [g.reduce_sum(g.input("x", s, "f16"), axes=[1])])
                for s in ([128, 16384, 128], [64, 32768, 128], [8, 32768, 128])]
        return [src.splitlines()[2].split("split in ")[1].split(" chunks")[0] for src in srcs], srcs

    counts, srcs = forms()
    assert counts == ["2", "4", "33"]
    monkeypatch.setattr(rows, "SPLIT_WHOLE_WAVE", False)
    assert forms()[0] == ["3", "5", "33"]
    for src in srcs:
        assert nvrtc.resources(src, "sm_90", headers=HEADERS).spill_stores == 0


def test_head_transpose_moves_d_runs_as_vectors():
    for d, vw in (("f32", 4), ("f16", 8), ("bf16", 8)):
        src = _sources(lambda g: [g.transpose(g.input("x", [2, 512, 12, 64], d), [0, 2, 1, 3])])
        assert f"{vw} elements per 16-byte item" in src
        assert "const uint4* __restrict__ x = reinterpret_cast<const uint4*>(x_);" in src


def test_reductions_read_16_byte_items():
    for d, vw in (("f32", 4), ("f16", 8), ("bf16", 8)):
        src = _sources(lambda g: [g.reduce_sum(g.input("x", [300, 4096], d), axes=[1])])
        assert f"{vw} elements per item" in src and "uint4 p[4];" in src
        src = _sources(lambda g: [g.reduce_sum(g.input("x", [64, 64, 128], d), axes=[1])])
        assert f"items of {vw} adjacent outputs per block" in src


def test_reductions_over_an_odd_inner_axis():
    """rows.COLUMN_MIN_ELEMS and COLUMN_LOAD_BYTES: over a middle axis whose
    inner axis 16 bytes do not divide (items of one output), threads along
    the axis only as many as leave each 8 elements, and 32 bytes of loads in
    flight per thread; 16-byte items keep 4 loads."""
    src = _sources(lambda g: [g.reduce_sum(g.input("x", [228261, 3, 49], "f16"), axes=[1])])
    assert "256 items of 1 adjacent outputs per block, 1 threads apart along the 3 reduced elements, 16 loads" in src
    assert "for (int s = 0; s > 0; s >>= 1) {" in src  # nothing to combine
    src = _sources(lambda g: [g.reduce_sum(g.input("x", [3000, 21, 49]), axes=[1])])
    assert "2 threads apart along the 21 reduced elements, 8 loads in flight per thread" in src
    src = _sources(lambda g: [g.reduce_sum(g.input("x", [64, 64, 128], "bf16"), axes=[1])])
    assert "items of 8 adjacent outputs per block" in src and "64 reduced elements, 4 loads in flight" in src


def test_warp_rows_hold_their_params_in_registers(monkeypatch):
    """rows.WARP_HELD_PARAMS: the warp form's f32 rows of one element an
    access (and 16-bit rows of a thread each, up to 16 elements:
    WARP_HELD_PARAMS_SOLO_ITEMS) read gamma and beta once per thread, before
    their rows, and the output takes them from registers; 16-bit rows of a
    thread each past 16 elements read them 16 bytes at a time
    (WARP_SOLO_VECTOR_PARAMS), and rows over 2-8 lanes (odd ones of 9-31
    before WARP_STAGED_ODD_SOLO_MIN), or over 16-32 lanes past 9 elements a
    thread, read them per row."""
    from rlxc.codegen import rows

    for d, n in (("f32", 9), ("f32", 13), ("f16", 7), ("bf16", 5)):
        src = _sources(lambda g: [g.layer_norm(g.input("x", [4000, n], d), g.param("g", [n], d), g.param("b", [n], d))])
        head, loop = src.split("for (int u = ", 1) if "for (int u = " in src else src.split("for (long long r = ", 1)
        assert "float ph_g[" in head and "float ph_b[" in head, (d, n)
        assert "ph_g[j]" in loop and "ph_b[j]" in loop and "g[k]" not in loop and "b[k]" not in loop, (d, n)
        src = _sources(lambda g: [g.rms_norm(g.input("x", [4000, n], d), g.param("g", [n], d))])
        assert "float ph_g[" in src and "ph_b" not in src
    for n, held in ((13, True), (21, False)):
        src = _sources(lambda g: [g.layer_norm(g.input("x", [4000, n], "f16"), g.param("g", [n], "f16"),
                                               g.param("b", [n], "f16"))])
        assert "(a thread per row" in src and ("float ph_g[" in src) == held, n
        assert ("__ldg(reinterpret_cast<const uint4*>(g) + c)" in src) != held, n
    monkeypatch.setattr(rows, "WARP_STAGED_ODD_SOLO_MIN", 32)
    src = _sources(lambda g: [g.layer_norm(g.input("x", [4000, 13], "f16"), g.param("g", [13], "f16"),
                                           g.param("b", [13], "f16"))])
    assert "2 threads per row" in src and "ph_g" not in src and "rlx_ld_f16(g[k])" in src
    monkeypatch.undo()
    # rows.WARP_HELD_PARAMS_16_ITEMS: 16-bit rows over 16 or 32 lanes hold theirs up to 9 a thread
    for d, n, held in (("bf16", 89, True), ("f16", 197, True), ("bf16", 257, True), ("f16", 289, False),
                       ("bf16", 577, False)):
        src = _sources(lambda g: [g.layer_norm(g.input("x", [4000, n], d), g.param("g", [n], d), g.param("b", [n], d))])
        assert ("float ph_g[" in src and "float ph_b[" in src) == held, (d, n)
        assert ("inv * ph_g[j] + ph_b[j]" in src) == held and (f"inv * rlx_ld_{d}(g[k])" in src) != held, (d, n)
    # ... but not rows a prologue computes (the fused residual norms': not measured)
    src = _sources(lambda g: list(g.fused_residual_layer_norm(g.input("x", [4000, 197], "f16"), g.input("r", [4000, 197], "f16"),
                                                              g.param("g", [197], "f16"), g.param("b", [197], "f16"))))
    assert "32 threads per row" in src and "ph_g" not in src
    src = _sources(lambda g: [g.layer_norm(g.input("x", [64, 768]), g.param("g", [768]), g.param("b", [768]))])
    assert "ph_g" not in src  # vector accesses read the params as vectors


def test_rope_is_one_kernel_on_cuda(monkeypatch):
    """rlx.rope stays native on cuda where cos/sin's last axis is the
    input's: one kernel (compiled for sm_80 and sm_90 in every float
    type) reading a 16-byte item of each half of a row per thread, narrower
    items or an element a thread where half a row is not a whole number of
    16-byte ones; a table of one column, or
    RopeOp.NATIVE_ON_CUDA off, splits it as other targets do."""
    from rlxc.dialects import rlx

    for d in DTYPES:
        g = rlxc.GraphBuilder()
        module = g.build([g.rope(g.input("x", [2, 8, 17, 64], d), g.param("c", [17, 64], d), g.param("s", [17, 64], d))])
        for arch in ARCHS:
            lowered = rlxc.run_pipeline(module.clone(), f"rlx-cuda{{arch={arch}}}")
            ks = [op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]
            assert len(ks) == 1 and "rlx.rope" in ks[0].source.data
            vw = 4 if d == "f32" else 8
            assert f"a pair of {vw}-element items a thread (16-byte accesses)" in ks[0].source.data
            assert f"hi = lo + {32 // vw}u" in ks[0].source.data  # half a row of 64: 32 elements in items of vw
            (cubin,) = nvrtc.compile_many([("rope.cu", ks[0].source.data)], arch, headers=HEADERS)
            assert cubin[:4] == b"\x7fELF"
    # narrower items where half a row is not a whole number of 16-byte ones; an element a thread
    # where it is no whole number of any (the element form reads x at d and at the other half)
    for xs, d, form in [([2, 3, 4, 12], "f32", "a pair of 2-element items a thread (8-byte"),
                        ([2, 3, 4, 12], "f16", "a pair of 2-element items a thread (4-byte"),
                        ([2, 3, 4, 20], "bf16", "a pair of 2-element items a thread (4-byte"),
                        ([3, 7, 10], "f16", "an element a thread"), ([3, 7, 10], "f32", "an element a thread")]:
        src = _sources(lambda g: [g.rope(g.input("x", xs, d), g.input("c", xs[-2:], d), g.input("s", xs[-2:], d))])
        assert f"rope form: {form}" in src, (xs, d)
        if form == "an element a thread":
            h = xs[-1] // 2
            assert f"i % {xs[-1]}LL < {h}LL ? -" in src and f"x[i + {h}LL]" in src
        (cubin,) = nvrtc.compile_many([("rope.cu", src)], "sm_90", headers=HEADERS)
        assert cubin[:4] == b"\x7fELF"
    split = _sources(lambda g: [g.rope(g.input("x", [2, 8, 17, 64]), g.input("c", [17, 1]), g.input("s", [17, 1]))])
    assert "rlx.rope" not in split and split.count('extern "C"') > 1
    monkeypatch.setattr(rlx.RopeOp, "NATIVE_ON_CUDA", False)
    assert "rlx_rope_" not in _sources(lambda g: [g.rope(g.input("x", [2, 8, 17, 64]), g.input("c", [17, 64]),
                                                          g.input("s", [17, 64]))])


def test_coalesce_and_reduce_layout():
    assert coalesce([2, 512, 12, 64], [0, 2, 1, 3]) == ([2, 512, 12, 64], [0, 2, 1, 3])
    assert coalesce([2, 512, 1, 64], [0, 2, 1, 3]) == ([65536], [0])  # a copy
    assert coalesce([2, 3, 4, 5], [0, 1, 3, 2]) == ([6, 4, 5], [0, 2, 1])
    assert coalesce([2, 3, 4, 5], [2, 3, 0, 1]) == ([6, 20], [1, 0])
    assert coalesce([1, 1], [1, 0]) == ([], [])
    assert reduce_layout([4, 1, 5, 6, 7], [1, 2, 3]) == ([4, 30, 7], [1])
    assert reduce_layout([4, 5, 6], [0, 2]) == ([4, 5, 6], [0, 2])
    assert reduce_layout([5, 1], [1]) == ([5], [])


@pytest.mark.parametrize("d", DTYPES)
def test_unit_axis_transpose_is_a_view_and_its_copy_form_compiles(d):
    """A transpose that moves only size-1 axes canonicalizes to a reshape (a
    view: no kernel); emitted as it is (no canonicalize), it is the copy form."""
    g = rlxc.GraphBuilder()
    module = g.build([g.transpose(g.input("t", [4, 1, 8], d), [1, 0, 2])])
    lowered = rlxc.run_pipeline(module.clone(), "rlx-cuda")
    assert not [op for op in lowered.walk() if isinstance(op, rlx_cuda.LaunchOp)]
    raw = rlxc.run_pipeline(module.clone(), "rlx-plan-memory,rlx-emit-cuda")
    ks = [op for op in raw.ops if isinstance(op, rlx_cuda.KernelOp)]
    assert len(ks) == 1 and "copy (the layout does not change)" in ks[0].source.data
    cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], "sm_90", headers=HEADERS)
    assert cubins[0][:4] == b"\x7fELF"


def test_gathers_of_odd_rows_read_runs():
    """injective.STAGED_RUNS: gathers of rows no vector divides, short or
    long, over any axis and in any dtype, take the staged form's runs
    (each thread's 16 bytes of output, the ids of the two rows they may
    span read once); rows a vector divides keep 16-byte items."""
    for d, g_ in (("f16", 8), ("bf16", 8), ("f32", 4)):
        src = _sources(lambda g: [g.gather(g.input("x", [40, 1001], d), g.constant(np.array([3, -1], np.int64)), axis=0),
                                  g.gather(g.input("y", [2, 6, 2057], d), g.constant(np.array([5, 0], np.int32)), axis=1)])
        assert src.count(f"staged: {2 * g_} elements per thread read {g_} at a time in a run") == 2
        assert "ids[w1]" in src and "ids[w1 % 2u]" in src
    src = _sources(lambda g: [g.gather(g.input("x", [40, 1000], "f16"), g.constant(np.array([3, -1], np.int64)), axis=0)])
    assert "staged" not in src and "gather along axis 0, 8 elements per 16-byte item" in src


def module_kernels(module) -> list[str]:
    """The kernel sources of `module` lowered for sm_90 (132 multiprocessors), in order."""
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    return [op.source.data for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]


def _kernels(build_fn) -> list[str]:
    g = rlxc.GraphBuilder()
    return module_kernels(g.build(build_fn(g)))


def row_ops_module(lengths, m: int, d: str):
    """softmax, log_softmax, layer_norm and rms_norm over [m, n] rows of type
    d for each n in `lengths`, in that order."""
    g = rlxc.GraphBuilder()
    outs = []
    for n in lengths:
        x = g.input(f"x{n}", [m, n], d)
        outs += [g.softmax(x), g.log_softmax(x), g.layer_norm(x, g.param(f"g{n}", [n], d), g.param(f"b{n}", [n], d)),
                 g.rms_norm(x, g.param(f"w{n}", [n], d))]
    return g.build(outs)


@pytest.mark.parametrize("d", ["f16", "bf16"])
def test_computed_16_bit_cluster_rows_hold_64_bytes_a_thread(d):
    """rows.CLUSTER_PROLOGUE_ROW_BYTES and PAIRED_PROLOGUE: the fused residual
    norms over 16-bit rows of 32768 (x + residual computed, not loaded) take
    4 blocks of 256 threads, 32 elements a thread, each word of the packed
    row built from two elements at once, and fit 64 registers spilling 8
    bytes at most, as the plain norms do (at 128 bytes a thread the f16
    residual layer_norm spilled 340)."""
    def build(g):
        x, r = g.input("x", [4, 32768], d), g.input("r", [4, 32768], d)
        return [*g.fused_residual_layer_norm(x, r, g.param("g", [32768], d), g.param("b", [32768], d)),
                *g.fused_residual_rms_norm(x, r, g.param("w", [32768], d))]

    srcs = _kernels(build)
    assert len(srcs) == 2
    for src in srcs:
        assert "cluster (4 blocks of 256 threads per row" in src and "32 per thread" in src
        assert f"rlx_st2_{d}(e2_[0], e2_[1])" in src and "rlx_with_half" not in src
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores <= 8 and res.registers <= 64, res


def test_odd_f32_block_rows_are_peeled():
    """rows.PEEL_F32: f32 rows of odd length in the block form move float4s
    between their 16-byte boundaries, the few elements around them one each
    (the fused residual norms too)."""
    def build(g):
        x, r = g.input("x", [6, 4097]), g.input("r", [6, 4097])
        return [g.layer_norm(x, g.param("g", [4097]), g.param("b", [4097])), g.softmax(x),
                *g.fused_residual_rms_norm(x, r, g.param("w", [4097]))]

    for src in _kernels(build):
        assert "row form: block" in src and "4 elements per access between the row's 16-byte boundaries" in src


@pytest.mark.parametrize("d", ["f16", "bf16"])
def test_narrow_injective_items_take_16_bytes_a_thread(d, monkeypatch):
    """injective.STAGED_MAX_BYTES: 16-bit elements moved one at a time (rows
    no vector divides) go 8 to a thread and are written as 16-byte vectors
    through shared memory; without it (MIN_THREAD_BYTES) 8 element items a
    thread; 16-byte items stay 4 either way. NVRTC compiles the staged form
    (and, for the families in STAGED_RUNS, its runs: a concat's, and a
    gather's, which reads each of its two rows' ids once) for sm_90 and
    sm_75 without spills."""
    from rlxc.codegen import injective as I

    runs_default = I.STAGED_RUNS
    assert set(runs_default) == {"gather", "concat"}
    monkeypatch.setattr(I, "STAGED_RUNS", ())  # a lane an element, through shared memory

    def build(g):
        return [g.concat([g.input("a", [5, 2048], d), g.input("b", [5, 2049], d)], axis=1),
                g.concat([g.input("c", [5, 2048], d), g.input("e", [5, 2048], d)], axis=1)]

    srcs = _kernels(build)
    staged = [s for s in srcs if "staged: 8 elements per thread read a lane each, written as 16-byte vectors" in s]
    assert len(staged) == 1 and "__syncwarp();" in staged[0]
    assert "*reinterpret_cast<uint4*>(y + e) = *reinterpret_cast<const uint4*>(s + at);" in staged[0]
    assert "for (int k = 0; k < 5; ++k) y[e + k] = s[at + k];" in staged[0]  # 5 * 4097 = 20485: a partial vector
    for arch in ("sm_90", "sm_75"):
        assert nvrtc.resources(staged[0], arch, headers=HEADERS).spill_stores == 0
    assert any("8 elements per 16-byte item, 4 items per thread" in s for s in srcs)
    monkeypatch.setattr(I, "STAGED_RUNS", runs_default)  # a run of 8 a thread, packed in registers
    runs = [s for s in _kernels(build) if "staged: 16 elements per thread read 8 at a time in a run" in s]
    assert len(runs) == 1 and "__shared__" not in runs[0]
    assert "make_uint4((unsigned)v[0] | ((unsigned)v[1] << 16), " in runs[0]
    for arch in ("sm_90", "sm_75"):
        assert nvrtc.resources(runs[0], arch, headers=HEADERS).spill_stores == 0
    gathers = _kernels(lambda g: [g.gather(g.input("x", [1000, 77], d), g.input("i", [999], "i64"), axis=0),
                                  g.gather(g.input("z", [5, 3, 21], d), g.input("j", [2], "i64"), axis=1)])
    assert "long long q1 = (long long)ids[w1];" in gathers[0]  # a run's second row, its id read once
    assert "ids[w1 % 2u]" in gathers[1] and "((w1 / 2u) * 3LL + q1) * 21LL" in gathers[1]
    for src in gathers:
        assert "read 8 at a time in a run" in src and nvrtc.resources(src, "sm_90", headers=HEADERS).spill_stores == 0
    monkeypatch.setattr(I, "STAGED_MAX_BYTES", 0)
    srcs = _kernels(build)
    assert any("one element per item, 8 items per thread" in s for s in srcs)


def test_block_form_threads_by_row_length():
    """rows.BLOCK_MIN_ITEMS and BLOCK_ROW_ELEMS: the block form gives each
    thread two 16-byte items at least (16-bit rows of 1536: 96 threads; f32
    rows of 2049: 256) and past 8192 elements 32 elements a thread, up to
    rows of BLOCK_ROW_MAX = 16384 (512 threads), and f32 layer_norm rows up
    to BLOCK_LAYER_NORM_F32_ROW_MAX = 32768 (1024 threads); longer rows
    take the cluster form (test_block_form_reach_by_op_and_dtype); blocks
    of 384 and 544 threads bounded to BLOCK_WIDE_REGS = 56 registers (3 and
    2 blocks a multiprocessor, one more than 64 registers leave). Every
    kernel fits 64 registers and spills 8 bytes at most."""
    bounded = {384: 3, 544: 2}
    cases = [(1536, "f16", 96), (2049, "bf16", 160), (2049, "f32", 256), (8192, "f32", 256), (10001, "f16", 320),
             (12000, "bf16", 384), (16384, "f32", 512), (16385, "f32", 544), (32768, "f32", 1024),
             (32769, "f32", 0)]

    def build(g):
        outs = []
        for k, (n, d, _) in enumerate(cases):
            x = g.input(f"x{k}", [3, n], d)
            outs.append(g.layer_norm(x, g.param(f"g{k}", [n], d), g.param(f"b{k}", [n], d)))
        return outs

    for src, (n, d, threads) in zip(_kernels(build), cases):
        form = src.splitlines()[2]
        if threads:
            assert f"row form: block ({threads} threads per row" in form, (n, d, form)
            bounds = f"{threads}, {bounded[threads]}" if threads in bounded else f"{threads}"
            assert f"__launch_bounds__({bounds})" in src, (n, d, bounds)
        else:
            assert "row form: cluster" in form, (n, d, form)
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores <= 8 and res.registers <= 64, (n, d, res)


def test_block_form_reach_by_op_and_dtype():
    """rows.block_row_max: past BLOCK_ROW_MAX = 16384 the block form keeps
    f32 softmax and log_softmax rows up to 30720 (960 threads), f16/bf16
    softmax and log_softmax up to 22528 (704) and f32 layer_norm up to
    32768 (1024), f32 rms_norm up to 32768 where its rows are whole 16-byte
    vectors and up to 20480 (640) where 4 does not divide them (odd and even); past them softmax
    takes the cluster form (f32) or the stream form (16-bit), and 16-bit
    norms and softmax over a computed row (an `rlx.fusion` prologue) take
    the cluster form from 16385. Every block kernel compiles, spilling 8 bytes at most but
    16-bit softmax in blocks of 672-704 threads (NVRTC 13 gives them 40
    registers: 16-28 bytes, as they were measured)."""
    cases = [("softmax", 30720, "f32", "block (960 threads"), ("log_softmax", 30721, "f32", "cluster"),
             ("log_softmax", 22528, "bf16", "block (704 threads"), ("softmax", 22529, "f16", "stream"),
             ("softmax", 22001, "f16", "block (704 threads"), ("softmax", 20001, "bf16", "block (640 threads"),
             ("layer_norm", 32768, "f32", "block (1024 threads"), ("layer_norm", 32769, "f32", "cluster"),
             ("layer_norm", 16385, "f16", "cluster"), ("rms_norm", 16385, "f16", "cluster"),
             ("rms_norm", 32768, "f32", "block (1024 threads"), ("rms_norm", 24576, "f32", "block (768 threads"),
             ("rms_norm", 32772, "f32", "cluster"), ("rms_norm", 20479, "f32", "block (640 threads"),
             ("rms_norm", 20481, "f32", "cluster"), ("rms_norm", 20478, "f32", "block (640 threads"),
             ("rms_norm", 20482, "f32", "cluster"), ("fused_softmax", 16385, "f32", "cluster")]

    def build(g):
        outs = []
        for k, (op, n, d, _) in enumerate(cases):
            x = g.input(f"x{k}", [3, n], d)
            if op == "layer_norm":
                outs.append(g.layer_norm(x, g.param(f"g{k}", [n], d), g.param(f"b{k}", [n], d)))
            elif op == "rms_norm":
                outs.append(g.rms_norm(x, g.param(f"g{k}", [n], d)))
            elif op == "fused_softmax":
                outs.append(g.softmax(g.mul(x, g.input(f"y{k}", [3, n], d))))
            else:
                outs.append(getattr(g, op)(x))
        return outs

    srcs = _kernels(build)
    assert len(srcs) == len(cases)
    for src, (op, n, d, form) in zip(srcs, cases):
        assert f"// row form: {form}" in src.splitlines()[2], (op, n, d, src.splitlines()[2])
        if form.startswith("block"):
            res = nvrtc.resources(src, "sm_90", headers=HEADERS)
            assert res.spill_stores <= (32 if d != "f32" and n > 20480 else 8), (op, n, d, res)


def test_argmax_block_threads_by_dtype():
    """rows.ARGMAX_BLOCK_THREADS_16: argmax's block form takes blocks of 128
    threads over f16/bf16 rows at least ARGMAX_SPLIT_BELOW (4) blocks a
    multiprocessor (600 on 132: launch bounds, the thread's items 128
    apart, the launch's block), of 256 over f32 rows and fewer rows (6 of
    24577, split over grid.y); rows the warp form takes are as before.
    Every kernel compiles without spills."""
    def build(g):
        return [g.argmax(g.input(f"x{d}{n}", [600, n], d), axis=-1)
                for d, n in (("f16", 24577), ("bf16", 32768), ("f32", 24577), ("f16", 5120))] \
            + [g.argmax(g.input("few", [6, 24577], "f16"), axis=-1)]

    g = rlxc.GraphBuilder()
    lowered = rlxc.run_pipeline(g.build(build(g)), "rlx-cuda{arch=sm_90 sm_count=132}")
    kernels = [op for op in lowered.ops if isinstance(op, rlx_cuda.KernelOp)]
    srcs = [k.source.data for k in kernels]
    assert "argmax form: block (128 threads)" in srcs[0] and "__launch_bounds__(128)" in srcs[0], srcs[0][:600]
    assert "k4 = k0 + j * 128LL;" in srcs[0] and "k0 += 512LL)" in srcs[0], srcs[0]  # 4 loads in flight
    assert "argmax form: block (128 threads)" in srcs[1]
    assert "argmax form: block," in srcs[2] and "__launch_bounds__(256)" in srcs[2]
    assert "argmax form: warp" in srcs[3]
    assert "argmax form: block," in srcs[4] and "split in" in srcs[4] and "__launch_bounds__(256)" in srcs[4]
    launches = [op for op in lowered.walk() if op.name == "rlx_cuda.launch"]
    assert "block [128, 1, 1]" in str(launches[0]) and "block [256, 1, 1]" in str(launches[2]), launches
    for src in srcs:
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, res


@pytest.mark.parametrize("d", ["f16", "bf16"])
def test_wide_even_lanes_capped_where_a_lane_holds_five_accesses(d):
    """rows.WARP_WIDE_EVEN_LANES_MIN_BLOCKS: 16-bit layer_norm rows of 40
    16-byte accesses (320 elements: 8 lanes of 5) ask for 3 blocks of 256
    threads a multiprocessor, and fit 80 registers without spilling; rows
    of 48 (384: 16 lanes of 3) ask nothing."""
    def build(g):
        return [g.layer_norm(x := g.input(f"x{n}", [64, n], d), g.param(f"g{n}", [n], d), g.param(f"b{n}", [n], d))
                for n in (320, 384)]

    five, three = _kernels(build)
    assert "(8 threads per row" in five and "__launch_bounds__(256, 3)" in five, five[:400]
    assert "(16 threads per row" in three and "__launch_bounds__(256)" in three, three[:400]
    res = nvrtc.resources(five, "sm_90", headers=HEADERS)
    assert res.registers <= 80 and res.spill_stores == 0, res


def test_warp_even_lanes(monkeypatch):
    """rows.WARP_EVEN_LANES (on): warp-form rows of 24, 12, 20 and 6 16-byte
    accesses take 8, 4, 4 and 2 lanes (3 or 5 a lane); 10 (5 on 2 lanes:
    16-bit rows only) and powers of two keep a lane an access; f32 rows of 3
    (12 elements) are a thread's each, staged (WARP_STAGED_SOLO_F32), with
    the knob on or off. NVRTC compiles each without spills; off, every other
    row takes a lane an access (f32 rows of 24, f16 of 48 and bf16 of 80,
    then guarded, 6 or 10 accesses over 8 or 16 lanes, are a thread's each
    too). The fused residual norms' computed rows keep
    a lane an access."""
    from rlxc.codegen import rows

    def build(g):
        return ([g.softmax(g.input(f"x{n}", [37, n])) for n in (96, 48, 80, 24, 12, 40, 64)]
                + [g.log_softmax(g.input("h", [9, 192], "bf16")), g.rms_norm(g.input("k", [9, 48], "f16"), g.param("w", [48], "f16")), g.softmax(g.input("e", [9, 80], "bf16"))]
                + [g.fused_residual_rms_norm(g.input("a", [9, 96]), g.input("r", [9, 96]), g.param("v", [96]))[1]])

    def lanes(src):
        n = re.search(r"row form: warp \((\d+|a) threads? per row", src.splitlines()[2]).group(1)
        return 1 if n == "a" else int(n)

    on = _kernels(build)
    assert [lanes(src) for src in on] == [8, 4, 4, 2, 1, 16, 16, 8, 2, 2, 32]
    for src in on:
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, res
    monkeypatch.setattr(rows, "WARP_EVEN_LANES", False)
    assert [lanes(src) for src in _kernels(build)] == [32, 16, 32, 1, 1, 16, 16, 32, 1, 1, 32]  # guarded: staged


def test_warp_batch_guarded(monkeypatch):
    """rows.WARP_BATCH_GUARDED (on): guarded 16-bit warp rows reduced twice
    of 5 accesses or more (softmax of 104, layer_norm of 136: a lane's
    16-byte access past the row's end; shorter ones are staged a thread a
    row, WARP_STAGED_NARROW_SOLO) take 2 rows a group, loaded together; rows
    of 3 accesses (24 elements) do not; NVRTC compiles each without spills.
    Off, all a row at a time."""
    from rlxc.codegen import rows

    def build(g):
        return [g.softmax(g.input("a", [37, 104], "f16")), g.softmax(g.input("b", [37, 24], "bf16")),
                g.layer_norm(g.input("c", [37, 136], "f16"), g.param("w", [136], "f16"), g.param("z", [136], "f16"))]

    on = _kernels(build)
    assert ["2 rows per group" in src.splitlines()[2] for src in on] == [True, False, True]
    for src in on:
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, res
    monkeypatch.setattr(rows, "WARP_BATCH_GUARDED", False)
    assert all("rows per group" not in src.splitlines()[2] for src in _kernels(build))


def test_warp_staged_narrow(monkeypatch):
    """rows.WARP_STAGED_NARROW (8 KB spans) and WARP_STAGED_NARROW_SOLO (56
    bytes): 16-bit warp rows of 24-56 bytes whose vector accesses are
    narrower than 16 bytes (rows of 12, 20 and 28: 8 bytes) or overrun the
    row (24) are staged through shared memory, a thread a row, with their
    vector accesses there, and so are guarded rows of 40 (up to 176 bytes)
    and f32 rows of 12 (WARP_STAGED_SOLO_F32); rows of 16-byte accesses that
    cover the row (32) are not; NVRTC compiles each without spills. Without
    SOLO, the 16-bit norms of 24-56 bytes only, over their lanes (and the
    f32 rows); off, none."""
    from rlxc.codegen import rows

    def build(g):
        outs = []
        for n, d in ((12, "f16"), (20, "bf16"), (24, "f16"), (28, "bf16"), (32, "f16"), (40, "f16"), (12, "f32")):
            x = g.input(f"x{n}{d}", [37, n], d)
            outs += [g.layer_norm(x, g.param(f"g{n}{d}", [n], d), g.param(f"b{n}{d}", [n], d)),
                     g.rms_norm(x, g.param(f"w{n}{d}", [n], d))]
        outs.append(g.softmax(g.input("s", [37, 12], "f16")))
        return outs

    on = _kernels(build)
    assert ["staged" in src.splitlines()[2] for src in on] == [True] * 8 + [False] * 2 + [True] * 5
    assert all("(a thread per row" in src.splitlines()[2] for src in on[:8] + on[10:])
    assert all("the block's 256 rows" in src.splitlines()[2] for src in on[:2])  # 8 KB of rows of 24 bytes
    for src in on:
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, res
    monkeypatch.setattr(rows, "WARP_STAGED_NARROW_SOLO", 0)
    lanes = _kernels(build)
    assert ["staged" in src.splitlines()[2] for src in lanes] == [True] * 8 + [False] * 4 + [True] * 2 + [False]
    assert all("the block's 320 rows" in src.splitlines()[2] for src in lanes[:2])  # over 2 lanes
    monkeypatch.setattr(rows, "WARP_STAGED_NARROW", 0)
    assert all("staged" not in src.splitlines()[2] for src in _kernels(build))


def test_warp_staged_solo_longer_rows(monkeypatch):
    """rows.WARP_STAGED_NARROW_SOLO at 176 bytes (the default): 16-bit rows
    of 36-88 elements of narrow or overrunning accesses staged a thread a
    row; NVRTC compiles softmax, log_softmax, layer_norm and rms_norm of
    each without spills (up to 154 registers at 88). At 0 none of them is
    staged."""
    _check_solo(monkeypatch, "WARP_STAGED_NARROW_SOLO", 176, (36, 40, 72, 88), "bf16")


def test_warp_staged_solo_f32(monkeypatch):
    """rows.WARP_STAGED_SOLO_F32 at 112 bytes (the default): f32 rows of 12,
    20 and 28 elements (16-byte accesses overrunning the row over 4 or 8
    lanes) staged a thread a row; NVRTC compiles softmax, log_softmax,
    layer_norm and rms_norm of each without spills. Off, none is staged."""
    _check_solo(monkeypatch, "WARP_STAGED_SOLO_F32", 112, (12, 20, 28), "f32")


@pytest.mark.parametrize("d", ["f16", "bf16"])
def test_warp_staged_odd_solo(d, monkeypatch):
    """rows.WARP_STAGED_ODD_SOLO at 176 bytes (the default): 16-bit rows of
    odd length (one element an access) of 33-87 elements staged a thread a
    row; NVRTC compiles softmax, log_softmax, layer_norm and rms_norm of each
    spilling 8 bytes at most (ptxas's choice: bf16 rms_norm of 77 over 37
    rows takes 96 registers and spills 8 bytes with its params read 16 bytes
    at a time, none an element at a time; over 64 MiB of rows, 121 and
    none; over 3001 rows some odd lengths spill up to 16 bytes: see
    rows.WARP_STAGED_ODD_SOLO). At 0 none of them is staged."""
    _check_solo(monkeypatch, "WARP_STAGED_ODD_SOLO", 176, (33, 49, 65, 77, 87), d, max_spill=8)


def test_warp_solo_vector_params(monkeypatch):
    """rows.WARP_SOLO_VECTOR_PARAMS (on): the norms' params over odd rows a
    thread each read 16 bytes at a time, 10 reads of each for rows of 77
    halves (the last one past the param's end, inside its 256-byte slot);
    rows of 5 (params held in registers, WARP_HELD_PARAMS) and rows over
    lanes (89) read theirs as before. Off, an element at a time."""
    from rlxc.codegen import rows

    def build(g):
        return [g.layer_norm(g.input(f"x{n}", [37, n], "bf16"), g.param(f"g{n}", [n], "bf16"), g.param(f"b{n}", [n], "bf16"))
                for n in (77, 5, 89)] + [g.rms_norm(g.input("r", [37, 33], "f16"), g.param("w", [33], "f16"))]

    on = _kernels(build)
    vec = [src.count("__ldg(reinterpret_cast<const uint4*>(") for src in on]
    assert vec == [2, 0, 0, 1], vec
    assert "for (int c = 0; c < 10; ++c) {" in on[0] and "for (int c = 0; c < 5; ++c) {" in on[3]
    monkeypatch.setattr(rows, "WARP_SOLO_VECTOR_PARAMS", False)
    assert all("__ldg(reinterpret_cast<const uint4*>(" not in src for src in _kernels(build))


@pytest.mark.parametrize("d", ["f16", "bf16"])
def test_short_odd_rows_staged(d, monkeypatch):
    """rows.WARP_STAGED_ROW_BYTES (200) and WARP_STAGE_SHORT_BYTES (8192):
    softmax, log_softmax and rms_norm over 16-bit rows of odd length 101-255
    staged, a block's span about 8 KB and a whole number of 16-byte accesses
    (rows of 129 over 4 groups: 24, an even count), compiling without
    spills; layer_norm's rows (WARP_STAGED_SHORT_PARAMS) and rows of 99 keep
    their lanes. At 512 bytes none is staged."""
    from rlxc.codegen import rows

    def build(g):
        outs = []
        for n in (99, 101, 129, 197, 255):
            x = g.input(f"x{n}", [3001, n], d)
            outs += [g.softmax(x), g.log_softmax(x), g.rms_norm(x, g.param(f"w{n}", [n], d)),
                     g.layer_norm(x, g.param(f"g{n}", [n], d), g.param(f"b{n}", [n], d))]
        return outs

    srcs = _kernels(build)
    forms = [src.splitlines()[2] for src in srcs]
    staged = [("staged: the block's" in f) for f in forms]
    assert staged == [False] * 4 + [True, True, True, False] * 4, forms
    assert [f.split("the block's ")[1].split(" rows")[0] for f in forms if "staged" in f] == ["40"] * 3 + ["24"] * 3 + ["16"] * 6
    for src in srcs:
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores == 0, res
    monkeypatch.setattr(rows, "WARP_STAGED_ROW_BYTES", 512)
    assert not any("staged: the block's" in src for src in _kernels(build))


def test_warp_staged_odd_solo_bounds():
    """WARP_STAGED_ODD_SOLO takes odd 16-bit rows up to 176 bytes only: rows
    of 89 elements and f32 rows of 77 keep their lanes."""
    def build(g):
        return [g.softmax(g.input("a", [37, 89], "f16")), g.softmax(g.input("b", [37, 77], "f32")),
                g.softmax(g.input("c", [37, 87], "bf16"))]

    assert ["a thread per row" in src.splitlines()[2] for src in _kernels(build)] == [False, False, True]


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_even_rows_peeled(d, monkeypatch):
    """rows.PEEL_EVEN (on, from PEEL_EVEN_MIN = 8193): block-form rows of even
    lengths 16-byte accesses do not divide take the peeled form (16-byte
    accesses between the row's boundaries), f32 rms_norm's excepted
    (PEEL_EVEN_SKIPS_F32_RMS_NORM) and rows a prologue computes (the fused
    residual norm's), and NVRTC compiles each op's kernel without spills;
    shorter rows (4098) keep their 2- or 4-element accesses, as do all with
    PEEL_EVEN off."""
    from rlxc.codegen import rows

    def build(n):
        def fn(g):
            x, r = g.input("x", [37, n], d), g.input("r", [37, n], d)
            gamma, beta = g.param("g", [n], d), g.param("b", [n], d)
            return [g.softmax(x), g.log_softmax(x), g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma),
                    *g.fused_residual_layer_norm(x, r, gamma, beta)]
        return fn

    peeled = "between the row's 16-byte boundaries"
    for n in (8194, 12290):
        srcs = _kernels(build(n))
        for src in srcs:
            op = src.splitlines()[1]
            expect = not (d == "f32" and "rlx.rms_norm" in op or "fused_residual" in op)
            assert (peeled in src.splitlines()[2]) == expect, (n, src.splitlines()[1:3])
            res = nvrtc.resources(src, "sm_90", headers=HEADERS)
            assert res.spill_stores == 0, (n, src.splitlines()[1], res.spill_stores)
    assert not any(peeled in src for src in _kernels(build(4098)))
    monkeypatch.setattr(rows, "PEEL_EVEN", False)
    assert not any(peeled in src for src in _kernels(build(8194)))


SHORT_ODD = (5, 9, 11, 13, 15, 21, 27, 31)


def short_odd_solo_forms(module, d: str, low: int, f32: int) -> list[bool]:
    """Whether each kernel of `module` (softmax, log_softmax, layer_norm and
    rms_norm over each of SHORT_ODD, in order) takes its rows a thread each."""
    return ["(a thread per row" in src.splitlines()[2] for src in module_kernels(module)]


def short_odd_solo_expected(d: str, low: int, f32: int) -> list[bool]:
    """What `short_odd_solo_forms` should give under WARP_STAGED_ODD_SOLO_MIN
    `low` and WARP_STAGED_ODD_SOLO_F32 `f32` (the norms' f32 rows up to
    WARP_STAGED_ODD_SOLO_F32_PARAMS, 36 bytes): 16-bit rows of 5 and 7 a
    thread each in any case (WARP_STAGED_TINY)."""
    if d == "f32":
        return [bool(f32) and 4 * n <= (f32 if k < 2 else 36) for n in SHORT_ODD for k in range(4)]
    return [n < 8 or n >= low for n in SHORT_ODD for _ in range(4)]


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_short_odd_rows_a_thread_each(d, monkeypatch):
    """rows.WARP_STAGED_ODD_SOLO_MIN (9), WARP_STAGED_ODD_SOLO_F32 (128 bytes,
    36 for the norms) and WARP_HELD_PARAMS_SOLO_ITEMS (16), the defaults:
    16-bit odd rows from 9 elements and f32 softmax and log_softmax rows of
    5-31 (the norms' of 5-9) staged a thread a row, compiling without
    spills; the norms' params held in registers (`ph_`) up to 16 elements a
    thread, read 16 bytes at a time past that. At the old settings (32, 0)
    the rows keep their 2-8 lanes."""
    from rlxc.codegen import rows

    def module():
        return row_ops_module(SHORT_ODD, 3001, d)

    assert short_odd_solo_forms(module(), d, 9, 128) == short_odd_solo_expected(d, 9, 128)
    for n, src in zip([n for n in SHORT_ODD for _ in range(4)], module_kernels(module())):
        if "(a thread per row" in src.splitlines()[2]:
            res = nvrtc.resources(src, "sm_90", headers=HEADERS)
            assert res.spill_stores == 0, (n, src.splitlines()[1], res.spill_stores)
        if "rlx_norm_" in src and "(a thread per row" in src.splitlines()[2]:
            assert ("ph_g[" in src) == (n <= 16), (n, src.splitlines()[1])
    monkeypatch.setattr(rows, "WARP_STAGED_ODD_SOLO_MIN", 32)
    monkeypatch.setattr(rows, "WARP_STAGED_ODD_SOLO_F32", 0)
    assert short_odd_solo_forms(module(), d, 32, 0) == short_odd_solo_expected(d, 32, 0)


def _check_solo(monkeypatch, knob: str, value: int, lengths, d: str, max_spill: int = 0) -> None:
    """softmax, log_softmax, layer_norm and rms_norm over [37, n] rows of
    each length in `lengths` (type d): none staged with rows.<knob> at 0;
    at `value`, every kernel staged a thread a row and compiled by NVRTC
    for sm_90 spilling at most `max_spill` bytes."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, knob, 0)
    assert all("staged" not in src.splitlines()[2] for src in module_kernels(row_ops_module(lengths, 37, d)))
    monkeypatch.setattr(rows, knob, value)
    for src in module_kernels(row_ops_module(lengths, 37, d)):
        assert "(a thread per row" in src.splitlines()[2] and "staged" in src.splitlines()[2], src.splitlines()[2]
        res = nvrtc.resources(src, "sm_90", headers=HEADERS)
        assert res.spill_stores <= max_spill, res


#: The row lengths whose kernel forms differ (a thread a row, lanes batched
#: or staged, vectors, the block form), and the op kinds of issue 11 (rows,
#: elementwise, reductions, injective ops), for random graphs over them.
ROW_DIMS = (1, 3, 7, 8, 13, 33, 64, 77, 101, 128, 197, 255, 257, 577, 768, 1001, 4097)
ROW_KINDS = ("unary", "exp", "binary", "div", "select", "reduce", "softmax", "layer_norm", "rms_norm", "reshape",
             "transpose", "expand", "concat", "slice", "cast", "fused_residual", "constant_binary", "gather", "argmax")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=graphs(dtypes=("f32", "f16", "bf16"), kinds=ROW_KINDS, last_dims=ROW_DIMS))
def test_random_graphs_over_row_lengths_compile(case):
    """Random graphs whose inputs' last axis is one of ROW_DIMS lower to
    CUDA and every kernel compiles with NVRTC (sm_90); their values are
    checked on a GPU (tests/test_gpu_kernels11.py)."""
    lowered = rlxc.run_pipeline(case.module.clone(), "rlx-cuda{arch=sm_90 sm_count=132}")
    ks = [op for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], "sm_90", headers=HEADERS)
    assert all(c[:4] == b"\x7fELF" for c in cubins)


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
def test_argmax_held_best_form_compiles(d, monkeypatch):
    """rows.ARGMAX_HELD_DTYPES: the held-best form in argmax's lane-group
    (rows of 64), warp (1024), block (70001, peeled), split (4 rows of
    300000) forms names itself and its group, takes 16-bit maxima two at a
    time (max.NaN.f16x2 / bf16x2 through rlx_max2_*) and f32 ones through
    rlx_maxf, and NVRTC compiles it for sm_90 without spills (and for
    sm_75, without max.NaN); dtypes not
    named keep the per-element compares."""
    from rlxc.codegen import rows as R

    def src(n, r=64):
        return _sources(lambda g: [g.argmax(g.input("x", [r, n], d), axis=-1)])

    monkeypatch.setattr(R, "ARGMAX_HELD_DTYPES", ())
    assert "held" not in src(70001)
    monkeypatch.setattr(R, "ARGMAX_HELD_DTYPES", (d,))
    warp = 2 if d == "f32" else 4  # rows.ARGMAX_HELD_WARP_LOADS, _16
    for n, r, loads in ((64, 4096, warp), (1024, 64, warp), (70001, 64, 4), (300000, 4, 4)):
        s = src(n, r)
        assert f"the best of {loads} items held" in s, s.splitlines()[8]
        assert (f"rlx_max2_{d}(raw[0].x, raw[0].y)" if d != "f32" else
                "rlx_maxf(__uint_as_float(raw[0].x), __uint_as_float(raw[0].y))") in s
        assert nvrtc.resources(s, "sm_90", headers=HEADERS).spill_stores == 0
    assert nvrtc.resources(s, "sm_75", headers=HEADERS).registers > 0  # the maxima through floats before sm_80
    assert "split in" in src(300000, 4) and "peeled" in src(70001)


def test_argmax_packed_columns_form(monkeypatch):
    """rows.ARGMAX_COLUMN_PACKED: 16-bit argmax over a middle axis in the
    vector columns form compares two elements a word (rlx_gt2_*,
    rlx_nan2_*) with 16-bit indices, named in the source; NVRTC compiles it
    for sm_90 (bf16x2 compares) and sm_80 (bf16 through floats) without
    spills; f32, and axes of 65535 or more (indices past 16 bits), keep the
    forms before it."""
    from rlxc.codegen import rows as R

    def src(shape, d):
        return _sources(lambda g: [g.argmax(g.input("x", shape, d), axis=1)])

    monkeypatch.setattr(R, "ARGMAX_COLUMN_PACKED", True)
    for d in ("f16", "bf16"):
        s = src([2048, 128, 128], d)
        assert "8 elements per 16-byte access, compared as packed pairs (16-bit indices)" in s
        assert f"up = rlx_gt2_{d}(v, bw[0]) | (rlx_nan2_{d}(v) & ~bn[0])" in s
        for arch in ("sm_90", "sm_80"):
            assert nvrtc.resources(s, arch, headers=HEADERS).spill_stores == 0
    assert "packed" not in src([2048, 128, 128], "f32")
    # ARGMAX_PACKED_MAX_SLICES: 2 slices, not 8, with 8 loads in flight (ARGMAX_PACKED_LOADS)
    capped = src([16384, 128, 128], "f16")
    assert "(128 threads of 8 rows x 2 slices of the axis per block" in capped and "// 8 loads in flight" in capped
    assert nvrtc.resources(capped, "sm_90", headers=HEADERS).spill_stores == 0
    filled = src([2048, 128, 128], "f16")  # ARGMAX_PACKED_FILL_SLICES: 2 leave too few blocks, 4 do not
    assert "(64 threads of 8 rows x 4 slices of the axis per block" in filled and "// 4 loads in flight" in filled
    monkeypatch.setattr(R, "ARGMAX_PACKED_MAX_SLICES", 1)  # one slice
    monkeypatch.setattr(R, "ARGMAX_PACKED_LOADS", 0)  # ARGMAX_COLUMN_LOADS in flight
    capped = src([16384, 128, 128], "f16")
    assert "(256 threads of 8 rows x 1 slices of the axis per block" in capped and "// 4 loads in flight" in capped
    assert nvrtc.resources(capped, "sm_90", headers=HEADERS).spill_stores == 0
    monkeypatch.setattr(R, "ARGMAX_PACKED_MAX_SLICES", 0)
    monkeypatch.setattr(R, "COLUMN_VECTOR_BLOCKS_PER_SM", 0)
    assert "packed" in src([8, 65534, 128], "f16") and "packed" not in src([8, 65535, 128], "f16")


def test_argmax_long_middle_axes_split_over_blocks():
    """rows.ARGMAX_COLUMN_SPLIT_BELOW: few outputs over a long middle axis
    ([8, 32768, 128]: 128 groups of 8 rows, 4 blocks) split the axis over
    grid.y in the packed form (f32: the vector form), the chunk bests to
    scratch, the last block of a tile folding them with every thread; many
    outputs keep one chunk; NVRTC compiles them without spills; 0 turns
    it off (the element columns form)."""
    from rlxc.codegen import rows as R

    def src(shape, d):
        return _sources(lambda g: [g.argmax(g.input("x", shape, d), axis=1)])

    s = src([8, 32768, 128], "f16")
    assert "compared as packed pairs (16-bit indices), the axis split in 132 chunks of 249 (grid.y)" in s
    assert "rlx_last = atomicAdd(&" in s and "for (int t = threadIdx.y * 32 + threadIdx.x; t < 256; t += 256)" in s
    f32 = src([32, 32768, 128], "f32")
    assert "4 elements per 16-byte access, the axis split in 17 chunks of 1928 (grid.y)" in f32
    assert "split" not in src([16384, 128, 128], "f16")
    for code in (s, f32):
        assert nvrtc.resources(code, "sm_90", headers=HEADERS).spill_stores == 0
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.setattr(R, "ARGMAX_COLUMN_SPLIT_BELOW", 0)
        assert "one element per access" in src([8, 32768, 128], "f16")

"""GPU tests of the fused attention kernel (marker `gpu`): every form against
the numpy reference with the arena poisoned, stream and graph mode equal
(test_gpu's `check`): f32/f16/bf16 x head_dims 32/64/128/40 x sequence
lengths 1/77/128/300 (and s_q != s_k) x no mask / causal / [b,1,1,sk] mask /
[b,1,sq,sk] mask; layouts (folded transposes); padding masks with -inf and
fully masked rows (NaN, as the reference); a BERT-style layer through
rlx-fold-layout. Skipped cleanly without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import rlxc
from rlxc.codegen import attention as attention_codegen
from test_attention import bert_layer, scaled_inputs
from test_gpu import TOL, check

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver"),
]

#: (s_q, s_k): square, one query, and s_q != s_k both ways.
SEQS = [(1, 1), (77, 77), (128, 128), (300, 300), (1, 77), (300, 128), (77, 300)]
VARIANTS = ["none", "causal", "mask_b11k", "mask_b1qk"]


def _sweep(dtype, d):
    def build(g):
        b, h = 2, 3
        outs = []
        for i, (sq, sk) in enumerate(SEQS):
            q, k, v = (g.input(f"{n}{i}", [b, h, s, d], dtype) for n, s in (("q", sq), ("k", sk), ("v", sk)))
            for variant in VARIANTS:
                shape = {"mask_b11k": [b, 1, 1, sk], "mask_b1qk": [b, 1, sq, sk]}.get(variant)
                m = g.input(f"m{i}_{variant}", shape, dtype) if shape else None
                outs.append(g.attention(q, k, v, m, causal=variant == "causal"))
        return outs

    return build


def _module(build):
    g = rlxc.GraphBuilder()
    return g.build(build(g))


@pytest.mark.parametrize("d", [32, 64, 128, 40])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_attention_sweep(dtype, d):
    check(_module(_sweep(dtype, d)), rng=np.random.default_rng(d))


@pytest.mark.parametrize("d", [32, 64, 128, 40])
def test_attention_sweep_simt_f32(d, monkeypatch):
    """The f32 simt form on every edge case; unforced, f32 takes the tiled
    form (test_attention_sweep) except for head_dims over 128 or not
    multiples of 4."""
    monkeypatch.setattr(attention_codegen, "FORCE_F32_FORM", "simt")
    check(_module(_sweep("f32", d)), rng=np.random.default_rng(d + 2))


@pytest.mark.parametrize("d", [32, 64, 40])
def test_attention_sweep_tiled_f32_prefetch(d, monkeypatch):
    """The f32 tiled form loading the next key/value tile into registers
    while it uses this one (attention.TILED_PREFETCH; head_dims up to 64),
    on every edge case: one key tile, a partial last tile, causal rows
    that end early, masks."""
    monkeypatch.setattr(attention_codegen, "TILED_PREFETCH", True)
    check(_module(_sweep("f32", d)), rng=np.random.default_rng(d + 5))


def test_tiled_f32_at_bert_size():
    def build(g):
        q, k, v = (g.input(n, [4, 12, 128, 64], "f32") for n in "qkv")
        m = g.input("m", [4, 1, 1, 128], "f32")
        return [g.attention(q, k, v, m), g.attention(q, k, v, causal=True)]

    module = _module(build)
    from rlxc.codegen.attention import attention_form, attention_problem

    ops = [op for op in module.walk() if op.name == "rlx.attention"]
    assert {attention_form(attention_problem(op)) for op in ops} == {"tiled"}
    check(module, rng=np.random.default_rng(21))


@pytest.mark.parametrize("d", [64, 40])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_attention_sweep_two_m_tiles(dtype, d, monkeypatch):
    """The mma form with 128 query rows per block (2 m-tiles per warp), which
    only long sequences with many blocks get unforced, on every edge case."""
    monkeypatch.setattr(attention_codegen, "FORCE_M_TILES", 2)
    check(_module(_sweep(dtype, d)), rng=np.random.default_rng(d + 1))


@pytest.mark.parametrize("d", [64, 40])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_attention_sweep_64_key_tiles(dtype, d, monkeypatch):
    """The mma form with 64-key tiles (what sequences of 64 keys or fewer
    get; longer ones take 128) on every edge case of the sweep."""
    monkeypatch.setattr(attention_codegen, "FORCE_BN", 64)
    check(_module(_sweep(dtype, d)), rng=np.random.default_rng(d + 2))


@pytest.mark.parametrize("d", [64, 40])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_attention_sweep_eight_warps(dtype, d, monkeypatch):
    """The mma form with 8 warps per block (128 query rows of one m-tile:
    measured by benchmarks/attention_variants.py, not taken by default) on
    every edge case of the sweep."""
    monkeypatch.setattr(attention_codegen, "FORCE_WARPS", 8)
    check(_module(_sweep(dtype, d)), rng=np.random.default_rng(d + 4))


@pytest.mark.parametrize("shape", [(128, 1, None), (128, 1, 3), (64, 2, None)])
@pytest.mark.parametrize("d", [64, 40, 128])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_attention_sweep_query_fragments_from_shared_memory(dtype, d, shape, monkeypatch):
    """The mma form reading the query fragments from shared memory each step
    (`Qs` beside the key and value tiles) instead of holding them in
    registers, at each tile shape and register cap it is measured with, on
    every edge case of the sweep."""
    bn, mt, blocks = shape
    for knob, value in (("FORCE_Q_SMEM", True), ("FORCE_BN", bn), ("FORCE_M_TILES", mt), ("FORCE_MIN_BLOCKS", blocks)):
        monkeypatch.setattr(attention_codegen, knob, value)
    check(_module(_sweep(dtype, d)), rng=np.random.default_rng(d + 3))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_attention_shapes_scales_and_layouts(dtype):
    def build(g):
        outs = []
        # value head_dim != query's, a given scale, odd head_dims (not 16-byte rows: element loads)
        for i, (d, dv, sq, sk, scale) in enumerate([(64, 32, 77, 130, 0.05), (80, 80, 65, 64, 1.0), (36, 20, 9, 70, None),
                                                    (16, 8, 129, 129, 0.3), (8, 8, 3, 5, None), (256, 256, 70, 70, None)]):
            q, k, v = g.input(f"q{i}", [2, 2, sq, d], dtype), g.input(f"k{i}", [2, 2, sk, d], dtype), g.input(f"v{i}", [2, 2, sk, dv], dtype)
            outs.append(g.attention(q, k, v, g.input(f"m{i}", [sk], dtype), causal=i % 2 == 0, scale=scale))
        # layouts: [b, s, h, d] in and out (BERT), and [s, b, h, d] / [h, b, s, d]
        b, h, s, d = 2, 3, 100, 64
        q = g.transpose(g.input("qb", [b, s, h, d], dtype), [0, 2, 1, 3])
        k = g.transpose(g.input("kb", [s, b, h, d], dtype), [1, 2, 0, 3])
        v = g.transpose(g.input("vb", [h, b, s, d], dtype), [1, 0, 2, 3])
        a = g.attention(q, k, v, g.input("mb", [b, 1, 1, s], dtype))
        outs.append(g.transpose(a, [0, 2, 1, 3]))
        outs.append(g.transpose(g.attention(q, k, v, causal=True), [2, 0, 1, 3]))
        return outs

    module = _module(build)
    folded = rlxc.run_pipeline(module, "rlx-optimize")
    assert not [op for op in folded.walk() if op.name == "rlx.transpose"]
    check(module, rng=np.random.default_rng(7))


@pytest.mark.parametrize("force", [None, "simt"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_grouped_query_attention(dtype, force, monkeypatch):
    """Key and value with fewer heads than query (multi-query: 1; grouped: 2
    or 3 of 12; key and value grouped differently), every form (f32 simt
    forced too), causal and masked, odd lengths, a [b, s, h, d] value; and
    repeat_kv written as a user does, folded away by rlx-fold-layout."""
    from test_attention import gqa_projection_graph, repeat_kv_graph

    if force and dtype != "f32":
        pytest.skip("the simt form is forced for f32 only")
    monkeypatch.setattr(attention_codegen, "FORCE_F32_FORM", force)

    def build(g):
        outs = []
        for i, (hk, hv, sq, sk, d) in enumerate([(1, 1, 77, 77, 64), (3, 3, 128, 300, 64), (2, 4, 33, 129, 40),
                                                 (6, 1, 1, 70, 128)]):
            q = g.input(f"q{i}", [2, 12, sq, d], dtype)
            k = g.input(f"k{i}", [2, hk, sk, d], dtype)
            v = g.transpose(g.input(f"v{i}", [2, sk, hv, d], dtype), [0, 2, 1, 3])
            outs.append(g.attention(q, k, v, causal=True))
            outs.append(g.attention(q, k, v, g.input(f"m{i}", [2, 1, 1, sk], dtype)))
        return outs

    check(_module(build), rng=np.random.default_rng(17))
    for in_layout in (False, True):
        g = rlxc.GraphBuilder()
        check(g.build([repeat_kv_graph(g, dtype, 2, 130, 8, 2, 64, in_layout)]), rng=np.random.default_rng(18))
    g = rlxc.GraphBuilder()
    out, _ = gqa_projection_graph(g, dtype, 2, 77, 8, 2, 64)  # merged projections: head windows
    check(g.build([out]), rng=np.random.default_rng(19))  # random params of the graph's dtype


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_many_blocks_in_flight(dtype):
    """Enough blocks at once (and key tiles per block) that a tile read
    before its asynchronous copy lands would show."""
    def build(g):
        q, k, v = (g.input(n, [16, 12, 384, 64], dtype) for n in "qkv")
        m = g.input("m", [16, 1, 1, 384], dtype)
        q2, k2, v2 = (g.input(f"{n}2", [16, 12, 300, 40], dtype) for n in "qkv")
        # long causal rows: two m-tiles a warp, blocks heaviest first
        q3, k3, v3 = (g.input(f"{n}3", [1, 4, 1100, 128], dtype) for n in "qkv")
        q4, k4, v4 = (g.input(f"{n}4", [2, 3, 1030, 64], dtype) for n in "qkv")
        return [g.attention(q, k, v), g.attention(q, k, v, causal=True), g.attention(q, k, v, m),
                g.attention(q2, k2, v2, causal=True), g.attention(q3, k3, v3, causal=True),
                g.attention(q4, k4, v4, causal=True)]

    check(_module(build), rng=np.random.default_rng(3))


def _run_custom(module, inputs):
    """check() with given inputs: stream and graph equal, NaN exactly where
    the reference has NaN, relative L2 error elsewhere."""
    from rlxc.dialects.types import dtype_name
    from rlxc.signature import signature

    names = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
    want = rlxc.interpret(module, inputs)
    got = rlxc.compile(module, target="cuda", mode="stream").run(inputs, poison=True)
    graph = rlxc.compile(module, target="cuda", mode="graph").run(inputs, poison=True)
    for a, b in zip(got, graph):
        np.testing.assert_array_equal(a, b)
    for i, (w, g, t) in enumerate(zip(want, got, signature(module).outputs)):
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g64), np.isnan(w64), err_msg=f"output #{i}: NaNs differ")
        ok = ~np.isnan(w64)
        err = np.linalg.norm(w64[ok] - g64[ok]) / max(np.linalg.norm(w64[ok]), 1e-30)
        assert err < TOL[names[dtype_name(t.get_element_type())]], f"output #{i}: relative error {err:.3e}"


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_padding_masks_and_fully_masked_rows(dtype):
    b, h, sq, sk, d = 2, 4, 70, 150, 64
    g = rlxc.GraphBuilder()
    q, k, v = g.input("q", [b, h, sq, d], dtype), g.input("k", [b, h, sk, d], dtype), g.input("v", [b, h, sk, d], dtype)
    pad, full, low = g.input("pad", [b, 1, 1, sk], dtype), g.input("full", [b, 1, sq, sk], dtype), g.input("low", [b, 1, 1, sk], dtype)
    module = g.build([g.attention(q, k, v, pad), g.attention(q, k, v, full, causal=True), g.attention(q, k, v, low)])
    rng = np.random.default_rng(11)
    carrier = np.float16 if dtype == "f16" else np.float32
    x = {n: rng.standard_normal(s).astype(carrier) for n, s in (("q", [b, h, sq, d]), ("k", [b, h, sk, d]), ("v", [b, h, sk, d]))}
    padm = np.zeros((b, 1, 1, sk), carrier)
    padm[1, ..., 90:] = -np.inf  # batch 1: keys 90.. are padding (whole tiles and part of one)
    padm[0, ..., :70] = -np.inf  # batch 0: the first 70 keys (the first tile fully masked)
    fullm = rng.standard_normal((b, 1, sq, sk)).astype(carrier)
    fullm[0, 0, 5, :] = -np.inf  # a fully masked row: NaN, as the reference
    fullm[1, 0, 40, 3:] = -np.inf
    lowm = np.zeros((b, 1, 1, sk), carrier)
    lowm[..., 100:] = -32768.0  # a large finite negative (exact in every dtype): weight 0, not NaN
    _run_custom(module, {**x, "pad": padm, "full": fullm, "low": lowm})


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
def test_masks_of_the_lowest_value(dtype, causal):
    """Hugging Face's masks: the dtype's lowest finite value (finfo.min)
    where a key is masked. log2(e) times it overflows f32 in f32 and bf16;
    the kernels keep it finite (rlx_mask_log2), so a row masked throughout
    (a left-padded query) is uniform, as the reference's (-3.4e38 + score is
    -3.4e38 for every key), not NaN; padded keys weigh 0. (f16's lowest,
    -65504, does not overflow: such a row is the softmax of its scores.)"""
    b, h, sq, sk, d = 2, 2, 40, 150, 64
    lowest = {"f32": float(np.finfo(np.float32).min), "f16": -65504.0, "bf16": -3.3895313892515355e38}[dtype]
    g = rlxc.GraphBuilder()
    q, k, v = g.input("q", [b, h, sq, d], dtype), g.input("k", [b, h, sk, d], dtype), g.input("v", [b, h, sk, d], dtype)
    m = g.input("m", [b, 1, sq, sk], dtype)
    module = g.build([g.attention(q, k, v, m, causal=causal)])
    rng = np.random.default_rng()
    carrier = np.float16 if dtype == "f16" else np.float32
    x = {n: rng.standard_normal(s).astype(carrier) for n, s in (("q", [b, h, sq, d]), ("k", [b, h, sk, d]), ("v", [b, h, sk, d]))}
    mask = np.zeros((b, 1, sq, sk), carrier)
    mask[0, 0, :7, :] = lowest  # rows masked throughout
    mask[1, 0, :, 120:] = lowest  # padded keys
    mask[1, 0, 30, :] = lowest
    want = rlxc.interpret(module, {**x, "m": mask})[0].astype(np.float64)
    if dtype != "f16":  # f16's lowest (-65504) leaves the scores' differences: softmax of the scores there
        keys = 4 if causal else sk  # row 3 attends to keys 0-3 under the causal mask
        np.testing.assert_allclose(want[0, :, 3], np.asarray(x["v"], np.float64)[0, :, :keys].mean(axis=1), rtol=1e-2,
                                   atol=1e-2)
    _run_custom(module, {**x, "m": mask})


@pytest.mark.parametrize("mask,causal", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_bert_layer_through_fold_layout(dtype, mask, causal):
    module = bert_layer(batch=2, seq=77, hidden=256, heads=4, dtype=dtype, mask=mask, causal=causal)
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    assert not [op for op in optimized.walk() if op.name == "rlx.transpose"]
    inputs, params = scaled_inputs(module, np.random.default_rng(5))
    check(module, params=params, rng=np.random.default_rng(5), tol_scale=2.0)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_head_windows(dtype):
    """q, k and v as head windows of one [b, s, 10, d] tensor (a merged Q/K/V
    projection read in place), with a mask and causal, against the interpreter."""
    from xdsl.dialects.builtin import UnitAttr

    from rlxc.dialects import rlx
    from rlxc.dialects.rlx.base import i64_array
    from test_attention import WINDOWED

    outs = []
    g = rlxc.GraphBuilder()
    for i, (s, d) in enumerate([(77, 64), (130, 40), (1, 64)]):
        x = g.input(f"x{i}", [2, s, 10, d], dtype)
        m = g.input(f"m{i}", [2, 1, 1, s], dtype)
        props = {k: i64_array(v) for k, v in WINDOWED.items()}
        outs.append(g._op(rlx.AttentionOp, [x, x, x, m], {**props, "causal": UnitAttr()}))
    check(g.build(outs), rng=np.random.default_rng(12))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_merged_qkv_layer_reads_windows(dtype):
    """A BERT layer compiled with its weights: Q/K/V merge into one gemm and
    attention reads its three windows (no slice kernel)."""
    module = bert_layer(batch=2, seq=77, hidden=256, heads=4, dtype=dtype, mask=True)
    inputs, params = scaled_inputs(module, np.random.default_rng(6))
    exe = rlxc.compile(module, target="cuda", params=params)
    from rlxc.dialects import rlx_cuda

    sources = [k.source.data for k in exe.module.ops if isinstance(k, rlx_cuda.KernelOp)]
    assert not [s for s in sources if "rlx.slice" in s] and [s for s in sources if "rlx.attention" in s]
    exe.close()
    check(module, params=params, rng=np.random.default_rng(6), tol_scale=2.0)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("d", [512, 600, 20001])
def test_attention_past_the_kernels_head_dim(dtype, d):
    """Head_dims up to AttentionOp.CUDA_MAX_HEAD_DIM run in the fused kernel
    (simt form), longer ones as matmuls and a softmax (a head_dim of 20001
    asked the kernel for 640 KB of shared memory); against the interpreter,
    with a mask and causal rows."""
    g = rlxc.GraphBuilder()
    q, k, v = (g.input(n, [2, 2, 5 if n == "q" else 7, d], dtype) for n in ("q", "k", "v"))
    m = g.input("m", [1, 1, 5, 7], dtype)
    module = g.build([g.attention(q, k, v, m, scale=1.0 / np.sqrt(d)), g.attention(q, k, v, None, causal=True)])
    check(module, rng=np.random.default_rng(d))

"""rlx.attention without a GPU: the operand layouts in the interpreter
against a float64 reference, rlx-fold-layout on BERT-style layers (no
transpose left, same results), the cuda target keeping attention whole, and
the fused attention kernel compiling with NVRTC for sm_80 and sm_90 in every
form (f32/f16/bf16, head_dims, masks, causal, layouts)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import UnitAttr
from rlxc.frontends.builder import GraphError

import rlxc
import reference as R
from rlxc.codegen import HEADERS
from rlxc.codegen.attention import attention_form, attention_problem
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.rlx.base import f64_attr, i64_array
from rlxc.runtime import nvrtc
from rlxc.dialects.types import ELEMENT_TYPES
from rlxc.values import to_element_type
from strategies import random_inputs

ARCHS = ["sm_80", "sm_90"]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path / "cache"))


def ops_named(module, name):
    return [op for op in module.walk() if op.name == name]


def bert_layer(batch=2, seq=16, hidden=64, heads=4, dtype="f32", mask=False, causal=False):
    """A BERT-style self-attention block built the usual way: linear ->
    reshape [b, s, h, d] -> transpose [0, 2, 1, 3] -> attention -> transpose
    [0, 2, 1, 3] -> reshape [b, s, h*d] -> linear (+ an optional [b, 1, 1, s]
    padding mask)."""
    hd = hidden // heads
    g = rlxc.GraphBuilder()
    x = g.input("x", [batch, seq, hidden], dtype)

    def heads_view(name):
        t = g.linear(x, g.param(f"{name}.w", [hidden, hidden], dtype), g.param(f"{name}.b", [hidden], dtype))
        return g.transpose(g.reshape(t, [batch, seq, heads, hd]), [0, 2, 1, 3])

    m = g.input("mask", [batch, 1, 1, seq], dtype) if mask else None
    a = g.attention(heads_view("q"), heads_view("k"), heads_view("v"), m, causal=causal)
    a = g.reshape(g.transpose(a, [0, 2, 1, 3]), [batch, seq, hidden])
    out = g.linear(a, g.param("o.w", [hidden, hidden], dtype), g.param("o.b", [hidden], dtype))
    return g.build([out])


def scaled_inputs(module, rng):
    """Random inputs, with weights scaled by 1/sqrt(fan-in) so activations stay O(1)."""
    inputs, params = random_inputs(module, rng)
    for n, p in params.items():
        if p.ndim == 2:
            params[n] = (p.astype(np.float32) / np.sqrt(p.shape[1])).astype(p.dtype)
    return inputs, params


# --------------------------------------------------------------------------- the op and the interpreter


def attention_op(q, k, v, mask=None, causal=False, scale=None, layouts=None, dtype="f32"):
    """A graph with one attention, q/k/v given in physical shapes."""
    g = rlxc.GraphBuilder()
    args = [g.input("q", q, dtype), g.input("k", k, dtype), g.input("v", v, dtype)]
    m = g.input("m", mask) if mask is not None else None
    props = {}
    if causal:
        props["causal"] = UnitAttr()
    if scale is not None:
        props["scale"] = f64_attr(scale)
    for name, perm in (layouts or {}).items():
        props[name] = i64_array(perm)
    return g.build([g._op(rlx.AttentionOp, [*args, m], props)])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("layouts", [
    {"q_layout": [0, 2, 1, 3], "k_layout": [0, 2, 1, 3], "v_layout": [0, 2, 1, 3], "out_layout": [0, 2, 1, 3]},
    {"q_layout": [2, 0, 1, 3], "v_layout": [1, 0, 2, 3]},
    {"out_layout": [2, 1, 0, 3]},
    {},
])
def test_interpreter_layouts_match_float64_reference(layouts, causal):
    rng = np.random.default_rng(0)
    b, h, sq, sk, d, dv = 2, 3, 5, 7, 8, 6
    logical = {"q": (b, h, sq, d), "k": (b, h, sk, d), "v": (b, h, sk, dv)}
    perms = {n: layouts.get(f"{n}_layout", [0, 1, 2, 3]) for n in "qkv"}
    phys = {n: [logical[n][p] for p in perms[n]] for n in "qkv"}
    module = attention_op(phys["q"], phys["k"], phys["v"], mask=[b, 1, sq, sk], causal=causal, scale=0.4,
                          layouts=layouts)
    xs = {n: rng.standard_normal(phys[n]).astype(np.float32) for n in "qkv"}
    m = rng.standard_normal((b, 1, sq, sk)).astype(np.float32)
    (got,) = rlxc.interpret(module, {**xs, "m": m})
    lg = {n: np.transpose(xs[n], np.argsort(perms[n])) for n in "qkv"}
    want = R.attention(lg["q"], lg["k"], lg["v"], m, causal, 0.4)
    out_perm = layouts.get("out_layout", [0, 1, 2, 3])
    want = np.transpose(want, out_perm)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_layouts_verify_and_print_only_when_set():
    m = attention_op([2, 5, 3, 8], [2, 3, 5, 8], [2, 3, 5, 8], layouts={"q_layout": [0, 2, 1, 3]})
    text = str(m)
    assert "q_layout = [0, 2, 1, 3]" in text and "k_layout" not in text and "out_layout" not in text
    (op,) = ops_named(m, "rlx.attention")
    assert op.result.type.get_shape() == (2, 3, 5, 8)
    with pytest.raises(GraphError, match=r"q_layout \[0, 3, 1, 2\] must be a permutation .* head_dim last"):
        attention_op([2, 8, 3, 5], [2, 3, 5, 8], [2, 3, 5, 8], layouts={"q_layout": [0, 3, 1, 2]})
    with pytest.raises(GraphError, match=r"disagree.*logical layout"):
        attention_op([2, 3, 5, 8], [2, 3, 5, 8], [2, 3, 5, 8], layouts={"k_layout": [0, 2, 1, 3]})


def test_unfuse_none_honours_layouts():
    layouts = {"q_layout": [0, 2, 1, 3], "k_layout": [1, 0, 2, 3], "out_layout": [0, 2, 1, 3]}
    m = attention_op([2, 5, 3, 8], [3, 2, 7, 8], [2, 3, 7, 4], mask=[7], causal=True, layouts=layouts)
    after = rlxc.run_pipeline(m, "rlx-unfuse{target=none}")
    assert not ops_named(after, "rlx.attention")
    rng = np.random.default_rng(1)
    inputs, _ = random_inputs(m, rng)
    (want,) = rlxc.interpret(m, inputs, float64=True)
    (got,) = rlxc.interpret(after, inputs, float64=True)
    # one scale (the f32 nearest 1/sqrt(8), exact here) in both: agreement to float64 rounding
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("d,scale", [(48, None), (32, None), (8, 0.3)])
def test_decomposition_applies_the_same_f32_scale(dtype, d, scale):
    """1/sqrt(48), 1/sqrt(32) and 0.3 are not f16/bf16 values (1/sqrt(48) and
    0.3 not f32 ones either): the interpreter, the decomposition (in f32 for
    f16/bf16) and the kernels all apply the nearest f32, so with scores of a
    few hundred (where a rounded scale moves the softmax by ~1e-5) the
    decomposed graph still agrees with the composite in float64."""
    m = attention_op([2, 3, 9, d], [2, 3, 11, d], [2, 3, 11, 5], scale=scale, dtype=dtype)
    after = rlxc.run_pipeline(m, "rlx-unfuse{target=none}")
    assert not ops_named(after, "rlx.attention")
    (op,) = ops_named(m, "rlx.attention")
    want_scale = np.float32(1 / np.sqrt(d) if scale is None else scale)
    assert op.scale_value() == float(want_scale)
    rng = np.random.default_rng()
    inputs = {n: to_element_type(rng.standard_normal(shape) * 6, ELEMENT_TYPES[dtype])
              for n, shape in (("q", (2, 3, 9, d)), ("k", (2, 3, 11, d)), ("v", (2, 3, 11, 5)))}
    (want,) = rlxc.interpret(m, inputs, float64=True)
    (got,) = rlxc.interpret(after, inputs, float64=True)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    # and the scale is float64(f32 scale): scores of ~ +-300 make 1/sqrt(d) in float64 visibly different
    lg = {n: inputs[n].astype(np.float64) for n in "qkv"}
    np.testing.assert_allclose(want, R.attention(lg["q"], lg["k"], lg["v"], None, False, float(want_scale)),
                               rtol=1e-10, atol=1e-12)


def test_cuda_keeps_attention_native():
    m = attention_op([1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8, 4], causal=True)
    assert ops_named(rlxc.run_pipeline(m, "rlx-unfuse{target=cuda}"), "rlx.attention")
    assert not ops_named(rlxc.run_pipeline(m, "rlx-unfuse{target=none}"), "rlx.attention")


# --------------------------------------------------------------------------- head windows


WINDOWED = {
    "q_layout": [0, 2, 1, 3], "k_layout": [0, 2, 1, 3], "v_layout": [0, 2, 1, 3],
    "q_heads": [0, 3], "k_heads": [3, 3], "v_heads": [7, 3],
}  # fmt: skip


def test_head_windows_interpreter_and_decomposition_match_reference():
    # one [b, s, 10, d] tensor read as three windows of 3 heads (one head unused)
    b, s, d = 2, 6, 8
    m = attention_op([b, s, 10, d], [b, s, 10, d], [b, s, 10, d], mask=[b, 1, 1, s], causal=True,
                     layouts=WINDOWED)
    (op,) = ops_named(m, "rlx.attention")
    assert op.windows() == [(0, 3), (3, 3), (7, 3)]
    assert op.result.type.get_shape() == (b, 3, s, d)
    assert "q_heads = [0, 3] k_heads = [3, 3] v_heads = [7, 3]" in str(m)
    rng = np.random.default_rng(7)
    x = {n: rng.standard_normal((b, s, 10, d)).astype(np.float32) for n in "qkv"}
    mask = rng.standard_normal((b, 1, 1, s)).astype(np.float32)
    (got,) = rlxc.interpret(m, {**x, "m": mask})
    lg = {n: np.transpose(x[n], (0, 2, 1, 3))[:, o : o + 3] for n, o in zip("qkv", (0, 3, 7))}
    want = R.attention(lg["q"], lg["k"], lg["v"], mask, True, None)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    after = rlxc.run_pipeline(m, "rlx-unfuse{target=none}")
    assert not ops_named(after, "rlx.attention") and len(ops_named(after, "rlx.slice")) == 3
    (dec,) = rlxc.interpret(after, {**x, "m": mask}, float64=True)
    np.testing.assert_allclose(dec, want, rtol=1e-5, atol=1e-6)


def test_head_windows_verify():
    with pytest.raises(GraphError, match=r"k_heads \[8, 3\] reaches past the operand's 10 heads"):
        attention_op([1, 4, 10, 8], [1, 4, 10, 8], [1, 4, 10, 8], layouts={**WINDOWED, "k_heads": [8, 3]})
    with pytest.raises(GraphError, match=r"q_heads \[1\] must be \[offset, count\]"):
        attention_op([1, 4, 10, 8], [1, 4, 10, 8], [1, 4, 10, 8], layouts={**WINDOWED, "q_heads": [1]})
    with pytest.raises(GraphError, match=r"disagree"):  # windows of different head counts
        attention_op([1, 4, 10, 8], [1, 4, 10, 8], [1, 4, 10, 8], layouts={**WINDOWED, "v_heads": [6, 4]})


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_merged_projection_slices_become_head_windows(dtype):
    from rlxc.passes.fold_params import fold_params

    module = bert_layer(batch=2, seq=16, hidden=64, heads=4, dtype=dtype, mask=True)
    inputs, params = scaled_inputs(module, np.random.default_rng(8))
    merged, folded_params = fold_params(rlxc.run_pipeline(module, "rlx-merge-projections"), params)
    assert len(ops_named(merged, "rlx.slice")) == 3
    optimized = rlxc.run_pipeline(merged, "rlx-optimize")
    assert not ops_named(optimized, "rlx.slice") and not ops_named(optimized, "rlx.transpose")
    (att,) = ops_named(optimized, "rlx.attention")
    assert att.windows() == [(0, 4), (4, 4), (8, 4)]
    assert att.query is att.key is att.value  # one [b, s, 12, d] view of the merged gemm
    (want,) = rlxc.interpret(module, inputs, params, float64=True)
    (got,) = rlxc.interpret(optimized, inputs, folded_params, float64=True)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    # lowered: the attention kernel reads the gemm's output at head offsets, no copy kernel
    lowered = rlxc.run_pipeline(merged, "rlx-cuda")
    sources = [k.source.data for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp)]
    assert not [src for src in sources if "rlx.slice" in src]
    (src,) = [src for src in sources if "rlx.attention" in src]
    assert "QO = 0LL, KO = 64LL, VO = 128LL" in src and "QSS = 192LL" in src


def test_slices_that_are_not_whole_heads_stay():
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 8, 40])
    q = g.transpose(g.reshape(g.slice(x, [0, 0, 4], [2, 8, 20]), [2, 8, 2, 8]), [0, 2, 1, 3])  # offset 4: not a head
    k = g.transpose(g.reshape(g.slice(x, [0, 0, 16], [2, 8, 32]), [2, 8, 2, 8]), [0, 2, 1, 3])
    module = g.build([g.attention(q, k, k)])
    folded = rlxc.run_pipeline(module, "rlx-fold-layout,cse,dce")
    (att,) = ops_named(folded, "rlx.attention")
    assert att.windows() == [None, (2, 2), (2, 2)]
    assert len(ops_named(folded, "rlx.slice")) == 1
    inputs, _ = random_inputs(module, np.random.default_rng(9))
    (w,) = rlxc.interpret(module, inputs, float64=True)
    (gt,) = rlxc.interpret(folded, inputs, float64=True)
    np.testing.assert_allclose(gt, w, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- rlx-fold-layout


@pytest.mark.parametrize("mask,causal", [(False, False), (True, False), (False, True)])
def test_fold_layout_bert_layer_leaves_no_transpose(mask, causal):
    module = bert_layer(mask=mask, causal=causal)
    assert len(ops_named(module, "rlx.transpose")) == 4
    folded = rlxc.run_pipeline(module, "rlx-fold-layout,dce")
    assert not ops_named(folded, "rlx.transpose")
    (att,) = ops_named(folded, "rlx.attention")
    assert att.layouts() == [[0, 2, 1, 3]] * 4
    inputs, params = scaled_inputs(module, np.random.default_rng(2))
    (want,) = rlxc.interpret(module, inputs, params, float64=True)
    (got,) = rlxc.interpret(folded, inputs, params, float64=True)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    # the whole cuda pipeline: no transpose kernel left (reshapes are views)
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    assert not ops_named(optimized, "rlx.transpose")
    lowered = rlxc.run_pipeline(module, "rlx-cuda")
    sources = [k.source.data for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp)]
    assert not [s for s in sources if "rlx.transpose" in s]
    assert [s for s in sources if "rlx.attention" in s]


def test_fold_layout_keeps_what_it_must():
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 5, 3, 8])
    k = g.input("k", [2, 3, 8, 5])
    q = g.transpose(x, [0, 2, 1, 3])  # folds, and stays for its other user
    kt = g.transpose(k, [0, 1, 3, 2])  # moves head_dim: stays
    a = g.attention(q, kt, kt)
    out1 = g.transpose(a, [0, 2, 1, 3])  # a has two users: stays
    out2 = g.transpose(a, [0, 1, 3, 2])
    module = g.build([out1, out2, g.exp(q)])
    folded = rlxc.run_pipeline(module, "rlx-fold-layout,dce")
    (att,) = ops_named(folded, "rlx.attention")
    assert att.layouts() == [[0, 2, 1, 3], [0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3]]
    assert att.query.owner is not None and not isinstance(att.query.owner, rlx.TransposeOp)
    assert len(ops_named(folded, "rlx.transpose")) == 4
    inputs, _ = random_inputs(module, np.random.default_rng(3))
    for w, gt in zip(rlxc.interpret(module, inputs, float64=True), rlxc.interpret(folded, inputs, float64=True)):
        np.testing.assert_allclose(gt, w, rtol=1e-9, atol=1e-12)


def test_fold_layout_composes_with_existing_layouts():
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, 2, 5, 8])  # [h, b, s, d]
    q = g.transpose(x, [1, 0, 2, 3])
    a = g.attention(q, q, q, causal=True)
    out = g.transpose(g.transpose(a, [2, 0, 1, 3]), [1, 2, 0, 3])  # back to [b, h, s, d], in two steps
    module = g.build([out])
    folded = rlxc.run_pipeline(module, "rlx-fold-layout,dce")
    assert not ops_named(folded, "rlx.transpose")
    inputs, _ = random_inputs(module, np.random.default_rng(4))
    (w,) = rlxc.interpret(module, inputs, float64=True)
    (gt,) = rlxc.interpret(folded, inputs, float64=True)
    np.testing.assert_allclose(gt, w, rtol=1e-9, atol=1e-12)


def repeat_kv_graph(g, dtype: str, b: int, s: int, hq: int, hk: int, d: int, in_layout: bool = False):
    """A LLaMA-style grouped-query attention as a user writes it: q/k/v
    projections' outputs reshaped to heads and transposed, the key and value
    heads repeated to the query's (`repeat_kv`: unsqueeze, expand, reshape;
    with `in_layout` the repeat is done in [b, s, h, d], before the
    transpose), causal attention, heads merged back."""
    x = g.input("x", [b, s, hq * d], dtype)
    kx, vx = g.input("kx", [b, s, hk * d], dtype), g.input("vx", [b, s, hk * d], dtype)
    q = g.transpose(g.reshape(x, [b, s, hq, d]), [0, 2, 1, 3])

    def rep(t):
        t = g.reshape(t, [b, s, hk, d])
        if in_layout:
            t = g.reshape(g.expand(g.reshape(t, [b, s, hk, 1, d]), [b, s, hk, hq // hk, d]), [b, s, hq, d])
            return g.transpose(t, [0, 2, 1, 3])
        t = g.transpose(t, [0, 2, 1, 3])
        return g.reshape(g.expand(g.reshape(t, [b, hk, 1, s, d]), [b, hk, hq // hk, s, d]), [b, hq, s, d])

    o = g.attention(q, rep(kx), rep(vx), causal=True)
    return g.reshape(g.transpose(o, [0, 2, 1, 3]), [b, s, hq * d])


@pytest.mark.parametrize("in_layout", [False, True])
def test_repeated_kv_heads_fold_into_grouped_attention(in_layout):
    """rlx-fold-layout reads repeat_kv's key and value unrepeated: no expand
    or transpose kernel is left, the attention takes 2 key/value heads for
    8 query heads, its kernel reads key head h / 4, and the folded graph
    computes what the original does (float64 interpreter)."""
    g = rlxc.GraphBuilder()
    module = g.build([repeat_kv_graph(g, "f32", 2, 9, 8, 2, 16, in_layout)])
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    assert not ops_named(optimized, "rlx.expand") and not ops_named(optimized, "rlx.transpose")
    (att,) = ops_named(optimized, "rlx.attention")
    assert [att.key.type.get_shape()[2], att.value.type.get_shape()[2]] == [2, 2]  # [b, s, h, d] layout
    inputs, _ = random_inputs(module, np.random.default_rng(5))
    (w,) = rlxc.interpret(module, inputs, float64=True)
    (gt,) = rlxc.interpret(optimized, inputs, float64=True)
    np.testing.assert_allclose(gt, w, rtol=1e-9, atol=1e-12)
    lowered = rlxc.run_pipeline(module, "rlx-cuda")
    (k,) = [k for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp)]
    assert "rlx.attention" in k.source.data and "(long long)(h / 4) * KSH" in k.source.data


def gqa_projection_graph(g, dtype: str, b: int, s: int, hq: int, hk: int, d: int):
    """Grouped-query attention from q/k/v projections (params) of one input,
    repeat_kv on key and value: returns (output, params)."""
    rng = np.random.default_rng(6)
    ws = {n: (rng.standard_normal((h * d, hq * d)) / np.sqrt(hq * d)).astype(np.float32)
          for n, h in (("wq", hq), ("wk", hk), ("wv", hk))}
    x = g.input("x", [b, s, hq * d], dtype)

    def heads(n, h):
        return g.transpose(g.reshape(g.linear(x, g.param(n, [h * d, hq * d], dtype)), [b, s, h, d]), [0, 2, 1, 3])

    def rep(t):
        return g.reshape(g.expand(g.reshape(t, [b, hk, 1, s, d]), [b, hk, hq // hk, s, d]), [b, hq, s, d])

    o = g.attention(heads("wq", hq), rep(heads("wk", hk)), rep(heads("wv", hk)), causal=True)
    return g.reshape(g.transpose(o, [0, 2, 1, 3]), [b, s, hq * d]), ws


def test_grouped_attention_of_merged_projections_reads_the_gemm_in_place():
    """q/k/v projections of different widths (8 query heads, 2 key/value
    heads) merge into one gemm; attention reads its three head windows in
    place, the key and value ones unrepeated: one gemm and one attention,
    nothing copied; the same values as the graph as written."""
    g = rlxc.GraphBuilder()
    out, params = gqa_projection_graph(g, "f32", 2, 9, 8, 2, 16)
    module = g.build([out])
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    assert [op.name for op in optimized.walk() if op.name not in ("rlx.param", "rlx.reshape", "builtin.module",
                                                                  "func.func", "func.return")] == [
        "rlx.concat", "rlx.linear", "rlx.attention"]  # the concat is of params: folded at compile time
    (att,) = ops_named(optimized, "rlx.attention")
    assert att.windows() == [(0, 8), (8, 2), (10, 2)]
    inputs, _ = random_inputs(module, np.random.default_rng(8))
    (w,) = rlxc.interpret(module, inputs, params, float64=True)
    (gt,) = rlxc.interpret(optimized, inputs, params, float64=True)
    np.testing.assert_allclose(gt, w, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- the kernel compiles


def _kernel_cases():
    cases = []
    for dtype in ("f32", "f16", "bf16"):
        for d in (32, 40, 64, 128):
            for variant in ("none", "causal", "mask_b11k", "mask_b1qk"):
                cases.append((dtype, d, variant))
    return cases


def _module(dtype, d, variant, sq=77, sk=130, dv=None, bshd=False):
    g = rlxc.GraphBuilder()
    b, h = 2, 3
    if bshd:
        q, k, v = (g.transpose(g.input(n, [b, s, h, dd], dtype), [0, 2, 1, 3])
                   for n, s, dd in (("q", sq, d), ("k", sk, d), ("v", sk, dv or d)))
    else:
        q, k, v = g.input("q", [b, h, sq, d], dtype), g.input("k", [b, h, sk, d], dtype), g.input("v", [b, h, sk, dv or d], dtype)
    mask = {"mask_b11k": [b, 1, 1, sk], "mask_b1qk": [b, 1, sq, sk]}.get(variant)
    m = g.input("m", mask, dtype) if mask else None
    a = g.attention(q, k, v, m, causal=variant == "causal")
    return g.build([g.transpose(a, [0, 2, 1, 3]) if bshd else a])


def _compile(module, arch):
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch}}}")
    ks = [k for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp) and "rlx.attention" in k.source.data]
    assert len(ks) == 1
    cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], arch, headers=HEADERS)
    assert all(c[:4] == b"\x7fELF" for c in cubins)
    return lowered, ks[0].source.data


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype,d,variant", _kernel_cases())
def test_attention_kernel_compiles(dtype, d, variant, arch):
    _, src = _compile(_module(dtype, d, variant), arch)
    form = "mma" if dtype != "f32" else "tiled"
    assert f"attention, {form} form" in src
    assert ("+ rlx_mask_log2(" in src) == variant.startswith("mask")  # the mask in log2 units, kept finite
    if form == "mma":
        assert "mma.sync.aligned.m16n8k16" in src and ("cp.async" in src) == (d % 8 == 0)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("d,variant", [(d, v) for d in (32, 40, 64, 128) for v in ("none", "causal", "mask_b11k", "mask_b1qk")])
def test_simt_f32_attention_kernel_compiles(d, variant, arch, monkeypatch):
    """The simt form, which unforced takes f32 only with head_dims over 128
    or not multiples of 4."""
    from rlxc.codegen import attention as codegen

    monkeypatch.setattr(codegen, "FORCE_F32_FORM", "simt")
    _, src = _compile(_module("f32", d, variant, bshd=d == 40), arch)
    assert "attention, simt form (f32)" in src
    monkeypatch.setattr(codegen, "FORCE_F32_FORM", None)
    _, src = _compile(_module("f32", d, variant, sq=1, sk=3, dv=d // 2 // 4 * 4 or 4), arch)
    assert "attention, tiled form (f32)" in src


def test_f32_forms():
    def form(b, h, s, d, dv=None):
        g = rlxc.GraphBuilder()
        q = g.input("q", [b, h, s, d])
        v = g.input("v", [b, h, s, dv or d])
        (op,) = ops_named(g.build([g.attention(q, q, v)]), "rlx.attention")
        return attention_form(attention_problem(op))

    assert form(1, 12, 128, 64) == "tiled" and form(32, 12, 128, 64) == "tiled"
    assert form(4, 12, 128, 128) == "tiled" and form(2, 3, 5, 36) == "tiled"
    assert form(32, 12, 128, 256) == "simt" and form(32, 12, 128, 64, dv=30) == "simt"
    assert form(2, 3, 5, 30) == "simt" and form(2, 3, 5, 30, dv=32) == "tiled"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype,force", [("f16", None), ("bf16", None), ("f32", None), ("f32", "simt")])
def test_grouped_attention_kernel_compiles(dtype, force, arch, monkeypatch):
    """Grouped-query attention in every form: key heads read as h / (query
    heads per key head), value heads as their own group."""
    from rlxc.codegen import attention as codegen

    monkeypatch.setattr(codegen, "FORCE_F32_FORM", force)
    g = rlxc.GraphBuilder()
    q, k, v = g.input("q", [2, 12, 33, 64], dtype), g.input("k", [2, 3, 70, 64], dtype), g.input("v", [2, 1, 70, 64], dtype)
    _, src = _compile(g.build([g.attention(q, k, v, causal=True)]), arch)
    assert "(long long)(h / 4) * KSH" in src and "(long long)(h / 12) * VSH" in src


@pytest.mark.parametrize("arch", ARCHS)
def test_attention_kernel_odd_shapes_compile(arch):
    for dtype, d, dv, sq, sk, bshd in [("f16", 64, 32, 1, 300, False), ("bf16", 80, 80, 128, 1, True),
                                       ("f16", 36, 36, 5, 9, False), ("f32", 40, 24, 300, 77, True),
                                       ("f16", 256, 256, 33, 33, False), ("bf16", 8, 8, 3, 3, False)]:
        _, src = _compile(_module(dtype, d, "causal", sq, sk, dv, bshd), arch)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype,d", [("f32", 64), ("f16", 64), ("bf16", 40), ("f16", 36)])
def test_windowed_attention_kernel_compiles(dtype, d, arch):
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 9, 10, d], dtype)
    module = g.build([g._op(rlx.AttentionOp, [x, x, x, None], {
        **{k: i64_array(v) for k, v in WINDOWED.items()}, "causal": UnitAttr()})])  # fmt: skip
    _, src = _compile(module, arch)
    assert f"QO = 0LL, KO = {3 * d}LL, VO = {7 * d}LL" in src
    assert ("16-byte cp.async chunks" in src) == (dtype != "f32" and d % 8 == 0)


def test_attention_forms_and_strides():
    m = rlxc.run_pipeline(_module("f16", 64, "mask_b11k", 77, 130, bshd=True), "rlx-optimize")
    (op,) = ops_named(m, "rlx.attention")
    a = attention_problem(op)
    assert attention_form(a) == "mma"
    assert (a.b, a.h, a.sq, a.sk, a.dk, a.dv) == (2, 3, 77, 130, 64, 64)
    assert a.q_st == (77 * 3 * 64, 64, 3 * 64) and a.k_st == (130 * 3 * 64, 64, 3 * 64)
    assert a.o_st == (77 * 3 * 64, 64, 3 * 64)
    assert a.mask_st == (130, 0, 0, 1)
    assert attention_form(attention_problem(ops_named(rlxc.run_pipeline(_module("f32", 64, "none"), "rlx-optimize"), "rlx.attention")[0])) == "tiled"
    assert attention_form(attention_problem(ops_named(rlxc.run_pipeline(_module("bf16", 256, "none"), "rlx-optimize"), "rlx.attention")[0])) == "simt"


@pytest.mark.parametrize("arch", ARCHS)
def test_two_m_tiles_compile(arch, monkeypatch):
    from rlxc.codegen import attention as codegen

    g = rlxc.GraphBuilder()
    q = g.input("q", [8, 12, 512, 64], "bf16")
    module = g.build([g.attention(q, q, q, causal=True)])
    (op,) = ops_named(module, "rlx.attention")
    assert codegen.mma_m_tiles(attention_problem(op), 132) == 1
    _, src = _compile(module, arch)
    assert "64 query rows (1 m-tiles per warp)" in src
    assert "query fragments held in registers" in src
    monkeypatch.setattr(codegen, "FORCE_M_TILES", 2)
    _, src = _compile(module, arch)
    assert "128 query rows (2 m-tiles per warp)" in src
    assert "query fragments read from shared memory each step" in src
    _compile(_module("f16", 40, "mask_b1qk", 300, 77, bshd=True), arch)


@pytest.mark.parametrize("arch", ARCHS)
def test_long_sequences_take_two_m_tiles(arch, monkeypatch):
    """Two m-tiles per warp (query fragments from shared memory) where each
    block walks many key tiles: head_dims over 64 from 256 queries and keys
    (with 64-key tiles; 512 with a causal mask), others from 1024; one
    elsewhere."""
    from rlxc.codegen import attention as codegen

    def shape_of(b, h, s, d, causal=False):
        g = rlxc.GraphBuilder()
        q = g.input("q", [b, h, s, d], "f16")
        module = g.build([g.attention(q, q, q, causal=causal)])
        a = attention_problem(ops_named(module, "rlx.attention")[0])
        mt = codegen.mma_m_tiles(a, 132)
        return mt, codegen.mma_bn(a), codegen.mma_q_smem(a, mt)

    assert shape_of(4, 16, 1024, 128) == (2, 64, True)
    assert shape_of(16, 16, 256, 128) == (2, 64, True)
    assert shape_of(2, 16, 1024, 64) == (2, 128, True)
    # causal (blocks heaviest first): two m-tiles of d 128 from 512, of d 64 from 1024; one
    # m-tile walks 64-key tiles
    assert shape_of(8, 16, 512, 128, causal=True) == (2, 64, True)
    assert shape_of(16, 16, 256, 128, causal=True) == (1, 64, False)
    assert shape_of(2, 16, 2048, 64, causal=True) == (2, 128, True)
    assert shape_of(8, 16, 512, 64, causal=True) == (1, 64, False)
    assert shape_of(32, 12, 128, 64, causal=True) == (1, 64, False)
    monkeypatch.setattr(codegen, "CAUSAL_HEAVY_FIRST", False)  # in grid order: one m-tile, 128 keys, as before
    assert shape_of(8, 16, 512, 128, causal=True) == (1, 128, False)
    monkeypatch.undo()
    assert shape_of(8, 12, 512, 64) == (1, 128, False)
    assert shape_of(32, 12, 128, 128) == (1, 128, False)
    assert shape_of(32, 12, 128, 64) == (1, 128, False)
    g = rlxc.GraphBuilder()
    q = g.input("q", [1, 2, 700, 128], "bf16")
    _, src = _compile(g.build([g.attention(q, q, q, g.input("m", [1, 1, 1, 700], "bf16"))]), arch)
    assert "128 query rows (2 m-tiles per warp) x 64-key tiles" in src


def test_one_head_slices_become_windows_too():
    """With one head, the head transpose moves only unit axes and is
    canonicalized into a reshape: the slices still become head windows
    (read as [B, S, 1, d] with layout [0, 2, 1, 3])."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [5, 12])
    x3 = g.reshape(x, [1, 5, 12])

    def head(i):
        part = g.slice(x3, [4 * i], [4 * i + 4], axes=[2])
        return g.transpose(g.reshape(part, [1, 5, 1, 4]), [0, 2, 1, 3])

    a = g.attention(head(0), head(2), head(1), causal=True)
    module = g.build([g.reshape(g.transpose(a, [0, 2, 1, 3]), [5, 4])])
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    assert not ops_named(optimized, "rlx.slice") and not ops_named(optimized, "rlx.transpose")
    (att,) = ops_named(optimized, "rlx.attention")
    assert att.windows() == [(0, 1), (2, 1), (1, 1)] and att.layouts()[:3] == [[0, 2, 1, 3]] * 3
    inputs, _ = random_inputs(module, np.random.default_rng(13))
    (want,) = rlxc.interpret(module, inputs, float64=True)
    (got,) = rlxc.interpret(optimized, inputs, float64=True)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("d,fused", [(64, True), (512, True), (513, False), (20001, False)])
def test_attention_head_dims_past_the_cuda_kernel_are_split(d, fused):
    """rlx-cuda keeps attention whole for head_dims up to
    AttentionOp.CUDA_MAX_HEAD_DIM and splits longer ones (the simt form
    would not fit shared memory: 640 KB at 20001); the split module
    computes the same as the op on the interpreter."""
    from rlxc.dialects import rlx_cuda

    g = rlxc.GraphBuilder()
    q = g.input("q", [1, 2, 3, d], "f32")
    kv = g.input("kv", [1, 2, 4, d], "f32")
    module = g.build([g.attention(q, kv, kv, None, causal=True)])
    lowered = rlxc.run_pipeline(module.clone(), "rlx-cuda{arch=sm_90 sm_count=132}")
    sources = [op.source.data for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert any("rlx_attention" in s for s in sources) == fused
    split = rlxc.run_pipeline(module.clone(), "rlx-unfuse{target=cuda}")
    assert any(op.name == "rlx.attention" for op in split.walk()) == fused
    rng = np.random.default_rng()
    inputs = {"q": rng.standard_normal((1, 2, 3, d)).astype(np.float32),
              "kv": rng.standard_normal((1, 2, 4, d)).astype(np.float32)}
    (got,) = rlxc.interpret(split, inputs)
    q64, k64 = inputs["q"].astype(np.float64), inputs["kv"].astype(np.float64)
    s = q64 @ k64.transpose(0, 1, 3, 2) / np.sqrt(d)
    s = np.where(np.tril(np.ones((3, 4), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ k64
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

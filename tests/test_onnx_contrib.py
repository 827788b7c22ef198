"""ONNX Runtime's fused contrib ops (com.microsoft Attention,
EmbedLayerNormalization, Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd,
SkipLayerNormalization, SkipSimplifiedLayerNormalization; ai.onnx
SimplifiedLayerNormalization) against float64 numpy references of their
definitions and against ONNX Runtime (where its CPU provider has the op),
on fresh random inputs, in f32 and f16; then a BERT layer as ONNX Runtime's
transformer optimizer writes it. Tolerances: f32 1e-5 relative to the
output's largest magnitude (1e-4 through the whole layer); f16 the type's
rounding (about 1e-3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from onnx_helpers import BACKENDS, make_model, ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError  # noqa: E402

MS = "com.microsoft"
CODE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
NPT = {"f32": np.float32, "f16": np.float16}
TOL = {"f32": 1e-5, "f16": 2e-3}
_erf = np.vectorize(math.erf)



def _model(op, shapes, d, outs, domain=MS, **attrs):
    """One `op` node of inputs i0.. (`shapes`; None: absent) and outputs `outs` (names; "" absent)."""
    names = ["" if s is None else f"i{k}" for k, s in enumerate(shapes)]
    ins = [helper.make_tensor_value_info(f"i{k}", CODE[d], s) for k, s in enumerate(shapes) if s is not None]
    vis = [helper.make_tensor_value_info(o, TensorProto.FLOAT if o in ("mean", "inv") else CODE[d], None) for o in outs if o]
    return make_model([helper.make_node(op, names, outs, domain=domain, name="n", **attrs)], ins, vis, domains={MS: 1})


def _feeds(rng, shapes, d, scale=1.5):
    return {f"i{k}": (rng.normal(0, scale, s)).astype(NPT[d]) for k, s in enumerate(shapes) if s is not None}


def _run(model, feeds, backend="numpy"):
    module, params = rlxc.from_onnx(model)
    return rlxc.compile(module, backend, params=params).run(feeds)


def _close(got, want, d, backend="numpy"):
    """Within TOL[d] (relative, and of the output's largest magnitude); on the
    GPU 10x looser in f32 (another reduction order, CUDA's exp: a few ulps).
    f16: ||got - want|| / ||want|| within TOL (the device tool's METHOD.md
    measure), each element within 5 TOL of the output's scale. Elementwise
    alone failed 2 in 280 runs of the com.microsoft Attention test (f16
    scores rounded before the softmax: up to 3.1e-3 of the scale, 1.1e-3 by
    norm; session 43)."""
    w = np.asarray(want, np.float64)
    g = np.asarray(got, np.float64)
    rtol = TOL[d] * (10 if backend == "cuda" and d == "f32" else 1)
    if d == "f16":
        assert not np.isnan(g).any() and np.linalg.norm(g - w) <= rtol * np.linalg.norm(w), \
            f"relative error {np.linalg.norm(g - w) / np.linalg.norm(w):.2e} over {rtol:.0e}"
        np.testing.assert_allclose(g, w, rtol=0, atol=5 * rtol * max(1.0, np.abs(w).max()))
        return
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, np.abs(w).max()))


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("op", ["Gelu", "BiasGelu", "FastGelu", "FastGeluNoBias", "QuickGelu"])
def test_gelus(op, d):
    rng = np.random.default_rng()
    shapes = [[3, 5, 16]] if op in ("Gelu", "QuickGelu") else [[3, 5, 16], None if op == "FastGeluNoBias" else [16]]
    attrs = {"alpha": 1.3} if op == "QuickGelu" else {}
    model = _model(op.replace("NoBias", ""), shapes, d, ["y"], **attrs)
    feeds = _feeds(rng, shapes, d, 2.0)
    x = feeds["i0"].astype(np.float64) + (feeds["i1"].astype(np.float64) if "i1" in feeds else 0)
    if d == "f16" and "i1" in feeds:
        x = x.astype(np.float16).astype(np.float64)  # the input plus the bias, rounded to f16 as a model's Add is
    want = {"Gelu": _gelu, "BiasGelu": _gelu, "FastGelu": _gelu_tanh, "FastGeluNoBias": _gelu_tanh,
            "QuickGelu": lambda v: v / (1 + np.exp(-1.3 * v))}[op](x)
    got = _run(model, feeds)[0]
    _close(got, want, d)
    _close(got, ort_run(model, feeds)[0], d)


@pytest.mark.parametrize("d", ["f32", "f16"])
def test_bias_add(d):
    """X + bias + skip (ONNX Runtime has no CPU kernel: float64 numpy only)."""
    rng = np.random.default_rng()
    shapes = [[2, 9, 8], [8], [2, 9, 8]]
    feeds = _feeds(rng, shapes, d)
    want = feeds["i0"].astype(np.float64) + feeds["i1"] + feeds["i2"].astype(np.float64)
    _close(_run(_model("BiasAdd", shapes, d, ["y"]), feeds)[0], want, d)


def _norm_ref(s, gamma, beta, eps, rms):
    if rms:
        return s / np.sqrt((s * s).mean(-1, keepdims=True) + eps) * gamma
    m = s.mean(-1, keepdims=True)
    v = ((s - m) ** 2).mean(-1, keepdims=True)
    return (s - m) / np.sqrt(v + eps) * gamma + beta


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("form", ["bias", "no-bias", "broadcast-skip"])
def test_skip_layer_norms(rms, form, d):
    """SkipLayerNormalization / SkipSimplifiedLayerNormalization of input +
    skip (+ bias): the norm and the sum (input_skip_bias_sum) against float64
    numpy and ONNX Runtime; f32 SkipLayerNormalization also its mean and
    inv_std_var. Hidden 384, a row count that is not a power of two."""
    rng = np.random.default_rng()
    b, s, h = 2, 7, 384
    skip = [1, s, h] if form == "broadcast-skip" else [b, s, h]
    shapes = [[b, s, h], skip, [h]] + ([] if rms else [[h]]) + ([[h]] if form == "bias" else [])
    op = "SkipSimplifiedLayerNormalization" if rms else "SkipLayerNormalization"
    stats = d == "f32" and not rms
    outs = ["y", "mean" if stats else "", "inv" if stats else "", "sum"]
    model = _model(op, shapes, d, outs, epsilon=1e-6)
    feeds = _feeds(rng, shapes, d)
    f = {k: v.astype(np.float64) for k, v in feeds.items()}
    total = f["i0"] + f["i1"] + (f[f"i{len(shapes) - 1}"] if form == "bias" else 0)
    gamma, beta = f["i2"], (0 if rms else f["i3"])
    got = _run(model, feeds)
    want = ort_run(model, feeds)
    _close(got[0], _norm_ref(total, gamma, beta, 1e-6, rms), d)
    _close(got[-1], total, d)
    if stats:
        _close(got[1], total.mean(-1, keepdims=True), d)
        _close(got[2], 1 / np.sqrt(total.var(-1, keepdims=True) + 1e-6), d)
    for g_, w_ in zip(got, want):
        _close(g_, w_, d)


@pytest.mark.parametrize("d", ["f32", "f16"])
def test_simplified_layer_norm(d):
    """ai.onnx SimplifiedLayerNormalization (ONNX Runtime's RMS norm) over hidden 768."""
    rng = np.random.default_rng()
    shapes = [[3, 5, 768], [768]]
    model = _model("SimplifiedLayerNormalization", shapes, d, ["y"], domain="", epsilon=1e-6)
    feeds = _feeds(rng, shapes, d)
    got = _run(model, feeds)[0]
    _close(got, _norm_ref(feeds["i0"].astype(np.float64), feeds["i1"].astype(np.float64), 0, 1e-6, True), d)
    _close(got, ort_run(model, feeds)[0], d)


def test_contrib_errors_name_the_node():
    """A skip of another hidden size, and the simplified norm's statistics outputs."""
    with pytest.raises(OnnxImportError, match="SkipLayerNormalization node 'n'.*skip \\[2, 3, 5\\]"):
        rlxc.from_onnx(_model("SkipLayerNormalization", [[2, 3, 4], [2, 3, 5], [4], [4]], "f32", ["y"]))
    with pytest.raises(OnnxImportError, match="SkipSimplifiedLayerNormalization node 'n'.*the mean and inv_std_var outputs"):
        rlxc.from_onnx(_model("SkipSimplifiedLayerNormalization", [[2, 3, 4], [2, 3, 4], [4]], "f32", ["y", "", "inv"]))


def _attention_ref(x, w, bias, heads, sizes, mask_bias, causal, scale):
    """float64 numpy: the merged projection, heads, softmax(q kᵀ scale + mask) v."""
    qkv = x @ w + bias
    b, s, _ = x.shape
    q, k, v = np.split(qkv, np.cumsum(sizes)[:2], axis=-1)

    def heads_of(t):
        return t.reshape(b, s, heads, -1).transpose(0, 2, 1, 3)
    q, k, v = heads_of(q), heads_of(k), heads_of(v)
    sc = q @ k.transpose(0, 1, 3, 2) * (scale or 1 / math.sqrt(q.shape[-1])) + mask_bias
    if causal:
        sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(b, s, -1)


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("form", ["none", "raw-2d", "raw-3d", "key-counts", "unidirectional", "attention-bias", "v-size-scale"])
def test_ms_attention(form, d):
    """com.microsoft Attention (merged QKV weights, 4 heads, sequence of 7)
    against float64 numpy, each mask form as ONNX Runtime applies it
    (mask_filter_value, -10000, added to masked keys' scores), and against
    ONNX Runtime in f32 (its CPU provider has no f16 Attention)."""
    rng = np.random.default_rng()
    b, s, hin, heads = 2, 7, 32, 4
    sizes = [32, 32, 48] if form == "v-size-scale" else [32, 32, 32]
    x = rng.normal(0, 1, (b, s, hin))
    w = rng.normal(0, 0.3, (hin, sum(sizes)))
    bias = rng.normal(0, 0.1, sum(sizes))
    attrs = {"num_heads": heads}
    feeds = {"i0": x.astype(NPT[d]), "i1": w.astype(NPT[d]), "i2": bias.astype(NPT[d])}
    shapes = [list(x.shape), list(w.shape), list(bias.shape)]
    mask_bias = np.zeros((b, 1, 1, s))
    if form == "raw-2d":
        m = np.ones((b, s), np.int32)
        m[0, 5:] = 0
        m[1, 2] = 0
        feeds["i3"], mask_bias = m, np.where(m == 0, -10000.0, 0.0).reshape(b, 1, 1, s)
    elif form == "raw-3d":
        m = (rng.uniform(size=(b, s, s)) > 0.3).astype(np.int32)
        feeds["i3"], mask_bias = m, np.where(m == 0, -10000.0, 0.0).reshape(b, 1, s, s)
    elif form == "key-counts":
        m = np.array([4, 7], np.int32)
        feeds["i3"] = m
        mask_bias = np.where(np.arange(s)[None, :] < m[:, None], 0.0, -10000.0).reshape(b, 1, 1, s)
    elif form == "unidirectional":
        attrs["unidirectional"] = 1
    elif form == "attention-bias":
        ab = rng.normal(0, 1, (1, heads, s, s))
        feeds["i5"], mask_bias = ab.astype(NPT[d]), ab
    elif form == "v-size-scale":
        attrs |= {"qkv_hidden_sizes": sizes, "scale": 0.2}
    if "i3" in feeds:
        shapes.append(list(feeds["i3"].shape))
    if "i5" in feeds:
        shapes += [None, None, list(feeds["i5"].shape)]
    model = _model("Attention", shapes, d, ["y"], **attrs)
    if "i3" in feeds:
        model.graph.input[3].type.tensor_type.elem_type = TensorProto.INT32
    if d == "f16":
        f = {k: v.astype(np.float64) for k, v in feeds.items()}
        x, w, bias = f["i0"], f["i1"], f["i2"]
    want = _attention_ref(x, w, bias, heads, sizes, mask_bias, form == "unidirectional", attrs.get("scale"))
    got = _run(model, feeds)[0]
    _close(got, want, d)
    if d == "f32":
        _close(got, ort_run(model, feeds)[0], d)


def test_embed_layer_norm():
    """com.microsoft EmbedLayerNormalization: word + position (+ segment)
    embeddings, layer-normed; mask_index (each row's count of ones) and the
    embeddings' sum, against float64 numpy and ONNX Runtime; then with
    position_ids."""
    rng = np.random.default_rng()
    b, s, h, vocab = 3, 9, 64, 50
    tables = {"word": rng.normal(0, 1, (vocab, h)), "pos": rng.normal(0, 1, (16, h)), "seg": rng.normal(0, 1, (2, h)),
              "gamma": rng.normal(1, 0.1, h), "beta": rng.normal(0, 0.1, h)}
    ids = rng.integers(0, vocab, (b, s)).astype(np.int32)
    seg = rng.integers(0, 2, (b, s)).astype(np.int32)
    mask = np.ones((b, s), np.int32)
    mask[0, 6:] = 0
    mask[2, 3:] = 0
    for with_pos in (False, True):
        pos_ids = rng.integers(0, 16, (b, s)).astype(np.int32) if with_pos else None
        names = ["ids", "seg", "word", "pos", "segt", "gamma", "beta", "mask"] + (["pos_ids"] if with_pos else [])
        node = helper.make_node("EmbedLayerNormalization", names, ["y", "mi", "sum"], domain=MS, name="n", epsilon=1e-12)
        ints = [helper.make_tensor_value_info(k, TensorProto.INT32, [b, s]) for k in ("ids", "seg", "mask")]
        ints += [helper.make_tensor_value_info("pos_ids", TensorProto.INT32, [b, s])] if with_pos else []
        inits = [onnx.numpy_helper.from_array(tables[k].astype(np.float32), name)
                 for k, name in (("word", "word"), ("pos", "pos"), ("seg", "segt"), ("gamma", "gamma"), ("beta", "beta"))]
        outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, s, h]), helper.make_tensor_value_info("mi", TensorProto.INT32, [b]),
                helper.make_tensor_value_info("sum", TensorProto.FLOAT, [b, s, h])]
        model = make_model([node], ints, outs, inits, domains={MS: 1})
        feeds = {"ids": ids, "seg": seg, "mask": mask} | ({"pos_ids": pos_ids} if with_pos else {})
        got = _run(model, feeds)
        t = {k: v.astype(np.float32).astype(np.float64) for k, v in tables.items()}
        total = t["word"][ids] + (t["pos"][pos_ids] if with_pos else t["pos"][:s]) + t["seg"][seg]
        _close(got[0], _norm_ref(total, t["gamma"], t["beta"], 1e-12, False), "f32")
        np.testing.assert_array_equal(got[1], mask.sum(1))
        _close(got[2], total, "f32")
        for g_, w_ in zip(got, ort_run(model, feeds)):
            _close(g_, w_, "f32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_optimized_bert_layer_matches_onnxruntime(backend):
    """A BERT layer as ONNX Runtime's transformer optimizer writes it:
    EmbedLayerNormalization (its mask_index feeding the attention),
    Attention, the output projection into SkipLayerNormalization (with its
    bias), MatMul, FastGelu (with its bias), MatMul, SkipLayerNormalization;
    hidden 384, 6 heads, sequences of 37 with right padding; against ONNX
    Runtime, f32, tolerance 1e-4 of the output's largest magnitude."""
    rng = np.random.default_rng()
    b, s, h, heads, ff, vocab = 2, 37, 384, 6, 1536, 100

    def p(name, shape, sd=0.05, mean=0.0):
        return onnx.numpy_helper.from_array(rng.normal(mean, sd, shape).astype(np.float32), name)

    inits = [p("word", (vocab, h), 1.0), p("pos", (64, h), 1.0), p("segt", (2, h), 1.0), p("g0", (h,), 0.1, 1.0), p("b0", (h,)),
             p("wqkv", (h, 3 * h)), p("bqkv", (3 * h,)), p("wo", (h, h)), p("bo", (h,)), p("g1", (h,), 0.1, 1.0), p("b1", (h,)),
             p("w1", (h, ff)), p("bf", (ff,)), p("w2", (ff, h)), p("b2f", (h,)), p("g2", (h,), 0.1, 1.0), p("b2", (h,))]
    nodes = [
        helper.make_node("EmbedLayerNormalization", ["ids", "seg", "word", "pos", "segt", "g0", "b0", "mask"], ["emb", "mi"],
                         domain=MS, epsilon=1e-12),
        helper.make_node("Attention", ["emb", "wqkv", "bqkv", "mi"], ["att"], domain=MS, num_heads=heads),
        helper.make_node("MatMul", ["att", "wo"], ["ao"]),
        helper.make_node("SkipLayerNormalization", ["ao", "emb", "g1", "b1", "bo"], ["h1"], domain=MS, epsilon=1e-12),
        helper.make_node("MatMul", ["h1", "w1"], ["f1"]),
        helper.make_node("FastGelu", ["f1", "bf"], ["f2"], domain=MS),
        helper.make_node("MatMul", ["f2", "w2"], ["f3"]),
        helper.make_node("SkipLayerNormalization", ["f3", "h1", "g2", "b2", "b2f"], ["y"], domain=MS, epsilon=1e-12),
    ]
    ins = [helper.make_tensor_value_info(k, TensorProto.INT32, [b, s]) for k in ("ids", "seg", "mask")]
    model = make_model(nodes, ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, s, h])], inits, domains={MS: 1})
    mask = np.ones((b, s), np.int32)
    mask[1, 20:] = 0
    feeds = {"ids": rng.integers(0, vocab, (b, s)).astype(np.int32), "seg": rng.integers(0, 2, (b, s)).astype(np.int32), "mask": mask}
    module, params = rlxc.from_onnx(model)
    assert "rlx.attention" in str(module) and "rlx.fused_residual_layer_norm" in str(module)
    got = rlxc.compile(module, backend, params=params).run(feeds)[0]
    want = ort_run(model, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def _pack_bits(vals, bits):
    """Fields of `bits` into bytes, lowest bits first, along the last axis (ONNX Runtime's packing)."""
    per = 8 // bits
    v = vals.reshape(*vals.shape[:-1], -1, per).astype(np.uint8)
    out = np.zeros(v.shape[:-1], np.uint8)
    for i in range(per):
        out |= (v[..., i] << (bits * i)).astype(np.uint8)
    return out


@pytest.mark.parametrize("d", ["f32", "f16"])
@pytest.mark.parametrize("zp", ["default", "packed", "float"])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_matmul_nbits(bits, zp, d):
    """com.microsoft MatMulNBits: A [3, 5, 100] by weights of K = 100 in
    blocks of 32 (the last one padded), N = 24, with a bias; zero points
    absent (2^(bits-1)), packed or unpacked; against float64 numpy of the
    dequantized weights, and ONNX Runtime (f32; its CPU provider refuses
    8-bit weights with float zero points)."""
    rng = np.random.default_rng()
    kk, nn, bs = 100, 24, 32
    blocks = -(-kk // bs)
    q = rng.integers(0, 2**bits, (nn, blocks, bs))
    scale = rng.uniform(0.01, 0.05, (nn, blocks)).astype(NPT[d])
    inits = [onnx.numpy_helper.from_array(_pack_bits(q, bits), "B"), onnx.numpy_helper.from_array(scale, "S")]
    names = ["A", "B", "S"]
    if zp == "packed":
        z = rng.integers(0, 2**bits, (nn, blocks))
        padded = np.zeros((nn, -(-blocks * bits // 8) * 8 // bits), np.uint8)
        padded[:, :blocks] = z
        inits.append(onnx.numpy_helper.from_array(_pack_bits(padded, bits), "Z"))
    elif zp == "float":
        z = rng.uniform(0, 2**bits - 1, (nn, blocks)).astype(NPT[d])
        inits.append(onnx.numpy_helper.from_array(z, "Z"))
    else:
        z = np.full((nn, blocks), 2 ** (bits - 1))
    names += ["Z" if zp != "default" else "", "", "bias"]  # (g_idx absent)
    inits.append(onnx.numpy_helper.from_array(rng.normal(0, 0.1, nn).astype(NPT[d]), "bias"))
    node = helper.make_node("MatMulNBits", names, ["Y"], domain=MS, K=kk, N=nn, bits=bits, block_size=bs, name="n")
    model = make_model([node], [helper.make_tensor_value_info("A", CODE[d], [3, 5, kk])],
                       [helper.make_tensor_value_info("Y", CODE[d], [3, 5, nn])], inits, domains={MS: 1})
    a = rng.normal(0, 1, (3, 5, kk)).astype(NPT[d])
    w = ((q - z.astype(np.float64)[..., None]) * scale.astype(np.float64)[..., None]).reshape(nn, -1)[:, :kk]
    if d == "f16":
        w = w.astype(np.float16).astype(np.float64)  # the weights dequantized into A's type
    want = a.astype(np.float64) @ w.T + onnx.numpy_helper.to_array(inits[-1]).astype(np.float64)
    module, params = rlxc.from_onnx(model)
    assert "rlx.linear" in str(module)
    got = rlxc.compile(module, "numpy", params=params).run({"A": a})[0]
    _close(got, want, d)
    if d == "f32" and not (bits == 8 and zp == "float"):
        np.testing.assert_allclose(got, ort_run(model, {"A": a})[0], rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_matmul_nbits_errors_name_the_node():
    """Weights not known at import, and a B of the wrong packed shape."""
    model = make_model(
        [helper.make_node("MatMulNBits", ["A", "B", "S"], ["Y"], domain=MS, K=64, N=4, bits=4, block_size=32, name="n")],
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 64])], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])],
        [onnx.numpy_helper.from_array(np.zeros((4, 2, 8), np.uint8), "B"), onnx.numpy_helper.from_array(np.ones((4, 2), np.float32), "S")], domains={MS: 1})
    with pytest.raises(OnnxImportError, match="MatMulNBits node 'n'.*B must be a UINT8 initializer of shape \\[4, 2, 16\\]"):
        rlxc.from_onnx(model)


def _rope_ref(x, cos, sin, interleaved, rot):
    """float64: pairs of the first `rot` elements of each head rotated ([..., d] x, [..., rot / 2] angles)."""
    xr, rest = x[..., :rot], x[..., rot:]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        y = np.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).reshape(xr.shape)
    else:
        x1, x2 = xr[..., : rot // 2], xr[..., rot // 2:]
        y = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)
    return np.concatenate([y, rest], -1)


@pytest.mark.parametrize("form", ["offset", "ids-interleaved", "4d-partial"])
def test_ms_rotary_embedding(form):
    """com.microsoft RotaryEmbedding: a [1] position offset over [b, s, h·d];
    [b, s] position ids, interleaved pairs; a [b, heads, s, d] input with a
    rotary_embedding_dim of half the head; against float64 numpy and ONNX
    Runtime (f32)."""
    rng = np.random.default_rng()
    b, s, heads, d, maxpos = 2, 5, 3, 16, 40
    rot = d // 2 if form == "4d-partial" else d
    ang = rng.uniform(0, 6, (maxpos, rot // 2))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    x = rng.normal(0, 1, (b, heads, s, d) if form == "4d-partial" else (b, s, heads * d)).astype(np.float32)
    pos = np.array([7], np.int64) if form == "offset" else rng.integers(0, maxpos, (b, s)).astype(np.int64)
    attrs = {"interleaved": int(form == "ids-interleaved")}
    if form == "4d-partial":
        attrs |= {"rotary_embedding_dim": rot, "num_heads": heads}
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, name="n", **attrs)
    inits = [onnx.numpy_helper.from_array(cos, "cos"), onnx.numpy_helper.from_array(sin, "sin")]
    model = make_model(
        [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
                 helper.make_tensor_value_info("pos", TensorProto.INT64, list(pos.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))], inits, domains={MS: 1})
    p = pos + np.arange(s) if form == "offset" else pos  # [1] + [s] -> [s], broadcast over the batch
    p = np.broadcast_to(p, (b, s))
    c, sn = cos.astype(np.float64)[p], sin.astype(np.float64)[p]  # [b, s, rot / 2]
    if form == "4d-partial":
        want = _rope_ref(x.astype(np.float64), c[:, None], sn[:, None], False, rot)
    else:
        xh = x.astype(np.float64).reshape(b, s, heads, d)
        want = _rope_ref(xh, c[:, :, None], sn[:, :, None], form == "ids-interleaved", rot).reshape(x.shape)
    got = _run(model, {"x": x, "pos": pos})[0]
    _close(got, want, "f32")
    _close(got, ort_run(model, {"x": x, "pos": pos})[0], "f32")


@pytest.mark.parametrize("form", ["self-bias", "cross-counts", "raw-mask-attention-bias", "bnsh-kv", "past-unidirectional"])
def test_ms_multi_head_attention(form):
    """com.microsoft MultiHeadAttention, 4 heads of 8: self attention with
    the projections' bias; cross attention (9 keys for 5 queries) with key
    counts; a raw [b, kv] mask plus attention_bias; K and V given as heads
    [b, heads, kv, d]; a past of 6 before the keys, causal, with the
    present outputs. Against float64 numpy and ONNX Runtime (f32)."""
    rng = np.random.default_rng()
    b, s, heads, dh = 2, 5, 4, 8
    h = heads * dh
    kv = 9 if form == "cross-counts" else s
    past = 6 if form == "past-unidirectional" else 0
    f = {"q": rng.normal(0, 1, (b, s, h)), "k": rng.normal(0, 1, (b, kv, h)), "v": rng.normal(0, 1, (b, kv, h))}
    if form == "bnsh-kv":
        f["k"], f["v"] = (t.reshape(b, kv, heads, dh).transpose(0, 2, 1, 3) for t in (f["k"], f["v"]))
    names = ["q", "k", "v", "", "", "", "", ""]
    attrs = {"num_heads": heads}
    if form == "self-bias":
        f["bias"] = rng.normal(0, 0.3, 3 * h)
        names[3] = "bias"
    if form == "cross-counts":
        f["mask"] = np.array([9, 4], np.int32)
        names[4] = "mask"
    if form == "raw-mask-attention-bias":
        m = np.ones((b, kv), np.int32)
        m[1, 1] = m[0, 4] = 0
        f["mask"], f["ab"] = m, rng.normal(0, 1, (b, heads, s, kv))
        names[4], names[5] = "mask", "ab"
    if past:
        f["pk"], f["pv"] = rng.normal(0, 1, (b, heads, past, dh)), rng.normal(0, 1, (b, heads, past, dh))
        names[6], names[7] = "pk", "pv"
        attrs["unidirectional"] = 1
    outs = ["y", "pres_k", "pres_v"] if past else ["y"]
    ins = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "mask" else TensorProto.FLOAT, list(v.shape)) for k, v in f.items()]
    node = helper.make_node("MultiHeadAttention", names, outs, domain=MS, name="n", **attrs)
    model = make_model([node], ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], domains={MS: 1})
    feeds = {k: v.astype(np.int32 if k == "mask" else np.float32) for k, v in f.items()}
    x = {k: v.astype(np.float64) for k, v in feeds.items()}
    q, k, v = x["q"], x["k"], x["v"]
    if "bias" in x:
        q, k, v = q + x["bias"][:h], k + x["bias"][h:2 * h], v + x["bias"][2 * h:]

    def heads_of(t):
        return t if t.ndim == 4 else t.reshape(b, -1, heads, dh).transpose(0, 2, 1, 3)
    q, k, v = heads_of(q), heads_of(k), heads_of(v)
    if past:
        k, v = np.concatenate([x["pk"], k], 2), np.concatenate([x["pv"], v], 2)
    total = k.shape[2]
    sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    if form == "cross-counts":
        sc = sc + np.where(np.arange(total)[None, :] < f["mask"][:, None], 0.0, -10000.0)[:, None, None, :]
    if form == "raw-mask-attention-bias":
        sc = sc + np.where(f["mask"] == 0, -10000.0, 0.0)[:, None, None, :] + x["ab"]
    if past:
        sc = np.where(np.arange(total)[None, :] <= np.arange(s)[:, None] + past, sc, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    want = ((p / p.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    got = _run(model, feeds)
    _close(got[0], want, "f32")
    if past:
        _close(got[1], k, "f32")
        _close(got[2], v, "f32")
    for g_, w_ in zip(got, ort_run(model, feeds)):
        _close(g_, w_, "f32")


def _gqa_ref(f, hq, hk, d, s, past, window=-1):
    """float64 numpy of grouped-query attention over a KV cache, no rotary:
    (output rows, present_key, present_value), with row b's cached count P =
    seqlens_k + 1 - s (0 without a past) and keys [0, P + s)."""
    b = f["q"].shape[0]
    T = f["sl"].astype(np.int64) + 1
    P = T - s if past else np.zeros(b, np.int64)
    heads = lambda t, h: t.reshape(b, s, h, d).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(f["q"], hq), heads(f["k"], hk), heads(f["v"], hk)
    keys = past + s
    pk = np.zeros((b, hk, keys, d)) if not past else np.concatenate([f["pk"], np.zeros((b, hk, s, d))], 2)
    pv = np.zeros((b, hk, keys, d)) if not past else np.concatenate([f["pv"], np.zeros((b, hk, s, d))], 2)
    pk, pv = pk.copy(), pv.copy()
    y = np.zeros((b, s, hq * d))
    for r in range(b):
        pk[r, :, P[r]:P[r] + s], pv[r, :, P[r]:P[r] + s] = k[r], v[r]
        kk, vv = np.repeat(pk[r], hq // hk, 0), np.repeat(pv[r], hq // hk, 0)
        sc = q[r] @ kk.transpose(0, 2, 1) / math.sqrt(d)
        i, j = np.arange(s)[:, None] + P[r], np.arange(keys)[None, :]
        ok = (j <= i) & (j < T[r]) & ((j > i - window) if window >= 0 else True)
        sc = np.where(ok, sc, -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        y[r] = ((p / p.sum(-1, keepdims=True)) @ vv).transpose(1, 0, 2).reshape(s, -1)
    return y, pk, pv, T


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # padded rows a window masks wholly (unspecified)
@pytest.mark.parametrize("form", ["prompt", "prompt-rotary", "prompt-window", "prompt-softcap", "prompt-packed",
                                  "decode", "decode-rotary", "decode-window", "chunk"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_ms_group_query_attention(form, backend):
    """com.microsoft GroupQueryAttention, 4 query heads over 2 key heads of
    16: a right-padded prompt (seqlens_k 5 and 3 of 6 tokens), with rotary
    embeddings, a local window of 2, softcap, packed QKV; a decoding step
    over a past of 5 whose rows hold 5 and 2 cached tokens, and a chunk of 3
    over 2 cached tokens.
    Against float64 numpy (no rotary, no softcap) and ONNX Runtime, on the
    rows the op defines: output rows of valid tokens, present rows below
    seqlens_k + 1."""
    rng = np.random.default_rng()
    b, hq, hk, d = (1 if form == "chunk" else 2), 4, 2, 16  # (ONNX Runtime takes chunks one batch row at a time)
    s = {"decode": 1, "chunk": 3}.get(form.split("-")[0], 6)
    past = 0 if form.startswith("prompt") else 5
    f = {"q": rng.normal(0, 1, (b, s, hq * d)), "k": rng.normal(0, 1, (b, s, hk * d)), "v": rng.normal(0, 1, (b, s, hk * d))}
    names = ["q", "k", "v", "", "", "sl", "tot"]
    if past:
        f["pk"], f["pv"] = rng.normal(0, 1, (b, hk, past, d)), rng.normal(0, 1, (b, hk, past, d))
        names[3:5] = ["pk", "pv"]
    f["sl"] = np.array([5, 3] if not past else [past + s - 1, 1 + s][2 - b:], np.int32)
    f["tot"] = np.array(int(f["sl"].max()) + 1, np.int32)
    attrs = {"num_heads": hq, "kv_num_heads": hk}
    if "rotary" in form:
        ang = rng.uniform(0, 6, (32, d // 2))
        f["cos"], f["sin"] = np.cos(ang), np.sin(ang)
        names += ["cos", "sin"]
        attrs["do_rotary"] = 1
    window = 2 if "window" in form else -1
    if window >= 0:
        attrs["local_window_size"] = window
    if "softcap" in form:
        attrs["softcap"] = 2.0
    feeds = {k: v.astype(np.int32 if k in ("sl", "tot") else np.float32) for k, v in f.items()}
    if form == "prompt-packed":
        feeds["q"] = np.concatenate([feeds.pop("q"), feeds.pop("k"), feeds.pop("v")], -1)
        names[1:3] = ["", ""]
    ins = [helper.make_tensor_value_info(k, TensorProto.INT32 if k in ("sl", "tot") else TensorProto.FLOAT,
                                         list(v.shape)) for k, v in feeds.items()]
    outs = ["y", "present_k", "present_v"]
    node = helper.make_node("GroupQueryAttention", names, outs, domain=MS, name="n", **attrs)
    model = make_model([node], ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], domains={MS: 1})
    got = _run(model, feeds, backend)
    want = ort_run(model, feeds)
    ref = None if "rotary" in form or "softcap" in form else _gqa_ref(
        {k: v.astype(np.float64) for k, v in f.items()}, hq, hk, d, s, past, window)
    T = f["sl"] + 1
    for r in range(b):
        rows = min(s, T[r]) if not past else s
        for g_, w_, x in zip(got, want, ref[:3] if ref else (None,) * 3):
            sl_ = (r, slice(0, rows)) if g_.ndim == 3 else (r, slice(None), slice(0, T[r]))
            _close(g_[sl_], w_[sl_], "f32", backend)
            if x is not None:
                _close(g_[sl_], x[sl_], "f32", backend)


@pytest.mark.parametrize("act", [("", []), ("Relu", []), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.7]),
                                 ("HardSigmoid", [0.3, 0.4]), ("Sigmoid", []), ("Tanh", [])])
def test_fused_conv_gemm(act):
    """com.microsoft FusedConv (stride 2, pads, bias, the Z summand) and
    FusedGemm (transB, alpha, beta) with each MLAS activation and its
    parameters (FusedGemm: Relu for none and Clip, which ONNX Runtime's
    kernel refuses), against ONNX Runtime (f32)."""
    rng = np.random.default_rng()
    name, params = act
    conv_attrs = {"strides": [2, 2], "pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    if name:
        conv_attrs |= {"activation": name, "activation_params": params} if params else {"activation": name}
    gemm_attrs = {"transB": 1, "alpha": 0.7, "beta": 0.5}
    # (ONNX Runtime's FusedGemm takes no Clip and needs an activation: Relu there)
    gemm_act = "Relu" if name in ("", "Clip") else name
    gemm_attrs |= {"activation": gemm_act} | dict(zip(("activation_alpha", "activation_beta"), params if gemm_act == name else []))
    x = rng.normal(0, 1, (2, 3, 9, 9)).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(rng.normal(0, 0.3, s).astype(np.float32), k)
             for k, s in (("W", (4, 3, 3, 3)), ("B", (4,)), ("GW", (6, 4 * 5 * 5)), ("GC", (6,)))]
    nodes = [helper.make_node("FusedConv", ["x", "W", "B", "z"], ["c"], domain=MS, **conv_attrs),
             helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("FusedGemm", ["f", "GW", "GC"], ["y"], domain=MS, **gemm_attrs)]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 9]), helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4, 5, 5])]
    model = make_model(nodes, ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("c", "y")], inits, domains={MS: 1})
    feeds = {"x": x, "z": rng.normal(0, 1, (2, 4, 5, 5)).astype(np.float32)}
    for g_, w_ in zip(_run(model, feeds), ort_run(model, feeds)):
        _close(g_, w_, "f32")
        assert np.ptp(w_) > 0.1  # not one value throughout


@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_fused_matmul(trans):
    """com.microsoft FusedMatMul: batched [2, 3, ., .] operands transposed on
    their last two axes by transA/transB, times alpha 0.25, against ONNX
    Runtime."""
    rng = np.random.default_rng()
    ta, tb = trans
    a = rng.normal(0, 1, (2, 3, 7, 5) if ta else (2, 3, 5, 7)).astype(np.float32)
    b = rng.normal(0, 1, (3, 6, 7) if tb else (3, 7, 6)).astype(np.float32)
    node = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transA=ta, transB=tb, alpha=0.25)
    model = make_model([node], [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a.shape)),
                                helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b.shape))],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], domains={MS: 1})
    aa = a.astype(np.float64).swapaxes(-1, -2) if ta else a.astype(np.float64)
    bb = b.astype(np.float64).swapaxes(-1, -2) if tb else b.astype(np.float64)
    got = _run(model, {"a": a, "b": b})[0]
    _close(got, 0.25 * (aa @ bb), "f32")
    _close(got, ort_run(model, {"a": a, "b": b})[0], "f32")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("b, s, seqlens", [(2, 1, [7, 4]), (1, 3, [6])])
def test_ms_group_query_attention_shared_buffer(b, s, seqlens, backend):
    """GroupQueryAttention over a cache buffer of the whole sequence's
    length (12; ONNX Runtime GenAI's shared past/present), with
    total_sequence_length a constant: the present keeps the buffer's 12 rows,
    the new rows written after each row's cached ones; a decoding step over
    two rows holding 7 and 4 keys after it, and a chunk of 3. Against ONNX
    Runtime on the rows it defines."""
    rng = np.random.default_rng()
    hq, hk, d, cap = 4, 2, 16, 12
    f = {"q": rng.normal(0, 1, (b, s, hq * d)), "k": rng.normal(0, 1, (b, s, hk * d)), "v": rng.normal(0, 1, (b, s, hk * d)),
         "pk": rng.normal(0, 1, (b, hk, cap, d)), "pv": rng.normal(0, 1, (b, hk, cap, d)), "sl": np.array(seqlens)}
    feeds = {k: v.astype(np.int32 if k == "sl" else np.float32) for k, v in f.items()}
    ins = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "sl" else TensorProto.FLOAT, list(v.shape)) for k, v in feeds.items()]
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sl", "tot"], ["y", "present_k", "present_v"],
                            domain=MS, num_heads=hq, kv_num_heads=hk)
    tot = onnx.numpy_helper.from_array(np.array(max(seqlens) + 1, np.int32), "tot")
    model = make_model([node], ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "present_k", "present_v")],
                       [tot], domains={MS: 1})
    got, want = _run(model, feeds, backend), ort_run(model, feeds)
    assert got[1].shape == want[1].shape == (b, hk, cap, d)
    _close(got[0], want[0], "f32", backend)
    for r, t in enumerate(np.array(seqlens) + 1):
        for g_, w_ in zip(got[1:], want[1:]):
            _close(g_[r, :, :t], w_[r, :, :t], "f32", backend)

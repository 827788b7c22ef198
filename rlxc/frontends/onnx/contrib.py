"""ONNX Runtime's contrib ops (domain com.microsoft) outside quantization
(qlinear.py): those its transformer optimizer
(`onnxruntime.transformers.optimizer`) fuses into exported models
(Attention, MultiHeadAttention, EmbedLayerNormalization,
SkipLayerNormalization, SkipSimplifiedLayerNormalization, Gelu, BiasGelu,
FastGelu, QuickGelu, BiasAdd), those of its LLM exports
(GroupQueryAttention, RotaryEmbedding, MatMulNBits), and those its own
graph optimizations leave in the models it saves (FusedConv, FusedGemm,
FusedMatMul); and SimplifiedLayerNormalization, which ONNX Runtime
registers in the ai.onnx domain (RMSNormalization's meaning).

Each is its definition in ONNX Runtime's core/graph/contrib_ops/*_defs.cc
(and, where the text leaves a choice, what its CPU kernels compute), built
from the rlx ops that already say it, mostly through the ai.onnx op's own
emitter (`OpView`): the attentions are `rlx.attention` through the ai.onnx
Attention emitter, with their masks as additive biases; the GELUs are
`rlx.gelu` (erf) and `rlx.gelu_tanh` of the input (plus the bias); the
skip norms are `rlx.fused_residual_layer_norm` / `rlx.fused_residual_rms_norm`
of input + skip (+ bias), the sum also an output (input_skip_bias_sum)
where the model reads it.
"""

from __future__ import annotations

import numpy as np

from rlxc.dialects.types import dtype
from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Const, Node, OpView, Value, as_type, emitter
from rlxc.frontends.onnx.reductions import _affine_param, _rms_norm, _stats
from rlxc.values import round_bf16

MS = "com.microsoft"


def _float_input(n: Node, i: int) -> Tensor:
    x = n.tensor(i)
    if x.dtype not in ("f32", "f16", "bf16"):
        raise n.unsupported(f"input #{i} of type {x.dtype}", "FLOAT, FLOAT16, BFLOAT16")
    return x


def _biased(n: Node, i: int) -> Tensor:
    """Input 0 plus the bias at input i where the node has one."""
    x = _float_input(n, 0)
    if n.input(i) is None:
        return x
    b = n.tensor(i)
    if b.dtype != x.dtype:
        raise n.error(f"the bias's type {b.dtype} differs from the input's {x.dtype}")
    return n.g.add(x, b)


@emitter(f"{MS}:Gelu", f"{MS}:BiasGelu", f"{MS}:FastGelu")
def _gelu(n: Node) -> list[Value]:
    """Gelu: 0.5 x (1 + erf(x / sqrt 2)); BiasGelu the same of A + B;
    FastGelu the tanh form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))),
    of X (+ bias)."""
    x = _biased(n, 1)
    return [n.g.gelu_tanh(x) if n.op_type == "FastGelu" else n.g.gelu(x)]


@emitter(f"{MS}:QuickGelu")
def _quick_gelu(n: Node) -> list[Value]:
    """x sigmoid(alpha x), alpha 1.702 by default."""
    x = _float_input(n, 0)
    return [n.g.mul(x, n.g.sigmoid(n.g.mul(x, n.imp.scalar(float(n.attr("alpha", 1.702)), x.dtype))))]


@emitter(f"{MS}:BiasAdd")
def _bias_add(n: Node) -> list[Value]:
    """X + bias + skip."""
    return [n.g.add(_biased(n, 1), n.tensor(2))]


@emitter(f"{MS}:SkipLayerNormalization", f"{MS}:SkipSimplifiedLayerNormalization")
def _skip_norm(n: Node) -> list[Value]:
    """LayerNormalization (RMS for the simplified form) of input + skip (+
    bias) over the last axis, epsilon 1e-12 by default: outputs the norm,
    the mean (not in the simplified form) and inv_std_var of the sum (f32,
    kept as an extent of 1), and the sum itself."""
    rms = n.op_type == "SkipSimplifiedLayerNormalization"
    x, skip = _float_input(n, 0), n.tensor(1)
    h = x.shape[-1]
    if skip.dtype != x.dtype:
        raise n.error(f"skip's type {skip.dtype} differs from the input's {x.dtype}")
    if x.ndim not in (2, 3) or skip.shape[-1] != h:
        raise n.error(f"input {list(x.shape)} and skip {list(skip.shape)}: a 2-D or 3-D input and a skip of its hidden size")
    if skip.shape != x.shape:
        skip = n.g.expand(skip, list(x.shape))  # [1, s, h] or [s, h] against [b, s, h]
    bias_at = 3 if rms else 4
    if n.input(bias_at) is not None:
        x = _biased(n, bias_at)
    eps = float(n.attr("epsilon", 1e-12))
    gamma = _affine_param(n, 2, [h], x.dtype, 1.0)
    if rms:
        if any(n.proto.output[1:3]):
            raise n.unsupported("the mean and inv_std_var outputs", "the output and input_skip_bias_sum")
        total, y = n.g.fused_residual_rms_norm(x, skip, gamma, eps)
        return [y, y, y, total]  # (the statistics' places are empty)
    total, y = n.g.fused_residual_layer_norm(x, skip, gamma, _affine_param(n, 3, [h], x.dtype, 0.0), eps)
    mean, inv = _stats(n, total, [x.ndim - 1], eps) if any(n.proto.output[1:3]) else (y, y)
    return [y, mean, inv, total]


@emitter("SimplifiedLayerNormalization")
def _simplified_layer_norm(n: Node) -> list[Value]:
    """ONNX Runtime's name for RMSNormalization (ai.onnx domain): the same
    emitter; its inv_std_var output is not imported."""
    if len(n.proto.output) > 1 and n.proto.output[1]:
        raise n.unsupported("the inv_std_var output", "the first output only")
    return _rms_norm(n)


@emitter(f"{MS}:EmbedLayerNormalization")
def _embed_layer_norm(n: Node) -> list[Value]:
    """LayerNormalization (epsilon 1e-12 by default) of word_embedding[input_ids]
    + position_embedding[position_ids, else 0 .. s - 1] (+
    segment_embedding[segment_ids]); outputs the norm, mask_index (each
    row's count of nonzero mask entries, int32) and the embeddings' sum."""
    g = n.g
    ids = n.tensor(0)
    if ids.ndim != 2 or ids.dtype not in ("i32", "i64"):
        raise n.error(f"input_ids {list(ids.shape)} of type {ids.dtype}: a 2-D integer tensor")
    b, s = ids.shape
    word = n.tensor(2)
    h = word.shape[1]
    x = g.gather(word, ids, axis=0)
    pos_table = n.tensor(3)
    if n.input(8) is not None:
        pos = g.gather(pos_table, n.tensor(8), axis=0)
    else:
        if pos_table.shape[0] < s:
            raise n.error(f"position_embedding has {pos_table.shape[0]} rows for a sequence of {s}")
        pos = g.slice(pos_table, [0], [s], [0]) if pos_table.shape[0] != s else pos_table
    x = g.add(x, pos)
    if n.input(1) is not None and n.input(4) is not None:
        x = g.add(x, g.gather(n.tensor(4), n.tensor(1), axis=0))
    eps = float(n.attr("epsilon", 1e-12))
    y = g.layer_norm(x, _affine_param(n, 5, [h], x.dtype, 1.0), _affine_param(n, 6, [h], x.dtype, 0.0), eps)
    outs: list[Value] = [y, y, x]
    if len(n.proto.output) > 1 and n.proto.output[1]:
        if n.input(7) is None:
            raise n.error("mask_index is an output but the node has no mask")
        m = n.tensor(7)
        nz = g.select(g.ne(m, n.imp.scalar(0, m.dtype)), n.imp.scalar(1, "i32"), n.imp.scalar(0, "i32"))
        outs[1] = g.reduce_sum(nz, [1], False)
    return outs


def _key_mask(n: Node, at: int, bias_at: int, b: int, sq: int, total: int, d: str) -> Tensor | None:
    """The additive bias of ONNX Runtime's attention masks (input `at`):
    mask_filter_value (-10000 by default) on masked keys, 0 elsewhere: [b]
    key counts (right padding), raw masks [b, total] and [b, sq, total] (0:
    masked); plus attention_bias (input `bias_at`). None without either."""
    g = n.g
    fill = float(n.attr("mask_filter_value", -10000.0))
    bias = None
    if n.input(at) is not None:
        m = n.tensor(at)
        zero, filled = n.imp.scalar(0.0, d), n.imp.scalar(fill, d)
        if m.ndim == 1 and m.shape[0] == b:  # key counts: keys from the count on are masked
            keys = n.imp.constant(np.arange(total).reshape(1, total), m.dtype)
            bias = g.reshape(g.select(g.lt(keys, g.reshape(m, [b, 1])), zero, filled), [b, 1, 1, total])
        elif m.ndim in (2, 3) and m.shape[0] == b and m.shape[-1] == total and (m.ndim == 2 or m.shape[1] == sq):
            keep = g.ne(m, n.imp.scalar(0, m.dtype))
            bias = g.reshape(g.select(keep, zero, filled), [b, 1, 1 if m.ndim == 2 else sq, total])
        else:
            raise n.unsupported(f"a mask of shape {list(m.shape)}",
                                f"[{b}] key counts, raw masks [{b}, {total}] and [{b}, {sq}, {total}]")
    if n.input(bias_at) is not None:
        ab = n.tensor(bias_at)
        bias = ab if bias is None else g.add(bias, ab)
    return bias


@emitter(f"{MS}:Attention")
def _ms_attention(n: Node) -> list[Value]:
    """Multi-head self attention with merged Q/K/V weights: input @ weights
    (+ bias) split into Q, K, V (qkv_hidden_sizes, else thirds), then the
    ai.onnx Attention emitter (`rlx.attention`) over num_heads heads, scaled
    by `scale` (1/sqrt(head size) by default), causal where unidirectional.
    The mask as ONNX Runtime applies it: mask_filter_value (-10000 by
    default) added to the masked keys' scores, so a row masked throughout
    is uniform, not zeros: a raw mask of [b, total] or [b, s, total] (0:
    masked), or a [b] mask_index of key counts (right padding); plus
    attention_bias. past/present, left-padded or 4-D masks and rotary
    embeddings are not imported."""
    g = n.g
    x, w = _float_input(n, 0), n.tensor(1)
    if x.ndim != 3 or w.ndim != 2 or w.shape[0] != x.shape[2]:
        raise n.error(f"input {list(x.shape)} and weights {list(w.shape)}: [b, s, in] and [in, q + k + v]")
    heads = int(n.attr("num_heads", 0))
    sizes = [int(v) for v in n.attr("qkv_hidden_sizes", [])] or [w.shape[1] // 3] * 3
    if sum(sizes) != w.shape[1] or len(sizes) != 3 or sizes[0] != sizes[1] or not heads or any(v % heads for v in sizes):
        raise n.error(f"weights of {w.shape[1]} columns do not split into Q, K, V of {sizes} over {heads} heads")
    for k, what in ((4, "past"), (6, "past_sequence_length")):
        if n.input(k) is not None:
            raise n.unsupported(f"a {what} input", "attention without a KV cache")
    if len(n.proto.output) > 1 and n.proto.output[1]:
        raise n.unsupported("the present output", "attention without a KV cache")
    if n.attr("do_rotary", 0):
        raise n.unsupported("do_rotary=1", "do_rotary=0")
    b, s, _ = x.shape
    qkv = g.matmul(x, w)
    if n.input(2) is not None:
        qkv = g.add(qkv, n.tensor(2))
    q = g.slice(qkv, [0], [sizes[0]], [2])
    k = g.slice(qkv, [sizes[0]], [2 * sizes[0]], [2])
    v = g.slice(qkv, [2 * sizes[0]], [sum(sizes)], [2])
    bias = _key_mask(n, 3, 5, b, s, s, x.dtype)
    scale = n.attr("scale")
    attrs = {"q_num_heads": heads, "kv_num_heads": heads, "is_causal": int(n.attr("unidirectional", 0))}
    if scale is not None and float(scale) != 0.0:
        attrs["scale"] = float(scale)
    view = OpView(n, "Attention", [q, k, v, bias], drop=tuple(n.attrs), opset=23, attrs=attrs)
    return [view.run()]


def _unpack_bits(packed: np.ndarray, bits: int) -> np.ndarray:
    """uint8 bytes -> their `bits`-wide fields, lowest bits first, along the last axis."""
    per = 8 // bits
    fields = [(packed >> (bits * i)) & ((1 << bits) - 1) for i in range(per)]
    return np.stack(fields, axis=-1).reshape(*packed.shape[:-1], packed.shape[-1] * per)


@emitter(f"{MS}:MatMulNBits")
def _matmul_nbits(n: Node) -> list[Value]:
    """A @ Wᵀ (+ bias) with W [N, K] stored in blocks of `block_size` along K,
    `bits` (2, 4 or 8) a value, packed into bytes lowest bits first: W =
    (q - zero point) * scale per block, the zero points packed as the
    weights or unpacked in A's type (2^(bits - 1) where absent). W is
    dequantized at import (in f32, rounded once to A's type) into a param
    named after B, so the product is `rlx.linear`; accuracy_level's
    lowered precisions of A are not taken (A is used as it is)."""
    a = _float_input(n, 0)
    bits, bs = int(n.attr("bits", 4)), int(n.attr("block_size", 0))
    nn, kk = int(n.attr("N", 0)), int(n.attr("K", 0))
    if bits not in (2, 4, 8):
        raise n.unsupported(f"bits={bits}", "2, 4, 8")
    if n.attr("weight_prepacked", 0):
        raise n.unsupported(f"weight_prepacked={n.attr('weight_prepacked')}", "0 (ONNX's packing)")
    if n.input(4) is not None:
        raise n.unsupported("a g_idx input", "none (it is deprecated)")
    if bs < 16 or bs & (bs - 1) or a.shape[-1] != kk:
        raise n.error(f"block_size {bs} (a power of two from 16) and K {kk} against A {list(a.shape)}")
    blocks = -(-kk // bs)
    vals = {}
    for k, what in ((1, "B"), (2, "scales"), (3, "zero_points")):
        v = n.input(k)
        if v is not None and not isinstance(v, Const):
            raise n.error(f"{what} (input #{k}) must be known at import")
        vals[what] = v
    b = vals["B"]
    if b is None or b.narrow != "UINT8" or b.array.shape != (nn, blocks, bs * bits // 8):
        raise n.error(f"B must be a UINT8 initializer of shape [{nn}, {blocks}, {bs * bits // 8}]")
    q = _unpack_bits(b.array.astype(np.uint8), bits).reshape(nn, blocks, bs).astype(np.float32)
    sc = vals["scales"]
    if sc is None or sc.dtype != a.dtype or sc.array.size != nn * blocks:
        raise n.error(f"scales must be {nn} x {blocks} values of A's type {a.dtype}")
    scale = sc.array.astype(np.float32).reshape(nn, blocks, 1)
    zp = vals["zero_points"]
    if zp is None:
        z = np.float32(2 ** (bits - 1))
    elif zp.narrow == "UINT8":
        z = _unpack_bits(zp.array.astype(np.uint8), bits).reshape(nn, -1)[:, :blocks].astype(np.float32).reshape(nn, blocks, 1)
    elif zp.dtype == a.dtype and zp.array.size == nn * blocks:
        z = zp.array.astype(np.float32).reshape(nn, blocks, 1)
    else:
        raise n.error(f"zero_points must be packed UINT8 or {nn} x {blocks} values of A's type {a.dtype}")
    w = ((q - z) * scale).reshape(nn, blocks * bs)[:, :kk]
    name = n.imp._fold_name(f"{n.proto.input[1]}_dequantized")  # pyright: ignore[reportPrivateUsage]
    w = round_bf16(w) if a.dtype == "bf16" else w.astype(dtype(a.dtype).carrier)
    wt = n.imp.tensor(Const(w, a.dtype, name))
    bias = n.tensor(5) if n.input(5) is not None else None
    return [n.g.linear(a, wt, bias)]


@emitter(f"{MS}:RotaryEmbedding")
def _ms_rotary(n: Node) -> list[Value]:
    """ONNX Runtime's RotaryEmbedding (input, position_ids, cos_cache,
    sin_cache): the ai.onnx RotaryEmbedding (opset 23) of the same input,
    caches and attributes (a 3-D input without num_heads: heads of twice the
    caches' width), its position_ids [b, s], or a [1] offset of positions
    offset .. offset + s - 1. `scale` and packed batching are not imported."""
    g = n.g
    x = _float_input(n, 0)
    if float(n.attr("scale", 1.0)) != 1.0 or n.attr("is_packed_batching", 0):
        raise n.unsupported("scale != 1 or is_packed_batching=1", "the defaults")
    b, s = x.shape[0], x.shape[2] if x.ndim == 4 else x.shape[1]
    pos = n.tensor(1)
    if pos.ndim == 1 and pos.shape[0] == 1:  # an offset: positions offset .. offset + s - 1 in every row
        steps = n.imp.constant(np.arange(s).reshape(1, s), pos.dtype)
        pos = g.expand(g.add(g.reshape(pos, [1, 1]), steps), [b, s])
    elif list(pos.shape) != [b, s]:
        raise n.error(f"position_ids of shape {list(pos.shape)}: [1] or [{b}, {s}]")
    cos = n.tensor(2)
    attrs = {}
    if x.ndim == 3 and not n.attr("num_heads", 0):  # heads of the caches' full rotation: 2 angles a pair
        if x.shape[2] % (2 * cos.shape[-1]):
            raise n.error(f"a hidden size of {x.shape[2]} is not heads of {2 * cos.shape[-1]} (the caches' width twice)")
        attrs["num_heads"] = x.shape[2] // (2 * cos.shape[-1])
    view = OpView(n, "RotaryEmbedding", [x, cos, n.tensor(3), pos], drop=("scale", "is_packed_batching"), opset=23, attrs=attrs)
    return [view.run()]


@emitter(f"{MS}:MultiHeadAttention")
def _ms_multi_head_attention(n: Node) -> list[Value]:
    """Attention of separate Q [b, s, h], K and V ([b, kv, h] and [b, kv,
    v_h], or already as heads [b, heads, kv, d]; cross attention where kv
    differs from s), plus the projections' bias [h + h + v_h] on the 3-D
    ones, num_heads heads; past_key/past_value ([b, heads, past, d]) before
    K and V, with the present_key/present_value outputs; unidirectional
    causal, aligned to the keys' end; key_padding_mask and attention_bias
    as Attention's (mask_filter_value on masked keys). Packed QKV/KV
    inputs, buffer sharing and cache indirection are not imported."""
    g = n.g
    q = _float_input(n, 0)
    heads = int(n.attr("num_heads", 0))
    if n.input(1) is None or n.input(2) is None or q.ndim != 3:
        raise n.unsupported("packed QKV or KV inputs", "a 3-D query with separate key and value")
    for k, what in ((8, "past_sequence_length"), (9, "cache_indirection")):
        if n.input(k) is not None:
            raise n.unsupported(f"a {what} input", "none")
    k, v = n.tensor(1), n.tensor(2)
    b, s, hq = q.shape
    if not heads or hq % heads:
        raise n.error(f"a query of {hq} features is not num_heads={heads} heads")
    if n.input(3) is not None:
        if k.ndim != 3 or v.ndim != 3:
            raise n.error("a bias needs 3-D key and value (their projections')")
        pb = n.tensor(3)
        hk, hv = k.shape[2], v.shape[2]
        q = g.add(q, g.slice(pb, [0], [hq], [0]))
        k = g.add(k, g.slice(pb, [hq], [hq + hk], [0]))
        v = g.add(v, g.slice(pb, [hq + hk], [hq + hk + hv], [0]))
    kv = k.shape[2] if k.ndim == 4 else k.shape[1]
    past = n.tensor(6).shape[2] if n.input(6) is not None else 0
    mask = _key_mask(n, 4, 5, b, s, past + kv, q.dtype)
    attrs = {"q_num_heads": heads, "kv_num_heads": heads, "is_causal": int(n.attr("unidirectional", 0))}
    if n.attr("scale") is not None and float(n.attr("scale")) != 0.0:
        attrs["scale"] = float(n.attr("scale"))
    if len(n.proto.output) > 3 and n.proto.output[3]:
        raise n.unsupported("the qk output", "output, present_key, present_value")
    view = OpView(n, "Attention", [q, k, v, mask, n.input(6), n.input(7)], drop=tuple(n.attrs), opset=23, attrs=attrs)
    return view.outputs()[:3]


def _and(n: Node, a: Tensor, b: Tensor) -> Tensor:
    """a and b (bools, broadcasting)."""
    return n.g.select(a, b, n.imp.scalar(False, "i1"))


@emitter(f"{MS}:GroupQueryAttention")
def _ms_group_query_attention(n: Node) -> list[Value]:
    """Grouped-query attention with a KV cache (BNSH, not shared with the
    present buffer), as ONNX Runtime's CPU kernel computes it. Batch row b
    holds T = seqlens_k[b] + 1 keys after this step; with a past, its first
    T - S are its cached ones (S the query's length), without one (a
    prompt) none. present_key/present_value [b, kv_heads, past + S, d] are
    the cached rows followed by the new K/V (rows past T unspecified, here
    the past's). Query row i sits at P + i (P the row's cached count):
    rotated there (do_rotary, from cos_cache/sin_cache, or at position_ids)
    and, causal, sees keys up to it (local_window_size w: the last w of
    them, as ONNX Runtime's CPU kernel counts; none for 0); keys from T on
    are masked; plus attention_bias, softcap and
    scale; then the ai.onnx Attention emitter over num_heads query and
    kv_num_heads key heads. Packed QKV (no key/value) is split. Quantized
    caches, head sinks, Q/K norms, query_seqlens and windowed caches are
    not imported. The present holds past + S rows, or past's where
    total_sequence_length is a constant no longer than it (a buffer shared
    with the present, of the whole sequence's length, as ONNX Runtime
    GenAI decodes with): ONNX Runtime's max(past, total_sequence_length),
    which rlx's static shapes need known at import."""
    g = n.g
    hq, hk = int(n.attr("num_heads", 0)), int(n.attr("kv_num_heads", 0))
    for k, what in ((11, "head_sink"), (12, "k_scale"), (13, "v_scale"), (14, "q_norm_weight"), (15, "k_norm_weight"),
                    (16, "query_seqlens")):
        if n.input(k) is not None:
            raise n.unsupported(f"a {what} input", "float caches without head sinks or Q/K norms")
    for a, ok in (("smooth_softmax", 0), ("sliding_window_cache", 0), ("qk_output", 0)):
        if int(n.attr(a, ok)) != ok:
            raise n.unsupported(f"{a}={n.attr(a)}", f"{a}={ok}")
    for a in ("k_quant_type", "v_quant_type"):
        if n.attr(a, "NONE") != "NONE":
            raise n.unsupported(f"{a}={n.attr(a)}", "NONE")
    q = _float_input(n, 0)
    if q.ndim != 3 or not hq or not hk or hq % hk:
        raise n.error(f"a 3-D query and num_heads {hq} a multiple of kv_num_heads {hk}")
    b, s = q.shape[0], q.shape[1]
    if n.input(1) is None and n.input(2) is None:  # packed Q, K, V
        d = q.shape[2] // (hq + 2 * hk)
        k = g.slice(q, [hq * d], [(hq + hk) * d], [2])
        v = g.slice(q, [(hq + hk) * d], [(hq + 2 * hk) * d], [2])
        q = g.slice(q, [0], [hq * d], [2])
    else:
        k, v = n.tensor(1), n.tensor(2)
        d = q.shape[2] // hq
    if q.shape[2] != hq * d or k.shape != (b, s, hk * d) or v.shape != (b, s, hk * d):
        raise n.error(f"query, key and value of {list(q.shape)}, {list(k.shape)}, {list(v.shape)}: "
                      f"{hq} and {hk} heads of one size over {s} tokens")
    if (n.input(3) is None) != (n.input(4) is None):
        raise n.error("past_key and past_value go together")
    seqlens = n.tensor(5)
    it = seqlens.dtype
    total = g.add(seqlens, n.imp.scalar(1, it))  # [b] keys after this step
    past = n.tensor(3).shape[2] if n.input(3) is not None else 0
    start = g.sub(total, n.imp.scalar(s, it)) if past else n.imp.constant(np.zeros(b), it)  # [b] cached count
    if n.attr("do_rotary", 0):
        if n.input(9) is not None:
            pos = n.tensor(9)
        else:
            pos = g.add(g.reshape(start, [b, 1]), n.imp.constant(np.arange(s).reshape(1, s), it))
        pos = as_type(g, pos, "i64")
        rot = {"interleaved": int(n.attr("rotary_interleaved", 0))}
        q = OpView(n, "RotaryEmbedding", [q, n.tensor(7), n.tensor(8), pos], drop=tuple(n.attrs), opset=23,
                   attrs=rot | {"num_heads": hq}).run()
        k = OpView(n, "RotaryEmbedding", [k, n.tensor(7), n.tensor(8), pos], drop=tuple(n.attrs), opset=23,
                   attrs=rot | {"num_heads": hk}).run()

    def heads(t: Tensor) -> Tensor:
        return g.transpose(g.reshape(t, [b, s, hk, d]), [0, 2, 1, 3])

    k, v = heads(k), heads(v)
    # The present's rows: ONNX Runtime's max(past, total_sequence_length): a
    # past buffer that already holds the whole sequence (shared with the
    # present) keeps its length; known only at run time, the cache grows.
    total_at = n.input(6)
    keys = past + s
    if past and isinstance(total_at, Const) and int(np.ravel(total_at.array)[0]) <= past:
        keys = past
    if past:  # row j of the present: the new row j - start where that is one, else the cached row j
        j = n.imp.constant(np.arange(keys).reshape(1, keys), it)
        rel = g.sub(j, g.reshape(start, [b, 1]))  # [b, keys]
        new = _and(n, g.ge(rel, n.imp.scalar(0, it)), g.lt(rel, n.imp.scalar(s, it)))
        at_new = g.minimum(g.maximum(rel, n.imp.scalar(0, it)), n.imp.scalar(s - 1, it))
        at_past = g.minimum(j, n.imp.scalar(past - 1, it))

        def spread(t: Tensor) -> Tensor:  # [b, keys] -> [b, hk, keys, d]
            return g.expand(g.reshape(t, [t.shape[0], 1, keys, 1]), [b, hk, keys, d])

        new4, at_new4, at_past4 = spread(new), spread(at_new), spread(g.expand(at_past, [b, keys]))
        k = g.select(new4, g.gather_elements(k, at_new4, 2), g.gather_elements(n.tensor(3), at_past4, 2))
        v = g.select(new4, g.gather_elements(v, at_new4, 2), g.gather_elements(n.tensor(4), at_past4, 2))
    # which keys each query row sees: [b, s, keys]
    jj = n.imp.constant(np.arange(keys).reshape(1, 1, keys), it)
    ok = g.lt(jj, g.reshape(total, [b, 1, 1]))
    row = g.add(g.reshape(start, [b, 1, 1]), n.imp.constant(np.arange(s).reshape(1, s, 1), it))  # P + i
    if int(n.attr("causal", 1)):
        ok = _and(n, ok, g.le(jj, row))
        w = int(n.attr("local_window_size", -1))
        if w >= 0:
            ok = _and(n, ok, g.gt(jj, g.sub(row, n.imp.scalar(w, it))))  # the last w keys (ONNX Runtime 1.2x)
    dt = q.dtype
    bias = g.reshape(g.select(ok, n.imp.scalar(0.0, dt), n.imp.scalar(-np.inf, dt)), [b, 1, s, keys])
    if n.input(10) is not None:
        bias = g.add(bias, n.tensor(10))
    attrs: dict = {"q_num_heads": hq, "kv_num_heads": hk}
    if n.attr("scale") is not None and float(n.attr("scale")) != 0.0:
        attrs["scale"] = float(n.attr("scale"))
    if float(n.attr("softcap", 0.0) or 0.0) > 0.0:
        attrs["softcap"] = float(n.attr("softcap"))
    y = OpView(n, "Attention", [q, k, v, bias], drop=tuple(n.attrs), opset=23, attrs=attrs).run()
    return [y, k, v]


def _activation(n: Node, y: Tensor, name: str, params: list[float]) -> Tensor:
    """ONNX Runtime's fused activations (MLAS's): Relu, Tanh, Sigmoid,
    LeakyRelu (alpha), Clip (min, max), HardSigmoid (alpha, beta), through
    the ai.onnx emitters; `params` as the node gives them."""
    if name in ("", "Identity"):
        return y
    if name == "Clip":
        lo, hi = (params + [float("-inf"), float("inf")][len(params):])[:2]
        return n.g.minimum(n.g.maximum(y, n.imp.scalar(lo, y.dtype)), n.imp.scalar(hi, y.dtype))
    names = {"Relu": (), "Tanh": (), "Sigmoid": (), "LeakyRelu": ("alpha",), "HardSigmoid": ("alpha", "beta")}
    if name not in names:
        raise n.unsupported(f"activation '{name}'", ", ".join([*names, "Clip", "Identity"]))
    attrs = {k: float(v) for k, v in zip(names[name], params)}
    return OpView(n, name, [y], drop=tuple(n.attrs), attrs=attrs).run()


def _activation_of(n: Node) -> tuple[str, list[float]]:
    a = n.attr("activation", "")
    if n.op_type == "FusedGemm":
        params = [float(n.attr(k)) for k in ("activation_alpha", "activation_beta", "activation_gamma") if n.attr(k) is not None]
    else:
        params = [float(v) for v in n.attr("activation_params", [])]
    return a, params


_FUSED_DROP = ("activation", "activation_params", "activation_alpha", "activation_beta", "activation_gamma")


@emitter(f"{MS}:FusedConv")
def _fused_conv(n: Node) -> list[Value]:
    """Conv (its attributes, bias B) plus Z where given, then `activation`
    (ONNX Runtime's saved ORT_ENABLE_EXTENDED models fuse Conv + Relu/Clip
    so)."""
    y = OpView(n, "Conv", n.inputs[:3], drop=_FUSED_DROP).run()
    if n.input(3) is not None:
        y = n.g.add(y, n.tensor(3))
    return [_activation(n, y, *_activation_of(n))]


@emitter(f"{MS}:FusedGemm")
def _fused_gemm(n: Node) -> list[Value]:
    """Gemm (alpha, beta, transA, transB) then `activation` with
    activation_alpha/beta."""
    y = OpView(n, "Gemm", n.inputs[:3], drop=_FUSED_DROP).run()
    return [_activation(n, y, *_activation_of(n))]


@emitter(f"{MS}:FusedMatMul")
def _fused_matmul(n: Node) -> list[Value]:
    """alpha · MatMul(A, B) with A and B transposed on their last two axes by
    transA / transB. transBatchA/transBatchB are not imported."""
    if n.attr("transBatchA", 0) or n.attr("transBatchB", 0):
        raise n.unsupported("transBatchA or transBatchB", "0")
    g = n.g
    ab = []
    for k, flag in ((0, "transA"), (1, "transB")):
        t = n.tensor(k)
        if n.attr(flag, 0):
            if t.ndim < 2:
                raise n.error(f"{flag} on an input of rank {t.ndim}")
            perm = list(range(t.ndim))
            perm[-2], perm[-1] = perm[-1], perm[-2]
            t = g.transpose(t, perm)
        ab.append(t)
    y = OpView(n, "MatMul", ab, drop=("alpha", "transA", "transB", "transBatchA", "transBatchB")).run()
    alpha = float(n.attr("alpha", 1.0))
    return [y if alpha == 1.0 else g.mul(y, n.imp.scalar(alpha, y.dtype))]

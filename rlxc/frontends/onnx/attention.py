"""The emitters of ONNX's transformer ops (opset 23 on): Attention (scaled
dot-product attention with its masks, grouped-query heads, a KV cache and
the opset 25 windows), RotaryEmbedding and TensorScatter (the KV-cache
update).

Every way ONNX masks a score (`attn_mask`, bool or additive, padded with
masked keys to the key length; `is_causal`, aligned to the cache's end;
`nonpad_kv_seqlen`'s padding; the sliding window) becomes one additive
bias of 0 and -inf, so the attention itself is `rlx.attention`: the fused
kernel on CUDA, with its `causal` flag where the frontier is the plain
top-left one. A query row whose every key the bias masks gives zeros (the
spec's fully-masked rows), not NaN. `softcap` and the optional
`qk_matmul_output` need the scores themselves: there the matmuls, softcap,
bias and softmax are emitted one by one, as ONNX's reference computes them.
The softmax runs in f32 whatever `softmax_precision` names (16-bit inputs
are reduced in f32 by rlx's softmax and attention kernels), and a V of
another float type than Q is cast to Q's, the type of Y.
"""

from __future__ import annotations

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Node, Value, as_type, emitter


def _heads(n: Node, x: Tensor, heads: int | None, what: str) -> Tensor:
    """[batch, seq, heads * d] -> [batch, heads, seq, d]; 4-D inputs as they are."""
    if x.ndim == 4:
        return x
    if x.ndim != 3:
        raise n.error(f"{what} has rank {x.ndim}; Attention takes rank 3 or 4")
    if not heads or x.shape[2] % heads:
        raise n.error(f"{what}'s last axis ({x.shape[2]}) is not q_num_heads/kv_num_heads ({heads}) heads")
    b, s, hd = x.shape
    return n.g.transpose(n.g.reshape(x, [b, s, heads, hd // heads]), [0, 2, 1, 3])


def _repeat_heads(n: Node, x: Tensor, times: int) -> Tensor:
    """Each of x's heads `times` times in a row ([b, h, s, d] -> [b, h * times, s, d])."""
    if times == 1:
        return x
    b, h, s, d = x.shape
    return n.g.reshape(n.g.expand(n.g.reshape(x, [b, h, 1, s, d]), [b, h, times, s, d]), [b, h * times, s, d])


def _allowed(n: Node, offset: Tensor | int, sq: int, sk: int, low: int | None, high: int | None) -> Tensor | np.ndarray:
    """Whether query i may see key j: low <= (i + offset) - j <= high (None:
    no bound), `offset` an int (a [sq, sk] array) or a per-batch i64 tensor
    ([batch] -> [batch, 1, sq, sk] bools)."""
    i = np.arange(sq).reshape(sq, 1)
    j = np.arange(sk).reshape(1, sk)
    if isinstance(offset, int):
        diff = i + offset - j
        ok = np.ones((sq, sk), bool)
        if low is not None:
            ok &= diff >= low
        if high is not None:
            ok &= diff <= high
        return ok
    g = n.g
    diff = g.sub(g.reshape(offset, [offset.shape[0], 1, 1, 1]), n.imp.constant((j - i).reshape(1, 1, sq, sk), "i64"))
    conds = []
    if low is not None:
        conds.append(g.ge(diff, n.imp.scalar(low, "i64")))
    if high is not None:
        conds.append(g.le(diff, n.imp.scalar(high, "i64")))
    out = conds[0]
    for c in conds[1:]:
        out = g.select(out, c, out)  # and
    return out


@emitter("Attention", since=23)
def _attention(n: Node) -> list[Value]:
    g = n.g
    q3 = n.tensor(0)
    q = _heads(n, q3, n.attr("q_num_heads"), "Q")
    k = _heads(n, n.tensor(1), n.attr("kv_num_heads"), "K")
    v = _heads(n, n.tensor(2), n.attr("kv_num_heads"), "V")
    d = q.dtype
    if k.ndim != 4 or v.ndim != 4 or k.dtype != d:
        raise n.error("Q, K and V must have the same rank, and Q and K one element type")
    past_k, past_v = n.input(4), n.input(5)
    if (past_k is None) != (past_v is None):
        raise n.error("past_key and past_value go together")
    past = 0
    if past_k is not None:
        pk, pv = n.tensor(4), n.tensor(5)
        past = pk.shape[2]
        k, v = g.concat([pk, k], axis=2), g.concat([pv, v], axis=2)
    present_k, present_v = k, v
    if v.dtype != d:  # V may have a type of its own (T2): the attention runs in Q's, as Y does
        v = g.cast(v, d)
    nonpad = n.tensor(6) if n.input(6) is not None else None
    if nonpad is not None and past_k is not None:
        raise n.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    b, hq, sq, dq = q.shape
    hk, sk = k.shape[1], k.shape[2]
    if hq % hk or v.shape[1] != hk:
        raise n.error(f"{hq} query heads cannot share {hk} key and {v.shape[1]} value heads")
    scale = n.attr("scale")
    scale = float(scale) if scale is not None else 1.0 / float(np.sqrt(dq))
    softcap = float(n.attr("softcap", 0.0) or 0.0)
    mode = int(n.attr("qk_matmul_output_mode", 0) or 0)
    want_qk = len(n.proto.output) > 3 and bool(n.proto.output[3])
    causal = bool(n.attr("is_causal", 0))
    left, right = int(n.attr("left_window_size", -1)), int(n.attr("right_window_size", -1))
    made: dict[float, Tensor] = {}

    def scalar(x: float) -> Tensor:  # made once, where used
        if x not in made:
            made[x] = n.imp.scalar(x, d)
        return made[x]

    # The bias: the mask's terms, each broadcasting to [b, h, sq, sk], of 0 / -inf (or a
    # float mask's values). Runtime terms (a mask input, nonpad_kv_seqlen's) and one constant
    # [sq, sk] frontier (the causal one at an import-time offset, the window).
    terms: list[Tensor] = []
    if n.input(3) is not None:
        m = n.tensor(3)
        if m.shape[-1] < sk:  # keys past the mask's are masked
            m = g.pad(m, [0] * m.ndim, [0] * (m.ndim - 1) + [sk - m.shape[-1]],
                      value=0.0 if m.dtype == "i1" else float("-inf"))
        terms.append(g.select(m, scalar(0.0), scalar(-np.inf)) if m.dtype == "i1" else as_type(g, m, d))
    offset: Tensor | int = past
    if nonpad is not None:
        nonpad = as_type(g, nonpad, "i64")
        offset = g.sub(nonpad, n.imp.scalar(sq, "i64"))  # per batch
        keys = n.imp.constant(np.arange(sk).reshape(1, 1, 1, sk), "i64")
        terms.append(g.select(g.lt(keys, g.reshape(nonpad, [b, 1, 1, 1])), scalar(0.0), scalar(-np.inf)))
    # rlx.attention's own causal flag where the frontier is its top-left one
    flag = causal and isinstance(offset, int) and offset == 0 and not (softcap > 0.0 or want_qk)
    # (i + offset) - j in [low, high]: the window's -right .. left, and >= 0 where causal
    low = -right if right >= 0 else None
    high = left if left >= 0 else None
    if causal and not flag:
        low = 0 if low is None else max(low, 0)
    frontier = None  # a constant [sq, sk] of 0 / -inf
    if low is not None or high is not None:
        ok = _allowed(n, offset, sq, sk, low, high)
        if isinstance(ok, np.ndarray):
            frontier = ok
            terms.append(n.imp.constant(np.where(ok, 0.0, -np.inf), d))
        else:
            terms.append(g.select(ok, scalar(0.0), scalar(-np.inf)))
    bias = None
    for t in terms:
        bias = t if bias is None else g.add(bias, t)
    if bias is not None and bias.ndim < 4:
        bias = g.reshape(bias, [1] * (4 - bias.ndim) + list(bias.shape))

    if softcap > 0.0 or want_qk:
        y, qk = _scores_path(n, q, _repeat_heads(n, k, hq // hk), _repeat_heads(n, v, hq // hk), bias, scale, softcap, mode)
    else:  # grouped-query attention as it is: rlx.attention reads hk key/value heads for hq query heads
        y, qk = g.attention(q, k, v, bias, causal=flag, scale=scale), None
    # A row whose every key is masked gives zeros (ONNX), not the softmax's NaN. Only a
    # runtime term or a constant frontier with an empty row can mask a row wholly (the
    # top-left causal frontier never does on its own).
    runtime = len(terms) > (1 if frontier is not None else 0)
    if runtime or (frontier is not None and not frontier.any(axis=1).all()):
        full = bias
        if flag:  # the causal flag's frontier counts too
            tri = np.arange(sk)[None, :] <= np.arange(sq)[:, None]
            full = g.add(full, n.imp.constant(np.where(tri, 0.0, -np.inf).reshape(1, 1, sq, sk), d))
        masked = g.eq(g.reduce_max(full, axes=[3], keepdims=True), scalar(-np.inf))
        y = g.select(masked, scalar(0.0), y)
        if qk is not None and mode == 3:
            qk = g.select(masked, scalar(0.0), qk)
    if q3.ndim == 3:
        y = g.reshape(g.transpose(y, [0, 2, 1, 3]), [b, sq, hq * v.shape[3]])
    return [y, present_k, present_v, *([qk] if qk is not None else [])]


def _scores_path(n: Node, q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, scale: float,
                 softcap: float, mode: int) -> tuple[Tensor, Tensor]:
    """softmax(softcap(q kᵀ · scale) + bias) v with the scores kept, as
    ONNX's reference: (y, qk_matmul_output of `mode`: 0 and 1 the softcapped
    scores, 2 with the bias, 3 the softmax)."""
    g = n.g
    d = q.dtype
    s = g.mul(g.matmul(q, g.transpose(k, [0, 1, 3, 2])), n.imp.scalar(scale, d))
    if softcap > 0.0:
        c = n.imp.scalar(softcap, d)
        s = g.mul(g.tanh(g.div(s, c)), c)
    qk = s
    biased = s if bias is None else g.add(s, bias)
    if mode == 2:
        qk = biased
    p = g.softmax(biased, axis=-1)
    if mode == 3:
        qk = p
    return g.matmul(p, v), qk


@emitter("RotaryEmbedding", since=23)
def _rotary_embedding(n: Node) -> list[Value]:
    """x rotated by its positions' angles, pairs of its first
    rotary_embedding_dim elements a head (the halves, or with `interleaved`
    the even and odd elements): [x1 cos - x2 sin, x1 sin + x2 cos]. The
    halves' form is `rlx.rope` over cos and sin repeated to the full width."""
    g = n.g
    x0 = n.tensor(0)
    cos, sin = n.tensor(1), n.tensor(2)
    if x0.ndim == 4:  # [b, heads, s, d]
        x = x0
        b, _, s, d = x.shape
        at = [b, 1, s]  # the angles broadcast over the heads
    elif x0.ndim == 3:  # [b, s, heads * d]
        heads = int(n.attr("num_heads", 0) or 0)
        if not heads or x0.shape[2] % heads:
            raise n.error(f"a 3-D input needs num_heads dividing its last axis ({x0.shape[2]}), got {heads}")
        b, s = x0.shape[0], x0.shape[1]
        x = g.reshape(x0, [b, s, heads, x0.shape[2] // heads])
        d = x.shape[3]
        at = [b, s, 1]
    else:
        raise n.error(f"the input has rank {x0.ndim}; RotaryEmbedding takes rank 3 or 4")
    rot = int(n.attr("rotary_embedding_dim", 0) or 0) or d
    if rot % 2 or rot > d:
        raise n.error(f"rotary_embedding_dim {rot} must be even and at most the head size {d}")
    if n.input(3) is not None:  # angles by position: the caches' rows
        pos = n.tensor(3)
        cos, sin = g.gather(cos, pos, axis=0), g.gather(sin, pos, axis=0)
    for c, name in ((cos, "cos_cache"), (sin, "sin_cache")):
        if c.shape[-1] != rot // 2 or c.dtype != x.dtype:
            raise n.error(f"{name} gives {c.shape[-1]} {c.dtype} angles a position; the input needs {rot // 2} {x.dtype}")
    cos, sin = g.reshape(cos, [*at, rot // 2]), g.reshape(sin, [*at, rot // 2])
    xr = x if rot == d else g.slice(x, [0], [rot], axes=[3])
    if n.attr("interleaved", 0):
        x1 = g.slice(xr, [0], [rot], axes=[3], steps=[2])
        x2 = g.slice(xr, [1], [rot], axes=[3], steps=[2])
        real = g.sub(g.mul(cos, x1), g.mul(sin, x2))
        imag = g.add(g.mul(sin, x1), g.mul(cos, x2))
        pairs = [g.reshape(t, [*t.shape, 1]) for t in (real, imag)]
        y = g.reshape(g.concat(pairs, axis=4), list(xr.shape))
    else:
        y = g.rope(xr, g.concat([cos, cos], axis=3), g.concat([sin, sin], axis=3))
    if rot < d:
        y = g.concat([y, g.slice(x, [rot], [d], axes=[3])], axis=3)
    return [y if x0.ndim == 4 else g.reshape(y, list(x0.shape))]


@emitter("TensorScatter")
def _tensor_scatter(n: Node) -> list[Value]:
    """The KV-cache update (opset 24): `update` written into `past_cache`
    along `axis` from each batch's write index (modulo the cache's length
    with mode="circular"). As a gather, not a scatter: each cache position
    reads update[position - write index] where that lies in the update, and
    keeps its value elsewhere (writes past a linear cache's end are dropped)."""
    g = n.g
    cache, upd = n.tensor(0), n.tensor(1)
    r = cache.ndim
    axis = int(n.attr("axis", -2)) % max(r, 1)
    mode = n.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise n.unsupported(f"mode='{mode}'", "linear, circular")
    if upd.ndim != r or r < 2 or axis == 0:
        raise n.error(f"past_cache {list(cache.shape)} and update {list(upd.shape)} need one rank of 2 or more "
                      f"and a sequence axis after the batch axis (axis {axis})")
    if any(a != b for k, (a, b) in enumerate(zip(cache.shape, upd.shape)) if k != axis) or upd.shape[axis] > cache.shape[axis]:
        raise n.error(f"update {list(upd.shape)} does not fit past_cache {list(cache.shape)} along axis {axis}")
    big_m, s, b = cache.shape[axis], upd.shape[axis], cache.shape[0]
    if n.input(2) is not None:
        w = n.tensor(2)
        w = as_type(g, w, "i64")
    else:
        w = n.imp.constant(np.zeros(b, np.int64), "i64")
    at = [1] * r
    at[axis] = big_m
    j = g.sub(n.imp.constant(np.arange(big_m).reshape(at), "i64"), g.reshape(w, [b] + [1] * (r - 1)))
    m64 = n.imp.scalar(big_m, "i64")
    if mode == "circular":  # a remainder in [0, M)
        j = g.rem(g.add(g.rem(j, m64), m64), m64)
    jc = g.maximum(g.minimum(j, n.imp.scalar(s - 1, "i64")), n.imp.scalar(0, "i64"))
    inside = g.eq(jc, j)  # 0 <= j < S: the clamp left it alone
    idx = g.expand(g.cast(jc, "i32"), list(cache.shape))
    return [g.select(inside, g.gather_elements(upd, idx, axis), cache)]

"""Example models built with `rlxc.GraphBuilder`: the graphs the benchmarks,
the pass tests and the demo use.

Each builder returns `(module, params)`: a verified module and a dict of
seeded random weights for its `rlx.param`s.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import rlxc

Params = dict[str, np.ndarray]


def _weights(module: ModuleOp, seed: int = 0) -> Params:
    """Seeded random params with a fan-in scaling that keeps activations O(1)."""
    from rlxc.interp import signature

    rng = np.random.default_rng(seed)
    out = {}
    for name, t in signature(module).params.items():
        shape = tuple(t.get_shape())
        if name.endswith(("gamma", ".g")):
            out[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        elif name.endswith(("beta", ".b", "bias")):
            out[name] = (0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            out[name] = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    return out


def mlp_block(rows: int = 128, hidden: int = 768, ffn: int = 3072) -> tuple[ModuleOp, Params]:
    """layer_norm -> linear -> gelu -> linear -> residual add."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, hidden])
    h = g.layer_norm(x, g.param("ln.gamma", [hidden]), g.param("ln.beta", [hidden]))
    h = g.gelu(g.linear(h, g.param("fc1.w", [ffn, hidden]), g.param("fc1.bias", [ffn])))
    h = g.linear(h, g.param("fc2.w", [hidden, ffn]), g.param("fc2.bias", [hidden]))
    module = g.build([g.add(x, h)])
    return module, _weights(module)


def transformer_encoder_layer(
    batch: int = 1, seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int | None = None
) -> tuple[ModuleOp, Params]:
    """A post-norm BERT-style encoder layer: self-attention, residual +
    layer_norm, GELU MLP, residual + layer_norm."""
    ffn = ffn or 4 * hidden
    hd = hidden // heads
    g = rlxc.GraphBuilder()
    x = g.input("x", [batch, seq, hidden])

    def heads_view(t):  # [b, s, h*d] -> [b, h, s, d]
        return g.transpose(g.reshape(t, [batch, seq, heads, hd]), [0, 2, 1, 3])

    q = heads_view(g.linear(x, g.param("q.w", [hidden, hidden]), g.param("q.bias", [hidden])))
    k = heads_view(g.linear(x, g.param("k.w", [hidden, hidden]), g.param("k.bias", [hidden])))
    v = heads_view(g.linear(x, g.param("v.w", [hidden, hidden]), g.param("v.bias", [hidden])))
    a = g.attention(q, k, v)
    a = g.reshape(g.transpose(a, [0, 2, 1, 3]), [batch, seq, hidden])
    a = g.linear(a, g.param("o.w", [hidden, hidden]), g.param("o.bias", [hidden]))
    _, h = g.fused_residual_layer_norm(
        a, x, g.param("ln1.gamma", [hidden]), g.param("ln1.beta", [hidden])
    )
    f = g.linear(h, g.param("fc1.w", [ffn, hidden]), g.param("fc1.bias", [ffn]), activation="gelu")
    f = g.linear(f, g.param("fc2.w", [hidden, ffn]), g.param("fc2.bias", [hidden]))
    _, out = g.fused_residual_layer_norm(
        f, h, g.param("ln2.gamma", [hidden]), g.param("ln2.beta", [hidden])
    )
    module = g.build([out])
    return module, _weights(module)


def small_cnn(batch: int = 8, classes: int = 10) -> tuple[ModuleOp, Params]:
    """conv-relu-pool x2, then global average pool and a linear classifier with
    log_softmax, on 3x32x32 images."""
    g = rlxc.GraphBuilder()
    x = g.input("images", [batch, 3, 32, 32])
    h = g.relu(g.conv2d(x, g.param("conv1.w", [16, 3, 3, 3]), g.param("conv1.bias", [16]), padding=1))
    h = g.max_pool2d(h, 2)
    h = g.relu(g.conv2d(h, g.param("conv2.w", [32, 16, 3, 3]), g.param("conv2.bias", [32]), padding=1))
    h = g.max_pool2d(h, 2)
    h = g.reduce_mean(h, axes=[2, 3])
    logits = g.linear(h, g.param("fc.w", [classes, 32]), g.param("fc.bias", [classes]))
    module = g.build([g.log_softmax(logits, axis=-1)])
    return module, _weights(module)


EXAMPLES = {
    "mlp": mlp_block,
    "transformer": transformer_encoder_layer,
    "cnn": small_cnn,
}

"""ONNX Runtime's fused contrib ops (domain com.microsoft) that its
transformer optimizer (`onnxruntime.transformers.optimizer`) writes into
exported models: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd,
SkipLayerNormalization and SkipSimplifiedLayerNormalization; and
SimplifiedLayerNormalization, which ONNX Runtime registers in the ai.onnx
domain (RMSNormalization's meaning).

Each is its definition in ONNX Runtime's core/graph/contrib_ops/*_defs.cc,
built from the rlx ops that already say it: the GELUs are `rlx.gelu` (erf)
and `rlx.gelu_tanh` of the input (plus the bias); the skip norms are
`rlx.fused_residual_layer_norm` / `rlx.fused_residual_rms_norm` of input +
skip (+ bias), the sum also an output (input_skip_bias_sum) where the model
reads it. SkipLayerNormalization's saved statistics (mean, inv_std_var)
are computed beside it as LayerNormalization's are.
"""

from __future__ import annotations

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import Node, Value, emitter
from rlxc.frontends.onnx.reductions import _affine_param, _rms_norm, _stats

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

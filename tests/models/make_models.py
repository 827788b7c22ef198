"""Writes the small ONNX models of tests/test_onnx_models.py into this folder.

    python tests/models/make_models.py            # (re)writes the .onnx files
    python tests/models/make_models.py --check    # fails if a written file differs

Each model is built with `onnx.helper` the way an exporter writes that kind
of network (node for node: the shape plumbing, the mask arithmetic, the
activations spelled out), with random weights from a fixed seed stored as
initializers, so the files are deterministic and commit-sized (each well
under 1 MB). Batch and sequence dimensions are symbolic ('batch', 'seq')
where an exporter with dynamic axes leaves them so.

* bert_tiny.onnx      BERT encoder as torch.onnx.export (TorchScript) writes it
* gpt2_block.onnx     a GPT-2 causal decoder block (Gemm-based Conv1D, Split, Trilu mask)
* resnet_tiny.onnx    ResNet-style CNN (Conv, BatchNormalization, MaxPool, residuals, Gemm)
* yolo_tiny.onnx      YOLO-style CNN (SiLU as x*sigmoid(x), Split/Concat, SPPF, Resize x2, heads)
* keras_textcnn.onnx  a Keras 1-D conv text classifier as tf2onnx writes it (opset 18)
* mlp_f16.onnx        a float16 MLP with a float32 LayerNormalization and Softmax

The torch_*.onnx files beside them come from benchmarks/export_models.py
(PyTorch's two real exporters, run where PyTorch is installed; their
manifest.json records the torch version, opsets and checks), not from this
script:  python benchmarks/export_models.py --tiny-out tests/models --no-full
The ort_opt_*.onnx files are ONNX Runtime's transformer optimizer's output
for two of those: python tests/models/make_ort_optimized.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
IR_VERSION = 8  # what opset 17/18 needs; ONNX Runtime reads it

F32, F16, I64, I32, BOOL = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
FMIN = float(np.finfo(np.float32).min)


class Graph:
    """Collects nodes and initializers, naming them as PyTorch's exporter
    does: node '/scope/Op', its output '/scope/Op_output_0'."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names: set[str] = set()

    def _unique(self, name: str) -> str:
        base, k = name, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def op(self, op_type: str, inputs, scope: str = "", outputs: int = 1, **attrs):
        name = self._unique(f"{scope}/{op_type}")
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value, dtype=np.int64, scope: str = "") -> str:
        """A Constant node, as the exporter writes scalars and shape pieces."""
        a = np.asarray(value, dtype=dtype)
        return self.op("Constant", [], scope, value=numpy_helper.from_array(a))

    # -- random weights, scaled so activations stay O(1)
    def weight(self, name: str, shape, fan_in: int | None = None, dtype=np.float32) -> str:
        fan_in = fan_in if fan_in is not None else int(np.prod(shape[1:]))
        w = self.rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))
        return self.init(name, w.astype(dtype))

    def bias(self, name: str, n: int, scale: float = 0.1, dtype=np.float32) -> str:
        return self.init(name, (scale * self.rng.standard_normal(n)).astype(dtype))

    def ln_params(self, prefix: str, n: int, dtype=np.float32) -> tuple[str, str]:
        g = self.init(f"{prefix}.weight", (1 + 0.1 * self.rng.standard_normal(n)).astype(dtype))
        b = self.init(f"{prefix}.bias", (0.1 * self.rng.standard_normal(n)).astype(dtype))
        return g, b

    def model(self, name: str, inputs, outputs, opset: int, producer: str) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name=producer)
        m.ir_version = IR_VERSION
        return m

    # -- exporter idioms
    def dim(self, x: str, axis: int, scope: str) -> str:
        """Shape(x) -> Gather(axis) -> Unsqueeze: one dimension as a 1-element tensor."""
        s = self.op("Shape", [x], scope)
        d = self.op("Gather", [s, self.const(axis, scope=scope)], scope, axis=0)
        return self.op("Unsqueeze", [d, self.const([0], scope=scope)], scope)

    def linear(self, x: str, prefix: str, n_in: int, n_out: int, scope: str) -> str:
        """torch.nn.Linear on a 3-D input: MatMul by the transposed weight, then Add(bias, .)."""
        w = self.weight(f"onnx::MatMul_{prefix}", (n_in, n_out), n_in)
        b = self.bias(f"{prefix}.bias", n_out)
        return self.op("Add", [b, self.op("MatMul", [x, w], scope)], scope)

    def layer_norm(self, x: str, prefix: str, n: int, scope: str, eps: float = 1e-5) -> str:
        g, b = self.ln_params(prefix, n)
        return self.op("LayerNormalization", [x, g, b], scope, axis=-1, epsilon=eps)


def vinfo(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# ---------------------------------------------------------------- a. BERT


def bert_tiny(layers=2, hidden=64, heads=4, ffn=256, vocab=512, max_pos=64) -> onnx.ModelProto:
    G = Graph(seed=1)
    d = hidden // heads
    E = "/embeddings"
    word = G.weight("embeddings.word_embeddings.weight", (vocab, hidden), 1)
    posw = G.weight("embeddings.position_embeddings.weight", (max_pos, hidden), 1)
    typew = G.weight("embeddings.token_type_embeddings.weight", (2, hidden), 1)
    pos_ids = G.init("embeddings.position_ids", np.arange(max_pos, dtype=np.int64)[None])
    type_ids = G.init("embeddings.token_type_ids", np.zeros((1, max_pos), np.int64))

    # seq_length = input_ids.size(1); position_ids[:, :seq_length]; the token
    # type buffer sliced and expanded to the input's shape
    shape = G.op("Shape", ["input_ids"], E)
    seq = G.op("Gather", [shape, G.const(1, scope=E)], E, axis=0)
    seq_u = G.op("Unsqueeze", [seq, G.const([0], scope=E)], E)
    zero, one = G.const([0], scope=E), G.const([1], scope=E)
    tt = G.op("Slice", [type_ids, zero, seq_u, one, one], E)
    batch = G.op("Gather", [shape, G.const(0, scope=E)], E, axis=0)
    bs = G.op("Concat", [G.op("Unsqueeze", [batch, G.const([0], scope=E)], E), seq_u], E, axis=0)
    tt = G.op("Expand", [tt, bs], E)
    pos = G.op("Slice", [pos_ids, zero, seq_u, one, one], E)
    h = G.op("Add", [G.op("Gather", [word, "input_ids"], E + "/word_embeddings"),
                     G.op("Gather", [typew, tt], E + "/token_type_embeddings")], E)
    h = G.op("Add", [h, G.op("Gather", [posw, pos], E + "/position_embeddings")], E)
    h = G.layer_norm(h, "embeddings.LayerNorm", hidden, E + "/LayerNorm", eps=1e-12)

    # the extended attention mask: (1 - mask[:, None, None, :]) * finfo.min
    M = ""
    m = G.op("Unsqueeze", ["attention_mask", G.const([1], scope=M)], M)
    m = G.op("Unsqueeze", [m, G.const([2], scope=M)], M)
    m = G.op("Cast", [m], M, to=F32)
    m = G.op("Sub", [G.const(1.0, np.float32, M), m], M)
    ext = G.op("Mul", [m, G.const(FMIN, np.float32, M)], M)

    for li in range(layers):
        S = f"/encoder/layer.{li}/attention/self"
        P = f"encoder.layer.{li}"

        def heads_of(t, perm, scope):
            shp = G.op("Concat", [G.dim(t, 0, scope), G.dim(t, 1, scope),
                                  G.const([heads], scope=scope), G.const([d], scope=scope)], scope, axis=0)
            return G.op("Transpose", [G.op("Reshape", [t, shp], scope)], scope, perm=perm)

        q = heads_of(G.linear(h, f"{P}.attention.self.query", hidden, hidden, S + "/query"), [0, 2, 1, 3], S)
        k = heads_of(G.linear(h, f"{P}.attention.self.key", hidden, hidden, S + "/key"), [0, 2, 3, 1], S)
        v = heads_of(G.linear(h, f"{P}.attention.self.value", hidden, hidden, S + "/value"), [0, 2, 1, 3], S)
        s = G.op("MatMul", [q, k], S)
        s = G.op("Div", [s, G.const(float(np.sqrt(d)), np.float32, S)], S)
        s = G.op("Add", [s, ext], S)
        p = G.op("Softmax", [s], S, axis=-1)
        c = G.op("Transpose", [G.op("MatMul", [p, v], S)], S, perm=[0, 2, 1, 3])
        shp = G.op("Concat", [G.dim(c, 0, S), G.dim(c, 1, S), G.const([hidden], scope=S)], S, axis=0)
        c = G.op("Reshape", [c, shp], S)
        O = f"/encoder/layer.{li}/attention/output"
        o = G.linear(c, f"{P}.attention.output.dense", hidden, hidden, O + "/dense")
        h1 = G.layer_norm(G.op("Add", [o, h], O), f"{P}.attention.output.LayerNorm", hidden, O + "/LayerNorm", 1e-12)
        I = f"/encoder/layer.{li}/intermediate"
        f = G.linear(h1, f"{P}.intermediate.dense", hidden, ffn, I + "/dense")
        # GELU as torch writes it: x * 0.5 * (1 + erf(x / sqrt(2)))
        e = G.op("Erf", [G.op("Div", [f, G.const(1.4142135381698608, np.float32, I)], I)], I)
        e = G.op("Add", [e, G.const(1.0, np.float32, I)], I)
        f = G.op("Mul", [G.op("Mul", [f, e], I), G.const(0.5, np.float32, I)], I)
        O2 = f"/encoder/layer.{li}/output"
        f = G.linear(f, f"{P}.output.dense", ffn, hidden, O2 + "/dense")
        h = G.layer_norm(G.op("Add", [f, h1], O2), f"{P}.output.LayerNorm", hidden, O2 + "/LayerNorm", 1e-12)

    PL = "/pooler"
    first = G.op("Gather", [h, G.const(0, scope=PL)], PL, axis=1)
    wp = G.weight("pooler.dense.weight", (hidden, hidden), hidden)
    bp = G.bias("pooler.dense.bias", hidden)
    pooled = G.op("Tanh", [G.op("Gemm", [first, wp, bp], PL + "/dense", alpha=1.0, beta=1.0, transB=1)], PL)

    G.nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"], name="/Identity_last"))
    G.nodes.append(helper.make_node("Identity", [pooled], ["pooler_output"], name="/Identity_pooled"))
    return G.model(
        "main_graph",
        [vinfo("input_ids", I64, ["batch", "seq"]), vinfo("attention_mask", I64, ["batch", "seq"])],
        [vinfo("last_hidden_state", F32, ["batch", "seq", hidden]), vinfo("pooler_output", F32, ["batch", hidden])],
        17, "pytorch",
    )


# ---------------------------------------------------------------- b. GPT-2 block


def gpt2_block(hidden=64, heads=4, ffn=256) -> onnx.ModelProto:
    G = Graph(seed=2)
    d = hidden // heads
    x = "hidden_states"

    def conv1d(t, prefix, n_in, n_out, scope):
        """transformers' Conv1D: addmm(bias, x.view(-1, n_in), weight).view(*x.shape[:-1], n_out)."""
        w = G.weight(f"{prefix}.weight", (n_in, n_out), n_in)
        b = G.bias(f"{prefix}.bias", n_out)
        flat = G.op("Reshape", [t, G.const([-1, n_in], scope=scope)], scope)
        y = G.op("Gemm", [flat, w, b], scope, alpha=1.0, beta=1.0)
        shp = G.op("Concat", [G.dim(t, 0, scope), G.dim(t, 1, scope), G.const([n_out], scope=scope)], scope, axis=0)
        return G.op("Reshape", [y, shp], scope)

    A = "/attn"
    h = G.layer_norm(x, "ln_1", hidden, "/ln_1")
    qkv = conv1d(h, "attn.c_attn", hidden, 3 * hidden, A + "/c_attn")
    q, k, v = G.op("Split", [qkv, G.const([hidden] * 3, scope=A)], A, outputs=3, axis=2)

    def heads_of(t, perm):
        shp = G.op("Concat", [G.dim(t, 0, A), G.dim(t, 1, A), G.const([heads], scope=A), G.const([d], scope=A)], A, axis=0)
        return G.op("Transpose", [G.op("Reshape", [t, shp], A)], A, perm=perm)

    q, k, v = heads_of(q, [0, 2, 1, 3]), heads_of(k, [0, 2, 3, 1]), heads_of(v, [0, 2, 1, 3])
    w = G.op("MatMul", [q, k], A)
    w = G.op("Div", [w, G.const(float(np.sqrt(d)), np.float32, A)], A)
    # causal mask: torch.tril(torch.ones(seq, seq)).bool(), from the query length
    seq = G.dim(x, 1, A)
    ones = G.op("ConstantOfShape", [G.op("Concat", [seq, seq], A, axis=0)], A,
                value=numpy_helper.from_array(np.ones(1, np.float32)))
    mask = G.op("Cast", [G.op("Trilu", [ones], A, upper=0)], A, to=BOOL)
    w = G.op("Where", [mask, w, G.const(FMIN, np.float32, A)], A)
    p = G.op("Softmax", [w], A, axis=-1)
    a = G.op("Transpose", [G.op("MatMul", [p, v], A)], A, perm=[0, 2, 1, 3])
    shp = G.op("Concat", [G.dim(a, 0, A), G.dim(a, 1, A), G.const([hidden], scope=A)], A, axis=0)
    a = G.op("Reshape", [a, shp], A)
    a = conv1d(a, "attn.c_proj", hidden, hidden, A + "/c_proj")
    r = G.op("Add", [a, x], "")

    Mp = "/mlp"
    h = G.layer_norm(r, "ln_2", hidden, "/ln_2")
    f = conv1d(h, "mlp.c_fc", hidden, ffn, Mp + "/c_fc")
    # gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    A2 = Mp + "/act"
    c = G.op("Pow", [f, G.const(3.0, np.float32, A2)], A2)
    c = G.op("Add", [f, G.op("Mul", [G.const(0.044715, np.float32, A2), c], A2)], A2)
    c = G.op("Tanh", [G.op("Mul", [G.const(float(np.sqrt(2 / np.pi)), np.float32, A2), c], A2)], A2)
    c = G.op("Add", [G.const(1.0, np.float32, A2), c], A2)
    f = G.op("Mul", [G.op("Mul", [G.const(0.5, np.float32, A2), f], A2), c], A2)
    f = conv1d(f, "mlp.c_proj", ffn, hidden, Mp + "/c_proj")
    y = G.layer_norm(G.op("Add", [r, f], ""), "ln_f", hidden, "/ln_f")
    G.nodes.append(helper.make_node("Identity", [y], ["output"], name="/Identity_out"))
    return G.model(
        "main_graph",
        [vinfo(x, F32, ["batch", "seq", hidden])],
        [vinfo("output", F32, ["batch", "seq", hidden])],
        17, "pytorch",
    )


# ---------------------------------------------------------------- c. ResNet


def resnet_tiny(classes=10) -> onnx.ModelProto:
    G = Graph(seed=3)

    def conv(x, prefix, cin, cout, k, stride=1, pad=0, bias=False, scope=""):
        w = G.weight(f"{prefix}.weight", (cout, cin, k, k))
        ins = [x, w] + ([G.bias(f"{prefix}.bias", cout)] if bias else [])
        return G.op("Conv", ins, scope, dilations=[1, 1], group=1, kernel_shape=[k, k],
                    pads=[pad] * 4, strides=[stride, stride])

    def bn(x, prefix, c, scope):
        r = G.rng
        ins = [x, G.init(f"{prefix}.weight", (1 + 0.1 * r.standard_normal(c)).astype(np.float32)),
               G.init(f"{prefix}.bias", (0.1 * r.standard_normal(c)).astype(np.float32)),
               G.init(f"{prefix}.running_mean", (0.1 * r.standard_normal(c)).astype(np.float32)),
               G.init(f"{prefix}.running_var", r.uniform(0.5, 1.5, c).astype(np.float32))]
        return G.op("BatchNormalization", ins, scope, epsilon=1e-5, momentum=0.9)

    x = G.op("Relu", [bn(conv("input", "conv1", 3, 16, 3, 1, 1, scope="/conv1"), "bn1", 16, "/bn1")], "/relu")
    x = G.op("MaxPool", [x], "/maxpool", ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])

    def block(x, name, cin, cout, stride):
        S = f"/{name}"
        h = G.op("Relu", [bn(conv(x, f"{name}.conv1", cin, cout, 3, stride, 1, scope=S + "/conv1"), f"{name}.bn1", cout, S + "/bn1")], S)
        h = bn(conv(h, f"{name}.conv2", cout, cout, 3, 1, 1, scope=S + "/conv2"), f"{name}.bn2", cout, S + "/bn2")
        if stride != 1 or cin != cout:  # 1x1 strided projection, with a bias
            x = conv(x, f"{name}.downsample.0", cin, cout, 1, stride, 0, bias=True, scope=S + "/downsample")
        return G.op("Relu", [G.op("Add", [h, x], S)], S)

    x = block(x, "layer1.0", 16, 16, 1)
    x = block(x, "layer2.0", 16, 32, 2)
    x = G.op("GlobalAveragePool", [x], "/avgpool")
    x = G.op("Flatten", [x], "", axis=1)
    w = G.weight("fc.weight", (classes, 32), 32)
    y = G.op("Gemm", [x, w, G.bias("fc.bias", classes)], "/fc", alpha=1.0, beta=1.0, transB=1)
    G.nodes.append(helper.make_node("Identity", [y], ["logits"], name="/Identity_out"))
    return G.model(
        "main_graph",
        [vinfo("input", F32, ["batch", 3, 32, 32])],
        [vinfo("logits", F32, ["batch", classes])],
        17, "pytorch",
    )


# ---------------------------------------------------------------- d. YOLO


def yolo_tiny(nc=2, na=3) -> onnx.ModelProto:
    G = Graph(seed=4)
    no = nc + 5

    def cbs(x, name, cin, cout, k=1, s=1):
        """Conv (bias: BN folded in) + SiLU written as x * sigmoid(x)."""
        S = f"/model.{name}"
        w = G.weight(f"model.{name}.conv.weight", (cout, cin, k, k))
        b = G.bias(f"model.{name}.conv.bias", cout)
        y = G.op("Conv", [x, w, b], S + "/conv", dilations=[1, 1], group=1, kernel_shape=[k, k],
                 pads=[k // 2] * 4, strides=[s, s])
        return G.op("Mul", [y, G.op("Sigmoid", [y], S + "/act")], S + "/act")

    p1 = cbs("images", "0", 3, 16, 3, 2)  # 32x32
    p2 = cbs(p1, "1", 16, 32, 3, 2)  # 16x16
    # C2f: split the channels in two, one half through a bottleneck, concat all
    S = "/model.2"
    c = cbs(p2, "2.cv1", 32, 32)
    a, b = G.op("Split", [c, G.const([16, 16], scope=S)], S, outputs=2, axis=1)
    m = cbs(cbs(b, "2.m.0.cv1", 16, 16, 3), "2.m.0.cv2", 16, 16, 3)
    m = G.op("Add", [b, m], S + "/m.0")
    p2 = cbs(G.op("Concat", [a, b, m], S, axis=1), "2.cv2", 48, 32)
    # SPPF: three chained 5x5 stride-1 max pools
    S = "/model.3"
    s0 = cbs(p2, "3.cv1", 32, 16)
    s1 = G.op("MaxPool", [s0], S + "/m", ceil_mode=0, dilations=[1, 1], kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[1, 1])
    s2 = G.op("MaxPool", [s1], S + "/m", ceil_mode=0, dilations=[1, 1], kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[1, 1])
    s3 = G.op("MaxPool", [s2], S + "/m", ceil_mode=0, dilations=[1, 1], kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[1, 1])
    p4 = cbs(G.op("Concat", [s0, s1, s2, s3], S, axis=1), "3.cv2", 64, 32)
    # nn.Upsample(scale_factor=2, mode="nearest") as torch exports it
    up = G.op("Resize", [p4, "", G.const([1.0, 1.0, 2.0, 2.0], np.float32, "/model.4")], "/model.4",
              coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, mode="nearest", nearest_mode="floor")
    p3 = cbs(G.op("Concat", [up, p1], "/model.5", axis=1), "6", 48, 32)

    outs = []
    for i, (feat, cin) in enumerate(((p3, 32), (p4, 32))):
        S = f"/model.7/m.{i}"
        w = G.init(f"model.7.m.{i}.weight", (4 * G.rng.standard_normal((na * no, cin, 1, 1)) / np.sqrt(cin)).astype(np.float32))
        y = G.op("Conv", [feat, w, G.bias(f"model.7.m.{i}.bias", na * no)], S, dilations=[1, 1], group=1,
                 kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1])
        # x[i].view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
        shp = G.op("Concat", [G.dim(y, 0, S), G.const([na], scope=S), G.const([no], scope=S),
                              G.dim(y, 2, S), G.dim(y, 3, S)], S, axis=0)
        y = G.op("Transpose", [G.op("Reshape", [y, shp], S)], S, perm=[0, 1, 3, 4, 2])
        outs.append(G.op("Sigmoid", [y], S))
    G.nodes.append(helper.make_node("Identity", [outs[0]], ["p3"], name="/Identity_p3"))
    G.nodes.append(helper.make_node("Identity", [outs[1]], ["p4"], name="/Identity_p4"))
    return G.model(
        "main_graph",
        [vinfo("images", F32, ["batch", 3, 64, 64])],
        [vinfo("p3", F32, ["batch", na, 32, 32, no]), vinfo("p4", F32, ["batch", na, 16, 16, no])],
        17, "pytorch",
    )


# ---------------------------------------------------------------- e. Keras text CNN (tf2onnx)


def keras_textcnn(vocab=500, emb=32, length=50, filters=32, classes=4) -> onnx.ModelProto:
    G = Graph(seed=5)
    r = G.rng

    def tf_node(op, inputs, name, **attrs):
        """tf2onnx names: the TF op's name, its output 'name:0'."""
        G.nodes.append(helper.make_node(op, inputs, [f"{name}:0"], name=name, **attrs))
        return f"{name}:0"

    table = G.init("model/embedding/embedding_lookup/ReadVariableOp:0", (0.5 * r.standard_normal((vocab, emb))).astype(np.float32))
    x = tf_node("Gather", [table, "input_1"], "model/embedding/embedding_lookup", axis=0)  # int32 ids
    x = tf_node("Transpose", [x], "model/conv1d/Conv1D__6", perm=[0, 2, 1])  # NWC -> NCW
    w1 = G.init("model/conv1d/Conv1D/ExpandDims_1:0", (r.standard_normal((filters, emb, 3)) / np.sqrt(3 * emb)).astype(np.float32))
    b1 = G.init("model/conv1d/BiasAdd/ReadVariableOp:0", (0.1 * r.standard_normal(filters)).astype(np.float32))
    x = tf_node("Conv", [x, w1, b1], "model/conv1d/BiasAdd", dilations=[1], group=1, kernel_shape=[3], pads=[1, 1], strides=[1])
    x = tf_node("Relu", [x], "model/conv1d/Relu")
    # an even kernel with padding="same": SAME_UPPER pads one more at the end
    w2 = G.init("model/conv1d_1/Conv1D/ExpandDims_1:0", (r.standard_normal((filters, filters, 4)) / np.sqrt(4 * filters)).astype(np.float32))
    b2 = G.init("model/conv1d_1/BiasAdd/ReadVariableOp:0", (0.1 * r.standard_normal(filters)).astype(np.float32))
    x = tf_node("Conv", [x, w2, b2], "model/conv1d_1/BiasAdd", auto_pad="SAME_UPPER", dilations=[1], group=1, kernel_shape=[4], strides=[1])
    x = tf_node("Relu", [x], "model/conv1d_1/Relu")
    x = tf_node("Transpose", [x], "model/conv1d_1/Relu__12", perm=[0, 2, 1])  # NCW -> NWC
    axes = G.init("const_axes__14", np.array([1], np.int64))
    x = tf_node("ReduceMax", [x, axes], "model/global_max_pooling1d/Max", keepdims=0)
    wd = G.init("model/dense/MatMul/ReadVariableOp:0", (r.standard_normal((filters, classes)) / np.sqrt(filters)).astype(np.float32))
    bd = G.init("model/dense/BiasAdd/ReadVariableOp:0", (0.1 * r.standard_normal(classes)).astype(np.float32))
    x = tf_node("MatMul", [x, wd], "model/dense/MatMul")
    x = tf_node("Add", [x, bd], "model/dense/BiasAdd")
    G.nodes.append(helper.make_node("Softmax", [x], ["dense"], name="model/dense/Softmax", axis=-1))
    return G.model(
        "tf2onnx",
        [vinfo("input_1", I32, ["batch", length])],
        [vinfo("dense", F32, ["batch", classes])],
        18, "tf2onnx",
    )


# ---------------------------------------------------------------- f. float16 MLP


def mlp_f16(n_in=64, hidden=128, classes=10) -> onnx.ModelProto:
    G = Graph(seed=6)
    h = G.op("MatMul", ["x", G.weight("fc1.weight_t", (n_in, hidden), n_in, np.float16)], "/fc1")
    h = G.op("Add", [h, G.bias("fc1.bias", hidden, dtype=np.float16)], "/fc1")
    h = G.op("Relu", [h], "/relu")
    # LayerNorm kept in float32 (autocast's rule): Cast up, normalise, Cast back
    h = G.op("Cast", [h], "/ln", to=F32)
    h = G.layer_norm(h, "ln", hidden, "/ln")
    h = G.op("Cast", [h], "/ln", to=F16)
    h = G.op("MatMul", [h, G.weight("fc2.weight_t", (hidden, classes), hidden, np.float16)], "/fc2")
    h = G.op("Add", [h, G.bias("fc2.bias", classes, dtype=np.float16)], "/fc2")
    h = G.op("Cast", [h], "/softmax", to=F32)
    h = G.op("Softmax", [h], "/softmax", axis=-1)
    G.nodes.append(helper.make_node("Cast", [h], ["probs"], name="/softmax/Cast_out", to=F16))
    return G.model(
        "main_graph",
        [vinfo("x", F16, ["batch", n_in])],
        [vinfo("probs", F16, ["batch", classes])],
        17, "pytorch",
    )


MODELS = {
    "bert_tiny": bert_tiny,
    "gpt2_block": gpt2_block,
    "resnet_tiny": resnet_tiny,
    "yolo_tiny": yolo_tiny,
    "keras_textcnn": keras_textcnn,
    "mlp_f16": mlp_f16,
}


def build(name: str) -> onnx.ModelProto:
    m = MODELS[name]()
    onnx.checker.check_model(m, full_check=True)  # full_check runs strict shape inference too
    inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    declared = {o.name: o.type for o in m.graph.output}
    for o in inferred.graph.output:
        assert o.type == declared[o.name], (name, o.name, o.type, declared[o.name])
    return m


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the files on disk; write nothing")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    stale = []
    for name in MODELS:
        data = build(name).SerializeToString(deterministic=True)
        assert len(data) < 1 << 20, f"{name}: {len(data)} bytes, over 1 MB"
        path = args.out / f"{name}.onnx"
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(path.name)
            continue
        path.write_bytes(data)
        print(f"{path.name:<22}{len(data):>9} bytes")
    if stale:
        print("differ from make_models.py: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

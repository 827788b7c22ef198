"""Writes ONNX Runtime's transformer-optimizer output for two of the
committed PyTorch exports, as a user who runs

    python -m onnxruntime.transformers.optimizer --input m.onnx --output o.onnx --model_type bert ...

gets it: its fused com.microsoft ops (EmbedLayerNormalization, Attention,
SkipLayerNormalization, BiasGelu, FastGelu) in place of the exported
subgraphs. tests/test_onnx_ort_optimized.py imports them.

    python tests/models/make_ort_optimized.py          # needs sympy (ONNX Runtime's shape inference)

* ort_opt_bert_tiny.onnx   torch_bert_tiny_ts.onnx, model_type bert, 4 heads of 16
* ort_opt_gpt2_tiny.onnx   torch_gpt2_tiny_ts.onnx, model_type gpt2, 4 heads of 16

opt_level 0: the Python fusions only (no ONNX Runtime session, whose
level-1+ rewrites are its own layouts). The dynamo exports are not used:
the optimizer fuses little of the BERT one and fails on the GPT-2 one
(onnxruntime 1.32's onnx_model_gpt2.postprocess).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = {"ort_opt_bert_tiny.onnx": ("torch_bert_tiny_ts.onnx", "bert"),
          "ort_opt_gpt2_tiny.onnx": ("torch_gpt2_tiny_ts.onnx", "gpt2")}


def main() -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    for out, (src, kind) in MODELS.items():
        opt = optimize_model(str(HERE / src), model_type=kind, num_heads=4, hidden_size=64, opt_level=0)
        opt.save_model_to_file(str(HERE / out))
        print(out, sorted({n.op_type for n in opt.model.graph.node if n.domain}))


if __name__ == "__main__":
    main()

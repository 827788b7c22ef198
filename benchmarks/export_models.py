"""Exports real PyTorch models to ONNX with both of PyTorch's exporters, for
benchmarks/onnx_models.py and tests/test_onnx_models.py. Run where PyTorch
and transformers are installed (the GPU machine); nothing is downloaded: the
models are built from configs with random weights (a fixed seed, so
benchmarks/onnx_models.py rebuilds the very same weights for PyTorch).

    python benchmarks/export_models.py --out DIR            # full size: bert-base, gpt2, resnet50
    python benchmarks/export_models.py --tiny-out tests/models --no-full
                                                            # tiny versions (each < 1 MB) for the tests

Models (full / tiny):

* bert    transformers BertModel: bert-base (hidden 768, 12 layers, 12 heads) /
          hidden 64, 2 layers, 4 heads, vocabulary 128; inputs input_ids and
          attention_mask [batch, seq]; outputs last_hidden_state, pooler_output
* gpt2    transformers GPT2Model: gpt2 small (768, 12 layers, 12 heads) /
          64, 2 layers, 4 heads, vocabulary 128; inputs input_ids and
          attention_mask [batch, seq]; output last_hidden_state
* mobilenet  MobileNetV2 (torchvision's if installed, else convnets.py's);
* resnet  ResNet-50 (torchvision's if installed, else the one written here;
          input [batch, 3, 224, 224]) / a bottleneck ResNet of width 8, one
          block a stage, on [batch, 3, 32, 32]; output logits

Each is exported twice: `torch.onnx.export(dynamo=True)` (torch.export + the
onnxscript translator) and `dynamo=False` (the TorchScript exporter), with
dynamic batch (and sequence) axes; a failure of one exporter is reported and
recorded, and the rest go on. Each export is checked against the PyTorch
model on the CPU with ONNX Runtime. Files: `<model>_<size>_<exporter>.onnx`
in --out (large models may have a `.onnx.data` file beside them), and
`torch_<model>_tiny_<exporter>.onnx` in --tiny-out; `manifest.json` in each
directory lists what was exported, with errors and check results.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

SEED = 0
EXPORTERS = ("dynamo", "ts")

#: Model configurations: name -> size -> keyword arguments of its builder.
CONFIGS = {
    "bert": {
        "full": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, max_position_embeddings=512),
        "tiny": dict(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64),
    },
    "gpt2": {
        "full": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024),
        "tiny": dict(vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64),
    },
    "resnet": {
        "full": dict(layers=(3, 4, 6, 3), width=64, image=224),
        "tiny": dict(layers=(1, 1, 1, 1), width=8, image=32, classes=10),
    },
    "mobilenet": {
        "full": dict(image=224),
        "tiny": dict(image=32, classes=10, tiny=True),
    },
}
#: Models that take images (`pixel_values`), not tokens.
IMAGE_MODELS = ("resnet", "mobilenet")


# ------------------------------------------------------------------ models


def _hf_eager(config):
    """Plain attention ops (MatMul, Softmax) rather than one SDPA call."""
    try:
        config._attn_implementation = "eager"
    except Exception:  # older or newer transformers: the constructor keyword
        pass
    return config


def build_bert(vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
               max_position_embeddings):
    import torch
    from transformers import BertConfig, BertModel

    cfg = _hf_eager(BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
                               num_attention_heads=num_attention_heads, intermediate_size=intermediate_size,
                               max_position_embeddings=max_position_embeddings, hidden_dropout_prob=0.0,
                               attention_probs_dropout_prob=0.0))
    model = BertModel(cfg, add_pooling_layer=True)

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask):
            o = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
            return o.last_hidden_state, o.pooler_output

    return Bert()


def build_gpt2(vocab_size, n_embd, n_layer, n_head, n_positions):
    import torch
    from transformers import GPT2Config, GPT2Model

    cfg = _hf_eager(GPT2Config(vocab_size=vocab_size, n_embd=n_embd, n_layer=n_layer, n_head=n_head,
                               n_positions=n_positions, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                               use_cache=False))
    model = GPT2Model(cfg)

    class GPT2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gpt2 = model

        def forward(self, input_ids, attention_mask):
            # with the mask given: without one, transformers looks for packed
            # sequences in the position ids (torch.diff, which the TorchScript
            # exporter cannot translate)
            return self.gpt2(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                             return_dict=True).last_hidden_state

    return GPT2()


def _handwritten_resnet(layers, width, classes):
    """ResNet with bottleneck blocks (ResNet-50 with layers (3, 4, 6, 3) and
    width 64), as torchvision writes it, in plain torch."""
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, planes, stride):
            super().__init__()
            cout = planes * self.expansion
            self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            h = self.relu(self.bn1(self.conv1(x)))
            h = self.relu(self.bn2(self.conv2(h)))
            return self.relu(self.bn3(self.conv3(h)) + idt)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            stages, cin = [], width
            for i, n in enumerate(layers):
                planes = width * 2**i
                blocks = []
                for j in range(n):
                    blocks.append(Bottleneck(cin, planes, 2 if (j == 0 and i > 0) else 1))
                    cin = planes * Bottleneck.expansion
                stages.append(nn.Sequential(*blocks))
            self.layer1, self.layer2, self.layer3, self.layer4 = stages
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet()


def build_resnet(layers, width, image, classes=1000):
    model = None
    if tuple(layers) == (3, 4, 6, 3) and width == 64 and classes == 1000:
        try:
            import torchvision

            model = torchvision.models.resnet50(weights=None)
        except Exception as e:  # torchvision missing or broken: the handwritten one
            print(f"  torchvision unavailable ({type(e).__name__}: {e}); using the handwritten ResNet-50")
    if model is None:
        model = _handwritten_resnet(layers, width, classes)
    return _random_batchnorm_stats(model)


def _random_batchnorm_stats(model):
    """`model` with random but non-trivial BatchNorm statistics (fresh ones are 0 and 1)."""
    import torch

    g = torch.Generator().manual_seed(SEED + 1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(0.1 * torch.randn(m.num_features, generator=g))
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model


def build_mobilenet(image, classes=1000, tiny=False):
    """MobileNetV2: torchvision's if installed (BatchNorms unfolded, as an
    export from training code has them; the importer folds them), else
    benchmarks/convnets.py's (BatchNorm folded). ReLU6 exports as Clip."""
    model = None
    if not tiny:
        try:
            import torchvision

            model = torchvision.models.mobilenet_v2(weights=None)
        except Exception as e:
            print(f"  torchvision unavailable ({type(e).__name__}: {e}); using convnets.py's MobileNetV2")
    if model is None:
        from convnets import folded_mobilenet_v2

        model = folded_mobilenet_v2(classes, 8, 64, [(1, 8, 1, 1), (6, 16, 2, 2), (6, 24, 1, 2)]) if tiny else folded_mobilenet_v2(classes)
    return _random_batchnorm_stats(model)


BUILDERS = {"bert": build_bert, "gpt2": build_gpt2, "resnet": build_resnet, "mobilenet": build_mobilenet}


def make_model(name: str, size: str):
    """The model in eval mode with the fixed seed's weights, on the CPU."""
    import torch

    torch.manual_seed(SEED)
    return BUILDERS[name](**CONFIGS[name][size]).eval()


def io_spec(name: str, size: str) -> dict:
    """Input names, dtypes and dynamic axes; output names; the vocabulary."""
    if name == "bert":
        return dict(inputs={"input_ids": "int64", "attention_mask": "int64"}, dynamic={0: "batch", 1: "seq"},
                    outputs=["last_hidden_state", "pooler_output"], vocab=CONFIGS[name][size]["vocab_size"],
                    max_seq=CONFIGS[name][size]["max_position_embeddings"])
    if name == "gpt2":
        return dict(inputs={"input_ids": "int64", "attention_mask": "int64"}, dynamic={0: "batch", 1: "seq"},
                    outputs=["last_hidden_state"],
                    vocab=CONFIGS[name][size]["vocab_size"], max_seq=CONFIGS[name][size]["n_positions"])
    img = CONFIGS[name][size]["image"]
    return dict(inputs={"pixel_values": "float32"}, dynamic={0: "batch"}, outputs=["logits"], image=img)


def example_inputs(name: str, size: str, batch: int, seq: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random inputs as numpy arrays: token ids within the vocabulary, a mask
    with a padded tail on all rows but the first, images in [0, 1)."""
    spec = io_spec(name, size)
    if name in IMAGE_MODELS:
        return {"pixel_values": rng.random((batch, 3, spec["image"], spec["image"]), dtype=np.float32)}
    out = {"input_ids": rng.integers(0, spec["vocab"], (batch, seq)).astype(np.int64)}
    if "attention_mask" in spec["inputs"]:
        m = np.ones((batch, seq), np.int64)
        for r in range(1, batch):
            m[r, max(1, seq - 3 * r):] = 0
        out["attention_mask"] = m
    return out


# ------------------------------------------------------------------ export


def export(model, name: str, size: str, exporter: str, path: Path, opset: int | None) -> None:
    import torch

    spec = io_spec(name, size)
    rng = np.random.default_rng(SEED)
    ex = example_inputs(name, size, 2, 16, rng)  # not 1: a size-1 example specialises
    args = tuple(torch.from_numpy(ex[k]) for k in spec["inputs"])
    in_names, out_names = list(spec["inputs"]), spec["outputs"]
    dyn_axes = {k: dict(spec["dynamic"]) for k in in_names} | {k: dict(spec["dynamic"]) for k in out_names if k != "pooler_output"}
    if "pooler_output" in out_names:
        dyn_axes["pooler_output"] = {0: "batch"}
    if exporter == "ts":
        torch.onnx.export(model, args, str(path), dynamo=False, input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn_axes, opset_version=opset or 17, do_constant_folding=True)
        return
    from torch.export import Dim

    dims = {"batch": Dim("batch", min=1, max=4096)}
    if "max_seq" in spec:
        dims["seq"] = Dim("seq", min=2, max=spec["max_seq"])
    # one entry per positional argument (the forward's own argument names vary)
    shapes = tuple({ax: dims[d] for ax, d in spec["dynamic"].items()} for _ in in_names)
    kw = dict(dynamo=True, input_names=in_names, output_names=out_names, dynamic_shapes=shapes,
              external_data=size != "tiny")
    if opset:
        kw["opset_version"] = opset
    torch.onnx.export(model, args, str(path), **kw)


def check_export(model, name: str, size: str, path: Path) -> dict:
    """ONNX Runtime (CPU) on the exported file against PyTorch (CPU), at a
    batch and sequence other than the export example's."""
    import onnx
    import onnxruntime as ort
    import torch

    m = onnx.load(str(path), load_external_data=False)
    rng = np.random.default_rng(SEED + 7)
    feeds = example_inputs(name, size, 3, 24, rng)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    with torch.no_grad():
        want = model(*[torch.from_numpy(feeds[k]) for k in io_spec(name, size)["inputs"]])
    want = [want] if isinstance(want, torch.Tensor) else list(want)
    errs = []
    for g, w in zip(got, want):
        w = w.numpy()
        errs.append(float(np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)))
    return {
        "ort_vs_torch_max_err_over_scale": max(errs),
        "opset": next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None),
        "nodes": len(m.graph.node),
        "op_types": sorted({n.op_type for n in m.graph.node}),
        "inputs": {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input},
    }


def run(models: list[str], sizes: list[tuple[str, Path, str]], exporters: list[str], opset: int | None) -> list[dict]:
    import torch

    records = []
    for name in models:
        for size, out_dir, pattern in sizes:
            out_dir.mkdir(parents=True, exist_ok=True)
            model = make_model(name, size)
            for exporter in exporters:
                path = out_dir / pattern.format(model=name, exporter=exporter)
                for stale in (path, path.with_name(path.name + ".data")):
                    stale.unlink(missing_ok=True)
                rec = {"model": name, "size": size, "exporter": exporter, "file": path.name, "seed": SEED,
                       "config": CONFIGS[name][size], "io": io_spec(name, size), "torch": torch.__version__}
                print(f"{name} {size} {exporter}: exporting to {path}", flush=True)
                t0 = time.perf_counter()
                try:
                    with torch.no_grad():
                        export(model, name, size, exporter, path, opset)
                    rec["export_s"] = round(time.perf_counter() - t0, 2)
                    rec["bytes"] = sum(p.stat().st_size for p in out_dir.glob(path.name + "*"))
                    rec.update(check_export(model, name, size, path))
                    rec["status"] = "ok"
                    if size == "tiny" and rec["bytes"] >= 1 << 20:
                        rec["status"] = "too large"
                        path.unlink()
                    print(f"  {rec['status']}: {rec['bytes']} bytes, opset {rec['opset']}, {rec['nodes']} nodes, "
                          f"{rec['export_s']} s; ORT vs torch max err/scale {rec['ort_vs_torch_max_err_over_scale']:.2e}", flush=True)
                except Exception as e:
                    rec["status"] = "failed"
                    rec["error"] = f"{type(e).__name__}: {e}"[:2000]
                    rec["traceback"] = traceback.format_exc()[-4000:]
                    print(f"  FAILED: {rec['error'][:500]}", flush=True)
                    for stale in (path, path.with_name(path.name + ".data")):
                        if size == "tiny":
                            stale.unlink(missing_ok=True)
                records.append(rec)
    return records


def write_manifest(out_dir: Path, records: list[dict]) -> None:
    path = out_dir / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else []
    keep = {r["file"] for r in records}
    merged = [r for r in old if r["file"] not in keep] + records
    path.write_text(json.dumps(merged, indent=1, default=str))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("build/onnx_models"), help="directory for the full-size models")
    ap.add_argument("--tiny-out", type=Path, default=None, help="directory for the tiny models (tests/models)")
    ap.add_argument("--no-full", action="store_true", help="tiny models only")
    ap.add_argument("--models", default="bert,gpt2,resnet")
    ap.add_argument("--exporters", default=",".join(EXPORTERS))
    ap.add_argument("--opset", type=int, default=None, help="default: 17 for TorchScript, the exporter's own for dynamo")
    args = ap.parse_args(argv)
    import torch

    print(f"torch {torch.__version__}", flush=True)
    models = [m for m in args.models.split(",") if m]
    exporters = [e for e in args.exporters.split(",") if e]
    for m in models:
        if m not in CONFIGS:
            ap.error(f"unknown model '{m}'; choose from {', '.join(CONFIGS)}")
    failed = 0
    if args.tiny_out:
        recs = run(models, [("tiny", args.tiny_out, "torch_{model}_tiny_{exporter}.onnx")], exporters, args.opset)
        write_manifest(args.tiny_out, recs)
        failed += sum(r["status"] != "ok" for r in recs)
    if not args.no_full:
        recs = run(models, [("full", args.out, "{model}_full_{exporter}.onnx")], exporters, args.opset)
        write_manifest(args.out, recs)
        failed += sum(r["status"] != "ok" for r in recs)
    print(f"{failed} export(s) failed" if failed else "all exports ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

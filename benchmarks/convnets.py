"""ResNet-50 and MobileNetV2 end to end: rlxc against PyTorch on the same weights (GPU machine).

    python benchmarks/convnets.py [--model resnet50|mobilenet_v2] [--batches 1,8,32] [--dtypes f32,f16,bf16] [--image 224]
                                  [--layers 3,4,6,3] [--quick] [--no-direct] [--out DIR]
    python benchmarks/convnets.py --dry-run      # CPU: build, lower, interpret a small one
    python benchmarks/convnets.py --profile 32:f16   # per-kernel device time, rlxc beside torch.compile

The model is ResNet-50 written in plain torch (bottleneck blocks, as
torchvision's), random weights with non-trivial BatchNorm statistics, and
the BatchNorms folded into the convolutions (`fuse_conv_bn_eval`), as an
exported inference model has them (`--model mobilenet_v2`: MobileNetV2,
its depthwise convolutions channels last between 1x1 gemms, ReLU6 as
min(relu(x), 6)), as an
exported inference model has them: every system runs convolutions with a
bias, ReLU, residual adds, a max pool, a global average pool and the
classifier. rlxc's graph is written with `GraphBuilder` from the folded
torch modules (the same weights).

Systems, per dtype and batch (224x224 images, device-resident input):
* `rlxc`: `rlxc.compile(target="cuda")`, convolutions as im2col and
  cuBLASLt gemms (`rlx-conv-to-gemm`);
* `rlxc, depthwise NCHW` (MobileNetV2): grouped and depthwise convolutions
  NCHW between transposes (`conv_to_gemm.CONV_CHANNELS_LAST` off, the before);
* `rlxc, direct convs` (unless --no-direct): the same with
  `conv_to_gemm.CONV_AS_GEMM` off, rlx.conv2d's own kernel (the before);
* torch eager (cuDNN), torch.compile, torch.compile(mode="reduce-overhead")
  (with --reduce-overhead). TF32 off everywhere.

Each row: device time (CUDA events) and wall time per call with the
input on the device, and the largest error relative to the output's scale
against a float64 run of the folded model (PyTorch, on the GPU), as
benchmarks/encoders.py measures them (its helpers).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import rlxc  # noqa: E402
from encoders import bench_rlxc_system, bench_torch_systems, rlxc_params  # noqa: E402


def folded_resnet(layers, width: int = 64, classes: int = 1000):
    """The handwritten ResNet of export_models.py (random BatchNorm
    statistics), in eval mode, with each BatchNorm folded into its conv."""
    import torch
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    from export_models import _handwritten_resnet

    torch.manual_seed(0)
    model = _handwritten_resnet(tuple(layers), width, classes).eval()
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(0.1 * torch.randn(m.num_features, generator=g))
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)

    def fold(owner, conv: str, bn: str):
        setattr(owner, conv, fuse_conv_bn_eval(getattr(owner, conv), getattr(owner, bn)))
        setattr(owner, bn, torch.nn.Identity())

    fold(model, "conv1", "bn1")
    for stage in (model.layer1, model.layer2, model.layer3, model.layer4):
        for block in stage:
            for i in (1, 2, 3):
                fold(block, f"conv{i}", f"bn{i}")
            if block.downsample is not None:
                block.downsample = torch.nn.Sequential(fuse_conv_bn_eval(block.downsample[0], block.downsample[1]))
    return model


#: MobileNetV2's inverted residual stages: (expansion t, channels c, blocks n, first stride s)
MOBILENET_V2 = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def folded_mobilenet_v2(classes: int = 1000, width: int = 32, last: int = 1280, stages=MOBILENET_V2):
    """MobileNetV2 (torchvision's structure: a 3x3 stride-2 stem, inverted
    residuals of a 1x1 expansion, ReLU6, a 3x3 depthwise convolution, ReLU6
    and a 1x1 projection, with the residual add where the shapes allow; a
    1x1 conv to `last` channels, ReLU6, global average pool, classifier) in
    plain torch, random weights and BatchNorm statistics, each BatchNorm
    folded into its conv. Returns (model, its layers as a list for
    `build_rlxc_mobilenet`)."""
    import torch
    from torch import nn
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)

    def cbn(cin, cout, k, stride=1, groups=1):
        conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        bn = nn.BatchNorm2d(cout).eval()
        bn.running_mean.copy_(0.1 * torch.randn(cout, generator=g))
        bn.running_var.copy_(torch.rand(cout, generator=g) + 0.5)
        bn.weight.data.copy_(torch.rand(cout, generator=g) + 0.5)
        return fuse_conv_bn_eval(conv.eval(), bn)

    class Block(nn.Module):
        def __init__(self, cin, cout, t, stride):
            super().__init__()
            hidden = cin * t
            self.expand = cbn(cin, hidden, 1) if t != 1 else None
            self.dw = cbn(hidden, hidden, 3, stride, hidden)
            self.project = cbn(hidden, cout, 1)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            h = x if self.expand is None else nn.functional.relu6(self.expand(x))
            h = self.project(nn.functional.relu6(self.dw(h)))
            return h + x if self.residual else h

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = cbn(3, width, 3, 2)
            blocks, cin = [], width
            for t, c, n, st in stages:
                for i in range(n):
                    blocks.append(Block(cin, c, t, st if i == 0 else 1))
                    cin = c
            self.blocks = nn.Sequential(*blocks)
            self.head = cbn(cin, last, 1)
            self.fc = nn.Linear(last, classes)

        def forward(self, x):
            x = self.blocks(nn.functional.relu6(self.stem(x)))
            x = nn.functional.relu6(self.head(x))
            return self.fc(x.mean((2, 3)))

    return Net().eval()


def build_rlxc_mobilenet(model, batch: int, image: int, dtype: str):
    """The folded MobileNetV2 as an rlx graph: (module, float32 weights by name)."""
    g = rlxc.GraphBuilder()
    weights: dict[str, np.ndarray] = {}
    six = g.constant(np.float32(6.0), dtype)

    def relu6(v):
        return g.minimum(g.relu(v), six)

    def conv(x, m, name):
        w = m.weight.detach().float().numpy()
        weights[f"{name}.w"], weights[f"{name}.b"] = w, m.bias.detach().float().numpy()
        return g.conv2d(x, g.param(f"{name}.w", list(w.shape), dtype), g.param(f"{name}.b", [w.shape[0]], dtype),
                        stride=tuple(m.stride), padding=tuple(m.padding), groups=m.groups)  # fmt: skip

    x = relu6(conv(g.input("x", [batch, 3, image, image], dtype), model.stem, "stem"))
    for j, blk in enumerate(model.blocks):
        h = x if blk.expand is None else relu6(conv(x, blk.expand, f"b{j}.e"))
        h = conv(relu6(conv(h, blk.dw, f"b{j}.d")), blk.project, f"b{j}.p")
        x = g.add(h, x) if blk.residual else h
    x = relu6(conv(x, model.head, "head"))
    n, c, hh, ww = x.shape
    x = g.reshape(g.avg_pool2d(x, (hh, ww)), [n, c])
    weights["fc.w"], weights["fc.b"] = model.fc.weight.detach().float().numpy(), model.fc.bias.detach().float().numpy()
    y = g.linear(x, g.param("fc.w", list(weights["fc.w"].shape), dtype), g.param("fc.b", [weights["fc.b"].shape[0]], dtype))
    return g.build([y]), weights


def build_rlxc(model, batch: int, image: int, dtype: str):
    """The folded model as an rlx graph: (module, float32 weights by name)."""
    g = rlxc.GraphBuilder()
    weights: dict[str, np.ndarray] = {}

    def conv(x, m, name):
        w = m.weight.detach().float().numpy()
        weights[f"{name}.w"], weights[f"{name}.b"] = w, m.bias.detach().float().numpy()
        return g.conv2d(x, g.param(f"{name}.w", list(w.shape), dtype), g.param(f"{name}.b", [w.shape[0]], dtype),
                        stride=tuple(m.stride), padding=tuple(m.padding), dilation=tuple(m.dilation))  # fmt: skip

    x = g.input("x", [batch, 3, image, image], dtype)
    x = g.max_pool2d(g.relu(conv(x, model.conv1, "stem")), 3, 2, 1)
    for s, stage in enumerate((model.layer1, model.layer2, model.layer3, model.layer4)):
        for j, block in enumerate(stage):
            name = f"l{s}.{j}"
            idt = x if block.downsample is None else conv(x, block.downsample[0], f"{name}.down")
            h = g.relu(conv(x, block.conv1, f"{name}.c1"))
            h = g.relu(conv(h, block.conv2, f"{name}.c2"))
            x = g.relu(g.add(conv(h, block.conv3, f"{name}.c3"), idt))
    n, c, hh, ww = x.shape
    x = g.reshape(g.avg_pool2d(x, (hh, ww)), [n, c])
    weights["fc.w"], weights["fc.b"] = model.fc.weight.detach().float().numpy(), model.fc.bias.detach().float().numpy()
    y = g.linear(x, g.param("fc.w", list(weights["fc.w"].shape), dtype), g.param("fc.b", [weights["fc.b"].shape[0]], dtype))
    return g.build([y]), weights


def compile_direct(module, params):
    """rlxc.compile with rlx-conv-to-gemm off (every conv on its own kernel)."""
    from rlxc.passes import conv_to_gemm

    conv_to_gemm.CONV_AS_GEMM = False
    try:
        return rlxc.compile(module, target="cuda", params=params)
    finally:
        conv_to_gemm.CONV_AS_GEMM = True


def compile_nchw_grouped(module, params):
    """rlxc.compile with grouped/depthwise convolutions kept NCHW between
    transposes (`conv_to_gemm.CONV_CHANNELS_LAST` off: before session 32)."""
    from rlxc.passes import conv_to_gemm

    conv_to_gemm.CONV_CHANNELS_LAST = False
    try:
        return rlxc.compile(module, target="cuda", params=params)
    finally:
        conv_to_gemm.CONV_CHANNELS_LAST = True


def run_case(model, batch: int, dtype: str, args) -> dict:
    import torch

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    case = {"model": args.model, "batch": batch, "image": args.image, "dtype": dtype, "systems": {}, "errors": {}}
    gen = torch.Generator().manual_seed(1000 + batch)
    x32 = torch.rand(batch, 3, args.image, args.image, generator=gen)
    x = x32.to(tdt).cuda()
    with torch.no_grad():
        ref = copy.deepcopy(model).double().cuda()(x.double())
    torch.cuda.synchronize()
    module, weights = BUILDERS[args.model](model, batch, args.image, dtype)
    params = rlxc_params(weights, dtype)
    systems = [("rlxc", lambda: rlxc.compile(module, target="cuda", params=params))]
    if args.model == "mobilenet_v2":
        systems.append(("rlxc, depthwise NCHW", lambda: compile_nchw_grouped(module, params)))
    if not args.no_direct:
        systems.append(("rlxc, direct convs", lambda: compile_direct(module, params)))
    for label, make in systems:
        bench_rlxc_system(case, label, make, {"x": x}, ref, args)
    peer = copy.deepcopy(model).to(tdt).cuda()
    modes = [("torch eager", None), ("torch.compile", {})]
    if args.reduce_overhead:
        modes.append(("torch.compile reduce-overhead", {"mode": "reduce-overhead"}))
    bench_torch_systems(case, modes, peer, x, ref, args)
    del x, ref, peer
    torch.cuda.empty_cache()
    return case


def markdown(report: dict) -> str:
    lines = [f"{report.get('model', 'resnet50')} ({report['image']}x{report['image']}), {report['device']}, {report['date']}, "
             f"torch {report['torch']}. Device ms / wall ms per call (device-resident input); err: max |y - "
             "y64| / max |y64| against the float64 folded model.", "",
             "| batch | dtype | system | device ms | wall ms | err |", "| ---: | --- | --- | ---: | ---: | ---: |"]
    for c in report["cases"]:
        for s, r in c["systems"].items():
            lines.append(f"| {c['batch']} | {c['dtype']} | {s} | {r['device_ms']:.3f} | {r['wall_ms']:.3f} | {r['err']:.1e} |")
        for s, e in c["errors"].items():
            lines.append(f"| {c['batch']} | {c['dtype']} | {s} | failed: {e[:80]} | | |")
    return "\n".join(lines) + "\n"


def dry_run(args) -> int:
    """CPU: a small ResNet (one block a stage, width 8, 32x32) or MobileNetV2
    (three stages of width 8-24) built, lowered
    for cuda (no GPU needed), and its numpy-target run against the float64
    interpretation and against the folded torch model."""
    import torch

    from rlxc.driver import cuda_pipeline

    if args.model == "mobilenet_v2":
        model = folded_mobilenet_v2(10, 8, 64, [(1, 8, 1, 1), (6, 16, 2, 2), (6, 24, 1, 2)])
    else:
        model = folded_resnet((1, 1, 1, 1), 8, 10)
    module, weights = BUILDERS[args.model](model, 2, 32, "f32")
    lowered = rlxc.run_pipeline(module, cuda_pipeline("sm_90", 132, "cublaslt"))
    names = [o.name for o in lowered.walk()]
    print(f"lowered: {names.count('rlx_cuda.gemm')} gemms, {names.count('rlx_cuda.launch')} kernel launches")
    x = np.random.default_rng(0).random((2, 3, 32, 32), dtype=np.float32)
    (got,) = rlxc.compile(module, target="numpy", params=weights).run({"x": x})
    with torch.no_grad():
        want = model.double()(torch.from_numpy(x).double()).numpy()
    err = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"small {args.model}, numpy target vs the folded torch model in float64: max rel err {err:.2e}")
    return 0 if err < 1e-5 else 1


def profile(batch: int, dtype: str, args) -> int:
    """Per-kernel device time of one call: rlxc's launches each between
    their own events (encoder_profile.rlxc_kernels), torch.compile's
    (reduce-overhead) kernels from torch.profiler."""
    import torch

    from encoder_profile import rlxc_kernels, table, torch_kernels
    from rlxc.dialects import rlx_cuda

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    model = make_model(args)
    module, weights = BUILDERS[args.model](model, batch, args.image, dtype)
    x = torch.rand(batch, 3, args.image, args.image).to(tdt).cuda()
    exe = rlxc.compile(module, target="cuda", params=rlxc_params(weights, dtype), mode="stream")
    exe.run({"x": x})
    ours = rlxc_kernels(exe, 10)
    forms = {}
    for k in exe.module.walk():
        if isinstance(k, rlx_cuda.KernelOp):
            notes = [ln for ln in k.source.data.splitlines() if ln.startswith("// ") and "rlx." not in ln]
            forms[k.entry.data] = notes[0][3:80] if notes else ""
    ours = {f"{n} {forms.get(n, '')}".strip(): t for n, t in ours.items()}
    peer = torch.compile(model.to(tdt).cuda(), mode="reduce-overhead")
    with torch.no_grad():
        theirs = torch_kernels(peer, x, 10)
    print("\n".join([f"## ResNet-50 batch {batch} {dtype}", "", *table("rlxc", ours, 40),
                     *table("torch.compile reduce-overhead", theirs, 40)]))
    return 0


BUILDERS = {"resnet50": build_rlxc, "mobilenet_v2": build_rlxc_mobilenet}


def make_model(args):
    if args.model == "mobilenet_v2":
        return folded_mobilenet_v2()
    return folded_resnet([int(v) for v in args.layers.split(",")])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--model", default="resnet50", choices=sorted(BUILDERS))
    ap.add_argument("--layers", default="3,4,6,3", help="ResNet's blocks per stage")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--no-direct", action="store_true", help="skip rlxc with the direct conv kernel")
    ap.add_argument("--reduce-overhead", action="store_true", help="also torch.compile(mode='reduce-overhead')")
    ap.add_argument("--dry-run", action="store_true", help="CPU only: build, lower and run a small one")
    ap.add_argument("--profile", metavar="BATCH:DTYPE", help="per-kernel device time of one case instead")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.dry_run:
        return dry_run(args)
    if args.profile:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        batch, dtype = args.profile.split(":")
        return profile(int(batch), dtype, args)
    args.repeat = 20 if args.quick else 100
    args.wall_repeat = 30 if args.quick else 200

    import torch

    from rlxc.runtime.driver_api import device_name

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = make_model(args)
    report = {"device": device_name(), "date": datetime.date.today().isoformat(), "image": args.image, "model": args.model,
              "argv": sys.argv[1:], "torch": torch.__version__, "python": platform.python_version(), "cases": []}
    for batch in [int(b) for b in args.batches.split(",")]:
        for dtype in args.dtypes.split(","):
            t0 = time.perf_counter()
            case = run_case(model, batch, dtype, args)
            report["cases"].append(case)
            summary = ", ".join(f"{s} {r['device_ms']:.3f}/{r['wall_ms']:.3f} ms err {r['err']:.1e}"
                                for s, r in case["systems"].items())
            print(f"[{time.perf_counter() - t0:.0f} s] b{batch} {dtype}: {summary}", flush=True)
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / "convnets.json").write_text(json.dumps(report, indent=1))
    text = markdown(report)
    if args.out:
        (args.out / "convnets.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""rlxc's fused attention kernel against PyTorch's scaled_dot_product_attention.

For each case, one graph holding just `rlx.attention` (inputs [b, h, s, d],
or [b, s, h, d] through transposes that rlx-fold-layout folds into the
op's layouts) is compiled for the cuda target in graph mode; the time is
the median over rounds of 200 back-to-back launches between CUDA events,
divided by 200, and the same for torch (flash backend for f16/bf16, the
default dispatch for f32). Outputs are checked against torch first.

    python benchmarks/attention.py [--out DIR] [--quick]
    python benchmarks/attention.py --gqa [--out DIR]

`--gqa`: grouped-query attention (key and value with fewer heads, causal),
rlxc reading the key/value heads in place against SDPA with
`enable_gqa=True` (default dispatch), SDPA after `repeat_interleave` of
the key/value heads (the copies Hugging Face's `repeat_kv` makes, timed
with them), and rlxc over key/value already repeated (the kernel alone,
no copy), in f16 and bf16.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rlxc  # noqa: E402
from gpu import torch_time  # noqa: E402

CASES = [  # (name, b, h, s, d)
    ("bert-base b=1", 1, 12, 128, 64),
    ("bert-base b=8", 8, 12, 128, 64),
    ("bert-base b=32", 32, 12, 128, 64),
    ("minilm b=32", 32, 12, 128, 32),
    ("s=512 d=64 b=8", 8, 12, 512, 64),
    ("s=1024 d=128 b=4", 4, 16, 1024, 128),
]
N = 200
#: `--gqa`: grouped-query attention, causal (decoders' prefill): (name, b, query heads, key/value heads, s, d)
GQA_CASES = [
    ("llama3-8b s=512 b=1", 1, 32, 8, 512, 128),
    ("llama3-8b s=2048 b=1", 1, 32, 8, 2048, 128),
    ("llama3-8b s=512 b=8", 8, 32, 8, 512, 128),
    ("llama3.2-1b s=1024 b=4", 4, 32, 8, 1024, 64),
    ("qwen2-0.5b s=1000 b=4", 4, 14, 2, 1000, 64),
]


def build(b, h, s, d, dtype, bshd, causal=False):
    g = rlxc.GraphBuilder()
    if bshd:
        q, k, v = (g.transpose(g.input(n, [b, s, h, d], dtype), [0, 2, 1, 3]) for n in "qkv")
        return g.build([g.transpose(g.attention(q, k, v, causal=causal), [0, 2, 1, 3])])
    q, k, v = (g.input(n, [b, h, s, d], dtype) for n in "qkv")
    return g.build([g.attention(q, k, v, causal=causal)])


def time_rlxc(exe) -> float:
    """Microseconds per launch: the median of 5 rounds of N launches."""
    return statistics.median(exe.time_launches(repeat=5, warmup=10, inner=N)) * 1000


def time_forced(module, inputs, knob: str, values, key: str) -> dict:
    """rlxc's time with the codegen knob `knob` (rlxc.codegen.attention) set
    to each of `values`, keyed by `key.format(value)`."""
    from rlxc.codegen import attention as codegen

    out = {}
    for value in values:
        setattr(codegen, knob, value)
        try:
            exe = rlxc.compile(module, target="cuda", mode="graph")
            exe.run(inputs)
            out[key.format(value)] = round(time_rlxc(exe), 2)
        finally:
            setattr(codegen, knob, None)
    return out


def time_torch(fn) -> float:
    """Microseconds per call, timed as `time_rlxc` (gpu.py's torch_time)."""
    return torch_time(fn, (), 5, inner=N, warmup=10) * 1000


def gqa_main(args) -> None:
    import torch
    import torch.nn.functional as F

    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}")
    for name, b, hq, hk, s, d in GQA_CASES:
        for dtype in ("f16", "bf16"):
            torch.manual_seed(0)
            q = torch.randn([b, hq, s, d], dtype=tdt[dtype], device="cuda")
            k, v = (torch.randn([b, hk, s, d], dtype=tdt[dtype], device="cuda") for _ in range(2))
            kr, vr = (x.repeat_interleave(hq // hk, dim=1) for x in (k, v))
            row = dict(case=name, dtype=dtype)
            want = F.scaled_dot_product_attention(q, kr, vr, is_causal=True).float()
            for label, kk, vv in (("rlxc_us", k, v), ("rlxc_repeated_us", kr, vr)):
                g = rlxc.GraphBuilder()
                ins = [g.input(n, list(x.shape), dtype) for n, x in zip("qkv", (q, kk, vv))]
                exe = rlxc.compile(g.build([g.attention(*ins, causal=True)]), target="cuda", mode="graph")
                (got,) = exe.run({"q": q, "k": kk, "v": vv})  # a DeviceArray
                err = float((torch.from_dlpack(got).float() - want).norm() / want.norm())
                row[label] = round(time_rlxc(exe), 2)
                row[label.replace("_us", "_err")] = float(f"{err:.2e}")
                exe.close()
            try:
                row["sdpa_gqa_us"] = round(time_torch(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)), 2)
            except Exception as e:  # an older torch: no enable_gqa
                row["sdpa_gqa_us"] = None
                row["sdpa_gqa_error"] = str(e)[:120]
            row["sdpa_repeat_us"] = round(time_torch(lambda: F.scaled_dot_product_attention(
                q, k.repeat_interleave(hq // hk, dim=1), v.repeat_interleave(hq // hk, dim=1), is_causal=True)), 2)
            peers = [t for t in (row["sdpa_gqa_us"], row["sdpa_repeat_us"]) if t]
            row["speedup"] = round(min(peers) / row["rlxc_us"], 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{dev}")
    print(f"{'case':24} {'dtype':5} {'rlxc us':>8} {'repeated':>9} {'sdpa gqa':>9} {'sdpa rep':>9} {'x':>5} {'err':>8}")
    for r in rows:
        print(f"{r['case']:24} {r['dtype']:5} {r['rlxc_us']:8.2f} {r['rlxc_repeated_us']:9.2f} "
              f"{r['sdpa_gqa_us'] or float('nan'):9.2f} {r['sdpa_repeat_us']:9.2f} {r['speedup']:5.2f} {r['rlxc_err']:8.1e}")
    if args.out:
        Path(args.out, "attention-gqa.json").write_text(json.dumps({"device": dev, "rows": rows}, indent=1))


def main() -> None:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--gqa", action="store_true", help="grouped-query attention cases (GQA_CASES)")
    args = ap.parse_args()
    if args.gqa:
        return gqa_main(args)
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}")
    cases = CASES[:4] if args.quick else CASES
    for name, b, h, s, d in cases:
        for dtype in ("f16", "bf16", "f32"):
            for bshd in (False, True):
                for causal in (False, True):
                    if causal and (bshd or s == 128 and b != 32):
                        continue
                    module = build(b, h, s, d, dtype, bshd, causal)
                    exe = rlxc.compile(module, target="cuda", mode="graph")
                    shape = [b, s, h, d] if bshd else [b, h, s, d]
                    torch.manual_seed(0)
                    xs = [torch.randn(shape, dtype=tdt[dtype], device="cuda") for _ in range(3)]
                    host = np.float16 if dtype == "f16" else np.float32  # bf16: exact in float32
                    inputs = {n: x.float().cpu().numpy().astype(host) for n, x in zip("qkv", xs)}
                    (got,) = exe.run(inputs)
                    tq, tk, tv = ((x.transpose(1, 2) if bshd else x) for x in xs)
                    want = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
                    if bshd:
                        want = want.transpose(1, 2)
                    w = want.float().cpu().numpy()
                    err = float(np.linalg.norm(np.asarray(got, np.float64) - w) / np.linalg.norm(w))
                    t_rlxc = time_rlxc(exe)
                    forced = {}
                    if dtype != "f32" and d <= 64 and s >= 256:  # the other m-tile choice, for comparison
                        forced.update(time_forced(module, inputs, "FORCE_M_TILES", (1, 2), "m_tiles_{}_us"))
                    if dtype == "f32":  # both f32 forms, for comparison
                        forced.update(time_forced(module, inputs, "FORCE_F32_FORM", ("simt", "tiled"), "form_{}_us"))
                    backend = [SDPBackend.FLASH_ATTENTION] if dtype != "f32" else [
                        SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
                    with sdpa_kernel(backend):
                        t_torch = time_torch(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal))
                    row = dict(case=name, dtype=dtype, layout="bshd" if bshd else "bhsd", causal=causal,
                               rlxc_us=round(t_rlxc, 2), sdpa_us=round(t_torch, 2),
                               speedup=round(t_torch / t_rlxc, 2), rel_err=float(f"{err:.2e}"), **forced)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print(f"\n{dev}")
    print(f"{'case':18} {'dtype':5} {'layout':6} {'causal':6} {'rlxc us':>8} {'sdpa us':>8} {'x':>5} {'err':>8}")
    for r in rows:
        print(f"{r['case']:18} {r['dtype']:5} {r['layout']:6} {str(r['causal']):6} {r['rlxc_us']:8.2f} "
              f"{r['sdpa_us']:8.2f} {r['speedup']:5.2f} {r['rel_err']:8.1e}"
              + "".join(f"  {k}={v}" for k, v in r.items() if k.startswith(("m_tiles", "form_"))))
    if args.out:
        Path(args.out, "attention.json").write_text(json.dumps({"device": dev, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

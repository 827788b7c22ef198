"""Compiler-side measurements (no GPU needed): memory plan quality, pipeline
time on large generated graphs, and kernels before/after fusion.

    python benchmarks/compiler.py [--graphs 500] [--out benchmarks/results]

Prints a short table per measurement; `benchmarks/RESULTS.md` records runs.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "examples"), str(ROOT / "tests")]

import rlxc  # noqa: E402
from models import EXAMPLES  # noqa: E402
from rlxc.dialects import plan as P  # noqa: E402
from rlxc.dialects import rlx  # noqa: E402


def kernels(module) -> int:
    """Ops that would launch work: everything but params, constants, views and return."""
    f = next(iter(module.ops))
    skip = (rlx.ParamOp, rlx.ConstantOp, rlx.ReshapeOp)
    return sum(1 for op in f.body.block.ops if op.name.startswith("rlx.") and not isinstance(op, skip))


def plan_numbers(module) -> tuple[int, int]:
    f = next(iter(module.ops))
    fplan = P.function_plan(f)
    return fplan.arena_bytes, fplan.peak_live_bytes


def big_graph(n_ops: int, seed: int = 0, hidden: int = 64):
    """A generated graph of about `n_ops` rlx ops: residual blocks of
    layer_norm, linear, activations, elementwise chains and softmax."""
    rng = np.random.default_rng(seed)
    g = rlxc.GraphBuilder()
    x = g.input("x", [8, hidden])
    count = 0
    i = 0
    while count < n_ops:
        i += 1
        h = g.layer_norm(x, g.param(f"g{i}", [hidden]), g.param(f"b{i}", [hidden]))
        h = g.linear(h, g.param(f"w{i}", [hidden, hidden]), g.param(f"c{i}", [hidden]))
        count += 6
        for _ in range(int(rng.integers(2, 8))):
            op = rng.choice(["gelu", "tanh", "sigmoid", "exp_tanh", "mul", "sub", "softmax"])
            if op == "exp_tanh":
                h = g.exp(g.tanh(h))
                count += 1
            elif op in ("mul", "sub"):
                h = getattr(g, op)(h, x)
            elif op == "softmax":
                h = g.softmax(h)
            else:
                h = getattr(g, op)(h)
            count += 1
        x = g.add(x, h)
        count += 1
    return g.build([x]), count


def main() -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", type=int, default=500)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    report: dict = {"machine": f"{platform.node()} {platform.processor() or platform.machine()}",
                    "date": time.strftime("%Y-%m-%d")}

    print("== examples: kernels before/after rlx-optimize (cuda), memory plan ==")
    print(f"{'example':<28}{'rlx ops':>8}{'kernels':>9}{'after':>7}{'naive B':>14}{'planned B':>14}{'peak B':>14}{'naive/plan':>11}{'plan/peak':>10}")
    rows = []
    for name, build in EXAMPLES.items():
        for kw in ({}, {"mlp": {"rows": 8192}, "transformer": {"batch": 32}, "cnn": {"batch": 64}}[name]):
            module, _ = build(**kw)
            ops = sum(1 for op in module.walk() if op.name.startswith("rlx."))
            opt = rlxc.run_pipeline(module, "rlx-optimize")
            planned = rlxc.run_pipeline(module, "rlx-plan")
            naive = rlxc.run_pipeline(module, "rlx-plan{strategy=naive}")
            a, p = plan_numbers(planned)
            an, _ = plan_numbers(naive)
            label = f"{name}{kw or ''}"
            rows.append(dict(example=label, ops=ops, kernels_before=kernels(module),
                             kernels_after=kernels(opt), naive=an, planned=a, peak=p))
            print(f"{label:<28}{ops:>8}{kernels(module):>9}{kernels(opt):>7}{an:>14}{a:>14}{p:>14}{an / a:>11.3f}{a / p:>10.3f}")
    report["examples"] = rows

    print(f"\n== {args.graphs} random graphs (tests/strategies.py): arena / peak_live ==")
    from hypothesis import HealthCheck, given, settings
    from strategies import graphs

    ratios: list[float] = []

    @settings(max_examples=args.graphs, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(graphs(max_ops=16))
    def collect(case):
        a, p = plan_numbers(rlxc.run_pipeline(case.module, "rlx-plan"))
        ratios.append(a / p)

    collect()
    r = np.array(ratios)
    q = np.quantile(r, [0.5, 0.9, 0.99, 1.0])
    print(f"n={len(r)}  exactly at bound: {np.mean(r == 1.0):.1%}  median {q[0]:.3f}  p90 {q[1]:.3f}  p99 {q[2]:.3f}  max {q[3]:.3f}  over 1.05: {int(np.sum(r > 1.05))}")
    report["random"] = dict(n=len(r), at_bound=float(np.mean(r == 1.0)), median=q[0], p90=q[1],
                            p99=q[2], max=q[3], over_105=int(np.sum(r > 1.05)))

    print("\n== rlx-plan pipeline time on generated graphs ==")
    times = {}
    for n in (10_000, 20_000):
        module, count = big_graph(n)
        samples = []
        for _ in range(3):
            t0 = time.perf_counter()
            rlxc.run_pipeline(module, "rlx-plan")
            samples.append(time.perf_counter() - t0)
        times[n] = statistics.median(samples)
        print(f"{count} ops: median {times[n]:.2f} s over 3 runs")
    print(f"20k/10k time ratio: {times[20_000] / times[10_000]:.2f}")
    report["pipeline_seconds"] = times

    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "compiler.json").write_text(json.dumps(report, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())

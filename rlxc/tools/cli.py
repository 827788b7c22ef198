"""`rlxc`: compile and run models from the command line.

    rlxc run FILE [--shape NAME=D0,D1,...] [--backend numpy|cuda] [--inputs in.npz] [--params p.npz] [--seed N] [--mode graph|stream]
    rlxc bench FILE [--shape ...] [--backend cuda|numpy] [--mode graph|stream|both] [--repeat N]
    rlxc import MODEL.onnx [--shape NAME=D0,D1,...] -o MODEL.mlir
    rlxc plan FILE [--plot plan.png]
    rlxc fuzz PIPELINE [--examples N] [--seed S] [--out DIR] [--onnx]

FILE is a graph-level `.mlir` file or an `.onnx` model. An ONNX model's
symbolic dimensions are bound with `--shape` (or from the arrays in
`--inputs`), and its initializers are its params. A `.mlir` file's params
are read from `--params`, else from the `.npz` beside it with the same stem
(what `rlxc import` writes). `run` prints each output's shape and summary
statistics and the time taken. Inputs or params not given are drawn at
random from a seeded generator, and the tool says so. Errors (bad IR, an
unsupported ONNX op, a missing input, a wrong shape) are reported in one
message, with a non-zero exit, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

from rlxc.dialects import plan as P
from rlxc.dialects.types import dtype_name
from rlxc.runtime.nvrtc import write_atomic
from rlxc.signature import InputError, signature


class CliError(ValueError):
    """A user-facing error of the `rlxc` command."""


def _load_npz(path: str | None, what: str) -> dict[str, np.ndarray]:
    if path is None:
        return {}
    import zipfile

    try:
        data = np.load(path)
        if isinstance(data, np.lib.npyio.NpzFile):
            with data:
                return {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise CliError(f"cannot read {what} file {path}: {e}") from None
    raise CliError(f"{what} file {path}: not an .npz of arrays by name (np.savez writes one)")


def _random(t, rng: np.random.Generator, what: str = "") -> np.ndarray:
    """Random values of tensor type `t`: integers 0-7 (0/1 for a `what`
    named like a mask: an attention mask of 7s overflows), bools, standard
    normal floats."""
    shape = tuple(t.get_shape())  # a tensor type: load_module checked @main's arguments
    name = dtype_name(t.get_element_type())
    if name in ("i32", "i64"):
        top = 2 if "mask" in what.lower() else 8
        return rng.integers(0, top, size=shape).astype(np.int32 if name == "i32" else np.int64)
    if name == "i1":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.standard_normal(shape).astype(np.float16 if name == "f16" else np.float32)


def parse_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    """`--shape input_ids=1,128` (repeatable) as {"input_ids": [1, 128]}."""
    shapes = {}
    for spec in specs or []:
        name, eq, dims = spec.partition("=")
        try:
            if not eq or not name:
                raise ValueError
            shapes[name] = [int(d) for d in dims.split(",")] if dims.strip() else []
        except ValueError:
            raise CliError(f"--shape {spec!r}: expected NAME=D0,D1,... (e.g. input_ids=1,128)") from None
    return shapes


def load_module(path: str, shapes: dict[str, list[int]] | None = None,
                inputs: dict[str, np.ndarray] | None = None):
    """(module, params) from an `.mlir` file (params: the `.npz` beside it,
    if any) or an `.onnx` model (params: its initializers; symbolic
    dimensions from `shapes`, else from the shapes of given `inputs`)."""
    if not Path(path).exists():
        raise CliError(f"cannot read {path}: no such file")
    if path.endswith(".onnx"):
        from rlxc.frontends.onnx import from_onnx

        bound = {n: list(a.shape) for n, a in (inputs or {}).items()}
        bound.update(shapes or {})
        return from_onnx(path, bound)
    if shapes:
        raise CliError("--shape binds an ONNX model's symbolic dimensions; a .mlir file's shapes are fixed")
    from rlxc.loader import read_mlir

    from xdsl.utils.exceptions import VerifyException

    try:
        module, params = read_mlir(path)
    except OSError as e:
        raise CliError(f"cannot read {path} or the params beside it: {e}") from None
    except VerifyException:  # again, to say where (rlxc-opt's located diagnostic: file:line:col, the op)
        from rlxc.context import make_context
        from rlxc.tools.opt import LocatingParser, verify_with_location

        parser = LocatingParser(make_context(), Path(path).read_text(), path)
        verify_with_location(parser.parse_module(), parser.locations)
        raise
    _check_main(module, path)
    return module, params


def _first_func(module):
    """The first func.func with a body: what run, bench and plan take."""
    from xdsl.dialects import func

    return next((op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks), None)


def _check_main(module, path: str) -> None:
    """`_first_func` exists and takes and returns tensors (rlx values are
    tensors; a scalar is tensor<f32>)."""
    from xdsl.dialects.builtin import TensorType

    f = _first_func(module)
    if f is None:
        raise CliError(f"{path} has no func.func with a body to run")
    from rlxc.driver import lowered_op

    if (lowered := lowered_op(module)) is not None:
        raise CliError(f"{path} is lowered already ({lowered}: the rlx-cuda pipeline's output); "
                       "rlxc takes graph-level IR (or a planned module) and lowers it itself")
    kinds = [("argument", t) for t in f.function_type.inputs] + [("result", t) for t in f.function_type.outputs]
    for i, (kind, t) in enumerate(kinds):
        if not isinstance(t, TensorType):
            raise CliError(f"{path}: @{f.sym_name.data}'s {kind} {i if kind == 'argument' else i - len(f.function_type.inputs)} "
                           f"is {t}, not a tensor (rlx values are tensors: a scalar is tensor<{t}>)")


def _module_and_params(args: argparse.Namespace, inputs: dict[str, np.ndarray]):
    module, params = load_module(args.file, parse_shapes(args.shape), inputs)
    given = _load_npz(args.params, "params")
    known = signature(module).params
    unknown = sorted(set(given) - set(known))
    if unknown:  # as an unknown input is refused
        raise CliError(f"--params {args.params}: {', '.join(map(repr, unknown))} "
                       f"{'is not a param' if len(unknown) == 1 else 'are not params'} of the module "
                       f"(its params: {', '.join(sorted(known)) or 'none'})")
    params.update(given)
    return module, params


def fill_missing(module, inputs, params, seed: int) -> list[str]:
    """Adds seeded random values for inputs/params not given; returns notes."""
    sig = signature(module)
    rng = np.random.default_rng(seed)
    notes = []
    for n, t in sig.inputs:
        if n not in inputs:
            inputs[n] = _random(t, rng, n)
            notes.append(f"input '{n}': random ({t}), seed {seed}")
    for n, t in sig.params.items():
        if n not in params:
            params[n] = _random(t, rng)
            notes.append(f"param '{n}': random ({t}), seed {seed}")
    return notes


def summarize(i: int, a: np.ndarray) -> str:
    a64 = a.astype(np.float64)
    if a64.size == 0:
        return f"output #{i}: shape {list(a.shape)} dtype {a.dtype}  (no elements)"
    return (
        f"output #{i}: shape {list(a.shape)} dtype {a.dtype}  "
        f"min {a64.min():.6g}  max {a64.max():.6g}  mean {a64.mean():.6g}  "
        f"std {a64.std():.6g}"
    )


def cmd_run(args: argparse.Namespace) -> int:
    inputs = _load_npz(args.inputs, "inputs")
    module, params = _module_and_params(args, inputs)
    notes = fill_missing(module, inputs, params, args.seed)
    for note in notes:
        print(note)
    from rlxc.driver import compile
    from rlxc.runtime.driver_api import CudaError

    try:
        exe = compile(module, target=args.backend, params=params, mode=args.mode)
    except CudaError as e:
        raise CliError(str(e)) from None
    if args.backend == "cuda":
        exe.run(inputs)  # the first run loads modules; time the second
    start = time.perf_counter()
    outs = exe.run(inputs)
    elapsed = time.perf_counter() - start
    for i, o in enumerate(outs):
        print(summarize(i, o))
        a = np.asarray(o)
        bad = int(a.size - np.isfinite(a).sum()) if a.dtype.kind == "f" else 0
        if bad:
            print(f"note: output #{i} has {bad} NaN or infinite values" + (" (on random inputs: give real ones with --inputs)" if notes else ""))
    print(f"backend {args.backend}: {elapsed * 1e3:.2f} ms")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Times a module: median and spread of many runs (CUDA events on the GPU:
    device work only; wall clock for the numpy backend)."""
    import statistics

    from rlxc.driver import compile
    from rlxc.runtime.driver_api import CudaError

    if args.repeat < 1:
        raise CliError(f"--repeat {args.repeat}: give 1 run or more")
    inputs = _load_npz(args.inputs, "inputs")
    module, params = _module_and_params(args, inputs)
    for note in fill_missing(module, inputs, params, args.seed):
        print(note)
    rows = []
    modes = ["graph", "stream"] if args.mode == "both" else [args.mode]
    for mode in modes if args.backend == "cuda" else ["-"]:
        try:
            exe = compile(module, target=args.backend, params=params, mode=mode if mode != "-" else "graph")
        except CudaError as e:
            raise CliError(str(e)) from None
        if args.backend == "cuda":
            exe.run(inputs)
            times = exe.time_launches(repeat=args.repeat)
        else:
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                exe.run(inputs)
                times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        rows.append((args.backend + (f" {mode}" if mode != "-" else ""), statistics.median(times),
                     times[len(times) // 10], times[(9 * len(times)) // 10]))
    print(f"{'backend':<16}{'median ms':>12}{'p10 ms':>10}{'p90 ms':>10}   ({args.repeat} runs)")
    for name, med, p10, p90 in rows:
        print(f"{name:<16}{med:>12.4f}{p10:>10.4f}{p90:>10.4f}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Plans memory (the rlx-plan pipeline unless the file is already planned),
    prints the plan's figures and optionally draws it."""
    from rlxc.passes.pipelines import run_pipeline
    from rlxc.passes.plan_memory import liveness

    module, _ = load_module(args.file, parse_shapes(args.shape))
    f = _first_func(module)
    if f is None:
        raise CliError(f"{args.file} has no func.func with a body to plan")
    if P.function_plan(f) is None:
        module = run_pipeline(module, args.pipeline)
        f = _first_func(module)
    fplan = P.function_plan(f)
    if fplan is None:
        raise CliError(f"--pipeline {args.pipeline!r} left @{f.sym_name.data} without a memory plan "
                       "(a pipeline that plans ends in rlx-plan-memory: rlx-plan does)")
    arena, peak = fplan.arena_bytes, fplan.peak_live_bytes
    buffers = liveness(f.body.block, inplace=False)
    offset_of = _planned_offsets(f)
    print(f"{len(buffers)} buffers, arena {arena} B, lower bound (peak live) {peak} B, "
          f"ratio {arena / max(peak, 1):.3f}")
    if args.plot:
        plot_plan(buffers, offset_of, arena, peak, args.plot, title=Path(args.file).name)
        print(f"wrote {args.plot}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Writes an ONNX model's graph-level IR and its params (`.npz` beside it)."""
    if not args.file.endswith(".onnx"):
        raise CliError(f"{args.file}: rlxc import reads .onnx models")
    out = Path(args.output)
    npz = out.with_suffix(".npz")
    if out.suffix == ".npz":
        raise CliError(f"-o {out}: the IR's file, not its params' (they go to the .npz beside it: name it .mlir)")
    for path in (out, npz):
        if path.is_dir():
            raise CliError(f"-o {out}: {path} is a directory")
    module, params = load_module(args.file, parse_shapes(args.shape))
    had_npz = npz.exists()
    write_atomic(npz, npz_bytes(params))
    try:
        write_atomic(out, str(module).encode() + b"\n")
    except BaseException:
        if not had_npz:
            npz.unlink(missing_ok=True)  # not half of a new pair
        raise
    n = sum(int(np.prod(a.shape)) for a in params.values())
    print(f"wrote {out} and {npz} ({len(params)} params, {n} values)")
    return 0


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """`arrays` as the bytes of an `.npz` file."""
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _planned_offsets(f) -> dict:
    """value -> offset, read back from the plan's attributes."""
    out = dict(zip(f.body.block.args, P.function_plan(f).arg_offsets))
    for op in f.body.block.ops:
        if (offs := P.offsets(op)) is not None:
            out.update(zip(op.results, offs))
    return out


def plot_plan(buffers, offset_of, arena: int, peak: int, path: str, title: str = "") -> None:
    """Offset against time, one box per buffer, the lower bound marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        raise CliError("--plot needs matplotlib: pip install 'rlxc[plot]'") from None
    fig, ax = plt.subplots(figsize=(10, 5))
    scale = 1 / 1024
    for b in buffers:
        off = offset_of.get(b.values[0], 0)
        ax.add_patch(Rectangle((b.start, off * scale), b.end - b.start + 1, b.size * scale,
                               edgecolor="black", facecolor="tab:blue", alpha=0.5, lw=0.5))
    end = max((b.end for b in buffers), default=0) + 1
    ax.axhline(arena * scale, color="tab:red", lw=1, label=f"arena {arena / 2**20:.2f} MiB")
    ax.axhline(peak * scale, color="tab:green", ls="--", lw=1,
               label=f"lower bound {peak / 2**20:.2f} MiB")
    ax.set_xlim(-1.5, end + 0.5)
    ax.set_ylim(0, max(arena, 1) * scale * 1.08)
    ax.set_xlabel("program position (op index)")
    ax.set_ylabel("arena offset (KiB)")
    ax.set_title(f"memory plan {title}")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def cmd_fuzz(args: argparse.Namespace) -> int:
    """Differential fuzzing of a pipeline (see `rlxc.tools.fuzz`)."""
    from rlxc.tools.fuzz import main_args

    return main_args(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rlxc", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a module's @main and summarise its outputs")
    r.add_argument("file", help="an .mlir file at the graph level, or an .onnx model")
    r.add_argument("--shape", action="append", metavar="NAME=D0,D1,...",
                   help="bind an ONNX input's shape (repeatable)")
    r.add_argument("--backend", choices=["numpy", "cuda"], default="numpy",
                   help="cuda needs a GPU; numpy is the reference interpreter")
    r.add_argument("--inputs", help=".npz of inputs by name (missing ones are random)")
    r.add_argument("--params", help=".npz of params by name (missing ones are random)")
    r.add_argument("--seed", type=int, default=0, help="seed for random inputs/params")
    r.add_argument("--mode", choices=["graph", "stream"], default="graph")
    r.set_defaults(func=cmd_run)
    b = sub.add_parser("bench", help="time a module (median of many runs)")
    b.add_argument("file", help="an .mlir file at the graph level, or an .onnx model")
    b.add_argument("--shape", action="append", metavar="NAME=D0,D1,...")
    b.add_argument("--backend", choices=["numpy", "cuda"], default="cuda")
    b.add_argument("--mode", choices=["graph", "stream", "both"], default="both")
    b.add_argument("--repeat", type=int, default=100)
    b.add_argument("--inputs")
    b.add_argument("--params")
    b.add_argument("--seed", type=int, default=0)
    b.set_defaults(func=cmd_bench)
    pl = sub.add_parser("plan", help="plan a module's memory and report or draw it")
    pl.add_argument("file", help="an .mlir file (planned already, or planned here), or an .onnx model")
    pl.add_argument("--shape", action="append", metavar="NAME=D0,D1,...")
    pl.add_argument("--pipeline", default="rlx-plan", help="pipeline that plans it (default rlx-plan)")
    pl.add_argument("--plot", metavar="PNG", help="draw offset against time (needs matplotlib)")
    pl.set_defaults(func=cmd_plan)
    im = sub.add_parser("import", help="import an ONNX model as graph-level IR + a params .npz")
    im.add_argument("file", help="an .onnx model")
    im.add_argument("--shape", action="append", metavar="NAME=D0,D1,...",
                    help="bind an input's shape (repeatable); needed for symbolic dimensions")
    im.add_argument("-o", "--output", required=True, help="the .mlir file to write (params go to its .npz)")
    im.set_defaults(func=cmd_import)
    fz = sub.add_parser("fuzz", help="run a pipeline on random graphs, compare interpretations, "
                        "shrink a failure to a reproducer")  # fmt: skip
    fz.add_argument("pipeline", help="pipeline text, e.g. rlx-plan or 'rlx-unfuse,canonicalize'")
    fz.add_argument("--examples", type=int, default=100, help="random graphs to try (default 100)")
    fz.add_argument("--seed", type=int, default=0, help="seed of the graph draw (default 0)")
    fz.add_argument("--out", default=".", metavar="DIR", help="where fuzz-repro.mlir goes (default .)")
    fz.add_argument("--onnx", action="store_true", help="draw random ONNX models and import them")
    fz.add_argument("--max-ops", type=int, default=12, help="op steps per graph at most (default 12)")
    fz.add_argument("--dtypes", default="f32", help="element types to draw from: f32,f16,bf16 (default f32)")
    fz.add_argument("--tolerance", type=float, help="relative L2 error allowed per float output "
                    "(default by dtype: f32 1e-4, f16 5e-3, bf16 3e-2)")  # fmt: skip
    fz.set_defaults(func=cmd_fuzz)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlxc` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CliError, InputError, ParseError, DiagnosticException, ValueError, OSError) as e:
        notes = "".join(f"\n  {n}" for n in getattr(e, "__notes__", ()))
        print(f"rlxc {args.command}: error: {e}{notes}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

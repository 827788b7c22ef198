"""`rlxc`: compile and run models from the command line.

    rlxc run FILE.mlir [--backend numpy] [--inputs in.npz] [--params p.npz] [--seed N]

Prints each output's shape and summary statistics and the time taken. Inputs
or params not given are drawn at random from a seeded generator, and the
tool says so. Errors (bad IR, a missing input, a wrong shape) are reported
in one message, with a non-zero exit, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

from rlxc.context import parse_module
from rlxc.dialects.types import dtype_name
from rlxc.interp import InputError, interpret, signature


class CliError(Exception):
    """A user-facing error of the `rlxc` command."""


def _load_npz(path: str | None, what: str) -> dict[str, np.ndarray]:
    if path is None:
        return {}
    try:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    except OSError as e:
        raise CliError(f"cannot read {what} file {path}: {e}") from None


def _random(t, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(t.get_shape())
    name = dtype_name(t.get_element_type())
    if name in ("i32", "i64"):
        return rng.integers(0, 8, size=shape).astype(np.int32 if name == "i32" else np.int64)
    if name == "i1":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.standard_normal(shape).astype(np.float16 if name == "f16" else np.float32)


def load_module(path: str):
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise CliError(f"cannot read {path}: {e}") from None
    return parse_module(text, path)


def fill_missing(module, inputs, params, seed: int) -> list[str]:
    """Adds seeded random values for inputs/params not given; returns notes."""
    sig = signature(module)
    rng = np.random.default_rng(seed)
    notes = []
    for n, t in sig.inputs:
        if n not in inputs:
            inputs[n] = _random(t, rng)
            notes.append(f"input '{n}': random ({t}), seed {seed}")
    for n, t in sig.params.items():
        if n not in params:
            params[n] = _random(t, rng)
            notes.append(f"param '{n}': random ({t}), seed {seed}")
    return notes


def summarize(i: int, a: np.ndarray) -> str:
    a64 = a.astype(np.float64)
    return (
        f"output #{i}: shape {list(a.shape)} dtype {a.dtype}  "
        f"min {a64.min():.6g}  max {a64.max():.6g}  mean {a64.mean():.6g}  "
        f"std {a64.std():.6g}"
    )


def cmd_run(args: argparse.Namespace) -> int:
    module = load_module(args.file)
    inputs = _load_npz(args.inputs, "inputs")
    params = _load_npz(args.params, "params")
    for note in fill_missing(module, inputs, params, args.seed):
        print(note)
    if args.backend != "numpy":
        raise CliError(
            f"backend '{args.backend}' is not available yet in this version: use --backend numpy"
        )
    start = time.perf_counter()
    outs = interpret(module, inputs, params)
    elapsed = time.perf_counter() - start
    for i, o in enumerate(outs):
        print(summarize(i, o))
    print(f"backend {args.backend}: {elapsed * 1e3:.2f} ms")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rlxc", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a module's @main and summarise its outputs")
    r.add_argument("file", help="an .mlir file at the graph level")
    r.add_argument("--backend", choices=["numpy", "cuda"], default="numpy")
    r.add_argument("--inputs", help=".npz of inputs by name (missing ones are random)")
    r.add_argument("--params", help=".npz of params by name (missing ones are random)")
    r.add_argument("--seed", type=int, default=0, help="seed for random inputs/params")
    r.set_defaults(func=cmd_run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlxc` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CliError, InputError, ParseError, DiagnosticException, ValueError) as e:
        print(f"rlxc {args.command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

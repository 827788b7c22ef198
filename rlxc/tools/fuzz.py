"""`rlxc fuzz PIPELINE`: differential fuzzing of a pass pipeline.

    rlxc fuzz PIPELINE [--examples N] [--seed S] [--out DIR] [--onnx]
                       [--max-ops K] [--dtypes f32,f16,bf16] [--tolerance T]

Draws random valid graphs (`rlxc.testing.strategies.graphs`; with `--onnx`,
random ONNX models from `rlxc.testing.onnx_graphs`, imported with
`from_onnx`), runs PIPELINE on each (verifying after every pass) and
interprets @main before and after on the inputs and params `rlxc-opt
--check-semantics` draws (seed 0), comparing them as it does
(`SemanticsCheck`: integers exactly, floats within a relative L2 tolerance:
1e-4 for f32, looser for f16/bf16 graphs). The pipeline must not raise.

On the first failure hypothesis's shrinker minimises the graph, keeping the
same kind of failure (a crash of the same exception type, or a changed
result), and then @main's outputs that the failure does not need are dropped
(with the ops only they fed); the smallest graph is written to DIR/fuzz-repro.mlir under a
`// RUN: rlxc-opt %s -p '<PIPELINE>' --check-semantics` line (with --onnx, the
imported module, and the model beside it as fuzz-repro.onnx) and the tool
exits with status 1. Otherwise it prints how many graphs passed.

Hypothesis is a test dependency (`pip install 'rlxc[test]'`); it is imported
only here, when the command runs. An ONNX model's initializers are not used:
like `rlxc-opt --check-semantics`, the comparison draws random params, so
the reproducer behaves the same in both tools.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp, TensorType

#: Relative L2 error allowed per float output, by the least precise float
#: element type in the graph.
TOLERANCE = {"f32": 1e-4, "f16": 5e-3, "bf16": 3e-2}
DEFAULT_TOLERANCE = TOLERANCE["f32"]
#: The seed of the inputs and params: rlxc-opt --check-semantics's default,
#: so the reproducer's RUN line needs no --semantics-seed.
INPUT_SEED = 0
REPRO_NAME = "fuzz-repro"


class FuzzError(ValueError):
    """A user-facing error of `rlxc fuzz` (no hypothesis, a bad pipeline)."""


@dataclass
class Failure:
    """What went wrong on one graph."""

    kind: str  # "crash:<ExceptionType>", "import:<ExceptionType>", "semantics"
    message: str


@dataclass
class FuzzResult:
    """The outcome: how many graphs were drawn (before the first failure) and,
    on failure, the shrunk case, its failure and the reproducer's path."""

    pipeline: str
    passed: int
    failure: Failure | None = None
    ops: list[str] = field(default_factory=list)  # of the shrunk graph (or ONNX nodes)
    reproducer: Path | None = None
    reproduces: bool | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None


def _op_names(module: ModuleOp) -> list[str]:
    from xdsl.dialects import func

    return [op.name for f in module.ops if isinstance(f, func.FuncOp)
            for op in f.body.ops if not isinstance(op, func.ReturnOp)]  # fmt: skip


def tolerance_for(module: ModuleOp) -> float:
    """The loosest tolerance of the float element types the module uses."""
    from rlxc.dialects.types import dtype_name

    tol = DEFAULT_TOLERANCE
    for op in module.walk():
        for v in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if isinstance(v.type, TensorType):
                try:
                    tol = max(tol, TOLERANCE.get(dtype_name(v.type.get_element_type()), tol))
                except Exception:  # an element type rlx does not name
                    pass
    return tol


def check_module(module: ModuleOp, pipeline: str, tolerance: float | None = None) -> Failure | None:
    """None if `pipeline` runs on `module` and keeps @main's results (on
    seeded random inputs and params), else what went wrong."""
    from rlxc.passes.pipelines import run_pipeline
    from rlxc.tools.pass_runner import SemanticsCheck

    semantics = SemanticsCheck(INPUT_SEED, tolerance if tolerance is not None else tolerance_for(module))
    try:
        semantics.start(module)
    except Exception as e:  # the drawn graph itself does not interpret
        return Failure(f"input:{type(e).__name__}", f"the input module does not interpret: {type(e).__name__}: {e}")
    try:
        after = run_pipeline(module, pipeline, verify_each=True)
    except Exception as e:
        return Failure(f"crash:{type(e).__name__}", f"the pipeline raised {type(e).__name__}: {e}")
    problem = semantics.compare(after, pipeline)
    return None if problem is None else Failure("semantics", f"the pipeline changed the module's meaning: {problem}")


def _require_interpretable_output(pipeline: str) -> None:
    """Raises FuzzError where `pipeline` lowers to the launch level
    (`rlx_cuda` kernels and launches), whose meaning the numpy interpreter
    cannot check: every graph would "fail". Probed on a one-op graph."""
    from rlxc.frontends.builder import GraphBuilder
    from rlxc.passes.pipelines import run_pipeline

    g = GraphBuilder()
    try:
        after = run_pipeline(g.build([g.neg(g.input("x", [4]))]), pipeline)
    except Exception:  # the pipeline fails on its own: the fuzzer will find and shrink that
        return
    launch = sorted({op.name for op in after.walk() if op.name.startswith("rlx_cuda.")})
    if launch:
        raise FuzzError(
            f"'{pipeline}' lowers to the launch level ({', '.join(launch)}), which the interpreter does "
            "not run, so no result could be compared: fuzz the graph-level part (e.g. rlx-plan), and "
            "check kernels on a GPU (pytest -m gpu tests/test_gpu.py runs random graphs there)"
        )


def _hypothesis():
    try:
        import hypothesis
    except ImportError:
        raise FuzzError(
            "rlxc fuzz draws graphs with hypothesis, which is not installed: pip install 'rlxc[test]' "
            "(or pip install hypothesis)"
        ) from None
    return hypothesis


def _case_module(case: Any, onnx: bool) -> tuple[ModuleOp | None, Failure | None]:
    if not onnx:
        return case.module, None
    from rlxc.frontends.onnx import from_onnx

    try:
        module, _ = from_onnx(case.model)
    except Exception as e:
        return None, Failure(f"import:{type(e).__name__}", f"the ONNX importer raised {type(e).__name__}: {e}")
    return module, None


def fuzz(
    pipeline: str,
    examples: int = 100,
    seed: int = 0,
    out: str | Path = ".",
    onnx: bool = False,
    max_ops: int = 12,
    dtypes: tuple[str, ...] = ("f32",),
    tolerance: float | None = None,
    log: IO[str] | None = None,
    check: Callable[[ModuleOp, str, float | None], Failure | None] = check_module,
) -> FuzzResult:
    """Fuzzes `pipeline` on `examples` random graphs drawn from `seed`; on a
    failure, shrinks it and writes the reproducer into `out`."""
    from xdsl.utils.exceptions import ArgSpecParseError

    from rlxc.passes.pipelines import parse_pipeline

    hypothesis = _hypothesis()
    from hypothesis import HealthCheck, Phase, settings

    if examples < 1 or max_ops < 1:
        raise FuzzError("--examples and --max-ops must be at least 1")
    try:
        parse_pipeline(pipeline)
    except (Exception, ArgSpecParseError) as e:  # the latter is a BaseException
        raise FuzzError(f"bad pipeline '{pipeline}': {e}") from None
    _require_interpretable_output(pipeline)
    if onnx:
        from rlxc.testing.onnx_graphs import onnx_models

        strategy = onnx_models(max_nodes=max_ops)
    else:
        from rlxc.testing.strategies import graphs

        strategy = graphs(max_ops=max_ops, dtypes=dtypes)

    start = time.perf_counter()
    state: dict[str, Any] = {"drawn": 0, "kind": None, "first": None}

    def fails(case: Any) -> bool:
        if state["kind"] is None:
            state["drawn"] += 1
        module, failure = _case_module(case, onnx)
        if failure is None:
            assert module is not None
            failure = check(module, pipeline, tolerance)
        if failure is None:
            return False
        if state["kind"] is None:  # the first failure fixes the kind to shrink towards
            state["kind"], state["first"] = failure.kind, failure
            if log is not None:
                print(f"rlxc fuzz: graph #{state['drawn']} fails ({failure.message.splitlines()[0]}); shrinking",
                      file=log)  # fmt: skip
            return True
        return failure.kind == state["kind"]

    fuzz_settings = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        verbosity=hypothesis.Verbosity.quiet,
        report_multiple_bugs=False,
    )
    try:
        case = hypothesis.find(strategy, fails, settings=fuzz_settings, random=random.Random(seed))
    except (hypothesis.errors.NoSuchExample, hypothesis.errors.Unsatisfiable):
        return FuzzResult(pipeline, state["drawn"], seconds=time.perf_counter() - start)

    module, failure = _case_module(case, onnx)
    if failure is None:
        assert module is not None
        failure = check(module, pipeline, tolerance)
    if failure is None:  # flaky: the shrunk case passes on a rerun
        failure = state["first"]
    elif module is not None:
        module, failure = drop_outputs(module, failure, lambda m: check(m, pipeline, tolerance))
    assert failure is not None
    result = FuzzResult(pipeline, state["drawn"] - 1, failure, _op_names(module) if module is not None else list(case.ops))
    result.reproducer = write_reproducer(Path(out), pipeline, failure, module, case if onnx else None, seed,
                                         tolerance if tolerance is not None else (tolerance_for(module) if module else None))  # fmt: skip
    if module is not None:
        result.reproduces = _reproduces(result.reproducer, pipeline, tolerance, check)
    result.seconds = time.perf_counter() - start
    return result


def drop_outputs(module: ModuleOp, failure: Failure, check: Callable[[ModuleOp], Failure | None]):
    """The IR-level step after hypothesis's shrinking: drops @main's outputs
    one at a time (and the ops only they needed) while the same kind of
    failure remains. Returns the smaller module and its failure."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType

    from rlxc.passes.pipelines import run_pipeline

    while True:
        f = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"), None)
        ret = f.body.block.last_op if f is not None and f.body.blocks else None
        if not isinstance(ret, func.ReturnOp) or len(ret.operands) <= 1:
            return module, failure
        for k in range(len(ret.operands)):
            candidate = module.clone()
            g = next(op for op in candidate.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
            old = g.body.block.last_op
            assert isinstance(old, func.ReturnOp)
            kept = [v for i, v in enumerate(old.operands) if i != k]
            g.body.block.insert_op_before(func.ReturnOp(*kept), old)
            g.body.block.erase_op(old)
            g.function_type = FunctionType.from_lists(g.function_type.inputs.data, [v.type for v in kept])
            try:
                candidate = run_pipeline(candidate, "dce")
            except Exception:
                continue
            found = check(candidate)
            if found is not None and found.kind == failure.kind:
                module, failure = candidate, found
                break
        else:
            return module, failure


def _run_line(pipeline: str, tolerance: float | None) -> str:
    line = f"// RUN: rlxc-opt %s -p '{pipeline}' --check-semantics"
    if tolerance is not None and tolerance != DEFAULT_TOLERANCE:
        line += f" --semantics-tolerance {tolerance:g}"
    return line


def write_reproducer(out: Path, pipeline: str, failure: Failure, module: ModuleOp | None, onnx_case: Any,
                     seed: int, tolerance: float | None) -> Path:  # fmt: skip
    """DIR/fuzz-repro.mlir (the module under its RUN line); with an ONNX case
    also DIR/fuzz-repro.onnx. Only the .onnx when the import itself failed."""
    out.mkdir(parents=True, exist_ok=True)
    if onnx_case is not None:
        onnx_path = out / f"{REPRO_NAME}.onnx"
        onnx_path.write_bytes(onnx_case.model.SerializeToString())
        if module is None:
            return onnx_path
    assert module is not None
    path = out / f"{REPRO_NAME}.mlir"
    note = "\n".join(f"// {line}" for line in failure.message.splitlines()[:6])
    path.write_text(
        f"{_run_line(pipeline, tolerance)}\n"
        f"// Found by: rlxc fuzz '{pipeline}' --seed {seed}{' --onnx' if onnx_case is not None else ''}\n"
        f"{note}\n{module!s}\n"
    )
    return path


def _reproduces(path: Path, pipeline: str, tolerance: float | None, check) -> bool:
    """Whether the reproducer, parsed back from its text, fails too."""
    from rlxc.context import parse_module

    try:
        module = parse_module(path.read_text(), str(path))
    except Exception:
        return False
    return check(module, pipeline, tolerance) is not None


def report(result: FuzzResult, out: IO[str], seed: int) -> int:
    """Prints the outcome; returns the exit status."""
    if result.ok:
        print(f"rlxc fuzz: {result.passed} graphs passed '{result.pipeline}' "
              f"(seed {seed}, {result.seconds:.1f} s)", file=out)  # fmt: skip
        return 0
    assert result.failure is not None and result.reproducer is not None
    print(f"rlxc fuzz: '{result.pipeline}' failed on a random graph (seed {seed}, "
          f"after {result.passed} passed)", file=out)  # fmt: skip
    print(result.failure.message, file=out)
    if result.ops:
        print(f"shrunk to {len(result.ops)} op(s): {', '.join(result.ops)}", file=out)
    print(f"reproducer: {result.reproducer}", file=out)
    if result.reproducer.suffix == ".mlir":
        tol = ""
        first = result.reproducer.read_text().splitlines()[0]
        if "--semantics-tolerance" in first:
            tol = " --semantics-tolerance " + first.split("--semantics-tolerance ")[1]
        print(f"rerun with: rlxc-opt {result.reproducer} -p '{result.pipeline}' --check-semantics{tol}", file=out)
        if result.reproduces is False:
            print("note: the reproducer, parsed back from its text, does not fail (a printer/parser "
                  "round-trip difference?)", file=out)  # fmt: skip
    return 1


def main_args(args) -> int:
    """`rlxc fuzz`'s body, from the parsed command line."""
    dtypes = tuple(d.strip() for d in args.dtypes.split(",") if d.strip())
    bad = [d for d in dtypes if d not in TOLERANCE]
    if bad:
        raise FuzzError(f"--dtypes: {', '.join(bad)} not among {', '.join(TOLERANCE)}")
    if not dtypes:
        raise FuzzError(f"--dtypes {args.dtypes!r}: give some of {', '.join(TOLERANCE)}")
    if args.tolerance is not None:
        from rlxc.tools.pass_runner import check_tolerance

        check_tolerance("--tolerance", args.tolerance)
    # --out checked before the fuzzing, not when a failure is to be written there
    out = Path(args.out).absolute()
    ancestor = next(p for p in (out, *out.parents) if p.exists())
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise FuzzError(f"--out {args.out}: {ancestor} is not a directory this user can write in")
    result = fuzz(
        args.pipeline, examples=args.examples, seed=args.seed, out=args.out, onnx=args.onnx,
        max_ops=args.max_ops, dtypes=dtypes, tolerance=args.tolerance, log=sys.stdout,
    )  # fmt: skip
    return report(result, sys.stdout, args.seed)

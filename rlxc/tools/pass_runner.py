"""Runs a pass list the way a pass writer wants to watch it.

* **IR printing** (`Printing`): the module before/after every pass or named
  passes only, after the passes that changed it, after a failing pass;
  to stderr with MLIR's banners, or as numbered files in a dump directory.
* **Reproducers**: when a pass raises, breaks the IR or changes the
  module's meaning, its input is saved with a RUN line.
* **Semantic bisect** (`SemanticsCheck`): @main is interpreted on seeded
  random inputs between passes; the first pass that changes a result is
  named. It also reports the error each pass adds against the exact
  (float64) meaning of the input, which f16/bf16 rewrites need.
* **Statistics** (`--pass-statistics`): per pass, ops in and out by name,
  the rewrite patterns attempted and applied (counted inside xDSL's pattern
  rewriter), and at the planned and launch levels the arena, kernels and
  launches.
* **Timing** (`--time-passes`): a tree that follows named pipelines into
  their passes, as mlir-opt's `--mlir-timing` does.
* **Round-trip** (`--verify-roundtrip`): after each pass, the generic and
  the custom form are printed, parsed back and compared.
* **Debug counter** (`RewriteCounter`, `--rewrite-counter=PATTERN:skip:count`):
  the first `skip` attempts of a pattern are refused, the next `count`
  allowed, the rest refused, as LLVM's debug counters, to bisect which single
  rewrite breaks a model.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import IO, Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, PassFailedException


def _children(p: ModulePass) -> tuple[ModulePass, ...] | None:
    inner = getattr(p, "passes", None)
    return inner() if callable(inner) else None


def flatten_passes(passes: tuple[ModulePass, ...]) -> list[ModulePass]:
    """Named pipelines (`rlx-optimize`, `rlx-plan`) expanded into their passes."""
    out: list[ModulePass] = []
    for p in passes:
        inner = _children(p)
        out.extend(flatten_passes(inner) if inner is not None else [p])
    return out


@dataclass
class PassNode:
    """A pass in the pipeline as written: a named pipeline has children."""

    name: str
    children: list[PassNode] = field(default_factory=list)
    seconds: float = 0.0


def pass_tree(passes: tuple[ModulePass, ...]) -> tuple[list[PassNode], list[list[PassNode]]]:
    """(the tree of `passes`, and for each flattened pass its path of nodes
    from the root), so that a leaf's time adds to every pipeline above it."""
    paths: list[list[PassNode]] = []

    def build(ps: tuple[ModulePass, ...], above: list[PassNode]) -> list[PassNode]:
        nodes = []
        for p in ps:
            node = PassNode(p.name)
            inner = _children(p)
            if inner is None:
                paths.append([*above, node])
            else:
                node.children = build(inner, [*above, node])
            nodes.append(node)
        return nodes

    return build(passes, []), paths


def spec_of(p: ModulePass) -> str:
    return str(p.pipeline_pass_spec())


class PassFailure(DiagnosticException):
    """A pass raised, broke the IR, or changed the module's meaning."""


# --------------------------------------------------------------------------- semantics


def _relative_error(want: np.ndarray, have: np.ndarray) -> float:
    w, h = want.astype(np.float64), have.astype(np.float64)
    ok = ~np.isnan(w)
    return float(np.linalg.norm((w - h)[ok])) / max(float(np.linalg.norm(w[ok])), 1e-30)


def check_tolerance(flag: str, t: float) -> float:
    """A relative-error tolerance given as `flag`, refused below 0 or NaN
    (every pass would look like a miscompile, or none): ValueError."""
    if not t >= 0:
        raise ValueError(f"{flag} {t}: give a relative error of 0 or more")
    return t


@dataclass
class SemanticsCheck:
    """Interprets @main on seeded random inputs and compares with the first
    run; also measures each float output's error against the exact (float64)
    interpretation of the input module, before and after every pass."""

    seed: int
    tolerance: float
    inputs: dict | None = None
    params: dict | None = None
    reference: list[np.ndarray] | None = None
    exact: list[np.ndarray] | None = None
    errors: list[tuple[str, list[float]]] = field(default_factory=list)

    def start(self, module: ModuleOp) -> None:
        from rlxc.interp import interpret
        from rlxc.tools.cli import fill_missing

        self.inputs, self.params = {}, {}
        fill_missing(module, self.inputs, self.params, self.seed)
        self.reference = interpret(module, self.inputs, self.params)
        self.exact = interpret(module, self.inputs, self.params, float64=True)
        self.errors = [("input", self._errors(self.reference))]

    def _errors(self, got: list[np.ndarray]) -> list[float]:
        assert self.exact is not None
        return [_relative_error(e, g) if e.dtype.kind == "f" else 0.0 for e, g in zip(self.exact, got)]

    def compare(self, module: ModuleOp, name: str = "") -> str | None:
        """None if every output matches the reference, else what differs."""
        from rlxc.interp import interpret

        assert self.reference is not None
        try:
            got = interpret(module, self.inputs or {}, self.params)
        except Exception as e:  # the rewritten module no longer runs
            return f"the module no longer interprets: {type(e).__name__}: {e}"
        if len(got) != len(self.reference):
            return f"{len(got)} outputs instead of {len(self.reference)}"
        for i, (want, have) in enumerate(zip(self.reference, got)):
            if want.shape != have.shape or want.dtype != have.dtype:
                return (
                    f"output #{i} is {have.dtype}{list(have.shape)}, was "
                    f"{want.dtype}{list(want.shape)}"
                )
            if want.dtype.kind in "biu":
                bad = int(np.sum(want != have))
                if bad:
                    return f"output #{i}: {bad} of {want.size} elements differ"
                continue
            w, h = want.astype(np.float64), have.astype(np.float64)
            if not np.array_equal(np.isnan(w), np.isnan(h)):
                return f"output #{i}: NaNs appear or disappear"
            err = _relative_error(want, have)
            if err > self.tolerance:
                return f"output #{i}: relative error {err:.3e} > tolerance {self.tolerance:g}"
        self.errors.append((name, self._errors(got)))
        return None

    def report(self, out: IO[str]) -> None:
        """The error of each float output against the exact interpretation,
        after each pass, and what that pass added."""
        print("// -----// Numerical error against the float64 interpretation //----- //", file=out)
        print("//  (relative L2 error of each float output; the change is what the pass added)", file=out)
        prev = None
        for name, errs in self.errors:
            cells = []
            for i, e in enumerate(errs):
                delta = "" if prev is None else f" ({e - prev[i]:+.2e})"
                cells.append(f"#{i} {e:.3e}{delta}")
            print(f"//  {name:<28} " + "  ".join(cells), file=out)
            prev = errs


# --------------------------------------------------------------------------- patterns


def pattern_name(p: RewritePattern) -> str:
    return type(p).__name__


def _root_type(p: RewritePattern) -> type | None:
    """The op type an `@op_type_rewrite_pattern` matches on, if it is one."""
    fn = getattr(type(p).match_and_rewrite, "__code__", None)
    closure = getattr(type(p).match_and_rewrite, "__closure__", None)
    if fn is None or closure is None or "expected_type" not in fn.co_freevars:
        return None
    t = closure[fn.co_freevars.index("expected_type")].cell_contents
    return t if isinstance(t, type) else None


@dataclass
class RewriteCounter:
    """`PATTERN:skip:count`: of the attempts of pattern PATTERN (its class
    name) on ops it matches by type, the first `skip` are refused, the next
    `count` allowed (-1: all), the rest refused."""

    pattern: str
    skip: int
    count: int
    seen: int = 0

    @staticmethod
    def parse(spec: str) -> RewriteCounter:
        parts = spec.split(":")
        try:
            if len(parts) != 3 or not parts[0]:
                raise ValueError
            return RewriteCounter(parts[0], int(parts[1]), int(parts[2]))
        except ValueError:
            raise ValueError(
                f"--rewrite-counter={spec}: expected PATTERN:skip:count (e.g. FoldAddZero:0:3)"
            ) from None

    def allow(self) -> bool:
        n = self.seen
        self.seen += 1
        return n >= self.skip and (self.count < 0 or n < self.skip + self.count)


@dataclass
class PatternStats:
    """Attempts and applications per pattern, counted inside the rewriter."""

    attempted: Counter = field(default_factory=Counter)
    applied: Counter = field(default_factory=Counter)
    refused: Counter = field(default_factory=Counter)


class _Counted(RewritePattern):
    """A pattern seen through the statistics and the debug counters."""

    def __init__(self, inner: RewritePattern, stats: PatternStats, counters: dict[str, RewriteCounter]):
        self.inner, self.stats, self.counters = inner, stats, counters
        self.name = pattern_name(inner)
        self.root = _root_type(inner)

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if self.root is not None and not isinstance(op, self.root):
            return
        counter = self.counters.get(self.name)
        if counter is not None and not counter.allow():
            self.stats.refused[self.name] += 1
            return
        self.stats.attempted[self.name] += 1
        before = rewriter.has_done_action
        self.inner.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action and not before:
            self.stats.applied[self.name] += 1


class _CountedCanonicalization(RewritePattern):
    """xDSL's canonicalize applies each op's own patterns through one generic
    pattern; this applies them one by one, each seen through `_Counted`."""

    def __init__(self, stats: PatternStats, counters: dict[str, RewriteCounter]):
        self.stats, self.counters = stats, counters
        self.cache: dict[type, list[RewritePattern]] = {}

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        from xdsl.traits import HasCanonicalizationPatternsTrait

        patterns = self.cache.get(type(op))
        if patterns is None:
            traits = op.get_traits_of_type(HasCanonicalizationPatternsTrait)
            patterns = [_Counted(q, self.stats, self.counters) for t in traits for q in t.get_patterns(type(op))]
            self.cache[type(op)] = patterns
        for q in patterns:
            q.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def _wrap(p: RewritePattern, stats: PatternStats, counters: dict[str, RewriteCounter]) -> RewritePattern:
    from xdsl.transforms.canonicalize import CanonicalizationRewritePattern

    if isinstance(p, CanonicalizationRewritePattern):
        return _CountedCanonicalization(stats, counters)
    if isinstance(p, GreedyRewritePatternApplier):
        return GreedyRewritePatternApplier(
            [_wrap(q, stats, counters) for q in p.rewrite_patterns], p.ctx,
            folding_enabled=p.folding_enabled, dce_enabled=p.dce_enabled,
        )  # fmt: skip
    return p if isinstance(p, _Counted) else _Counted(p, stats, counters)


@contextlib.contextmanager
def instrument_patterns(stats: PatternStats, counters: dict[str, RewriteCounter]) -> Iterator[None]:
    """Every `PatternRewriteWalker` run inside sees its patterns through
    `_Counted` (xDSL's canonicalize and every rlx pass built on the walker)."""
    original = PatternRewriteWalker._process_worklist

    def process(self: PatternRewriteWalker, listener: Any) -> bool:
        pattern = self.pattern
        self.pattern = _wrap(pattern, stats, counters)
        try:
            return original(self, listener)
        finally:
            self.pattern = pattern

    PatternRewriteWalker._process_worklist = process  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        PatternRewriteWalker._process_worklist = original  # pyright: ignore[reportAttributeAccessIssue]


# --------------------------------------------------------------------------- printing


@dataclass
class Printing:
    """Which IR to print: before/after the passes named (or all), after the
    ones that changed the module, after a failing one. Printed to `out`
    with MLIR's banners, or, with `dump_dir`, written as numbered files."""

    before: set[str] | None = None  # None: none; {"*"}: all
    after: set[str] | None = None
    after_change: bool = False
    after_failure: bool = False
    out: IO[str] | None = None

    @staticmethod
    def _wants(names: set[str] | None, p: ModulePass) -> bool:
        return names is not None and ("*" in names or p.name in names or spec_of(p) in names)

    def wants_before(self, p: ModulePass) -> bool:
        return self._wants(self.before, p)

    def wants_after(self, p: ModulePass, changed: bool) -> bool:
        return self._wants(self.after, p) or (self.after_change and changed)

    @property
    def any(self) -> bool:
        return bool(self.before or self.after or self.after_change or self.after_failure)


# --------------------------------------------------------------------------- the runner


def _op_counts(module: ModuleOp) -> Counter:
    return Counter(op.name for op in module.walk() if op is not module)


def _plan_figures(module: ModuleOp) -> list[str]:
    """Arena, kernels and launches of a planned or launch-level module."""
    from xdsl.dialects import func

    from rlxc.dialects import plan as P
    from rlxc.dialects import rlx_cuda

    out = []
    for f in module.ops:
        if isinstance(f, func.FuncOp) and (fp := P.function_plan(f)) is not None:
            out.append(f"@{f.sym_name.data}: arena {fp.arena_bytes} B, peak live {fp.peak_live_bytes} B")
    kernels = [k for k in module.ops if isinstance(k, rlx_cuda.KernelOp)]
    launches = [op for op in module.walk() if isinstance(op, rlx_cuda.LaunchOp | rlx_cuda.GemmOp)]
    if kernels or launches:
        out.append(f"{len(kernels)} kernels, {len(launches)} launches (kernels and gemms)")
    return out


@dataclass
class PassRunner:
    """Applies `passes` in order with the inspection features switched on."""

    passes: list[ModulePass]
    ctx: Context
    verify: bool = True
    dump_dir: str | None = None
    reproducer_dir: str | None = None
    print_between: bool = False
    time_passes: bool = False
    semantics: SemanticsCheck | None = None
    printing: Printing = field(default_factory=Printing)
    statistics: bool = False
    verify_roundtrip: bool = False
    counters: dict[str, RewriteCounter] = field(default_factory=dict)
    pipeline: tuple[ModulePass, ...] | None = None  # as written, for the timing tree
    report: IO[str] | None = None  # where statistics, timing and errors go (stderr)

    def _out(self) -> IO[str]:
        return self.report or sys.stderr

    def _dump(self, index: int, name: str, module: ModuleOp) -> None:
        if self.dump_dir is None:
            return
        d = Path(self.dump_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{index:02d}-{name}.mlir").write_text(str(module) + "\n")

    def _print(self, when: str, index: int, p: ModulePass, module: ModuleOp) -> None:
        """One selected IR print: a file in the dump dir, else the banner and module."""
        if self.dump_dir is not None:
            self._dump(index, f"{when}-{p.name}", module)
            return
        out = self.printing.out or self._out()
        title = f"After {p.name} Failed" if when == "after-failure" else f"{when.capitalize()} {p.name}"
        print(f"// -----// IR Dump {title} ({spec_of(p)}) //----- //", file=out)
        print(str(module), file=out)
        print(file=out)

    def _counter_flags(self) -> str:
        """The --rewrite-counter flags of this run, to repeat in a rerun command."""
        return "".join(f" --rewrite-counter={c.pattern}:{c.skip}:{c.count}" for c in self.counters.values())

    def _reproducer(self, before: ModuleOp, failing: ModulePass) -> Path:
        d = Path(self.reproducer_dir or self.dump_dir or tempfile.mkdtemp(prefix="rlxc-repro-"))
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"reproducer-{failing.name}.mlir"
        spec = spec_of(failing)
        path.write_text(
            f"// Reproducer: the input to the failing pass '{spec}'.\n"
            f"// RUN: rlxc-opt %s -p '{spec}'{self._counter_flags()}\n{str(before)}\n"
        )
        return path

    def _roundtrip(self, p: ModulePass, module: ModuleOp) -> None:
        """Prints the module in generic and custom form, parses both back and
        compares them with the module (structurally; the generic form shows
        where they differ)."""
        from rlxc.context import parse_module

        def generic(m: ModuleOp) -> str:
            s = StringIO()
            Printer(stream=s, print_generic_format=True).print_op(m)
            return s.getvalue()

        want = generic(module)
        for form, text in (("generic", want), ("custom", str(module))):
            try:
                back = parse_module(text, f"<{form} form after {p.name}>")
            except Exception as e:
                raise PassFailure(
                    f"--verify-roundtrip: the {form} form after pass '{spec_of(p)}' does not parse back: {e}"
                ) from None
            got = generic(back)
            # structurally (properties and attributes as dicts: their printed order may differ)
            if got != want and not back.is_structurally_equivalent(module):
                diff = next(
                    (f"line {i + 1}:\n  printed: {a}\n  parsed:  {b}"
                     for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())) if a != b),
                    "the texts differ in length",
                )  # fmt: skip
                raise PassFailure(
                    f"--verify-roundtrip: the {form} form after pass '{spec_of(p)}' parses back "
                    f"to a different module, first at {diff}"
                )

    def run(self, module: ModuleOp) -> None:
        stats, per_pass = PatternStats(), []
        tree, paths = pass_tree(self.pipeline) if self.pipeline is not None else ([], [])
        if len(paths) != len(self.passes):  # the pipeline was not given: a flat tree
            tree = [PassNode(p.name) for p in self.passes]
            paths = [[n] for n in tree]
        if self.semantics is not None:
            self.semantics.start(module)
        if not self.printing.any:
            self._dump(0, "input", module)
        total_start = time.perf_counter()
        # patterns are counted only where something reads the counts (they
        # add a call per pattern attempt)
        counting = self.statistics or bool(self.counters) or self.semantics is not None
        with instrument_patterns(stats, self.counters) if counting else contextlib.nullcontext():
            for i, p in enumerate(self.passes, start=1):
                before = module.clone()
                before_text = str(module) if (self.printing.after_change or self.statistics) else None
                if self.printing.wants_before(p):
                    self._print("before", i, p, module)
                before_counts = _op_counts(module) if self.statistics else None
                snapshot = (Counter(stats.attempted), Counter(stats.applied))
                start = time.perf_counter()
                try:
                    p.apply(self.ctx, module)
                    if self.verify:
                        module.verify()
                except Exception as e:
                    if self.printing.after_failure:
                        self._print("after-failure", i, p, module)
                    path = self._reproducer(before, p)
                    kind = (
                        "rejected its input" if isinstance(e, PassFailedException)
                        else "produced invalid IR" if isinstance(e, DiagnosticException)
                        else f"crashed ({type(e).__name__})"
                    )  # fmt: skip
                    raise PassFailure(
                        f"pass '{spec_of(p)}' {kind}: {e}\n"
                        f"reproducer (the input to that pass): {path}\n"
                        f"rerun with: rlxc-opt {path} -p '{spec_of(p)}'"
                    ) from e
                elapsed = time.perf_counter() - start
                for node in paths[i - 1]:
                    node.seconds += elapsed
                changed = before_text is not None and str(module) != before_text
                if self.printing.any:
                    if self.printing.wants_after(p, changed):
                        self._print("after", i, p, module)
                else:
                    self._dump(i, p.name, module)
                if self.print_between and i < len(self.passes):
                    print(f"IR after {p.name}:")
                    Printer(stream=sys.stdout).print_op(module)
                    print("\n\n\n")
                if self.verify_roundtrip:
                    self._roundtrip(p, module)
                if self.statistics:
                    after = (Counter(stats.attempted), Counter(stats.applied))
                    per_pass.append((p, before_counts, _op_counts(module), snapshot, after, changed, _plan_figures(module)))
                if self.semantics is not None:
                    problem = self.semantics.compare(module, p.name)
                    if problem is not None:
                        path = self._reproducer(before, p)
                        if self.printing.after_failure:
                            self._print("after-failure", i, p, module)
                        applied = {n: stats.applied[n] - snapshot[1][n] for n in stats.applied}
                        attempted = {n: stats.attempted[n] - snapshot[0][n] for n in stats.attempted}
                        hint = ""
                        if any(applied.values()):
                            hint = "\nrewrites by that pass: " + ", ".join(
                                f"{n} applied {k} of {attempted[n]} attempts" for n, k in sorted(applied.items()) if k
                            ) + "\nbisect one with --rewrite-counter=PATTERN:0:N (allow its first N attempts)"
                        raise PassFailure(
                            f"pass '{spec_of(p)}' changed the module's meaning: {problem}\n"
                            f"(seeded random inputs, seed {self.semantics.seed})\n"
                            f"reproducer (the input to that pass): {path}\n"
                            f"rerun with: rlxc-opt {path} -p '{spec_of(p)}' --check-semantics"
                            + self._counter_flags()
                            + hint
                        )
        wall = time.perf_counter() - total_start
        if self.statistics:
            self._print_statistics(per_pass, stats)
        if self.semantics is not None:
            self.semantics.report(self._out())
        if self.time_passes:
            self._print_timing(tree, wall)

    def _print_statistics(self, per_pass, stats: PatternStats) -> None:
        out = self._out()
        print("// -----// Pass statistics //----- //", file=out)
        for p, before, after, (att0, app0), (att1, app1), changed, figures in per_pass:
            print(f"{p.name} ({spec_of(p)}){'' if changed else ' (no change)'}", file=out)
            names = sorted(set(before) | set(after))
            diffs = [(n, before[n], after[n]) for n in names if before[n] != after[n]]
            total_b, total_a = sum(before.values()), sum(after.values())
            print(f"  ops: {total_b} -> {total_a}", file=out)
            for n, b, a in diffs:
                print(f"    {n:<32} {b:>6} -> {a:<6} ({a - b:+d})", file=out)
            for name in sorted(set(att1) | set(app1)):  # this pass's rewrites only
                attempted = att1[name] - att0[name]
                applied = app1[name] - app0[name]
                if applied:
                    print(f"  pattern {name}: applied {applied} of {attempted} attempts", file=out)
            for line in figures:
                print(f"  {line}", file=out)
        if any(stats.refused.values()):
            for name, n in sorted(stats.refused.items()):
                print(f"rewrite counter: {name} refused {n} attempts", file=out)

    def _print_timing(self, tree: list[PassNode], total: float) -> None:
        """The tree of pass times; what the runner's own checks took (the
        interpretations of --check-semantics, statistics, round-trips) is
        its own line."""
        out = self._out()
        passes = sum(n.seconds for n in tree)
        rule = "===" + "-" * 73 + "==="
        print(rule, file=out)
        print("... Execution time report ...".center(79), file=out)
        print(rule, file=out)
        print(f"  Total Execution Time: {total:.4f} seconds\n", file=out)
        print("  ----Wall Time----  ----Name----", file=out)

        def show(nodes: list[PassNode], depth: int) -> None:
            for n in nodes:
                pct = 100.0 * n.seconds / total if total > 0 else 0.0
                print(f"  {n.seconds:8.4f} ({pct:5.1f}%)  {'  ' * depth}{n.name}", file=out)
                show(n.children, depth + 1)

        show(tree, 0)
        checks = max(total - passes, 0.0)
        if checks > 0.0005:
            print(f"  {checks:8.4f} ({100.0 * checks / total:5.1f}%)  (rlxc-opt's checks: semantics, statistics, round-trip, printing)", file=out)
        print(f"  {total:8.4f} (100.0%)  Total", file=out)

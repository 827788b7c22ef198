"""Runs a pass list the way a pass writer wants to watch it: numbered IR dumps
after every pass, a reproducer when a pass fails, and a semantic bisect that
interprets the module between passes and names the first pass that changes a
result."""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, PassFailedException


def flatten_passes(passes: tuple[ModulePass, ...]) -> list[ModulePass]:
    """Named pipelines (`rlx-optimize`, `rlx-plan`) expanded into their passes."""
    out: list[ModulePass] = []
    for p in passes:
        inner = getattr(p, "passes", None)
        out.extend(flatten_passes(inner()) if callable(inner) else [p])
    return out


def spec_of(p: ModulePass) -> str:
    return str(p.pipeline_pass_spec())


class PassFailure(DiagnosticException):
    """A pass raised, broke the IR, or changed the module's meaning."""


@dataclass
class SemanticsCheck:
    """Interprets @main on seeded random inputs and compares with the first run."""

    seed: int
    tolerance: float
    inputs: dict | None = None
    params: dict | None = None
    reference: list[np.ndarray] | None = None

    def start(self, module: ModuleOp) -> None:
        from rlxc.interp import interpret
        from rlxc.tools.cli import fill_missing

        self.inputs, self.params = {}, {}
        fill_missing(module, self.inputs, self.params, self.seed)
        self.reference = interpret(module, self.inputs, self.params)

    def compare(self, module: ModuleOp) -> str | None:
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
            ok = ~np.isnan(w)
            err = float(np.linalg.norm((w - h)[ok])) / max(float(np.linalg.norm(w[ok])), 1e-30)
            if err > self.tolerance:
                return f"output #{i}: relative error {err:.3e} > tolerance {self.tolerance:g}"
        return None


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

    def _dump(self, index: int, name: str, module: ModuleOp) -> None:
        if self.dump_dir is None:
            return
        d = Path(self.dump_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{index:02d}-{name}.mlir").write_text(str(module) + "\n")

    def _reproducer(self, before: ModuleOp, failing: ModulePass) -> Path:
        d = Path(self.reproducer_dir or self.dump_dir or tempfile.mkdtemp(prefix="rlxc-repro-"))
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"reproducer-{failing.name}.mlir"
        spec = spec_of(failing)
        path.write_text(
            f"// Reproducer: the input to the failing pass '{spec}'.\n"
            f"// RUN: rlxc-opt %s -p '{spec}'\n{str(before)}\n"
        )
        return path

    def run(self, module: ModuleOp) -> None:
        if self.semantics is not None:
            self.semantics.start(module)
        self._dump(0, "input", module)
        for i, p in enumerate(self.passes, start=1):
            before = module.clone()
            start = time.perf_counter()
            try:
                p.apply(self.ctx, module)
                if self.verify:
                    module.verify()
            except Exception as e:
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
            if self.time_passes:
                print(f"Pass {p.name} took {time.perf_counter() - start} seconds")
            self._dump(i, p.name, module)
            if self.print_between and i < len(self.passes):
                print(f"IR after {p.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            if self.semantics is not None:
                problem = self.semantics.compare(module)
                if problem is not None:
                    path = self._reproducer(before, p)
                    raise PassFailure(
                        f"pass '{spec_of(p)}' changed the module's meaning: {problem}\n"
                        f"(seeded random inputs, seed {self.semantics.seed})\n"
                        f"reproducer (the input to that pass): {path}\n"
                        f"rerun with: rlxc-opt {path} -p '{spec_of(p)}' --check-semantics"
                    )

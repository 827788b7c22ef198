"""`rlxc-opt`: xdsl-opt with rlxc's dialects and passes, and clean diagnostics.

Every xdsl-opt flag works (`-p`, `--print-between-passes`,
`--split-input-file`, `--print-op-generic`, ...), and some work as mlir-opt's
do: `--verify-diagnostics` matches MLIR's `expected-error` annotations and
fails on a mismatch (`rlxc.tools.diagnostics`), and `--time-passes` prints a
tree. What rlxc adds: a failure (a syntax error, a verifier error, an unknown
pass or option, a pass that rejects its input) is printed as a diagnostic
with its location on stderr and the tool exits with status 1, never with a
Python traceback, and never after printing a partial module; mlir-opt's IR
printing, statistics, round-trip and debug-counter flags; `--check-semantics`
(see `rlxc.tools.pass_runner`); and `.onnx` input.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.lexer import Span

from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    InterpretationError,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from rlxc.dialects.rlx import Rlx
from rlxc.dialects.rlx_cuda import RlxCuda
from rlxc.dialects.scalar import ErfcOp, RemFOp
from rlxc.passes import get_all_passes
from rlxc.runtime.nvrtc import NvrtcError
from rlxc.tools.pass_runner import (
    PassFailure,
    PassRunner,
    Printing,
    RewriteCounter,
    SemanticsCheck,
    check_tolerance,
    flatten_passes,
)

#: Errors that are the user's input at fault, reported without a traceback.
USER_ERRORS = (
    ParseError,
    DiagnosticException,
    VerifyException,
    PassFailedException,
    InterpretationError,
    ValueError,
    TypeError,
    KeyError,
    ArgSpecParseError,
    OSError,
    NvrtcError,  # a kernel's source (given, or generated: then also a bug) did not compile; its log and path say why
)


class TargetError(ValueError):
    """An output target (-t) that cannot print the module it was given."""


class RlxcOptMain(xDSLOptMain):
    """xDSLOptMain with rlxc's dialects and passes registered explicitly (so the
    tool works even where the `xdsl.universe` entry point was not installed)."""

    version_format = "rlxc-opt (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self._output = _HeldOutput()  # what `run` writes out (prepare_output)
        super().__init__(description="rlxc modular optimizer driver", args=args)
        if self.args.input_file == "-":  # mlir-opt's name for stdin, as no file is
            self.args.input_file = None

    def register_all_dialects(self):
        super().register_all_dialects()
        if "rlx" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("rlx", lambda: Rlx)
        if "rlx_cuda" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("rlx_cuda", lambda: RlxCuda)
        if self.ctx.get_optional_op("math.erfc") is None:  # upstream MLIR's, not in xDSL's math
            self.ctx.load_op(ErfcOp)
        if self.ctx.get_optional_op("arith.remf") is None:  # upstream MLIR's, not in xDSL's arith
            self.ctx.load_op(RemFOp)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets["cuda-source"] = print_cuda_sources
        self.available_targets["cuda-resources"] = print_cuda_resources

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """xDSL's other targets (llvm, x86-asm, wgsl, ...) print IR of their
        own dialects and fail on anything else with whatever they raise; that,
        or a Python package the target needs and lacks (llvm: llvmlite), is the
        input's or the environment's fault, said as such, not an internal
        error."""
        from xdsl.utils.arg_spec import parse_spec

        name = parse_spec(self.args.target).name
        if name in ("mlir", "cuda-source", "cuda-resources") or name not in self.available_targets:
            return super().output_resulting_program(prog)
        try:
            return super().output_resulting_program(prog)
        except ModuleNotFoundError as exc:
            package = (exc.name or "?").split(".")[0]
            raise TargetError(f"-t {name} needs the Python package '{package}', which is not installed "
                              f"(pip install {package})") from None
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            raise TargetError(f"-t {name} (an xDSL target for its own dialects' IR) cannot print this module: "
                              f"{type(exc).__name__}: {first}\n(rlx and rlx_cuda IR print with -t mlir; "
                              "lowered modules' kernels with -t cuda-source or -t cuda-resources)") from None

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            module = parser.parse_module(not self.args.no_implicit_module)
            self._locations = parser.locations
            return module

        self.available_frontends["mlir"] = parse_mlir

        def parse_onnx(io: IO[bytes]) -> ModuleOp:
            """An ONNX model, imported (`--onnx-shape` binds its symbolic
            dimensions; `--onnx-params` saves its initializers)."""
            import onnx

            from rlxc.frontends.onnx import from_onnx
            from rlxc.runtime.nvrtc import write_atomic
            from rlxc.tools.cli import npz_bytes, parse_shapes

            path = self.args.input_file
            model = path if path else onnx.load_model_from_string(io.read())
            module, params = from_onnx(model, parse_shapes(self.args.onnx_shape))
            if self.args.onnx_params:
                write_atomic(Path(self.args.onnx_params), npz_bytes(params))
            self._locations = {}
            return module

        self.available_frontends["onnx"] = parse_onnx

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def prepare_output(self) -> IO[str]:
        """A buffer: `run` writes it out (stdout, or `-o` atomically) only once
        every chunk has gone through, so a failure leaves no partial module
        printed and no file created or emptied."""
        return self._output

    def run(self) -> int | None:
        if self.args.verify_diagnostics:  # mlir-opt's: check expected-* annotations
            from rlxc.tools.diagnostics import run_verify_diagnostics

            status = run_verify_diagnostics(self)
        else:
            status = super().run()
        text = self._output.getvalue()
        if self.args.output_file is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            from rlxc.runtime.nvrtc import write_atomic

            if Path(self.args.output_file).is_dir():
                raise ValueError(f"-o {self.args.output_file}: a directory, not a file")
            write_atomic(Path(self.args.output_file), text.encode())
        return status

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        from rlxc.tools.diagnostics import HELP

        for action in arg_parser._actions:  # xDSL's help says it exits 0
            if "--verify-diagnostics" in action.option_strings:
                action.help = HELP
        ir = arg_parser.add_argument_group("IR printing (mlir-opt's flags; with --dump-dir, files instead)")
        ir.add_argument("--print-ir-before", "--mlir-print-ir-before", action="append", metavar="PASS[,PASS]",
                        help="print the module before these passes (names or specs)")
        ir.add_argument("--print-ir-after", "--mlir-print-ir-after", action="append", metavar="PASS[,PASS]",
                        help="print the module after these passes")
        ir.add_argument("--print-ir-before-all", "--mlir-print-ir-before-all", action="store_true")
        ir.add_argument("--print-ir-after-all", "--mlir-print-ir-after-all", action="store_true")
        ir.add_argument("--print-ir-after-change", "--mlir-print-ir-after-change", action="store_true",
                        help="print the module after each pass that changed it")
        ir.add_argument("--print-ir-after-failure", "--mlir-print-ir-after-failure", action="store_true",
                        help="print the module as a failing pass left it")
        arg_parser.add_argument("--pass-statistics", "--mlir-pass-statistics", action="store_true",
                                help="per pass: ops in and out by name, rewrite patterns applied, "
                                "arena, kernels and launches (on stderr)")
        arg_parser.add_argument("--mlir-timing", action="store_true",
                                help="--time-passes: a timing tree following named pipelines (on stderr)")
        arg_parser.add_argument("--verify-roundtrip", action="store_true",
                                help="after each pass, print the generic and custom forms, parse "
                                "both back and compare")
        arg_parser.add_argument("--rewrite-counter", action="append", metavar="PATTERN:skip:count",
                                help="debug counter: refuse the first `skip` attempts of rewrite "
                                "pattern PATTERN (class name), allow `count` (-1: all), refuse the rest")
        arg_parser.add_argument(
            "--onnx-shape",
            action="append",
            metavar="NAME=D0,D1,...",
            help="for an .onnx input: bind an input's shape (repeatable)",
        )
        arg_parser.add_argument(
            "--onnx-params",
            metavar="NPZ",
            help="for an .onnx input: write its initializers (the module's params) here",
        )
        arg_parser.add_argument(
            "--dump-dir",
            help="write the IR before the first pass and after every pass as "
            "DIR/NN-<pass>.mlir (named pipelines are expanded into their passes)",
        )
        arg_parser.add_argument(
            "--check-semantics",
            action="store_true",
            help="interpret @main before and after every pass on seeded random "
            "inputs; stop at the first pass that changes a result beyond "
            "--semantics-tolerance, naming it, and write a reproducer",
        )
        arg_parser.add_argument("--semantics-seed", type=int, default=0)
        arg_parser.add_argument(
            "--semantics-tolerance",
            type=float,
            default=1e-4,
            help="relative L2 error allowed per float output (integers must match)",
        )
        arg_parser.add_argument(
            "--reproducer-dir",
            help="where a failing pass's reproducer goes (default: --dump-dir, "
            "else a new temporary directory)",
        )

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_with_location(
                prog, getattr(self, "_locations", {}), getattr(self, "_line_offset", 0)
            )
        a = self.args

        def names(values: list[str] | None, everything: bool) -> set[str] | None:
            if everything:
                return {"*"}
            return {n.strip() for v in values or [] for n in v.split(",") if n.strip()} or None

        counters = [RewriteCounter.parse(c) for c in a.rewrite_counter or []]
        runner = PassRunner(
            passes=flatten_passes(self.pipeline.passes),
            ctx=self.ctx,
            verify=not a.disable_verify,
            dump_dir=a.dump_dir,
            reproducer_dir=a.reproducer_dir,
            print_between=a.print_between_passes,
            time_passes=a.time_passes or a.mlir_timing,
            semantics=SemanticsCheck(a.semantics_seed,
                                     check_tolerance("--semantics-tolerance", a.semantics_tolerance))
            if a.check_semantics
            else None,
            printing=Printing(
                before=names(a.print_ir_before, a.print_ir_before_all),
                after=names(a.print_ir_after, a.print_ir_after_all),
                after_change=a.print_ir_after_change,
                after_failure=a.print_ir_after_failure,
            ),
            statistics=a.pass_statistics,
            verify_roundtrip=a.verify_roundtrip,
            counters={c.pattern: c for c in counters},
            pipeline=tuple(self.pipeline.passes),
        )
        runner.run(prog)


def _kernels(module: ModuleOp, out: IO[str]) -> list:
    """The module's `rlx_cuda.kernel`s; where it has none, says so on `out`."""
    from rlxc.dialects.rlx_cuda import KernelOp

    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    if not kernels:
        out.write("// no rlx_cuda.kernel in this module (lower it with -p rlx-cuda)\n")
    return kernels


def print_cuda_sources(module: ModuleOp, out: IO[str]) -> None:
    """The `cuda-source` target (`rlxc-opt -t cuda-source`): the header the
    kernels include, once, then every generated kernel's CUDA C++ source,
    one after another, each under a line naming its symbol, entry and
    architecture."""
    from rlxc.codegen import HEADERS

    kernels = _kernels(module, out)
    if not kernels:
        return
    for name, text in HEADERS.items():
        out.write(f"// ===== {name}\n{text}")
        if not text.endswith("\n"):
            out.write("\n")
    for k in kernels:
        out.write(f"// ===== @{k.sym_name.data}: entry {k.entry.data}, {k.arch.data}\n")
        out.write(k.source.data)
        if not k.source.data.endswith("\n"):
            out.write("\n")


def print_cuda_resources(module: ModuleOp, out: IO[str]) -> None:
    """The `cuda-resources` target (`rlxc-opt -t cuda-resources`): each
    generated kernel compiled by NVRTC for its architecture with ptxas'
    report, one line each: registers per thread, bytes spilled (stored /
    loaded), stack frame and static shared memory, then the form its source
    names (`// row form: ...` and the like). Registers decide how many blocks
    share a multiprocessor; spills go to local memory; both are what the
    row forms' thresholds (`rlxc/codegen/rows.py`) trade."""
    from rlxc.codegen import HEADERS
    from rlxc.runtime import nvrtc

    kernels = _kernels(module, out)
    if not kernels:
        return
    out.write("// kernel | entry | arch | registers | spill stores | spill loads | stack | smem | form\n")
    for k in kernels:
        r = nvrtc.resources(k.source.data, k.arch.data, f"{k.sym_name.data}.cu", HEADERS)
        header = []  # the comment lines opening the source (after its #includes)
        for line in k.source.data.splitlines():
            if line.startswith("#include"):
                continue
            if not line.startswith("// "):
                break
            header.append(line.removeprefix("// ").strip().rstrip(","))
        forms = [line for line in header if " form" in line]
        out.write(f"@{k.sym_name.data} | {k.entry.data} | {k.arch.data} | {r.registers} | {r.spill_stores} | "
                  f"{r.spill_loads} | {r.stack} | {r.smem} | {'; '.join(forms) or '-'}\n")


class LocatingParser(Parser):
    """A Parser that remembers where in the source each operation began."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.locations: dict[Operation, Span] = {}

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        op = super().parse_operation()
        self.locations[op] = span
        return op


class LocatedVerifyError(VerifyException):
    """A verifier failure reported at the failing op's source line, as mlir-opt does."""


def verify_with_location(
    module: ModuleOp, locations: dict[Operation, Span], line_offset: int = 0
) -> None:
    """Verifies `module`; on failure, raises LocatedVerifyError pointing at the
    innermost failing op's position in the source (`file:line:col: error: ...`)."""
    try:
        module.verify()
    except VerifyException as exc:
        for op in module.walk(reverse=False):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as inner:
                span = locations.get(op)
                msg = f"'{op.name}' op {inner}"
                if span is None:
                    raise LocatedVerifyError(msg) from exc
                span = dataclasses.replace(span, line_offset=line_offset)
                raise LocatedVerifyError(span.print_with_context(f"error: {msg}")) from exc
        raise


def _report(exc: BaseException, input_name: str) -> None:
    kind = {
        PassFailure: "pass failed",
        ParseError: "parse error",
        VerifyException: "verification failed",
        PassFailedException: "pass failed",
        NvrtcError: "NVRTC failed",
    }
    label = next((v for k, v in kind.items() if isinstance(exc, k)), "error")
    text = str(exc).rstrip()
    print(f"rlxc-opt: {label} in {input_name}:", file=sys.stderr)
    print(text, file=sys.stderr)
    for note in getattr(exc, "__notes__", []):
        print(note, file=sys.stderr)


class _HeldOutput(io.StringIO):
    """The tool's output held until the run succeeds (xDSL closes the stream
    it was given when it is not stdout; the text must outlive that)."""

    def close(self) -> None:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlxc-opt` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    # The input's name before the tool parses its arguments (a bad pipeline
    # fails in the constructor): the first argument that names a file.
    input_name = next((a for a in args if not a.startswith("-") and os.path.isfile(a)), "<stdin>")
    try:
        tool = RlxcOptMain(args=argv)
        input_name = tool.get_input_name()
        status = tool.run()
    except SystemExit:
        raise
    except USER_ERRORS as exc:  # the user's input is at fault: no traceback
        sys.stdout.flush()
        _report(exc, input_name)
        return 1
    except Exception as exc:  # a bug in rlxc: say so, briefly
        if os.environ.get("RLXC_TRACEBACK"):
            raise
        sys.stdout.flush()
        print(
            f"rlxc-opt: internal error on {input_name}: {type(exc).__name__}: {exc}\n"
            "(please report it; RLXC_TRACEBACK=1 shows the traceback)",
            file=sys.stderr,
        )
        return 2
    return status or 0


if __name__ == "__main__":
    sys.exit(main())

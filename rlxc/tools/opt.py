"""`rlxc-opt`: xdsl-opt with rlxc's dialects and passes, and clean diagnostics.

Every xdsl-opt flag works unchanged (`-p`, `--print-between-passes`,
`--split-input-file`, `--verify-diagnostics`, `--print-op-generic`,
`--time-passes`, ...). What rlxc adds: a failure (a syntax error, a verifier
error, an unknown pass or option, a pass that rejects its input) is printed as
a diagnostic with its location on stderr and the tool exits with status 1,
never with a Python traceback, and never after printing a partial module.
"""

from __future__ import annotations

import dataclasses
import sys
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
from rlxc.passes import get_all_passes

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
)


class RlxcOptMain(xDSLOptMain):
    """xDSLOptMain with rlxc's dialects and passes registered explicitly (so the
    tool works even where the `xdsl.universe` entry point was not installed)."""

    version_format = "rlxc-opt (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="rlxc modular optimizer driver", args=args)

    def register_all_dialects(self):
        super().register_all_dialects()
        if "rlx" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("rlx", lambda: Rlx)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            module = parser.parse_module(not self.args.no_implicit_module)
            self._locations = parser.locations
            return module

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_with_location(
                prog, getattr(self, "_locations", {}), getattr(self, "_line_offset", 0)
            )
        super().apply_passes(prog)


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
        ParseError: "parse error",
        VerifyException: "verification failed",
        PassFailedException: "pass failed",
    }
    label = next((v for k, v in kind.items() if isinstance(exc, k)), "error")
    text = str(exc).rstrip()
    print(f"rlxc-opt: {label} in {input_name}:", file=sys.stderr)
    print(text, file=sys.stderr)
    for note in getattr(exc, "__notes__", []):
        print(note, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rlxc-opt` console script."""
    input_name = "<stdin>"
    try:
        tool = RlxcOptMain(args=argv)
        input_name = tool.get_input_name()
        tool.run()
    except SystemExit:
        raise
    except USER_ERRORS as exc:  # the user's input is at fault: no traceback
        sys.stdout.flush()
        _report(exc, input_name)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`rlxc-opt --verify-diagnostics`, as mlir-opt does it.

The input says which diagnostics it expects, in comments:

    // expected-error @+1 {{'rlx.add' op operands have shapes that do not broadcast}}
    %0 = rlx.add %a, %b : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>

* the kind: `expected-error`, `expected-warning`, `expected-note`,
  `expected-remark`;
* `-re` after the kind (`expected-error-re`) makes the `{{...}}` parts inside
  the text regular expressions (Python's `re`, `.` matching newlines too); the
  rest of the text is literal: `expected-error-re {{axis {{-?[0-9]+}} is out}}`;
* the line it is expected on: the annotation's own line, or `@+N` / `@-N`
  lines from it, `@above` (the nearest line above that is not an annotation),
  `@below` (the nearest line below that is not an annotation), or `@unknown`
  (a diagnostic that has no location);
* the text, between the first `{{` and the last `}}` of the line: a substring
  of the diagnostic's message (the whole message, over all its lines).

Every expected diagnostic must be produced, by a diagnostic of its kind on its
line, and every diagnostic produced must be expected; each expectation is used
up by one diagnostic. Anything else is reported on stderr at its location
(`file:line:col: error: expected error "..." was not produced`,
`file:line:col: error: unexpected error: ...`) and the tool exits with status
1; otherwise it exits 0 and prints what it prints without the flag (the
module of each chunk that succeeded). With `--split-input-file` each chunk is
checked on its own, with the file's line numbers.

The diagnostics collected per chunk: a parse error (at its token; a parse
error's references are notes), the verifier's first failure (at the op), a
pass that fails (at the op when the exception, or one it was raised from, has
an `op` attribute whose op came from the input, else at no location), and what
passes report through `emit()`. Lines of a message that start with `note: `
are notes at the message's location.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from typing import IO, Any, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span

E = TypeVar("E", bound=BaseException)

#: The flag's help (xDSL's says it prints the error and exits 0).
HELP = (
    "check the diagnostics against the input's `// expected-error|warning|note|remark"
    "[-re] [@+N|@-N|@above|@below|@unknown] {{text}}` annotations, as mlir-opt does; "
    "exit 1 on any mismatch"
)

KINDS = ("error", "warning", "note", "remark")

#: An annotation, anywhere in a line (as in mlir, which matches the whole line).
ANNOTATION = re.compile(
    r"expected-(?P<kind>error|warning|note|remark)(?P<re>-re)?"
    r" *(?:@(?P<loc>[+-][0-9]+|above|below|unknown))? *\{\{(?P<text>.*)\}\}\s*$"
)
#: What looks like an annotation to its writer (a comment that starts with one).
LOOKS_LIKE = re.compile(r"//\s*(expected-(?:error|warning|note|remark))\b")


@dataclass
class Diagnostic:
    """A diagnostic produced: its kind, message and 1-based line and column
    (`line` None: no location)."""

    kind: str
    message: str
    line: int | None = None
    col: int = 1


@dataclass
class Expectation:
    """An `expected-*` annotation: `line` is the line it expects its
    diagnostic on (None: `@unknown`), `at` the annotation's own position."""

    kind: str
    text: str
    line: int | None
    at: tuple[int, int]
    regex: re.Pattern[str] | None = None
    used: bool = False

    def matches(self, message: str) -> bool:
        if self.regex is not None:
            return self.regex.search(message) is not None
        return self.text in message


@dataclass
class Report:
    """A mismatch, reported at `line`:`col` (line None: no location)."""

    line: int | None
    col: int
    message: str


def compile_re(text: str) -> re.Pattern[str]:
    """mlir's `-re` text: literal, with `{{regex}}` parts. Raises ValueError."""
    pattern, rest = "", text
    while (start := rest.find("{{")) != -1:
        end = rest.find("}}", start + 2)
        if end == -1:
            raise ValueError("found start of regex with no end '}}'")
        pattern += re.escape(rest[:start]) + "(" + rest[start + 2 : end] + ")"
        rest = rest[end + 2 :]
    pattern += re.escape(rest)
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error as e:
        raise ValueError(f"invalid regex: {e}") from None


def parse_annotations(text: str, line_offset: int = 0) -> tuple[list[Expectation], list[Report]]:
    """The expectations in `text` (a chunk that begins on line
    `line_offset + 1` of its file), and the annotations that are malformed."""
    expectations: list[Expectation] = []
    problems: list[Report] = []
    below: list[Expectation] = []
    last_plain: int | None = None
    lines = text.split("\n")
    for index, source in enumerate(lines):
        line = line_offset + index + 1
        m = ANNOTATION.search(source.rstrip())
        if m is None:
            looks = LOOKS_LIKE.search(source)
            if looks is not None:
                problems.append(Report(line, looks.start(1) + 1, "malformed expected-* annotation: "
                                       "write `// expected-<kind> [@+N|@-N|@above|@below|@unknown] {{text}}`"))
            for e in below:
                e.line = line
            below.clear()
            last_plain = line
            continue
        col = m.start() + 1
        e = Expectation(m["kind"], m["text"], line, (line, col))
        if m["re"]:
            try:
                e.regex = compile_re(e.text)
            except ValueError as err:
                problems.append(Report(line, col, str(err)))
                continue
        loc = m["loc"]
        if loc == "unknown":
            e.line = None
        elif loc == "above":
            if last_plain is None:
                problems.append(Report(line, col, "@above: no line above that is not an annotation"))
                continue
            e.line = last_plain
        elif loc == "below":
            below.append(e)
        elif loc is not None:
            e.line = line + int(loc)
            if not line_offset < e.line <= line_offset + len(lines):
                problems.append(Report(line, col, f"@{loc} points outside the input"))
                continue
        expectations.append(e)
    for e in below:
        problems.append(Report(e.at[0], e.at[1], "@below: no line below that is not an annotation"))
        expectations.remove(e)
    return expectations, problems


def match(expectations: list[Expectation], diagnostics: list[Diagnostic]) -> list[Report]:
    """Pairs each diagnostic with an unused expectation of its kind on its line
    that it matches; reports the diagnostics left over, then the expectations."""
    reports: list[Report] = []
    for d in diagnostics:
        here = [e for e in expectations if not e.used and e.line == d.line and e.matches(d.message)]
        same = next((e for e in here if e.kind == d.kind), None)
        if same is not None:
            same.used = True
        elif here:
            here[0].used = True
            reports.append(Report(d.line, d.col, f"'{d.kind}' diagnostic emitted when expecting a "
                                  f"'{here[0].kind}': {d.message}"))
        else:
            reports.append(Report(d.line, d.col, f"unexpected {d.kind}: {d.message}"))
    for e in expectations:
        if not e.used:
            reports.append(Report(e.at[0], e.at[1], f'expected {e.kind} "{e.text}" was not produced'))
    return reports


# --------------------------------------------------------------------------- collecting


@dataclass
class Collector:
    """The diagnostics of one chunk; ops are located after parsing."""

    pending: list[tuple[str, Operation | None, str]] = field(default_factory=list)


_active: list[Collector] = []


def emit(kind: str, op: Operation | None, message: str) -> None:
    """Reports a warning, remark or note at `op` (a pass's diagnostic that does
    not stop it). Under --verify-diagnostics it is checked against the
    input's annotations; otherwise it is printed on stderr."""
    if kind not in KINDS:
        raise ValueError(f"unknown diagnostic kind '{kind}', expected one of {', '.join(KINDS)}")
    if _active:
        _active[-1].pending.append((kind, op, message))
    else:
        where = f"'{op.name}' op " if op is not None else ""
        print(f"{kind}: {where}{message}", file=sys.stderr)


@contextmanager
def collecting() -> Iterator[Collector]:
    c = Collector()
    _active.append(c)
    try:
        yield c
    finally:
        _active.remove(c)


def _position(span: Span[Any], line_offset: int) -> tuple[int, int]:
    loc = dataclasses.replace(span, line_offset=line_offset).get_location()
    return loc.line, loc.col


def split_notes(kind: str, message: str, line: int | None, col: int) -> list[Diagnostic]:
    """The diagnostic, and its lines that start with `note: ` as notes there."""
    lines = message.rstrip("\n").split("\n")
    notes = [ln for ln in lines if ln.startswith("note: ")]
    main = "\n".join(ln for ln in lines if not ln.startswith("note: "))
    return [Diagnostic(kind, main, line, col)] + [
        Diagnostic("note", n.removeprefix("note: "), line, col) for n in notes
    ]


def from_parse_error(e: ParseError, line_offset: int) -> list[Diagnostic]:
    line, col = _position(e.span, line_offset)
    out = split_notes("error", e.msg, line, col)
    if isinstance(e, MultipleSpansParseError):
        for span, msg in e.refs:
            out.append(Diagnostic("note", msg or e.ref_text or "", *_position(span, line_offset)))
    return out


def first_verify_failure(module: ModuleOp) -> tuple[Operation | None, str] | None:
    """The first op (in pre-order) whose own verifier fails, and its message
    (`'name' op ...`), as mlir-opt reports it; None if the module verifies."""
    try:
        module.verify()
    except VerifyException as exc:
        for op in module.walk():
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as inner:
                return op, f"'{op.name}' op {inner}"
        return None, str(exc)
    return None


def at(op: Operation, exc: E) -> E:
    """`exc`, located at `op` for --verify-diagnostics:
    `raise at(op, PassFailedException("..."))`."""
    exc.op = op  # type: ignore[attr-defined]
    return exc


def _op_of(exc: BaseException) -> Operation | None:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        op = getattr(e, "op", None)
        if isinstance(op, Operation):
            return op
        e = e.__cause__ or e.__context__
    return None


class ChunkResult:
    """What one chunk gave: its diagnostics, and its module if it succeeded."""

    def __init__(self, diagnostics: list[Diagnostic], module: ModuleOp | None):
        self.diagnostics = diagnostics
        self.module = module


def check_chunk(tool: Any, data: bytes, file_extension: str, line_offset: int) -> ChunkResult:
    """Parses, verifies and runs the passes of `tool` (an RlxcOptMain) on one
    chunk, collecting the diagnostics instead of stopping at them."""
    diagnostics: list[Diagnostic] = []
    tool._locations = {}

    def locate(op: Operation | None) -> tuple[int | None, int]:
        span = tool._locations.get(op) if op is not None else None
        return _position(span, line_offset) if span is not None else (None, 1)

    module = None
    with collecting() as c:
        try:
            module = tool.parse_chunk(BytesIO(data), file_extension, line_offset)
            if module is not None and not tool.args.disable_verify:
                failure = first_verify_failure(module)
                if failure is not None:
                    op, message = failure
                    diagnostics += split_notes("error", message, *locate(op))
                    module = None
            if module is not None:
                tool.apply_passes(module)
        except ParseError as e:
            diagnostics += from_parse_error(e, line_offset)
            module = None
        except DiagnosticException as e:
            message = "\n".join([str(e), *(n for n in getattr(e, "__notes__", []) if n.startswith("note: "))])
            diagnostics += split_notes("error", message, *locate(_op_of(e)))
            module = None
    for kind, op, message in c.pending:
        diagnostics += split_notes(kind, message, *locate(op))
    diagnostics.sort(key=lambda d: (d.line is not None, d.line or 0))
    return ChunkResult(diagnostics, module)


def format_report(report: Report, file_name: str, source_lines: list[str]) -> str:
    """`file:line:col: error: message`, then the source line and a caret."""
    if report.line is None:
        return f"{file_name}: error: {report.message}\n"
    text = f"{file_name}:{report.line}:{report.col}: error: {report.message}\n"
    if 0 < report.line <= len(source_lines):
        text += source_lines[report.line - 1] + "\n" + " " * (report.col - 1) + "^\n"
    return text


def run_verify_diagnostics(tool: Any, err: IO[str] | None = None) -> int:
    """`rlxc-opt --verify-diagnostics`: 0 if every chunk produced exactly the
    diagnostics it expects, else 1 (the mismatches reported on `err`)."""
    err = err if err is not None else sys.stderr
    chunks, file_extension = tool.prepare_input()
    output = tool.prepare_output()
    name = tool.get_input_name()
    datas: list[tuple[bytes, int]] = []
    for chunk, offset in chunks:
        try:
            datas.append((chunk.read(), offset))
        finally:
            chunk.close()
    source_lines = b"".join(
        (b"// -----" if i else b"") + d for i, (d, _) in enumerate(datas)
    ).decode("utf-8", "replace").split("\n")
    reports: list[Report] = []
    try:
        for i, (data, offset) in enumerate(datas):
            if i > 0:
                output.write("// -----\n")
            expectations, problems = parse_annotations(data.decode("utf-8", "replace"), offset)
            result = check_chunk(tool, data, file_extension, offset)
            if result.module is not None:
                output.write(tool.output_resulting_program(result.module))
            output.flush()
            reports += problems + match(expectations, result.diagnostics)
    finally:
        if output is not sys.stdout:
            output.close()
    for r in reports:
        err.write(format_report(r, name, source_lines))
    err.flush()
    return 1 if reports else 0

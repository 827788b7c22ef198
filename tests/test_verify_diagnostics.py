"""`rlxc-opt --verify-diagnostics`: mlir-opt's expected-* annotations
(rlxc/tools/diagnostics.py), the matcher on its own and through the tool."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rlxc.tools import diagnostics as D
from rlxc.tools.opt import RlxcOptMain, main

# --------------------------------------------------------------------------- annotations


def test_designators_give_the_expected_line():
    text = "\n".join(  # noqa: FLY002
        [
            "a",  # 1
            "// expected-error {{same line}}",  # 2
            "// expected-error @+2 {{two down}}",  # 3
            "// expected-warning@-3 {{three up}}",  # 4
            "b",  # 5
            "// expected-note @above {{above}}",  # 6
            "// expected-remark @above {{above, past an annotation}}",  # 7
            "// expected-error @below {{below}}",  # 8
            "// expected-error @below {{below, past an annotation}}",  # 9
            "c",  # 10
            "// expected-error @unknown {{anywhere}}",  # 11
        ]
    )
    expectations, problems = D.parse_annotations(text)
    assert problems == []
    got = [(e.kind, e.text, e.line, e.at) for e in expectations]
    assert got == [
        ("error", "same line", 2, (2, 4)),
        ("error", "two down", 5, (3, 4)),
        ("warning", "three up", 1, (4, 4)),
        ("note", "above", 5, (6, 4)),
        ("remark", "above, past an annotation", 5, (7, 4)),
        ("error", "below", 10, (8, 4)),
        ("error", "below, past an annotation", 10, (9, 4)),
        ("error", "anywhere", None, (11, 4)),
    ]


def test_a_chunks_lines_are_the_files():
    # A chunk after `// -----` begins with the rest of the separator's line.
    expectations, _ = D.parse_annotations("\n// expected-error @+1 {{x}}\nop", line_offset=10)
    assert [(e.line, e.at) for e in expectations] == [(13, (12, 4))]


def test_the_text_runs_to_the_last_braces():
    (e,), _ = D.parse_annotations("  %0 = x  // expected-error {{a {{b}} c}}  ")
    assert e.text == "a {{b}} c" and e.regex is None
    assert e.matches("xx a {{b}} c yy") and not e.matches("a b c")


def test_malformed_annotations_are_reported():
    text = "\n".join(  # noqa: FLY002
        [
            "// expected-error @above {{nothing above}}",
            "// expected-error {{fine}}",
            "// expected-error no braces",
            "// expected-error @+5 {{past the end}}",
            "// expected-error-re {{bad {{(}}}}",
            "// expected-error @below {{nothing below}}",
        ]
    )
    expectations, problems = D.parse_annotations(text)
    assert [e.text for e in expectations] == ["fine"]
    assert [(p.line, p.col) for p in problems] == [(1, 4), (3, 4), (4, 4), (5, 4), (6, 4)]
    messages = [p.message for p in problems]
    assert "@above" in messages[0] and "malformed" in messages[1]
    assert "outside the input" in messages[2] and messages[3].startswith("invalid regex")
    assert "@below" in messages[4]


def test_prose_that_mentions_an_annotation_is_not_one():
    expectations, problems = D.parse_annotations("// write expected-error to expect one\n")
    assert expectations == [] and problems == []


# --------------------------------------------------------------------------- -re


def test_regex_parts_and_literal_parts():
    r = D.compile_re("axis {{-?[0-9]+}} (of {{[a-z]+}}) is out.")
    assert r.search("'rlx.x' op axis -3 (of rank) is out.")
    assert not r.search("axis -3 (of rank) is outX")  # `.` is literal outside {{}}
    assert not r.search("axis x (of rank) is out.")
    assert D.compile_re("a{{.*}}b").search("a\nline two\nb")  # `.` matches newlines


@pytest.mark.parametrize(
    "text, problem",
    [("a {{b", "no end '}}'"), ("{{(}}", "invalid regex")],
)
def test_bad_regexes(text, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        D.compile_re(text)


# --------------------------------------------------------------------------- matching


def _expect(text: str) -> list[D.Expectation]:
    expectations, problems = D.parse_annotations(text)
    assert problems == []
    return expectations


def test_a_match_is_same_kind_same_line_substring():
    es = _expect("// expected-error @+1 {{shapes do not broadcast}}\nop")
    assert D.match(es, [D.Diagnostic("error", "'rlx.add' op shapes do not broadcast: 4, 8", 2, 3)]) == []


def test_each_expectation_is_used_once():
    es = _expect("op  // expected-error {{boom}}")
    reports = D.match(es, [D.Diagnostic("error", "boom", 1, 1), D.Diagnostic("error", "boom again", 1, 5)])
    assert [(r.line, r.col, r.message) for r in reports] == [(1, 5, "unexpected error: boom again")]


def test_mismatches():
    es = _expect(
        "\n".join(  # noqa: FLY002
            [
                "// expected-error @+1 {{on the next line}}",
                "op",
                "// expected-warning @+1 {{a warning}}",
                "op",
                "// expected-error @unknown {{nowhere}}",
            ]
        )
    )
    diagnostics = [
        D.Diagnostic("error", "on the next line", 3, 1),  # wrong line
        D.Diagnostic("error", "a warning", 4, 1),  # wrong kind
        D.Diagnostic("error", "nowhere", None),
    ]
    reports = [(r.line, r.col, r.message) for r in D.match(es, diagnostics)]
    assert reports == [
        (3, 1, "unexpected error: on the next line"),
        (4, 1, "'error' diagnostic emitted when expecting a 'warning': a warning"),
        (1, 4, 'expected error "on the next line" was not produced'),
    ]


def test_notes_in_a_message_are_notes_at_its_location():
    ds = D.split_notes("error", "it failed\nnote: see here\nmore", 7, 3)
    assert [(d.kind, d.message, d.line, d.col) for d in ds] == [
        ("error", "it failed\nmore", 7, 3),
        ("note", "see here", 7, 3),
    ]


def test_emit_outside_verify_diagnostics_prints(capsys):
    D.emit("warning", None, "careful")
    assert capsys.readouterr().err == "warning: careful\n"
    with pytest.raises(ValueError):
        D.emit("fatal", None, "no such kind")


def test_report_format():
    lines = ["a", "  %0 = rlx.exp"]
    assert D.format_report(D.Report(2, 3, "unexpected error: x"), "f.mlir", lines) == (
        "f.mlir:2:3: error: unexpected error: x\n  %0 = rlx.exp\n  ^\n"
    )
    assert D.format_report(D.Report(None, 1, "unexpected error: y"), "f.mlir", lines) == (
        "f.mlir: error: unexpected error: y\n"
    )


# --------------------------------------------------------------------------- the tool

GOOD = """\
func.func @bad(%x: tensor<4xi32>) {
  // expected-error @+1 {{'rlx.exp' op input has element type i32}}
  %0 = rlx.exp %x : tensor<4xi32>
  func.return
}

// -----

func.func @parse(%x: tensor<4xf32>) {
  %0 = rlx.exp %x tensor<4xf32>  // expected-error {{Expected ':'}}
  func.return
}

// -----

func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


def _write(tmp_path: Path, text: str, name: str = "in.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_expected_errors_exit_0_and_print_the_good_chunks(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    assert main([path, "--split-input-file", "--verify-diagnostics"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.count("// -----") == 2 and "func.func @fine" in out and "@bad" not in out


def test_mismatches_exit_1_and_are_located(tmp_path, capsys):
    text = GOOD.replace("element type i32}}", "element type i64}}").replace("Expected ':'", "Expected '='")
    path = _write(tmp_path, text)
    assert main([path, "--split-input-file", "--verify-diagnostics"]) == 1
    out, err = capsys.readouterr()
    headers = [ln for ln in err.splitlines() if ": error: " in ln]
    assert headers == [
        (f"{path}:3:3: error: unexpected error: 'rlx.exp' op input has element type i32, "
         "expected one of f32, f16, bf16"),
        f"{path}:2:6: error: expected error \"'rlx.exp' op input has element type i64\" was not produced",
        f"{path}:10:19: error: unexpected error: Expected ':'",
        f"{path}:10:37: error: expected error \"Expected '='\" was not produced",
    ]
    assert "Traceback" not in err and "func.func @fine" in out


def test_without_split_input_file_the_first_error_is_the_only_one(tmp_path, capsys):
    path = _write(tmp_path, GOOD.replace("// -----", "// (one chunk)"))
    assert main([path, "--verify-diagnostics"]) == 1
    err = capsys.readouterr().err
    # The parse error stops the file: the verifier never sees @bad.
    assert f"{path}:2:6: error: expected error" in err
    assert f"{path}:10:19: error" not in err


def test_an_unannotated_error_fails(tmp_path, capsys):
    path = _write(tmp_path, GOOD.replace("  // expected-error @+1 {{'rlx.exp' op input has element type i32}}\n", ""))
    assert main([path, "--split-input-file", "--verify-diagnostics"]) == 1
    assert f"{path}:2:3: error: unexpected error: 'rlx.exp' op" in capsys.readouterr().err


def test_output_file(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    out = tmp_path / "out.mlir"
    assert main([path, "--split-input-file", "--verify-diagnostics", "-o", str(out)]) == 0
    assert "func.func @fine" in out.read_text() and capsys.readouterr().out == ""


@dataclass(frozen=True)
class WarnAtExp(ModulePass):
    """Test pass: a warning and a remark at every rlx.exp; fails, located at
    the op, on an rlx.log."""

    name = "test-warn-at-exp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if o.name == "rlx.exp":
                D.emit("warning", o, "an exp")
                D.emit("remark", o, "still an exp")
            if o.name == "rlx.log":
                raise D.at(o, PassFailedException("no logs here\nnote: try rlx.exp"))


class ToolWithTestPass(RlxcOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(WarnAtExp.name, lambda: WarnAtExp)


PASS_INPUT = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning @+2 {{an exp}}
  // expected-remark @+1 {{still an exp}}
  %0 = rlx.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{pass 'test-warn-at-exp' rejected its input: no logs here}}
  // expected-note @below {{try rlx.exp}}
  %0 = rlx.log %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


def test_warnings_remarks_notes_and_located_pass_failures(tmp_path, capsys):
    path = _write(tmp_path, PASS_INPUT)
    args = [path, "--split-input-file", "--verify-diagnostics", "-p", WarnAtExp.name,
            "--reproducer-dir", str(tmp_path / "repro")]  # fmt: skip
    assert ToolWithTestPass(args).run() == 0
    out, err = capsys.readouterr()
    assert err == "" and "func.func @f" in out and "@g" not in out

    path = _write(tmp_path, PASS_INPUT.replace("{{an exp}}", "{{a log}}").replace("expected-note", "expected-remark"))
    err_stream = io.StringIO()
    tool = ToolWithTestPass(args)
    assert D.run_verify_diagnostics(tool, err_stream) == 1
    headers = [ln for ln in err_stream.getvalue().splitlines() if ": error: " in ln]
    assert headers == [
        f"{path}:4:3: error: unexpected warning: an exp",
        f"{path}:2:6: error: expected warning \"a log\" was not produced",
        f"{path}:13:3: error: 'note' diagnostic emitted when expecting a 'remark': try rlx.exp",
    ]


def test_without_the_flag_errors_are_unchanged(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    assert main([path, "--split-input-file"]) == 1
    err = capsys.readouterr().err
    assert "rlxc-opt: verification failed in" in err and "was not produced" not in err

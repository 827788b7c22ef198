"""`rlxc fuzz`: the real pipelines pass; a pass broken on purpose is found,
shrunk to a small reproducer, and the reproducer fails under
`rlxc-opt --check-semantics` too."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

import rlxc.passes
import rlxc.tools.opt
from rlxc.dialects import rlx
from rlxc.tools import cli

BIN = Path(sys.executable).parent


class SubToAdd(RewritePattern):
    """Wrong on purpose: a - b becomes a + b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rlx.SubOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, rlx.AddOp.build(operands=[op.lhs, op.rhs], result_types=[op.result.type]))


@dataclass(frozen=True)
class SubToAddPass(ModulePass):
    name = "test-sub-to-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SubToAdd()).rewrite_module(op)


@pytest.fixture
def sub_to_add(monkeypatch):
    """Registers `test-sub-to-add` for run_pipeline and for rlxc-opt (in-process)."""
    real = rlxc.passes.get_all_passes

    def patched():
        return {**real(), "test-sub-to-add": lambda: SubToAddPass}

    monkeypatch.setattr(rlxc.passes, "get_all_passes", patched)
    monkeypatch.setattr(rlxc.tools.opt, "get_all_passes", patched)


def rlx_ops(text: str) -> list[str]:
    return [line.split("=", 1)[1].split()[0] for line in text.splitlines() if "= rlx." in line]


@pytest.mark.parametrize("pipeline", ["rlx-optimize", "rlx-plan"])
def test_the_real_pipelines_pass(pipeline, tmp_path, capsys):
    assert cli.main(["fuzz", pipeline, "--examples", "12", "--out", str(tmp_path)]) == 0
    assert f"12 graphs passed '{pipeline}'" in capsys.readouterr().out
    assert not (tmp_path / "fuzz-repro.mlir").exists()


def test_random_onnx_models_pass_rlx_plan(tmp_path, capsys):
    assert cli.main(["fuzz", "rlx-plan", "--onnx", "--examples", "12", "--out", str(tmp_path)]) == 0
    assert "12 graphs passed 'rlx-plan'" in capsys.readouterr().out


def test_a_broken_pass_is_found_shrunk_and_reproduced(sub_to_add, tmp_path, capsys):
    status = cli.main(["fuzz", "test-sub-to-add", "--examples", "200", "--seed", "4", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "changed the module's meaning" in out
    repro = tmp_path / "fuzz-repro.mlir"
    assert f"reproducer: {repro}" in out
    text = repro.read_text()
    assert text.splitlines()[0] == "// RUN: rlxc-opt %s -p 'test-sub-to-add' --check-semantics"
    ops = rlx_ops(text)
    assert "rlx.sub" in ops and len(ops) <= 3, text  # shrunk: the subtraction and little else
    assert "shrunk to" in out
    # The reproducer fails under rlxc-opt --check-semantics as well.
    assert rlxc.tools.opt.main([str(repro), "-p", "test-sub-to-add", "--check-semantics",
                                "--reproducer-dir", str(tmp_path / "opt")]) == 1  # fmt: skip
    assert "pass 'test-sub-to-add' changed the module's meaning" in capsys.readouterr().err
    # and the same seed finds the same reproducer
    assert cli.main(["fuzz", "test-sub-to-add", "--examples", "200", "--seed", "4", "--out", str(tmp_path / "again")]) == 1
    assert (tmp_path / "again" / "fuzz-repro.mlir").read_text() == text


def test_the_console_scripts_end_to_end(tmp_path):
    """`rlxc fuzz` on a registered wrong pass, then `rlxc-opt` on its reproducer."""
    pipeline = 'test-rlx-miscompile{op="rlx.tanh" replacement="rlx.sigmoid"}'
    run = subprocess.run([BIN / "rlxc", "fuzz", pipeline, "--examples", "100", "--out", tmp_path],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    repro = tmp_path / "fuzz-repro.mlir"
    assert len(rlx_ops(repro.read_text())) <= 3
    opt = subprocess.run([BIN / "rlxc-opt", repro, "-p", pipeline, "--check-semantics",
                          "--reproducer-dir", tmp_path / "opt"], capture_output=True, text=True)  # fmt: skip
    assert opt.returncode == 1 and "changed the module's meaning" in opt.stderr, opt.stderr


def test_onnx_failures_write_the_imported_module_and_the_model(tmp_path, capsys):
    pipeline = 'test-rlx-miscompile{op="rlx.sin" replacement="rlx.cos"},rlx-optimize'
    assert cli.main(["fuzz", pipeline, "--onnx", "--examples", "100", "--out", str(tmp_path)]) == 1
    assert "shrunk to 1 op(s): rlx.sin" in capsys.readouterr().out
    assert rlx_ops((tmp_path / "fuzz-repro.mlir").read_text()) == ["rlx.sin"]
    import onnx

    model = onnx.load(str(tmp_path / "fuzz-repro.onnx"))
    assert [n.op_type for n in model.graph.node] == ["Sin"]


def test_a_crash_is_a_failure(tmp_path, capsys):
    assert cli.main(["fuzz", "test-rlx-miscompile{crash=true}", "--examples", "5", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "the pipeline raised RuntimeError: test-rlx-miscompile was asked to crash" in out
    assert len(rlx_ops((tmp_path / "fuzz-repro.mlir").read_text())) == 1


def test_user_errors(monkeypatch, capsys):
    assert cli.main(["fuzz", "no-such-pass"]) == 1
    assert "rlxc fuzz: error: bad pipeline 'no-such-pass'" in capsys.readouterr().err
    assert cli.main(["fuzz", "rlx-plan", "--dtypes", "f64"]) == 1
    assert "--dtypes: f64 not among f32, f16, bf16" in capsys.readouterr().err
    assert cli.main(["fuzz", "rlx-cuda", "--examples", "3"]) == 1  # said at once, not 3 "failures" shrunk
    assert "'rlx-cuda' lowers to the launch level (rlx_cuda.kernel, rlx_cuda.launch)" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # as if not installed
    assert cli.main(["fuzz", "rlx-plan"]) == 1
    assert "hypothesis, which is not installed: pip install 'rlxc[test]'" in capsys.readouterr().err

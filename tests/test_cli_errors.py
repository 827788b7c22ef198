"""Bad input to the command-line tools: a clear error and a non-zero exit,
never a traceback, and no output file half-written, emptied or left behind
(cases a review found, session 51)."""

from __future__ import annotations

import os
import stat

import numpy as np

from rlxc.runtime.nvrtc import write_atomic
from rlxc.tools import cli, opt

GOOD = """func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = rlx.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def _clean(err: str) -> bool:
    return "Traceback" not in err and "error" in err


def test_rlxc_opt_writes_nothing_when_a_later_chunk_fails(tmp_path, capsys):
    """With --split-input-file and a bad second chunk: no partial module on
    stdout, `-o` neither emptied nor created; a good run writes the whole
    file at once."""
    src = tmp_path / "split.mlir"
    src.write_text(GOOD + "// -----\nfunc.func @bad( {\n")
    keep = tmp_path / "keep.mlir"
    keep.write_text("old\n")
    assert opt.main([str(src), "--split-input-file", "-o", str(keep)]) == 1
    assert keep.read_text() == "old\n"
    assert opt.main([str(src), "--split-input-file", "-o", str(tmp_path / "new.mlir")]) == 1
    assert not (tmp_path / "new.mlir").exists() and not list(tmp_path.glob("*.tmp"))
    capsys.readouterr()
    assert opt.main([str(src), "--split-input-file"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "parse error" in err and _clean(err)
    (tmp_path / "good.mlir").write_text(GOOD)
    assert opt.main([str(tmp_path / "good.mlir"), "-p", "rlx-plan", "-o", str(keep)]) == 0
    assert "rlx.arena_bytes" in keep.read_text()
    assert opt.main([str(tmp_path / "good.mlir"), "-o", str(tmp_path)]) == 1
    assert "a directory" in capsys.readouterr().err


def test_write_atomic_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "f.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o644


def test_rlxc_run_bad_input_files(tmp_path, capsys):
    """A truncated .npz, a .npy, a scalar @main argument, a zero-size output
    (run, not an error), --repeat 0."""
    good = tmp_path / "ok.mlir"
    good.write_text(GOOD)
    np.savez(tmp_path / "in.npz", x=np.ones((2, 3), np.float32))
    (tmp_path / "trunc.npz").write_bytes((tmp_path / "in.npz").read_bytes()[:40])
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    for bad, says in (("trunc.npz", "cannot read inputs file"), ("x.npy", "not an .npz")):
        assert cli.main(["run", str(good), "--inputs", str(tmp_path / bad)]) == 1
        err = capsys.readouterr().err
        assert says in err and _clean(err), err
    scalar = tmp_path / "scalar.mlir"
    scalar.write_text("func.func @main(%x: f32) -> f32 {\n  func.return %x : f32\n}\n")
    for cmd in ("run", "plan"):
        assert cli.main([cmd, str(scalar)]) == 1
        err = capsys.readouterr().err
        assert "argument 0 is f32, not a tensor" in err and _clean(err), err
    zero = tmp_path / "zero.mlir"
    zero.write_text(GOOD.replace("2x3", "0x3"))
    assert cli.main(["run", str(zero)]) == 0
    assert "shape [0, 3] dtype float32  (no elements)" in capsys.readouterr().out
    assert cli.main(["bench", str(good), "--backend", "numpy", "--repeat", "0"]) == 1
    assert "--repeat 0" in capsys.readouterr().err


def test_rlxc_plan_and_import_refuse_what_they_cannot_do(tmp_path, capsys):
    """plan: a pipeline that plans nothing, a declaration before @main;
    import: -o naming the params' .npz, a directory, a path under a file."""
    good = tmp_path / "ok.mlir"
    good.write_text(GOOD)
    assert cli.main(["plan", str(good), "--pipeline", "canonicalize"]) == 1
    err = capsys.readouterr().err
    assert "without a memory plan" in err and _clean(err)
    decl = tmp_path / "decl.mlir"
    decl.write_text("func.func private @ext(tensor<4xf32>) -> tensor<4xf32>\n" + GOOD)
    assert cli.main(["plan", str(decl)]) == 0
    assert "arena" in capsys.readouterr().out
    from onnx import TensorProto, helper

    from onnx_helpers import make_model

    model = make_model([helper.make_node("Relu", ["X"], ["Y"])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])])
    path = tmp_path / "relu.onnx"
    path.write_bytes(model.SerializeToString())
    (tmp_path / "file").write_text("")
    for out, says in ((tmp_path / "relu.npz", "name it .mlir"), (tmp_path, "is a directory"),
                      (tmp_path / "file" / "relu.mlir", "")):
        assert cli.main(["import", str(path), "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert says in err and _clean(err), err
    assert sorted(p.name for p in tmp_path.glob("relu.*")) == ["relu.onnx"]  # nothing written


def test_fuzz_and_semantics_options_are_checked_first(tmp_path, capsys):
    """rlxc fuzz: no element types, a negative or NaN tolerance (every pass a
    miscompile, or none), --out naming a file: refused before any fuzzing;
    rlxc-opt's --semantics-tolerance the same."""
    (tmp_path / "f").write_text("")
    for extra, says in ((["--dtypes", ""], "--dtypes ''"), (["--tolerance", "-1"], "--tolerance -1"),
                        (["--tolerance", "nan"], "--tolerance nan"), (["--out", str(tmp_path / "f")], "not a directory")):
        assert cli.main(["fuzz", "rlx-plan", "--examples", "1", *extra]) == 1
        err = capsys.readouterr().err
        assert says in err and _clean(err), err
    good = tmp_path / "ok.mlir"
    good.write_text(GOOD)
    assert opt.main([str(good), "-p", "canonicalize", "--check-semantics", "--semantics-tolerance", "-1"]) == 1
    err = capsys.readouterr().err
    assert "--semantics-tolerance -1.0" in err and _clean(err)


def test_rlxc_says_where_and_what(tmp_path, capsys):
    """A verifier failure at its line and op; a module lowered already; an
    ONNX model with no outputs, an input with no shape (bound with --shape,
    it runs) and a negative dimension."""
    bad = tmp_path / "bad.mlir"
    bad.write_text('func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
                   '  %e = "rlx.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  func.return %e : tensor<4xf32>\n}\n')
    assert cli.main(["run", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.mlir:2:3" in err and "'rlx.add' op Expected 2 operands" in err and _clean(err), err
    good = tmp_path / "ok.mlir"
    good.write_text(GOOD)
    low = tmp_path / "low.mlir"
    assert opt.main([str(good), "-p", "rlx-cuda{arch=sm_90 sm_count=132}", "-o", str(low)]) == 0
    assert cli.main(["run", str(low)]) == 1
    err = capsys.readouterr().err
    assert "is lowered already" in err and _clean(err), err
    from onnx import TensorProto, helper
    from onnx_helpers import make_model

    relu = helper.make_node("Relu", ["X"], ["Y"])
    cases = [(make_model([], [], []), [], "has no outputs"),
             (make_model([relu], [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                         [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]), [], "--shape X=D0,D1"),
             (make_model([relu], [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 4])],
                         [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]), ["--shape", "X=-2,4"],
              "dimensions are 0 or more")]
    for k, (model, extra, says) in enumerate(cases):
        path = tmp_path / f"m{k}.onnx"
        path.write_bytes(model.SerializeToString())
        assert cli.main(["run", str(path), *extra]) == 1
        err = capsys.readouterr().err
        assert says in err and _clean(err), err
    assert cli.main(["run", str(tmp_path / "m1.onnx"), "--shape", "X=2,3"]) == 0
    assert "output #0: shape [2, 3]" in capsys.readouterr().out


def test_rlxc_opt_dash_is_stdin_and_target_options_are_checked_up_front(tmp_path, capsys, monkeypatch):
    """`rlxc-opt -` reads stdin (mlir-opt's spelling); a bad arch, sm_count or
    gemm is the command line's error, said before any pass runs: no
    "rejected its input", no reproducer written."""
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    assert opt.main(["-"]) == 0
    assert "rlx.relu" in capsys.readouterr().out
    good = tmp_path / "ok.mlir"
    good.write_text(GOOD)
    for spec, says in (("rlx-cuda{arch=foo}", "rlx-cuda: arch must look like sm_90, got 'foo'"),
                       ("rlx-cuda{sm_count=-1}", "sm_count must be 0"),
                       ("rlx-emit-cuda{gemm=x}", "gemm must be one of cublaslt, kernel")):
        assert opt.main([str(good), "-p", spec, "--reproducer-dir", str(tmp_path / "repro")]) == 1
        err = capsys.readouterr().err
        assert says in err and "rejected its input" not in err and _clean(err), err
        assert not (tmp_path / "repro").exists()


def test_rlxc_run_refuses_unknown_params(tmp_path, capsys):
    """--params naming a param the module does not have is refused, as an
    unknown input is; the module's own param is taken."""
    src = tmp_path / "b.mlir"
    src.write_text('func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n'
                   '  %b = rlx.param "bias" : tensor<3xf32>\n'
                   '  %y = rlx.add %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>\n'
                   '  func.return %y : tensor<2x3xf32>\n}\n')
    np.savez(tmp_path / "p.npz", bais=np.ones(3, np.float32))
    assert cli.main(["run", str(src), "--params", str(tmp_path / "p.npz")]) == 1
    err = capsys.readouterr().err
    assert "'bais' is not a param of the module (its params: bias)" in err and _clean(err), err
    np.savez(tmp_path / "p.npz", bias=np.ones(3, np.float32))
    np.savez(tmp_path / "x.npz", x=np.zeros((2, 3), np.float32))
    assert cli.main(["run", str(src), "--params", str(tmp_path / "p.npz"), "--inputs", str(tmp_path / "x.npz")]) == 0
    assert "min 1  max 1" in capsys.readouterr().out


def test_verify_roundtrip_passes_the_demo_model(tmp_path, capsys):
    """--verify-roundtrip compares the parsed-back module structurally: the
    demo's encoder layer through rlx-plan (rlx-fold-layout sets the
    attention's properties in another order than its custom form prints
    them) is no failure."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from models import transformer_encoder_layer

    module, _ = transformer_encoder_layer(2, 32, 64, 4)
    src = tmp_path / "t.mlir"
    src.write_text(str(module) + "\n")
    assert opt.main([str(src), "-p", "rlx-plan", "--verify-roundtrip", "-o", str(tmp_path / "o.mlir")]) == 0, \
        capsys.readouterr().err
    assert "rlx.attention" in (tmp_path / "o.mlir").read_text()


def test_rlxc_run_bert_on_random_inputs_is_finite_and_fold_errors_name_the_node(capsys):
    """rlxc run draws a mask input's integers from 0/1 (0-7 overflowed BERT's
    additive mask: every output NaN) and notes non-finite outputs; an import
    error raised while folding constants names its node (bert_tiny has 64
    positions, so a length of 128 fails at the embeddings' Expand)."""
    from pathlib import Path

    import pytest

    import rlxc

    bert = str(Path(__file__).parent / "models" / "bert_tiny.onnx")
    assert cli.main(["run", bert, "--shape", "input_ids=1,16", "--shape", "attention_mask=1,16"]) == 0
    out = capsys.readouterr().out
    assert "output #0: shape [1, 16, 64]" in out and "nan" not in out and "NaN" not in out, out
    with pytest.raises(rlxc.OnnxImportError, match=r"Expand node '/embeddings/Expand': shape mismatch"):
        rlxc.from_onnx(bert, {"input_ids": [1, 128], "attention_mask": [1, 128]})


def test_rlxc_opt_foreign_targets_fail_clearly(tmp_path, capsys, monkeypatch):
    """xDSL's own targets (-t x86-asm, mps, llvm, ...) on rlx IR, or without
    the package they need: the target and why, exit 1, no "internal error"
    and nothing written to -o; -t mlir still prints."""
    import builtins

    src = tmp_path / "ok.mlir"
    src.write_text(GOOD)
    out = tmp_path / "out.s"
    for target, says in (("x86-asm", "-t x86-asm (an xDSL target for its own dialects' IR) cannot print this module"),
                         ("mps", "cannot print this module: NotImplementedError")):
        assert opt.main([str(src), "-t", target, "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert says in err and "-t mlir" in err and "internal error" not in err and _clean(err), err
        assert not out.exists()
    real_import = builtins.__import__

    def no_llvmlite(name, *args, **kwargs):
        if name.split(".")[0] == "llvmlite":
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_llvmlite)
    assert opt.main([str(src), "-t", "llvm"]) == 1
    err = capsys.readouterr().err
    assert "-t llvm needs the Python package 'llvmlite', which is not installed" in err and _clean(err), err
    monkeypatch.setattr(builtins, "__import__", real_import)
    assert opt.main([str(src), "-t", "mlir"]) == 0
    assert "rlx.relu" in capsys.readouterr().out

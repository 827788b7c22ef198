"""rlx.matmul's transpose flags (`transpose_lhs`, `transpose_rhs`) without a
GPU: the interpreter against numpy in float64, the verifier, rlx-fold-layout
folding last-two-axes transposes into them (results unchanged, no transpose
left), the gemm lowering carrying them (`rlx_cuda.gemm` trans_a/trans_b) and
the fallback gemm kernel compiling with them."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import UnitAttr

import rlxc
from rlxc.codegen import HEADERS
from rlxc.dialects import rlx, rlx_cuda
from rlxc.frontends.builder import GraphError
from rlxc.runtime import nvrtc
from strategies import random_inputs


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path / "cache"))


def ops_named(module, name):
    return [op for op in module.walk() if op.name == name]


def flagged(a_shape, b_shape, tl=False, tr=False, dtype="f32"):
    g = rlxc.GraphBuilder()
    a, b = g.input("a", a_shape, dtype), g.input("b", b_shape, dtype)
    props = {**({"transpose_lhs": UnitAttr()} if tl else {}), **({"transpose_rhs": UnitAttr()} if tr else {})}
    return g.build([g._op(rlx.MatMulOp, [a, b], props)])


@pytest.mark.parametrize("tl,tr", [(False, True), (True, False), (True, True)])
def test_flags_in_the_interpreter(tl, tr):
    rng = np.random.default_rng(1)
    a_shape = [2, 3, 7, 5] if tl else [2, 3, 5, 7]  # logical lhs [2, 3, 5, 7]
    b_shape = [3, 4, 7] if tr else [3, 7, 4]  # logical rhs [3, 7, 4], batch broadcast
    module = flagged(a_shape, b_shape, tl, tr)
    (op,) = ops_named(module, "rlx.matmul")
    assert op.result.type.get_shape() == (2, 3, 5, 4)
    text = str(module)
    assert ("transpose_lhs" in text) == tl and ("transpose_rhs" in text) == tr
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    (got,) = rlxc.interpret(module, {"a": a, "b": b}, float64=True)
    la = np.swapaxes(a.astype(np.float64), -1, -2) if tl else a.astype(np.float64)
    lb = np.swapaxes(b.astype(np.float64), -1, -2) if tr else b.astype(np.float64)
    np.testing.assert_allclose(got, la @ lb, rtol=1e-12, atol=1e-12)


def test_flags_verify_against_the_transposed_shapes():
    with pytest.raises(GraphError, match=r"contraction mismatch: lhs 4x6 has 6 columns but rhs 3x4 has 3 rows "
                                         r"\(shapes as the transpose flags read the operands\)"):
        flagged([6, 4], [4, 3], tl=True, tr=True)  # rhs [4, 3] read as [3, 4]


def _transposed_products():
    g = rlxc.GraphBuilder()
    q, k = g.input("q", [2, 3, 9, 8]), g.input("k", [2, 3, 11, 8])
    a, b = g.input("a", [8, 5]), g.input("b", [8, 6])
    scores = g.matmul(q, g.transpose(k, [0, 1, 3, 2]))  # q·kᵀ: transpose_rhs
    at = g.transpose(a, [1, 0])
    gram = g.matmul(at, b)  # aᵀ·b: transpose_lhs
    both = g.matmul(g.transpose(b, [1, 0]), g.transpose(at, [1, 0]))  # bᵀ·a: flags on lhs only (two transposes cancel)
    kept = g.transpose(k, [0, 2, 1, 3])  # not the last two axes: stays
    return g.build([scores, gram, both, g.matmul(g.transpose(kept, [0, 2, 1, 3]), g.transpose(q, [0, 1, 3, 2])), g.exp(at)])


def test_fold_layout_folds_last_axes_transposes_into_flags():
    module = _transposed_products()
    folded = rlxc.run_pipeline(module, "rlx-fold-layout,cse,dce")
    mm = ops_named(folded, "rlx.matmul")
    flags = [(op.transpose_lhs is not None, op.transpose_rhs is not None) for op in mm]
    assert flags == [(False, True), (True, False), (True, False), (False, True)]
    # at = transpose(a) stays for its other user (exp); the [0, 2, 1, 3] pair stays
    assert len(ops_named(folded, "rlx.transpose")) == 3
    inputs, _ = random_inputs(module, np.random.default_rng(2))
    for want, got in zip(rlxc.interpret(module, inputs, float64=True), rlxc.interpret(folded, inputs, float64=True)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gemm", ["cublaslt", "kernel"])
def test_lowering_carries_the_flags(gemm):
    module = _transposed_products()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch=sm_90 gemm={gemm}}}")
    if gemm == "cublaslt":
        gemms = ops_named(lowered, "rlx_cuda.gemm")
        trans = sorted((op.trans_a.value.data, op.trans_b.value.data) for op in gemms)
        assert trans == [(0, 1), (0, 1), (1, 0), (1, 0)]
        assert {(op.m.value.data, op.n.value.data, op.k.value.data) for op in gemms} == {
            (9, 11, 8), (5, 6, 8), (6, 5, 8), (11, 9, 8)}
    else:
        ks = [k for k in lowered.ops if isinstance(k, rlx_cuda.KernelOp) and "rlx.matmul" in k.source.data]
        srcs = [k.source.data for k in ks]
        assert any("A[(long long)ka * M + row]" in s for s in srcs)
        assert any("B[(long long)col * K + kk]" in s for s in srcs)
        cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], "sm_90", headers=HEADERS)
        assert all(c[:4] == b"\x7fELF" for c in cubins)


def test_exported_attention_still_raises_and_flagged_products_do_not():
    from rlxc.passes.raise_attention import _flags

    module = flagged([2, 3, 4, 8], [2, 3, 5, 8], tr=True)
    (op,) = ops_named(module, "rlx.matmul")
    assert _flags(op)
    assert ops_named(rlxc.run_pipeline(module, "rlx-raise-attention"), "rlx.matmul")

"""rlx-merge-projections and fold_params: gemms sharing an input become one
over joined weights, and the join is computed once from the params; the
interpreter gives the same results before and after both."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import rlxc
from rlxc.dialects import rlx
from rlxc.passes.fold_params import fold_params

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from models import _weights, transformer_encoder_layer


def count(module, op_type) -> int:
    return sum(isinstance(op, op_type) for op in module.walk())


def swiglu_mlp(dtype: str = "f32", rows: int = 6, hidden: int = 16, ffn: int = 40):
    """rms_norm -> gate and up projections -> silu(gate) * up -> down, + x."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, hidden], dtype)
    h = g.rms_norm(x, g.param("norm.gamma", [hidden], dtype))
    gate = g.linear(h, g.param("gate.w", [ffn, hidden], dtype))
    up = g.linear(h, g.param("up.w", [ffn, hidden], dtype))
    y = g.linear(g.mul(g.silu(gate), up), g.param("down.w", [hidden, ffn], dtype))
    module = g.build([g.add(x, y)])
    return module, _weights(module)


def inputs_for(module, rng):
    from rlxc.signature import signature

    out = {}
    for name, t in signature(module).inputs:
        a = rng.standard_normal(tuple(t.get_shape())).astype(np.float32)
        el = str(t.get_element_type())
        out[name] = a.astype(np.float16) if el == "f16" else a
    return out


def assert_same(before, after, params_before, params_after, rng, float64=False):
    inputs = inputs_for(before, rng)
    want = rlxc.interpret(before, inputs, params_before, float64=float64)
    got = rlxc.interpret(after, inputs, params_after, float64=float64)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_bert_layer_qkv_merge_keeps_results():
    module, params = transformer_encoder_layer(batch=2, seq=8, hidden=32, heads=4)
    after = rlxc.run_pipeline(module, "rlx-merge-projections")
    # q, k, v -> one linear; o, fc1, fc2 read other values
    assert count(module, rlx.LinearOp) == 6 and count(after, rlx.LinearOp) == 4
    assert count(after, rlx.SliceOp) == 3 and count(after, rlx.ConcatOp) == 2
    rng = np.random.default_rng(0)
    assert_same(module, after, params, params, rng)
    assert_same(module, after, params, params, rng, float64=True)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_swiglu_gate_up_merge_keeps_results(dtype):
    module, params = swiglu_mlp(dtype)
    if dtype == "f16":
        params = {k: v.astype(np.float16) for k, v in params.items()}
    after = rlxc.run_pipeline(module, "rlx-merge-projections")
    assert count(after, rlx.LinearOp) == 2  # gate+up, down
    (merged,) = [op for op in after.walk() if isinstance(op, rlx.LinearOp) and op.weight.type.get_shape()[0] == 80]
    assert merged.bias is None
    assert_same(module, after, params, params, np.random.default_rng(1))


def test_fold_params_joins_weights_once():
    module, params = transformer_encoder_layer(batch=1, seq=4, hidden=16, heads=2)
    merged = rlxc.run_pipeline(module, "rlx-merge-projections")
    folded, new_params = fold_params(merged, params)
    assert count(folded, rlx.ConcatOp) == 0
    names = {op.param_name.data for op in folded.walk() if isinstance(op, rlx.ParamOp)}
    assert "concat(q.w, k.w, v.w)" in names and "concat(q.bias, k.bias, v.bias)" in names
    assert not {"q.w", "k.w", "v.w"} & names  # the originals are no longer read
    np.testing.assert_array_equal(
        new_params["concat(q.w, k.w, v.w)"], np.concatenate([params["q.w"], params["k.w"], params["v.w"]])
    )
    assert_same(module, folded, params, new_params, np.random.default_rng(2))
    # the optimize pipeline on the folded module merges nothing more
    opt = rlxc.run_pipeline(folded, "rlx-optimize{target=cuda}")
    assert count(opt, rlx.ConcatOp) == 0


def test_fold_params_leaves_what_it_cannot_compute_or_would_grow():
    g = rlxc.GraphBuilder()
    x = g.input("x", [8, 4])
    a, b = g.param("a", [4]), g.param("b", [4])
    grown = g.expand(g.add(a, b), [8, 4])  # add folds; the expand (32 > 8 elements) stays
    module = g.build([g.mul(x, grown), g.neg(g.param("missing", [4]))])
    params = {"a": np.arange(4, dtype=np.float32), "b": np.ones(4, dtype=np.float32)}
    folded, new_params = fold_params(module, params)
    assert count(folded, rlx.ExpandOp) == 1 and count(folded, rlx.AddOp) == 0
    assert count(folded, rlx.NegOp) == 1  # reads a param that was not given
    np.testing.assert_array_equal(new_params["add(a, b)"], params["a"] + params["b"])
    full = {**params, "missing": np.ones(4, dtype=np.float32)}
    inputs = {"x": np.random.default_rng(3).standard_normal((8, 4)).astype(np.float32)}
    for w, got in zip(rlxc.interpret(module, inputs, full), rlxc.interpret(folded, inputs, {**new_params, "missing": full["missing"]})):
        np.testing.assert_array_equal(got, w)


def test_large_inputs_merge_only_where_attention_reads_the_results_in_place():
    # 2 x 1024 rows: Q/K/V feed attention, whose head windows read the merged
    # result in place, so they merge at any size ...
    module, _ = transformer_encoder_layer(batch=2, seq=1024, hidden=16, heads=2)
    assert count(rlxc.run_pipeline(module, "rlx-merge-projections"), rlx.ConcatOp) == 2
    # ... while gate and up (read by a multiply: the slices would be copies)
    # merge only up to max_rows, or with no limit
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 1024, 16])
    gate = g.linear(x, g.param("g.w", [32, 16]))
    up = g.linear(x, g.param("u.w", [32, 16]))
    module = g.build([g.mul(g.silu(gate), up)])
    assert count(rlxc.run_pipeline(module, "rlx-merge-projections"), rlx.ConcatOp) == 0
    assert count(rlxc.run_pipeline(module, "rlx-merge-projections{max_rows=0}"), rlx.ConcatOp) == 1
    assert count(rlxc.run_pipeline(module, "rlx-merge-projections{max_rows=2048}"), rlx.ConcatOp) == 1


def test_optimize_pipeline_merges_for_cuda_only():
    module, _ = transformer_encoder_layer(batch=1, seq=4, hidden=16, heads=2)
    cuda = rlxc.run_pipeline(module, "rlx-optimize{target=cuda}")
    none = rlxc.run_pipeline(module, "rlx-optimize{target=none}")
    assert count(cuda, rlx.ConcatOp) == 2
    assert count(none, rlx.ConcatOp) == 0


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,ffn", [(6, 40), (1, 100), (33, 1376)])
def test_gate_up_halves_are_read_in_place(dtype, rows, ffn):
    """After rlx-optimize{target=cuda} the merged gate/up result is read in
    place: silu(gate) * up is one region whose two inputs are windows on it
    (no slice left), giving the interpreter's bits exactly; its kernel reads
    each half through the merged row's stride and compiles for sm_80 and sm_90."""
    from rlxc.codegen import HEADERS
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime import nvrtc

    module, params = swiglu_mlp(dtype, rows=rows, hidden=16, ffn=ffn)
    if dtype == "f16":
        params = {k: v.astype(np.float16) for k, v in params.items()}
    after = rlxc.run_pipeline(module, "rlx-optimize{target=cuda}")
    assert count(after, rlx.SliceOp) == 0
    (region,) = [op for op in after.walk() if isinstance(op, rlx.ElementwiseRegionOp) and op.windows is not None]
    assert region.input_windows() == {0: (0, ffn), 1: (ffn, ffn)}
    assert region.inputs[0] is region.inputs[1]
    assert region.inputs[0].type.get_shape() == (rows, 2 * ffn)
    # fusion computes silu in the region body (rounding may move by an ulp): against float64, a
    # misplaced window (the gate half read twice) would be off by the values themselves
    inputs = inputs_for(module, np.random.default_rng(2))
    want = rlxc.interpret(module, inputs, params, float64=True)[0].astype(np.float64)
    for m in (after, rlxc.run_pipeline(module, "rlx-merge-projections,rlx-fuse-elementwise")):
        got = rlxc.interpret(m, inputs, params)[0].astype(np.float64)
        assert np.linalg.norm(got - want) / np.linalg.norm(want) < {"f32": 1e-6, "f16": 2e-3, "bf16": 1e-2}[dtype]
    lowered = rlxc.run_pipeline(module, "rlx-cuda")
    (src,) = [k.source.data for k in lowered.walk() if isinstance(k, rlx_cuda.KernelOp) and "in place: columns" in k.source.data]
    w = 4 if dtype == "f32" else 8  # elements per 16-byte vector
    how = "16-byte vectors" if ffn % w == 0 else "one element per access"
    assert f"// input 0 in place: columns 0..{ffn} of {2 * ffn}, {how}" in src
    assert f"// input 1 in place: columns {ffn}..{2 * ffn} of {2 * ffn}, {how}" in src
    if ffn % w == 0:  # in vectors: the up half offset by ffn / w, rows 2 * ffn / w vectors apart
        assert f"% {ffn // w}u) + {ffn // w}u)]" in src
        if rows > 1:
            assert f"(w / {ffn // w}u) * {2 * ffn // w}u" in src
    else:
        assert f"% {ffn}u) + {ffn}u]" in src  # the up half, offset by ffn ...
        if rows > 1:
            assert f"(i / {ffn}u) * {2 * ffn}u" in src  # ... its rows the merged row's stride apart
    for arch in ("sm_80", "sm_90"):
        assert nvrtc.compile_cubin(src, arch, headers=HEADERS)[:4] == b"\x7fELF"


def test_windowed_region_is_not_merged_again_or_taken_as_a_prologue():
    """A second rlx-fuse-elementwise leaves a windowed region as it is (merged
    into a bigger region it would read its inputs whole), and
    rlx-fuse-reductions does not take it as a row op's prologue."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 32])
    w = g.param("w", [64, 32])
    y = g.linear(x, w)
    a, b = g.slice(y, [0, 0], [4, 32]), g.slice(y, [0, 32], [4, 64])
    s = g.softmax(g.exp(g.mul(a, b)))
    module = g.build([s])
    once = rlxc.run_pipeline(module, "rlx-fuse-elementwise,rlx-fuse-reductions")
    twice = rlxc.run_pipeline(once, "rlx-fuse-elementwise,rlx-fuse-reductions")
    for m in (once, twice):
        assert count(m, rlx.SliceOp) == 0 and count(m, rlx.FusionOp) == 0
        (region,) = [op for op in m.walk() if isinstance(op, rlx.ElementwiseRegionOp)]
        assert region.input_windows() == {0: (0, 32), 1: (32, 32)}
    rng = np.random.default_rng(3)
    inputs, params = {"x": rng.standard_normal((4, 32)).astype(np.float32)}, {"w": rng.standard_normal((64, 32)).astype(np.float32)}
    for m in (once, twice):
        np.testing.assert_array_equal(rlxc.interpret(m, inputs, params)[0], rlxc.interpret(module, inputs, params)[0])


def test_fold_params_of_a_value_returned_and_read_by_another_fold():
    """A param-only value both returned (so folded on its own) and read by a
    later param-only op: the later fold reads the new param's value (it
    raised "param 'neg(w)' was not given"); both fold, values as before."""
    g = rlxc.GraphBuilder()
    x, w = g.input("x", [8]), g.param("w", [8])
    a = g.neg(w)
    module = g.build([a, g.add(g.exp(a), x), g.mul(g.tanh(a), a)])
    rng = np.random.default_rng()
    params = {"w": rng.standard_normal(8).astype(np.float32)}
    folded, new_params = fold_params(module, params)
    names = {op.param_name.data for op in folded.walk() if isinstance(op, rlx.ParamOp)}
    assert {"neg(w)", "exp(neg(w))", "mul(tanh(neg(w)), neg(w))"} <= names, names
    assert count(folded, rlx.NegOp) == count(folded, rlx.ExpOp) == count(folded, rlx.TanhOp) == 0
    inputs = {"x": rng.standard_normal(8).astype(np.float32)}
    for got, want in zip(rlxc.interpret(folded, inputs, new_params), rlxc.interpret(module, inputs, params)):
        np.testing.assert_array_equal(got, want)
    w64 = params["w"].astype(np.float64)
    np.testing.assert_allclose(rlxc.interpret(folded, inputs, new_params)[1], np.exp(-w64) + inputs["x"], rtol=1e-6)

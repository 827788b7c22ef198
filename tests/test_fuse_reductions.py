"""rlx-fuse-reductions and rlx.fusion without a GPU: what fuses (from the
ops' fusion kinds and TakesPrologue), that the fused module computes what
the unfused one does (float64 interpreter against numpy references), and
that every fused row kernel compiles with NVRTC in each row form, dtype and
prologue-input kind."""

from __future__ import annotations

import numpy as np
import pytest

import rlxc
from rlxc.codegen import HEADERS
from rlxc.dialects import rlx, rlx_cuda
from rlxc.frontends.builder import GraphBuilder
from rlxc.passes.pipelines import run_pipeline
from rlxc.runtime import nvrtc


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path / "cache"))


def ops_named(module, name):
    return [o for o in module.walk() if o.name == name]


def residual_softmax_graph(dt: str, n: int, rows=(2, 3)):
    """add -> layer_norm (the sum also returned, doubled), rms_norm of a
    gelu, and softmax of x * 0.125 + a broadcast mask."""
    g = GraphBuilder()
    x = g.input("x", [*rows, n], dt)
    r = g.input("r", [*rows, n], dt)
    m = g.input("m", [rows[0], 1, n], dt)
    s = x + r
    y = g.layer_norm(s, g.param("g", [n], dt), g.param("b", [n], dt))
    z = g.softmax(x * g.constant(0.125, dt) + m)
    w = g.rms_norm(g.gelu(x), g.param("g2", [n], dt))
    return g.build([y, s * g.constant(2.0, dt), z, w])


def test_fuses_what_the_traits_say():
    m = run_pipeline(residual_softmax_graph("f32", 96), "rlx-optimize")
    fusions = ops_named(m, "rlx.fusion")
    roots = sorted(f.root().name for f in fusions)  # pyright: ignore[reportAttributeAccessIssue]
    assert roots == ["rlx.layer_norm", "rlx.rms_norm", "rlx.softmax"]
    # the residual sum is the layer_norm fusion's second result; no region computes it again
    norm = next(f for f in fusions if f.root().name == "rlx.layer_norm")  # pyright: ignore[reportAttributeAccessIssue]
    assert len(norm.results) == 2
    top = [o for o in m.walk() if isinstance(o, rlx.ElementwiseRegionOp) and o.parent_op().name == "func.func"]  # pyright: ignore[reportOptionalMemberAccess]
    assert len(top) == 1 and top[0].inputs[0] is norm.results[1]  # the doubling reads the fusion's sum


def test_numpy_target_does_not_fuse():
    m = run_pipeline(residual_softmax_graph("f32", 96), "rlx-optimize{target=none}")
    assert not ops_named(m, "rlx.fusion")


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
def test_fused_module_interprets_as_the_graph(dt):
    rng = np.random.default_rng()
    graph = residual_softmax_graph(dt, 40)
    # the pass alone changes nothing the interpreter sees: regions before and after it
    regions = run_pipeline(graph, "rlx-unfuse{target=cuda},canonicalize,rlx-fuse-elementwise")
    fused = run_pipeline(regions, "rlx-fuse-reductions")
    assert ops_named(fused, "rlx.fusion")
    n = 40
    x, r = (rng.standard_normal((2, 3, n)).astype(np.float32) for _ in range(2))
    mask = rng.standard_normal((2, 1, n)).astype(np.float32)
    params = {"g": rng.standard_normal(n).astype(np.float32), "b": rng.standard_normal(n).astype(np.float32),
              "g2": rng.standard_normal(n).astype(np.float32)}
    cast = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}[dt]
    inputs = {"x": x.astype(cast), "r": r.astype(cast), "m": mask.astype(cast)}
    params = {k: v.astype(cast) for k, v in params.items()}
    want = rlxc.interpret(regions, inputs, params)
    got = rlxc.interpret(fused, inputs, params)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g, np.float64), np.asarray(w, np.float64))
    if dt == "f32":  # and both against numpy in float64
        s = (x + r).astype(np.float64)  # the sum is an f32 tensor (rounded) before the norm reads it
        ln = (s - s.mean(-1, keepdims=True)) / np.sqrt(s.var(-1, keepdims=True) + 1e-5) * params["g"] + params["b"]
        t = (x * np.float32(0.125) + mask).astype(np.float64)
        sm = np.exp(t - t.max(-1, keepdims=True))
        sm /= sm.sum(-1, keepdims=True)
        # f32 results: one rounding of each output, scaled by the output's size
        np.testing.assert_allclose(got[0], ln, rtol=1e-6, atol=1e-6 * np.abs(ln).max())
        np.testing.assert_allclose(got[1], 2 * s, rtol=1e-6)
        np.testing.assert_allclose(got[2], sm, rtol=1e-6, atol=1e-6 * np.abs(sm).max())


def _compile_all(module, arch="sm_90"):
    ks = [o for o in module.ops if isinstance(o, rlx_cuda.KernelOp)]
    cubins = nvrtc.compile_many([(f"{k.sym_name.data}.cu", k.source.data) for k in ks], arch, headers=HEADERS)
    assert all(c[:4] == b"\x7fELF" for c in cubins)
    return ks


def _forms(module):
    return {line.split("row form: ")[1].split(" ")[0] for k in module.ops if isinstance(k, rlx_cuda.KernelOp)
            for line in k.source.data.splitlines() if "row form:" in line and "rlx.fusion" in k.source.data}


@pytest.mark.parametrize("arch,grid,forms", [("sm_80", True, {"warp", "block", "smem", "grid"}),
                                             ("sm_80", False, {"warp", "block", "smem", "looping"}),
                                             ("sm_90", True, {"warp", "block", "cluster"})])
@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
def test_fused_kernels_compile_in_every_form(dt, arch, grid, forms, monkeypatch):
    """Row lengths that pick the warp, block, smem and grid forms, or with
    rows.GRID_ROWS off the looping form in place of the grid (on sm_90 the
    cluster form in place of the last two), with row-, scalar- and
    element-indexed prologue inputs, odd lengths too."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "GRID_ROWS", grid)
    g = GraphBuilder()
    outs = []
    for n in (7, 128, 1000, 4096, 20001, 90001):  # 20001: past the block form (rows.BLOCK_ROW_MAX)
        x = g.input(f"x{n}", [3, n], dt)
        r = g.input(f"r{n}", [3, n], dt)
        per_row = g.input(f"s{n}", [3, 1], dt)
        outs += [*(g.layer_norm(x + r, g.param(f"g{n}", [n], dt), g.param(f"b{n}", [n], dt)),),
                 g.softmax(x * per_row), g.rms_norm(g.exp(x) - r, g.param(f"h{n}", [n], dt))]
    x = g.input("x3", [2, 3, 4, 8], dt)
    cross = g.input("c", [3, 1, 8], dt)  # broadcast inside the row axes of a 2-axis norm: element-indexed
    outs.append(g.layer_norm(x + cross, g.param("g3", [4, 8], dt), g.param("b3", [4, 8], dt)))
    m = run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
    assert len(ops_named(m, "rlx_cuda.launch")) == len(outs)  # one kernel per fused row op
    assert forms <= _forms(m)
    _compile_all(m, arch)


def test_region_that_also_computes_gamma_is_not_fused_and_compiles():
    """A region computing both the row and the norm's gamma (one row of 32:
    both have the region's shape) stays a region: a fusion's kernel takes
    its prologue for the row only."""
    g = GraphBuilder()
    x = g.input("x", [32])
    e = g.exp(x)  # one region yields both e (the row) and -e (gamma)
    module = g.build([g.layer_norm(e, g.neg(e), g.param("b", [32])), g.rms_norm(g.abs(g.input("z", [4, 32])), g.param("g", [32]))])
    fused = run_pipeline(module, "rlx-optimize")
    roots = [f.root().name for f in ops_named(fused, "rlx.fusion")]  # pyright: ignore[reportAttributeAccessIssue]
    assert roots == ["rlx.rms_norm"]
    _compile_all(run_pipeline(module, "rlx-cuda"))


def test_prologue_narrower_than_the_row_compiles():
    """f16 read into an f32 row (a cast in the prologue): the accesses move 4
    elements (16 bytes of the f32 row, 8 of the f16 input), in every form."""
    g = GraphBuilder()
    outs = [g.softmax(g.cast(g.exp(g.input(f"x{n}", [4, n], "f16")), "f32")) for n in (256, 4096, 32768)]
    m = run_pipeline(g.build(outs), "rlx-cuda")
    ks = _compile_all(m)
    assert len(ks) == 3 and _forms(m) == {"warp", "block", "cluster"}
    for k in ks:
        assert "4 elements per access" in k.source.data
        assert "union { uint2 raw; unsigned short e[4]; unsigned int w[2]; }" in k.source.data  # 4 halves: 8 bytes

"""`rlx.im2col` and `rlx-conv-to-gemm`: the op against a loop reference, the
rewrite against a direct convolution in float64 (interpreted, and on the GPU
as cuBLASLt gemms), what the pass leaves alone, and the im2col kernels
through NVRTC."""

from __future__ import annotations

import numpy as np
import pytest

import reference as R
import rlxc
from rlxc.dialects import rlx
from rlxc.dialects.rlx.base import f64_attr, i64_array, i64_attr
from xdsl.dialects.builtin import UnitAttr
from rlxc.dialects.types import shape_of
from rlxc.driver import WEIGHT_PASSES
from rlxc.passes import conv_to_gemm
from rlxc.passes.fold_params import fold_params
from test_codegen import ARCHS, compile_all, kernels_of

FLOATS = ["f32", "f16", "bf16"]


@pytest.fixture
def rng() -> np.random.Generator:
    seed = np.random.SeedSequence().entropy
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)

#: (x shape, weight shape, conv2d keyword arguments)
CASES = [
    pytest.param((2, 3, 6, 7), (4, 3, 3, 3), {}, id="basic"),
    pytest.param((2, 3, 9, 8), (4, 3, 3, 3), {"stride": 2, "padding": 1}, id="stride2-pad1"),
    pytest.param((1, 3, 7, 6), (2, 3, 3, 2), {"padding": (1, 0, 2, 1)}, id="pad-asym"),
    pytest.param((2, 2, 8, 9), (3, 2, 3, 3), {"dilation": 2, "padding": 2}, id="dilation2"),
    pytest.param((2, 3, 7, 8), (2, 3, 2, 3), {"stride": (2, 1), "dilation": (1, 2)}, id="rect"),
    pytest.param((2, 5, 6, 7), (4, 5, 1, 1), {}, id="plain-1x1"),
    pytest.param((2, 5, 7, 7), (4, 5, 1, 1), {"stride": 2}, id="1x1-stride2"),
    pytest.param((1, 3, 17, 15), (8, 3, 7, 7), {"stride": 2, "padding": 3}, id="stem-7x7"),
    pytest.param((3, 6, 1, 20), (5, 6, 1, 5), {"padding": (0, 2, 0, 2)}, id="conv1d"),
]


def _pads(p):
    return (p,) * 4 if isinstance(p, int) else (tuple(p) * 2 if len(p) == 2 else tuple(p))


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def im2col_reference(x, kernel, stride, padding, dilation):
    """NHWC x -> [n, oh, ow, kh*kw*c] by loops over every element, from the definition."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw) = kernel, stride, padding, dilation
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, oh, ow, kh * kw * c), dtype=x.dtype)
    for oy in range(oh):
        for ox in range(ow):
            for ky in range(kh):
                for kx in range(kw):
                    iy, ix = oy * sh - pt + ky * dh, ox * sw - pl + kx * dw
                    if 0 <= iy < h and 0 <= ix < w:
                        for ci in range(c):
                            out[:, oy, ox, (ky * kw + kx) * c + ci] = x[:, iy, ix, ci]
    return out


def _conv_module(xs, ws, kw, dtype, bias=True, relu=False):
    g = rlxc.GraphBuilder()
    y = g.conv2d(g.input("x", list(xs), dtype), g.param("w", list(ws), dtype),
                 g.param("b", [ws[0]], dtype) if bias else None, **kw)  # fmt: skip
    return g.build([g.relu(y) if relu else y])


def _conv_inputs(rng, xs, ws, dtype):
    x = R.random_array(rng, xs, dtype)
    params = {"w": R.random_array(rng, ws, dtype, -1, 1), "b": R.random_array(rng, (ws[0],), dtype, -1, 1)}
    return x, params


@pytest.mark.parametrize("xs,ws,kw", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_im2col_matches_loops(xs, ws, kw, dtype, rng):
    xs = (xs[0], xs[2], xs[3], xs[1])  # NHWC
    x = R.random_array(rng, xs, dtype)
    g = rlxc.GraphBuilder()
    g_out = g.im2col(g.input("x", list(xs), dtype), ws[2:], kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1))
    (got,) = rlxc.interpret(g.build([g_out]), {"x": x})
    want = im2col_reference(x, ws[2:], _pair(kw.get("stride", 1)), _pads(kw.get("padding", 0)), _pair(kw.get("dilation", 1)))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("xs,ws,kw", CASES[:4] + CASES[7:8])
@pytest.mark.parametrize("dtype", FLOATS)
def test_im2col_of_an_nchw_input_with_zero_columns(xs, ws, kw, dtype, rng):
    """`channels_first` reads NCHW x (the same patches as of x transposed);
    `columns` appends zero columns to each patch."""
    x = R.random_array(rng, xs, dtype)
    k = ws[2] * ws[3] * xs[1]
    g = rlxc.GraphBuilder()
    y = g.im2col(g.input("x", list(xs), dtype), ws[2:], kw.get("stride", 1), kw.get("padding", 0),
                 kw.get("dilation", 1), channels_first=True, columns=k + 5)  # fmt: skip
    (got,) = rlxc.interpret(g.build([y]), {"x": x})
    want = im2col_reference(np.moveaxis(x, 1, 3), ws[2:], _pair(kw.get("stride", 1)), _pads(kw.get("padding", 0)),
                            _pair(kw.get("dilation", 1)))  # fmt: skip
    np.testing.assert_array_equal(got[..., :k], want)
    assert got.shape[-1] == k + 5 and not got[..., k:].any()


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("xs,ws,kw", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rewritten_conv_matches_direct_convolution(xs, ws, kw, dtype, bias, rng):
    """The rewritten graph (interpreted) against a float64 loop convolution."""
    m = _conv_module(xs, ws, kw, dtype, bias)
    rewritten = rlxc.run_pipeline(m, "rlx-conv-to-gemm")
    ops = [op.name for op in rewritten.walk()]
    assert "rlx.conv2d" not in ops and "rlx.linear" in ops
    assert ("rlx.im2col" in ops) != (ws[2:] == (1, 1) and kw.get("stride", 1) == 1)
    x, params = _conv_inputs(rng, xs, ws, dtype)
    (got,) = rlxc.interpret(rewritten, {"x": x}, params)
    want = R.conv2d(R.wide(x), R.wide(params["w"]), R.wide(params["b"]) if bias else None,
                    stride=_pair(kw.get("stride", 1)), padding=_pads(kw.get("padding", 0)),
                    dilation=_pair(kw.get("dilation", 1)))  # fmt: skip
    R.assert_close(got, want, dtype, what="conv2d as a gemm")


def test_what_the_pass_leaves_alone(monkeypatch):
    """Grouped convolutions and patch matrices over the limit keep the direct
    kernel; target=none never sees the pass; the cuda pipeline runs it."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 4, 16, 16])
    grouped = g.conv2d(x, g.param("wg", [8, 2, 3, 3]), padding=1, groups=2)
    big = g.conv2d(x, g.param("w", [8, 4, 3, 3]), padding=1)  # patches: 2 * 256 * 36 * 4 bytes
    m = g.build([grouped, big])
    assert [op.name for op in rlxc.run_pipeline(m, "rlx-conv-to-gemm{max_col_bytes=73727}").walk()].count("rlx.conv2d") == 2
    assert [op.name for op in rlxc.run_pipeline(m, "rlx-conv-to-gemm{max_col_bytes=73728}").walk()].count("rlx.conv2d") == 1
    monkeypatch.setattr(conv_to_gemm, "MAX_COL_BYTES", 73727)
    assert [op.name for op in rlxc.run_pipeline(m, "rlx-conv-to-gemm").walk()].count("rlx.conv2d") == 2
    monkeypatch.undo()
    assert [op.name for op in rlxc.run_pipeline(m, "rlx-optimize{target=none}").walk()].count("rlx.conv2d") == 2
    g = rlxc.GraphBuilder()  # no elements: no gemm of zero rows or zero depth
    empty = [g.conv2d(g.input("e", [0, 4, 5, 5]), g.param("we", [8, 4, 3, 3])),
             g.conv2d(g.input("z", [1, 0, 5, 5]), g.param("wz", [8, 0, 3, 3]), g.param("bz", [8]))]
    assert [op.name for op in rlxc.run_pipeline(g.build(empty), "rlx-conv-to-gemm").walk()].count("rlx.conv2d") == 2
    fused = [op.name for op in rlxc.run_pipeline(m, "rlx-optimize{target=cuda}").walk()]
    assert fused.count("rlx.conv2d") == 1 and fused.count("rlx.im2col") == 1 and fused.count("rlx.linear") == 1


def test_a_resnet_block_runs_channels_last():
    """Two convolutions with ReLUs and a residual add, then a pool: the
    transposes between the convolutions cancel; the ReLUs after a bias are
    gemm epilogues (bias_relu), the residual add is the second gemm's C
    matrix (no elementwise kernel is left), the pool runs channels last and
    only its result is transposed back to NCHW."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 8, 10, 10], "f16")
    y = g.relu(g.conv2d(x, g.param("w", [16, 8, 3, 3], "f16"), g.param("b", [16], "f16"), padding=1))
    z = g.relu(g.add(g.conv2d(y, g.param("w2", [16, 16, 1, 1], "f16"), g.param("b2", [16], "f16")), y))
    rng = np.random.default_rng(0)
    weights = {n: rng.standard_normal(s).astype(np.float16) for n, s in (("w", (16, 8, 3, 3)), ("b", (16,)),
                                                                         ("w2", (16, 16, 1, 1)), ("b2", (16,)))}
    # as rlxc.compile does: the OHWI weights computed once
    module, _ = fold_params(rlxc.run_pipeline(g.build([g.max_pool2d(z, 2)]), WEIGHT_PASSES), weights)
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    gemms = [op for op in lowered.walk() if op.name == "rlx_cuda.gemm"]
    assert [(p["m"].value.data, p["n"].value.data, p["k"].value.data, p["epilogue"].data)  # pyright: ignore
            for p in (op.properties for op in gemms)] == [(400, 16, 72, "bias_relu"), (400, 16, 16, "bias_relu")]
    assert [op.residual is not None for op in gemms] == [False, True]  # pyright: ignore
    first = gemms[0].results[0]
    assert gemms[1].operands[0] is first and gemms[1].operands[3] is first  # relu(conv1) is both A and C
    names = [k.entry.data.split("_")[1] for k in kernels_of(lowered)]
    assert sorted(names) == ["im2col", "maxpool", "transpose", "transpose"], names


def test_transposes_move_only_through_elementwise_ops_of_one_layout():
    """An add of a convolution's output and an NCHW input keeps its transpose
    (the input is not channels last); sinking never runs without a conv."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 4, 6, 6])
    y = g.add(g.conv2d(x, g.param("w", [4, 4, 3, 3]), padding=1), x)
    names = [op.name for op in rlxc.run_pipeline(g.build([g.relu(y)]), "rlx-conv-to-gemm,canonicalize").walk()]
    # the input's, the weight's and the result's
    assert names.count("rlx.transpose") == 3 and names.index("rlx.add") > names.index("rlx.linear")
    g = rlxc.GraphBuilder()
    t = g.transpose(g.input("a", [2, 3, 4, 5]), [0, 3, 1, 2])
    names = [op.name for op in rlxc.run_pipeline(g.build([g.relu(t)]), "rlx-conv-to-gemm").walk()]
    assert names.index("rlx.relu") > names.index("rlx.transpose")
    # on fused IR, a region (an elementwise op with a body) keeps its place
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 4, 6, 6])
    y = g.exp(g.relu(g.conv2d(x, g.param("w", [4, 4, 3, 3]), padding=1)))
    fused = rlxc.run_pipeline(g.build([y]), "rlx-optimize{target=none}")
    names = [op.name for op in rlxc.run_pipeline(fused, "rlx-conv-to-gemm").walk()]
    assert "rlx.elementwise_region" in names and "rlx.linear" in names


#: (kernel, stride, padding, dilation, ceil_mode, count_include_pad)
POOLS = [
    pytest.param(3, 2, 1, 1, False, False, id="resnet-stem"),
    pytest.param((2, 3), (1, 2), (1, 0, 0, 2), 1, False, True, id="rect-asym"),
    pytest.param(3, 2, 1, (2, 1), True, True, id="dilated-ceil"),
    pytest.param((6, 7), 1, 0, 1, False, False, id="global"),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil,incl", POOLS)
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_channels_last_pools_match_loops(kind, kernel, stride, padding, dilation, ceil, incl, dtype, rng):
    """A channels-last pool of x transposed to NHWC is the loop reference's
    NCHW pool of x, transposed."""
    x = R.random_array(rng, (2, 3, 6, 7), dtype)
    g = rlxc.GraphBuilder()
    xt = g.input("x", [2, 6, 7, 3], dtype)
    y = (g.max_pool2d(xt, kernel, stride, padding, dilation, ceil, channels_last=True) if kind == "max" else
         g.avg_pool2d(xt, kernel, stride, padding, incl, dilation, ceil, channels_last=True))  # fmt: skip
    (got,) = rlxc.interpret(g.build([y]), {"x": np.ascontiguousarray(np.moveaxis(x, 1, 3))})
    k, s, p, d = _pair(kernel), _pair(stride), _pads(padding), _pair(dilation)
    want = (R.max_pool2d(R.wide(x), k, s, p, d, ceil) if kind == "max" else
            R.avg_pool2d(R.wide(x), k, s, p, incl, d, ceil))  # fmt: skip
    R.assert_close(got, np.moveaxis(want, 1, 3), dtype, what=f"{kind}_pool2d channels last")


def conv_reference_nhwc(x, w, b, stride, padding, dilation, groups):
    """NHWC x, OIHW w -> NHWC, in float64: reference.conv2d's loops over the
    taps (from the definition) on the NCHW layout of the same values."""
    y = R.conv2d(np.moveaxis(np.asarray(x, np.float64), 3, 1), w, b, _pair(stride), _pads(padding), _pair(dilation),
                 groups)
    return np.moveaxis(y, 1, 3)


#: (NHWC x shape, weight shape, conv2d keyword arguments) of convolutions left direct
NHWC_CASES = [
    pytest.param((2, 7, 6, 16), (16, 1, 3, 3), {"padding": 1, "groups": 16}, id="depthwise-16"),
    pytest.param((1, 9, 8, 32), (32, 1, 3, 3), {"stride": 2, "padding": 1, "groups": 32}, id="depthwise-stride2"),
    pytest.param((2, 6, 7, 6), (6, 1, 3, 2), {"padding": (1, 0, 2, 1), "dilation": (2, 1), "groups": 6}, id="depthwise-6"),
    pytest.param((1, 5, 6, 5), (5, 1, 5, 5), {"padding": 2, "groups": 5}, id="depthwise-odd"),
    pytest.param((2, 5, 5, 4), (8, 1, 3, 3), {"padding": 1, "groups": 4}, id="multiplier-2"),
    pytest.param((2, 6, 5, 8), (6, 4, 3, 3), {"stride": (2, 1), "padding": 1, "groups": 2}, id="grouped"),
]


@pytest.mark.parametrize("hwio", [False, True], ids=["oihw", "hwio"])
@pytest.mark.parametrize("xs,ws,kw", NHWC_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_channels_last_convs_match_loops(xs, ws, kw, dtype, hwio, rng):
    """rlx.conv2d channels_last (NHWC in and out, an OIHW or HWIO weight)
    in the interpreter against loops over the taps in float64."""
    x = R.random_array(rng, xs, dtype)
    w, b = R.random_array(rng, ws, dtype, -1, 1), R.random_array(rng, (ws[0],), dtype, -1, 1)
    g = rlxc.GraphBuilder()
    wt = np.ascontiguousarray(np.transpose(w, (2, 3, 1, 0))) if hwio else w
    y = _conv_op(g, g.input("x", list(xs), dtype), g.param("w", list(wt.shape), dtype), g.param("b", [ws[0]], dtype), kw,
                 hwio=hwio)
    (got,) = rlxc.interpret(g.build([y]), {"x": x}, {"w": wt, "b": b})
    want = conv_reference_nhwc(R.wide(x), R.wide(w), R.wide(b), kw.get("stride", 1), kw.get("padding", 0),
                               kw.get("dilation", 1), kw["groups"])  # fmt: skip
    R.assert_close(got, want, dtype, what="channels-last conv2d")


def _conv_op(g, x, w, b, kw, last=True, bounds=None, hwio=False):
    """rlx.conv2d through the op itself (channels_last, an HWIO weight, clamp bounds)."""
    props = {"stride": i64_array(list(_pair(kw.get("stride", 1)))), "padding": i64_array(list(_pads(kw.get("padding", 0)))),
             "dilation": i64_array(list(_pair(kw.get("dilation", 1)))), "groups": i64_attr(kw.get("groups", 1))}
    if last:
        props["channels_last"] = UnitAttr()
    if hwio:
        props["weight_hwio"] = UnitAttr()
    for name, v in (bounds or {}).items():
        props[name] = f64_attr(v)
    return g._op(rlx.Conv2dOp, [x, w, b], props)


@pytest.mark.parametrize("last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_clamps_match_loops(dtype, last, rng):
    """input_min/input_max clamp each input element before the window reads
    it (the zero padding is not clamped) and clamp_min/clamp_max the result
    after the bias: against loops in float64 on the clamped input."""
    xs, ws, kw = (2, 6, 7, 8), (8, 1, 3, 3), {"padding": 1, "groups": 8, "stride": (2, 1)}
    x = R.random_array(rng, xs, dtype, -3, 8)
    w, b = R.random_array(rng, ws, dtype, -1, 1), R.random_array(rng, (8,), dtype, -1, 1)
    bounds = {"input_min": 0.5, "input_max": 6.0, "clamp_min": -0.25, "clamp_max": 1.5}
    g = rlxc.GraphBuilder()
    xin = g.input("x", list(xs) if last else [xs[0], xs[3], xs[1], xs[2]], dtype)
    y = _conv_op(g, xin, g.param("w", list(ws), dtype), g.param("b", [8], dtype), kw, last, bounds)
    xfeed = x if last else np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))
    (got,) = rlxc.interpret(g.build([y]), {"x": xfeed}, {"w": w, "b": b})
    want = np.clip(conv_reference_nhwc(np.clip(R.wide(x), 0.5, 6.0), R.wide(w), R.wide(b), (2, 1), 1, 1, 8), -0.25, 1.5)
    R.assert_close(got if last else np.transpose(got, (0, 2, 3, 1)), want, dtype, what="clamped conv2d")


def test_clamps_fold_only_where_exact():
    """ReLU, max and min with splat constants fold into a direct conv's
    bounds; not a min before a max on the result (the bounds are max then
    min), not a clamp another op also reads, not a broadcasting or
    per-channel bound, not a NaN bound; a min above an input_min it is
    smaller than does not fold."""
    def fold(build):
        g = rlxc.GraphBuilder()
        x = g.input("x", [1, 8, 6, 6])
        out = build(g, x, g.param("w", [8, 1, 3, 3]))
        m = g.build(out if isinstance(out, list) else [out])
        return [op for op in rlxc.run_pipeline(m, "rlx-conv-to-gemm").walk() if op.name.startswith("rlx.")
                and op.name not in ("rlx.param", "rlx.constant")]

    def conv(g, x, w):
        return g.conv2d(x, w, padding=1, groups=8)

    def c(g, v):
        return g.constant(np.float32(v), "f32")

    ops = fold(lambda g, x, w: g.minimum(g.relu(conv(g, x, w)), c(g, 6)))
    assert [o.name for o in ops] == ["rlx.conv2d"] and ops[0].bounds() == (None, None, 0.0, 6.0)
    ops = fold(lambda g, x, w: g.maximum(g.minimum(conv(g, x, w), c(g, 6)), c(g, 0)))  # min then max: the max stays
    assert [o.name for o in ops] == ["rlx.conv2d", "rlx.maximum"] and ops[0].bounds() == (None, None, None, 6.0)
    ops = fold(lambda g, x, w: [g.relu(y := conv(g, x, w)), y])  # the conv's result is read twice
    assert [o.name for o in ops] == ["rlx.conv2d", "rlx.relu"] and ops[0].bounds() == (None,) * 4
    ops = fold(lambda g, x, w: g.minimum(conv(g, x, w), g.constant(np.full((1, 8, 1, 1), 6, np.float32), "f32")))
    assert ops[0].bounds() == (None, None, None, 6.0)  # a splat of ones-shape broadcasts nothing: folds
    ops = fold(lambda g, x, w: g.minimum(conv(g, x, w), g.constant(np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1), "f32")))
    assert [o.name for o in ops] == ["rlx.conv2d", "rlx.minimum"]  # per channel: stays
    ops = fold(lambda g, x, w: g.minimum(conv(g, x, w), c(g, np.nan)))
    assert [o.name for o in ops] == ["rlx.conv2d", "rlx.minimum"]
    ops = fold(lambda g, x, w: conv(g, g.minimum(g.relu(x), c(g, 6)), w))  # ReLU6 before: the input's bounds
    assert [o.name for o in ops] == ["rlx.conv2d"] and ops[0].bounds() == (0.0, 6.0, None, None)
    ops = fold(lambda g, x, w: [conv(g, r := g.relu(x), w), r])  # the clamp is read twice: stays
    assert [o.name for o in ops] == ["rlx.relu", "rlx.conv2d"]
    ops = fold(lambda g, x, w: conv(g, g.maximum(g.minimum(x, c(g, -1)), c(g, 0)), w))  # max(min(x, -1), 0) = 0
    assert [o.name for o in ops] == ["rlx.minimum", "rlx.conv2d"] and ops[1].bounds() == (0.0, None, None, None)
    inputs = {"x": np.random.default_rng(2).uniform(-9, 9, (1, 8, 6, 6)).astype(np.float32)}
    for build in (lambda g, x, w: conv(g, g.maximum(g.minimum(x, c(g, -1)), c(g, 0)), w),
                  lambda g, x, w: g.maximum(g.minimum(conv(g, x, w), c(g, 2)), c(g, 0)),
                  lambda g, x, w: g.minimum(g.relu(conv(g, g.minimum(g.relu(x), c(g, 6)), w)), c(g, 6))):
        g = rlxc.GraphBuilder()
        m = g.build([build(g, g.input("x", [1, 8, 6, 6]), g.param("w", [8, 1, 3, 3]))])
        params = {"w": np.random.default_rng(3).uniform(-1, 1, (8, 1, 3, 3)).astype(np.float32)}
        (want,) = rlxc.interpret(m, inputs, params, float64=True)
        (got,) = rlxc.interpret(rlxc.run_pipeline(m, "rlx-conv-to-gemm"), inputs, params, float64=True)
        np.testing.assert_array_equal(got, want)


def _mobilenet_block(batch, dtype, c=16, expand=6, stride=2, residual=False):
    """MobileNetV2's inverted residual in small: a 1x1 expansion, ReLU6, a
    3x3 depthwise convolution, ReLU6, a 1x1 projection (and the residual
    add where the shapes allow), between an NCHW input and output."""
    g = rlxc.GraphBuilder()
    p = lambda name, shape: g.param(name, shape, dtype)  # noqa: E731
    x = g.input("x", [batch, c, 12, 11], dtype)
    e = c * expand
    six = g.constant(np.float32(6.0), dtype)
    relu6 = lambda v: g.minimum(g.relu(v), six)  # noqa: E731
    h = relu6(g.conv2d(x, p("e.w", [e, c, 1, 1]), p("e.b", [e])))
    h = relu6(g.conv2d(h, p("d.w", [e, 1, 3, 3]), p("d.b", [e]), stride=stride, padding=1, groups=e))
    y = g.conv2d(h, p("p.w", [c, e, 1, 1]), p("p.b", [c]))
    return g.build([g.add(y, x) if residual else y])


@pytest.mark.parametrize("residual", [False, True])
def test_a_mobilenet_block_moves_no_layout_but_in_and_out(residual):
    """On cuda the depthwise convolution between two 1x1 gemms runs channels
    last: the only activation transposes left are the block's input and
    output; the rewritten graph computes what the NCHW one does."""
    module = _mobilenet_block(2, "f32", stride=1 if residual else 2, residual=residual)
    lowered = rlxc.run_pipeline(module, "rlx-optimize{target=cuda}")
    ops = list(lowered.walk())
    (dw,) = [op for op in ops if isinstance(op, rlx.Conv2dOp)]
    assert dw.channels_last is not None and _int_groups(dw) == 96
    # ReLU6 (min(relu(x), 6)) on both sides: the expansion's ReLU is its gemm's epilogue, its min
    # the depthwise conv's input bound; the depthwise conv's own ReLU6 its result's bounds
    assert dw.bounds() == (None, 6.0, 0.0, 6.0) and not [op for op in ops if isinstance(op, rlx.MinimumOp)]
    # its weight HWIO: a transpose of the param (computed once at compile time)
    assert dw.weight_hwio is not None and shape_of(dw.weight.type) == (3, 3, 1, 96)
    assert isinstance(dw.weight.owner, rlx.TransposeOp) and isinstance(dw.weight.owner.input.owner, rlx.ParamOp)
    moved = [op for op in ops if isinstance(op, rlx.TransposeOp) and not isinstance(op.input.owner, rlx.ParamOp)]
    assert len(moved) == 2  # in and out (the residual add is of the NCHW input and output)
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 16, 12, 11)).astype(np.float32)
    params = {n: rng.uniform(-0.5, 0.5, shape_of(op.result.type)).astype(np.float32)
              for op in module.walk() if isinstance(op, rlx.ParamOp) for n in [op.param_name.data]}  # pyright: ignore
    (want,) = rlxc.interpret(module, {"x": x}, params, float64=True)
    (got,) = rlxc.interpret(lowered, {"x": x}, params, float64=True)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    with pytest.MonkeyPatch.context() as mp:  # off: the depthwise conv reads NCHW between transposes
        mp.setattr(conv_to_gemm, "CONV_CHANNELS_LAST", False)
        ops = list(rlxc.run_pipeline(module, "rlx-optimize{target=cuda}").walk())
    (dw,) = [op for op in ops if isinstance(op, rlx.Conv2dOp)]
    assert dw.channels_last is None
    assert len([op for op in ops if isinstance(op, rlx.TransposeOp) and not isinstance(op.input.owner, rlx.ParamOp)]) == 4


def _int_groups(op) -> int:
    return op.groups.value.data


def _small_resnet(batch, dtype):
    """ResNet's shape in small: a 7x7 stride-2 stem, ReLU, 3x3 max pool, a
    bottleneck with a strided 1x1 downsample, global average pool, classifier."""
    g = rlxc.GraphBuilder()
    p = lambda name, shape: g.param(name, shape, dtype)  # noqa: E731
    x = g.input("x", [batch, 3, 32, 32], dtype)
    x = g.max_pool2d(g.relu(g.conv2d(x, p("stem.w", [16, 3, 7, 7]), p("stem.b", [16]), 2, 3)), 3, 2, 1)
    idt = g.conv2d(x, p("down.w", [32, 16, 1, 1]), p("down.b", [32]), stride=2)
    h = g.relu(g.conv2d(x, p("c1.w", [8, 16, 1, 1]), p("c1.b", [8])))
    h = g.relu(g.conv2d(h, p("c2.w", [8, 8, 3, 3]), p("c2.b", [8]), stride=2, padding=1))
    x = g.relu(g.add(g.conv2d(h, p("c3.w", [32, 8, 1, 1]), p("c3.b", [32])), idt))
    x = g.reshape(g.avg_pool2d(x, 4), [batch, 32])
    return g.build([g.linear(x, p("fc.w", [10, 32]), p("fc.b", [10]))])


def test_a_small_resnet_moves_no_layout_but_the_input():
    """On cuda no activation is transposed: the stem's patches read the
    NCHW image (three channels) and are widened to whole 16-byte rows, the
    pools run channels last, and the pooled [n, 1, 1, c] to [n, c, 1, 1] is
    a view (the weights' transposes are of params, computed once at compile)."""
    lowered = rlxc.run_pipeline(fold_params(rlxc.run_pipeline(_small_resnet(2, "f32"), WEIGHT_PASSES), {})[0],
                                "rlx-optimize{target=cuda}")
    ops = list(lowered.walk())
    assert not [op for op in ops if isinstance(op, rlx.TransposeOp) and not isinstance(op.input.owner, rlx.ParamOp)]
    stem = next(op for op in ops if isinstance(op, rlx.Im2colOp))
    assert stem.channels_first is not None and shape_of(stem.result.type) == (2, 16, 16, 148)  # 7 * 7 * 3 = 147
    assert sum(isinstance(op, rlx.Pool2dOp) and op.channels_last is not None for op in ops) == 2
    assert not any(isinstance(op, rlx.Conv2dOp) for op in ops)
    assert sum(isinstance(op, rlx.LinearOp) for op in ops) == 6


@pytest.mark.parametrize("arch", ARCHS)
def test_im2col_kernels_compile(arch):
    """Every im2col form in every float type through NVRTC: runs of channels
    as 16- and 4-byte items, elements gathered one by one (NHWC and NCHW
    inputs, zero columns), and 64-bit indices past 2**31 items."""
    g = rlxc.GraphBuilder()
    outs = []
    for dt in FLOATS:
        x = g.input(f"x{dt}", [2, 9, 8, 3], dt)  # a few channels: gathered
        v = g.input(f"v{dt}", [2, 9, 8, 16], dt)  # 16-byte runs of channels
        outs += [g.im2col(x, 3, 2, 1), g.im2col(x, (3, 2), (2, 1), (1, 0, 2, 1), (1, 2)), g.im2col(v, 3, 1, 1)]
        outs.append(g.im2col(g.input(f"n{dt}", [2, 3, 9, 8], dt), 7, 2, 3, channels_first=True, columns=152))
    outs.append(g.im2col(g.input("h", [1, 5, 5, 6], "f16"), 3))  # pairs of channels: 4-byte runs
    outs.append(g.im2col(g.input("big", [2, 8192, 8192, 3]), 3, 1, 1))  # over 2**31 items: 64-bit indices
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
    srcs = [k.properties["source"].data for k in kernels_of(lowered)]  # pyright: ignore
    forms = sorted(ln.split("im2col form: ")[1] for src in srcs for ln in src.splitlines() if "im2col form" in ln)
    assert forms == [
        "a run of channels of one tap an item (2 elements, 4 bytes)",
        "a run of channels of one tap an item (4 elements, 16 bytes)",
        "a run of channels of one tap an item (8 elements, 16 bytes)",  # f16 and bf16: one kernel
        "each element gathered, 1 an item (2 bytes)",  # rows of 27
        "each element gathered, 1 an item (4 bytes)",
        "each element gathered, 1 an item (4 bytes)",  # the big one
        "each element gathered, 2 an item (4 bytes)",  # rows of 18
        "each element gathered, 2 an item (8 bytes)",
        "each element gathered, 4 an item (16 bytes), NCHW input",
        "each element gathered, 8 an item (16 bytes), NCHW input",
    ], forms
    assert sum("long long q" in s for s in srcs) == 1
    assert compile_all(lowered, arch) == len(srcs) == 10


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("xs,ws,kw", CASES + [
    pytest.param((2, 16, 14, 14), (32, 16, 3, 3), {"padding": 1}, id="resnet-3x3"),
    pytest.param((2, 32, 14, 14), (64, 32, 1, 1), {"stride": 2}, id="resnet-downsample"),
])
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_as_gemm_on_gpu(xs, ws, kw, dtype):
    """conv + bias + relu on the GPU (im2col, cuBLASLt, the fused epilogue
    kernel) against the interpreter's direct convolution."""
    from test_gpu import check

    m = _conv_module(xs, ws, kw, dtype, relu=True)
    assert "rlx.conv2d" not in [op.name for op in rlxc.run_pipeline(m, "rlx-optimize{target=cuda}").walk()]
    check(m)


@pytest.mark.parametrize("arch", ARCHS)
def test_channels_last_conv_kernels_compile(arch):
    """Every channels-last conv2d form through NVRTC: depthwise over 16-,
    8- and 4-byte items of channels, a channel a thread (odd channels),
    and a group's input channels per output channel."""
    g = rlxc.GraphBuilder()
    outs = []
    for i, (xs, ws, kw) in enumerate(p.values for p in NHWC_CASES):
        for dt in FLOATS:
            outs.append(g._op(rlx.Conv2dOp, [g.input(f"x{i}{dt}", list(xs), dt), g.param(f"w{i}{dt}", list(ws), dt), None], {
                "stride": i64_array(list(_pair(kw.get("stride", 1)))), "padding": i64_array(list(_pads(kw.get("padding", 0)))),
                "dilation": i64_array(list(_pair(kw.get("dilation", 1)))), "groups": i64_attr(kw["groups"]),
                "channels_last": UnitAttr()}))  # fmt: skip
    for dt in FLOATS:  # clamp bounds, channels last (16-byte items) and NCHW
        bounds = {"input_min": -0.5, "input_max": 6.0, "clamp_min": 0.0, "clamp_max": 6.0}
        outs.append(_conv_op(g, g.input(f"xb{dt}", [1, 5, 5, 16], dt), g.param(f"wb{dt}", [16, 1, 3, 3], dt), None,
                             {"padding": 1, "groups": 16}, True, bounds))
        outs.append(_conv_op(g, g.input(f"xn{dt}", [1, 16, 5, 5], dt), g.param(f"wn{dt}", [16, 1, 3, 3], dt), None,
                             {"padding": 1, "groups": 16}, False, bounds))
    for dt in FLOATS:  # HWIO weights: a tap's channels in one access (f32: 4, f16/bf16: 8), or an element a thread
        outs.append(_conv_op(g, g.input(f"xh{dt}", [1, 5, 5, 16], dt), g.param(f"wh{dt}", [3, 3, 1, 16], dt), None,
                             {"padding": 1, "groups": 16}, True, hwio=True))
        outs.append(_conv_op(g, g.input(f"xo{dt}", [1, 5, 5, 5], dt), g.param(f"wo{dt}", [3, 3, 1, 5], dt), None,
                             {"padding": 1, "groups": 5}, True, hwio=True))
    lowered = rlxc.run_pipeline(g.build(outs), f"rlx-cuda{{arch={arch}}}")
    srcs = [k.properties["source"].data for k in kernels_of(lowered)]  # pyright: ignore
    clamped = [src for src in srcs if "rlx_minf(rlx_maxf(" in src]
    assert len(clamped) == 6 and all("6.0f)" in src and "-0.5f)" in src for src in clamped)
    hwio = [src for src in srcs if "HWIO weight" in src]
    assert len(hwio) == 3 and all("reinterpret_cast<const uint4*>(wt)[(ky * 3 + kx) *" in src for src in hwio)
    assert sum("wt[((ky * 3 + kx) * 1 + 0) * 5 + q]" in src for src in srcs) == 3  # 5 channels, in each dtype
    forms = sorted({ln.split("conv2d form: ")[1] for src in srcs for ln in src.splitlines() if "conv2d form" in ln})
    assert forms == [
        "channels last (NHWC), 1 input channels a group, an output channel a thread",  # a multiplier of 2
        "channels last (NHWC), 4 input channels a group, an output channel a thread",
        "channels last (NHWC), depthwise, 2 channels a thread as one 4-byte access",  # 6 f16 channels
        "channels last (NHWC), depthwise, 2 channels a thread as one 8-byte access",  # 6 f32 channels
        "channels last (NHWC), depthwise, 4 channels a thread as one 16-byte access",
        "channels last (NHWC), depthwise, 4 channels a thread as one 16-byte access, HWIO weight",
        "channels last (NHWC), depthwise, 8 channels a thread as one 16-byte access",
        "channels last (NHWC), depthwise, 8 channels a thread as one 16-byte access, HWIO weight",
        "channels last (NHWC), depthwise, a channel a thread",  # 5 channels
    ], forms
    assert compile_all(lowered, arch) == len(srcs)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("dtype", FLOATS)
def test_channels_last_convs_on_gpu(dtype):
    """Every channels-last conv2d form, and MobileNet blocks (strided, and
    residual) through the cuda pipeline, against the interpreter."""
    from test_gpu import check

    g = rlxc.GraphBuilder()
    outs = []
    for i, (xs, ws, kw) in enumerate(p.values for p in NHWC_CASES):
        outs.append(g._op(rlx.Conv2dOp, [g.input(f"x{i}", list(xs), dtype), g.param(f"w{i}", list(ws), dtype),
                                         g.param(f"b{i}", [ws[0]], dtype)], {
            "stride": i64_array(list(_pair(kw.get("stride", 1)))), "padding": i64_array(list(_pads(kw.get("padding", 0)))),
            "dilation": i64_array(list(_pair(kw.get("dilation", 1)))), "groups": i64_attr(kw["groups"]),
            "channels_last": UnitAttr()}))  # fmt: skip
    # clamp bounds on an NHWC form and on the NCHW kernel (a depthwise conv of a graph input, then ReLU6)
    x = g.input("xc", [2, 6, 7, 16], dtype)
    outs.append(_conv_op(g, x, g.param("wc", [16, 1, 3, 3], dtype), None, {"padding": 1, "groups": 16}, True,
                         {"input_min": -0.5, "input_max": 1.0, "clamp_min": 0.0, "clamp_max": 0.75}))
    for i, (c, k) in enumerate([(16, 3), (6, 5), (5, 3)]):  # HWIO weights: 16-, 4/8-byte items, an element a thread
        outs.append(_conv_op(g, g.input(f"xh{i}", [2, 7, 6, c], dtype), g.param(f"wh{i}", [k, k, 1, c], dtype),
                             g.param(f"bh{i}", [c], dtype), {"padding": k // 2, "groups": c, "stride": 2}, True,
                             {"clamp_min": 0.0}, hwio=True))
    six = g.constant(np.float32(6.0), dtype)
    outs.append(g.minimum(g.relu(g.conv2d(g.input("xn", [2, 8, 9, 7], dtype), g.param("wn", [8, 1, 3, 3], dtype),
                                          padding=1, groups=8)), six))
    check(g.build(outs))
    check(_mobilenet_block(3, dtype))
    check(_mobilenet_block(2, dtype, stride=1, residual=True))


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_small_resnet_on_gpu(batch, dtype):
    """Stem, channels-last max pool, bottleneck, global average pool and
    classifier on the GPU against the interpreter's NCHW direct ops."""
    from test_gpu import check

    check(_small_resnet(batch, dtype))


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("dtype", FLOATS)
def test_im2col_forms_on_gpu(dtype):
    """Each im2col kernel form against the interpreter: runs of channels,
    NHWC and NCHW gathers, zero columns, odd strides and dilations."""
    from test_gpu import check

    g = rlxc.GraphBuilder()
    outs = [g.im2col(g.input("v", [2, 9, 8, 16], dtype), 3, 1, 1),
            g.im2col(g.input("x", [2, 9, 8, 3], dtype), (3, 2), (2, 1), (1, 0, 2, 1), (1, 2)),
            g.im2col(g.input("n", [3, 3, 19, 17], dtype), 7, 2, 3, channels_first=True, columns=152),
            g.im2col(g.input("d", [2, 5, 11, 12], dtype), 3, (1, 2), 2, 2, channels_first=True, columns=48)]  # fmt: skip
    check(g.build(outs))


# --------------------------------------------------------------------------- linear with a residual


def _residual_linear(dtype, act=None, shape=(3, 5, 16)):
    g = rlxc.GraphBuilder()
    x = g.input("x", list(shape), dtype)
    r = g.input("r", [*shape[:-1], 8], dtype)
    y = g.linear(x, g.param("w", [8, shape[-1]], dtype), g.param("b", [8], dtype), act, residual=r)
    return g.build([y])


@pytest.mark.parametrize("act", [None, "relu", "gelu"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_residual_matches_float64(dtype, act, rng):
    """act(x · wᵀ + b + r) in float64, rounded once; and `rlx-unfuse{target=none}`'s
    split (matmul, adds, activation in f32) agrees."""
    m = _residual_linear(dtype, act)
    x, r = R.random_array(rng, (3, 5, 16), dtype), R.random_array(rng, (3, 5, 8), dtype)
    p = {"w": R.random_array(rng, (8, 16), dtype, -1, 1), "b": R.random_array(rng, (8,), dtype, -1, 1)}
    z = np.einsum("bsk,nk->bsn", R.wide(x), R.wide(p["w"])) + R.wide(p["b"]) + R.wide(r)
    want = {None: z, "relu": np.maximum(z, 0), "gelu": R.gelu(z)}[act]
    (got,) = rlxc.interpret(m, {"x": x, "r": r}, p)
    R.assert_close(got, want, dtype, what="linear + residual")
    (split,) = rlxc.interpret(rlxc.run_pipeline(m, "rlx-unfuse{target=none}"), {"x": x, "r": r}, p)
    R.assert_close(split, got.astype(np.float64), dtype, what="linear + residual, split")


def test_residual_folds_only_into_a_bare_linear():
    """add(linear, r) folds when the linear has a bias, no activation and no
    other use, and r has the result's type; a broadcast addend stays an add."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 4, 6, 6])
    c = g.conv2d(x, g.param("w", [4, 4, 3, 3]), g.param("b", [4]), padding=1)
    y = g.add(c, g.input("bias_like", [4, 1, 1]))  # broadcast: not a residual
    names = [op.name for op in rlxc.run_pipeline(g.build([y]), "rlx-conv-to-gemm").walk()]
    assert "rlx.add" in names
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 4, 6, 6])
    c = g.conv2d(x, g.param("w", [4, 4, 3, 3]), g.param("b", [4]), padding=1)
    outs = [g.add(c, x), c]  # the conv's result is used twice: no fold
    names = [op.name for op in rlxc.run_pipeline(g.build(outs), "rlx-conv-to-gemm").walk()]
    assert "rlx.add" in names
    g = rlxc.GraphBuilder()  # a linear's [1, 8] broadcast against [3, 1, 8] (a conv makes the pass run)
    c = g.conv2d(g.input("x", [1, 4, 6, 6]), g.param("w", [4, 4, 3, 3]), g.param("b", [4]), padding=1)
    lin = g.linear(g.input("v", [1, 16]), g.param("lw", [8, 16]), g.param("lb", [8]))
    y = g.add(lin, g.input("many", [3, 1, 8]))
    names = [op.name for op in rlxc.run_pipeline(g.build([c, y]), "rlx-conv-to-gemm").walk()]
    assert "rlx.add" in names


@pytest.mark.parametrize("arch", ARCHS)
def test_residual_gemm_kernel_compiles(arch):
    lowered = rlxc.run_pipeline(_residual_linear("f16", "relu"), f"rlx-cuda{{arch={arch} gemm=kernel}}")
    srcs = [k.properties["source"].data for k in kernels_of(lowered)]  # pyright: ignore
    assert any("R0[" in s for s in srcs)
    assert compile_all(lowered, arch) >= 1


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("act", [None, "relu"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_residual_on_gpu(dtype, act):
    """cuBLASLt (the residual as C, beta 1) and the generated fallback gemm
    against the interpreter."""
    from test_gpu import check

    m = _residual_linear(dtype, act, (4, 33, 72))
    check(m)
    rng = np.random.default_rng()
    inputs = {"x": R.random_array(rng, (4, 33, 72), dtype), "r": R.random_array(rng, (4, 33, 8), dtype)}
    params = {"w": R.random_array(rng, (8, 72), dtype, -1, 1), "b": R.random_array(rng, (8,), dtype, -1, 1)}
    (want,) = rlxc.interpret(m, inputs, params)
    from rlxc.codegen import HEADERS
    from rlxc.runtime.driver_api import device_arch
    from rlxc.runtime.executable import CudaExecutable
    from rlxc.runtime.nvrtc import compile_module_kernels

    arch = device_arch()[0]
    lowered = rlxc.run_pipeline(m, f"rlx-cuda{{arch={arch} gemm=kernel}}")
    exe = CudaExecutable(lowered, params, compile_module_kernels(lowered, arch, headers=HEADERS), "stream")
    (got,) = exe.run(inputs)
    exe.close()
    R.assert_close(np.asarray(got), want.astype(np.float64), dtype, rtol=R.RTOL[dtype] * 2, what="fallback gemm")

"""GPU tests (marker `gpu`): generated kernels against the numpy reference, on
fresh random inputs, with the arena poisoned (0xFF bytes: NaN) before every
run so an element no kernel wrote fails. Skipped cleanly without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import rlxc
from forms import block_form_up_to
from strategies import graphs, random_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from models import EXAMPLES  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver"),
]

#: Relative L2 error allowed, by output dtype: f32 kernels compute in f32
#: (the reference rounds float64 results once), f16/bf16 round per op.
TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}


def check(module, params=None, rng=None, tol_scale=1.0, offset=0.0):
    """`module` on the GPU (stream and graph mode) against the interpreter,
    on random inputs (plus `offset`, where sums of zero-mean values would
    cancel: the relative error of a near-zero sum is no measure of a
    kernel); an f32 output past the bound passes only within ten times what
    one rounding of every f32 value moves it on the interpreter, and 5% at
    most (`sensitivity`: random graphs that sum terms that cancel; a zero or
    negated output still fails)."""
    rng = rng or np.random.default_rng()
    inputs, params = check_inputs(module, params, rng, offset)
    want = rlxc.interpret(module, inputs, params)
    exe = rlxc.compile(module, target="cuda", params=params, mode="stream")
    got = exe.run(inputs, poison=True)
    graph = rlxc.compile(module, target="cuda", params=params, mode="graph")
    for _ in range(2):  # capture, then replay: both equal stream mode exactly
        for a, b in zip(got, graph.run(inputs, poison=True)):
            np.testing.assert_array_equal(a, b)
    assert_matches(module, inputs, params, want, got, rng, tol_scale)
    return got


def check_inputs(module, params, rng, offset=0.0):
    """Random inputs (and params, unless given) for `module`, the float
    inputs shifted by `offset` (see `check`)."""
    from rlxc.dialects.types import dtype_name
    from rlxc.signature import signature
    from rlxc.values import round_bf16

    inputs, rand_params = random_inputs(module, rng)
    for n, t in signature(module).inputs if offset else ():
        if inputs[n].dtype.kind == "f":
            shifted = (inputs[n] + inputs[n].dtype.type(offset)).astype(inputs[n].dtype)
            inputs[n] = round_bf16(shifted) if dtype_name(t.get_element_type()) == "bf16" else shifted
    return inputs, (params if params is not None else rand_params)


def assert_matches(module, inputs, params, want, got, rng, tol_scale=1.0):
    """The outputs `got` against the interpreter's `want`: integers exactly,
    floats within TOL of their dtype (relative L2), an f32 output past it
    only as far as `sensitivity` explains; no unwritten (NaN) element where
    the reference has none."""
    from rlxc.dialects.types import dtype_name
    from rlxc.signature import signature

    names = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
    dtypes = {i: names.get(dtype_name(t.get_element_type()), "") for i, t in enumerate(signature(module).outputs)}
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        assert w.shape == g.shape, (i, w.shape, g.shape)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=f"output #{i}")
            continue
        assert not np.isnan(g).any() or np.isnan(w).any(), f"output #{i}: unwritten (NaN) elements"
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        if not np.isfinite(w64).all():  # NaN and ±inf where the reference has them, exactly; the rest as below
            odd = ~np.isfinite(w64)
            np.testing.assert_array_equal(~np.isfinite(g64), odd, err_msg=f"output #{i}: non-finite elements")
            np.testing.assert_array_equal(g64[odd], w64[odd], err_msg=f"output #{i}: non-finite values")
            w64, g64 = w64[~odd], g64[~odd]
        err = np.linalg.norm(w64 - g64) / max(np.linalg.norm(w64), 1e-30)
        name = dtypes.get(i, str(w.dtype))
        bound = TOL.get(name, 1e-5) * tol_scale
        if not err < bound and name == "float32":  # an output no f32 computation gets closer to?
            moved = sensitivity(module, inputs, params, i, rng)
            assert err < bound + min(10 * moved, 0.05), \
                f"output #{i}: relative error {err:.3e} (a rounding of the inputs moves it {moved:.3e})"
        else:
            assert err < bound, f"output #{i}: relative error {err:.3e}"


def sensitivity(module, inputs, params, i, rng):
    """How far output #`i` of `module` moves (relative to its norm, on the
    interpreter) when its f32 inputs and params and every f32 value the
    interpreter rounds on the way move by one unit in the last place: the
    error any f32 computation of an ill-conditioned output may make (a sum
    of terms that cancel: row-normalized values of opposite signs summed),
    which `check` allows ten times over the dtype's bound (5% at most). The most of three
    ways of moving them (all up, and up or down at random twice: terms that
    cancel move apart in one of them)."""
    from unittest import mock

    from rlxc.dialects.types import dtype_name
    from rlxc.interp import rlx_numpy
    from rlxc.signature import signature

    sig = signature(module)
    f32 = {n for n, t in (*sig.inputs, *sig.params.items()) if dtype_name(t.get_element_type()) == "f32"}
    rounded = rlx_numpy.to_tensor_type
    want = rlxc.interpret(module, inputs, params)[i].astype(np.float64)
    most = 0.0
    for way in ("up", "random", "random"):
        def nudge(v):
            step = np.spacing(np.abs(v).astype(np.float32))
            return (v + (step if way == "up" else rng.choice([-1.0, 1.0], np.shape(v)) * step)).astype(np.float32)

        def nudged(v, t):
            r = rounded(v, t)
            return nudge(r) if isinstance(r, np.ndarray) and r.dtype == np.float32 else r

        with mock.patch.object(rlx_numpy, "to_tensor_type", nudged):
            moved = rlxc.interpret(module, {k: nudge(v) if k in f32 else v for k, v in inputs.items()},
                                   {k: nudge(v) if k in f32 else v for k, v in params.items()})[i]
        most = max(most, float(np.linalg.norm(moved.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30)))
    return most


def _unary(name, dtype="f32"):
    def build(g):
        x = g.input("x", [3, 37], dtype)
        if name in ("log", "sqrt", "rsqrt"):
            x = g.add(g.abs(x), g.constant(np.float32(0.5), dtype))
        if name == "acosh":
            x = g.add(g.abs(x), g.constant(np.float32(1.0), dtype))
        if name in ("asin", "acos", "atanh", "tan"):  # inside (-1, 1); tan away from its poles
            x = g.mul(g.tanh(x), g.constant(np.float32(0.95), dtype))
        return [getattr(g, name)(x)]

    return build


UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "asinh", "acosh", "atanh", "tanh", "sigmoid",
         "relu", "gelu", "gelu_tanh", "silu", "erf", "floor", "ceil", "round", "sign", "softplus"]  # fmt: skip


def _cases():
    c = {f"unary_{n}": _unary(n) for n in UNARY}
    c.update({f"unary_{n}_f16": _unary(n, "f16") for n in ("exp", "gelu", "tanh", "neg", "asin", "cosh")})
    c.update({f"unary_{n}_bf16": _unary(n, "bf16") for n in ("exp", "silu", "abs", "atanh", "sinh")})
    for n in ("add", "sub", "mul", "div", "rem", "maximum", "minimum", "pow"):
        c[f"binary_{n}"] = lambda g, n=n: [getattr(g, n)(g.add(g.abs(g.input("a", [4, 1, 8])), g.constant(np.float32(0.5))), g.input("b", [3, 8]))]
    for n in ("eq", "ne", "lt", "le", "gt", "ge"):
        c[f"compare_{n}"] = lambda g, n=n: [getattr(g, n)(g.round(g.input("a", [4, 8])), g.round(g.input("b", [8])))]
    c["select"] = lambda g: [g.select(g.lt(g.input("a", [4, 8]), g.input("b", [4, 1])), g.input("c", [8]), g.input("d", [4, 8]))]
    c["cast_chain"] = lambda g: [g.cast(g.input("a", [5, 7]), "f16"), g.cast(g.input("b", [5, 7]), "bf16"),
                                 g.cast(g.mul(g.input("c", [64]), g.constant(np.float32(4.0))), "i32"), g.cast(g.input("d", [9]), "i1")]
    c["int_ops"] = lambda g: [g.div(g.input("a", [4, 8], "i32"), g.input("b", [8], "i32")), g.maximum(g.input("c", [6], "i64"), g.input("d", [6], "i64")),
                              g.rem(g.input("e", [4, 8], "i32"), g.input("f", [8], "i32"))]
    for n in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"):
        c[n] = lambda g, n=n: [getattr(g, n)(g.input("x", [3, 5, 40]), axes=[2]), getattr(g, n)(g.input("y", [6, 3, 5]), axes=[0, 2], keepdims=True),
                               getattr(g, n)(g.input("z", [5, 9000]), axes=[0]),  # the column kernel: outputs enough, innermost kept
                               getattr(g, n)(g.input("w", [2, 7, 3, 3000]), axes=[1, 2], keepdims=True)]
    c["reduce_cols_int"] = lambda g: [g.reduce_sum(g.input("x", [4, 5, 3000], "i32"), axes=[1]), g.reduce_max(g.input("y", [9, 9000], "i64"), axes=[0]),
                                      g.reduce_mean(g.input("z", [33, 9000], "f16"), axes=[0])]
    c["argmax"] = lambda g: [g.argmax(g.input("x", [7, 300]), axis=-1), g.argmax(g.input("y", [5, 6, 4]), axis=1, keepdims=True)]
    c["softmax"] = lambda g: [g.softmax(g.input("x", [5, 1000])), g.log_softmax(g.input("y", [4, 6, 3]), axis=1)]
    c["softmax_long_rows"] = lambda g: [g.softmax(g.input("x", [3, 20000])), g.log_softmax(g.input("y", [2, 9000], "f16")),
                                        g.softmax(g.input("z", [2, 9000, 3]), axis=1), g.log_softmax(g.input("w", [2, 10001])), g.log_softmax(g.input("v", [2, 10000]))]
    c["norms_long_rows"] = lambda g: [g.layer_norm(g.input("x", [3, 12000]), g.param("g", [12000]), g.param("b", [12000])),
                                      *g.fused_residual_layer_norm(g.input("y", [2, 9000]), g.input("r", [2, 9000]), g.param("h", [9000]), g.param("c", [9000])),
                                      *g.fused_residual_rms_norm(g.input("u", [2, 10000], "bf16"), g.input("s", [2, 10000], "bf16"), g.param("k", [10000], "bf16")),
                                      g.rms_norm(g.input("q", [2, 10000]), g.param("m", [10000])), g.layer_norm(g.input("n", [2, 9001]), g.param("e", [9001]), g.param("f", [9001])),
                                      *g.fused_residual_rms_norm(g.input("o", [2, 9000]), g.input("p", [2, 9000]), g.param("i", [9000]))]
    c["layer_norm"] = lambda g: [g.layer_norm(g.input("x", [6, 768]), g.param("g", [768]), g.param("b", [768]))]
    c["rms_norm"] = lambda g: [g.rms_norm(g.input("x", [2, 3, 64]), g.param("g", [3, 64]))]
    c["fused_residual"] = lambda g: [*g.fused_residual_layer_norm(g.input("x", [4, 96]), g.input("r", [4, 96]), g.param("g", [96]), g.param("b", [96])),
                                     *g.fused_residual_rms_norm(g.input("y", [4, 96]), g.input("s", [4, 96]), g.param("h", [96]))]
    c["matmul"] = lambda g: [g.matmul(g.input("a", [2, 3, 17, 33]), g.input("b", [33, 9])), g.matmul(g.input("c", [4, 8, 5]), g.input("d", [4, 5, 6]))]
    def linear(g):
        x, w, b = g.input("x", [10, 48]), g.param("w", [24, 48]), g.param("b", [24])
        return [g.linear(x, w, b, activation=a) for a in (None, "relu", "gelu", "gelu_tanh", "silu")] + [g.linear(x, w)]

    c["linear"] = linear
    c["shape"] = lambda g: [g.transpose(g.input("x", [3, 40, 70]), [0, 2, 1]), g.transpose(g.input("y", [2, 3, 4, 5]), [2, 0, 3, 1]),
                            g.concat([g.input("a", [2, 5]), g.input("b", [3, 5])], axis=0), g.slice(g.input("s", [9, 8]), [-2, 1], [0, 7], steps=[-3, 2]),
                            g.reshape(g.input("r", [4, 6]), [3, 8]), g.expand(g.input("e", [1, 5]), [4, 5])]
    c["gather"] = lambda g: [g.gather(g.input("t", [10, 16]), g.constant(np.array([[3, -1], [0, 9]], np.int64)), axis=0),
                             g.gather(g.input("u", [4, 7, 3]), g.constant(np.array([6, 0, -7], np.int32)), axis=1)]
    c["pad"] = lambda g: [g.pad(g.input("x", [3, 4, 5]), [1, 0, 2], [0, 3, 1], value=-2.5), g.pad(g.input("r", [3, 4, 5]), [2, 3, 0], [1, 1, 4], "reflect"),
                          g.pad(g.input("e", [3, 4, 5]), [4, 0, 1], [0, 6, 2], "edge"), g.pad(g.input("w", [3, 4, 5]), [7, 0, 0], [2, 9, 11], "wrap"),
                          g.pad(g.input("h", [2, 33], "f16"), [1, 2], [1, 32], "reflect"), g.pad(g.input("b", [5, 6], "bf16"), [0, 3], [2, 0], value=0.1),
                          g.pad(g.input("i", [4, 3], "i32"), [5, 1], [6, 7], "wrap"), g.pad(g.input("m", [3, 2], "i1"), [1, 0], [0, 2], value=1.0)]
    c["gather_elements_nd"] = lambda g: [
        g.gather_elements(g.input("x", [4, 5, 3]), g.constant(np.array([[[0, -1, 4], [-5, 2, 3]]] * 4, np.int64)), axis=1),
        g.gather_elements(g.input("h", [4, 5, 3], "f16"), g.constant(np.array([[[3, -1, 0]] * 5, [[-4, 2, 1]] * 5], np.int32)), axis=0),
        g.gather_nd(g.input("y", [4, 5, 6]), g.constant(np.array([[1, -1], [3, 0], [-4, 4]], np.int64))),
        g.gather_nd(g.input("z", [4, 5, 6], "i64"), g.constant(np.array([[[0], [4]], [[-1], [2]], [[1], [1]], [[3], [-5]]], np.int32)), batch_dims=1),
        g.gather_nd(g.input("v", [4, 5, 6], "bf16"), g.constant(np.array([[3, 4, 5], [0, -5, -6]], np.int64)))]
    c["cumsum"] = lambda g: [g.cumsum(g.input("x", [3, 40, 5]), 1), g.cumsum(g.input("l", [6, 3000]), -1, exclusive=True, reverse=True),
                             g.cumsum(g.input("r", [2, 1000]), 1, reverse=True), g.cumsum(g.input("h", [4, 700], "f16"), 1),
                             g.cumsum(g.input("b", [5, 37], "bf16"), 1, exclusive=True), g.cumsum(g.input("i", [3, 500], "i32"), 1, exclusive=True),
                             g.cumsum(g.input("j", [7, 9], "i64"), 0, reverse=True)]
    c["topk"] = lambda g: [*g.topk(g.input("x", [6, 1000]), 10), *g.topk(g.input("s", [3, 50, 4]), 50, axis=1, largest=False),
                           *g.topk(g.input("h", [5, 300], "f16"), 7), *g.topk(g.input("i", [4, 33], "i32"), 33),
                           *g.topk(g.input("l", [2, 3000], "i64"), 5, largest=False), *g.topk(g.input("b", [8, 20], "bf16"), 3, axis=0, sorted=False),
                           *g.topk(g.input("w", [2, 10000]), 100)]
    c["conv_pool"] = lambda g: [g.max_pool2d(g.conv2d(g.input("x", [2, 4, 11, 9]), g.param("w", [6, 2, 3, 3]), g.param("b", [6]), stride=2, padding=(1, 0, 2, 1), dilation=1, groups=2), 2, padding=1),
                                g.avg_pool2d(g.input("y", [1, 3, 8, 8]), 3, stride=2, padding=1), g.avg_pool2d(g.input("z", [1, 3, 8, 8]), 3, stride=2, padding=1, count_include_pad=True)]
    c["conv_transpose2d"] = lambda g: [g.conv_transpose2d(g.input("x", [2, 4, 7, 6]), g.param("w", [4, 3, 3, 3]), g.param("b", [6]), stride=2, padding=(1, 0, 1, 2),
                                                          output_padding=(1, 0), dilation=(1, 2), groups=2),
                                       g.conv_transpose2d(g.input("h", [1, 3, 5, 5], "f16"), g.param("v", [3, 2, 3, 3], "f16"), stride=3, padding=1, output_padding=2),
                                       g.conv_transpose2d(g.input("u", [1, 8, 4, 4], "bf16"), g.param("k", [8, 1, 4, 4], "bf16"), g.param("c", [8], "bf16"), stride=2, padding=1, groups=8)]
    c["pool_dilation_ceil"] = lambda g: [g.max_pool2d(g.input("x", [2, 3, 9, 8]), 3, 2, 1, dilation=(2, 1), ceil_mode=True),
                                         g.avg_pool2d(g.input("y", [2, 3, 9, 8]), 3, 2, 1, count_include_pad=True, ceil_mode=True),
                                         g.avg_pool2d(g.input("z", [1, 2, 8, 9], "f16"), (2, 3), (2, 3), (1, 0, 1, 2), dilation=2, ceil_mode=True),
                                         g.avg_pool2d(g.input("w", [1, 2, 4, 4], "bf16"), 3, 3, 1, count_include_pad=True, ceil_mode=True)]
    c["resize"] = lambda g: [g.resize(g.input("x", [2, 3, 5, 6]), [2, 3, 11, 4], [1, 1, 2.2, 0.7], "linear"),
                             g.resize(g.input("y", [2, 3, 5, 6]), [2, 3, 10, 12], [1, 1, 2, 2], "linear", "align_corners"),
                             g.resize(g.input("z", [1, 4, 7], "f16"), [1, 9, 3], [1, 2.25, 3 / 7], "linear", "pytorch_half_pixel"),
                             g.resize(g.input("w", [1, 2, 3, 4, 5], "bf16"), [1, 2, 5, 6, 4], [1, 1, 5 / 3, 1.5, 0.8], "linear", "half_pixel_symmetric"),
                             g.resize(g.input("n", [2, 3, 5, 6]), [2, 3, 10, 4], [1, 1, 2, 2 / 3], "nearest"),
                             g.resize(g.input("m", [1, 3, 5, 6], "i32"), [1, 3, 8, 9], [1, 1, 1.6, 1.5], "nearest", "asymmetric", "ceil"),
                             g.resize(g.input("k", [1, 3, 5, 6], "f16"), [1, 3, 15, 2], [1, 1, 3, 1 / 3], "nearest", "tf_half_pixel_for_nn", "round_prefer_ceil")]
    c["attention"] = lambda g: [g.attention(g.input("q", [2, 3, 9, 16]), g.input("k", [2, 3, 12, 16]), g.input("v", [2, 3, 12, 8]), causal=True),
                                g.attention(g.input("q2", [1, 2, 5, 4]), g.input("k2", [1, 2, 5, 4]), g.input("v2", [1, 2, 5, 4]), mask=g.input("m", [5, 5]), scale=0.3)]
    c["swiglu_rope"] = lambda g: [g.swiglu(g.input("x", [3, 32])), g.rope(g.input("y", [1, 2, 6, 8]), g.cos(g.input("c", [6, 8])), g.sin(g.input("s", [6, 8])))]
    return c


CASES = _cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_on_gpu_matches_reference(case):
    g = rlxc.GraphBuilder()
    module = g.build(CASES[case](g))
    check(module)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_on_gpu_matches_reference(name):
    kw = {"mlp": {"rows": 64}, "transformer": {"batch": 2, "seq": 32}, "cnn": {"batch": 2}}[name]
    module, params = EXAMPLES[name](**kw)
    check(module, params)


@pytest.mark.parametrize("d", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("xs,cs", [([2, 4, 33, 64], [33, 64]), ([2, 33, 4, 64], [33, 1, 64]), ([3, 7, 10], [1, 10]),
                                   ([2, 5, 6], [5, 1]), ([2, 3, 4, 12], [4, 12]), ([1, 5, 3, 20], [5, 1, 20]),
                                   ([3, 2, 129, 128], [129, 128])])
def test_rope_on_gpu(xs, cs, d):
    """rlx.rope: one kernel where cos/sin's last axis is the input's (heads
    first or second, a table broadcast over batch and heads; items of 16,
    8 or 4 bytes, or an element a thread where half a row is odd), else split
    into slices, a concat and elementwise kernels; against the interpreter."""
    from rlxc.dialects import rlx_cuda

    g = rlxc.GraphBuilder()
    module = g.build([g.rope(g.input("x", xs, d), g.input("c", cs, d), g.input("s", cs, d))])
    lowered = rlxc.run_pipeline(module.clone(), "rlx-cuda")
    kernels = [op.source.data for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert (len(kernels) == 1 and "rlx_rope_" in kernels[0]) == (cs[-1] == xs[-1])
    check(module)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=graphs())
def test_random_graphs_on_gpu(case):
    # Random graphs may be ill-conditioned (a layer_norm of a nearly constant
    # row); f32 kernels and the float64-then-rounded reference may then differ
    # by more than an f32 rounding, so a looser bound here.
    check(case.module, tol_scale=100.0)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=graphs(dtypes=("f16", "bf16")))
def test_random_16bit_graphs_on_gpu(case):
    """Random f16/bf16 graphs (fused regions, rows, reductions, injective
    ops) against the interpreter, which rounds after every op as the
    kernels do; a bound 10x the dtype's tolerance for the same reason as
    above (a 16-bit rounding amplified by an ill-conditioned op)."""
    check(case.module, tol_scale=10.0)


def test_elementwise_block_shapes_on_gpu():
    """elementwise.BLOCK_THREADS x UNROLL (128 x 2): f32 and f16 GELU over
    many blocks with a tail of 3 elements, and f32 bias + GELU; and the
    16-bit broadcast shape (256 x 4): f16 bias + GELU, with a tail too;
    against the interpreter in stream and graph mode."""
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime.driver_api import device_arch

    g = rlxc.GraphBuilder()
    x, b = g.input("x", [1001, 1283]), g.input("b", [1283])
    h, hb = g.input("h", [777, 1283], "f16"), g.input("hb", [1288], "f16")
    h8 = g.input("h8", [333, 1288], "f16")
    module = g.build([g.gelu(x), g.gelu(g.add(x, b)), g.gelu(h), g.gelu(g.add(h8, hb))])
    arch, sms = device_arch()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    forms = [op.source.data.splitlines()[2] for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert [f.endswith("2 trips per thread, 128 threads a block") for f in forms] == [True, True, True, False], forms
    assert forms[3].endswith("4 trips per thread, 256 threads a block"), forms
    check(module)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_staged_warp_rows_on_gpu(dtype):
    """rows.WARP_STAGED: warp-form f16/bf16 rows of odd lengths over 512
    bytes, staged through shared memory, a warp taking several rows of a
    block's span where rows are shorter (257: 3, 383: 2), with a
    last block of fewer rows (13, 9, 61, 1003 and 7 rows are no multiple
    of a block's), for softmax, log_softmax, layer_norm and rms_norm,
    against the interpreter (the dtype's tolerance); layer_norm's rows of
    255 are not staged, softmax's are (rows.WARP_STAGED_ROW_BYTES)."""
    from rlxc.dialects import rlx_cuda

    g = rlxc.GraphBuilder()
    outs = []
    for k, (r, n) in enumerate([(13, 1001), (9, 257), (61, 383), (1003, 513), (7, 1023)]):
        x = g.input(f"x{k}", [r, n], dtype)
        gamma, beta = g.param(f"g{k}", [n], dtype), g.param(f"b{k}", [n], dtype)
        outs += [g.softmax(x), g.log_softmax(x), g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma)]
    module = g.build(outs)
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    notes = [op.source.data.splitlines()[2] for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert len(notes) == len(outs) and all("staged: the block's" in n for n in notes), notes
    assert [n.split("staged: the block's ")[1].split(" ")[0] for n in notes[::4]] == ["8", "24", "16", "8", "8"], notes
    g2 = rlxc.GraphBuilder()
    x2 = g2.input("x", [9, 255], dtype)
    s255 = rlxc.run_pipeline(g2.build([g2.layer_norm(x2, g2.param("g", [255], dtype), g2.param("b", [255], dtype)),
                                       g2.softmax(x2)]), "rlx-cuda{arch=sm_90}")
    assert ["staged" in op.source.data for op in s255.walk() if isinstance(op, rlx_cuda.KernelOp)] == [False, True]
    check(module)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_gelu_negative_tail_on_gpu(dtype):
    """Exact GELU far below 0, element by element: x/2 (1 + erf(x / sqrt 2))
    in f32 is 0 from about x = -5.5 and keeps few bits from -3, where the
    true value (math.erfc's, float64) is a normal f32 down to x = -12.5; the
    kernels compute x/2 erfc(-x / sqrt 2)."""
    import math

    from rlxc.values import round_bf16

    to = {"f32": lambda a: a.astype(np.float32), "f16": lambda a: a.astype(np.float16), "bf16": round_bf16}[dtype]
    rng = np.random.default_rng()
    xin = to(np.concatenate([np.linspace(-12.5, -3.0, 301), rng.uniform(-12.5, 3, 211)]))
    g = rlxc.GraphBuilder()
    module = g.build([g.gelu(g.input("x", [xin.size], dtype))])
    got = rlxc.compile(module, target="cuda").run({"x": xin}, poison=True)[0].astype(np.float64)
    xd = xin.astype(np.float64)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in xd.tolist()])
    if dtype == "f32":
        # gelu's condition number is about 1 + x^2 / 2 down the tail, as x /
        # sqrt 2 rounded once in f32 (6e-8) moves erfc by 2 z^2 times that;
        # rlx_erfcf itself is within 8 ulps (1e-6). 1 + erf would be off by
        # 100% below about -5.5
        tol = (2e-7 * xd * xd + 2e-6) * np.abs(exact)
        assert np.all(np.abs(got - exact) <= tol), np.max(np.abs(got - exact) / tol)
        return
    # 16-bit: x/2 erfc(-x / sqrt 2) everywhere (GeluOp.scalar_16, the
    # approximate erfc: within 1e-5 relative), within a rounding of the
    # reference rounded once, down the whole tail
    want = to(exact.astype(np.float32)).astype(np.float64)
    ulp = {"f16": 2.0**-10, "bf16": 2.0**-7}[dtype]
    bad = np.abs(got - want) > np.maximum(ulp * np.abs(want), 2.0**-24)
    assert not bad.any(), list(zip(xd[bad][:5], got[bad][:5], want[bad][:5]))


def test_f32_gelu_erfc_within_ulps_on_gpu():
    """f32 GELU is x/2 * rlx_erfcf(x * -1/sqrt 2): against the same
    expression with the argument rounded as the kernel rounds it and erfc
    in float64, within 8 ulp of the f32 result (rlx_erfcf's 7, the
    product's rounding), over 40000 points of [-13.5, 8) and 10000 random
    ones of [-1, 1] where the result is a normal float."""
    import math

    rng = np.random.default_rng()
    x = np.concatenate([np.linspace(-13.5, 8.0, 40000, endpoint=False), rng.uniform(-1, 1, 10000)]).astype(np.float32)
    g = rlxc.GraphBuilder()
    module = g.build([g.gelu(g.input("x", [x.size]))])
    got = rlxc.compile(module, target="cuda").run({"x": x}, poison=True)[0].astype(np.float64)
    z = (x * np.float32(-0.7071067811865476)).astype(np.float64)
    want = 0.5 * x.astype(np.float64) * np.array([math.erfc(v) for v in z.tolist()])
    normal = np.abs(want) > 2.0**-126
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    err = (np.abs(got - want) / ulp)[normal]
    assert normal.sum() > 0.95 * x.size and err.max() <= 8.0, (err.max(), x[normal][np.argmax(err)])


@pytest.mark.parametrize("dtype,most", [("f16", 16), ("bf16", 128)])
def test_gelu_16bit_every_input_on_gpu(dtype, most):
    """Every finite f16/bf16 value through the GPU's GELU (and bias + GELU
    with a zero bias: the same values through the bias path's rounding):
    within 1 ulp of GELU computed in float64 and rounded once, and equal
    but for a few rounding ties (the emulation in tests/test_gelu16.py
    finds 7 f16 and 64 bf16); bf16 results under 1e-38 may be 0 (the
    erfc's 2^x flushes subnormals)."""
    from test_gelu16 import _every, _round, check_every_input

    x = _every(dtype)
    xin = x.astype(np.float16) if dtype == "f16" else x
    g = rlxc.GraphBuilder()
    xi, b = g.input("x", [x.size], dtype), g.input("b", [x.size], dtype)
    module = g.build([g.gelu(xi), g.gelu(g.add(xi, b))])
    outs = rlxc.compile(module, target="cuda").run({"x": xin, "b": np.zeros_like(xin)}, poison=True)
    for out in outs:
        check_every_input(dtype, x, _round(dtype, out.astype(np.float32)), most)


def test_cache_cold_then_warm_on_gpu(tmp_path, monkeypatch):
    monkeypatch.setenv("RLXC_CACHE_DIR", str(tmp_path))
    g = rlxc.GraphBuilder()
    x = g.input("x", [1000])
    module = g.build([g.softmax(g.gelu(x))])
    check(module)  # cold: compiles and writes the cache
    entries = list(tmp_path.rglob("*.cubin"))
    assert entries
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    check(module)  # warm: loads the cached cubins, writes nothing
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.cubin")} == stamps


def test_matmul_runs_on_cublaslt_without_tf32():
    from rlxc.runtime import cublaslt

    if not cublaslt.available():
        pytest.skip("nvmath-python is not installed (the `cuda` extra)")
    g = rlxc.GraphBuilder()
    a, b = g.input("a", [3, 257, 129]), g.input("b", [3, 129, 65])
    x, w, bias = g.input("x", [100, 300]), g.param("w", [70, 300]), g.param("bias", [70])
    module = g.build([g.matmul(a, b), g.linear(x, w, bias, activation="relu"), g.linear(x, w, bias, activation="gelu_tanh")])
    rng = np.random.default_rng()
    params = {"w": rng.standard_normal((70, 300)).astype(np.float32), "bias": rng.standard_normal(70).astype(np.float32)}
    exe = rlxc.compile(module, target="cuda", params=params)
    assert exe.gemm_backend == "cuBLASLt"
    check(module, params)  # 1e-5 relative: TF32 (about 3e-4) would fail it


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_gemm_autotune_picks_the_fastest_proposal_and_reuses_it(dtype, monkeypatch):
    """Each cuBLASLt gemm runs the fastest of cuBLASLt's proposals, timed at
    load (here without the floor of AUTOTUNE_MIN_US: these gemms are
    short): the chosen index is the timings' argmin, or the first where
    none beats it by AUTOTUNE_MARGIN; every proposal that ran gives the
    interpreter's result; a second executable of the same problem takes
    the same choice untimed; gemm_autotune=False keeps proposal 0; with the
    floor, a gemm under it times its first proposal only and keeps it."""
    from rlxc.runtime import cublaslt

    if not cublaslt.available():
        pytest.skip("nvmath-python is not installed (the `cuda` extra)")
    monkeypatch.setattr(cublaslt, "_TUNED", {})
    monkeypatch.setattr(cublaslt, "AUTOTUNE_MIN_US", 0.0)
    rng = np.random.default_rng()
    m, k, n = 2464 + int(rng.integers(0, 7)), 192, 320  # rows that are not a round number
    g = rlxc.GraphBuilder()
    x, w, bias = g.input("x", [m, k], dtype), g.param("w", [n, k], dtype), g.param("bias", [n], dtype)
    module = g.build([g.linear(x, w, bias), g.matmul(g.input("a", [m, k], dtype), g.input("b", [k, 96], dtype))])
    inputs, params = random_inputs(module, rng)
    wants = rlxc.interpret(module, inputs, params)
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}[dtype]

    def check_outputs(exe):
        for got, want in zip(exe.run(inputs), wants):
            got, want = np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
            assert np.linalg.norm(got - want) / np.linalg.norm(want) < tol

    first = rlxc.compile(module, target="cuda", params=params, mode="stream")  # stream mode: use(i) applies at once
    gemms = [launch for launch in first.launches if isinstance(launch, cublaslt.LtGemm)]
    assert len(gemms) == 2 and len(first.gemm_tuning) == 2
    for gemm, times in zip(gemms, first.gemm_tuning):
        assert len(times) == (gemm.candidates if gemm.candidates > 1 else 0)
        if not times:
            continue
        best = int(np.argmin(times))
        assert gemm.choice == (best if times[best] <= times[0] * (1 - cublaslt.AUTOTUNE_MARGIN) else 0), times
        assert all(t > 0 for t in times) and np.isfinite(times[0]), times
        chosen = gemm.choice
        for i, t in enumerate(times):  # every proposal that ran computes the product
            if np.isfinite(t):
                gemm.use(i)
                check_outputs(first)
        gemm.use(chosen)
    again = rlxc.compile(module, target="cuda", params=params)
    assert again.gemm_tuning == [[], []]
    assert [gm.choice for gm in again.launches if isinstance(gm, cublaslt.LtGemm)] == [gm.choice for gm in gemms]
    plain = rlxc.compile(module, target="cuda", params=params, gemm_autotune=False)
    assert plain.gemm_tuning == [] and all(gm.choice == 0 for gm in plain.launches if isinstance(gm, cublaslt.LtGemm))
    for exe in (again, plain):
        check_outputs(exe)
    monkeypatch.setattr(cublaslt, "_TUNED", {})
    monkeypatch.setattr(cublaslt, "AUTOTUNE_MIN_US", 1e9)  # every gemm under the floor
    floored = rlxc.compile(module, target="cuda", params=params)
    assert all(len(t) in (0, 1) for t in floored.gemm_tuning), floored.gemm_tuning
    assert all(gm.choice == 0 for gm in floored.launches if isinstance(gm, cublaslt.LtGemm))
    check_outputs(floored)


def _device_case():
    """A softmax(gelu(x)) executable, a fresh host input, its reference, and a
    device array of our own holding exactly that input (what an identity
    graph leaves on the device)."""
    host = np.random.default_rng().standard_normal((64, 96)).astype(np.float32)
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.gelu(g.input("x", [64, 96])))])
    (want,) = rlxc.interpret(module, {"x": host})
    g2 = rlxc.GraphBuilder()
    y = g2.input("x", [64, 96])
    (dev,) = rlxc.compile(g2.build([g2.neg(g2.neg(y))]), target="cuda").run({"x": host}, device_outputs=True)
    assert isinstance(dev, rlxc.cuda.DeviceArray)
    np.testing.assert_array_equal(dev.numpy(), host)
    return rlxc.compile(module, target="cuda"), host, want, dev


def test_device_arrays_in_and_out():
    exe, host, want, dev = _device_case()
    (out,) = exe.run({"x": dev})  # device in -> device out, no host copy
    assert isinstance(out, rlxc.cuda.DeviceArray)
    got = out.numpy()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5
    try:
        import cupy
    except Exception:
        return
    c = cupy.asarray(out)  # consumers take the output without a copy
    np.testing.assert_array_equal(cupy.asnumpy(c), got)
    (again,) = exe.run({"x": cupy.asarray(host)})
    np.testing.assert_array_equal(again.numpy(), got)
    with pytest.raises(rlxc.InputError, match="input 'x' is a device array of shape \\[64, 95\\]"):
        exe.run({"x": cupy.zeros((64, 95), dtype=cupy.float32)})
    with pytest.raises(rlxc.InputError, match="non-contiguous"):
        exe.run({"x": cupy.zeros((96, 64), dtype=cupy.float32).T})


def test_graph_without_inputs_returns_host_arrays():
    """No input is on the device, so outputs come back as numpy arrays (the
    I/O graph path once returned its device pool here); device_outputs=True
    still gives device arrays."""
    g = rlxc.GraphBuilder()
    c = np.random.default_rng().standard_normal((5, 7)).astype(np.float32)
    k = g.constant(c)
    module = g.build([k, g.exp(k)])
    exe = rlxc.compile(module, target="cuda")
    for _ in range(2):
        got, e = exe.run({})
        assert isinstance(got, np.ndarray) and got.shape == (5, 7)
        np.testing.assert_array_equal(got, c)
        np.testing.assert_allclose(e, np.exp(c.astype(np.float64)), rtol=1e-6)
    dev = exe.run({}, device_outputs=True)
    assert isinstance(dev[0], rlxc.cuda.DeviceArray)
    np.testing.assert_array_equal(dev[0].numpy(), c)


class DLPackOnly:
    """Hides everything of a tensor but DLPack (as a JAX array offers)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_inputs_and_outputs():
    import gc

    from rlxc.runtime import dlpack

    exe, host, want, dev = _device_case()
    (out,) = exe.run({"x": DLPackOnly(dev)})  # through the capsule, not the CAI
    assert isinstance(out, rlxc.cuda.DeviceArray)
    got = out.numpy()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5
    g3 = rlxc.GraphBuilder()
    smaller = rlxc.compile(g3.build([g3.neg(g3.input("x", [32, 96]))]), target="cuda")
    with pytest.raises(rlxc.InputError, match="input 'x' is a DLPack tensor of shape \\[64, 96\\] and type float32, expected"):
        smaller.run({"x": DLPackOnly(dev)})
    before = dlpack.live_count()
    try:
        import cupy
    except Exception:
        return
    c = cupy.from_dlpack(out)  # our capsule, consumed by CuPy
    np.testing.assert_array_equal(cupy.asnumpy(c), got)
    (again,) = exe.run({"x": DLPackOnly(cupy.asarray(host))})
    np.testing.assert_array_equal(again.numpy(), got)
    del c
    gc.collect()
    assert dlpack.live_count() <= before  # the consumer released it


def test_long_softmax_rows_with_masked_elements():
    # -inf (masked) elements before and after the row's first finite value,
    # and a shifted row: the online max and sum must agree with two passes.
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("x", [3, 10000]))])
    x = rng.standard_normal((3, 10000)).astype(np.float32) * 4
    x[0, :5000] = -np.inf
    x[1, rng.random(10000) < 0.9] = -np.inf
    x[2] += 80.0
    (want,) = rlxc.interpret(module, {"x": x})
    (got,) = rlxc.compile(module, target="cuda").run({"x": x}, poison=True)
    assert not np.isnan(got).any()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5


@pytest.mark.parametrize("merged", [True, False])
@pytest.mark.parametrize("cols,dtype", [(64, "f16"), (1000, "f32"), (4096, "bf16"), (4097, "f16"), (32768, "f32"),
                                        (32768, "bf16"), (30001, "f16"), (10001, "f16"), (70001, "bf16"), (50257, "f32"), (300001, "bf16"),
                                        (524289, "f32")])
def test_softmax_statistics_with_masked_rows_in_every_form(cols, dtype, merged, monkeypatch):
    """softmax and log_softmax in each row form, with the merged (one
    reduction of per-thread (max, sum) pairs) and the two-pass statistics:
    rows whose first half is -inf (whole threads, blocks or cluster blocks
    hold nothing but -inf), mostly -inf, shifted far up, one finite value,
    all -inf (NaN, as numpy gives) and one NaN (a NaN row), against the
    interpreter: the same NaN and -inf places, the rest within the dtype's
    tolerance per row."""
    from rlxc.codegen import rows as row_forms
    from rlxc.testing.strategies import random_array

    for form in ("WARP", "BLOCK", "CLUSTER", "SMEM"):
        monkeypatch.setattr(row_forms, f"MERGED_STATS_{form}", merged)
    g = rlxc.GraphBuilder()
    x = g.input("x", [7, cols], dtype)
    module = g.build([g.softmax(x), g.log_softmax(x)])
    rng = np.random.default_rng()
    xs = random_array((7, cols), dtype, rng) * 4
    xs[0, : cols // 2] = -np.inf
    xs[1, rng.random(cols) < 0.9] = -np.inf
    xs[2] += 80.0
    xs[3, :] = -np.inf
    xs[3, rng.integers(cols)] = 1.5
    xs[4, :] = -np.inf
    xs[5, rng.integers(cols)] = np.nan
    want = rlxc.interpret(module, {"x": xs})
    got = rlxc.compile(module, target="cuda").run({"x": xs}, poison=True)
    tol = TOL[{"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype]]
    for i, (w, o) in enumerate(zip(want, got)):
        w64, o64 = np.asarray(w, np.float64), np.asarray(o, np.float64)
        np.testing.assert_array_equal(np.isnan(o64), np.isnan(w64), err_msg=f"output {i}")
        np.testing.assert_array_equal(np.isneginf(o64), np.isneginf(w64), err_msg=f"output {i}")
        assert np.isnan(o64[4]).all() and np.isnan(o64[5]).all()
        for r in (0, 1, 2, 3, 6):
            fin = np.isfinite(w64[r])
            err = np.linalg.norm(w64[r][fin] - o64[r][fin]) / max(np.linalg.norm(w64[r][fin]), 1e-3)
            assert err < tol, (i, r, err)


def test_device_input_from_another_stream():
    try:
        import cupy
    except Exception:
        pytest.skip("CuPy not installed")
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    x = g.input("x", [1024, 1024])
    module = g.build([g.tanh(x)])
    exe = rlxc.compile(module, target="cuda")
    host = rng.standard_normal((1024, 1024)).astype(np.float32)
    (want,) = rlxc.interpret(module, {"x": 2 * host})
    s = cupy.cuda.Stream(non_blocking=True)
    with s:  # produced on a stream that does not sync with the default one
        a = cupy.asarray(host)
        for _ in range(20):  # keep that stream busy when run() is called
            a = a * 1.0
        a = a * 2
        (got,) = exe.run({"x": a})
    assert np.linalg.norm(got.numpy() - want) / np.linalg.norm(want) < 1e-5


def test_out_of_memory_names_sizes():
    g = rlxc.GraphBuilder()
    x = g.input("x", [2**36])  # 256 GiB in, 256 GiB out: more than any GPU has
    module = g.build([g.neg(x)])
    with pytest.raises(rlxc.cuda.CudaError, match=r"cuMemAlloc\(549755813888 bytes for the activation arena\) failed: CUDA_ERROR_OUT_OF_MEMORY .*asked for 549755813888 bytes, \d+ of \d+ free"):
        rlxc.compile(module, target="cuda")


def test_topk_nan_ties_and_infinities_on_gpu():
    # NaN is the largest; equal values (and -0.0 == 0.0) come in index order,
    # in rows short and long (selection passes over many strided chunks).
    rng = np.random.default_rng()
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 3000])
    module = g.build([*g.topk(x, 40), *g.topk(x, 40, largest=False)])
    v = np.round(rng.standard_normal((4, 3000)) * 2).astype(np.float32)  # many ties
    v[0, rng.random(3000) < 0.01] = np.nan
    v[1, ::7] = -0.0
    v[2, ::5] = np.inf
    v[3, ::3] = -np.inf
    want = rlxc.interpret(module, {"x": v})
    got = rlxc.compile(module, target="cuda").run({"x": v}, poison=True)
    for w, o in zip(want, got):
        np.testing.assert_array_equal(o, w)


#: Row lengths of the row-kernel sweep: attention rows (64, 128), odd and
#: unaligned lengths (100, 1000, 4097), hidden sizes (768, 4096), and long
#: rows past the register-cached forms: split over clusters on sm_90 (8200,
#: 32768, 50000, 131072; 200000 at 8 blocks of 800 threads in f32; f32
#: softmax of 30522 and f32 layer_norm up to 32768 in a block of up to 1024
#: threads: rows.block_row_max), and
#: past a cluster over blocks that meet through global memory (300001,
#: 1048576: the grid form).
ROW_LENGTHS = [33, 64, 65, 100, 128, 197, 257, 768, 1000, 1001, 4096, 4097, 8200, 30522, 32000, 32768, 50000, 50257, 131072, 200000,
               300001, 1048576]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", ROW_LENGTHS)
def test_row_kernels_every_length_and_dtype(cols, dtype):
    """softmax, log_softmax, layer_norm, rms_norm and the fused residual norm
    over rows of every form's length, against the interpreter (tolerances by
    dtype: TOL). Few rows for long ones, so each case stays small."""
    _row_kernels(cols, dtype)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("rows,cols", [(1001, 64), (37, 128), (3, 256), (999, 512), (1, 64)])
def test_row_kernels_in_batches_of_rows(rows, cols, dtype):
    """Short 16-bit rows reduced twice take 2 rows a group (rows.WARP_BATCH),
    with row counts the blocks' 2 x rows-per-block do not divide (the last
    group's second row, or its first, past the end), beside rms_norm (one
    reduction: one row a group)."""
    _row_kernels(cols, dtype, rows)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,cols", [(1001, 65), (37, 197), (3, 33), (999, 66), (5, 196), (1, 129), (25, 7), (8191, 65),
                                       (3001, 3), (2999, 5), (4099, 7), (2999, 15), (1001, 13), (577, 31), (9, 25), (1001, 11),
                                       (33, 21)])
def test_row_kernels_in_batches_of_narrow_rows(rows, cols, dtype):
    """Warp-form rows whose accesses are narrower than 16 bytes (odd lengths,
    16-bit lengths 8 does not divide) take up to 4 rows a group
    (rows.WARP_BATCH_NARROW_BYTES), their accesses past the row's end left
    out of the group's loads, with row counts the blocks' rows do not divide;
    every row op, rms_norm and the fused residual norm (a prologue: one row a
    group) beside them. 16-bit rows of 5 and 7 elements, and of 11-31 over 2
    or 4 lanes of 6 elements or more, are staged through shared memory
    instead (rows.WARP_STAGED_TINY; 9-31 a thread a row since
    WARP_STAGED_ODD_SOLO_MIN, and f32 softmax's odd rows of 5-31:
    WARP_STAGED_ODD_SOLO_F32), with a last block of fewer rows, and
    so are 16-bit rows of 33 and 65 (odd, a thread a row:
    rows.WARP_STAGED_ODD_SOLO) and of 66 (4-byte accesses, a thread a row:
    rows.WARP_STAGED_NARROW_SOLO), and softmax's 16-bit rows of 129 and 197
    (over 32 lanes: rows.WARP_STAGED_ROW_BYTES)."""
    from rlxc.codegen import rows as rows_mod

    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, cols], dtype)
    lowered = rlxc.run_pipeline(g.build([g.softmax(x)]), "rlx-cuda{arch=sm_90 sm_count=132}")
    # softmax batched in every case here but f32 rows of 196 (16-byte accesses) and of 33/65
    # (WARP_NARROW_ITEMS: 5 a lane)/129/197 (a lane's accesses past WARP_BATCH_NARROW_HELD_MAX),
    # and 16-bit rows staged (rows.WARP_STAGED_TINY; 33-66 a thread a row: WARP_STAGED_ODD_SOLO, _NARROW_SOLO;
    # softmax's odd rows of 129 and 197 over 32 lanes: WARP_STAGED_ROW_BYTES)
    staged = (dtype != "f32" and cols in (5, 7, 11, 13, 15, 21, 25, 31, 33, 65, 66, 129, 197)
              or dtype == "f32" and cols % 2 == 1 and 5 <= cols <= 31)  # f32 odd rows: WARP_STAGED_ODD_SOLO_F32
    if staged and rows_mod.WARP_STAGED_TINY:
        assert "staged: the block's" in str(lowered)
    elif rows_mod.WARP_BATCH_NARROW_MAX > 1 and not (dtype == "f32" and cols in (33, 65, 129, 196, 197)):
        assert " rows per group" in str(lowered)
    _row_kernels(cols, dtype, rows)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", [100, 1000, 1001, 4097, 32000])
def test_row_kernels_guarded_per_element(cols, dtype, monkeypatch):
    """The guarded and peeled rows with their per-element column tests (the
    forms GUARDED_ACCESS_GUARDS and PEELED_ACCESS_GUARDS replace) still hold."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "GUARDED_ACCESS_GUARDS", False)
    monkeypatch.setattr(rows, "PEELED_ACCESS_GUARDS", False)
    _row_kernels(cols, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", [8200, 32768, 50000])
def test_long_rows_without_clusters(cols, dtype, monkeypatch):
    """The shared-memory and streamed forms the cluster form displaces on
    sm_90 still hold (they run on older parts)."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "USE_CLUSTERS", False)
    _row_kernels(cols, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,cols", [(3, 16384), (37, 32768), (5, 50256), (2, 131072), (5, 50257), (7, 32001),
                                       (5, 30522), (9, 16385), (3, 12289), (9, 10001), (5, 8193)])
def test_stream_form_softmax(rows, cols, dtype, monkeypatch):
    """softmax and log_softmax over long rows in the stream form (a block
    of 1024 threads per row, read twice, or of 256 or 512 for windowed rows
    of few accesses; f32, rows of 16384 and of 131072 with the table
    widened) against
    the interpreter: random rows, then rows holding -inf (they add nothing;
    a row of only -inf is NaN, 0/0, as in the reference), +inf or NaN (the
    row's outputs NaN), each in the first, middle or last of a thread's
    8 elements and in the second of its loads; rows 8 does not divide
    through their 16-byte windows (the window's first and last accesses an
    element at a time)."""
    import math

    from rlxc.codegen import rows as rows_mod
    from rlxc.values import round_bf16

    monkeypatch.setattr(rows_mod, "STREAM_DTYPES", ("f32", "f16", "bf16"))
    block_form_up_to(monkeypatch, 8192)  # rows of 8193-16384 (some ops' up to 32768) take the block form by default
    monkeypatch.setattr(rows_mod, "STREAM_ROW_MIN", 16384)
    monkeypatch.setattr(rows_mod, "STREAM_ROW_MAX_BYTES", 2**20)
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, cols], dtype)
    module = g.build([g.softmax(x), g.log_softmax(x)])
    lowered = rlxc.run_pipeline(module, "rlx-cuda{arch=sm_90 sm_count=132}")
    # f16/bf16 rows 8 does not divide through their 16-byte windows (rows.STREAM_WINDOW: each
    # row starts at a different offset in its window); f32 rows 4 does not divide are not streamed
    streamed = 0 if dtype == "f32" and cols % 4 else 2
    assert str(lowered).count("row form: stream (a ") == streamed  # a block, or a cluster (rows past 64 KB)
    check(module)
    rng = np.random.default_rng()
    big = {"f32": 3.4e38, "f16": 65504.0, "bf16": 3.3895e38}[dtype]  # the dtype's largest finite
    xin = rng.standard_normal((6, cols)).astype(np.float32) * 4
    xin[0, :] = -np.inf
    xin[4, :] = -big  # a row masked with the dtype's lowest (as Hugging Face masks): uniform
    xin[5, rng.integers(cols)] = big  # a huge max: one-hot (max * log2e overflows f32)
    threads = rows_mod.stream_threads(cols, 8) if dtype != "f32" else 1024
    second = min(threads, cols // 16) * 8  # a thread's second load (from 16384 elements in blocks of 1024: 8192)
    xin[1, [0, 7, second + 3, cols - 1]] = -np.inf
    xin[2, second + 4] = np.inf
    xin[3, cols // 2 + 5] = np.nan
    xin = round_bf16(xin) if dtype == "bf16" else xin.astype({"f32": np.float32, "f16": np.float16}[dtype])
    g = rlxc.GraphBuilder()
    x = g.input("x", [6, cols], dtype)
    module = g.build([g.softmax(x), g.log_softmax(x)])
    got = rlxc.compile(module, target="cuda").run({"x": xin}, poison=True)
    want = rlxc.interpret(module, {"x": xin}, {})
    for gt, wt in zip(got, want):
        gt, wt = np.asarray(gt, np.float64), np.asarray(wt, np.float64)
        assert np.array_equal(np.isnan(gt), np.isnan(wt)) and np.isnan(gt[[0, 2, 3]]).all()
        ok = ~np.isnan(wt)
        assert np.array_equal(np.isinf(gt[ok]), np.isinf(wt[ok]))
        fin = ok & ~np.isinf(wt)
        tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}[dtype]
        assert np.allclose(gt[fin], wt[fin], rtol=tol, atol=tol * 1e-3), np.max(np.abs(gt[fin] - wt[fin]))
    assert math.isfinite(float(np.asarray(got[0], np.float64)[1].sum()))
    sm = np.asarray(got[0], np.float64)
    assert np.allclose(sm[4], 1.0 / cols, rtol=1e-2) and np.isclose(sm[5].max(), 1.0) and np.isclose(sm[5].sum(), 1.0)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,cols", [(9, 30522), (5, 32768), (9, 50257), (3, 32001), (2, 131072)])
def test_long_norm_rows(rows, cols, dtype):
    """layer_norm and rms_norm over long rows (the cluster form, windowed
    where 8 does not divide the row; f32 layer_norm up to 32768 in the block
    form: rows.block_row_max) against the interpreter, every element
    within the dtype's tolerance: rows 8 does not divide start at every
    offset of their 16-byte windows (9 rows of 50257), a row far from zero
    (a mean of 300 over a spread of 1) and a row of one value (variance 0)."""
    from rlxc.values import round_bf16

    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, cols], dtype)
    gamma, beta = g.param("g", [cols], dtype), g.param("b", [cols], dtype)
    module = g.build([g.layer_norm(x, gamma, beta, eps=1e-5), g.rms_norm(x, gamma, eps=1e-5)])
    rng = np.random.default_rng()

    def cast(a):
        a = a.astype(np.float32)
        return round_bf16(a) if dtype == "bf16" else a.astype({"f32": np.float32, "f16": np.float16}[dtype])

    xin = rng.standard_normal((rows, cols)).astype(np.float32)
    xin[1] += 300.0  # far from zero
    xin[-1] = 2.5  # one value: the variance is 0
    params = {"g": cast(rng.standard_normal(cols) + 1.0), "b": cast(rng.standard_normal(cols))}
    xin = cast(xin)
    want = rlxc.interpret(module, {"x": xin}, params)
    exe = rlxc.compile(module, target="cuda", params=params)
    got = exe.run({"x": xin}, poison=True)
    tol = {"f32": 2e-5, "f16": 2e-3, "bf16": 1.6e-2}[dtype]
    # layer_norm's condition per row: an error e relative to the mean moves the output by
    # e |mean| / sqrt(var + eps) |gamma| (300 for the row near 300, 790 for the row of 2.5s)
    x64 = np.asarray(xin, np.float64)
    cond = np.abs(x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    g64 = np.abs(np.asarray(params["g"], np.float64))
    for name, gt, wt, c in zip(("layer_norm", "rms_norm"), got, want, (cond, 0.0)):
        gt, wt = np.asarray(gt, np.float64), np.asarray(wt, np.float64)
        assert np.isfinite(gt).all(), name
        err = np.abs(gt - wt)
        bad = err > tol * (np.abs(wt) + 1.0 + c * g64)
        assert not bad.any(), (name, np.argwhere(bad)[:5], err.max(), err.max(1))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", [8200, 32768, 50257, 131072])
def test_grid_form_at_cluster_lengths(cols, dtype, monkeypatch):
    """The grid form (rows.GRID_FIRST: before the cluster form) at the
    lengths the cluster form takes: 2-8 blocks per row, windowed rows
    (50257), the fused residual norm's prologue."""
    from rlxc.codegen import rows

    monkeypatch.setattr(rows, "GRID_FIRST", True)
    _row_kernels(cols, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_grid_rows_over_several_waves_and_launches(dtype):
    """Rows of the grid form, 48 of them over about 20 blocks each (more
    blocks than fit the GPU at once: a row's blocks are resident together
    only because tickets hand rows out in the order blocks start), run
    again and again by one executable on fresh inputs (the ticket and
    arrival counters carry over from launch to launch), in stream and graph
    mode, against the interpreter row by row."""
    from rlxc.testing.strategies import random_array

    cols = 300001
    g = rlxc.GraphBuilder()
    x = g.input("x", [48, cols], dtype)
    module = g.build([g.softmax(x), g.layer_norm(x, g.param("g", [cols], dtype), g.param("b", [cols], dtype))])
    rng = np.random.default_rng()
    params = {"g": random_array((cols,), dtype, rng), "b": random_array((cols,), dtype, rng)}
    tol = TOL[{"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype]]
    for mode in ("stream", "graph"):
        exe = rlxc.compile(module, target="cuda", params=params, mode=mode)
        for _ in range(3):
            xs = random_array((48, cols), dtype, rng)
            xs = (xs + rng.standard_normal((48, 1)) * 4).astype(xs.dtype)  # rows far apart
            want = rlxc.interpret(module, {"x": xs}, params)
            got = exe.run({"x": xs}, poison=True)
            for i, (w, o) in enumerate(zip(want, got)):
                w64, o64 = np.asarray(w, np.float64), np.asarray(o, np.float64)
                err = np.linalg.norm(w64 - o64, axis=1) / np.linalg.norm(w64, axis=1)
                assert err.max() < tol, (mode, i, err.max())


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,cols,split", [(2, 4500000, True), (3, 4500001, True), (2, 4500000, False),
                                             (5, 4500000, True)])
def test_streamed_rows_on_gpu(rows, cols, split, dtype, monkeypatch):
    """Rows past the grid form's reach (read twice: online statistics, then
    the output), split over blocks that meet through global memory
    (rows.STREAM_GRID; float4 / uint4 accesses where 4 / 8 divides the row,
    else an element at a time, the fused residual sum as a prologue; 5 rows
    take 265 blocks of 512 threads, more than 2 per multiprocessor of an
    H100, so where a kernel fits only 2 the last row starts in a second
    wave), and with the split off a block per row, against the interpreter
    in stream and graph mode."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "STREAM_GRID", split)
    _row_kernels(cols, dtype, rows)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("columns,vectors,loads", [(True, False, 1), (False, False, 1), (True, True, 1), (True, False, 4),
                                                   (True, True, 4), (True, False, 44), (True, True, 44)])
def test_softmax_over_middle_axes_on_gpu(dtype, columns, vectors, loads, monkeypatch):
    """softmax / log_softmax over non-contiguous axes: the columns form (rows
    in threadIdx.x, slices of the axis in threadIdx.y: 21 channels of
    [n, c, h, w], an axis of 3 over 4099 rows, whose last block is part
    full, an axis of 1000), with rows.COLUMN_VECTORS (4 or 8 neighbouring
    rows per thread where `inner` allows: 4096, 4104, and 2100 in f32;
    here in f32 too and however few the blocks, which by default take the
    element-wide form) and with it off the looping form, against the
    interpreter (stream and graph mode). `loads` 44: 4 loads in flight in
    the output pass too (rows.COLUMN_FORM_OUT_LOADS) and every slice's
    statistics batched (COLUMN_FORM_BATCH_SHARE), the vectors only where
    more slices give them blocks enough (COLUMN_VECTOR_FILLED_BLOCKS_PER_SM:
    [2, 1000, 8192], 32 slices)."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 0)  # slices held in registers: the next test
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 0)
    out_loads = 4 if loads == 44 else 1
    loads = 4 if loads == 44 else loads
    monkeypatch.setattr(R, "COLUMN_FORM_OUT_LOADS", out_loads)
    monkeypatch.setattr(R, "COLUMN_FORM", columns)
    monkeypatch.setattr(R, "COLUMN_VECTORS", vectors)
    monkeypatch.setattr(R, "COLUMN_VECTORS_F32", vectors)
    monkeypatch.setattr(R, "COLUMN_VECTOR_BLOCKS_PER_SM", 10**6 if out_loads > 1 else 0)
    monkeypatch.setattr(R, "COLUMN_VECTOR_FILLED_BLOCKS_PER_SM", 1 if out_loads > 1 else 0)
    monkeypatch.setattr(R, "COLUMN_FORM_BATCH_SHARE", 10**6 if out_loads > 1 else 32)
    monkeypatch.setattr(R, "COLUMN_FORM_LOADS", loads)  # 4: statistics' loads batched where slices are short
    monkeypatch.setattr(R, "COLUMN_VECTOR_LOADS", loads)
    monkeypatch.setattr(R, "COLUMN_FORM_FILL_BLOCKS_PER_SM", 4 if loads > 1 else 0)  # [2, 1000, 2100]: 32 slices
    g = rlxc.GraphBuilder()
    a, c, d = g.input("a", [2, 21, 64, 64], dtype), g.input("c", [1, 3, 4099], dtype), g.input("d", [2, 1000, 2100], dtype)
    e = g.input("e", [1, 5, 300001], dtype)  # 300001 rows of 5: one slice each (COLUMN_FORM_SHORT_AXIS)
    f = g.input("f", [1, 3, 4104], dtype)  # vectors: 513 groups of 8 (1026 of 4), a last block part full
    h = g.input("h", [1, 5, 300008], dtype)  # vectors in one slice
    outs = [g.softmax(a, axis=1), g.log_softmax(a, axis=1), g.softmax(c, axis=1), g.softmax(d, axis=1),
            g.log_softmax(d, axis=-2), g.softmax(e, axis=1), g.softmax(f, axis=1), g.softmax(h, axis=1)]
    if out_loads > 1:  # vectors filled with slices: 32 of 1000 over 2048 (f32: 4096) groups of 8 (4) rows
        outs.append(g.softmax(g.input("l", [2, 1000, 8192], dtype), axis=1))
    check(g.build(outs))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_short_middle_axes_in_few_slices_on_gpu(dtype):
    """softmax, log_softmax and argmax over middle axes of 33-64 elements
    with rows enough to fill the GPU in one or two slices a row
    (rows.COLUMN_FORM_SHORT_AXIS: 281600 rows of 40, 140800 of 33, 138000 of
    64 over an inner axis 8 does not divide), against the interpreter in
    stream and graph mode."""
    g = rlxc.GraphBuilder()
    x, y = g.input("x", [2200, 40, 128], dtype), g.input("y", [1100, 33, 128], dtype)
    z = g.input("z", [1000, 64, 138], dtype)
    check(g.build([g.softmax(x, axis=1), g.log_softmax(y, axis=1), g.softmax(z, axis=1),
                   g.argmax(x, axis=1), g.argmax(y, axis=1), g.argmax(z, axis=1)]))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("merged,paired", [(True, False), (False, False), (True, True)])
def test_softmax_over_middle_axes_held_in_registers_on_gpu(dtype, merged, paired, monkeypatch):
    """The columns form with each thread's slice of the axis in registers
    (rows.COLUMN_CACHED_ELEMS; here before the 16-byte vector form too):
    slices of 21 channels, of 3 over 4099 rows, of 1000 (16 or 32 slices,
    the last elements of some slices missing), 300001 rows of 5, axis -2;
    the statistics merged in one reduction or two, softmax and log_softmax,
    against the interpreter (stream and graph mode). `paired`: f16/bf16
    rows two per thread (rows.COLUMN_PAIRED_ELEMS) wherever `inner` is even,
    the single-row form off."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 64)
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 0 if paired else 64)  # f16/bf16 slices of 63 too (by default 32)
    monkeypatch.setattr(R, "COLUMN_PAIRED_ELEMS", 64 if paired else 0)
    monkeypatch.setattr(R, "COLUMN_CACHED_OVER_VECTORS", True)
    monkeypatch.setattr(R, "COLUMN_CACHED_MERGED", merged)
    g = rlxc.GraphBuilder()
    a, c, d = g.input("a", [2, 21, 64, 64], dtype), g.input("c", [1, 3, 4099], dtype), g.input("d", [2, 1000, 2100], dtype)
    e, f = g.input("e", [1, 5, 300001], dtype), g.input("f", [3, 1000, 1400], dtype)
    check(g.build([g.softmax(a, axis=1), g.log_softmax(a, axis=1), g.softmax(c, axis=1), g.softmax(d, axis=1),
                   g.log_softmax(d, axis=-2), g.softmax(e, axis=1), g.log_softmax(f, axis=1)]))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("merged", [True, False])
@pytest.mark.parametrize("rows16", [32, 16])
def test_softmax_over_middle_axes_over_blocks_on_gpu(dtype, merged, rows16, monkeypatch):
    """The columns form over blocks (rows.COLUMN_GRID: a group of 16 rows'
    slices spread over C blocks that meet through global slots): an axis of
    3000 over 520 rows (6 blocks per group, the last group half full, the
    slices guarded), of 20000 over 3 rows (one group of 40 blocks), of 1000
    over 4200 rows (f16/bf16: 2 blocks; f32 holds it in one), axis -2;
    softmax and log_softmax, the statistics merged in one round over the
    blocks or in two, against the interpreter in stream and graph mode (the
    graph replayed: the ticket and arrival counters go on over launches);
    2-byte elements in groups of 32 rows (rows.COLUMN_GRID_ROWS_16, the
    axis of 20000 falling back to 16) and of 16."""
    from rlxc.codegen import rows as R
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime.driver_api import device_arch

    monkeypatch.setattr(R, "COLUMN_CACHED_MERGED", merged)
    monkeypatch.setattr(R, "COLUMN_GRID_ROWS_16", rows16)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTORS", False)  # [3, 1000, 1400]'s form (the next test's)
    monkeypatch.setattr(R, "COLUMN_PACKED", False)  # (its own test below)
    g = rlxc.GraphBuilder()
    a, b, c = g.input("a", [4, 3000, 130], dtype), g.input("b", [1, 20000, 3], dtype), g.input("c", [3, 1000, 1400], dtype)
    module = g.build([g.softmax(a, axis=1), g.log_softmax(a, axis=-2), g.softmax(b, axis=1), g.log_softmax(c, axis=1)])
    arch, sms = device_arch()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    forms = [op.source.data.splitlines()[2] for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert sum("columns over blocks" in f for f in forms) == (3 if dtype == "f32" else 4), forms
    if dtype != "f32":
        assert sum("(32 rows x 8 slices" in f for f in forms) == (3 if rows16 == 32 else 0), forms
    check(module)


@pytest.mark.parametrize("dtype,nbytes", [("f16", 4), ("bf16", 4), ("f16", 8), ("f32", 8)])
def test_softmax_over_middle_axes_packed_on_gpu(dtype, nbytes, monkeypatch):
    """The packed columns form (rows.COLUMN_PACKED: a thread's `nbytes`
    accesses of neighbouring rows held raw in registers, the rows'
    statistics met by rlx_column_ms_reduce; f32 with COLUMN_PACKED_F32):
    [409, 640, 128] (the benchmark's shape at 64 MiB), [3, 3001, 132] (an
    axis the slices do not divide, the last group of rows partial, 12 blocks
    a group), [40, 640, 68] (groups of rows across outer indices), softmax
    and log_softmax against the interpreter in stream and graph mode (the
    graph replayed: the counters go on over launches), then a column holding +inf, one NaN, one all -inf (NaN, as
    the interpreter gives) and one of large values next to ordinary ones."""
    from rlxc.codegen import rows as R
    from rlxc.values import round_bf16

    monkeypatch.setattr(R, "COLUMN_PACKED_BYTES", nbytes)
    monkeypatch.setattr(R, "COLUMN_PACKED_MIN_WAVE", 0)  # blocks fewer than the multiprocessors too
    monkeypatch.setattr(R, "COLUMN_PACKED_F32", True)
    shapes = [(409, 640, 128), (3, 3001, 132), (40, 640, 68)]
    module, sources = _softmax_over_axis_1(shapes, dtype)
    forms = [s.splitlines()[2] for s in sources]
    assert len(forms) == 6 and all(f.startswith("// row form: packed columns") for f in forms), forms
    assert sum("blocks per" in f for f in forms) >= 2, forms
    check(module)
    rng = np.random.default_rng()
    inputs = {}
    for i, sh in enumerate(shapes):
        v = rng.standard_normal(sh).astype(np.float32)
        v[0, 5, 0] = np.inf
        v[0, 7, 1] = np.nan
        v[0, :, 2] = -np.inf
        v[-1, :, 3] = v[-1, :, 3] + 60.0  # exp(60) overflows f16 unless the max goes first
        inputs[f"x{i}"] = round_bf16(v) if dtype == "bf16" else v.astype({"f32": np.float32, "f16": np.float16}[dtype])
    want = rlxc.interpret(module, inputs)
    got = rlxc.compile(module, target="cuda").run(inputs, poison=True)
    tol = {"f32": (1e-5, 1e-6), "f16": (2e-3, 1e-3), "bf16": (2e-2, 1e-2)}[dtype]
    for k, (w, o) in enumerate(zip(want, got)):
        assert np.isnan(w[0, :, 0]).all() and np.isnan(w[0, :, 1]).all() and np.isnan(w[0, :, 2]).all(), k
        np.testing.assert_allclose(o.astype(np.float64), w.astype(np.float64), rtol=tol[0], atol=tol[1], equal_nan=True,
                                   err_msg=f"output #{k}")


def _softmax_over_axis_1(shapes, dtype):
    """A module of softmax and log_softmax over axis 1 of an input of each of
    `shapes`, and its kernels' sources lowered for this device."""
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime.driver_api import device_arch

    g = rlxc.GraphBuilder()
    ins = [g.input(f"x{i}", list(sh), dtype) for i, sh in enumerate(shapes)]
    module = g.build([op(x, axis=1) for x in ins for op in (g.softmax, g.log_softmax)])
    arch, sms = device_arch()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    return module, [op.source.data for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("fan_in", [16, 4])
@pytest.mark.parametrize("shared,lag,shuffle", [(0, 0, False), (7, 0, False), (0, 1, False), (0, 4, False),
                                                (0, 2, True), (0, 0, True)])
def test_softmax_over_middle_axes_over_blocks_in_vectors_on_gpu(dtype, fan_in, shared, lag, shuffle, monkeypatch):
    """The columns form over blocks in 16-byte items (rows.COLUMN_GRID_VECTORS:
    a group of rows spread over C blocks that hold 16-byte items in
    registers and meet in groups of COLUMN_GRID_VECTOR_FAN_IN, the last of
    each group folding theirs): [3, 3000, 128] (the last block's positions
    guarded), [1, 20000, 64] (79 blocks a group: the last group of blocks
    smaller), [2, 3000, 1400] (groups across the inner axis: 7
    threads of 16 bytes, 25 or 50 groups an outer index), [2, 6000, 24] (3 or
    6 threads of 16 bytes: all of the inner axis); f32 too
    (COLUMN_GRID_VECTORS_F32, off by default); softmax and log_softmax
    against the interpreter in stream and graph mode (the graph replayed:
    the counters go on over launches), then a column holding +inf, one NaN
    and one all -inf (NaN, as the interpreter gives) next to ordinary ones,
    and a masked column (all -1e9; f16 -6e4: uniform);
    with 7 more items a thread in shared memory (COLUMN_GRID_VECTOR_SHARED,
    copied in by cp.async), C as low as 2 (COLUMN_GRID_VECTOR_MIN_BLOCKS);
    lagged (COLUMN_GRID_VECTOR_LAG 1, 2 and 4: the output written by the
    block of a later ticket, the items read again); a block's positions
    folded by shuffles first (COLUMN_GRID_VECTOR_SHUFFLE, where 32 / TX
    positions fill a warp: the first two shapes)."""
    from rlxc.codegen import rows as R
    from rlxc.values import round_bf16

    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_FAN_IN", fan_in)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTORS_F32", True)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHARED", shared)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_MIN_BLOCKS", 2)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG", lag)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS", 2)
    monkeypatch.setattr(R, "COLUMN_GRID_VECTOR_SHUFFLE", shuffle)
    monkeypatch.setattr(R, "COLUMN_PACKED", False)  # (its own test above)
    shapes = [(3, 3000, 128), (1, 20000, 64), (2, 3000, 1400), (2, 6000, 24)]
    module, sources = _softmax_over_axis_1(shapes, dtype)
    forms = [s.splitlines()[2] for s in sources]
    assert len(forms) == 8 and all("columns over blocks in 16-byte items" in f for f in forms), forms
    assert all(f"met in groups of {fan_in})" in f for f in forms[2:4]), forms  # 42 to 157 blocks
    assert all(("7 in shared memory" in f) == (shared == 7) for f in forms), forms
    assert all(("read again" in f) == (lag > 0) for f in forms), forms
    assert [("rlx_shfl(st, " in s) for s in sources] == [shuffle] * 4 + [False] * 4  # TX 8 and 8; 7 and 3
    check(module)
    rng = np.random.default_rng()
    inputs = {}
    for i, sh in enumerate(shapes):
        x = rng.standard_normal(sh).astype(np.float16 if dtype == "f16" else np.float32)
        x[0, sh[1] // 2, 0], x[-1, sh[1] - 1, 2], x[-1, :, 5] = np.inf, np.nan, -np.inf
        x[0, :, 1] -= 80.0  # a column far under the others: no rescale may flush it
        x[-1, :, 3] = -6e4 if dtype == "f16" else -1e9  # a masked column (all equal, far from 0): 1 / axis each
        inputs[f"x{i}"] = round_bf16(x) if dtype == "bf16" else x
    want = rlxc.interpret(module, inputs)
    got = rlxc.compile(module, target="cuda").run(inputs, poison=True)
    tol = {"f32": (1e-5, 1e-6), "f16": (2e-3, 1e-3), "bf16": (2e-2, 1e-2)}[dtype]
    for k, (w, o) in enumerate(zip(want, got)):
        assert np.isnan(w[0, :, 0]).all() and np.isnan(w[-1, :, 2]).all() and np.isnan(w[-1, :, 5]).all(), k
        if k % 2 == 0:  # softmax: the masked column uniform (the approximate 2^x of x - max, not of a rounded max)
            np.testing.assert_allclose(o[-1, :, 3].astype(np.float64), 1.0 / shapes[k // 2][1], rtol=tol[0])
        np.testing.assert_allclose(o.astype(np.float64), w.astype(np.float64), rtol=tol[0], atol=tol[1], equal_nan=True,
                                   err_msg=f"output #{k}")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_softmax_over_long_middle_axes_lagged_on_gpu(dtype):
    """The lagged columns form by default (rows.COLUMN_GRID_VECTOR_LAG) over
    axes whose C passes half of what the device holds (no co-residency:
    [1, 131072, 128], 512 blocks a group; [2, 70001, 64], the last block
    guarded) and one of 16 blocks ([4, 4096, 128]), softmax and
    log_softmax against the interpreter in stream and graph mode (the
    tickets and counters go on over launches), then one executable a mode
    launched three times on new inputs, shifted by 4 each time (a block
    reading the last launch's statistics would be off by e^4), with a
    masked column."""
    from rlxc.values import round_bf16

    shapes = [(1, 131072, 128), (2, 70001, 64), (4, 4096, 128)]
    module, sources = _softmax_over_axis_1(shapes, dtype)
    forms = [s.splitlines()[2] for s in sources]
    assert len(forms) == 6 and all("16-byte items" in f and "read again" in f for f in forms), forms
    check(module)
    rng = np.random.default_rng()
    tol = {"f16": (2e-3,), "bf16": (2e-2,)}[dtype]
    for mode in ("stream", "graph"):
        exe = rlxc.compile(module, target="cuda", mode=mode)
        for rep in range(3):  # new inputs each launch (shifted too): statistics left from the last launch would show
            inputs = {}
            for i, sh in enumerate(shapes):
                x = rng.standard_normal(sh).astype(np.float32) * 3 + 4.0 * rep
                x[-1, :, 3] = -6e4 if dtype == "f16" else -1e9  # masked: uniform
                inputs[f"x{i}"] = x.astype(np.float16) if dtype == "f16" else round_bf16(x)
            want = rlxc.interpret(module, inputs)
            got = exe.run(inputs, poison=True)
            for k, (w, o) in enumerate(zip(want, got)):
                msg = f"{mode}, launch {rep}, output #{k}"
                if k % 2 == 0:
                    np.testing.assert_allclose(o[-1, :, 3].astype(np.float64), 1.0 / shapes[k // 2][1], rtol=tol[0],
                                               atol=1e-7, err_msg=msg)
                # atol 1e-7: outputs near 1 / 131072 are f16 subnormals (spacing 6e-8)
                np.testing.assert_allclose(o.astype(np.float64), w.astype(np.float64), rtol=tol[0], atol=1e-7,
                                           err_msg=msg)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_softmax_over_middle_axes_over_the_whole_inner_axis_on_gpu(dtype):
    """The columns form with a block's rows all of a short inner axis
    (rows.COLUMN_INNER_ROWS: 49 and 7 pixels; 5 slices of 52 over 256, the
    last element of some missing; 16 slices of 16 over 256;
    7 x 3000: past it, the default forms), softmax and log_softmax, against
    the interpreter in stream and graph mode."""
    g = rlxc.GraphBuilder()
    a, b, c = g.input("a", [30, 256, 49], dtype), g.input("b", [60, 64, 49], dtype), g.input("c", [40, 256, 7], dtype)
    d = g.input("d", [20, 3000, 7], dtype)
    check(g.build([g.softmax(a, axis=1), g.log_softmax(a, axis=-2), g.softmax(b, axis=1), g.log_softmax(c, axis=1),
                   g.softmax(d, axis=1)]))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("vectors,pad", [(True, 2.0), (False, 2.0), (True, 0)])
def test_softmax_over_middle_axes_in_the_slab_form_on_gpu(dtype, vectors, pad, monkeypatch):
    """The slab form (rows.COLUMN_SLAB_ELEMS: a block's outer indices' elements
    in shared memory, read and written in order): 7 outer indices per block
    over 1000 (the last block 6), 2 threads per column ([1000, 64, 7]); one
    outer index a block and 8 or 16 threads per column ([41, 21, 31], [5,
    300, 3]); an axis of 2 ([4096, 2, 3]: the column statistics within the
    shared-memory budget; [3, 1000, 7] takes the whole-inner-axis form);
    softmax and log_softmax against the interpreter in stream and graph
    mode, then a row holding +inf, one NaN and one all -inf (NaN rows, as
    the interpreter gives). With rows.COLUMN_SLAB_VECTORS, [1000, 64, 7] and
    [600, 64, 3] move as 16-byte items (an item's columns wrapping around
    the inner axis). With both and rows.COLUMN_SLAB_PAD, [6000, 64, 3]'s
    outer indices are padded in shared memory (37 a block, 20 floats after
    each); [20000, 21, 3] moves single elements, unpadded."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_SLAB_ELEMS", 8192)
    monkeypatch.setattr(R, "COLUMN_SLAB_VECTORS", vectors)
    monkeypatch.setattr(R, "COLUMN_SLAB_PAD", pad)
    shapes = [(1000, 64, 7), (41, 21, 31), (5, 300, 3), (3, 1000, 7), (4096, 2, 3), (600, 64, 3), (6000, 64, 3),
              (20000, 21, 3)]
    g = rlxc.GraphBuilder()
    ins = [g.input(f"x{i}", list(sh), dtype) for i, sh in enumerate(shapes)]
    module = g.build([op(x, axis=1) for x in ins for op in (g.softmax, g.log_softmax)])
    if pad and vectors:
        from rlxc.dialects import rlx_cuda
        from rlxc.runtime.driver_api import device_arch

        arch, sms = device_arch()
        lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
        forms = [op.source.data.splitlines()[2] for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
        assert sum("floats of padding each" in f for f in forms) == 2, forms
    check(module)
    rng = np.random.default_rng()
    inputs = {}
    for i, sh in enumerate(shapes):
        x = rng.standard_normal(sh).astype(np.float16 if dtype == "f16" else np.float32)
        x[0, min(5, sh[1] - 1), 0], x[1, min(7, sh[1] - 1), 2], x[-1, :, 1] = np.inf, np.nan, -np.inf
        inputs[f"x{i}"] = x
    if dtype == "bf16":
        from rlxc.values import round_bf16

        inputs = {k: round_bf16(v) for k, v in inputs.items()}
    want = rlxc.interpret(module, inputs)
    got = rlxc.compile(module, target="cuda").run(inputs, poison=True)
    tol = {"f32": (1e-5, 1e-6), "f16": (2e-3, 1e-3), "bf16": (2e-2, 1e-2)}[dtype]
    for k, (w, o) in enumerate(zip(want, got)):
        assert np.isnan(w).sum() >= 3, k
        np.testing.assert_allclose(o.astype(np.float64), w.astype(np.float64), rtol=tol[0], atol=tol[1], equal_nan=True,
                                   err_msg=f"output #{k}")


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("cached", [True, False])
def test_softmax_infinities_and_nan_in_every_form(dtype, cached, monkeypatch):
    """A row holding +inf is NaN everywhere (exp(inf - inf), as two passes
    and the interpreter give), a row holding NaN too, a row all -inf NaN,
    other rows untouched: over a middle axis (slices held in registers, or
    read twice with the online statistics, `rlx_ms_add`, element-wide and in
    16-byte vectors; spread over blocks, rows.COLUMN_GRID: [4, 3000, 130]
    when cached), in the looping form, in a warp per row, and in rows read
    twice (past the grid form), softmax and log_softmax."""
    from rlxc.codegen import rows as R

    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS", 64 if cached else 0)
    monkeypatch.setattr(R, "COLUMN_CACHED_ELEMS_16", 64 if cached else 0)
    monkeypatch.setattr(R, "COLUMN_VECTOR_BLOCKS_PER_SM", 0)
    carrier = np.float16 if dtype == "f16" else np.float32
    shapes = [(2, 1000, 2100), (2, 1000, 4096), (3, 100, 40), (4, 300), (2, 4500000), (4, 3000, 130)]
    g = rlxc.GraphBuilder()
    ins = [g.input(f"x{i}", list(s), dtype) for i, s in enumerate(shapes)]
    outs = [op(x, axis=1) for x in ins for op in (g.softmax, g.log_softmax)]
    module = g.build(outs)
    rng = np.random.default_rng()
    inputs = {}
    for i, s in enumerate(shapes):
        x = rng.standard_normal(s).astype(carrier)
        if len(s) == 3:
            x[0, 5, 0] = np.inf
            x[1, 7, 3] = np.nan
            x[0, :, 1] = -np.inf
        else:
            x[0, 5] = np.inf
            x[1, 3] = np.nan
            x[2 % s[0], :] = -np.inf
        inputs[f"x{i}"] = x
    want = rlxc.interpret(module, inputs)
    got = rlxc.compile(module, target="cuda").run(inputs, poison=True)
    for k, (w, o) in enumerate(zip(want, got)):
        assert np.isnan(w).sum() >= 2, k  # the test means something: NaN rows
        np.testing.assert_allclose(o.astype(np.float64), w.astype(np.float64), rtol=2e-3 if dtype == "f16" else 1e-5,
                                   atol=1e-3 if dtype == "f16" else 1e-6, equal_nan=True, err_msg=f"output #{k}")


def test_grid_form_refused_where_its_blocks_cannot_be_resident_together():
    """A grid-form kernel whose blocks of a row could not all be resident at
    once (here: its `rlx.co_resident` raised past what any device holds, as
    a module lowered for a larger part would be on a MIG slice) is refused
    when the executable is loaded, with the figures, instead of hanging;
    as lowered for this device it loads and matches the interpreter."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from rlxc.codegen import HEADERS
    from rlxc.dialects import rlx_cuda
    from rlxc.runtime.driver_api import device_arch
    from rlxc.runtime.executable import CudaExecutable
    from rlxc.runtime.nvrtc import compile_module_kernels

    g = rlxc.GraphBuilder()
    module = g.build([g.softmax(g.input("x", [2, 300001]))])
    arch, sms = device_arch()
    lowered = rlxc.run_pipeline(module, f"rlx-cuda{{arch={arch} sm_count={sms}}}")
    (kernel,) = [op for op in lowered.walk() if isinstance(op, rlx_cuda.KernelOp)]
    assert "row form: grid (" in kernel.source.data and kernel.attributes[rlx_cuda.CO_RESIDENT].value.data >= 2
    cubins = compile_module_kernels(lowered, arch, headers=HEADERS)
    x = np.random.default_rng().standard_normal((2, 300001)).astype(np.float32)
    (got,) = CudaExecutable(lowered, {}, cubins, "stream").run({"x": x}, poison=True)
    (want,) = rlxc.interpret(module, {"x": x})
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5
    kernel.attributes[rlx_cuda.CO_RESIDENT] = IntegerAttr(10**6, i64)
    free_before = _free_device_bytes()
    with pytest.raises(rlxc.cuda.CudaError, match=r"needs 1000000 blocks of \d+ threads resident together "
                                                   r"\(room for 1999999, .*this device holds \d+ "
                                                   r"\(\d+ multiprocessors x \d+\)"):
        CudaExecutable(lowered, {}, cubins, "stream")
    assert _free_device_bytes() >= free_before - 2**20  # the arena it made before the check was freed


@pytest.mark.parametrize("dt", ["f32", "bf16", "i32"])
def test_zero_extent_reductions_and_rows_on_gpu(dt):
    """Reductions over an empty axis give the empty reduction's value (0,
    1, -inf / +inf or the integer type's least / greatest, NaN for a mean)
    exactly as the interpreter does; ops over no elements give empty
    outputs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_codegen import _empty_reductions

    module = _empty_reductions(dt)
    inputs, params = random_inputs(module, np.random.default_rng())
    want = rlxc.interpret(module, inputs, params)
    got = rlxc.compile(module, target="cuda", params=params).run(inputs, poison=True)
    for i, (w, o) in enumerate(zip(want, got)):
        assert w.shape == o.shape, (i, w.shape, o.shape)
        np.testing.assert_array_equal(o, w, err_msg=f"output {i}")


def _free_device_bytes() -> int:
    from rlxc.runtime.driver_api import _driver, check

    free, _total = check(_driver().cuMemGetInfo(), "cuMemGetInfo")
    return free


#: Windowed-row settings of rlxc.codegen.rows the alignment test runs under.
WINDOW_SETTINGS = {
    "off": {"WINDOW_ROWS": False},
    "default": {},
    "scalar-params": {"WINDOW_VECTOR_PARAMS": False},
    "f32-unwindowed": {"WINDOW_F32": False},
    "every-length": {"WINDOW_EVEN_16": True, "PACKED_ROWS": False},
    "f32-even": {"WINDOW_F32_EVEN": True},
    "softmax-stored": {"SOFTMAX_STORED_ROWS": True},
    "stored-regs-uncapped": {"WINDOW_STORED_REGS": 0},
    "guards-per-element": {"GUARDED_ACCESS_GUARDS": False, "PEELED_ACCESS_GUARDS": False},
    "every-chunk-tested": {"WINDOW_WHOLE_CHUNKS": False},
    # layer_norm's params from their shifted copies (on by default), rms_norm's too here
    "param-copies": {"PARAM_COPIES": True, "PARAM_COPIES_MIN_COLUMNS": 1},
    # softmax's 16-bit rows of 8193-65536 too through the cluster form (by default the stream form)
    "cluster-softmax": {"STREAM_ROWS": False},
    # the fused residual norms' computed rows element by element (by default windowed as the loaded rows)
    "prologue-unwindowed": {"WINDOW_PROLOGUE": False},
    # the grid form (before the cluster form) over the same windowed rows, the residual norms' too
    "grid-first": {"GRID_FIRST": True},
    # the defaults but rows.block_row_max's reach (so f32 softmax and layer_norm of 30522 in the
    # cluster form, as under every setting but "default"; by default a block of 960 threads)
    "block-16384": {},
}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", [4097, 10001, 12289, 30522, 50257])
@pytest.mark.parametrize("window", list(WINDOW_SETTINGS))
def test_cluster_rows_every_start_alignment(cols, dtype, window, monkeypatch):
    """Rows whose length 8 (f32: 4) does not divide, in the cluster form,
    windowed (16-byte accesses from the boundary before each row's start;
    gamma and beta realigned from 16-byte reads, read from their shifted
    copies, or read an element at a time) or not, and in the block form
    (4097 and 12289, in blocks of 256 and 416 threads: 16-bit rows peeled,
    params an element at a time or from the copies; 10001 is held to the
    cluster form, which it took before rows.BLOCK_ROW_MAX went to 16384): 9 rows,
    so the rows start at several offsets from a
    16-byte boundary (h = 0..7), with values in the neighbouring rows far
    from the row's (a window element leaking into a statistic or a write
    shows) and random per-column params (a param misaligned by an element
    shows); the fused residual layer_norm and rms_norm beside them (a
    prologue: x + residual computed over the window, their sum written
    whole inside the row and element by element at its edges; a missed
    element of the sum shows as the poison's NaN, while a write past the row
    would put there the value its own row writes, so it cannot show;
    peeled at 4097). "grid-first": the same rows over the grid form. Every
    setting but "default" holds the block form to BLOCK_ROW_MAX (16384):
    by default f32 softmax, log_softmax and layer_norm of 30522 take it
    (rows.block_row_max)."""
    from rlxc.codegen import rows

    if window != "default":
        block_form_up_to(monkeypatch, 16384)
    for name, value in WINDOW_SETTINGS[window].items():
        monkeypatch.setattr(rows, name, value)
    if cols == 10001:
        block_form_up_to(monkeypatch, 8192)
    g = rlxc.GraphBuilder()
    x, res = g.input("x", [9, cols], dtype), g.input("res", [9, cols], dtype)
    gamma, beta = g.param("g", [cols], dtype), g.param("b", [cols], dtype)
    module = g.build([g.softmax(x), g.log_softmax(x), g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma),
                      *g.fused_residual_layer_norm(x, res, gamma, beta), *g.fused_residual_rms_norm(x, res, gamma)])
    from rlxc.testing.strategies import random_array

    rng = np.random.default_rng()
    xs = random_array((9, cols), dtype, rng)
    xs[::2] += 8.0  # even rows far from odd ones
    inputs = {"x": xs, "res": random_array((9, cols), dtype, rng)}
    params = {"g": random_array((cols,), dtype, rng), "b": random_array((cols,), dtype, rng)}
    want = rlxc.interpret(module, inputs, params)
    got = rlxc.compile(module, target="cuda", params=params).run(inputs, poison=True)
    tol = TOL[{"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype]]
    for i, (w, o) in enumerate(zip(want, got)):
        w64, o64 = np.asarray(w, np.float64), np.asarray(o, np.float64)
        err = np.linalg.norm(w64 - o64, axis=1) / np.linalg.norm(w64, axis=1)  # per row
        assert err.max() < tol, (i, err)


def _row_kernels(cols: int, dtype: str, rows: int | None = None) -> None:
    rows = rows or max(2, min(64, 2**16 // cols))

    def build(g):
        x = g.input("x", [rows, cols], dtype)
        r = g.input("r", [rows, cols], dtype)
        gamma, beta = g.param("g", [cols], dtype), g.param("b", [cols], dtype)
        s, n = g.fused_residual_layer_norm(x, r, gamma, beta)
        return [g.softmax(x), g.log_softmax(x), g.layer_norm(x, gamma, beta), g.rms_norm(x, gamma), s, n]

    g = rlxc.GraphBuilder()
    check(g.build(build(g)))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("backend", ["cublaslt", "kernel"])
def test_matmul_transpose_flags(dtype, backend, monkeypatch):
    """Transposes of the last two axes folded into rlx.matmul's flags
    (rlx-fold-layout): cuBLASLt's TRANSA/TRANSB, and the fallback gemm
    kernel's transposed reads, against the interpreter."""
    from rlxc.runtime import cublaslt

    if backend == "cublaslt" and not cublaslt.available():
        pytest.skip("nvmath-python is not installed (the `cuda` extra)")
    if backend == "kernel":
        monkeypatch.setattr(cublaslt, "available", lambda: False)
    g = rlxc.GraphBuilder()
    q, k = g.input("q", [2, 3, 77, 64], dtype), g.input("k", [2, 3, 130, 64], dtype)
    a, b = g.input("a", [96, 33], dtype), g.input("b", [96, 40], dtype)
    outs = [g.matmul(q, g.transpose(k, [0, 1, 3, 2])),  # q·kᵀ: transpose_rhs, batched
            g.matmul(g.transpose(a, [1, 0]), b),  # aᵀ·b: transpose_lhs
            g.matmul(g.transpose(b, [1, 0]), g.transpose(g.transpose(a, [1, 0]), [1, 0])),  # bᵀ·a: two cancel
            g.matmul(g.transpose(q, [0, 1, 3, 2]), q)]  # qᵀ·q: transpose_lhs, batched
    module = g.build(outs)
    optimized = rlxc.run_pipeline(module, "rlx-optimize")
    flags = {(op.transpose_lhs is not None, op.transpose_rhs is not None) for op in optimized.walk() if op.name == "rlx.matmul"}
    assert {(False, True), (True, False)} <= flags
    check(module, rng=np.random.default_rng(31), tol_scale=2.0)

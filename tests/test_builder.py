"""`rlxc.GraphBuilder`: one method per op, errors at the offending call, `build`,
textual round trips, and `rlxc.interpret`'s input checking."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

import rlxc
from rlxc.dialects import rlx

try:
    import reference as R
except ImportError:  # pragma: no cover - when tests/ is a package
    from tests import reference as R


@pytest.fixture
def rng() -> np.random.Generator:
    seed = np.random.SeedSequence().entropy
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)


def op_of(t: rlxc.Tensor):
    return t.value.owner


# =========================================================================== methods -> ops

UNARY = [op.name.removeprefix("rlx.") for op in rlx.UNARY_OPS]
BINARY = [op.name.removeprefix("rlx.") for op in rlx.BINARY_OPS + rlx.COMPARE_OPS]
REDUCE = [op.name.removeprefix("rlx.") for op in rlx.REDUCE_OPS]


def _calls():
    """(method, call(g) -> Tensor | tuple, expected op name, expected result shapes)."""
    x = lambda g, s=(4, 16), dt="f32", n="x": g.input(n, s, dt)  # noqa: E731
    for name in UNARY:
        yield name, lambda g, n=name: getattr(g, n)(x(g)), f"rlx.{name}", [(4, 16)]
    for name in BINARY:
        yield name, lambda g, n=name: getattr(g, n)(x(g), x(g, (16,), n="y")), f"rlx.{name}", [(4, 16)]
    for name in REDUCE:
        yield name, lambda g, n=name: getattr(g, n)(x(g), [1], keepdims=True), f"rlx.{name}", [(4, 1)]
    yield "param", lambda g: g.param("w", [3, 2], "bf16"), "rlx.param", [(3, 2)]
    yield "constant", lambda g: g.constant(np.ones((2, 3))), "rlx.constant", [(2, 3)]
    yield "select", lambda g: g.select(x(g, (4, 1), "i1", "c"), x(g), x(g, (16,), n="y")), "rlx.select", [(4, 16)]
    yield "cast", lambda g: g.cast(x(g), "f16"), "rlx.cast", [(4, 16)]
    yield "argmax", lambda g: g.argmax(x(g), 1), "rlx.argmax", [(4,)]
    yield "softmax", lambda g: g.softmax(x(g), 0), "rlx.softmax", [(4, 16)]
    yield "log_softmax", lambda g: g.log_softmax(x(g)), "rlx.log_softmax", [(4, 16)]
    yield "layer_norm", lambda g: g.layer_norm(x(g), x(g, (16,), n="g"), x(g, (16,), n="b")), "rlx.layer_norm", [(4, 16)]
    yield "rms_norm", lambda g: g.rms_norm(x(g), x(g, (16,), n="g")), "rlx.rms_norm", [(4, 16)]
    yield (
        "fused_residual_layer_norm",
        lambda g: g.fused_residual_layer_norm(x(g), x(g, n="r"), x(g, (16,), n="g"), x(g, (16,), n="b")),
        "rlx.fused_residual_layer_norm",
        [(4, 16), (4, 16)],
    )
    yield (
        "fused_residual_rms_norm",
        lambda g: g.fused_residual_rms_norm(x(g), x(g, n="r"), x(g, (16,), n="g")),
        "rlx.fused_residual_rms_norm",
        [(4, 16), (4, 16)],
    )
    yield "matmul", lambda g: g.matmul(x(g, (2, 4, 16)), x(g, (16, 3), n="w")), "rlx.matmul", [(2, 4, 3)]
    yield "linear", lambda g: g.linear(x(g), x(g, (8, 16), n="w"), x(g, (8,), n="b"), "silu"), "rlx.linear", [(4, 8)]
    yield "reshape", lambda g: g.reshape(x(g), [8, -1]), "rlx.reshape", [(8, 8)]
    yield "transpose", lambda g: g.transpose(x(g)), "rlx.transpose", [(16, 4)]
    yield "expand", lambda g: g.expand(x(g, (1, 16)), [3, 4, 16]), "rlx.expand", [(3, 4, 16)]
    yield "concat", lambda g: g.concat([x(g), x(g, (2, 16), n="y")], 0), "rlx.concat", [(6, 16)]
    yield "slice", lambda g: g.slice(x(g), [1, -4], [3, 100], steps=[1, 2]), "rlx.slice", [(2, 2)]
    yield "gather", lambda g: g.gather(x(g, (10, 4)), x(g, (2, 3), "i64", "i")), "rlx.gather", [(2, 3, 4)]
    yield "pad", lambda g: g.pad(x(g), [1, 0], [2, 3], "reflect"), "rlx.pad", [(7, 19)]
    yield "gather_elements", lambda g: g.gather_elements(x(g), x(g, (3, 5), "i32", "i"), 1), "rlx.gather_elements", [(3, 5)]
    yield "gather_nd", lambda g: g.gather_nd(x(g, (2, 3, 4)), x(g, (2, 5, 1), "i64", "i"), 1), "rlx.gather_nd", [(2, 5, 4)]
    yield "scatter_nd", lambda g: g.scatter_nd(x(g, (6, 4)), x(g, (3, 1), "i64", "i"), x(g, (3, 4), n="u"), "max"), \
        "rlx.scatter_nd", [(6, 4)]
    yield "cumsum", lambda g: g.cumsum(x(g), 0, exclusive=True, reverse=True), "rlx.cumsum", [(4, 16)]
    yield "topk", lambda g: g.topk(x(g), 5, largest=False, sorted=False), "rlx.topk", [(4, 5), (4, 5)]
    yield (
        "conv2d",
        lambda g: g.conv2d(x(g, (1, 4, 8, 8)), x(g, (6, 2, 3, 3), n="w"), x(g, (6,), n="b"),
                           stride=2, padding=(1, 0, 1, 0), dilation=1, groups=2),  # fmt: skip
        "rlx.conv2d",
        [(1, 6, 4, 3)],
    )
    yield (
        "conv_transpose2d",
        lambda g: g.conv_transpose2d(x(g, (1, 4, 5, 5)), x(g, (4, 3, 3, 3), n="w"), x(g, (6,), n="b"),
                                     stride=2, padding=(1, 0, 1, 0), output_padding=1, groups=2),  # fmt: skip
        "rlx.conv_transpose2d",
        [(1, 6, 10, 12)],
    )
    yield "im2col", lambda g: g.im2col(x(g, (2, 7, 6, 3)), (3, 2), (2, 1), (1, 0, 2, 1), (1, 2)), "rlx.im2col", [(2, 4, 5, 18)]
    yield "max_pool2d", lambda g: g.max_pool2d(x(g, (1, 2, 8, 8)), 2), "rlx.max_pool2d", [(1, 2, 4, 4)]
    yield (
        "resize",
        lambda g: g.resize(x(g, (1, 2, 4, 4)), [1, 2, 8, 6], [1, 1, 2, 1.5], "linear", "align_corners"),
        "rlx.resize",
        [(1, 2, 8, 6)],
    )
    yield (
        "avg_pool2d",
        lambda g: g.avg_pool2d(x(g, (1, 2, 8, 8)), 3, 1, 1, count_include_pad=True),
        "rlx.avg_pool2d",
        [(1, 2, 8, 8)],
    )
    yield (
        "attention",
        lambda g: g.attention(x(g, (1, 2, 5, 4), n="q"), x(g, (1, 2, 6, 4), n="k"), x(g, (1, 2, 6, 3), n="v"),
                              x(g, (6,), n="m"), causal=True, scale=0.5),  # fmt: skip
        "rlx.attention",
        [(1, 2, 5, 3)],
    )
    yield "swiglu", lambda g: g.swiglu(x(g)), "rlx.swiglu", [(4, 8)]
    yield "rope", lambda g: g.rope(x(g, (1, 2, 5, 8)), x(g, (5, 8), n="c"), x(g, (5, 8), n="s")), "rlx.rope", [(1, 2, 5, 8)]


CALLS = list(_calls())


def test_every_rlx_op_has_a_builder_method():
    tested = {c[0] for c in CALLS}
    for op in rlx.Rlx.operations:
        name = op.name.removeprefix("rlx.")
        if name in ("yield", "elementwise_region", "fusion"):  # built from text / by passes
            continue
        assert callable(getattr(rlxc.GraphBuilder, name, None)), f"GraphBuilder.{name} is missing"
        assert name in tested, f"no builder test for {name}"


@pytest.mark.parametrize("method,call,op_name,shapes", CALLS, ids=[c[0] for c in CALLS])
def test_method_builds_its_op(method, call, op_name, shapes):
    g = rlxc.GraphBuilder()
    out = call(g)
    outs = list(out) if isinstance(out, tuple) else [out]
    assert [o.shape for o in outs] == shapes
    ops = {op_of(o) for o in outs}
    assert len(ops) == 1, "multi-result methods return results of one op"
    (op,) = ops
    assert op.name == op_name
    assert [r for r in op.results] == [o.value for o in outs]
    module = g.build(outs)
    module.verify()
    assert op_name in str(module)


def test_input_is_a_function_argument():
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 3], "i32")
    assert x.shape == (2, 3) and x.dtype == "i32" and x.ndim == 2
    module = g.build([g.neg(x)])
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert f.body.block.args[0] is x.value


def test_tensor_operator_overloads():
    g = rlxc.GraphBuilder()
    a, b = g.input("a", [3, 4]), g.input("b", [4])
    w = g.input("w", [4, 2])
    for expr, name in [(a + b, "rlx.add"), (a - b, "rlx.sub"), (a * b, "rlx.mul"), (a / b, "rlx.div"),
                       (-a, "rlx.neg"), (a @ w, "rlx.matmul")]:  # fmt: skip
        assert op_of(expr).name == name


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32", "i64", "i1"])
def test_dtypes_carried_through(dtype):
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 3], dtype)
    y = g.reshape(x, [3, 2])
    assert y.dtype == dtype
    c = g.eq(x, x)
    assert c.dtype == "i1"
    assert g.argmax(g.cast(x, "f32"), 0).dtype == "i64"


# =========================================================================== errors at the call

ERRORS = [
    # (id, setup(g) -> dict of tensors, offending call(g, t), message regex)
    ("add-broadcast", lambda g: {"a": g.input("a", [4, 16]), "b": g.input("b", [8])},
     lambda g, t: g.add(t["a"], t["b"]), r"^add: .*do not broadcast: 4x16, 8"),
    ("mul-dtype", lambda g: {"a": g.input("a", [4]), "b": g.input("b", [4], "f16")},
     lambda g, t: g.mul(t["a"], t["b"]), r"^mul: .*element types differ \(f32 vs f16\)"),
    ("pow-int", lambda g: {"a": g.input("a", [4], "i32")},
     lambda g, t: g.pow(t["a"], t["a"]), r"^pow: .*element type i32, expected one of f32, f16, bf16"),
    ("exp-int", lambda g: {"a": g.input("a", [4], "i64")},
     lambda g, t: g.exp(t["a"]), r"^exp: input has element type i64, expected one of f32, f16, bf16"),
    ("neg-bool", lambda g: {"a": g.input("a", [4], "i1")},
     lambda g, t: g.neg(t["a"]), r"^neg: input has element type i1"),
    ("matmul-contraction", lambda g: {"a": g.input("a", [4, 5]), "b": g.input("b", [6, 3])},
     lambda g, t: g.matmul(t["a"], t["b"]), r"^matmul: .*contraction mismatch.*4x5.*5 columns.*6x3.*6 rows"),
    ("matmul-rank1", lambda g: {"a": g.input("a", [5]), "b": g.input("b", [5, 3])},
     lambda g, t: g.matmul(t["a"], t["b"]), r"^matmul: .*rank >= 2"),
    ("matmul-batch", lambda g: {"a": g.input("a", [2, 3, 4]), "b": g.input("b", [3, 4, 2])},
     lambda g, t: g.matmul(t["a"], t["b"]), r"^matmul: matmul batch dimensions .*do not broadcast"),
    ("matmul-int", lambda g: {"a": g.input("a", [2, 2], "i32")},
     lambda g, t: g.matmul(t["a"], t["a"]), r"^matmul: lhs has element type i32"),
    ("layer_norm-gamma", lambda g: {"x": g.input("x", [4, 16]), "g": g.input("g", [8]), "b": g.input("b", [8])},
     lambda g, t: g.layer_norm(t["x"], t["g"], t["b"]), r"^layer_norm: gamma has shape 8, expected the trailing dimensions of the input 4x16"),
    ("layer_norm-beta", lambda g: {"x": g.input("x", [4, 16]), "g": g.input("g", [16]), "b": g.input("b", [4, 16])},
     lambda g, t: g.layer_norm(t["x"], t["g"], t["b"]), r"^layer_norm: .*beta"),
    ("rms_norm-gamma", lambda g: {"x": g.input("x", [4, 16]), "g": g.input("g", [4])},
     lambda g, t: g.rms_norm(t["x"], t["g"]), r"^rms_norm: gamma has shape 4"),
    ("fused_ln-residual", lambda g: {"x": g.input("x", [4, 16]), "r": g.input("r", [4, 8]), "g": g.input("g", [16])},
     lambda g, t: g.fused_residual_layer_norm(t["x"], t["r"], t["g"], t["g"]), r"^fused_residual_layer_norm: .*residual.*4x8"),
    ("fused_rms-gamma", lambda g: {"x": g.input("x", [4, 16]), "g": g.input("g", [8])},
     lambda g, t: g.fused_residual_rms_norm(t["x"], t["x"], t["g"]), r"^fused_residual_rms_norm: gamma has shape 8"),
    ("conv2d-groups", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [6, 3, 3, 3])},
     lambda g, t: g.conv2d(t["x"], t["w"], groups=2), r"^conv2d: weight 6x3x3x3 with groups=2 does not fit 4 input channels"),
    ("conv2d-groups-out", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [5, 2, 3, 3])},
     lambda g, t: g.conv2d(t["x"], t["w"], groups=2), r"^conv2d: .*groups=2.*5 divisible by groups"),
    ("conv2d-window", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 4, 7, 7])},
     lambda g, t: g.conv2d(t["x"], t["w"]), r"^conv2d: height: window 7 .*does not fit an extent of 5"),
    ("conv2d-bias", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 4, 3, 3]), "b": g.input("b", [3])},
     lambda g, t: g.conv2d(t["x"], t["w"], t["b"]), r"^conv2d: bias has shape 3, expected 4"),
    ("conv2d-rank", lambda g: {"x": g.input("x", [4, 5, 5]), "w": g.input("w", [4, 4, 3, 3])},
     lambda g, t: g.conv2d(t["x"], t["w"]), r"^conv2d: .*NCHW"),
    ("conv2d-padding", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 4, 3, 3])},
     lambda g, t: g.conv2d(t["x"], t["w"], padding=(1, 2, 3)), r"^padding must be an int, a pair or four ints"),
    ("linear-activation", lambda g: {"x": g.input("x", [4, 16]), "w": g.input("w", [8, 16])},
     lambda g, t: g.linear(t["x"], t["w"], activation="gelu_fast"), r"^linear: unknown activation 'gelu_fast', expected one of relu"),
    ("linear-weight", lambda g: {"x": g.input("x", [4, 16]), "w": g.input("w", [16, 8])},
     lambda g, t: g.linear(t["x"], t["w"]), r"^linear: weight has shape 16x8, expected \[out, 16\]"),
    ("linear-bias", lambda g: {"x": g.input("x", [4, 16]), "w": g.input("w", [8, 16]), "b": g.input("b", [16])},
     lambda g, t: g.linear(t["x"], t["w"], t["b"]), r"^linear: bias has shape 16, expected 8"),
    ("cast-dtype", lambda g: {"x": g.input("x", [4])},
     lambda g, t: g.cast(t["x"], "f8"), r"^cast: unknown element type 'f8'"),
    ("input-dtype", lambda g: {},
     lambda g, t: g.input("x", [4], "float32"), r"^input 'x': unknown element type 'float32'"),
    ("input-dynamic", lambda g: {},
     lambda g, t: g.input("x", [4, -1]), r"^input 'x': .*static shape"),
    ("input-twice", lambda g: {"x": g.input("x", [4])},
     lambda g, t: g.input("x", [4]), r"input 'x' is declared twice"),
    ("param-dtype", lambda g: {},
     lambda g, t: g.param("w", [4], "f64"), r"^param 'w': unknown element type 'f64'"),
    ("constant-dtype", lambda g: {},
     lambda g, t: g.constant(np.zeros(2, np.complex64)), r"^constant: unsupported numpy dtype complex64"),
    ("reduce-axis", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.reduce_sum(t["x"], [2]), r"^reduce_sum: axis 2 is out of range for a tensor of rank 2"),
    ("reduce-twice", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.reduce_max(t["x"], [0, -2]), r"^reduce_max: axes \[0, -2\] name an axis twice"),
    ("reduce_mean-int", lambda g: {"x": g.input("x", [4], "i32")},
     lambda g, t: g.reduce_mean(t["x"]), r"^reduce_mean: input has element type i32"),
    ("argmax-axis", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.argmax(t["x"], -3), r"^argmax: axis -3 is out of range"),
    ("softmax-axis", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.softmax(t["x"], 2), r"^softmax: axis 2 is out of range"),
    ("log_softmax-int", lambda g: {"x": g.input("x", [4], "i64")},
     lambda g, t: g.log_softmax(t["x"]), r"^log_softmax: input has element type i64"),
    ("select-cond", lambda g: {"c": g.input("c", [4]), "a": g.input("a", [4])},
     lambda g, t: g.select(t["c"], t["a"], t["a"]), r"^select: condition has element type f32, expected one of i1"),
    ("select-branches", lambda g: {"c": g.input("c", [4], "i1"), "a": g.input("a", [4]), "b": g.input("b", [4], "i32")},
     lambda g, t: g.select(t["c"], t["a"], t["b"]), r"^select: select branches: element types differ"),
    ("select-shape", lambda g: {"c": g.input("c", [3], "i1"), "a": g.input("a", [4])},
     lambda g, t: g.select(t["c"], t["a"], t["a"]), r"^select: .*do not broadcast"),
    ("reshape-count", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.reshape(t["x"], [5, 13]), r"^reshape: cannot reshape 4x16 \(64 elements\) to 5x13 \(65 elements\)"),
    ("reshape-infer", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.reshape(t["x"], [5, -1]), r"^reshape: cannot infer -1"),
    ("reshape-two-minus-one", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.reshape(t["x"], [-1, -1]), r"^reshape: at most one -1"),
    ("transpose-perm", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.transpose(t["x"], [0, 0]), r"^transpose: perm \[0, 0\] is not a permutation"),
    ("expand-shape", lambda g: {"x": g.input("x", [3, 2])},
     lambda g, t: g.expand(t["x"], [3, 4]), r"^expand: .*3x2.*3x4"),
    ("concat-shape", lambda g: {"a": g.input("a", [3, 4]), "b": g.input("b", [3, 5])},
     lambda g, t: g.concat([t["a"], t["b"]], 0), r"^concat: input #1 has shape 3x5; it must match input #0 3x4"),
    ("concat-dtype", lambda g: {"a": g.input("a", [3, 4]), "b": g.input("b", [3, 4], "f16")},
     lambda g, t: g.concat([t["a"], t["b"]], 0), r"^concat: input #1: element types differ"),
    ("concat-axis", lambda g: {"a": g.input("a", [3, 4])},
     lambda g, t: g.concat([t["a"], t["a"]], 2), r"^concat: axis 2 is out of range"),
    ("slice-step", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.slice(t["x"], [0], [2], steps=[0]), r"^slice: step of axis 0 is 0"),
    ("slice-axis", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.slice(t["x"], [0], [2], axes=[2]), r"^slice: axis 2 out of range for rank 2"),
    ("slice-lengths", lambda g: {"x": g.input("x", [4, 16])},
     lambda g, t: g.slice(t["x"], [0, 1], [2]), r"^slice: starts, ends, axes and steps need equal lengths"),
    ("gather-indices", lambda g: {"x": g.input("x", [5, 4]), "i": g.input("i", [3])},
     lambda g, t: g.gather(t["x"], t["i"]), r"^gather: indices has element type f32, expected one of i32, i64"),
    ("gather-axis", lambda g: {"x": g.input("x", [5, 4]), "i": g.input("i", [3], "i64")},
     lambda g, t: g.gather(t["x"], t["i"], axis=2), r"^gather: axis 2 is out of range"),
    ("pool-padding", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.max_pool2d(t["x"], 2, padding=2), r"^max_pool2d: padding \[2, 2, 2, 2\] must be smaller than the kernel \[2, 2\]"),
    ("pool-int", lambda g: {"x": g.input("x", [1, 1, 4, 4], "i32")},
     lambda g, t: g.avg_pool2d(t["x"], 2), r"^avg_pool2d: input has element type i32"),
    ("pool-rank", lambda g: {"x": g.input("x", [4, 4])},
     lambda g, t: g.avg_pool2d(t["x"], 2), r"^avg_pool2d: pooling takes an NCHW input \(rank 4\), got 4x4"),
    ("pool-stride", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.max_pool2d(t["x"], 2, stride=0), r"^max_pool2d: stride must be two positive integers"),
    ("pool-dilation", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.max_pool2d(t["x"], 2, dilation=(0, 1)), r"^max_pool2d: dilation must be two positive integers, got \[0, 1\]"),
    ("pool-dilated-window", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.avg_pool2d(t["x"], 3, dilation=2, ceil_mode=True), r"^avg_pool2d: height: window 3 \(dilation 2\) does not fit an extent of 4"),
    ("conv-transpose-channels", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [3, 2, 3, 3])},
     lambda g, t: g.conv_transpose2d(t["x"], t["w"]), r"^conv_transpose2d: weight 3x2x3x3 with groups=1 does not fit 4 input channels"),
    ("conv-transpose-groups", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 2, 3, 3])},
     lambda g, t: g.conv_transpose2d(t["x"], t["w"], groups=3), r"^conv_transpose2d: .*groups=3"),
    ("conv-transpose-bias", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 2, 3, 3]), "b": g.input("b", [2])},
     lambda g, t: g.conv_transpose2d(t["x"], t["w"], t["b"], groups=2), r"^conv_transpose2d: bias has shape 2, expected 4"),
    ("conv-transpose-crop", lambda g: {"x": g.input("x", [1, 4, 1, 5]), "w": g.input("w", [4, 2, 1, 3])},
     lambda g, t: g.conv_transpose2d(t["x"], t["w"], padding=(1, 0, 0, 0)), r"^conv_transpose2d: height: padding 1\+0 crops all 1 rows"),
    ("conv-transpose-output-padding", lambda g: {"x": g.input("x", [1, 4, 5, 5]), "w": g.input("w", [4, 2, 3, 3])},
     lambda g, t: g.conv_transpose2d(t["x"], t["w"], output_padding=(-1, 0)), r"^conv_transpose2d: output_padding must be two non-negative integers"),
    ("resize-mode", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.resize(t["x"], [1, 1, 8, 8], [1, 1, 2, 2], "cubic"), r"^resize: mode 'cubic' is not supported; expected one of nearest, linear"),
    ("resize-coordinates", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.resize(t["x"], [1, 1, 8, 8], [1, 1, 2, 2], "linear", "tf_half_pixel_for_nn"),
     r"^resize: coordinate_transformation_mode 'tf_half_pixel_for_nn' is not supported in linear mode"),
    ("resize-nearest-mode", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.resize(t["x"], [1, 1, 8, 8], [1, 1, 2, 2], nearest_mode="round"), r"^resize: nearest_mode 'round' is not supported"),
    ("resize-linear-int", lambda g: {"x": g.input("x", [1, 1, 4, 4], "i32")},
     lambda g, t: g.resize(t["x"], [1, 1, 8, 8], [1, 1, 2, 2], "linear"), r"^resize: input has element type i32, expected one of f32, f16, bf16$"),
    ("resize-rank", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.resize(t["x"], [1, 8, 8], [1, 2, 2]), r"^resize: result rank 3 differs from input rank 4"),
    ("resize-scales", lambda g: {"x": g.input("x", [1, 1, 4, 4])},
     lambda g, t: g.resize(t["x"], [1, 1, 8, 8], [1, 2, 2]), r"^resize: scales must be 4 positive finite numbers"),
    ("swiglu-odd", lambda g: {"x": g.input("x", [4, 7])},
     lambda g, t: g.swiglu(t["x"]), r"^swiglu: swiglu needs an even last axis, got shape 4x7"),
    ("rope-odd", lambda g: {"x": g.input("x", [1, 2, 5, 7]), "c": g.input("c", [5, 7])},
     lambda g, t: g.rope(t["x"], t["c"], t["c"]), r"^rope: rope needs an even last axis"),
    ("rope-cos", lambda g: {"x": g.input("x", [1, 2, 5, 8]), "c": g.input("c", [5, 6])},
     lambda g, t: g.rope(t["x"], t["c"], t["c"]), r"^rope: .*5x6"),
    ("attention-head_dim", lambda g: {"q": g.input("q", [1, 2, 5, 4]), "k": g.input("k", [1, 2, 5, 3])},
     lambda g, t: g.attention(t["q"], t["k"], t["k"]), r"^attention: query 1x2x5x4, key 1x2x5x3 and value 1x2x5x3 disagree"),
    ("attention-rank", lambda g: {"q": g.input("q", [2, 5, 4])},
     lambda g, t: g.attention(t["q"], t["q"], t["q"]), r"^attention: attention takes \[batch, heads, seq, head_dim\]"),
    ("attention-mask", lambda g: {"q": g.input("q", [1, 2, 4, 8]), "k": g.input("k", [1, 2, 5, 8]), "m": g.input("m", [4, 4])},
     lambda g, t: g.attention(t["q"], t["k"], t["k"], t["m"]), r"^attention: .*mask.*4x4"),
    ("foreign-tensor", lambda g: {"a": g.input("a", [3]), "b": rlxc.GraphBuilder().input("b", [3])},
     lambda g, t: g.add(t["a"], t["b"]), r"^add: operand #1 must be a Tensor of this GraphBuilder"),
    ("build-empty", lambda g: {},
     lambda g, t: g.build([]), r"^build: give at least one output"),
]  # fmt: skip


@pytest.mark.parametrize("setup,call,pattern", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_at_offending_call(setup, call, pattern):
    g = rlxc.GraphBuilder()
    t = setup(g)  # everything before the offending call succeeds
    with pytest.raises(rlxc.GraphError) as info:
        call(g, t)
    msg = str(info.value)
    assert re.search(pattern, msg, re.S), f"message {msg!r} does not match {pattern!r}"
    assert isinstance(info.value, ValueError)
    # The failed call added nothing: the builder still makes a valid module.
    mine = [v for v in t.values() if v.builder is g]
    if mine:
        module = g.build([mine[0]])
        module.verify()
        body = [op.name for op in module.walk()]
        assert body == ["builtin.module", "func.func", "func.return"]


def test_shape_errors_read_the_same_in_verifier_and_builder():
    """The verifier of a hand-written op reports the same message as the builder."""
    text = """
builtin.module {
  func.func @main(%a: tensor<4x5xf32>, %b: tensor<6x3xf32>) -> tensor<4x3xf32> {
    %c = rlx.matmul %a, %b : tensor<4x5xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
    func.return %c : tensor<4x3xf32>
  }
}
"""
    with pytest.raises(Exception, match=r"contraction mismatch: lhs 4x5 has 5 columns but rhs 6x3 has 6 rows"):
        rlxc.parse_module(text)


def test_non_tensor_operand_is_a_graph_error():
    g = rlxc.GraphBuilder()
    a = g.input("a", [3])
    with pytest.raises(rlxc.GraphError, match=r"^add: operand #1 must be a Tensor"):
        g.add(a, 1.0)


def test_methods_after_build_raise():
    g = rlxc.GraphBuilder()
    x = g.input("x", [3])
    g.build([g.neg(x)])
    with pytest.raises(rlxc.GraphError, match="already built"):
        g.neg(x)
    with pytest.raises(rlxc.GraphError, match="already built"):
        g.build([x])


def test_input_after_build_raises_and_keeps_module_valid():
    g = rlxc.GraphBuilder()
    x = g.input("x", [3])
    module = g.build([g.neg(x)])
    try:
        with pytest.raises(rlxc.GraphError, match="already built"):
            g.input("y", [3])
    finally:
        module.verify()


def test_conflicting_param_declaration_is_a_graph_error():
    g = rlxc.GraphBuilder()
    g.param("w", [2])
    with pytest.raises(rlxc.GraphError, match=r"param 'w'"):
        g.param("w", [3])


# =========================================================================== build


def test_build_returns_verified_module_with_inputs_in_declaration_order():
    g = rlxc.GraphBuilder()
    b = g.input("b", [2, 3], "f32")
    a = g.input("a", [3], "i32")
    c = g.input("c", [4, 1, 2], "bf16")
    y = g.add(b, g.cast(a, "f32"))
    module = g.build([g.cast(c, "f16"), y])
    assert isinstance(module, ModuleOp)
    module.verify()
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert len(funcs) == 1 and funcs[0].sym_name.data == "main"
    f = funcs[0]
    assert [str(t) for t in f.function_type.inputs.data] == [
        "tensor<2x3xf32>", "tensor<3xi32>", "tensor<4x1x2xbf16>",
    ]  # fmt: skip
    assert [str(t) for t in f.function_type.outputs.data] == ["tensor<4x1x2xf16>", "tensor<2x3xf32>"]
    assert [arg.name_hint for arg in f.body.block.args] == ["b", "a", "c"]
    assert str(module).splitlines()[1].startswith(
        "  func.func @main(%b: tensor<2x3xf32>, %a: tensor<3xi32>, %c: tensor<4x1x2xbf16>)"
    )
    # interpret binds by name, in any dict order, and returns outputs in order
    rng = np.random.default_rng()
    bv = R.random_array(rng, (2, 3), "f32")
    av = R.random_array(rng, (3,), "i32", -5, 5)
    cv = R.random_array(rng, (4, 1, 2), "bf16")
    o1, o2 = rlxc.interpret(module, {"c": cv, "a": av, "b": bv})
    R.assert_exact(o1, R.wide(cv).astype(np.float16), "f16")
    R.assert_close(o2, R.wide(bv) + R.wide(av), "f32")


def test_build_custom_name():
    g = rlxc.GraphBuilder()
    x = g.input("x", [2])
    module = g.build(g.neg(x), name="forward")
    assert "func.func @forward(" in str(module)
    x_val = np.array([1.0, -2.0], np.float32)
    (out,) = rlxc.interpret(module, {"x": x_val}, entry="forward")
    R.assert_exact(out, -R.wide(x_val), "f32")
    with pytest.raises(rlxc.InputError, match="@main"):
        rlxc.interpret(module, {"x": x_val})


def test_non_identifier_input_names():
    g = rlxc.GraphBuilder()
    a = g.input("input.1", [2])
    b = g.input("b", [2])
    module = g.build([g.sub(a, b)])
    text = str(module)
    assert 'rlx.name = "input.1"' in text
    re_module = rlxc.parse_module(text)
    av, bv = np.array([3.0, 1.0], np.float32), np.array([1.0, 5.0], np.float32)
    for m in (module, re_module):
        (out,) = rlxc.interpret(m, {"input.1": av, "b": bv})
        R.assert_exact(out, np.array([2.0, -4.0]), "f32")
    with pytest.raises(rlxc.InputError, match=r"input 'input\.1' is missing"):
        rlxc.interpret(module, {"b": bv})


# =========================================================================== print/parse round trip


def _graph_unary(g, rng):
    x = g.input("x", [3, 4])
    outs = [getattr(g, n)(x) for n in UNARY]
    return outs, {"x": R.random_array(rng, (3, 4), "f32", 0.1, 3)}, {}


def _graph_binary(g, rng):
    a, b = g.input("a", [3, 4]), g.input("b", [4])
    i, j = g.input("i", [2, 3], "i64"), g.input("j", [3], "i64")
    outs = [getattr(g, n)(a, b) for n in BINARY]
    outs += [g.add(i, j), g.div(i, j), g.lt(i, j)]
    c = g.gt(a, b)
    outs += [g.select(c, a, b), g.select(g.eq(i, j), i, j)]
    outs += [g.cast(a, d) for d in ("f32", "f16", "bf16", "i32", "i64", "i1")]
    outs += [g.cast(c, "f32"), g.cast(i, "f16")]
    feeds = {
        "a": R.random_array(rng, (3, 4), "f32", 0.5, 2),
        "b": R.random_array(rng, (4,), "f32", 0.5, 2),
        "i": R.random_array(rng, (2, 3), "i64", -9, 9),
        "j": R.random_array(rng, (3,), "i64", 1, 9),
    }
    return outs, feeds, {}


def _graph_reduce(g, rng):
    x = g.input("x", [2, 3, 4], "f16")
    outs = [getattr(g, n)(x, [0, -1], keepdims=k) for n in REDUCE for k in (False, True)]
    outs += [g.reduce_sum(x, [1]), g.argmax(x, 1), g.argmax(x, -1, keepdims=True)]
    return outs, {"x": R.random_array(rng, (2, 3, 4), "f16", 0.5, 1.5)}, {}


def _graph_norm(g, rng):
    x, r = g.input("x", [2, 3, 8], "bf16"), g.input("r", [2, 3, 8], "bf16")
    ga, be = g.param("gamma", [3, 8], "bf16"), g.param("beta", [3, 8], "bf16")
    g1 = g.param("g1", [8], "bf16")
    s1, n1 = g.fused_residual_layer_norm(x, r, ga, be, eps=1e-3)
    s2, n2 = g.fused_residual_rms_norm(x, r, g1, eps=1e-6)
    outs = [g.softmax(x, 1), g.log_softmax(x), g.layer_norm(x, g1, g1, eps=0.25),
            g.rms_norm(x, ga), s1, n1, s2, n2]  # fmt: skip
    feeds = {"x": R.random_array(rng, (2, 3, 8), "bf16"), "r": R.random_array(rng, (2, 3, 8), "bf16")}
    params = {
        "gamma": R.random_array(rng, (3, 8), "bf16"),
        "beta": R.random_array(rng, (3, 8), "bf16"),
        "g1": R.random_array(rng, (8,), "bf16"),
    }
    return outs, feeds, params


def _graph_matmul(g, rng):
    x = g.input("x", [2, 3, 6])
    w, b = g.param("w", [5, 6]), g.param("b", [5])
    m = g.input("m", [6, 4])
    outs = [g.matmul(x, m), g.linear(x, w), g.linear(x, w, b)]
    outs += [g.linear(x, w, b, a) for a in rlx.LINEAR_ACTIVATIONS]
    outs += [g.linear(x, w, activation="gelu")]
    feeds = {"x": R.random_array(rng, (2, 3, 6), "f32"), "m": R.random_array(rng, (6, 4), "f32")}
    return outs, feeds, {"w": R.random_array(rng, (5, 6), "f32"), "b": R.random_array(rng, (5,), "f32")}


def _graph_shape(g, rng):
    x = g.input("x", [2, 3, 4], "i32")
    idx = g.input("idx", [2, 2], "i32")
    outs = [
        g.reshape(x, [-1, 4]), g.transpose(x, [2, 0, 1]), g.transpose(x),
        g.expand(g.reshape(x, [2, 1, 12]), [2, 5, 12]),
        g.concat([x, x, x], axis=-1), g.slice(x, [-1, 0], [-100, 3], axes=[0, 2], steps=[-1, 2]),
        g.gather(x, idx, axis=1), g.gather(x, idx),
    ]  # fmt: skip
    feeds = {"x": R.random_array(rng, (2, 3, 4), "i32", -9, 9), "idx": np.array([[0, -1], [1, 0]], np.int32)}
    return outs, feeds, {}


def _graph_indexing(g, rng):
    x = g.input("x", [2, 3, 4], "f32")
    b = g.input("b", [2, 3], "i1")
    ie = g.input("ie", [2, 2, 4], "i64")
    nd = g.input("nd", [2, 2], "i32")
    outs = [
        g.pad(x, [1, 0, 2], [0, 2, 1], value=-0.5), g.pad(x, [1, 2, 3], [1, 0, 3], "reflect"),
        g.pad(x, [3, 0, 0], [0, 0, 9], "edge"), g.pad(x, [5, 1, 0], [0, 4, 1], "wrap"),
        g.pad(b, [0, 1], [1, 0], value=1.0), g.gather_elements(x, ie, axis=1),
        g.gather_nd(x, nd), g.gather_nd(x, g.reshape(nd, [2, 2, 1]), batch_dims=1),
        g.cumsum(x, 2), g.cumsum(x, -3, exclusive=True, reverse=True),
        *g.topk(x, 2, axis=1), *g.topk(x, 4, largest=False, sorted=False),
        g.scatter_nd(x, nd, g.reduce_sum(g.cast(ie, "f32"), [0]), "add"),  # tuples (1, -1) and (0, 2): rows of 4
    ]  # fmt: skip
    feeds = {"x": R.random_array(rng, (2, 3, 4), "f32"), "b": R.random_array(rng, (2, 3), "i1"),
             "ie": rng.integers(-3, 3, size=(2, 2, 4)).astype(np.int64), "nd": np.array([[1, -1], [0, 2]], np.int32)}  # fmt: skip
    return outs, feeds, {}


def _graph_conv(g, rng):
    x = g.input("x", [1, 4, 6, 6])
    w = g.param("w", [4, 1, 3, 3])
    w2 = g.param("w2", [2, 4, 2, 2])
    b = g.param("b", [4])
    outs = [
        g.conv2d(x, w, b, stride=2, padding=(1, 0, 2, 1), dilation=(1, 2), groups=4),
        g.conv2d(x, w2),
        g.im2col(x, (3, 2), (2, 1), (1, 0, 2, 1), (1, 2)),
        g.max_pool2d(x, 3, 2, 1), g.avg_pool2d(x, (2, 3), (1, 2), (1, 0, 0, 2)),
        g.avg_pool2d(x, 2, count_include_pad=True),
        g.max_pool2d(x, 2, 2, 1, dilation=2, ceil_mode=True),
        g.avg_pool2d(x, 3, 2, 1, count_include_pad=True, dilation=(1, 2), ceil_mode=True),
        g.conv_transpose2d(x, w, b, stride=2, padding=(1, 0, 2, 1), output_padding=(1, 0), groups=4),
        g.conv_transpose2d(x, g.param("w3", [4, 3, 2, 2])),
        g.resize(x, [1, 4, 9, 3], [1.0, 1.0, 1.5, 0.6], "linear", "half_pixel_symmetric"),
        g.resize(x, [1, 4, 12, 12], [1.0, 1.0, 2.0, 2.0], "nearest", "asymmetric", "floor"),
    ]  # fmt: skip
    params = {"w": R.random_array(rng, (4, 1, 3, 3), "f32"), "w2": R.random_array(rng, (2, 4, 2, 2), "f32"),
              "b": R.random_array(rng, (4,), "f32"), "w3": R.random_array(rng, (4, 3, 2, 2), "f32")}  # fmt: skip
    return outs, {"x": R.random_array(rng, (1, 4, 6, 6), "f32")}, params


def _graph_composite(g, rng):
    q, k, v = g.input("q", [1, 2, 3, 4], "f16"), g.input("k", [1, 2, 5, 4], "f16"), g.input("v", [1, 2, 5, 6], "f16")
    m = g.input("m", [1, 1, 3, 5], "f16")
    c, s = g.input("c", [3, 4], "f16"), g.input("s", [3, 4], "f16")
    outs = [
        g.attention(q, k, v), g.attention(q, k, v, m), g.attention(q, k, v, causal=True),
        g.attention(q, k, v, m, causal=True, scale=0.125), g.swiglu(v), g.rope(q, c, s),
    ]  # fmt: skip
    feeds = {n: R.random_array(rng, sh, "f16", -1, 1) for n, sh in
             [("q", (1, 2, 3, 4)), ("k", (1, 2, 5, 4)), ("v", (1, 2, 5, 6)), ("m", (1, 1, 3, 5)),
              ("c", (3, 4)), ("s", (3, 4))]}  # fmt: skip
    return outs, feeds, {}


def _graph_leaves(g, rng):
    outs = [
        g.constant(np.array([[0.1, -2.5], [1e-3, 3e4]])),
        g.constant(np.array([0.1, 65504.0]), "f16"),
        g.constant(np.array([0.1, -3.0]), "bf16"),
        g.constant(np.array([1, -2, 2**31 - 1], np.int32)),
        g.constant(np.array([2**40, -1])),
        g.constant(np.array([True, False])),
        g.constant(1.5),
    ]
    outs += [g.param(f"p_{d}", [2], d) for d in ("f32", "f16", "bf16", "i32", "i64", "i1")]
    params = {f"p_{d}": R.random_array(rng, (2,), d, -5, 5) for d in ("f32", "f16", "bf16", "i32", "i64", "i1")}
    return outs, {}, params


FAMILIES = {
    "unary": _graph_unary,
    "binary-compare-select-cast": _graph_binary,
    "reduce-argmax": _graph_reduce,
    "norms": _graph_norm,
    "matmul-linear": _graph_matmul,
    "shape": _graph_shape,
    "pad-gathers-cumsum-topk": _graph_indexing,
    "conv-pool": _graph_conv,
    "composites": _graph_composite,
    "leaves": _graph_leaves,
}

REGION_TEXT = """builtin.module {
  func.func @main(%a : tensor<3x1x4xf32>, %b : tensor<5x4xf32>, %n : tensor<4xi32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xi1>, tensor<4xi32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>) {
    %r:2 = rlx.elementwise_region ins(%a, %b : tensor<3x1x4xf32>, tensor<5x4xf32>) -> tensor<3x5x4xf32>, tensor<3x5x4xi1> {
    ^bb0(%x : f32, %y : f32):
      %c = arith.cmpf ogt, %x, %y : f32
      %s = arith.select %c, %x, %y : f32
      %e = math.exp %s : f32
      %k = arith.constant 2.000000e+00 : f32
      %m = arith.mulf %e, %k : f32
      %t = math.tanh %m : f32
      %f = math.erf %t : f32
      %z = arith.addf %f, %y : f32
      rlx.yield %z, %c : f32, i1
    }
    %q = rlx.elementwise_region ins(%n : tensor<4xi32>) -> tensor<4xi32> {
    ^bb0(%i : i32):
      %two = arith.constant 2 : i32
      %p = arith.muli %i, %two : i32
      %u = arith.addi %p, %i : i32
      rlx.yield %u : i32
    }
    %f:2 = rlx.fusion ins(%a, %b : tensor<3x1x4xf32>, tensor<5x4xf32>) -> tensor<3x5x4xf32>, tensor<3x5x4xf32> {
    ^bb0(%fa : tensor<3x1x4xf32>, %fb : tensor<5x4xf32>):
      %s2 = rlx.elementwise_region ins(%fa, %fb : tensor<3x1x4xf32>, tensor<5x4xf32>) -> tensor<3x5x4xf32> {
      ^bb1(%x2 : f32, %y2 : f32):
        %m2 = arith.mulf %x2, %y2 : f32
        rlx.yield %m2 : f32
      }
      %sm = rlx.softmax %s2 axis = -1 : tensor<3x5x4xf32>
      rlx.yield %sm, %s2 : tensor<3x5x4xf32>, tensor<3x5x4xf32>
    }
    func.return %r#0, %r#1, %q, %f#0, %f#1 : tensor<3x5x4xf32>, tensor<3x5x4xi1>, tensor<4xi32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>
  }
}"""


def _generic(module) -> str:
    s = io.StringIO()
    Printer(stream=s, print_generic_format=True).print_op(module)
    return s.getvalue()


def _check_round_trip(module, feeds, params):
    text = str(module)
    again = rlxc.parse_module(text)
    assert str(again) == text
    # generic form parses back to the same custom form too
    assert str(rlxc.parse_module(_generic(module))) == text
    # and the reparsed module computes the same thing, bit for bit
    want = rlxc.interpret(module, feeds, params)
    got = rlxc.interpret(again, feeds, params)
    assert len(want) == len(got)
    for w, o in zip(want, got):
        assert w.dtype == o.dtype and w.shape == o.shape
        assert np.array_equal(w, o, equal_nan=w.dtype.kind == "f")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_print_parse_print_is_identity(family, rng):
    g = rlxc.GraphBuilder()
    outs, feeds, params = FAMILIES[family](g, rng)
    module = g.build(outs)
    _check_round_trip(module, feeds, params)


def test_round_trip_covers_every_op():
    seen: set[str] = set()
    for fam in FAMILIES.values():
        g = rlxc.GraphBuilder()
        outs, _, _ = fam(g, np.random.default_rng())
        seen |= {op.name for op in g.build(outs).walk()}
    seen |= {op.name for op in rlxc.parse_module(REGION_TEXT).walk()}
    missing = {op.name for op in rlx.Rlx.operations} - seen
    assert not missing, f"round-trip graphs miss {sorted(missing)}"


def test_region_round_trip(rng):
    module = rlxc.parse_module(REGION_TEXT)
    feeds = {
        "a": R.random_array(rng, (3, 1, 4), "f32"),
        "b": R.random_array(rng, (5, 4), "f32"),
        "n": R.random_array(rng, (4,), "i32", -100, 100),
    }
    _check_round_trip(module, feeds, {})


# =========================================================================== interpret's input checks


def _simple():
    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 16], "f32")
    ids = g.input("ids", [3], "i64")
    w = g.param("w", [8, 16], "f32")
    module = g.build([g.linear(x, w), g.gather(x, ids)])
    ok_inputs = {"x": np.zeros((4, 16), np.float32), "ids": np.array([0, 1, 2], np.int64)}
    ok_params = {"w": np.zeros((8, 16), np.float32)}
    return module, ok_inputs, ok_params


def test_interpret_accepts_valid_inputs():
    module, inputs, params = _simple()
    outs = rlxc.interpret(module, inputs, params)
    assert [o.shape for o in outs] == [(4, 8), (3, 16)]


@pytest.mark.parametrize(
    "change,pattern",
    [
        (lambda i, p: i.pop("x"), r"input 'x' is missing: expected shape 4x16 and dtype f32"),
        (lambda i, p: i.update(x=np.zeros((4, 15), np.float32)),
         r"input 'x' has shape 4x15 \(float32\), expected shape 4x16 and dtype f32"),
        (lambda i, p: i.update(x=np.zeros((16, 4), np.float32)), r"input 'x' has shape 16x4.*expected shape 4x16 and dtype f32"),
        (lambda i, p: i.update(x=np.zeros((4, 16), np.float64)),
         r"input 'x' has dtype float64, expected shape 4x16 and dtype f32"),
        (lambda i, p: i.update(ids=np.zeros(3, np.int32)), r"input 'ids' has dtype int32, expected shape 3 and dtype i64"),
        (lambda i, p: i.update(ids=[0.0, 1.0, 2.0]), r"input 'ids' has dtype float64, expected shape 3 and dtype i64"),
        (lambda i, p: p.pop("w"), r"param 'w' is missing: expected shape 8x16 and dtype f32"),
        (lambda i, p: p.update(w=np.zeros((16, 8), np.float32)), r"param 'w' has shape 16x8.*expected shape 8x16 and dtype f32"),
        (lambda i, p: p.update(w=np.zeros((8, 16), np.float16)), r"param 'w' has dtype float16, expected shape 8x16 and dtype f32"),
        (lambda i, p: i.update(y=np.zeros(3, np.float32)), r"unknown input 'y'; the inputs are: x, ids"),
    ],
    ids=["missing", "shape", "transposed", "dtype", "int-width", "list", "param-missing",
         "param-shape", "param-dtype", "unknown"],
)  # fmt: skip
def test_interpret_input_errors(change, pattern):
    module, inputs, params = _simple()
    change(inputs, params)
    with pytest.raises(rlxc.InputError, match=pattern):
        rlxc.interpret(module, inputs, params)


def test_interpret_missing_params_argument():
    module, inputs, _ = _simple()
    with pytest.raises(rlxc.InputError, match=r"param 'w' is missing: expected shape 8x16 and dtype f32"):
        rlxc.interpret(module, inputs)


@pytest.mark.parametrize("target", ["numpy", "cuda"])
@pytest.mark.parametrize(
    "change,pattern",
    [
        (lambda p: p.pop("w"), r"param 'w' is missing: expected shape 8x16 and dtype f32"),
        (lambda p: p.update(w=np.zeros((16, 8), np.float32)), r"param 'w' has shape 16x8.*expected shape 8x16 and dtype f32"),
        (lambda p: p.update(w=np.zeros((8, 16), np.float16)), r"param 'w' has dtype float16, expected shape 8x16 and dtype f32"),
    ],
    ids=["missing", "shape", "dtype"],
)  # fmt: skip
def test_compile_checks_params_up_front(change, pattern, target):
    """rlxc.compile checks the params it is given before anything else, on
    either target (the GPU's check comes later: this needs no GPU): a
    missing or mis-shaped one is an InputError naming it, as at run time."""
    module, _, params = _simple()
    change(params)
    with pytest.raises(rlxc.InputError, match=pattern):
        rlxc.compile(module, target=target, params=params)
    with pytest.raises(rlxc.InputError, match=r"param 'w' is missing"):
        rlxc.compile(module, target=target)


def test_compile_ignores_params_the_module_does_not_use(rng):
    """Names the module has no param for (a model's dict after a pass folded
    or dropped some) are ignored, on the numpy target against interpret."""
    module, inputs, _ = _simple()
    inputs["x"] = rng.standard_normal((4, 16)).astype(np.float32)
    params = {"w": rng.standard_normal((8, 16)).astype(np.float32)}
    exe = rlxc.compile(module, target="numpy", params={**params, "unused": np.zeros(3, np.float32)})
    for a, b in zip(exe.run(inputs), rlxc.interpret(module, inputs, params)):
        np.testing.assert_array_equal(a, b)


def test_bf16_inputs_accepted_as_float32_and_rounded(rng):
    g = rlxc.GraphBuilder()
    x = g.input("x", [64], "bf16")
    w = g.param("w", [64], "bf16")
    module = g.build([g.neg(g.neg(x)), g.mul(w, g.constant(np.ones(64), "bf16")), g.cast(x, "f32")])
    xv = rng.uniform(-10, 10, size=64).astype(np.float32)  # not bf16-representable
    wv = rng.uniform(-10, 10, size=64).astype(np.float32)
    xv[:4] = [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.0]  # ties to even
    assert not np.array_equal(R.round_bf16(xv), xv)
    a, b, c = rlxc.interpret(module, {"x": xv}, {"w": wv})
    R.assert_exact(a, R.round_bf16(xv), "bf16")
    R.assert_exact(b, R.round_bf16(wv), "bf16")
    R.assert_exact(c, R.round_bf16(xv), "f32")
    assert list(c[:4]) == [1.0, 1 + 2**-6, -1.0, 3.0]


@pytest.mark.parametrize("bad", [np.float64, np.float16, np.int32])
def test_bf16_input_other_dtypes_rejected(bad):
    g = rlxc.GraphBuilder()
    x = g.input("x", [4], "bf16")
    module = g.build([g.neg(x)])
    with pytest.raises(rlxc.InputError, match=r"input 'x' has dtype .*expected shape 4 and dtype bf16"):
        rlxc.interpret(module, {"x": np.zeros(4, bad)})


def test_input_error_is_raised_before_running():
    """An error in a later input is found even if an earlier op would fail at run time."""
    g = rlxc.GraphBuilder()
    t = g.input("t", [3])
    i = g.input("i", [2], "i64")
    y = g.input("y", [2])
    module = g.build([g.gather(t, i), y])
    with pytest.raises(rlxc.InputError, match="input 'y'"):
        rlxc.interpret(module, {"t": np.zeros(3, np.float32), "i": np.array([7, 9]), "y": np.zeros(3, np.float32)})


def test_argmax_over_an_empty_axis_is_refused():
    """argmax over an axis of extent 0 has no element to pick: refused where
    it is built, naming the axis and the input; with no rows either (an empty
    output) it is fine."""
    g = rlxc.GraphBuilder()
    with pytest.raises(rlxc.GraphError, match=r"^argmax: argmax over axis -1 of extent 0 \(input tensor<3x0xf32>\)"):
        g.argmax(g.input("x", [3, 0]), axis=-1)
    g = rlxc.GraphBuilder()
    assert list(g.argmax(g.input("y", [0, 0]), axis=1).shape) == [0]


def test_empty_last_axis_slices_and_rank0_bf16_regions_through_the_pipelines():
    """Cases a review found: a slice of no columns (end before or at its
    start) feeding a fused op is no window to read in place (the fused
    region failed to verify: width -1 or 0), and a rank-0 bf16 region
    interprets as a scalar (round_bf16 made it 1-d). Each planned module
    interprets as the original; the CUDA lowering builds."""
    rng = np.random.default_rng()
    for end in (1, 2):
        g = rlxc.GraphBuilder()
        x = g.input("x", [3, 4])
        s = g.slice(x, [2], [end], axes=[1])
        m = g.build([g.add(s, g.constant(np.float32(1))), g.softmax(g.mul(s, s))])
        xv = rng.standard_normal((3, 4)).astype(np.float32)
        want = rlxc.interpret(m, {"x": xv})
        assert [w.shape for w in want] == [(3, 0), (3, 0)]
        for pipe in ("rlx-plan{target=none}", "rlx-plan{target=cuda}"):
            got = rlxc.interpret(rlxc.run_pipeline(m, pipe), {"x": xv})
            assert [o.shape for o in got] == [(3, 0), (3, 0)], pipe
        rlxc.run_pipeline(m, "rlx-cuda{arch=sm_90 sm_count=132}")
    g = rlxc.GraphBuilder()
    x = g.input("x", [], "bf16")
    v = g.input("v", [5], "bf16")
    m = g.build([g.exp(x), g.exp(g.reduce_sum(v, axes=[0]))])
    inputs = {"x": np.float32(rng.standard_normal()), "v": rng.standard_normal(5).astype(np.float32)}
    want = rlxc.interpret(m, inputs)
    got = rlxc.interpret(rlxc.run_pipeline(m, "rlx-plan{target=none}"), inputs)
    for w, o in zip(want, got):
        assert o.shape == () and w.shape == ()
        np.testing.assert_array_equal(o, w)

"""The Python API on the numpy target: outputs that are the caller's own
arrays, errors that name what went wrong (cases a review found, session 51)."""

from __future__ import annotations

import numpy as np
import pytest

import rlxc
from rlxc.frontends.builder import GraphError


def test_outputs_share_no_memory_with_inputs_params_or_each_other():
    """A graph returning its input, one value twice and a param gets copies:
    writing to an output changes neither the caller's arrays, nor another
    output, nor the next run; params are copied when compiled."""
    g = rlxc.GraphBuilder()
    x, w = g.input("x", [2, 3]), g.param("w", [2, 3])
    y = g.exp(x)
    m = g.build([x, y, y, w])
    rng = np.random.default_rng()
    X, W = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    X0, W0 = X.copy(), W.copy()
    with rlxc.compile(m, target="numpy", params={"w": W}) as exe:
        out = exe.run({"x": X})
        for i, a in enumerate(out):
            assert not np.shares_memory(a, X) and not np.shares_memory(a, W), i
            assert all(not np.shares_memory(a, b) for b in out[i + 1:]), i
        for a in out:
            a[...] = 99
        W[...] = 7  # after compile: no effect
        again = exe.run({"x": X})
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(again[0], X0)
        np.testing.assert_allclose(again[1], np.exp(X0.astype(np.float64)), rtol=1e-6)
        np.testing.assert_array_equal(again[3], W0)
    with pytest.raises(ValueError, match="closed"):
        exe.run({"x": X})


def test_api_misuse_is_named():
    """A pipeline that does not parse is a ValueError (xDSL's is a
    BaseException); constants that do not fit their type, unary ops on a
    non-tensor, bad input names and shapes are GraphErrors; a Model given a
    positional array and an unknown target say so at once."""
    g = rlxc.GraphBuilder()
    m = g.build([g.exp(g.input("x", [2]))])
    with pytest.raises(ValueError, match="pipeline 'rlx-plan{'"):
        rlxc.run_pipeline(m, "rlx-plan{")
    g = rlxc.GraphBuilder()
    for value, dtype, says in ((3_000_000_000, "i32", "do not fit i32"), (2**40, "i32", "do not fit i32"),
                               (float("nan"), "i64", "constant of i64"), (1.0, "float32", "unknown element type")):
        with pytest.raises(GraphError, match=says):
            g.constant(value, dtype)
    assert g.constant(2**31 - 1, "i32") is not None
    with pytest.raises(GraphError, match="exp: its input must be a Tensor"):
        g.exp(np.ones(2, np.float32))
    x = g.input("x", [2, 3])
    for call, says in ((lambda: g.softmax(np.ones(3)), "softmax: x must be a Tensor"),
                       (lambda: g.layer_norm(np.ones(3), x, x), "layer_norm: x must be a Tensor"),
                       (lambda: g.rms_norm(x, np.ones(3)), "rms_norm: operand #1 must be a Tensor")):
        with pytest.raises(GraphError, match=says):
            call()
    with pytest.raises(GraphError, match="the name must be a string"):
        g.input(3, [2])
    for shape in (4, [4.5], [True]):
        with pytest.raises(GraphError, match="the shape must be a sequence of ints"):
            g.input("s", shape)
    with pytest.raises(ValueError, match="unknown target 'nmupy'"):
        rlxc.compile(m, target="nmupy")
    with pytest.raises(ValueError, match="mode must be 'graph' or 'stream'"):
        rlxc.compile(m, target="numpy", mode="bogus")


def test_model_calls_and_targets(tmp_path):
    from onnx import TensorProto, helper

    from onnx_helpers import make_model

    model = make_model([helper.make_node("Relu", ["X"], ["Y"])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 3])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["n", 3])])
    path = tmp_path / "relu.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ValueError, match="unknown target 'nmupy'"):
        rlxc.load(path, target="nmupy")
    m = rlxc.load(path, target="numpy")
    x = np.random.default_rng().standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(rlxc.InputError, match="give the inputs by name"):
        m(x)
    (y,) = m(X=x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


@pytest.mark.parametrize("target", ["numpy", "cuda"])
def test_compile_refuses_a_lowered_module(target):
    """A module already through rlx-cuda (rlx_cuda ops) is refused by
    rlxc.compile at once on either target, saying so (the numpy target took
    it and failed at run with no interpretation for rlx_cuda.launch)."""
    g = rlxc.GraphBuilder()
    module = g.build([g.relu(g.input("x", [4]))])
    lowered = rlxc.run_pipeline(module.clone(), "rlx-cuda{arch=sm_90 sm_count=132}")
    with pytest.raises(ValueError, match=r"lowered already \(rlx_cuda\.[a-z_]+: the rlx-cuda pipeline's output\)"):
        rlxc.compile(lowered, target=target)
    assert rlxc.compile(module, target="numpy").run({"x": np.array([-1.0, 2.0, -3.0, 4.0], np.float32)})[0].tolist() == [0, 2, 0, 4]

"""The ONNX front end (rlxc.frontends.onnx): a model with shape plumbing
against ONNX Runtime, the errors, the entry points (rlxc.load, `rlxc run`,
`rlxc import`, rlxc-opt on .onnx), and ONNX's own node test cases for every
claimed op (tests/onnx_conformance.py), on the numpy backend here and on
CUDA on the GPU machine."""


import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onnx_conformance as conformance  # noqa: E402
from onnx_helpers import ort_run as _ort_run  # noqa: E402

import rlxc  # noqa: E402
from rlxc.frontends.onnx import OnnxImportError, from_onnx  # noqa: E402

def _shape_model(batch_dim="batch"):
    rng = np.random.default_rng()
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8,)).astype(np.float32)
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
            helper.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
            helper.make_node("Concat", ["bu", "m1"], ["shp"], axis=0),
            helper.make_node("MatMul", ["x", "W"], ["h"]),
            helper.make_node("Add", ["h", "B"], ["hb"]),
            helper.make_node("Gelu", ["hb"], ["a"]),
            helper.make_node("Reshape", ["a", "shp"], ["r"]),
            helper.make_node("Softmax", ["r"], ["y"], axis=-1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch_dim, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch_dim, 8])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
         ints("zero", 0), ints("ax0", [0]), ints("m1", [-1])],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


def test_shape_plumbing_folds_and_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = _shape_model()
    module, params = from_onnx(model, {"x": [4, 16]})
    text = str(module)
    assert "rlx.param \"W\"" in text and "%hb = rlx.add" in text  # ONNX names survive
    assert sorted(params) == ["B", "W"]  # the shape-only initializers were folded away
    x = np.random.default_rng().standard_normal((4, 16)).astype(np.float32)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_unbound_symbolic_dimension_is_named():
    with pytest.raises(OnnxImportError, match=r"input 'x' dimension 0 \('batch'\) is symbolic"):
        from_onnx(_shape_model())


def test_unsupported_op_names_type_node_and_support():
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det0")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"Det node 'det0'.*not supported; supported ops: Abs, "):
        from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _node_cases(backend="numpy"):
    marks = []
    if backend == "cuda":
        no_gpu = pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
        marks = [pytest.mark.gpu, no_gpu]
    return [pytest.param(case, id=case.name, marks=marks) for _, case in conformance.cases()]


@pytest.mark.parametrize("case", _node_cases())
def test_onnx_node_case(case):
    """Every node case of every claimed op passes on the numpy backend, or
    fails at import for the reason the conformance page gives."""
    why = conformance.expected_failure(case)
    if why is None:
        conformance.run_case(case, "numpy")
    else:
        with pytest.raises(OnnxImportError):
            conformance.run_case(case, "numpy")


@pytest.mark.parametrize("case", _node_cases("cuda"))
def test_onnx_node_case_cuda(case):
    """The same on the CUDA backend (the GPU machine)."""
    if conformance.expected_failure(case) is not None:
        pytest.skip(conformance.expected_failure(case))
    conformance.run_case(case, "cuda")


# ------------------------------------------------------------------ entry points


def _saved_model(tmp_path, batch_dim="batch"):
    model = _shape_model(batch_dim)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return model, path


def _one_node(op, ins, outs, opset=18, inits=(), **attrs):
    """A one-node model: `ins` and `outs` are (name, ONNX type, shape)."""
    g = helper.make_graph(
        [helper.make_node(op, [i[0] for i in ins] + [t.name for t in inits], [o[0] for o in outs], **attrs)], "g",
        [helper.make_tensor_value_info(*i) for i in ins], [helper.make_tensor_value_info(*o) for o in outs],
        list(inits),
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def test_load_compiles_once_per_shape_signature(tmp_path):
    model, path = _saved_model(tmp_path)
    m = rlxc.load(path, target="numpy")
    rng = np.random.default_rng()
    for batch in (3, 5, 3):
        x = rng.standard_normal((batch, 16)).astype(np.float32)
        (got,) = m(x=x)
        (want,) = _ort_run(model, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert m.imports == 2 and len(m.signatures) == 2  # batch 3 was reused
    with pytest.raises(rlxc.InputError, match="unknown input"):
        m(y=np.zeros((1, 16), np.float32))


def test_load_takes_an_initializer_listed_as_an_input_as_an_override(tmp_path):
    """An initializer the graph also lists among its inputs (as exporters
    with keep_initializers_as_inputs write every weight) is a default a call
    may override, as in ONNX Runtime: not fed, it is compiled in as a param
    (the model's inputs are the others); fed, that call's signature takes it
    as an input; values against numpy (float64) and onnxruntime where
    installed."""
    rng = np.random.default_rng()
    w0 = rng.standard_normal((16, 4)).astype(np.float32)
    b0 = rng.standard_normal(4).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [16, 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w0, "w"), numpy_helper.from_array(b0, "b")],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "w.onnx"
    onnx.save(model, str(path))
    m = rlxc.load(path, target="numpy")
    assert m.input_names == ["x"]
    x = rng.standard_normal((2, 16)).astype(np.float32)
    w1 = rng.standard_normal((16, 4)).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)

    def want(w, b):
        return x.astype(np.float64) @ w.astype(np.float64) + b

    cases = [({}, want(w0, b0)), ({"w": w1}, want(w1, b0)), ({"w": w1, "b": b1}, want(w1, b1)), ({}, want(w0, b0))]
    for fed, expected in cases:
        (got,) = m(x=x, **fed)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        try:
            import onnxruntime as ort
        except ImportError:
            continue
        (ref,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x, **fed})
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert m.imports == 3 and len(m.signatures) == 3  # the defaults' signature was reused
    with pytest.raises(rlxc.InputError, match="unknown input.*initializers a call may override: b, w"):
        m(x=x, z=x)  # a name the model does not have at all


def test_an_overridden_initializer_that_shapes_read_is_named(tmp_path):
    """Fed, an initializer is an input of that call's signature, so one that
    shape arithmetic reads (a Reshape's shape) cannot fold: the import error
    says that the call fed it; not fed, the model runs as before."""
    w = numpy_helper.from_array(np.random.default_rng().standard_normal((16, 4)).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Reshape", ["xw", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w, numpy_helper.from_array(np.array([4, 2], np.int64), "s")],
    )  # fmt: skip
    path = tmp_path / "s.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    m = rlxc.load(path, target="numpy")
    x = np.random.default_rng().standard_normal((2, 16)).astype(np.float32)
    assert m(x=x)[0].shape == (4, 2)
    with pytest.raises(ValueError, match="must be a constant at import") as e:
        m(x=x, s=np.array([8, 1], np.int64))
    assert any("feeds the initializer(s) s" in n for n in e.value.__notes__)


def test_load_mlir_reads_params_beside_it(tmp_path):
    from rlxc.tools.cli import main

    model, path = _saved_model(tmp_path)
    out = tmp_path / "ir" / "m.mlir"
    assert main(["import", str(path), "--shape", "x=4,16", "-o", str(out)]) == 0
    assert out.exists() and out.with_suffix(".npz").exists()
    assert not list(out.parent.glob("*.tmp"))  # written atomically, nothing left behind
    x = np.random.default_rng().standard_normal((4, 16)).astype(np.float32)
    (got,) = rlxc.load(out, target="numpy")(x=x)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_cli_run_onnx(tmp_path, capsys):
    from rlxc.tools.cli import main

    _, path = _saved_model(tmp_path)
    assert main(["run", str(path), "--shape", "x=2,16"]) == 0
    assert "output #0: shape [2, 8]" in capsys.readouterr().out
    np.savez(tmp_path / "in.npz", x=np.ones((6, 16), np.float32))  # shapes from --inputs
    assert main(["run", str(path), "--inputs", str(tmp_path / "in.npz")]) == 0
    assert "output #0: shape [6, 8]" in capsys.readouterr().out
    assert main(["run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "dimension 0 ('batch') is symbolic" in err and "--shape x=" in err and "Traceback" not in err
    assert main(["run", str(path), "--shape", "x:2"]) == 1
    assert "expected NAME=D0,D1" in capsys.readouterr().err


def test_rlxc_opt_reads_onnx(tmp_path, capsys):
    from rlxc.tools.opt import main

    _, path = _saved_model(tmp_path)
    params = tmp_path / "p.npz"
    assert main([str(path), "--onnx-shape", "x=2,16", "--onnx-params", str(params), "-p", "rlx-optimize"]) == 0
    out = capsys.readouterr().out
    assert "rlx.elementwise_region" in out and "tensor<2x16xf32>" in out
    assert sorted(np.load(params).files) == ["B", "W"]
    assert main([str(path), "-p", "rlx-optimize"]) == 1
    assert "is symbolic" in capsys.readouterr().err


def test_non_tensor_input_is_named():
    g = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["y"])], "g",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])],
        [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, [2])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match="input 's' is a sequence value; rlx values are tensors"):
        from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def test_docs_onnx_adding_an_op_example_works():
    """docs/onnx.md's worked example (BitwiseNot) registers and imports as written."""
    import re
    from pathlib import Path

    import rlxc.frontends.onnx as imp

    text = (Path(__file__).parent.parent / "docs" / "onnx.md").read_text()
    code = next(c for c in re.findall(r"```python\n(.*?)```", text, re.S) if "@emitter" in c)
    saved = {op: dict(forms) for op, forms in imp.EMITTERS.items()}
    try:
        exec(code, vars(imp).copy())
        assert "BitwiseNot" in imp.EMITTERS
        _check_bitwise_not()
    finally:
        imp.EMITTERS.clear()
        imp.EMITTERS.update(saved)
    assert "BitwiseNot" not in imp.EMITTERS


def _check_bitwise_not():
    for t, np_t in ((TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)):
        model = _one_node("BitwiseNot", [("x", t, [3, 5])], [("y", t, [3, 5])], opset=18)
        module, params = from_onnx(model)
        x = np.random.default_rng().integers(-1000, 1000, (3, 5)).astype(np_t)
        x[0, :2] = [np.iinfo(np_t).min, np.iinfo(np_t).max]
        (got,) = rlxc.interpret(module, {"x": x}, params)
        np.testing.assert_array_equal(got, np.invert(x))


@pytest.mark.parametrize(
    "op, opset, attrs",
    [
        ("Softmax", 11, {"axis": 1}),  # the flatten form: rows of 4x5 elements
        ("LogSoftmax", 11, {}),
        ("Softmax", 13, {"axis": 1}),  # the axis form
        ("Clip", 6, {"min": -0.5, "max": 0.25}),
        ("Slice", 9, {"starts": [1, 0], "ends": [3, -1], "axes": [0, 2]}),
        ("Pad", 2, {"pads": [0, 1, 0, 0, 2, 1], "mode": "reflect"}),
        ("TopK", 1, {"k": 2, "axis": 1}),
    ],
)
def test_opset_forms_match_onnxruntime(op, opset, attrs):
    """Where ONNX changed an op, each opset's form has its own emitter."""
    outs = ["y", "i"] if op == "TopK" else ["y"]
    g = helper.make_graph(
        [helper.make_node(op, ["x"], outs, **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT if o == "y" else TensorProto.INT64, None) for o in outs],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    x = np.random.default_rng().standard_normal((3, 4, 5)).astype(np.float32)
    module, params = from_onnx(model)
    got = rlxc.interpret(module, {"x": x}, params)
    for g_, w in zip(got, _ort_run(model, {"x": x})):
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-6)


def test_conformance_page_is_current():
    """docs/onnx-conformance.md's numpy results say what the node-case tests
    enforce: exactly the cases without a stated reason pass."""
    import json
    from pathlib import Path

    saved = json.loads((Path(conformance.DOCS) / "onnx-conformance" / "numpy.json").read_text())["results"]
    recorded = {name: v for per_op in saved.values() for name, v in per_op.items()}
    expected = {case.name: conformance.expected_failure(case) for _, case in conformance.cases()}
    assert set(recorded) == set(expected), "rerun: python tests/onnx_conformance.py --write"
    for name, why in expected.items():
        assert (recorded[name] == "pass") == (why is None), name
    every = {p.stem: json.loads(p.read_text()) for p in sorted((Path(conformance.DOCS) / "onnx-conformance").glob("*.json"))}
    assert (Path(conformance.DOCS) / "onnx-conformance.md").read_text() == conformance.render(every)


def _super_resolution_model(c: int = 8, r: int = 3):
    """An ESPCN-style super-resolution block, as torch exports it: Conv ->
    PRelu (a slope per channel) -> Conv -> Mish -> Conv to c_out r² channels
    -> DepthToSpace, then a per-pixel Softsign and OneHot of an argmax-like
    index input (a classifier head's targets)."""
    rng = np.random.default_rng()
    w = lambda *s: numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32))  # noqa: E731
    inits = [w(c, 1, 3, 3), w(c), w(c, 1, 1), w(c, c, 3, 3), w(c), w(r * r, c, 3, 3), w(r * r)]
    for t, name in zip(inits, ["W1", "B1", "S1", "W2", "B2", "W3", "B3"]):
        t.name = name
    inits.append(numpy_helper.from_array(np.array(5, np.int64), "depth"))
    inits.append(numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "onoff"))
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("PRelu", ["c1", "S1"], ["p1"]),
            helper.make_node("Conv", ["p1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1]),
            helper.make_node("Mish", ["c2"], ["m2"]),
            helper.make_node("Conv", ["m2", "W3", "B3"], ["c3"], pads=[1, 1, 1, 1]),
            helper.make_node("DepthToSpace", ["c3"], ["d"], blocksize=r, mode="CRD"),
            helper.make_node("Softsign", ["d"], ["y"]),
            helper.make_node("OneHot", ["t", "depth", "onoff"], ["h"], axis=-1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 7, 9]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 7 * r, 9 * r]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 3, 5])],
        inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_super_resolution_block_matches_onnxruntime():
    """PRelu, Mish, DepthToSpace, Softsign and OneHot in one exported-style
    model against ONNX Runtime on fresh random weights and inputs."""
    model = _super_resolution_model()
    rng = np.random.default_rng()
    x = rng.standard_normal((2, 1, 7, 9)).astype(np.float32)
    t = rng.integers(-6, 6, (2, 3)).astype(np.int64)  # some out of [-5, 5): all off
    module, params = from_onnx(model)
    got = rlxc.interpret(module, {"x": x, "t": t}, params)
    want = _ort_run(model, {"x": x, "t": t})
    # f32 convolutions summing 72 terms of order 0.3 in another order than ORT's: absolute
    # differences of about 1e-6 on outputs of order 1
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_super_resolution_block_on_cuda_matches_onnxruntime():
    """The same block compiled for CUDA, against ONNX Runtime."""
    model = _super_resolution_model()
    rng = np.random.default_rng()
    x = rng.standard_normal((2, 1, 7, 9)).astype(np.float32)
    t = rng.integers(-6, 6, (2, 3)).astype(np.int64)
    module, params = from_onnx(model)
    got = rlxc.compile(module, "cuda", params=params).run({"x": x, "t": t})
    want = _ort_run(model, {"x": x, "t": t})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("size", [1, 2, 4, 5])
def test_lrn_matches_the_definition_and_onnxruntime(size):
    """LRN over channel windows of odd and even sizes (the window clipped at
    the first and last channels) against the operator's definition in
    float64, and against ONNX Runtime for odd sizes (its only ones)."""
    model = _one_node("LRN", [("x", TensorProto.FLOAT, [2, 7, 5, 3])], [("y", TensorProto.FLOAT, [2, 7, 5, 3])],
                      opset=13, size=size, alpha=3e-2, beta=0.6, bias=1.5)
    x = (np.random.default_rng().standard_normal((2, 7, 5, 3)) * 3).astype(np.float32)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    x64, C = x.astype(np.float64), x.shape[1]
    sums = np.stack([(x64[:, max(0, c - (size - 1) // 2): min(C, c + size - (size - 1) // 2)] ** 2).sum(axis=1)
                     for c in range(C)], axis=1)
    np.testing.assert_allclose(got, x64 / (1.5 + 3e-2 / size * sums) ** 0.6, rtol=1e-5, atol=1e-6)
    if size % 2:
        np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("elem, np_t", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64),
                                        (TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)])
def test_mod_matches_numpy(fmod, elem, np_t):
    """Mod of both signs, broadcast: the divisor's sign (fmod=0, numpy's mod)
    or the dividend's (fmod=1, numpy's fmod), exactly (rlx.rem: 7 mod 0.1
    is 0.0999999 in f32, not the 0 a rounded quotient gives)."""
    rng = np.random.default_rng()
    if np_t in (np.int32, np.int64):
        a = rng.integers(-1000, 1000, (6, 50)).astype(np_t)
        b = rng.choice(np.r_[-17:0, 1:23], (1, 50)).astype(np_t)
    else:
        a = (rng.standard_normal((6, 50)) * 20).astype(np_t)
        b = (rng.uniform(0.1, 3, (1, 50)) * rng.choice([-1, 1], (1, 50))).astype(np_t)
        a[0, :3], b[0, :3] = [7, 3, -7], [0.1, 0.3, 0.1]  # quotients that round onto integers
    model = _one_node("Mod", [("a", elem, [6, 50]), ("b", elem, [1, 50])], [("y", elem, [6, 50])], opset=13, fmod=fmod)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"a": a, "b": b}, params)
    np.testing.assert_array_equal(got, (np.fmod if fmod else np.mod)(a, b))


@pytest.mark.parametrize("opset", [7, 9])
@pytest.mark.parametrize("mode, scales", [("nearest", [1, 1, 2, 3]), ("linear", [1, 1, 2, 2]), ("nearest", [1, 1, 1.5, 2])])
def test_upsample_matches_onnxruntime(opset, mode, scales):
    """Upsample (deprecated; older detector exports) in its attribute (7)
    and input (9) forms, nearest and linear, against ONNX Runtime."""
    x = np.random.default_rng().standard_normal((1, 2, 4, 5)).astype(np.float32)
    out = [int(s * d) for s, d in zip(scales, x.shape)]
    inits, attrs = [], {"mode": mode}
    if opset == 7:
        attrs["scales"] = [float(s) for s in scales]
    else:
        inits = [numpy_helper.from_array(np.array(scales, np.float32), "scales")]
    model = _one_node("Upsample", [("x", TensorProto.FLOAT, list(x.shape))], [("y", TensorProto.FLOAT, out)],
                      opset=opset, inits=inits, **attrs)
    model.ir_version = 8
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_composite_ops_edge_cases_match_onnxruntime():
    """Edge cases a review found: OneHot's float indices are truncated to
    int64; LpNormalization in f16 does not overflow; Shrink of integers
    computes in float and truncates; ReduceLogSumExp of +inf is +inf."""
    F, H, I = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32
    depth = numpy_helper.from_array(np.array(4, np.int64), "depth")
    onoff = numpy_helper.from_array(np.array([-1.0, 2.0], np.float32), "onoff")
    # (a scalar depth of int64 and float indices: ONNX Runtime has no OneHot kernel for them)
    # OneHot of float indices: ONNX Runtime has no kernel; by the spec, truncated to 0, 1, -1 (3), 3, -4 (0)
    model = _one_node("OneHot", [("t", F, [5])], [("y", F, [5, 4])], inits=[depth, onoff])
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"t": np.array([0.0, 1.7, -1.5, 3.9, -4.2], np.float32)}, params)
    want = np.full((5, 4), -1.0)
    want[np.arange(5), [0, 1, 3, 3, 0]] = 2.0
    np.testing.assert_array_equal(got, want)
    cases = [
        (_one_node("LpNormalization", [("x", H, [2, 2])], [("y", H, [2, 2])], p=2),
         {"x": np.array([[300, 400], [0, 0]], np.float16)}),
        (_one_node("LpNormalization", [("x", H, [1, 2])], [("y", H, [1, 2])], p=1),
         {"x": np.array([[40000, 40000]], np.float16)}),
        (_one_node("Shrink", [("x", I, [11])], [("y", I, [11])], lambd=1.5, bias=1.5),
         {"x": np.arange(-5, 6, dtype=np.int32)}),
        (_one_node("ReduceLogSumExp", [("x", F, [3, 2])], [("y", F, [3])], keepdims=0,
                   inits=[numpy_helper.from_array(np.array([1], np.int64), "axes")]),
         {"x": np.array([[np.inf, 1], [np.inf, np.inf], [-np.inf, -np.inf]], np.float32)}),
    ]  # fmt: skip
    for model, feeds in cases:
        module, params = from_onnx(model)
        (got,) = rlxc.interpret(module, feeds, params)
        (want,) = _ort_run(model, feeds)
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-3, atol=1e-3,
                                   err_msg=model.graph.node[0].op_type)


def test_reductions_of_16_bit_squares_and_of_scalars_match_onnxruntime():
    """Edge cases a review found: ReduceL2 of f16 squares in f32 (300 squared
    overflows f16, the norm 424.3 does not), on fresh values up to 2000
    against a float64 norm; ReduceL2 of a rank-0 input is |x|, not x^2;
    ReduceMax and ReduceMin of a rank-0 bool stay bool."""
    H, F, B = TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.BOOL
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    model = _one_node("ReduceL2", [("x", H, [4, 6])], [("y", H, [4])], inits=[axes], keepdims=0)
    x = (np.random.default_rng().standard_normal((4, 6)) * 700).clip(-2000, 2000).astype(np.float16)
    x[0, :2] = 300  # squares past f16's largest finite value
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    want = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(got, np.float64), _ort_run(model, {"x": x})[0].astype(np.float64), rtol=1e-3)
    for op, elem, value, want in (("ReduceL2", F, np.array(-3.0, np.float32), np.float32(3.0)),
                                  ("ReduceMax", B, np.array(True), np.True_), ("ReduceMin", B, np.array(False), np.False_)):
        model = _one_node(op, [("x", elem, [])], [("y", elem, [])], opset=20)
        module, params = from_onnx(model)
        (got,) = rlxc.interpret(module, {"x": value}, params)
        assert got.dtype == want.dtype and got == want, (op, got)
        np.testing.assert_array_equal(got, _ort_run(model, {"x": value})[0])


@pytest.mark.parametrize("op", ["ReduceSumSquare", "ReduceL2", "ReduceL1", "ReduceLogSum", "ReduceSum", "ReduceMax",
                                "ReduceMean", "ReduceProd"])
def test_reductions_over_no_axes_with_noop_keep_the_elementwise_part(op):
    """noop_with_empty_axes=1 and empty axes (opset 18): nothing is reduced,
    but ReduceSumSquare still squares and ReduceL2 takes |x| (rlxc returned
    x unchanged; found by a random-model fuzzer), as ReduceL1 and
    ReduceLogSum take |x| and log x; against numpy and onnxruntime."""
    F = TensorProto.FLOAT
    axes = numpy_helper.from_array(np.zeros(0, np.int64), "axes")
    model = _one_node(op, [("x", F, [3, 4])], [("y", F, [3, 4])], inits=[axes], opset=18, noop_with_empty_axes=1)
    x = np.random.default_rng().uniform(0.5, 3.0, (3, 4)).astype(np.float32) * np.where(np.arange(12) % 3, 1, -1).reshape(3, 4).astype(np.float32)
    if op == "ReduceLogSum":
        x = np.abs(x)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    want = {"ReduceSumSquare": x * x, "ReduceL2": np.abs(x), "ReduceL1": np.abs(x), "ReduceLogSum": np.log(x)}.get(op, x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-6)


def test_non_ascii_input_names():
    """Graph inputs named outside ASCII (`état`, `输入`) import, keep their
    names and run (xDSL's SSA names are ASCII, so they go by rlx.name)."""
    F = TensorProto.FLOAT
    for name in ("état", "输入"):
        model = _one_node("Relu", [(name, F, [2, 3])], [("y", F, [2, 3])])
        module, params = from_onnx(model)
        x = np.random.default_rng().standard_normal((2, 3)).astype(np.float32)
        (got,) = rlxc.interpret(module, {name: x}, params)
        np.testing.assert_array_equal(got, np.maximum(x, 0))


@pytest.mark.parametrize("model, match", [
    (lambda: _one_node("PRelu", [("x", TensorProto.FLOAT, [1, 3, 2, 2]), ("s", TensorProto.FLOAT, [3])],
                       [("y", TensorProto.FLOAT, [1, 3, 2, 2])], opset=6), r"PRelu .*its form before opset 7 is not supported \(the model imports opset 6\)"),
    (lambda: _one_node("LRN", [("x", TensorProto.FLOAT, [1, 3, 2, 2])], [("y", TensorProto.FLOAT, [1, 3, 2, 2])]),
     r"LRN needs its size attribute"),
    (lambda: _one_node("Upsample", [("x", TensorProto.FLOAT, [1, 3, 2, 2])], [("y", TensorProto.FLOAT, [1, 3, 4, 4])],
                       opset=7, scales=[2.0, 2.0]), r"2 scales for an input of rank 4"),
    (lambda: _one_node("OneHot", [("t", TensorProto.INT64, [3])], [("y", TensorProto.FLOAT, [3, 4])], axis=3,
                       inits=[numpy_helper.from_array(np.array(4, np.int64), "depth"),
                              numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "onoff")]),
     r"axis 3 is out of range for indices of rank 1"),
])  # fmt: skip
def test_composite_ops_refuse_what_they_cannot_take(model, match):
    with pytest.raises(OnnxImportError, match=match):
        from_onnx(model())


@pytest.mark.parametrize("elem, np_t", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
@pytest.mark.parametrize("keep", [0, 1])
def test_integer_reduce_l1_matches_onnxruntime(elem, np_t, keep):
    axes = numpy_helper.from_array(np.array([0, 2], np.int64), "axes")
    model = _one_node("ReduceL1", [("x", elem, [3, 4, 5])], [("y", elem, None)], inits=[axes], keepdims=keep)
    x = np.random.default_rng().integers(-100, 100, (3, 4, 5)).astype(np_t)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    np.testing.assert_array_equal(got, _ort_run(model, {"x": x})[0])


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_matches_onnxruntime(p):
    """LpPool (an average pool of |x|^p counting the padding, times the
    window's size, to the 1/p) with pads and strides, against ONNX Runtime."""
    model = _one_node("LpPool", [("x", TensorProto.FLOAT, [2, 3, 7, 6])], [("y", TensorProto.FLOAT, None)], opset=18,
                      kernel_shape=[3, 2], pads=[1, 0, 1, 1], strides=[2, 1], p=p)
    x = np.random.default_rng().standard_normal((2, 3, 7, 6)).astype(np.float32)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_matches_onnxruntime(p):
    model = _one_node("GlobalLpPool", [("x", TensorProto.FLOAT, [2, 3, 5, 4])], [("y", TensorProto.FLOAT, None)],
                      opset=18, p=p)
    x = np.random.default_rng().standard_normal((2, 3, 5, 4)).astype(np.float32)
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)


def _attention_model(opset, inputs, outputs, **attrs):
    """A one-node Attention model: `inputs` are (name or "", ONNX type, shape)
    in the node's order ("" for an absent optional input), `outputs` (name
    or "", shape) of Q's type."""
    t = inputs[0][1]
    node = helper.make_node("Attention", [i[0] for i in inputs], [o[0] for o in outputs], **attrs)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*i) for i in inputs if i[0]],
        [helper.make_tensor_value_info(o[0], t, o[1]) for o in outputs if o[0]],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _attention_cases():
    """(name, model, feeds, whether rlx.attention takes it): grouped-query 3-D
    inputs with a KV cache, a bool mask that masks two query rows wholly and
    the cache-aligned causal frontier; softcap with the softmax scores as an
    output (the unfused path); nonpad_kv_seqlen per batch with a causal
    frontier; an opset 25 sliding window."""
    rng = np.random.default_rng()
    f = TensorProto.FLOAT
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    mask = rng.random((5, 8)) < 0.7
    mask[[1, 3]] = False  # rows no key may see: zeros
    yield ("gqa_past_bool_causal", _attention_model(
        23, [("q", f, [2, 5, 32]), ("k", f, [2, 5, 16]), ("v", f, [2, 5, 12]), ("m", TensorProto.BOOL, [5, 8]),
             ("pk", f, [2, 2, 3, 8]), ("pv", f, [2, 2, 3, 6])],
        [("y", [2, 5, 24]), ("presk", [2, 2, 8, 8]), ("presv", [2, 2, 8, 6])],
        q_num_heads=4, kv_num_heads=2, is_causal=1),
        {"q": r(2, 5, 32), "k": r(2, 5, 16), "v": r(2, 5, 12), "m": mask, "pk": r(2, 2, 3, 8), "pv": r(2, 2, 3, 6)}, True)
    yield ("softcap_scores", _attention_model(
        23, [("q", f, [2, 3, 4, 8]), ("k", f, [2, 3, 6, 8]), ("v", f, [2, 3, 6, 5]), ("m", f, [2, 1, 4, 6])],
        [("y", [2, 3, 4, 5]), ("", None), ("", None), ("qk", [2, 3, 4, 6])],
        scale=0.3, softcap=2.0, qk_matmul_output_mode=3),
        {"q": r(2, 3, 4, 8), "k": r(2, 3, 6, 8), "v": r(2, 3, 6, 5), "m": r(2, 1, 4, 6)}, False)
    yield ("nonpad_causal", _attention_model(
        24, [("q", f, [2, 2, 2, 8]), ("k", f, [2, 2, 7, 8]), ("v", f, [2, 2, 7, 8]), ("", None, None), ("", None, None),
             ("", None, None), ("n", TensorProto.INT64, [2])],
        [("y", [2, 2, 2, 8])], is_causal=1),
        {"q": r(2, 2, 2, 8), "k": r(2, 2, 7, 8), "v": r(2, 2, 7, 8), "n": np.array([7, 4], np.int64)}, True)
    yield ("window", _attention_model(
        25, [("q", f, [1, 2, 6, 4]), ("k", f, [1, 2, 6, 4]), ("v", f, [1, 2, 6, 4])], [("y", [1, 2, 6, 4])],
        left_window_size=1, right_window_size=2),
        {"q": r(1, 2, 6, 4), "k": r(1, 2, 6, 4), "v": r(1, 2, 6, 4)}, True)


@pytest.mark.parametrize("name,model,feeds,fused", list(_attention_cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_attention_matches_the_onnx_reference(name, model, feeds, fused):
    """ONNX Attention (opsets 23-25) against ONNX's reference evaluator on
    fresh inputs, every output; rlx.attention (the fused kernel on CUDA)
    wherever the scores are not an output; fully-masked rows are zeros."""
    from onnx.reference import ReferenceEvaluator

    module, params = from_onnx(model)
    assert any(op.name == "rlx.attention" for op in module.walk()) == fused
    got = rlxc.interpret(module, feeds, params)
    want = ReferenceEvaluator(model).run(None, feeds)
    assert len(got) == len(want)
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=2e-5, atol=2e-6)
    if name == "gqa_past_bool_causal":
        assert np.all(got[0][:, [1, 3]] == 0.0)
        # grouped-query attention reads its 2 key/value heads for 4 query heads: no repeated copy
        (att,) = [op for op in module.walk() if op.name == "rlx.attention"]
        assert [att.key.type.get_shape()[1], att.value.type.get_shape()[1]] == [2, 2]
        assert not any(op.name == "rlx.expand" for op in module.walk())


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("name,model,feeds,fused", list(_attention_cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_attention_on_cuda_matches_the_onnx_reference(name, model, feeds, fused):
    """The same models compiled for CUDA (the fused attention kernel where
    rlx.attention stays), against ONNX's reference."""
    from onnx.reference import ReferenceEvaluator

    module, params = from_onnx(model)
    got = rlxc.compile(module, "cuda", params=params).run(feeds)
    want = ReferenceEvaluator(model).run(None, feeds)
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("interleaved,rot,rank,positions", [(0, 0, 4, True), (1, 0, 4, True), (0, 4, 3, True),
                                                            (1, 4, 3, False), (0, 0, 3, False)])
def test_rotary_embedding_matches_the_onnx_reference(interleaved, rot, rank, positions):
    """ONNX RotaryEmbedding (opset 23) against ONNX's reference evaluator on
    fresh inputs: both pairings, a partial rotary_embedding_dim, 3-D and 4-D
    inputs, angles by position_ids or per position; the halves' form is
    rlx.rope."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng()
    b, h, s, d = 2, 3, 5, 8
    half = (rot or d) // 2
    shape = [b, h, s, d] if rank == 4 else [b, s, h * d]
    cache = [11, half] if positions else [b, s, half]
    f = TensorProto.FLOAT
    ins = [("x", f, shape), ("c", f, cache), ("sn", f, cache)] + ([("p", TensorProto.INT64, [b, s])] if positions else [])
    attrs = {"interleaved": interleaved, **({"rotary_embedding_dim": rot} if rot else {}),
             **({"num_heads": h} if rank == 3 else {})}
    model = _one_node("RotaryEmbedding", ins, [("y", f, shape)], opset=23, **attrs)
    ang = rng.uniform(-3, 3, cache)
    feeds = {"x": rng.standard_normal(shape).astype(np.float32), "c": np.cos(ang).astype(np.float32),
             "sn": np.sin(ang).astype(np.float32)}
    if positions:
        feeds["p"] = rng.integers(0, 11, (b, s)).astype(np.int64)
    module, params = from_onnx(model)
    assert any(op.name == "rlx.rope" for op in module.walk()) == (not interleaved)
    (got,) = rlxc.interpret(module, feeds, params)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,opset,attrs,dt", [("MeanVarianceNormalization", 13, {}, "f32"),
                                               ("MeanVarianceNormalization", 13, {"axes": [1, -1]}, "f16"),
                                               ("Swish", 24, {"alpha": 0.7}, "f32"), ("Swish", 24, {}, "f16"),
                                               ("SwiGLU", 28, {}, "f32"), ("SwiGLU", 28, {"alpha": 1.7}, "f16")])
def test_mvn_swish_swiglu_match_the_onnx_reference(op, opset, attrs, dt):
    """MeanVarianceNormalization (default and given axes; against float64
    numpy), Swish and SwiGLU (alpha 1: silu; against ONNX's reference
    evaluator, which computes f16 in f16) on fresh inputs, f32 and f16."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng()
    t, np_t = (TensorProto.FLOAT, np.float32) if dt == "f32" else (TensorProto.FLOAT16, np.float16)
    shape = [2, 3, 4, 5]
    names = ["a", "b"] if op == "SwiGLU" else ["x"]
    model = _one_node(op, [(nm, t, shape) for nm in names], [("y", t, shape)], opset=opset, **attrs)
    feeds = {nm: (rng.standard_normal(shape) * 2).astype(np_t) for nm in names}
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    if op == "MeanVarianceNormalization":  # in float64 (the reference evaluator's body mixes f16 and f32)
        x = feeds["x"].astype(np.float64)
        axes = tuple(a % 4 for a in attrs.get("axes", [0, 2, 3]))
        dev = x - x.mean(axis=axes, keepdims=True)
        want = dev / (np.sqrt((dev * dev).mean(axis=axes, keepdims=True)) + 1e-9)
    else:
        (want,) = ReferenceEvaluator(model).run(None, feeds)
    tol = 1e-5 if dt == "f32" else 4e-3
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def _decoder_layer_model(s=6, heads=4, kv_heads=2, d=8, ffn=48, seed=0):
    """A LLaMA-style decoder layer as an opset 28 exporter writes it with
    ONNX's own ops: RMSNormalization, q/k/v projections, RotaryEmbedding on
    q and k (3-D, position_ids), grouped-query causal Attention, the output
    projection and residual, RMSNormalization, gate/up projections, SwiGLU,
    the down projection and residual."""
    rng = np.random.default_rng(seed)
    h = heads * d
    w = lambda name, *sh: numpy_helper.from_array((rng.standard_normal(sh) / np.sqrt(sh[0])).astype(np.float32), name)  # noqa: E731
    ang = np.arange(16)[:, None] * (10000.0 ** (-np.arange(d // 2) / (d // 2)))[None, :]
    inits = [w("wq", h, h), w("wk", h, kv_heads * d), w("wv", h, kv_heads * d), w("wo", h, h), w("wg", h, ffn),
             w("wu", h, ffn), w("wd", ffn, h), numpy_helper.from_array(np.ones(h, np.float32) * 1.1, "g1"),
             numpy_helper.from_array(np.ones(h, np.float32) * 0.9, "g2"),
             numpy_helper.from_array(np.cos(ang).astype(np.float32), "cos"),
             numpy_helper.from_array(np.sin(ang).astype(np.float32), "sin")]
    nodes = [
        helper.make_node("RMSNormalization", ["x", "g1"], ["n1"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n1", "wq"], ["q"]), helper.make_node("MatMul", ["n1", "wk"], ["k"]),
        helper.make_node("MatMul", ["n1", "wv"], ["v"]),
        helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "pos"], ["qr"], num_heads=heads),
        helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "pos"], ["kr"], num_heads=kv_heads),
        helper.make_node("Attention", ["qr", "kr", "v"], ["att"], q_num_heads=heads, kv_num_heads=kv_heads, is_causal=1),
        helper.make_node("MatMul", ["att", "wo"], ["o"]), helper.make_node("Add", ["x", "o"], ["r1"]),
        helper.make_node("RMSNormalization", ["r1", "g2"], ["n2"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n2", "wg"], ["gate"]), helper.make_node("MatMul", ["n2", "wu"], ["up"]),
        helper.make_node("SwiGLU", ["gate", "up"], ["act"]), helper.make_node("MatMul", ["act", "wd"], ["dn"]),
        helper.make_node("Add", ["r1", "dn"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "decoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, s, h]),
                           helper.make_tensor_value_info("pos", TensorProto.INT64, [2, s])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, s, h])], inits,
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 28)])
    feeds = {"x": rng.standard_normal((2, s, h)).astype(np.float32),
             "pos": np.stack([np.arange(s), np.arange(3, 3 + s)]).astype(np.int64)}
    return model, feeds


def test_decoder_layer_of_onnx_transformer_ops_matches_the_onnx_reference():
    """A LLaMA-style layer written with ONNX's Attention, RotaryEmbedding,
    RMSNormalization and SwiGLU imports as rlx.attention and rlx.rope (the
    fused forms) and matches ONNX's reference evaluator on fresh inputs."""
    from onnx.reference import ReferenceEvaluator

    model, feeds = _decoder_layer_model(seed=int(np.random.default_rng().integers(1 << 30)))
    module, params = from_onnx(model)
    names = [op.name for op in module.walk()]
    assert names.count("rlx.attention") == 1 and names.count("rlx.rope") == 2 and names.count("rlx.rms_norm") == 2
    (got,) = rlxc.interpret(module, feeds, params)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_decoder_layer_of_onnx_transformer_ops_on_cuda():
    """The same layer compiled for CUDA, against ONNX's reference."""
    from onnx.reference import ReferenceEvaluator

    model, feeds = _decoder_layer_model(seed=int(np.random.default_rng().integers(1 << 30)))
    module, params = from_onnx(model)
    (got,) = rlxc.compile(module, "cuda", params=params).run(feeds)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _if_on_shape_model(n_in: int):
    """y = If(shape(x)[1] > 4): then x · 2 + c (c a branch initializer),
    else relu(x) - 1; the condition is shape arithmetic, known at import."""
    f = TensorProto.FLOAT
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t1"]), helper.make_node("Add", ["t1", "c"], ["t_out"])], "then", [],
        [helper.make_tensor_value_info("t_out", f, [3, n_in])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
         numpy_helper.from_array(np.arange(n_in, dtype=np.float32), "c")],
    )  # fmt: skip
    else_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["e1"]), helper.make_node("Sub", ["e1", "one"], ["e_out"])], "else", [],
        [helper.make_tensor_value_info("e_out", f, [3, n_in])], [numpy_helper.from_array(np.array(1.0, np.float32), "one")],
    )  # fmt: skip
    g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "i1"], ["w"]),
         helper.make_node("Greater", ["w", "four"], ["cond"]),
         helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)], "g",
        [helper.make_tensor_value_info("x", f, [3, n_in])], [helper.make_tensor_value_info("y", f, [3, n_in])],
        [numpy_helper.from_array(np.array(1, np.int64), "i1"), numpy_helper.from_array(np.array(4, np.int64), "four")],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("n_in", [6, 3])
def test_if_with_a_condition_known_at_import_takes_its_branch(n_in):
    """If on shape arithmetic imports the branch the condition picks (its
    own initializers, the outer scope's values), against ONNX Runtime; a
    runtime condition is a clear error."""
    model = _if_on_shape_model(n_in)
    x = np.random.default_rng().standard_normal((3, n_in)).astype(np.float32)
    module, params = from_onnx(model)
    names = {op.name for op in module.walk()}
    assert "rlx.relu" in names if n_in <= 4 else "rlx.relu" not in names
    (got,) = rlxc.interpret(module, {"x": x}, params)
    np.testing.assert_allclose(got, _ort_run(model, {"x": x})[0], rtol=1e-6, atol=1e-6)
    g = model.graph
    runtime = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=g.node[3].attribute[0].g, else_branch=g.node[3].attribute[1].g)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, n_in]),
              helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, n_in])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match="must be known at import: rlx has no control flow"):
        from_onnx(helper.make_model(runtime, opset_imports=[helper.make_opsetid("", 18)]))


@pytest.mark.parametrize("shape,axes", [([5, 2, 9], None), ([3, 7], [-1, 0]), ([4], [1])])
def test_center_crop_pad_matches_the_onnx_reference(shape, axes):
    """CenterCropPad (opset 18) crops and zero-pads about the centre, odd
    differences included, over all axes or given (negative) ones, against
    ONNX's reference evaluator on fresh inputs."""
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng().standard_normal((6, 3, 4)).astype(np.float32)
    n_axes = len(axes) if axes else 3
    model = _one_node("CenterCropPad", [("x", TensorProto.FLOAT, [6, 3, 4])], [("y", TensorProto.FLOAT, None)], opset=18,
                      inits=[numpy_helper.from_array(np.array(shape[:n_axes], np.int64), "shape")],
                      **({"axes": axes} if axes else {}))
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, {"x": x}, params)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic,out_type", [(1, TensorProto.FLOAT), (0, TensorProto.FLOAT), (1, TensorProto.FLOAT16)])
def test_window_functions_are_import_time_constants(op, periodic, out_type):
    """HannWindow, HammingWindow and BlackmanWindow (opset 17) fold to
    constants at import, matching ONNX's reference evaluator, and the
    symmetric Hann and Blackman windows match numpy's own (independent)."""
    from onnx.reference import ReferenceEvaluator

    size = 11
    model = _one_node(op, [], [("y", out_type, [size])], opset=17, periodic=periodic, output_datatype=out_type,
                      inits=[numpy_helper.from_array(np.array(size, np.int64), "size")])
    module, params = from_onnx(model)
    assert {o.name for o in module.walk() if o.name.startswith("rlx.")} == {"rlx.constant"}
    (got,) = rlxc.interpret(module, {}, params)
    (want,) = ReferenceEvaluator(model).run(None, {})
    tol = 1e-6 if out_type == TensorProto.FLOAT else 1e-3
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    if not periodic and op != "HammingWindow":  # numpy's Hamming uses 0.54, ONNX 25/46
        np.testing.assert_allclose(got, {"HannWindow": np.hanning, "BlackmanWindow": np.blackman}[op](size), atol=1e-6)


@pytest.mark.parametrize("mode,shape,s,axis", [("linear", [3, 2, 7, 4], 3, -2), ("circular", [3, 2, 7, 4], 5, -2),
                                               ("linear", [2, 9, 5], 4, 1), ("circular", [2, 9, 5], 9, 1)])
def test_tensor_scatter_matches_the_onnx_reference(mode, shape, s, axis):
    """TensorScatter (opset 24), the KV-cache update, against ONNX's
    reference on fresh inputs: linear writes inside the cache, circular ones
    wrapping past its end, per-batch write indices, f32 and f16."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng()
    m = shape[axis]
    ushape = list(shape)
    ushape[axis] = s
    for t, np_t in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        model = _one_node("TensorScatter", [("c", t, shape), ("u", t, ushape), ("w", TensorProto.INT64, [shape[0]])],
                          [("y", t, shape)], opset=24, mode=mode, axis=axis)
        w = rng.integers(0, m - s + 1 if mode == "linear" else 2 * m, shape[0]).astype(np.int64)
        feeds = {"c": rng.standard_normal(shape).astype(np_t), "u": rng.standard_normal(ushape).astype(np_t), "w": w}
        module, params = from_onnx(model)
        (got,) = rlxc.interpret(module, feeds, params)
        (want,) = ReferenceEvaluator(model).run(None, feeds)
        np.testing.assert_array_equal(got, want)


def test_attention_with_a_value_of_its_own_type():
    """Attention's V (and past_value) may have another float type than Q and
    K (the schema's T2): imported with V cast to Q's type, against ONNX's
    reference; present_value keeps V's type."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng()
    f, h = TensorProto.FLOAT, TensorProto.FLOAT16
    model = _attention_model(
        24, [("q", f, [1, 2, 3, 4]), ("k", f, [1, 2, 3, 4]), ("v", h, [1, 2, 3, 4]), ("", None, None),
             ("pk", f, [1, 2, 2, 4]), ("pv", h, [1, 2, 2, 4])],
        [("y", [1, 2, 3, 4]), ("presk", [1, 2, 5, 4]), ("presv", [1, 2, 5, 4])], is_causal=1)
    model.graph.output[2].type.tensor_type.elem_type = h
    feeds = {"q": rng.standard_normal((1, 2, 3, 4)).astype(np.float32), "k": rng.standard_normal((1, 2, 3, 4)).astype(np.float32),
             "v": rng.standard_normal((1, 2, 3, 4)).astype(np.float16), "pk": rng.standard_normal((1, 2, 2, 4)).astype(np.float32),
             "pv": rng.standard_normal((1, 2, 2, 4)).astype(np.float16)}
    module, params = from_onnx(model)
    got = rlxc.interpret(module, feeds, params)
    want = ReferenceEvaluator(model).run(None, feeds)
    assert got[0].dtype == np.float32 and got[2].dtype == np.float16
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=1e-6)


def _mobilenet_block_model(seed: int, c: int = 8, t: int = 4):
    """MobileNetV2's inverted residual as exporters write it: 1x1 Conv,
    Clip(0, 6) with its bounds as initializers, a depthwise 3x3 Conv of
    stride 2, Clip, a 1x1 Conv."""
    rng = np.random.default_rng(seed)
    e = c * t
    w = lambda name, *sh: numpy_helper.from_array((rng.standard_normal(sh) / np.sqrt(np.prod(sh[1:]))).astype(np.float32), name)  # noqa: E731
    inits = [w("we", e, c, 1, 1), w("be", e), w("wd", e, 1, 3, 3), w("bd", e), w("wp", c, e, 1, 1), w("bp", c),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"), numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    nodes = [
        helper.make_node("Conv", ["x", "we", "be"], ["e"]),
        helper.make_node("Clip", ["e", "lo", "hi"], ["e6"]),
        helper.make_node("Conv", ["e6", "wd", "bd"], ["d"], group=e, strides=[2, 2], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["d6"]),
        helper.make_node("Conv", ["d6", "wp", "bp"], ["y"]),
    ]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, c, 9, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, c, 5, 5])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"x": (3 * rng.standard_normal((2, c, 9, 10))).astype(np.float32)}


def test_relu6_of_an_exported_mobilenet_block_folds_into_its_depthwise_conv():
    """Clip's bounds as initializers import as constants: on cuda the
    depthwise convolution runs channels last with both ReLU6s as its clamp
    bounds and no elementwise op is left; the optimized graph matches ONNX's
    reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    model, feeds = _mobilenet_block_model(int(np.random.default_rng().integers(1 << 30)))
    module, params = from_onnx(model)
    assert "lo" not in params and "hi" not in params
    optimized = rlxc.run_pipeline(module, "rlx-optimize{target=cuda}")
    (dw,) = [op for op in optimized.walk() if op.name == "rlx.conv2d"]
    assert dw.channels_last is not None and dw.bounds() == (0.0, 6.0, 0.0, 6.0)
    assert not [op for op in optimized.walk() if op.name in ("rlx.elementwise_region", "rlx.minimum", "rlx.maximum")]
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    (got,) = rlxc.interpret(optimized, feeds, params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
def test_exported_mobilenet_block_on_cuda():
    from onnx.reference import ReferenceEvaluator

    model, feeds = _mobilenet_block_model(int(np.random.default_rng().integers(1 << 30)))
    module, params = from_onnx(model)
    (got,) = rlxc.compile(module, "cuda", params=params).run(feeds)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _scatter_model(op, reduction, xs, ids, opset=18, **attrs):
    us = list(ids[:-1]) + list(xs[ids[-1]:]) if op == "ScatterND" else list(ids)
    return _one_node(op, [("x", TensorProto.FLOAT, list(xs)), ("i", TensorProto.INT64, list(ids)),
                          ("u", TensorProto.FLOAT, us)], [("y", TensorProto.FLOAT, list(xs))], opset,
                     reduction=reduction, **attrs), us


def _scatter_feeds(op, xs, ids, us, axis, reduction, rng):
    """Fresh inputs; indices half counted from the end, duplicates only where a
    reduction combines them (ONNX leaves "none"'s duplicates undefined). Small
    integers as floats: sums and products are exact in any order."""
    if op == "ScatterND":
        k = ids[-1]
        n = int(np.prod(ids[:-1]))
        flat = (rng.choice(int(np.prod(xs[:k])), n, replace=False) if reduction == "none"
                else rng.integers(0, int(np.prod(xs[:k])), n))
        idx = np.stack(np.unravel_index(flat, xs[:k]), axis=-1).reshape(ids)
        idx = np.where(rng.random(idx.shape) < 0.5, idx - np.array(xs[:k]), idx)
    else:  # distinct positions along `axis` per line where "none"
        d = xs[axis]
        if reduction == "none":
            lines = np.moveaxis(np.zeros(ids), axis, -1)
            idx = np.moveaxis(np.stack([rng.permutation(d)[: ids[axis]] for _ in np.ndindex(lines.shape[:-1])])
                              .reshape(lines.shape), -1, axis)
        else:
            idx = rng.integers(0, d, ids)
        idx = np.where(rng.random(idx.shape) < 0.5, idx - d, idx)
    return {"x": rng.integers(-3, 4, xs).astype(np.float32), "i": idx.astype(np.int64),
            "u": rng.integers(-3, 4, us).astype(np.float32)}


SCATTER_MODELS = [("ScatterND", (4, 5, 3), (2, 6, 2), 0), ("ScatterND", (6, 7), (5, 1), 0),
                  ("ScatterElements", (4, 5, 3), (4, 2, 3), 1), ("ScatterElements", (6, 7), (3, 7), 0),
                  ("ScatterElements", (6, 7), (6, 4), -1)]


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("op,xs,ids,axis", SCATTER_MODELS)
def test_scatter_matches_onnxruntime(op, xs, ids, axis, reduction):
    """ScatterND and ScatterElements (as rlx.scatter_nd) in every reduction,
    on the numpy backend against ONNX Runtime."""
    attrs = {"axis": axis} if op == "ScatterElements" else {}
    model, us = _scatter_model(op, reduction, xs, ids, **attrs)
    feeds = _scatter_feeds(op, xs, ids, us, axis % len(xs), reduction, np.random.default_rng())
    module, params = from_onnx(model)
    (got,) = rlxc.interpret(module, feeds, params)
    np.testing.assert_array_equal(got, _ort_run(model, feeds)[0])


@pytest.mark.gpu
@pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver")
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("op,xs,ids,axis", SCATTER_MODELS + [("ScatterND", (3000, 64), (20000, 1), 0)])
def test_scatter_on_cuda_matches_onnxruntime(op, xs, ids, axis, reduction):
    """The same on CUDA (the last model: 20000 row updates into 3000 rows of
    64, many blocks waiting for each other between the copy and the
    scatter; "none" there takes 3000 distinct rows). That model is checked
    against ONNX's definition applied tuple by tuple (reference.scatter_nd):
    ONNX Runtime 1.23 on the 16-core GPU machine got its reductions over
    duplicate tuples wrong in 10 of 10 runs (a race in its parallel loop),
    where rlxc's CUDA result and the definition agreed every time."""
    if op == "ScatterND" and reduction == "none" and ids[0] > xs[0]:
        ids = (xs[0], 1)
    attrs = {"axis": axis} if op == "ScatterElements" else {}
    model, us = _scatter_model(op, reduction, xs, ids, **attrs)
    feeds = _scatter_feeds(op, xs, ids, us, axis % len(xs), reduction, np.random.default_rng())
    if reduction == "mul":  # products of many duplicates: keep them exact (±1, ±2 factors, few 2s)
        feeds["u"] = np.random.default_rng().choice(np.array([-1.0, 1.0], np.float32), feeds["u"].shape)
    if xs[0] == 3000:
        import reference as R

        want = R.scatter_nd(feeds["x"], feeds["i"], feeds["u"], reduction).astype(np.float32)
    else:
        want = _ort_run(model, feeds)[0]
    module, params = from_onnx(model)
    for mode in ("stream", "graph"):
        exe = rlxc.compile(module, target="cuda", params=params, mode=mode)
        for _ in range(2):  # graph mode: capture, then replay (the arrival counter's next round)
            (got,) = exe.run(feeds, poison=True)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt, shape", [("f32", [4, 3, 5, 6]), ("f32", [2, 5, 7]), ("f16", [3, 4, 2, 3, 5]),
                                       ("bf16", [5, 2, 6, 4])])
def test_batch_norm_training_mode_matches_float64(dt, shape):
    """BatchNormalization-15 with training_mode=1: y from the batch's own
    per-channel mean and population variance, and the running mean and
    variance outputs (momentum 0.8), against float64 numpy on fresh random
    inputs (f32 within 1e-5, 16-bit within 1e-2 relative: x and y rounded
    once)."""
    onnx_t = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}[dt]
    rng = np.random.default_rng()
    c = shape[1]
    x = rng.normal(0.5, 2.0, shape).astype(np.float32)
    p = {k: rng.normal(m, 0.5, c).astype(np.float32) for k, m in (("s", 1.0), ("b", 0.0), ("mean", 0.0), ("var", 2.0))}
    p["var"] = np.abs(p["var"])
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y", "rm", "rv"], training_mode=1,
                            momentum=0.8, epsilon=1e-3)
    model = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx_t, shape)],
        [helper.make_tensor_value_info(k, v, None) for k, v in (("y", onnx_t), ("rm", TensorProto.FLOAT), ("rv", TensorProto.FLOAT))],
        [numpy_helper.from_array(v, k) for k, v in p.items()]), opset_imports=[helper.make_opsetid("", 15)])
    module, params = from_onnx(model)
    feeds = {"x": rlxc.interpret(*_cast_module(x, dt))[0] if dt != "f32" else x}
    got = rlxc.interpret(module, feeds, params)
    x64 = np.asarray(feeds["x"], np.float64)
    axes = (0, *range(2, len(shape)))
    m, v = x64.mean(axes), x64.var(axes)
    bshape = [1, c] + [1] * (len(shape) - 2)
    y = (x64 - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-3) * p["s"].reshape(bshape) + p["b"].reshape(bshape)
    tol = 1e-5 if dt == "f32" else 1e-2
    np.testing.assert_allclose(np.asarray(got[0], np.float64), y, rtol=tol, atol=tol * np.abs(y).max())
    np.testing.assert_allclose(got[1], p["mean"] * 0.8 + m * 0.2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], p["var"] * 0.8 + v * 0.2, rtol=1e-4, atol=1e-6)


def _cast_module(x, dt):
    """A module casting f32 x to dt, and its inputs: x as dt's values."""
    g = rlxc.GraphBuilder()
    return g.build([g.cast(g.input("x", list(x.shape), "f32"), dt)]), {"x": x}


@pytest.mark.parametrize("t, np_t", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
@pytest.mark.parametrize("const_exponent", [False, True])
def test_integer_pow_is_exact(t, np_t, const_exponent):
    """Pow of integer bases by integer exponents (squaring, a step per bit):
    numpy's integer power (products wrapping as the type's, 7^15 past i32)
    for exponents of 0 and more, and for negative ones what the float power
    truncates to (1 for a base of 1, ±1 for -1, else 0); the exponent an
    input or a constant (then only its bits' steps)."""
    rng = np.random.default_rng()
    x = rng.integers(-7, 8, (4, 9)).astype(np_t)
    e = rng.integers(-3, 16, (9,)).astype(np_t)
    ins = [helper.make_tensor_value_info("x", t, [4, 9])]
    inits = []
    if const_exponent:
        inits.append(numpy_helper.from_array(e, "e"))
    else:
        ins.append(helper.make_tensor_value_info("e", t, [9]))
    model = helper.make_model(helper.make_graph([helper.make_node("Pow", ["x", "e"], ["y"])], "g", ins,
                                                [helper.make_tensor_value_info("y", t, None)], inits),
                              opset_imports=[helper.make_opsetid("", 15)])
    module, params = from_onnx(model)
    feeds = {"x": x} if const_exponent else {"x": x, "e": e}
    (got,) = rlxc.interpret(module, feeds, params)
    eb = np.broadcast_to(e, x.shape)
    with np.errstate(over="ignore"):
        want = np.power(x, np.maximum(eb, 0))
    want = np.where(eb < 0, np.where(x == 1, 1, np.where(x == -1, np.where(eb % 2 != 0, -1, 1), 0)), want).astype(np_t)
    np.testing.assert_array_equal(got, want)


def test_dropout_mask_type_by_opset():
    """Dropout at inference: before Dropout-10 the mask has the input's type
    (ones, so y * mask imports and is x), from 10 on it is bool (all true).
    (onnxruntime gives an all-false mask up to opset 11: the spec and its
    reference evaluator give all true.)"""
    F = TensorProto.FLOAT
    x = np.random.default_rng().standard_normal((2, 3)).astype(np.float32)
    for opset, mask_t, want in ((7, F, np.ones((2, 3), np.float32)), (13, TensorProto.BOOL, np.ones((2, 3), bool))):
        g = helper.make_graph([helper.make_node("Dropout", ["x"], ["y", "mask"])], "g",
                              [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("mask", mask_t, None)])
        module, params = from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))
        y, mask = rlxc.interpret(module, {"x": x}, params)
        np.testing.assert_array_equal(y, x)
        assert mask.dtype == want.dtype
        np.testing.assert_array_equal(mask, want)
    g = helper.make_graph([helper.make_node("Dropout", ["x"], ["y", "mask"]), helper.make_node("Mul", ["y", "mask"], ["o"])],
                          "g", [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("o", F, None)])
    module, params = from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 7)]))
    np.testing.assert_array_equal(rlxc.interpret(module, {"x": x}, params)[0], x)

"""ONNX's own node test cases against rlxc, per claimed op and backend.

The cases ship inside the `onnx` wheel (`load_model_tests(kind="node")`):
each is a small model with input and expected output arrays. A case belongs
to the op its name starts with (`test_reduce_sum_keepdims` -> ReduceSum;
`_expanded` variants, ONNX's function bodies, count for that op too).

Inputs that rlx needs at import (a Reshape's shape, a Slice's starts, ...)
are graph inputs in many cases; they are bound as constants, as an exporter
would have written them (`IMPORT_TIME_INPUTS` in the importer says which).

    python tests/onnx_conformance.py [--backend numpy|cuda] [--write]

runs every claimed op's cases on a backend, saves the results as
`docs/onnx-conformance/<backend>.json` with `--write`, and renders
`docs/onnx-conformance.md` from every backend's saved results. The tests
(`tests/test_onnx.py`) import `CLAIMED`, `cases()`, `run_case()` and
`KNOWN`: every case of a claimed op passes unless `KNOWN` says why not.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import re
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: The op types rlxc claims (the ONNX issue's list; RNN, GRU, LSTM, Loop, Scan, ReverseSequence, GridSample,
#: AffineGrid, DFT, STFT, MelWeightMatrix, Col2Im, Compress and the two losses since session 35).
CLAIMED = sorted("""
Add Sub Mul Div Pow Sqrt Reciprocal Neg Abs Exp Log Erf Tanh Sigmoid Relu LeakyRelu Elu Gelu
HardSigmoid HardSwish Softplus Clip Floor Ceil Round Sign Sin Cos Max Min Sum Mean Softmax
LogSoftmax MatMul Gemm LayerNormalization RMSNormalization BatchNormalization
InstanceNormalization GroupNormalization ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd
ReduceL2 ReduceSumSquare ArgMax ArgMin Reshape Transpose Squeeze Unsqueeze Flatten Concat
Split Slice Gather GatherElements GatherND Expand Tile Pad Where Equal Less LessOrEqual
Greater GreaterOrEqual And Or Not Xor Cast CastLike Constant ConstantOfShape Shape Size Range
Identity Dropout Conv ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool Resize
Trilu Einsum CumSum TopK
PRelu Mish Selu Celu ThresholdedRelu Softsign Shrink IsNaN IsInf DepthToSpace SpaceToDepth
EyeLike OneHot ReduceL1 ReduceLogSum ReduceLogSumExp Hardmax LpNormalization LRN Mod Upsample LpPool GlobalLpPool
Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Attention RotaryEmbedding MeanVarianceNormalization SwiGLU Swish If CenterCropPad HannWindow HammingWindow BlackmanWindow TensorScatter
ScatterND ScatterElements Scatter
RNN GRU LSTM Loop Scan ReverseSequence GridSample AffineGrid DFT STFT MelWeightMatrix
Col2Im Compress NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss
""".split())

#: Cases of claimed ops that cannot pass, and why (a regex on the case name
#: -> the reason). Each is a limit of rlx that the importer reports as an
#: error naming it, never a wrong answer. Cases in element types rlx does
#: not have are found from the model itself (`expected_failure`).
KNOWN: dict[str, str] = {
    r"test_if_(seq|opt)": "the branches yield a sequence or an optional value: rlx values are tensors",
    r"test_identity_opt": "an optional value: rlx values are tensors",
    r"test_identity_sequence": "a sequence value: rlx values are tensors",
    r"test_loop(13_seq|16_seq_none)": "the loop carries a sequence (or an optional) value: rlx values are tensors",
}  # fmt: skip

#: Element types rlx has (ONNX names).
RLX_TYPES = {"FLOAT", "FLOAT16", "BFLOAT16", "INT32", "INT64", "BOOL"}


#: Name forms ONNX's test names use besides the op's snake_case and lowercase.
ALIASES = {
    "And": ["and2d", "and3d", "and4d"], "Or": ["or2d", "or3d", "or4d"],
    "Xor": ["xor2d", "xor3d", "xor4d"], "BatchNormalization": ["batchnorm"],
    "InstanceNormalization": ["instancenorm"], "RMSNormalization": ["rms_normalization"],
    "Trilu": ["tril", "triu"], "Pad": ["constant_pad", "edge_pad", "reflect_pad", "wrap_pad"],
    "LessOrEqual": ["less_equal"], "GreaterOrEqual": ["greater_equal"],
    "MeanVarianceNormalization": ["mvn"], "RNN": ["simple_rnn"], "Loop": ["loop11", "loop13", "loop16"],
    "Scan": ["scan9"], "NegativeLogLikelihoodLoss": ["nllloss"], "SoftmaxCrossEntropyLoss": ["sce"],
}  # fmt: skip


def _snake(op: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", op).lower()


#: Test-name prefixes of ops rlxc does not claim that start like one it does.
OTHER_OPS = ("split_to_sequence",)


def op_of(case_name: str) -> str | None:
    """The claimed op a case belongs to: the longest op name (as ONNX's
    test names spell it, snake_case or lowercase) that the name starts with."""
    name = case_name.removeprefix("test_")
    if name.startswith(OTHER_OPS):
        return None
    best = None
    for op in CLAIMED:
        for form in {_snake(op), op.lower(), *ALIASES.get(op, ())}:
            if (name == form or name.startswith(form + "_")) and (best is None or len(form) > best[0]):
                best = (len(form), op)
    return best[1] if best else None


@functools.cache
def cases():
    """(op, case) for every node test case of a claimed op, in name order."""
    from onnx.backend.test.loader import load_model_tests

    out = []
    with warnings.catch_warnings():  # the cases' generators divide by zero on purpose
        warnings.simplefilter("ignore")
        all_cases = load_model_tests(kind="node")
    for case in all_cases:
        op = op_of(case.name)
        if op is not None:
            out.append((op, case))
    return sorted(out, key=lambda oc: oc[1].name)


def _types_in(model) -> set[str]:
    """ONNX element type names of the graph's inputs, outputs, initializers
    and Cast targets."""
    import onnx

    codes = {v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]
             if v.type.HasField("tensor_type")}
    codes |= {t.data_type for t in model.graph.initializer}
    for node in model.graph.node:
        for a in node.attribute:
            if a.name == "to":
                codes.add(a.i)
            if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                codes.add(a.t.data_type)
    return {onnx.TensorProto.DataType.Name(c) for c in codes if c}


def expected_failure(case) -> str | None:
    """Why a case cannot pass (see `KNOWN`), or None if it must."""
    for pattern, why in KNOWN.items():
        if re.fullmatch(pattern, case.name):
            return why
    missing = sorted(_types_in(case.model) - RLX_TYPES)
    if missing:
        return f"element type {', '.join(missing)}, which rlx does not have (rlx: f32, f16, bf16, i32, i64, bool)"
    return None


def _bind_import_time_inputs(model, feeds: dict[str, np.ndarray]):
    """The model with every graph input that an op reads at import (a shape,
    axes, ...) turned into an initializer holding the case's value."""
    import onnx
    from onnx import numpy_helper

    from rlxc.frontends.onnx import import_time_inputs

    needed = import_time_inputs(model.graph)
    if not needed & set(feeds):
        return model, feeds
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [i for i in m.graph.input if i.name not in needed]
    for name in needed & set(feeds):
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(feeds[name]), name))
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m, {k: v for k, v in feeds.items() if k not in needed}


def _tolerance(case, want: np.ndarray, bf16: bool = False) -> tuple[float, float]:
    """ONNX's backend-test tolerances (rtol 1e-3, atol 1e-7 unless the case
    says), with f16/bf16 results at their own precision: about two units in
    the last place (f16's 2^-10 and bf16's 2^-7 relative spacing). `bf16`:
    the output is bf16 (carried as f32 in `want`)."""
    rtol, atol = max(case.rtol, 1e-4), max(case.atol, 1e-6)
    if want.dtype == np.float16:
        rtol, atol = max(rtol, 2e-3), max(atol, 1e-3)
    if bf16:
        rtol, atol = max(rtol, 1.6e-2), max(atol, 8e-3)
    return rtol, atol


def _elem_type(model, name: str) -> str:
    """The ONNX element type name of graph output `name`."""
    import onnx

    for o in model.graph.output:
        if o.name == name:
            return onnx.TensorProto.DataType.Name(o.type.tensor_type.elem_type)
    return ""


def _array(a) -> np.ndarray:
    """A data-set entry as a numpy array: cases in types numpy lacks (bf16)
    carry TensorProtos, read as the interpreter's carrier (bf16 values in f32)."""
    import onnx

    if isinstance(a, onnx.TensorProto):
        from rlxc.frontends.onnx import _const_from_tensor

        return _const_from_tensor(a, "a case's data").array
    return np.asarray(a)


def run_case(case, backend: str = "numpy") -> None:
    """Imports, runs and checks one case on `backend`; raises on a mismatch."""
    import rlxc
    from rlxc.frontends.onnx import from_onnx

    model = case.model
    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    out_names = [o.name for o in model.graph.output]
    for inputs, outputs in case.data_sets:
        feeds = {n: _array(a) for n, a in zip(names, inputs)}
        m, feeds = _bind_import_time_inputs(model, feeds)
        module, params = from_onnx(m, {n: list(a.shape) for n, a in feeds.items()})
        if backend == "numpy":
            got = rlxc.interpret(module, feeds, params)
        else:
            got = rlxc.compile(module, "cuda", params=params).run(feeds)
        assert len(got) == len(outputs), f"{len(got)} outputs, expected {len(outputs)}"
        for name, g, w in zip(out_names, got, outputs):
            w, g = _array(w), np.asarray(g)
            bf16 = _elem_type(model, name) == "BFLOAT16"
            if bf16:  # ml_dtypes' bfloat16 (numpy kind "V"), compared as the values it holds
                w, g = w.astype(np.float32), g.astype(np.float32)
            assert g.shape == w.shape, f"output '{name}': shape {g.shape}, expected {w.shape}"
            if w.dtype.kind == "f":
                rtol, atol = _tolerance(case, w, bf16)
                np.testing.assert_allclose(
                    g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                    err_msg=f"output '{name}'",
                )
            else:
                np.testing.assert_array_equal(g.astype(w.dtype), w, err_msg=f"output '{name}'")


def _reason(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = next((t for t in text if t.strip()), type(e).__name__)
    if isinstance(e, AssertionError) and "Mismatched elements" in str(e):
        mism = next((t.strip() for t in text if "Mismatched elements" in t), "")
        rel = next((t.strip() for t in text if "Max relative" in t), "")
        return f"wrong values ({mism}; {rel})"
    return f"{type(e).__name__}: {first}"[:300]


def run_all(backend: str, only: str | None = None) -> dict[str, dict[str, str]]:
    """{op: {case: "pass" | reason}} for every claimed op's cases."""
    results: dict[str, dict[str, str]] = {op: {} for op in CLAIMED}
    for op, case in cases():
        if only and not re.search(only, case.name):
            continue
        try:
            run_case(case, backend)
            results[op][case.name] = "pass"
        except Exception as e:  # noqa: BLE001 - every failure is recorded
            if "--trace" in sys.argv:
                traceback.print_exc()
            results[op][case.name] = _reason(e)
    return results


def render(all_results: dict[str, dict]) -> str:
    """docs/onnx-conformance.md from {backend: saved results}."""
    backends = sorted(all_results)
    lines = [
        "# ONNX conformance",
        "",
        "ONNX's own backend node test cases (`onnx.backend.test.loader.load_model_tests(kind=\"node\")`,",
        "shipped inside the `onnx` wheel) for every op type rlxc claims, imported with",
        "`rlxc.from_onnx` and run on each backend, compared with the cases' own expected outputs",
        "(ONNX's tolerances: rtol 1e-3, atol 1e-7 unless a case says otherwise; f16 outputs at",
        "rtol 2e-3, atol 1e-3, bf16 outputs at rtol 1.6e-2, atol 8e-3: about two units in the last",
        "place). Inputs an op needs at import (a Reshape's shape, a Slice's starts)",
        "are bound as constants, as exporters write them. `_expanded` cases are ONNX's function",
        "bodies of the op and count for it.",
        "",
        "Written by `python tests/onnx_conformance.py --backend <numpy|cuda> --write`.",
        "",
    ]
    for b in backends:
        r = all_results[b]
        lines.append(f"- **{b}**: {r['meta']['date']}, onnx {r['meta']['onnx']}, {r['meta']['device']}")
    lines += ["", "| op | " + " | ".join(backends) + " |", "| --- |" + " --- |" * len(backends)]
    reasons = {case.name: expected_failure(case) for _, case in cases()}
    failures: dict[str, list[str]] = {}
    total = {b: [0, 0] for b in backends}
    for op in CLAIMED:
        cells = []
        for b in backends:
            if op not in all_results[b]["results"]:  # claimed after that backend's run
                cells.append("not run")
                continue
            res = all_results[b]["results"][op]
            ok = sum(v == "pass" for v in res.values())
            total[b][0] += ok
            total[b][1] += len(res)
            cells.append(f"{ok} / {len(res)}" if res else "no cases")
            for name, v in res.items():
                if v != "pass":
                    why = reasons.get(name) or f"**not explained**: {v}"
                    failures.setdefault(op, []).append(f"`{name}` ({b}): {why}")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    lines.append("| **all** | " + " | ".join(f"**{p} / {t}**" for p, t in total.values()) + " |")
    lines += ["", "## Cases not passed, and why", ""]
    if not failures:
        lines.append("None.")
    for op, fs in failures.items():
        lines.append(f"### {op}")
        lines.append("")
        lines += [f"- {f}" for f in fs]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _device() -> str:
    try:
        from rlxc.runtime.driver_api import device_name

        return device_name()
    except Exception:  # noqa: BLE001
        return "no GPU"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["numpy", "cuda"], default="numpy")
    ap.add_argument("--write", action="store_true", help="save results and render the page")
    ap.add_argument("--only", help="regex on case names")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--render", action="store_true", help="only render the page from saved results")
    a = ap.parse_args(argv)
    out = DOCS / "onnx-conformance"
    if not a.render:
        import onnx

        res = run_all(a.backend, a.only)
        n = sum(len(r) for r in res.values())
        ok = sum(v == "pass" for r in res.values() for v in r.values())
        for op, r in res.items():
            for name, v in r.items():
                if v != "pass":
                    print(f"FAIL {name}: {v}")
        print(f"{a.backend}: {ok} / {n} cases pass")
        if a.write:
            out.mkdir(parents=True, exist_ok=True)
            meta = {
                "date": datetime.date.today().isoformat(),
                "onnx": onnx.__version__,
                "device": _device() if a.backend == "cuda" else "CPU (numpy interpreter)",
            }
            (out / f"{a.backend}.json").write_text(json.dumps({"meta": meta, "results": res}, indent=1, sort_keys=True) + "\n")
    if a.write or a.render:
        saved = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}
        (DOCS / "onnx-conformance.md").write_text(render(saved))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())

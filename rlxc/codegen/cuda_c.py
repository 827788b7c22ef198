"""CUDA C++ spelling: element types, literals, and the scalar-op table.

As in tinygrad's renderer, the scalar ops of a region body are a table from
op type to a function rendering its C++ expression; a new scalar op is one
entry. Math is exact (no fast-math): `rintf` for round half to even,
full-range `sinf`/`cosf`, CUDA's libdevice functions, and for f32
`math.erfc` (exact GELU's) `rlx_erfcf`, within 8 ulp measured (OWN_ERFCF; see
`rlx_kernels.cuh`). The one exception is an op whose
`fastmath` flags allow approximate functions (`afn`) and that has an entry
in `APPROX_OPS`: `math.erfc fastmath<afn>`, which only f16/bf16 GELU
emits (its f32 value is rounded to 16 bits), renders as `rlx_erfc_afn`.

f16 and bf16 are stored as 16-bit patterns and computed in float, converted
with PTX `cvt` (f16) and bit operations (bf16, round to nearest even) by
the helpers of `rlx_kernels.cuh`, so no CUDA header is needed and NVRTC
compiles the source anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from rlxc.dialects.scalar import ErfcOp, RemFOp
from rlxc.dialects.types import dtype, dtype_name, is_float

def storage_type(t: Attribute) -> str:
    return dtype(t).c_storage


def compute_type(t: Attribute) -> str:
    return dtype(t).c_compute


def load(expr: str, t: Attribute) -> str:
    """A stored element -> its compute value."""
    name = dtype_name(t)
    if name == "f16":
        return f"rlx_ld_f16({expr})"
    if name == "bf16":
        return f"rlx_ld_bf16({expr})"
    if name == "i1":
        return f"({expr} != 0)"
    return expr


def store(expr: str, t: Attribute) -> str:
    """A compute value -> its stored element."""
    name = dtype_name(t)
    if name == "f16":
        return f"rlx_st_f16({expr})"
    if name == "bf16":
        return f"rlx_st_bf16({expr})"
    if name == "i1":
        return f"(unsigned char)({expr} ? 1 : 0)"
    return expr


def float_literal(v: float) -> str:
    """An exact float literal (f32 values are exact as a 9-digit decimal)."""
    if math.isnan(v):
        return "RLX_NAN"
    if math.isinf(v):
        return "RLX_INF" if v > 0 else "(-RLX_INF)"
    return f"{float(np.float32(v))!r}f"


def literal(value: float | int, t: Attribute) -> str:
    name = dtype_name(t)
    if is_float(t):
        return float_literal(float(value))
    if name == "i1":
        return "true" if value else "false"
    if name == "i64":
        return f"{int(value)}LL"
    return str(int(value))


def round_value(value: float, t: Attribute) -> float:
    """`value` rounded to the float type `t` (nearest even), as the kernels'
    `rlx_round_*` helpers would at run time: constants are rounded here."""
    name = dtype_name(t)
    if name == "f16":
        with np.errstate(over="ignore"):
            return float(np.float16(value))
    if name == "bf16":
        bits = int(np.array([value], np.float32).view(np.uint32)[0])
        if (bits & 0x7FFFFFFF) > 0x7F800000:
            return float(value)  # NaN stays NaN
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000) & 0xFFFFFFFF
        return float(np.array([bits], np.uint32).view(np.float32)[0])
    return float(np.float32(value))


def _round_to(t: Attribute, expr: str) -> str:
    name = dtype_name(t)
    return {"f16": f"rlx_round_f16({expr})", "bf16": f"rlx_round_bf16_cvt({expr})"}.get(name, expr)


_CMPF = {"oeq": "==", "one": "!=", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "une": "!="}
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_CMPU = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}

Render = Callable[[Operation, list[str]], str]


def _cmpf(op: Operation, a: list[str]) -> str:
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]  # pyright: ignore
    if pred == "one":
        return f"({a[0]} == {a[0]} && {a[1]} == {a[1]} && {a[0]} != {a[1]})"
    if pred == "ord":
        return f"({a[0]} == {a[0]} && {a[1]} == {a[1]})"
    if pred == "uno":
        return f"({a[0]} != {a[0]} || {a[1]} != {a[1]})"
    if pred in ("ueq", "ugt", "uge", "ult", "ule"):
        inverse = {"ueq": "!=", "ugt": "<=", "uge": "<", "ult": ">=", "ule": ">"}[pred]
        if pred == "ueq":
            return f"!({a[0]} < {a[1]} || {a[0]} > {a[1]})"
        return f"!({a[0]} {inverse} {a[1]})"
    if pred in ("true", "false"):
        return pred
    return f"({a[0]} {_CMPF[pred]} {a[1]})"


def _cmpi(op: Operation, a: list[str]) -> str:
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]  # pyright: ignore
    if pred in _CMPU:
        return f"((unsigned long long)({a[0]}) {_CMPU[pred]} (unsigned long long)({a[1]}))"
    return f"({a[0]} {_CMPI[pred]} {a[1]})"


def _const(op: Operation, a: list[str]) -> str:
    v = op.value  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(v, FloatAttr | IntegerAttr)
    return literal(v.value.data, op.results[0].type)


def _fn(name_f: str, name_i: str | None = None) -> Render:
    def render(op: Operation, a: list[str]) -> str:
        t = op.results[0].type
        name = name_f if is_float(t) or name_i is None else name_i
        return f"{name}({', '.join(a)})"

    return render


def _cast(op: Operation, a: list[str]) -> str:
    return f"(({compute_type(op.results[0].type)})({a[0]}))"


def is_approx(op: Operation) -> bool:
    """Whether `op`'s fastmath flags allow an approximate function (`afn`),
    and it is an f32 op with an approximate rendering (`APPROX_OPS`)."""
    flags = getattr(op, "fastmath", None)
    return (type(op) in APPROX_OPS and isinstance(flags, FastMathFlagsAttr)
            and FastMathFlag.APPROX_FUNC in flags.data and dtype_name(op.results[0].type) == "f32")


#: f32 `math.erfc` (exact GELU's) as `rlx_kernels.cuh`'s `rlx_erfcf`
#: (6.4 ulp emulated, 8 measured on an H200 and an H100, about 28
#: instructions) rather than CUDA's `erfcf` (4 ulp, about 46): less
#: accurate, within what rounding x / sqrt 2 to f32 already does to GELU's
#: tail (9-140 ulp).
OWN_ERFCF = True


#: Ops rendered approximately under `fastmath<afn>` (`rlx_kernels.cuh` states
#: each one's accuracy): only where the value is then rounded to f16/bf16.
APPROX_OPS: tuple[type[Operation], ...] = (ErfcOp,)


#: Scalar op -> its C++ expression on the operands' expressions.
SCALAR_OPS: dict[type[Operation], Render] = {
    arith.ConstantOp: _const,
    arith.AddfOp: lambda op, a: f"({a[0]} + {a[1]})",
    arith.SubfOp: lambda op, a: f"({a[0]} - {a[1]})",
    arith.MulfOp: lambda op, a: f"({a[0]} * {a[1]})",
    arith.DivfOp: lambda op, a: f"({a[0]} / {a[1]})",
    arith.NegfOp: lambda op, a: f"(-{a[0]})",
    arith.MaximumfOp: lambda op, a: f"rlx_maxf({a[0]}, {a[1]})",
    arith.MinimumfOp: lambda op, a: f"rlx_minf({a[0]}, {a[1]})",
    arith.MaxnumfOp: lambda op, a: f"fmaxf({a[0]}, {a[1]})",
    arith.MinnumfOp: lambda op, a: f"fminf({a[0]}, {a[1]})",
    arith.AddiOp: lambda op, a: f"({a[0]} + {a[1]})",
    arith.SubiOp: lambda op, a: f"({a[0]} - {a[1]})",
    arith.MuliOp: lambda op, a: f"({a[0]} * {a[1]})",
    arith.DivSIOp: lambda op, a: f"rlx_div({a[0]}, {a[1]})",
    arith.RemSIOp: lambda op, a: f"rlx_rem({a[0]}, {a[1]})",
    RemFOp: lambda op, a: f"fmodf({a[0]}, {a[1]})",
    arith.MaxSIOp: lambda op, a: f"rlx_max({a[0]}, {a[1]})",
    arith.MinSIOp: lambda op, a: f"rlx_min({a[0]}, {a[1]})",
    arith.AndIOp: lambda op, a: f"({a[0]} & {a[1]})",
    arith.OrIOp: lambda op, a: f"({a[0]} | {a[1]})",
    arith.XOrIOp: lambda op, a: f"({a[0]} ^ {a[1]})",
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: lambda op, a: f"({a[0]} ? {a[1]} : {a[2]})",
    arith.SIToFPOp: lambda op, a: _round_to(op.results[0].type, f"((float)({a[0]}))"),
    arith.UIToFPOp: lambda op, a: _round_to(op.results[0].type, f"((float)({a[0]}))"),
    arith.FPToSIOp: _cast,
    arith.ExtFOp: lambda op, a: a[0],
    arith.TruncFOp: lambda op, a: _round_to(op.results[0].type, a[0]),
    arith.ExtSIOp: _cast,
    arith.ExtUIOp: _cast,
    arith.TruncIOp: _cast,
    mathd.AbsFOp: _fn("fabsf"),
    mathd.AbsIOp: lambda op, a: f"({a[0]} < 0 ? -{a[0]} : {a[0]})",
    mathd.ExpOp: _fn("expf"),
    mathd.Exp2Op: _fn("exp2f"),
    mathd.ExpM1Op: _fn("expm1f"),
    mathd.LogOp: _fn("logf"),
    mathd.Log2Op: _fn("log2f"),
    mathd.Log10Op: _fn("log10f"),
    mathd.Log1pOp: _fn("log1pf"),
    mathd.SqrtOp: _fn("sqrtf"),
    mathd.RsqrtOp: lambda op, a: f"(1.0f / sqrtf({a[0]}))",
    mathd.SinOp: _fn("sinf"),
    mathd.CosOp: _fn("cosf"),
    mathd.TanOp: _fn("tanf"),
    mathd.TanhOp: _fn("tanhf"),
    mathd.SinhOp: _fn("sinhf"),
    mathd.CoshOp: _fn("coshf"),
    mathd.AtanOp: _fn("atanf"),
    mathd.AsinOp: _fn("asinf"),
    mathd.AcosOp: _fn("acosf"),
    mathd.AsinhOp: _fn("asinhf"),
    mathd.AcoshOp: _fn("acoshf"),
    mathd.AtanhOp: _fn("atanhf"),
    mathd.Atan2Op: _fn("atan2f"),
    mathd.ErfOp: _fn("erff"),
    ErfcOp: lambda op, a: f"rlx_erfc_afn({a[0]})" if is_approx(op) else f"{'rlx_erfcf' if OWN_ERFCF else 'erfcf'}({a[0]})",
    mathd.FloorOp: _fn("floorf"),
    mathd.CeilOp: _fn("ceilf"),
    mathd.RoundEvenOp: _fn("rintf"),
    mathd.RoundOp: _fn("roundf"),
    mathd.TruncOp: _fn("truncf"),
    mathd.PowFOp: _fn("powf"),
    mathd.CopySignOp: _fn("copysignf"),
    mathd.FmaOp: _fn("fmaf"),
}


def render_scalar(op: Operation, operands: list[str], rounded: bool = True) -> str:
    """The C++ expression of one scalar op; results of f16/bf16 type are
    rounded to that type, so a float computation matches per-op rounding
    (constants are rounded here, at compile time). `rounded=False` leaves
    the last rounding out, for a value that is only stored (the store
    rounds it, and rounding twice is rounding once)."""
    render = SCALAR_OPS.get(type(op))
    if render is None:
        raise NotImplementedError(f"no CUDA C++ rendering for scalar op '{op.name}'")
    t = op.results[0].type
    if isinstance(op, arith.ConstantOp) and is_float(t):
        return float_literal(round_value(float(op.value.value.data), t))  # pyright: ignore
    expr = render(op, operands)
    if isinstance(op, arith.TruncFOp | arith.SIToFPOp | arith.UIToFPOp | arith.ExtFOp) and rounded:
        return expr
    if not rounded:
        # the op's own expression, unrounded (a trunc/sitofp carries its
        # rounding inside: strip it where the renderer added it)
        if isinstance(op, arith.TruncFOp):
            return operands[0]
        if isinstance(op, arith.SIToFPOp | arith.UIToFPOp):
            return f"((float)({operands[0]}))"
        return expr
    return _round_to(t, expr) if is_float(t) and dtype_name(t) != "f32" else expr


def render_body(block: Block, args: list[str], prefix: str,
                rounded: Callable[[SSAValue], bool] = lambda v: True) -> tuple[list[str], dict[SSAValue, str]]:
    """A scalar region body as straight-line C++: `const T a{j} = args[j];`
    for each block argument, then `const T {prefix}{k} = ...;` for each op
    (its operands by name; `rounded(v)` false leaves out a result's last
    rounding, as `render_scalar`'s `rounded`). Returns the lines and the
    name of every value; the terminator is left to the caller."""
    names: dict[SSAValue, str] = {}
    out = []
    for j, (arg, a) in enumerate(zip(block.args, args)):
        out.append(f"const {compute_type(arg.type)} a{j} = {a};")
        names[arg] = f"a{j}"
    for k, v in enumerate(block.ops):
        if v.get_trait(IsTerminator) is not None:
            continue
        expr = render_scalar(v, [names[x] for x in v.operands], rounded=rounded(v.results[0]))
        names[v.results[0]] = f"{prefix}{k}"
        out.append(f"const {compute_type(v.results[0].type)} {prefix}{k} = {expr};")
    return out, names

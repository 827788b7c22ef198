"""The scalar `arith`/`math` ops of an elementwise region body, run on whole arrays.

A region body maps scalars to scalars; the reference runs it once on the
broadcast input arrays, each scalar op applied elementwise in float64 (or
int64) and rounded to its result type, exactly as the graph-level ops are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation, Region

from rlxc.dialects import rlx
from rlxc.dialects.scalar import ErfcOp, RemFOp
from rlxc.interp import math_ref
from rlxc.values import compute_dtype, to_element_type

_Fn = Callable[..., np.ndarray]


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.astype(np.uint64) if a.dtype.kind != "b" else a


#: arith.cmpf predicates (index = the predicate attribute's value).
CMPF: list[_Fn] = [
    lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),  # false
    lambda a, b: a == b,  # oeq
    lambda a, b: a > b,  # ogt
    lambda a, b: a >= b,  # oge
    lambda a, b: a < b,  # olt
    lambda a, b: a <= b,  # ole
    lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),  # one
    lambda a, b: ~np.isnan(a) & ~np.isnan(b),  # ord
    lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),  # ueq
    lambda a, b: ~(a <= b),  # ugt
    lambda a, b: ~(a < b),  # uge
    lambda a, b: ~(a >= b),  # ult
    lambda a, b: ~(a > b),  # ule
    lambda a, b: a != b,  # une
    lambda a, b: np.isnan(a) | np.isnan(b),  # uno
    lambda a, b: np.ones(np.broadcast(a, b).shape, bool),  # true
]

#: arith.cmpi predicates (index = the predicate attribute's value).
CMPI: list[_Fn] = [
    np.equal,
    np.not_equal,
    np.less,
    np.less_equal,
    np.greater,
    np.greater_equal,
    lambda a, b: _unsigned(a) < _unsigned(b),
    lambda a, b: _unsigned(a) <= _unsigned(b),
    lambda a, b: _unsigned(a) > _unsigned(b),
    lambda a, b: _unsigned(a) >= _unsigned(b),
]

#: Scalar op -> its function on wide (float64 / int64 / bool) arrays.
SCALAR_OPS: dict[type[Operation], _Fn] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.NegfOp: np.negative,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: math_ref.int_div,
    arith.RemSIOp: math_ref.int_rem,
    RemFOp: np.fmod,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.SelectOp: np.where,
    arith.SIToFPOp: lambda x: x.astype(np.float64),
    arith.UIToFPOp: lambda x: _unsigned(x).astype(np.float64),
    arith.FPToSIOp: np.trunc,
    arith.ExtFOp: lambda x: x,
    arith.TruncFOp: lambda x: x,
    arith.ExtSIOp: lambda x: x.astype(np.int64),
    arith.ExtUIOp: lambda x: x.astype(np.int64) if x.dtype.kind == "b" else _unsigned(x),
    arith.TruncIOp: lambda x: x,
    math.AbsFOp: np.abs,
    math.AbsIOp: np.abs,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log2Op: np.log2,
    math.Log10Op: np.log10,
    math.Log1pOp: np.log1p,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: lambda x: 1.0 / np.sqrt(x),
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.TanhOp: np.tanh,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.AtanOp: np.arctan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.Atan2Op: np.arctan2,
    math.ErfOp: math_ref.erf,
    ErfcOp: math_ref.erfc,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.RoundEvenOp: np.rint,
    math.RoundOp: lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    math.TruncOp: np.trunc,
    math.PowFOp: np.power,
    math.CopySignOp: np.copysign,
    math.FmaOp: lambda a, b, c: a * b + c,
}


def _wide(v: Any, t: Any) -> np.ndarray:
    return np.asarray(v).astype(compute_dtype(t), copy=False)


def _scalar_impl(fn: _Fn):
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        wide = [_wide(a, o.type) for a, o in zip(args, op.operands)]
        with np.errstate(all="ignore"):
            out = fn(*wide)
        return (to_element_type(out, op.results[0].type),)

    return run


class _ScalarFunctionsBase(InterpreterFunctions):
    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues):
        value = op.value
        assert isinstance(value, FloatAttr | IntegerAttr)
        return (to_element_type(np.asarray(value.value.data), op.result.type),)

    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter: Interpreter, op: arith.CmpfOp, args: PythonValues):
        a, b = (_wide(x, o.type) for x, o in zip(args, op.operands))
        with np.errstate(all="ignore"):
            return (np.asarray(CMPF[op.predicate.value.data](a, b), dtype=bool),)

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues):
        a, b = (_wide(x, o.type) for x, o in zip(args, op.operands))
        return (np.asarray(CMPI[op.predicate.value.data](a, b), dtype=bool),)

    @impl_terminator(rlx.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: rlx.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()


ScalarNumpyFunctions = register_impls(
    type(
        "ScalarNumpyFunctions",
        (_ScalarFunctionsBase,),
        {
            f"run_{t.__name__}": impl(t)(_scalar_impl(fn))  # pyright: ignore
            for t, fn in SCALAR_OPS.items()
        },
    )
)


def run_scalar_body(body: Region, inputs: list[np.ndarray]) -> PythonValues:
    """Runs an elementwise region body on arrays (one per block argument)."""
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(ScalarNumpyFunctions())
    return interpreter.run_ssacfg_region(body, tuple(inputs), "elementwise_region")

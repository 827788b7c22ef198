"""What an entry function takes and gives, and the checks of given arrays
against it: shared by the numpy interpreter (`rlxc.interp`) and the CUDA
runtime (`rlxc.runtime`), so both name a missing, unknown or mis-shaped
input or param in the same words (`InputError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from rlxc.dialects import rlx
from rlxc.dialects.types import dtype_name, fmt_shape
from rlxc.values import carrier_dtype, round_bf16

__all__ = [
    "InputError",
    "Signature",
    "check_array",
    "check_inputs",
    "check_named_inputs",
    "describe",
    "signature",
]


class InputError(ValueError):
    """An input or param is missing, unknown, or of the wrong shape or dtype."""


@dataclass(frozen=True)
class Signature:
    """What an entry function takes: named inputs (in order) and named params."""

    func: func.FuncOp
    inputs: list[tuple[str, TensorType]]
    params: dict[str, TensorType]
    outputs: list[TensorType]


def _arg_name(f: func.FuncOp, i: int) -> str:
    """An input's name: its `rlx.name` arg attribute, else its SSA name hint."""
    if f.arg_attrs is not None:
        attrs = f.arg_attrs.data[i].data
        if isinstance(name := attrs.get("rlx.name"), StringAttr):
            return name.data
    hint = f.body.block.args[i].name_hint
    return hint if hint else f"arg{i}"


def signature(module: ModuleOp, entry: str = "main") -> Signature:
    """The entry function's inputs (by name, in order), params and output types."""
    f = next(
        (op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry),
        None,
    )
    if f is None:
        raise InputError(f"the module has no func.func @{entry}")
    inputs = [
        (_arg_name(f, i), t)  # pyright: ignore[reportArgumentType]
        for i, t in enumerate(f.function_type.inputs.data)
    ]
    params: dict[str, TensorType] = {}
    for op in f.walk():
        if isinstance(op, rlx.ParamOp):
            name = op.param_name.data
            if name in params and params[name] != op.result.type:
                raise InputError(
                    f"param '{name}' is declared twice with different types: "
                    f"{params[name]} and {op.result.type}"
                )
            params[name] = op.result.type  # pyright: ignore[reportArgumentType]
    outputs = list(f.function_type.outputs.data)
    return Signature(f, inputs, params, outputs)  # pyright: ignore[reportArgumentType]


def describe(t: TensorType) -> str:
    return f"shape {fmt_shape(tuple(t.get_shape()))} and dtype {dtype_name(t.get_element_type())}"


def check_array(kind: str, name: str, value: object, t: TensorType) -> np.ndarray:
    """Validates one input/param against its tensor type; returns its carrier array.

    bf16 values may be given as float32 (rounded here to bf16) or as an array
    whose dtype is named 'bfloat16' (ml_dtypes, for instance).
    A host tensor known only through DLPack (`__dlpack__`, no `__array__`)
    is read with `np.from_dlpack`.
    """
    if hasattr(value, "__dlpack__") and not hasattr(value, "__array__") and not isinstance(value, np.ndarray):
        value = np.from_dlpack(value)
    a = np.asarray(value)
    shape = tuple(t.get_shape())
    want = dtype_name(t.get_element_type())
    if a.shape != shape:
        raise InputError(
            f"{kind} '{name}' has shape {fmt_shape(a.shape)} ({a.dtype}), expected "
            f"{describe(t)}"
        )
    if want == "bf16" and a.dtype.name in ("bfloat16", "float32"):
        return round_bf16(a.astype(np.float32))
    if a.dtype != carrier_dtype(t.get_element_type()):
        raise InputError(
            f"{kind} '{name}' has dtype {a.dtype}, expected {describe(t)} (numpy "
            f"{carrier_dtype(t.get_element_type())}); convert it with .astype(...)"
        )
    return a


def check_named_inputs(sig: Signature, inputs: Mapping[str, object], convert=None) -> list:
    """The inputs in argument order, each checked (by `convert(kind, name,
    value, type)`, `check_array` by default); unknown or missing names are
    errors that name them."""
    convert = convert or check_array
    names = [n for n, _ in sig.inputs]
    if not isinstance(inputs, Mapping):
        raise InputError(
            f"inputs are given by name, as a dict {{name: array}}, not a {type(inputs).__name__}; "
            f"the inputs are: {', '.join(names) or 'none'}"
        )
    for n in inputs:
        if n not in names:
            raise InputError(f"unknown input '{n}'; the inputs are: {', '.join(names) or 'none'}")
    args = []
    for n, t in sig.inputs:
        if n not in inputs:
            raise InputError(f"input '{n}' is missing: expected {describe(t)}")
        args.append(convert("input", n, inputs[n], t))
    return args


def check_inputs(
    sig: Signature,
    inputs: Mapping[str, object],
    params: Mapping[str, object] | None,
) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """Checks every input and param by name, shape and dtype, before running anything."""
    args = check_named_inputs(sig, inputs)
    return args, check_params(sig, params)


def check_params(sig: Signature, params: Mapping[str, object] | None) -> dict[str, np.ndarray]:
    """Every param of `sig` checked by name, shape and dtype (a missing one is
    an error naming it); params `sig` does not name are left out (a module
    that folded or dropped some still takes the model's whole dict)."""
    params = params or {}
    checked = {}
    for n, t in sig.params.items():
        if n not in params:
            raise InputError(f"param '{n}' is missing: expected {describe(t)}")
        checked[n] = check_array("param", n, params[n], t)
    return checked

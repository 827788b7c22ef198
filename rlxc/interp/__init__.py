"""The numpy reference interpreter: `rlxc.interpret(module, inputs, params)`.

Runs levels [1]-[4] of rlxc's IR (graph, primitive, fused, planned) with the
numpy semantics in `rlx_numpy` on xDSL's interpreter framework.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from rlxc.interp.rlx_numpy import RlxFunctions
from rlxc.signature import InputError, Signature, check_array, check_inputs, signature
from rlxc.values import PROMOTE_TO_F64

# The input checks live in `rlxc.signature` (shared with the runtime); they
# are re-exported here so `from rlxc.interp import InputError, interpret` works.
__all__ = ["interpret", "signature", "Signature", "InputError", "check_array"]


def interpret(
    module: ModuleOp,
    inputs: Mapping[str, object],
    params: Mapping[str, object] | None = None,
    entry: str = "main",
    float64: bool = False,
) -> list[np.ndarray]:
    """Runs `func.func @main` of `module` on numpy inputs with the reference semantics.

    `inputs` maps each function argument's name to an array of exactly its
    shape and dtype; `params` does the same for each `rlx.param`. A missing,
    unknown or mis-shaped input or param raises `InputError` naming it and the
    expected shape and dtype. Returns the function's results, in order, as
    numpy arrays (bf16 results as float32 arrays holding bf16 values), each
    its own: none shares memory with an input, a param or another result
    (a graph that returns an input, a param or one value twice gets copies).

    `float64=True` computes every floating-point tensor in float64 without
    rounding to its type: the exact-arithmetic meaning of the graph, which
    differential tests of passes compare so that rounding differences
    amplified by ill-conditioned graphs (a layer_norm of a nearly constant
    row) do not hide or fake a change of meaning.
    """
    sig = signature(module, entry)
    args, checked = check_inputs(sig, inputs, params)
    if float64:
        def wide(a: np.ndarray) -> np.ndarray:
            return a.astype(np.float64) if a.dtype.kind == "f" else a

        args = [wide(a) for a in args]
        checked = {k: wide(v) for k, v in checked.items()}
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(RlxFunctions(checked))
    token = PROMOTE_TO_F64.set(float64)
    try:
        results = interpreter.call_op(entry, tuple(args))
    finally:
        PROMOTE_TO_F64.reset(token)
    theirs = [a for a in (*args, *checked.values()) if isinstance(a, np.ndarray)]
    out: list[np.ndarray] = []
    for r in results:
        a = np.asarray(r)
        if any(np.may_share_memory(a, b) for b in (*theirs, *out)):
            a = a.copy()
        out.append(a)
    return out

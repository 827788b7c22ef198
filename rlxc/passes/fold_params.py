"""Param-only expressions computed once, where the weights are known.

`fold_params(module, params)` is what `rlxc.compile` does with the weights it
is given before lowering: an op that reads only `rlx.param`s and
`rlx.constant`s (and other such ops) is evaluated with the numpy reference
interpreter and becomes a new `rlx.param` whose value joins the params. The
`rlx.concat` of weights that `rlx-merge-projections` leaves is the case it
exists for: the joined weight is then one param, uploaded once, instead of a
concat kernel on every run.

It is not a pipeline pass (pipeline passes see IR, never values): it takes
the params and returns new ones. Expressions that would grow the weights
(`rlx.expand` of a bias to a batch, say) are left to run on the device; so
are those reading a param not given (the executable names it as missing).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure

from rlxc.dialects import rlx
from rlxc.interp import check_array

__all__ = ["fold_params"]

_LEAVES = (rlx.ParamOp, rlx.ConstantOp)

#: Longest generated param name kept whole (longer ones are cut, then numbered).
_NAME_MAX = 120


def _foldable(op: Operation) -> bool:
    return (
        op.name.startswith("rlx.")
        and not isinstance(op, _LEAVES)
        and bool(op.operands)
        and not op.regions
        and op.has_trait(Pure)
        and all(isinstance(r.type, TensorType) for r in op.results)
    )


def _elements(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_count()


def fold_params(module: ModuleOp, params: Mapping[str, object] | None) -> tuple[ModuleOp, dict[str, object]]:
    """A copy of `module` in which every maximal expression over params and
    constants alone (no larger than the leaves it reads) is one new
    `rlx.param`, and the params with the new values added (the old ones stay:
    unused ones are ignored by the executable)."""
    module = module.clone()
    out: dict[str, object] = dict(params or {})
    for f in module.ops:
        if isinstance(f, func.FuncOp) and f.body.blocks:
            _fold_block(f, out)
    module.verify()
    return module, out


def _fold_block(f: func.FuncOp, params: dict[str, object]) -> None:
    block = f.body.block
    # value -> (the leaf ops it is computed from), for values of params/constants alone
    leaves: dict[SSAValue, set[Operation]] = {}
    for op in block.ops:
        if isinstance(op, _LEAVES):
            leaves[op.results[0]] = {op}
        elif _foldable(op) and all(v in leaves for v in op.operands):
            deps = set().union(*(leaves[v] for v in op.operands))
            for r in op.results:
                leaves[r] = deps
    # the outermost param-only ops: a result used by an op that is not param-only
    inner = {r for r in leaves if not isinstance(r.owner, _LEAVES)}
    inner_ops = {v.owner for v in inner}
    frontier: list[Operation] = []
    for op in block.ops:
        if op.results and all(r in inner for r in op.results) and any(
            use.operation not in inner_ops for r in op.results for use in r.uses
        ):
            frontier.append(op)
    if not frontier:
        return
    names = {op.param_name.data for op in block.ops if isinstance(op, rlx.ParamOp)}
    from rlxc.interp.rlx_numpy import RlxFunctions

    checked: dict[str, np.ndarray] = {}
    for op in block.ops:
        if isinstance(op, rlx.ParamOp) and op.param_name.data in params:
            checked[op.param_name.data] = check_array("param", op.param_name.data, params[op.param_name.data], op.result.type)  # pyright: ignore
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(RlxFunctions(checked))
    values: dict[SSAValue, object] = {}

    def value(v: SSAValue):
        if v not in values:
            owner = v.owner
            assert isinstance(owner, Operation)
            args = tuple(value(a) for a in owner.operands)
            with np.errstate(all="ignore"):
                for r, x in zip(owner.results, interpreter.run_op(owner, args)):
                    values[r] = x
        return values[v]

    done: set[Operation] = set()
    while frontier:
        op = frontier.pop(0)
        if op in done:
            continue
        done.add(op)
        deps = leaves[op.results[0]]
        if any(isinstance(d, rlx.ParamOp) and d.param_name.data not in checked for d in deps):
            continue  # a param not given: the executable reports it
        if sum(_elements(r) for r in op.results) > sum(_elements(d.results[0]) for d in deps):
            # would store more than it reads (an expand): compute it on the
            # device, from what its operands fold to
            frontier.extend(v.owner for v in op.operands if v in inner)  # pyright: ignore[reportArgumentType]
            continue
        new_ops = []
        for i, r in enumerate(op.results):
            name = _name(op, i, names)
            names.add(name)
            params[name] = np.asarray(value(r))
            p = rlx.ParamOp.build(properties={"name": StringAttr(name)}, result_types=[r.type])
            values[p.results[0]] = values[r]  # a later fold may read the new param (neg(w) also under exp)
            if r.name_hint:
                p.results[0].name_hint = r.name_hint
            new_ops.append(p)
        Rewriter.replace_op(op, new_ops, [p.results[0] for p in new_ops])
    # the ops the folded ones read, now unused
    for op in reversed(list(block.ops)):
        if (_foldable(op) or isinstance(op, _LEAVES)) and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)


def _describe(v: SSAValue) -> str:
    owner = v.owner
    if isinstance(owner, rlx.ParamOp):
        return owner.param_name.data
    if isinstance(owner, rlx.ConstantOp):
        return "constant"
    assert isinstance(owner, Operation)
    return f"{owner.name.removeprefix('rlx.')}({', '.join(_describe(a) for a in owner.operands)})"


def _name(op: Operation, index: int, taken: set[str]) -> str:
    """A param name that says what was computed: `concat(q.w, k.w, v.w)`."""
    base = _describe(op.results[index])
    if len(op.results) > 1:
        base += f"#{index}"
    base = base if len(base) <= _NAME_MAX else base[: _NAME_MAX - 3] + "..."
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}~{n}"
    return name

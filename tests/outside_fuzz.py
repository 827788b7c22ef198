#!/usr/bin/env python3
"""An outside checker for rlxc: random graphs through the public GraphBuilder,
run on the GPU and compared against the numpy interpreter.

    python3 tests/outside_fuzz.py --seed S --graphs N [--dtypes f32,f16,bf16]
        [--time-budget SECONDS] [--numpy-only | --lower-only] [--only I[,J..]]
        [--emulate] [--also-graph] [--no-shrink] [-v]

Its own generator (it does not use rlxc.testing.strategies): every public
GraphBuilder op, chained 1-8 steps deep, on shapes real models have and
awkward ones (last axes 1, 3, 7, 31, 64, 97, 128, 129, 384, 768, 1000, 4097,
20001; ranks 0-4; size-1 dims anywhere), each graph under ~64 MB.

Graph i of seed S is drawn from np.random.default_rng([S, i]) and its input
values from np.random.default_rng([S, i, 7]) alone, whatever the mode, so
`--seed S --only i` replays it exactly (in any mode).

Per graph:
  * a GraphError from the builder for a combination the generator drew: that
    step is skipped (counted per op);
  * the interpreter's result is the reference (a graph it rejects is counted
    as interp-error and printed: the generator's bug or the interpreter's);
  * default mode: rlxc.compile(target="cuda", mode="stream").run(inputs,
    poison=True); a compile or run error is a FAILURE, so is a mismatch:
    relative L2 error per float output beyond f32 1e-4 x100, f16 5e-3 x10,
    bf16 3e-2 x10 (integer and i1 outputs exact), unless the graph is shown
    ill-conditioned (the interpreter's own error against float64, or how far
    one ulp of the inputs moves the float64 result, explains it);
  * --numpy-only: rlxc.compile(target="numpy") and, as the CUDA path does,
    rlx-conv-to-gemm/merge-projections + fold_params + rlx-plan{target=cuda},
    the planned module interpreted and compared as above;
  * --emulate: the CUDA path without a GPU, values and all: the same passes,
    rlx-cuda with matmuls as generated kernels, every kernel run on the CPU
    (rlxc.runtime.emulator) and compared as on the GPU; a graph with a kernel
    the emulator does not run (grid forms of more than 16 blocks, tensor-core attention)
    is counted as not emulated; `--sm-count 8` lowers for 8 multiprocessors,
    so that the forms whose blocks wait for each other are emulated too;
  * --lower-only: the CUDA path without a GPU: the same passes, then
    rlx-cuda{arch=sm_90 sm_count=132 gemm=cublaslt|kernel} (--sm-count) and every kernel
    compiled with NVRTC (any error is a FAILURE).
A failure prints the seed, index, ops, shapes/dtypes, the error, builder code
of the graph (shrunk to the smallest failing output slice), and writes
$OUT/fail-<seed>-<i>.mlir (and -min.mlir, .py) when OUT is set.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import rlxc  # noqa: E402
from rlxc import GraphBuilder, GraphError  # noqa: E402
from rlxc.values import round_bf16  # noqa: E402

FLOATS = ("f32", "f16", "bf16")
INTS = ("i32", "i64")
LAST_DIMS = [1, 3, 7, 31, 64, 97, 128, 129, 384, 768, 1000, 4097, 20001]
LAST_W = [3, 4, 4, 3, 4, 3, 4, 3, 3, 3, 2, 2, 1]
OTHER_DIMS = [1, 1, 1, 2, 3, 4, 5, 7, 8, 12, 16, 32, 33, 64, 128, 197, 512]
STRICT_TOL = {"f32": 1e-4, "f16": 5e-3, "bf16": 3e-2}
LOOSE_X = {"f32": 100.0, "f16": 10.0, "bf16": 10.0}
CARRIER = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i32": np.int32, "i64": np.int64,
           "i1": np.bool_}
PARAM_RATE = 0.25          # share of data tensors (not weights) made params (--param-rate)
MAX_TENSOR = 4 << 20       # elements in any one tensor
STOP_BYTES = 40 << 20      # stop adding steps past this (the last step adds at most 16 MB)

UNARY_FREE = ["neg", "abs", "sin", "cos", "atan", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu",
              "softplus", "erf", "asinh"]
UNARY_BOUNDED = ["exp", "sinh", "cosh", "tan"]
UNARY_POS = ["log", "sqrt", "rsqrt", "reciprocal"]
UNARY_UNIT = ["asin", "acos", "atanh"]
UNARY_GE1 = ["acosh"]
UNARY_STEP = ["floor", "ceil", "round", "sign"]
ALL_UNARY = UNARY_FREE + UNARY_BOUNDED + UNARY_POS + UNARY_UNIT + UNARY_GE1 + UNARY_STEP
COMPARES = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCES = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
ACTS = [None, None, "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"]
#: ops whose result is exact when their operands are (moves, selections, sign flips)
EXACT_OPS = {"reshape", "transpose", "expand", "concat", "slice", "gather", "gather_elements", "gather_nd", "pad",
             "neg", "abs", "relu", "maximum", "minimum", "reduce_max", "reduce_min", "topk", "max_pool2d",
             "floor", "ceil", "round", "sign", "select", "input", "param", "constant", "resize_nearest"}

KINDS = {
    "unary": 8, "binary": 8, "compare": 4, "cast": 3, "int_chain": 2, "reduce": 7, "argmax": 2, "softmax": 4,
    "norm": 4, "fused_norm": 3, "matmul": 5, "linear": 5, "reshape": 3, "transpose": 3, "expand": 2,
    "concat": 3, "slice": 4, "gather": 3, "gather_elements": 2, "gather_nd": 2, "scatter_nd": 2, "pad": 3,
    "cumsum": 2, "topk": 2, "conv2d": 3, "conv_transpose2d": 2, "im2col": 1, "pool": 3, "resize": 2,
    "attention": 3, "attention_heads": 1, "attention_raw": 1, "swiglu": 2, "rope": 2, "constant": 2,
}


#: CUDA errors after which the context is unusable (every later graph would fail)
STICKY = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "MISALIGNED_ADDRESS", "ILLEGAL_INSTRUCTION", "HARDWARE_STACK_ERROR",
          "ASSERT", "illegal memory access", "unspecified launch failure")


class Skip(Exception):
    """The generator abandons a step (too big, nothing suitable)."""


class Ref:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


def prod(s) -> int:
    return int(np.prod(s, dtype=np.int64)) if len(s) else 1


def nbytes(t) -> int:
    return prod(t.shape) * {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "i1": 1}[t.dtype]


# --------------------------------------------------------------------------- recorded building


class Step:
    __slots__ = ("method", "args", "kw", "outs", "op")

    def __init__(self, method, args, kw, outs, op):
        self.method, self.args, self.kw, self.outs, self.op = method, args, kw, outs, op


def _to_ref(a, ids):
    if isinstance(a, rlxc.Tensor):
        return Ref(ids[id(a)])
    if isinstance(a, (list, tuple)) and any(isinstance(x, rlxc.Tensor) for x in a):
        return [_to_ref(x, ids) for x in a]
    return a


def _from_ref(a, env):
    if isinstance(a, Ref):
        return env[a.i]
    if isinstance(a, list) and any(isinstance(x, Ref) for x in a):
        return [_from_ref(x, env) for x in a]
    return a


_OPERATORS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__", "matmul": "__matmul__",
              "neg": "__neg__"}
_OPSYM = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@"}


def _invoke(g, method, args, kw, op):
    if op:  # the Tensor operator form (a + b, -a, a @ b)
        return getattr(args[0], _OPERATORS[method])(*args[1:])
    return getattr(g, method)(*args, **kw)


def replay(steps, keep: list[int]):
    """A new builder with only the steps `keep`'s tensors need; (module, steps used)."""
    need = set(keep)
    used = []
    for st in reversed(steps):
        if any(o in need for o in st.outs):
            used.append(st)
            for a in [*st.args, *st.kw.values()]:
                for r in (a if isinstance(a, list) else [a]):
                    if isinstance(r, Ref):
                        need.add(r.i)
    used.reverse()
    g = GraphBuilder()
    env = {}
    for st in used:
        res = _invoke(g, st.method, [_from_ref(a, env) for a in st.args],
                      {k: _from_ref(v, env) for k, v in st.kw.items()}, st.op)
        for o, t in zip(st.outs, res if isinstance(res, tuple) else (res,)):
            env[o] = t
    return g.build([env[k] for k in keep]), used


def _fmt(a) -> str:
    if isinstance(a, Ref):
        return f"t{a.i}"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    if isinstance(a, tuple):
        return "(" + ", ".join(_fmt(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, np.ndarray):
        if a.size <= 256:
            return f"np.array({a.tolist()!r}, np.{a.dtype.name})"
        return f"np.zeros({list(a.shape)}, np.{a.dtype.name})  # {a.size} values elided"
    if isinstance(a, (np.floating, float)):
        return repr(float(a))
    if isinstance(a, (np.integer,)):
        return repr(int(a))
    return repr(a)


def code_of(steps, keep, specs) -> str:
    lines = ["import numpy as np, rlxc", "g = rlxc.GraphBuilder()"]
    for st in steps:
        lhs = ", ".join(f"t{o}" for o in st.outs)
        if st.op and st.method == "neg":
            rhs = f"-{_fmt(st.args[0])}"
        elif st.op:
            rhs = f"{_fmt(st.args[0])} {_OPSYM[st.method]} {_fmt(st.args[1])}"
        else:
            parts = [_fmt(a) for a in st.args] + [f"{k}={_fmt(v)}" for k, v in st.kw.items()]
            rhs = f"g.{st.method}({', '.join(parts)})"
        note = ""
        if st.method in ("input", "param") and st.args[0] in specs:
            note = f"  # values: {describe_dom(specs[st.args[0]][2])}"
        lines.append(f"{lhs} = {rhs}{note}")
    lines.append(f"module = g.build([{', '.join(f't{k}' for k in keep)}])")
    return "\n".join(lines)


def describe_dom(dom) -> str:
    if dom[0] == "fixed":
        a = dom[1]
        return f"fixed {a.tolist()}" if a.size <= 64 else f"fixed array {a.shape} in [{a.min()}, {a.max()}]"
    if dom[0] == "index_cols":
        return f"indices, per last-axis component in [-d, d) of {dom[1]}"
    return " ".join(str(x) for x in dom)


# --------------------------------------------------------------------------- the generator


class Gen:
    def __init__(self, rng: np.random.Generator, dtype: str):
        self.r = rng
        self.d = dtype
        self.g = GraphBuilder()
        self.steps: list[Step] = []
        self.ids: dict[int, int] = {}
        self.keep: list = []          # strong refs, so ids stay unique
        self.specs: dict[str, tuple] = {}   # input name -> (shape, dtype, domain)
        self.pspecs: dict[str, tuple] = {}  # param name -> ...
        self.pool: list = []
        self.exact: set[int] = set()
        self.used: set[int] = set()
        self.input_ids: set[int] = set()
        self.log: list[str] = []
        self.kinds: list[str] = []
        self.methods: Counter = Counter()
        self.skips: Counter = Counter()       # GraphError per builder method
        self.crashes: list[str] = []          # builder raised something other than GraphError
        self.n = 0
        self.bytes = 0
        self.full = False
        self.seen_dtypes: set[str] = set()

    # ---------------------------------------------------------------- random helpers
    def coin(self, p=0.5) -> bool:
        return bool(self.r.random() < p)

    def choice(self, seq, w=None):
        if w is not None:
            w = np.asarray(w, np.float64)
            return seq[int(self.r.choice(len(seq), p=w / w.sum()))]
        return seq[int(self.r.integers(len(seq)))]

    def randint(self, lo, hi) -> int:  # inclusive
        return int(self.r.integers(lo, hi + 1))

    # ---------------------------------------------------------------- building
    def call(self, method, *args, op=False, exact=None, **kw):
        """A builder call, recorded; GraphError propagates (the step is skipped)."""
        try:
            res = _invoke(self.g, method, list(args), kw, op)
        except GraphError:
            self.skips[method] += 1
            raise
        except Exception as e:  # the builder should raise GraphError for anything invalid
            self.crashes.append(f"{method}: {type(e).__name__}: {e}".splitlines()[0][:300])
            self.skips[method] += 1
            raise GraphError(f"(crash) {e}") from None
        outs = res if isinstance(res, tuple) else (res,)
        for t in outs:
            if prod(t.shape) > MAX_TENSOR:
                for u in outs:  # too big: take the op back out of the graph
                    owner = u.value.owner
                    if owner.parent is not None and not any(r.uses for r in owner.results):
                        owner.detach()
                        owner.erase()
                raise Skip(f"{method} result {t.shape} too big")
        arg_refs = [_to_ref(a, self.ids) for a in args]
        kw_refs = {k: _to_ref(v, self.ids) for k, v in kw.items()}
        oids = []
        for t in outs:
            self.seen_dtypes.add(t.dtype)
            self.ids[id(t)] = len(self.ids)
            oids.append(self.ids[id(t)])
            self.keep.append(t)
            self.bytes += nbytes(t)
        for a in args:
            for t in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(t, rlxc.Tensor):
                    self.used.add(id(t))
        self.steps.append(Step(method, arg_refs, kw_refs, oids, op))
        self.methods[method] += 1
        if exact is None:
            flat = [t for a in args for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, rlxc.Tensor)]
            exact = method in EXACT_OPS and all(id(t) in self.exact for t in flat)
        if exact:
            for t in outs:
                self.exact.add(id(t))
        if method not in ("input", "param", "constant"):
            shapes = ", ".join(self._desc(a) for a in args if isinstance(a, (rlxc.Tensor, list, tuple)))
            kws = ", ".join(f"{k}={v}" for k, v in kw.items() if not isinstance(v, rlxc.Tensor) and v is not None)
            self.log.append(f"{method}({shapes}{'; ' + kws if kws else ''}) -> "
                            + ", ".join(f"{list(t.shape)}{t.dtype}" for t in outs))
        return res

    @staticmethod
    def _desc(a):
        if isinstance(a, rlxc.Tensor):
            return f"{list(a.shape)}{a.dtype}"
        return "[" + ", ".join(Gen._desc(x) for x in a if isinstance(x, rlxc.Tensor)) + "]"

    def fresh(self, shape, dom=("normal", 1.0), dtype=None, param=None):
        """A new input (or param) with values drawn from `dom`."""
        shape = [int(s) for s in shape]
        if prod(shape) > MAX_TENSOR:
            raise Skip("fresh too big")
        dtype = dtype or self.d
        if param is None:
            param = self.coin(PARAM_RATE)
        self.n += 1
        name = f"{'w' if param else 'x'}{self.n}"
        t = self.call("param" if param else "input", name, shape, dtype, exact=True)
        (self.pspecs if param else self.specs)[name] = (tuple(shape), dtype, dom)
        self.input_ids.add(id(t))
        return t

    def const(self, value, dtype=None, shape=None):
        dtype = dtype or self.d
        a = np.asarray(value, np.float64 if dtype in FLOATS else (np.int64 if dtype in INTS else np.bool_))
        if shape is not None:
            a = np.broadcast_to(a, shape).copy()
        if dtype in ("f16",):
            a = a.astype(np.float16)
        elif dtype in FLOATS:
            a = a.astype(np.float32)
        return self.call("constant", a, dtype=dtype, exact=True)

    def pick(self, pred=lambda t: True, ints=False, floats=True, recent=0.7):
        cands = [t for t in self.pool if ((floats and t.dtype in FLOATS) or (ints and t.dtype in INTS)) and pred(t)]
        if not cands:
            return None
        t = cands[-1] if self.coin(recent) else self.choice(cands)
        return t

    def add_pool(self, *ts):
        for t in ts:
            if t is not None and prod(t.shape) > 0:
                self.pool.append(t)
        if self.bytes > STOP_BYTES:
            self.full = True

    # ---------------------------------------------------------------- shapes
    def draw_shape(self, rank=None, cap=None, last=None):
        if rank is None:
            rank = self.choice([0, 1, 2, 3, 4], [1, 4, 7, 5, 3])
        cap = cap or self.choice([1 << 12, 1 << 16, 1 << 18, 1 << 20], [3, 4, 3, 2])
        if rank == 0:
            return []
        shape = [self.choice(OTHER_DIMS) for _ in range(rank - 1)]
        shape.append(last if last is not None else self.choice(LAST_DIMS, LAST_W))
        while prod(shape) > cap and any(d > 1 for d in shape[:-1]):
            k = max(range(rank - 1), key=lambda i: shape[i])
            shape[k] = max(1, shape[k] // 4)
        if prod(shape) > cap:
            shape[-1] = max(1, cap)
        return shape

    def bshape(self, s):
        """A shape that broadcasts with `s` (leading axes dropped, some set to 1)."""
        s = list(s)
        if s and self.coin(0.3):
            s = s[self.randint(0, len(s)):]
        return [1 if self.coin(0.3) else d for d in s]

    def partner(self, x, dom=("normal", 1.0)):
        """A tensor of x's dtype broadcasting with x."""
        u = self.r.random()
        if u < 0.3:
            y = self.pick(lambda t: t is not x and t.dtype == x.dtype and _broadcasts(t.shape, x.shape)
                          and prod(np.broadcast_shapes(t.shape, x.shape)) <= MAX_TENSOR, recent=0.2)
            if y is not None and dom[0] == "normal":
                return y
        if u < 0.4:
            return self.const(float(self.r.normal()), x.dtype)
        if u < 0.5 and x.ndim:
            return self.fresh(list(x.shape[-1:]), dom, x.dtype, param=True)
        return self.fresh(self.bshape(x.shape), dom, x.dtype)

    def base(self, rank=None, dom=("normal", 1.0)):
        """A float tensor to work on: from the pool or a fresh input."""
        x = self.pick(lambda t: rank is None or t.ndim in (rank if isinstance(rank, tuple) else (rank,)))
        if x is None or self.coin(0.15):
            x = self.fresh(self.draw_shape(rank if isinstance(rank, int) else None), dom)
        return x

    # ---------------------------------------------------------------- transforms into an op's domain
    def positive(self, t):
        return self.call("add", self.call("abs", t), self.const(self.choice([0.25, 0.5, 1.0]), t.dtype))

    def unit(self, t):
        return self.call("mul", self.call("tanh", t), self.const(0.9, t.dtype))

    # ---------------------------------------------------------------- steps
    def k_unary(self):
        name = self.choice(ALL_UNARY)
        x = self.pick()
        fresh = x is None or self.coin(0.3) or (name in UNARY_STEP and id(x) not in self.exact)
        if fresh:
            shape = self.draw_shape() if x is None or self.coin(0.3) else x.shape
            dtype = x.dtype if x is not None else self.d
            dom = {**{n: ("normal", self.choice([1.0, 3.0])) for n in UNARY_FREE + UNARY_STEP},
                   "exp": ("uniform", -4, 4), "sinh": ("uniform", -4, 4), "cosh": ("uniform", -4, 4),
                   "tan": ("uniform", -1.3, 1.3), "asin": ("uniform", -0.97, 0.97), "acos": ("uniform", -0.97, 0.97),
                   "atanh": ("uniform", -0.95, 0.95), "acosh": ("loguniform", 1.01, 50.0)}.get(
                name, ("loguniform", 0.05, 20.0))
            x = self.fresh(shape, dom, dtype)
        elif name in UNARY_BOUNDED:
            x = self.call("tanh", x)
        elif name in UNARY_POS:
            x = self.positive(x)
        elif name in UNARY_UNIT:
            x = self.unit(x)
        elif name in UNARY_GE1:
            x = self.call("add", self.call("abs", x), self.const(1.25, x.dtype))
        y = self.call(name, x, op=(name == "neg" and self.coin(0.5)))
        return [y], name

    def k_binary(self):
        name = self.choice(["add", "sub", "mul", "div", "rem", "pow", "maximum", "minimum"],
                           [4, 3, 4, 2, 1, 2, 2, 2])
        x = self.pick() or self.fresh(self.draw_shape())
        if name == "div":
            y = self.partner(x, ("loguniform", 0.25, 4.0, "signed"))
            if id(y) not in self.input_ids:
                y = self.positive(y)
        elif name == "rem":  # fmod jumps: exact operands only
            if id(x) not in self.exact:
                x = self.fresh(x.shape, ("normal", 4.0), x.dtype)
            y = self.fresh(self.bshape(x.shape), ("loguniform", 0.5, 4.0, "signed"), x.dtype)
        elif name == "pow":
            if self.coin(0.5):
                x = self.fresh(x.shape, ("loguniform", 0.1, 4.0), x.dtype)
            else:
                x = self.positive(x)
            if self.coin(0.25):
                y = self.const(self.choice([2.0, 3.0, 0.5, -1.0, 1.5]), x.dtype)
            else:
                y = self.partner(x, ("uniform", -2.0, 2.0))
                if id(y) not in self.input_ids:
                    y = self.call("tanh", y)
        else:
            y = self.partner(x)
        if self.coin(0.15):
            x, y = y, x
        opform = name in _OPSYM and self.coin(0.3) and isinstance(x, rlxc.Tensor)
        out = self.call(name, x, y, op=opform,
                        exact=(name == "rem" or name in ("maximum", "minimum")) and id(x) in self.exact and id(y) in self.exact)
        return [out], name

    def k_compare(self):
        cmp = self.choice(COMPARES)
        x = self.pick() or self.fresh(self.draw_shape())
        y = self.partner(x)
        c = self.call(cmp, x, y)
        outs = []
        if id(x) in self.exact and id(y) in self.exact:
            if self.coin(0.4):
                outs.append(c)  # an i1 output: exact
            a, b = x, self.partner(x)
            if self.coin(0.3):
                c = self.fresh(self.bshape(np.broadcast_shapes(x.shape, y.shape)), ("bool",), "i1")
            s = self.call("select", c, a, b)
            return outs + [s], f"{cmp}+select"
        # computed operands: only the continuous select(x cmp y, x, y)
        s = self.call("select", c, x, y) if self.coin(0.7) else self.call("select", c, y, x)
        return [s], f"{cmp}+select"

    def k_cast(self):
        x = self.pick() or self.fresh(self.draw_shape())
        u = self.r.random()
        if u < 0.2:
            c = self.call(self.choice(COMPARES), x, self.partner(x))
            return [self.call("cast", c, self.choice(FLOATS))], "cast(i1)"
        to = self.choice([d for d in FLOATS if d != x.dtype] + [x.dtype])
        y = self.call("cast", x, to, exact=(id(x) in self.exact and _widens(x.dtype, to)))
        if self.coin(0.5):
            y = self.call("cast", y, x.dtype)
        return [y], "cast"

    def k_int_chain(self):
        x = self.pick(lambda t: id(t) in self.exact)
        if x is None or self.coin(0.3):
            x = self.fresh(self.draw_shape(cap=1 << 16), ("normal", 4.0))
        it = self.choice(INTS)
        v = self.call("cast", x, it, exact=True)
        for _ in range(self.randint(1, 3)):
            op = self.choice(["add", "sub", "mul", "div", "rem", "maximum", "minimum", "neg", "abs", "relu", "sign",
                              "reduce_sum", "reduce_max", "reduce_min", "cumsum", "compare"])
            if op in ("add", "sub", "mul", "maximum", "minimum"):
                v = self.call(op, v, self.fresh(self.bshape(v.shape), ("int", -8, 8), it), exact=True)
            elif op in ("div", "rem"):
                v = self.call(op, v, self.fresh(self.bshape(v.shape), ("int", 1, 5, "signed"), it), exact=True)
            elif op in ("neg", "abs", "relu", "sign"):
                v = self.call(op, v, exact=True)
            elif op.startswith("reduce") and v.ndim:
                v = self.call(op, v, axes=self.randint(0, v.ndim - 1), keepdims=self.coin(), exact=True)
            elif op == "cumsum" and v.ndim:
                v = self.call("cumsum", v, self.randint(-v.ndim, v.ndim - 1), self.coin(), self.coin(), exact=True)
            elif op == "compare":
                c = self.call(self.choice(COMPARES), v, self.fresh(self.bshape(v.shape), ("int", -3, 3), it), exact=True)
                return [c], "int_chain"
        if self.coin(0.4):
            return [v, self.call("cast", v, self.choice(FLOATS), exact=True)], "int_chain"
        return [v], "int_chain"

    def k_reduce(self):
        name = self.choice(REDUCES, [4, 3, 2, 2, 1])
        x = self.pick(ints=self.coin(0.1)) or self.fresh(self.draw_shape())
        r = x.ndim
        u = self.r.random()
        if u < 0.15 or r == 0:
            axes = None
        elif u < 0.45:
            axes = self.randint(-r, r - 1)
        else:
            k = self.randint(1, r)
            axes = sorted(int(a) for a in self.r.choice(r, k, replace=False))
            if self.coin(0.3):
                axes = [a - r if self.coin() else a for a in axes]
                self.r.shuffle(axes)
        keep = self.coin()
        if name == "reduce_prod":
            ax = list(range(r)) if axes is None else ([axes] if isinstance(axes, int) else axes)
            if prod([x.shape[a] for a in ax]) > 64:
                name = "reduce_sum"
            elif x.dtype in FLOATS:
                x = (self.fresh(x.shape, ("uniform", 0.7, 1.4), x.dtype) if self.coin() else
                     self.call("add", self.call("mul", self.call("tanh", x), self.const(0.2, x.dtype)),
                               self.const(1.0, x.dtype)))
        if name == "reduce_mean" and x.dtype in INTS:
            name = "reduce_sum"
        return [self.call(name, x, axes=axes, keepdims=keep)], name

    def k_argmax(self):
        x = self.pick() or self.fresh(self.draw_shape())
        if x.ndim == 0:
            x = self.fresh(self.draw_shape(rank=self.randint(1, 4)), dtype=x.dtype)
        axis = self.randint(-x.ndim, x.ndim - 1)
        if id(x) in self.exact:
            i = self.call("argmax", x, axis=axis, keepdims=self.coin(), exact=True)
            return [i], "argmax"
        # computed values: near-ties may pick another index; the value there is continuous
        i = self.call("argmax", x, axis=axis, keepdims=True)
        return [self.call("gather_elements", x, i, axis=axis)], "argmax+gather_elements"

    def k_softmax(self):
        name = self.choice(["softmax", "log_softmax"])
        x = self.pick() or self.fresh(self.draw_shape())
        axis = self.randint(-max(x.ndim, 1), max(x.ndim, 1) - 1) if self.coin(0.6) else -1
        return [self.call(name, x, axis=axis)], name

    def _gamma(self, x, k, dom=("uniform", 0.5, 1.5)):
        return self.fresh(list(x.shape[x.ndim - k:]), dom, x.dtype, param=self.coin(0.8))

    def k_norm(self):
        name = self.choice(["layer_norm", "rms_norm"])
        x = self.pick(lambda t: t.ndim >= 1) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        k = 1 if x.ndim == 1 or self.coin(0.8) else self.randint(2, x.ndim)
        gamma = self._gamma(x, k)
        eps = self.choice([1e-5, 1e-6, 1e-12, 0.1])
        if name == "layer_norm":
            y = self.call("layer_norm", x, gamma, self._gamma(x, k, ("normal", 1.0)), eps=eps)
        else:
            y = self.call("rms_norm", x, gamma, eps=eps)
        return [y], name

    def k_fused_norm(self):
        name = self.choice(["fused_residual_layer_norm", "fused_residual_rms_norm"])
        x = self.pick(lambda t: t.ndim >= 1) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        r = self.pick(lambda t: t is not x and t.shape == x.shape and t.dtype == x.dtype, recent=0.2)
        if r is None:
            r = self.fresh(x.shape, dtype=x.dtype, param=False)
        k = 1 if x.ndim == 1 or self.coin(0.85) else 2
        if name == "fused_residual_layer_norm":
            s, y = self.call(name, x, r, self._gamma(x, k), self._gamma(x, k, ("normal", 1.0)))
        else:
            s, y = self.call(name, x, r, self._gamma(x, k))
        return ([s, y] if self.coin(0.7) else [y]), name

    def _weight(self, shape, fan_in, dtype, param=None):
        return self.fresh(shape, ("normal", 1.0 / math.sqrt(max(fan_in, 1))), dtype,
                          param=self.coin(0.75) if param is None else param)

    def _n_out(self, k, rows):
        for _ in range(6):
            n = self.choice([1, 3, 7, 16, 64, 97, 128, 129, 384, 768, 1000])
            if k * n <= MAX_TENSOR // 2 and rows * n <= MAX_TENSOR:
                return n
        return 1

    def k_matmul(self):
        x = self.pick(lambda t: t.ndim >= 2 and t.shape[-1] <= 8192) or self.fresh(
            self.draw_shape(rank=self.randint(2, 4), cap=1 << 18))
        *batch, m, k = x.shape
        n = self._n_out(k, prod(batch) * m)
        u = self.r.random()
        if u < 0.45:
            y = self.call("matmul", x, self._weight([k, n], k, x.dtype), op=self.coin(0.3))
            return [y], "matmul"
        if u < 0.65:  # a batched rhs with broadcast batch axes
            wb = [1 if self.coin(0.4) else b for b in batch]
            if self.coin(0.3):
                wb = wb[self.randint(0, len(wb)):]
            y = self.call("matmul", x, self._weight([*wb, k, n], k, x.dtype, param=False))
            return [y], "matmul(batched)"
        if u < 0.82:  # transposed lhs
            xt = self.call("transpose", x, [*range(x.ndim - 2), x.ndim - 1, x.ndim - 2])
            y = self.call("matmul", xt, self._weight([m, n], m, x.dtype))
            return [y], "matmul(lhs^T)"
        w = self._weight([n, k], k, x.dtype)
        y = self.call("matmul", x, self.call("transpose", w, [1, 0]))
        return [y], "matmul(rhs^T)"

    def k_linear(self):
        x = self.pick(lambda t: t.ndim >= 1 and t.shape[-1] <= 8192) or self.fresh(
            self.draw_shape(rank=self.randint(1, 3), cap=1 << 18))
        k = x.shape[-1]
        n = self._n_out(k, prod(x.shape[:-1]))
        w = self._weight([n, k], k, x.dtype)
        b = self.fresh([n], ("normal", 0.5), x.dtype, param=self.coin(0.8)) if self.coin(0.6) else None
        act = self.choice(ACTS)
        res = None
        if b is not None and self.coin(0.3):
            res = self.fresh([*x.shape[:-1], n], dtype=x.dtype, param=False)
        y = self.call("linear", x, w, b, activation=act, residual=res)
        return [y], f"linear({act or '-'}{'+res' if res is not None else ''})"

    def k_reshape(self):
        x = self.pick(ints=self.coin(0.15)) or self.fresh(self.draw_shape())
        s = list(x.shape)
        n = prod(s)
        u = self.r.random()
        if u < 0.2:
            new = [n]
        elif u < 0.4 and len(s) >= 2:  # merge two adjacent axes
            i = self.randint(0, len(s) - 2)
            new = s[:i] + [s[i] * s[i + 1]] + s[i + 2:]
        elif u < 0.6 and s:  # split an axis
            i = self.randint(0, len(s) - 1)
            fs = [f for f in range(2, min(s[i], 64) + 1) if s[i] % f == 0]
            f = self.choice(fs) if fs else 1
            new = s[:i] + [f, s[i] // f] + s[i + 1:]
        elif u < 0.75:  # insert 1
            i = self.randint(0, len(s))
            new = s[:i] + [1] + s[i:]
        elif u < 0.85:  # drop 1s
            new = [d for d in s if d != 1] or ([] if self.coin() else [1])
        else:  # random factorisation
            new, rest = [], n
            for _ in range(self.randint(0, 3)):
                fs = [f for f in (2, 3, 4, 5, 7, 8, 16, 32, 64, 97, 128) if rest % f == 0]
                if not fs:
                    break
                f = self.choice(fs)
                new.append(f)
                rest //= f
            new.append(rest)
            self.r.shuffle(new)
        if new and self.coin(0.3):
            new[self.randint(0, len(new) - 1)] = -1
        return [self.call("reshape", x, new)], "reshape"

    def k_transpose(self):
        x = self.pick(lambda t: t.ndim >= 2, ints=self.coin(0.15)) or self.fresh(self.draw_shape(rank=self.randint(2, 4)))
        r = x.ndim
        u = self.r.random()
        if u < 0.15:
            perm = None
        elif u < 0.4:
            perm = [*range(r - 2), r - 1, r - 2]
        elif u < 0.55 and r == 4:
            perm = [0, 2, 1, 3]
        else:
            perm = [int(p) for p in self.r.permutation(r)]
        return [self.call("transpose", x, perm)], "transpose"

    def k_expand(self):
        x = self.pick(lambda t: 1 in t.shape or t.ndim < 3, ints=self.coin(0.1)) or self.fresh(
            self.bshape(self.draw_shape(cap=1 << 14)))
        shape = [self.choice([2, 3, 4, 7, 16, 64, 128, 129]) if d == 1 and self.coin(0.7) else d for d in x.shape]
        for _ in range(self.randint(0, 2) if len(shape) < 4 else 0):
            shape.insert(0, self.choice([1, 2, 3, 8]))
        if prod(shape) > MAX_TENSOR // 2:
            raise Skip("expand too big")
        return [self.call("expand", x, shape)], "expand"

    def k_concat(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        r = x.ndim
        ax = self.randint(0, r - 1)
        parts = [x]
        for _ in range(self.randint(1, 3)):
            same = self.pick(lambda t: t.ndim == r and t.dtype == x.dtype and
                             all(a == b for i, (a, b) in enumerate(zip(t.shape, x.shape)) if i != ax), ints=True)
            if same is not None and self.coin(0.4):
                parts.append(same)
            elif self.coin(0.15):
                parts.append(x)
            else:
                s = list(x.shape)
                s[ax] = self.choice([1, 2, 3, 7, 31, 64, 97, 128])
                dom = ("int", -8, 8) if x.dtype in INTS else ("normal", 1.0)
                parts.append(self.fresh(s, dom, x.dtype))
        if self.coin(0.2):
            self.r.shuffle(parts)
        if sum(prod(p.shape) for p in parts) > MAX_TENSOR:
            raise Skip("concat too big")
        axis = ax - r if self.coin(0.3) else ax
        return [self.call("concat", parts, axis=axis)], "concat"

    def k_slice(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.15)) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        r = x.ndim
        k = self.randint(1, min(3, r))
        axes = [int(a) for a in self.r.choice(r, k, replace=False)]
        starts, ends, steps = [], [], []
        for a in axes:
            d = x.shape[a]
            st = self.choice([1, 1, 1, 2, 3, 7, -1, -2])
            if self.coin(0.15):  # "to the end" as exporters write it
                s0, e0 = (0, 2**63 - 1) if st > 0 else (-1, -(2**63))
            else:
                s0 = self.randint(-d - 2, d + 1)
                e0 = self.randint(-d - 2, d + 1)
            starts.append(s0)
            ends.append(e0)
            steps.append(st)
        kw = {}
        if axes != list(range(k)) or self.coin(0.5):
            kw["axes"] = [a - r if self.coin(0.3) else a for a in axes]
        if any(s != 1 for s in steps) or self.coin(0.5):
            kw["steps"] = steps
        y = self.call("slice", x, starts, ends, **kw)
        if prod(y.shape) == 0 and self.coin(0.9):
            return [], "slice(empty)"  # kept in the graph, not picked (empty results are rare on purpose)
        return [y], "slice"

    def _ids(self, shape, lo_hi, itype=None, const=None):
        """An index tensor of `shape`, values in [lo, hi]: a constant or an input."""
        itype = itype or self.choice(["i64", "i64", "i32"])
        if const is None:
            const = prod(shape) <= 64 and self.coin(0.6)
        if const:
            a = self.r.integers(lo_hi[0], lo_hi[1] + 1, size=shape).astype(np.int64 if itype == "i64" else np.int32)
            return self.call("constant", a, dtype=itype, exact=True)
        return self.fresh(shape, ("int", lo_hi[0], lo_hi[1]), itype, param=False)

    def _idx_shape(self):
        return self.choice([[], [1], [3], [7], [64], [2, 3], [4, 97], [1000], [8, 128]])

    def k_gather(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.15)) or self.fresh(self.draw_shape(rank=self.randint(1, 3)))
        ax = self.randint(-x.ndim, x.ndim - 1)
        d = x.shape[ax]
        ishape = self._idx_shape()
        if prod(ishape) * prod(x.shape) // d > MAX_TENSOR:
            raise Skip("gather too big")
        lo = -d if self.coin(0.5) else 0
        ids = self._ids(ishape, (lo, d - 1))
        return [self.call("gather", x, ids, axis=ax)], "gather"

    def k_gather_elements(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 3)))
        ax = self.randint(-x.ndim, x.ndim - 1)
        a = ax % x.ndim
        ishape = [(self.choice([1, 2, 3, 7, 64, 128, 1000]) if i == a else
                   (d if self.coin(0.7) else self.randint(1, d))) for i, d in enumerate(x.shape)]
        d = x.shape[a]
        ids = self._ids(ishape, (-d if self.coin(0.4) else 0, d - 1), const=False)
        return [self.call("gather_elements", x, ids, axis=ax)], "gather_elements"

    def k_gather_nd(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        r = x.ndim
        b = self.randint(0, min(1, r - 1))
        m = self.randint(1, r - b)
        mid = self.choice([[], [1], [3], [2, 5], [64]])
        ishape = [*x.shape[:b], *mid, m]
        dims = list(x.shape[b:b + m])
        if prod(ishape[:-1]) * prod(x.shape[b + m:]) > MAX_TENSOR:
            raise Skip("gather_nd too big")
        itype = self.choice(["i64", "i32"])
        a = np.stack([self.r.integers(-d, d, size=ishape[:-1]) for d in dims], axis=-1) if dims else None
        a = a.astype(np.int64 if itype == "i64" else np.int32)
        if a.size <= 64 and self.coin(0.6):
            ids = self.call("constant", a, dtype=itype, exact=True)
        else:
            ids = self.fresh(ishape, ("index_cols", dims), itype, param=False)
        return [self.call("gather_nd", x, ids, batch_dims=b)], "gather_nd"

    def k_scatter_nd(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 3)))
        r = x.ndim
        k = self.randint(1, r)
        red = self.choice(["none", "none", "add", "mul", "max", "min"])
        space = prod(x.shape[:k])
        n = self.randint(1, min(space, 64)) if red == "none" else self.randint(1, 96)
        if red == "none":  # distinct tuples: duplicates leave the written value unspecified
            flat = self.r.choice(space, n, replace=False)
        else:
            flat = self.r.integers(0, space, n)
        tup = np.stack(np.unravel_index(flat, x.shape[:k]), axis=-1)
        neg = self.r.random(tup.shape) < 0.3
        tup = np.where(neg, tup - np.array(x.shape[:k]), tup)
        if self.coin(0.3) and n % 2 == 0:
            tup = tup.reshape(2, n // 2, k)
        itype = self.choice(["i64", "i32"])
        tup = tup.astype(np.int64 if itype == "i64" else np.int32)
        ids = (self.call("constant", tup, dtype=itype, exact=True) if tup.size <= 128 and self.coin(0.6)
               else self.fresh(list(tup.shape), ("fixed", tup), itype, param=False))
        ushape = [*tup.shape[:-1], *x.shape[k:]]
        if prod(ushape) > MAX_TENSOR:
            raise Skip("scatter too big")
        dom = ("int", -8, 8) if x.dtype in INTS else (("uniform", 0.5, 1.5) if red == "mul" else ("normal", 1.0))
        upd = self.fresh(ushape, dom, x.dtype, param=False)
        return [self.call("scatter_nd", x, ids, upd, reduction=red)], f"scatter_nd({red})"

    def k_pad(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        mode = self.choice(["constant", "constant", "reflect", "edge", "wrap"])
        lim = [(d - 1 if mode == "reflect" else (d if mode == "wrap" else 4)) for d in x.shape]
        low = [self.randint(0, min(3, m)) if self.coin(0.6) else 0 for m in lim]
        high = [self.randint(0, min(3, m)) if self.coin(0.6) else 0 for m in lim]
        value = float(self.randint(-2, 2)) if x.dtype in INTS else self.choice([0.0, 1.0, -1.5, 3.25])
        return [self.call("pad", x, low, high, mode=mode, value=value)], f"pad({mode})"

    def k_cumsum(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.15)) or self.fresh(self.draw_shape(rank=self.randint(1, 4)))
        ax = self.randint(-x.ndim, x.ndim - 1)
        return [self.call("cumsum", x, ax, exclusive=self.coin(), reverse=self.coin())], "cumsum"

    def k_topk(self):
        x = self.pick(lambda t: t.ndim >= 1, ints=self.coin(0.1)) or self.fresh(self.draw_shape(rank=self.randint(1, 3)))
        ax = self.randint(-x.ndim, x.ndim - 1)
        d = x.shape[ax]
        k = max(1, min(d, self.choice([1, 1, 2, 5, 8, 64, d, d // 2 + 1])))
        vals, idx = self.call("topk", x, k, axis=ax, largest=self.coin(0.7), sorted=self.coin(0.8),
                              exact=id(x) in self.exact)
        outs = [vals]
        if id(x) in self.exact:
            outs.append(idx)  # indices only where the values are the inputs' (near-ties of computed ones may swap)
        else:
            self.used.add(id(idx))
        return outs, "topk"

    # ---------------------------------------------------------------- images
    def _image(self, cap=1 << 18, channels_last=False):
        x = self.pick(lambda t: t.ndim == 4 and prod(t.shape) <= cap) if self.coin(0.5) else None
        if x is None:
            n = self.choice([1, 1, 2, 4])
            c = self.choice([1, 2, 3, 4, 8, 16, 32, 64])
            h = self.choice([1, 2, 3, 5, 7, 8, 14, 16, 28, 31, 32, 56])
            w = h if self.coin(0.7) else self.choice([1, 3, 7, 16, 33, 64])
            while n * c * h * w > cap:
                c = max(1, c // 2)
                h = max(1, h // 2)
            x = self.fresh([n, h, w, c] if channels_last else [n, c, h, w])
        return x

    def _pads(self, kh, kw, limit=None):
        u = self.r.random()
        lim_h, lim_w = (kh // 2, kw // 2) if limit is None else limit
        if u < 0.4:
            return 0
        if u < 0.6:
            return min(lim_h, lim_w, self.randint(0, 2))
        if u < 0.8:
            return (self.randint(0, lim_h), self.randint(0, lim_w))
        return (self.randint(0, lim_h), self.randint(0, lim_w), self.randint(0, lim_h), self.randint(0, lim_w))

    def k_conv2d(self):
        x = self._image()
        n, c, h, w = x.shape
        u = self.r.random()
        groups = 1 if u < 0.55 else (c if u < 0.85 else self.choice([g for g in (1, 2, 4, 8) if c % g == 0]))
        o = groups * self.choice([1, 1, 2, 3, 4, 8, 16])
        kh = self.choice([1, 1, 3, 3, 5, 7])
        kw = kh if self.coin(0.8) else self.choice([1, 3, 5])
        stride = self.choice([1, 1, 2, 3]) if self.coin(0.8) else (self.randint(1, 3), self.randint(1, 3))
        dil = 1 if self.coin(0.8) else self.choice([2, (1, 2)])
        pad = self._pads(kh, kw, (kh, kw))
        wt = self._weight([o, c // groups, kh, kw], c // groups * kh * kw, x.dtype)
        b = self.fresh([o], ("normal", 0.3), x.dtype, param=True) if self.coin(0.6) else None
        y = self.call("conv2d", x, wt, b, stride=stride, padding=pad, dilation=dil, groups=groups)
        u = self.r.random()
        if u < 0.25:
            y = self.call("relu", y)
        elif u < 0.35:  # ReLU6
            y = self.call("minimum", self.call("maximum", y, self.const(0.0, y.dtype)), self.const(6.0, y.dtype))
        elif u < 0.45 and y.shape == x.shape:
            y = self.call("add", y, x)
        return [y], f"conv2d(g={'dw' if groups == c and c > 1 else groups})"

    def k_conv_transpose2d(self):
        x = self._image(cap=1 << 15)
        n, c, h, w = x.shape
        groups = 1 if self.coin(0.7) else self.choice([g for g in (1, 2, 4, c) if c % g == 0])
        opg = self.choice([1, 2, 3, 8])
        kh = self.choice([1, 2, 3, 4, 5])
        kw = kh if self.coin(0.8) else self.choice([1, 2, 3])
        s = self.choice([1, 2, 2, 3])
        d = 1 if self.coin(0.8) else 2
        pad = self._pads(kh, kw, (d * (kh - 1), d * (kw - 1)))
        op = self.randint(0, max(s, d) - 1) if self.coin(0.3) else 0
        wt = self._weight([c, opg, kh, kw], c * kh * kw // groups, x.dtype)
        b = self.fresh([opg * groups], ("normal", 0.3), x.dtype, param=True) if self.coin(0.5) else None
        y = self.call("conv_transpose2d", x, wt, b, stride=s, padding=pad, dilation=d, output_padding=op, groups=groups)
        return [y], "conv_transpose2d"

    def k_im2col(self):
        cf = self.coin(0.3)
        x = self._image(cap=1 << 15, channels_last=not cf)
        c = x.shape[1] if cf else x.shape[3]
        kh = self.choice([1, 2, 3, 5, 7])
        kw = kh if self.coin(0.8) else self.choice([1, 3])
        cols = kh * kw * c + self.choice([0, 1, 5, 8]) if self.coin(0.3) else None
        y = self.call("im2col", x, (kh, kw), stride=self.choice([1, 2]), padding=self._pads(kh, kw, (kh, kw)),
                      dilation=1 if self.coin(0.8) else 2, channels_first=cf, columns=cols)
        return [y], "im2col"

    def k_pool(self):
        name = self.choice(["max_pool2d", "avg_pool2d"])
        cl = self.coin(0.25)
        x = self._image(channels_last=cl)
        k = self.choice([1, 2, 2, 3, 3, 4]) if self.coin(0.8) else (self.randint(1, 3), self.randint(1, 4))
        kh, kw = (k, k) if isinstance(k, int) else k
        stride = None if self.coin(0.4) else self.choice([1, 2, 3])
        kw_ = dict(stride=stride, padding=self._pads(kh, kw), dilation=1 if self.coin(0.85) else 2,
                   ceil_mode=self.coin(0.3), channels_last=cl)
        if name == "avg_pool2d":
            kw_["count_include_pad"] = self.coin(0.4)
        y = self.call(name, x, k, **kw_)
        return [y], name

    def k_resize(self):
        x = self.pick(lambda t: 1 <= t.ndim <= 4 and prod(t.shape) <= 1 << 16, ints=self.coin(0.1))
        if x is None:
            x = self._image(cap=1 << 15) if self.coin(0.6) else self.fresh(self.draw_shape(rank=self.randint(1, 3), cap=1 << 14))
        mode = "nearest" if x.dtype in INTS else self.choice(["nearest", "linear"])
        spatial = x.ndim == 4 and self.coin(0.7)
        out, scales = [], []
        for i, d in enumerate(x.shape):
            f = 1.0 if (spatial and i < 2) else self.choice([1.0, 2.0, 0.5, 3.0, 1.5, 0.75, 4.0])
            o = max(1, int(math.floor(d * f)))
            out.append(o)
            scales.append(f if self.coin(0.6) else o / d)
        if prod(out) > MAX_TENSOR // 2:
            raise Skip("resize too big")
        ctms = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]
        if mode == "nearest":
            ctms.append("tf_half_pixel_for_nn")
        y = self.call("resize", x, out, scales, mode=mode, coordinate_transformation_mode=self.choice(ctms),
                      nearest_mode=self.choice(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]),
                      exact=(mode == "nearest" and id(x) in self.exact))
        return [y], f"resize({mode})"

    # ---------------------------------------------------------------- composites
    def _attn_dims(self):
        for _ in range(10):
            b = self.choice([1, 1, 2, 3])
            h = self.choice([1, 2, 4, 8, 12])
            g = h if self.coin(0.7) else self.choice([x for x in (1, 2, 4) if h % x == 0])
            sq = self.choice([1, 7, 31, 64, 128, 129, 197, 384, 1000])
            sk = sq if self.coin(0.7) else self.choice([1, 7, 64, 129, 384, 1000])
            d = self.choice([8, 16, 32, 64, 64, 80, 96, 128, 3, 7, 97, 129, 256])
            dv = d if self.coin(0.85) else self.choice([16, 64, 128, 7])
            if b * h * sq * sk <= 1 << 21 and b * h * max(sq, sk) * max(d, dv) <= 1 << 20:
                return b, h, g, sq, sk, d, dv
        return 1, 2, 2, 7, 7, 16, 16

    def _mask(self, b, h, sq, sk, dtype):
        shape = [b, h, sq, sk]
        shape = [1 if self.coin(0.5) else s for s in shape[:2]] + [1 if self.coin(0.2) else s for s in shape[2:]]
        if self.coin(0.3):
            shape = shape[self.randint(1, 2):]
        return self.fresh(shape, ("mask",) if self.coin(0.5) else ("normal", 1.0), dtype)

    def k_attention(self):
        b, h, g, sq, sk, d, dv = self._attn_dims()
        x = self.pick(lambda t: t.ndim == 4 and t.shape[0] * t.shape[1] * t.shape[2] ** 2 <= 1 << 21)
        if x is not None and self.coin(0.5):
            q = x
            b, h, sq, d = x.shape
            sk, g, dv = sq, h, d
            k = x if self.coin(0.5) else self.fresh([b, g, sk, d], dtype=x.dtype)
            v = x if self.coin(0.5) else self.fresh([b, g, sk, dv], dtype=x.dtype)
        else:
            q = self.fresh([b, h, sq, d])
            k = self.fresh([b, g, sk, d], dtype=q.dtype)
            v = self.fresh([b, g, sk, dv], dtype=q.dtype)
        mask = self._mask(b, h, sq, sk, q.dtype) if self.coin(0.3) else None
        scale = None if self.coin(0.7) else self.choice([0.1, 1.0, 0.125, 0.37])
        y = self.call("attention", q, k, v, mask, causal=self.coin(0.4), scale=scale)
        if self.coin(0.4):  # merge heads back as a model does
            y = self.call("reshape", self.call("transpose", y, [0, 2, 1, 3]), [b, sq, -1])
        return [y], f"attention({'gqa' if g != h else 'mha'})"

    def k_attention_heads(self):
        """q, k, v as head windows of one merged projection (BERT's QKV), heads
        split by reshape + transpose, merged back after."""
        b, h, _, s, _, d, _ = self._attn_dims()
        x = self.fresh([b, s, 3 * h * d])
        parts = []
        for i in self.r.permutation(3):
            p = self.call("slice", x, [int(i) * h * d], [(int(i) + 1) * h * d], axes=[2])
            parts.append(self.call("transpose", self.call("reshape", p, [b, s, h, d]), [0, 2, 1, 3]))
        y = self.call("attention", *parts, None, causal=self.coin(0.4))
        y = self.call("reshape", self.call("transpose", y, [0, 2, 1, 3]), [b, s, h * d])
        return [y], "attention(heads)"

    def k_attention_raw(self):
        """Attention as exporters write it (rlx-raise-attention's pattern)."""
        b, h, _, sq, sk, d, dv = self._attn_dims()
        q = self.fresh([b, h, sq, d])
        k = self.fresh([b, h, sk, d], dtype=q.dtype)
        v = self.fresh([b, h, sk, dv], dtype=q.dtype)
        s = self.call("matmul", q, self.call("transpose", k, [0, 1, 3, 2]))
        s = self.call("mul", s, self.const(1.0 / math.sqrt(d), q.dtype))
        if self.coin(0.5):
            s = self.call("add", s, self._mask(b, h, sq, sk, q.dtype))
        return [self.call("matmul", self.call("softmax", s, axis=-1), v)], "attention(raw)"

    def k_swiglu(self):
        x = self.pick(lambda t: t.ndim >= 1) or self.fresh(self.draw_shape(rank=self.randint(1, 3)))
        if x.shape[-1] % 2:
            x = self.call("concat", [x, x], axis=-1) if self.coin() else self.fresh([*x.shape[:-1], 2 * x.shape[-1]], dtype=x.dtype)
        return [self.call("swiglu", x)], "swiglu"

    def k_rope(self):
        x = self.pick(lambda t: t.ndim >= 1 and t.shape[-1] % 2 == 0)
        if x is None or self.coin(0.3):
            shape = self.draw_shape(rank=self.randint(2, 4), last=self.choice([2, 8, 32, 64, 96, 128, 130]))
            x = self.fresh(shape)
        u = self.r.random()
        if x.ndim >= 2 and u < 0.55:
            cs = list(x.shape[-2:])
        elif u < 0.7:
            cs = list(x.shape[-1:])
        elif u < 0.8:
            cs = list(x.shape)
        elif x.ndim >= 2 and u < 0.9:
            cs = [1] * self.randint(1, 2) + list(x.shape[-2:])
            cs = cs[-x.ndim:] if len(cs) > x.ndim else cs
        else:
            cs = self.bshape(x.shape)
        if self.coin(0.5):
            th = self.fresh(cs, ("uniform", -3.0, 3.0), x.dtype, param=True)
            c, s = self.call("cos", th), self.call("sin", th)
        else:
            c = self.fresh(cs, ("uniform", -1.0, 1.0), x.dtype)
            s = self.fresh(cs, ("uniform", -1.0, 1.0), x.dtype)
        return [self.call("rope", x, c, s)], "rope"

    def k_constant(self):
        x = self.pick() or self.fresh(self.draw_shape())
        u = self.r.random()
        if u < 0.4 or x.ndim == 0:
            cval = self.r.normal()
        elif u < 0.8 and x.shape[-1] <= 4097:
            cval = self.r.normal(size=x.shape[-1:])
        elif prod(x.shape) <= 4096:
            cval = self.r.normal(size=x.shape)
        else:
            cval = self.r.normal(size=[1] * (x.ndim - 1) + [min(x.shape[-1], 4097)]) if x.shape[-1] <= 4097 else 2.0
        if x.dtype == "f16" and self.coin(0.3):  # without dtype: the array's (float16 -> f16)
            c = self.call("constant", np.asarray(cval, np.float16), exact=True)
        else:
            c = self.const(cval, x.dtype)
        name = self.choice(["add", "mul", "sub", "maximum"])
        return [self.call(name, x, c) if self.coin() else self.call(name, c, x)], f"constant+{name}"

    # ---------------------------------------------------------------- the graph
    def generate(self):
        n0 = self.randint(1, 3)
        base = self.draw_shape()
        for i in range(n0):
            s = base if i == 0 else (self.bshape(base) if self.coin(0.7) else self.draw_shape())
            self.add_pool(self.fresh(s, ("normal", 1.0), param=False))
        n_steps = self.randint(1, 8)
        kinds, weights = list(KINDS), list(KINDS.values())
        done = 0
        attempts = 0
        while done < n_steps and attempts < 4 * n_steps and not self.full:
            attempts += 1
            kind = self.choice(kinds, weights)
            try:
                outs, name = getattr(self, f"k_{kind}")()
            except (GraphError, Skip):
                continue
            self.add_pool(*outs)
            self.kinds.append(kind)
            self.log.append(f"  ^ step {done}: {name}")
            done += 1
        made = [t for t in self.pool if id(t) not in self.input_ids]
        if not made:
            raise Skip("no op was built")
        outs = [t for t in made if id(t) not in self.used]
        for t in made:
            if t not in outs and self.coin(0.15):
                outs.append(t)  # an intermediate that is also consumed
        if not outs:
            outs = [made[-1]]
        if self.coin(0.03):
            outs.append(outs[0])  # one value returned twice
        if self.coin(0.03):
            outs.append(self.pool[0])  # an input returned as is
        self.outputs = outs
        self.out_ids = [self.ids[id(t)] for t in outs]
        self.module = self.g.build(outs)
        return self.module


def _broadcasts(a, b) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _widens(a, b) -> bool:
    return a == b or b == "f32"


# --------------------------------------------------------------------------- values


def draw_array(shape, dtype, dom, rng):
    kind = dom[0]
    if kind == "fixed":
        return np.array(dom[1], CARRIER[dtype])
    if dtype == "i1" or kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "index_cols":
        dims = dom[1]
        a = np.stack([rng.integers(-d, d, size=shape[:-1]) for d in dims], axis=-1)
        return a.astype(CARRIER[dtype])
    if kind == "int":
        lo, hi = dom[1], dom[2]
        a = rng.integers(lo, hi + 1, size=shape)
        if len(dom) > 3 and dom[3] == "signed":
            a = a * rng.choice([-1, 1], size=shape)
        return a.astype(CARRIER[dtype]) if dtype in INTS else a.astype(np.float64)
    if kind == "normal":
        a = rng.normal(dom[2] if len(dom) > 2 else 0.0, dom[1], size=shape)
    elif kind == "uniform":
        a = rng.uniform(dom[1], dom[2], size=shape)
    elif kind == "loguniform":
        a = np.exp(rng.uniform(math.log(dom[1]), math.log(dom[2]), size=shape))
        if len(dom) > 3 and dom[3] == "signed":
            a = a * rng.choice([-1.0, 1.0], size=shape)
    elif kind == "mask":
        a = np.where(rng.random(shape) < 0.2, -1e4, 0.0)
    else:
        raise ValueError(dom)
    if dtype in INTS:
        return np.trunc(a).astype(CARRIER[dtype])
    if dtype == "f16":
        return np.asarray(np.clip(a, -6e4, 6e4), np.float16)
    if dtype == "bf16":
        return round_bf16(np.asarray(a, np.float32))
    return np.asarray(a, np.float32)


def draw_values(gen: Gen, rng):
    inputs = {n: draw_array(list(s), d, dom, rng) for n, (s, d, dom) in gen.specs.items()}
    params = {n: draw_array(list(s), d, dom, rng) for n, (s, d, dom) in gen.pspecs.items()}
    return inputs, params


def nudge(arrays, specs, rng):
    """Each float value moved by one unit in the last place of its dtype, at random up or down."""
    out = {}
    for n, a in arrays.items():
        d = specs[n][1]
        if d not in FLOATS:
            out[n] = a
            continue
        up = rng.random(np.shape(a)) < 0.5
        if d in ("f16", "f32"):
            t = np.float16 if d == "f16" else np.float32
            a = np.asarray(a, t)
            out[n] = np.where(up, np.nextafter(a, t(np.inf)), np.nextafter(a, t(-np.inf))).astype(t)
        else:  # bf16: 8 significant bits, carried in float32
            a = np.asarray(a, np.float32)
            step = np.spacing(np.abs(a)) * np.float32(65536.0)
            out[n] = round_bf16(np.where(up, a + step, a - step).astype(np.float32))
    return out


# --------------------------------------------------------------------------- comparison


def rel_l2(a, b) -> float:
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(np.linalg.norm((a - b).ravel()) / max(np.linalg.norm(b.ravel()), 1e-30))


def tol_dtypes(gen) -> list[str]:
    """Per output, the dtype whose tolerance applies: the least precise float
    dtype the graph computes in (an f32 output computed from f16 values
    carries their rounding: fusion may round them differently)."""
    loosest = max((d for d in gen.seen_dtypes if d in FLOATS), key=lambda d: STRICT_TOL[d], default="f32")
    return [(max((t.dtype, loosest), key=lambda d: STRICT_TOL[d]) if t.dtype in FLOATS else t.dtype)
            for t in gen.outputs]


def compare(ref, got, out_dtypes):
    """[(index, kind, err, tol)] for each output that does not match; kind in
    shape/int/nan/nonfinite/float."""
    bad = []
    if len(ref) != len(got):
        return [(-1, "count", len(got), len(ref))]
    for i, (w, g, d) in enumerate(zip(ref, got, out_dtypes)):
        g = np.asarray(g)
        if tuple(w.shape) != tuple(g.shape):
            bad.append((i, "shape", f"{g.shape} vs {w.shape}", 0))
            continue
        if d not in FLOATS:
            if not np.array_equal(np.asarray(g, w.dtype), w):
                n = int(np.sum(np.asarray(g, w.dtype) != w))
                bad.append((i, "int", f"{n}/{w.size} elements differ", 0))
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        fw, fg = np.isfinite(w64), np.isfinite(g64)
        if (fw & ~fg).any():
            bad.append((i, "nan" if np.isnan(g64[fw & ~fg]).any() else "nonfinite",
                        f"{int((fw & ~fg).sum())}/{w.size} elements non-finite where the reference is finite", 0))
            continue
        if (~fw).any():
            same = np.array_equal(w64[~fw], g64[~fw], equal_nan=True)
            if not same:
                bad.append((i, "nonfinite", f"{int((~fw).sum())} non-finite reference elements, "
                            f"{int((g64[~fw] != w64[~fw]).sum())} differ", 0))
                continue
        err = rel_l2(g64[fw], w64[fw]) if fw.any() else 0.0
        tol = STRICT_TOL[d]
        if not err < tol:
            bad.append((i, "float", err, tol))
    return bad


# --------------------------------------------------------------------------- executing


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("graph took too long")


#: the multiprocessors --lower-only and --emulate lower for (--sm-count): an
#: H100/H200's 132 by default; a few (8) bring the forms whose blocks wait
#: for each other (grid, stream and columns forms over blocks) within what
#: the emulator runs at once
SM_COUNT = 132


def cuda_lowered(module, params, gemm):
    """(the module lowered as rlxc.compile lowers it for sm_90 with SM_COUNT
    multiprocessors, its folded params): the weight passes, fold_params,
    the cuda pipeline."""
    from rlxc.driver import WEIGHT_PASSES, cuda_pipeline
    from rlxc.passes.fold_params import fold_params

    m, p = fold_params(rlxc.run_pipeline(module.clone(), WEIGHT_PASSES), params)
    return rlxc.run_pipeline(m, cuda_pipeline("sm_90", SM_COUNT, gemm)), p


def lower_and_nvrtc(module, params, gemm):
    from rlxc.codegen import HEADERS
    from rlxc.runtime.nvrtc import compile_module_kernels

    lowered, _ = cuda_lowered(module, params, gemm)
    cubins = compile_module_kernels(lowered, "sm_90", headers=HEADERS)
    return len(cubins)


class NotEmulated(Exception):
    pass


def emulated(module, inputs, params):
    """The CUDA path's passes (matmuls as generated kernels), the kernels run
    on the CPU by rlxc.runtime.emulator; graphs of more CUDA threads than
    it runs in seconds are not run."""
    from rlxc.codegen import HEADERS
    from rlxc.runtime import emulator

    lowered, p = cuda_lowered(module, params, "kernel")
    if (threads := emulator.launched_threads(lowered)) > emulator.QUICK_MAX_THREADS:
        raise NotEmulated(f"{threads} CUDA threads in all: more than the CPU runs in a few seconds")
    try:
        return emulator.run(lowered, inputs, p, headers=HEADERS)
    except emulator.EmulationUnsupported as e:
        raise NotEmulated(str(e)) from None
    except emulator.EmulationTimeout as e:  # slow or hung: counted as --graph-timeout counts it
        raise Timeout(str(e)) from None


def planned_numpy(module, inputs, params):
    """The CUDA path's graph-level passes, then interpreted: rlxc.compile's
    weight passes and fold_params, then rlx-plan{target=cuda}."""
    from rlxc.driver import WEIGHT_PASSES
    from rlxc.passes.fold_params import fold_params

    m, p = fold_params(rlxc.run_pipeline(module.clone(), WEIGHT_PASSES), params)
    planned = rlxc.run_pipeline(m, "rlx-plan{target=cuda}")
    return rlxc.interpret(planned, inputs, p)


def execute(mode, module, inputs, params, gemm, also_graph):
    """(outputs or None, note)."""
    if mode == "lower":
        n = lower_and_nvrtc(module, params, gemm)
        return None, f"{n} kernels"
    if mode == "emulate":
        return emulated(module, inputs, params), ""
    if mode == "numpy":
        exe = rlxc.compile(module, target="numpy", params=params)
        got0 = exe.run(inputs)
        exe.close()
        return planned_numpy(module, inputs, params), f"numpy backend ok ({len(got0)} outputs)"
    exe = rlxc.compile(module, target="cuda", params=params, mode="stream")
    try:
        got = exe.run(inputs, poison=True)
        got = [np.array(g) for g in got]
    finally:
        exe.close()
    if also_graph and any(op.name == "rlx.scatter_nd" and op.reduction.data in ("add", "mul")
                          and "f" in str(op.results[0].type.get_element_type()) for op in module.walk()):
        also_graph = False  # float add/mul over duplicate indices round in the atomics' order: not bit-stable
    if also_graph:
        gx = rlxc.compile(module, target="cuda", params=params, mode="graph")
        try:
            for _ in range(2):
                for a, b in zip(got, gx.run(inputs, poison=True)):
                    if not np.array_equal(a, np.asarray(b), equal_nan=True):
                        raise AssertionError("graph mode differs from stream mode")
        finally:
            gx.close()
    return got, ""


def conditioning(module, inputs, params, gen, ref, i, rng):
    """How far an f64 evaluation says output i may honestly move: the
    interpreter's own error against float64, and how far one ulp of every
    input moves the float64 result (most of two tries)."""
    exact = rlxc.interpret(module, inputs, params, float64=True)[i]
    e_ref = rel_l2(ref[i], exact)
    specs = {**gen.specs, **gen.pspecs}
    moved = 0.0
    for _ in range(2):
        ni, npar = nudge(inputs, specs, rng), nudge(params, specs, rng)
        m = rlxc.interpret(module, ni, npar, float64=True)[i]
        moved = max(moved, rel_l2(m, exact))
    return e_ref, moved, exact


def judge(bad, module, inputs, params, gen, ref, got, out_dtypes, rng):
    """Splits compare()'s findings into (failures, notes)."""
    fails, notes = [], []
    for (i, kind, err, tol) in bad:
        d = out_dtypes[i] if i >= 0 else "?"
        if kind != "float":
            if kind == "nonfinite" and d in FLOATS:  # overflow at the dtype's edge?
                exact = rlxc.interpret(module, inputs, params, float64=True)[i]
                big = np.finfo(np.float16).max if d == "f16" else np.finfo(np.float32).max
                if (~np.isfinite(exact)).any() or np.abs(exact).max() > 0.25 * big:
                    notes.append(("overflow", i, f"output #{i} ({d}): {err} (float64 reaches {np.abs(exact).max():.3g})"))
                    continue
            fails.append((i, f"output #{i} ({d}) {kind}: {err}"))
            continue
        loose = tol * LOOSE_X[d]
        if err < loose:
            notes.append(("loose", i, f"output #{i} ({d}): rel err {err:.3e} within {LOOSE_X[d]:.0f}x tol"))
            continue
        try:
            e_ref, moved, exact = conditioning(module, inputs, params, gen, ref, i, rng)
        except Exception as e:  # noqa: BLE001
            fails.append((i, f"output #{i} ({d}): rel err {err:.3e} > {loose:.1e} (conditioning failed: {e})"))
            continue
        e_got = rel_l2(np.asarray(got[i], np.float64), exact)
        cond = max(e_ref, moved)
        msg = (f"output #{i} ({d}): rel err {err:.3e} > {loose:.1e}; vs float64: gpu {e_got:.3e}, "
               f"reference {e_ref:.3e}; 1-ulp input move {moved:.3e}")
        if err <= loose + 10 * cond or e_got <= max(loose, 3 * e_ref):
            notes.append(("ill-conditioned", i, msg))
        else:
            fails.append((i, msg))
    return fails, notes


# --------------------------------------------------------------------------- the driver


def shrink(gen, mode, inputs, params, gemm, also_graph, failing_out, budget=12):
    """A smaller slice of the graph that still fails on the same values: one
    output where one suffices, else outputs dropped one at a time;
    (module, steps, keep) or None."""
    tries = [0]

    def attempt(ks):
        if tries[0] >= budget:
            return None
        tries[0] += 1
        keep = [gen.out_ids[k] for k in ks]
        try:
            m, used = replay(gen.steps, keep)
        except Exception:  # noqa: BLE001
            return None
        names_in = {st.args[0] for st in used if st.method == "input"}
        names_p = {st.args[0] for st in used if st.method == "param"}
        ii = {a: v for a, v in inputs.items() if a in names_in}
        pp = {a: v for a, v in params.items() if a in names_p}
        d = [tol_dtypes(gen)[k] for k in ks]
        try:
            ref = rlxc.interpret(m, ii, pp)
        except Exception:  # noqa: BLE001
            return None
        try:
            got, _ = execute(mode, m, ii, pp, gemm, also_graph)
        except Timeout:
            raise
        except Exception:  # noqa: BLE001
            return m, used, keep
        if got is not None:
            bad = compare(ref, got, d)
            if bad and judge(bad, m, ii, pp, gen, ref, got, d, np.random.default_rng(0))[0]:
                return m, used, keep
        return None

    n = len(gen.out_ids)
    sizes = {}
    for k in range(n):
        try:
            sizes[k] = len(replay(gen.steps, [gen.out_ids[k]])[1])
        except Exception:  # noqa: BLE001
            sizes[k] = 10**9
    for k in sorted(range(n), key=lambda k: (k != failing_out, sizes[k]))[:4]:
        if n == 1:
            break
        r = attempt([k])
        if r is not None:
            return r
    keep, best = list(range(n)), None
    for k in sorted(range(n), key=lambda k: -sizes[k]):
        if len(keep) > 1:
            r = attempt([j for j in keep if j != k])
            if r is not None:
                keep.remove(k)
                best = r
    if best is None and n == 1:
        best = attempt([0])
    return best


def main(argv=None):
    global PARAM_RATE, SM_COUNT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--graphs", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="first graph index")
    ap.add_argument("--only", default=None, help="comma-separated graph indices to run (replay)")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--time-budget", type=float, default=None, help="seconds; stop starting graphs after")
    ap.add_argument("--graph-timeout", type=int, default=300, help="seconds per graph (SIGALRM)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--numpy-only", action="store_true", help="no GPU: numpy backend + the planned module interpreted")
    g.add_argument("--lower-only", action="store_true", help="no GPU: lower with rlx-cuda and NVRTC-compile every kernel")
    g.add_argument("--emulate", action="store_true", help="no GPU: lower with rlx-cuda, run every kernel on the CPU")
    ap.add_argument("--sm-count", type=int, default=SM_COUNT,
                    help="--lower-only/--emulate: the multiprocessors to lower for (8: the grid forms emulated)")
    ap.add_argument("--also-graph", action="store_true", help="cuda: also run mode=graph, equal to stream bit for bit")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--param-rate", type=float, default=0.25,
                    help="share of data tensors drawn as params (weights are params anyway); "
                         "param-only expressions are what rlxc.compile folds (fold_params)")
    ap.add_argument("--print-code", action="store_true", help="print every graph's builder code")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)

    PARAM_RATE = a.param_rate
    SM_COUNT = a.sm_count
    mode = "lower" if a.lower_only else ("numpy" if a.numpy_only else ("emulate" if a.emulate else "cuda"))
    if mode == "cuda" and not rlxc.cuda.is_available():
        print("no GPU/driver: rlxc.cuda.is_available() is False; use --numpy-only or --lower-only", file=sys.stderr)
        return 2
    dtypes = [d.strip() for d in a.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if d not in FLOATS:
            ap.error(f"unknown dtype {d}")
    out_dir = os.environ.get("OUT")
    indices = ([int(x) for x in a.only.split(",")] if a.only else list(range(a.start, a.start + a.graphs)))
    signal.signal(signal.SIGALRM, _alarm)

    t0 = time.time()
    stats = Counter()
    per_op = defaultdict(Counter)        # builder method -> tried/passed/failed
    per_kind = defaultdict(Counter)      # generator step kind -> tried/passed/failed
    op_skips = Counter()
    crashes = Counter()
    notes_by = Counter()
    failures = []
    for i in indices:
        if a.time_budget is not None and time.time() - t0 > a.time_budget:
            print(f"time budget of {a.time_budget:.0f}s spent after {stats['tried']} graphs")
            break
        dtype = dtypes[i % len(dtypes)]
        gemm = "cublaslt" if i % 2 == 0 else "kernel"
        gen = Gen(np.random.default_rng([a.seed, i]), dtype)
        stats["tried"] += 1
        signal.alarm(a.graph_timeout)
        tg = time.time()
        try:
            try:
                gen.generate()
            except Skip:
                stats["empty"] += 1
                continue
            except GraphError as e:
                stats["build_error"] += 1
                print(f"[{a.seed}:{i}] build() GraphError: {e}")
                continue
            finally:
                op_skips.update(gen.skips)
                for c in gen.crashes:
                    crashes[c] += 1
            stats["skipped_steps"] += sum(gen.skips.values())
            methods = set(gen.methods) - {"input", "param", "constant"}
            kinds = set(gen.kinds)
            for m in methods:
                per_op[m]["tried"] += 1
            for k in kinds:
                per_kind[k]["tried"] += 1
            text = str(gen.module)
            out_dtypes = tol_dtypes(gen)
            vrng = np.random.default_rng([a.seed, i, 7])
            inputs, params = draw_values(gen, vrng)
            if a.print_code:
                print(f"--- [{a.seed}:{i}] {dtype}\n" + code_of(gen.steps, gen.out_ids, {**gen.specs, **gen.pspecs}))
            try:
                ref = rlxc.interpret(gen.module, inputs, params)
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001
                stats["interp_error"] += 1
                print(f"[{a.seed}:{i}] INTERP-ERROR ({dtype}) {type(e).__name__}: {str(e)[:300]}")
                if a.verbose:
                    print("\n".join("    " + x for x in gen.log))
                continue
            err_text, fails, notes = None, [], []
            try:
                got, note = execute(mode, gen.module, inputs, params, gemm, a.also_graph)
            except Timeout:
                raise
            except NotEmulated as e:
                stats["not_emulated"] += 1
                if a.verbose:
                    print(f"[{a.seed}:{i}] not emulated: {e}")
                continue
            except Exception as e:  # noqa: BLE001
                tb = traceback.format_exc(limit=-4)
                err_text = f"{type(e).__name__}: {str(e)[:1500]}\n{tb[-2500:]}"
                got = None
            if err_text is None and got is not None:
                bad = compare(ref, got, out_dtypes)
                if bad:
                    fails, notes = judge(bad, gen.module, inputs, params, gen, ref, got, out_dtypes,
                                         np.random.default_rng([a.seed, i, 9]))
            for kind, _, msg in notes:
                notes_by[kind] += 1
                if True:
                    print(f"[{a.seed}:{i}] note ({kind}, {dtype}): {msg}  ops: {', '.join(sorted(kinds))}")
            if err_text is None and not fails:
                stats["passed"] += 1
                for m in methods:
                    per_op[m]["passed"] += 1
                for k in kinds:
                    per_kind[k]["passed"] += 1
                if a.verbose:
                    print(f"[{a.seed}:{i}] ok {dtype} {time.time() - tg:.1f}s {sorted(kinds)}")
                continue
            # ------------------------------------------------------------ a failure
            stats["failed"] += 1
            for m in methods:
                per_op[m]["failed"] += 1
            for k in kinds:
                per_kind[k]["failed"] += 1
            what = err_text.splitlines()[0] if err_text else "; ".join(f for _, f in fails)
            failures.append((i, dtype, what))
            print("=" * 100)
            print(f"FAILURE seed={a.seed} graph={i} dtype={dtype} mode={mode}"
                  + (f" gemm={gemm}" if mode == "lower" else ""))
            print(f"  replay: python3 tests/outside_fuzz.py --seed {a.seed} --only {i} --dtypes {a.dtypes}"
                  + {"lower": " --lower-only", "numpy": " --numpy-only", "emulate": " --emulate", "cuda": ""}[mode]
                  + (f" --param-rate {a.param_rate}" if a.param_rate != 0.25 else ""))
            print(f"  steps: {gen.kinds}")
            print("  ops:")
            print("\n".join("    " + x for x in gen.log))
            print(f"  outputs: {[f'{list(t.shape)}{t.dtype}' for t in gen.outputs]}")
            if err_text:
                print("  error: " + err_text.replace("\n", "\n    "))
            for _, f in fails:
                print("  mismatch: " + f)
            small = None
            if not a.no_shrink:
                signal.alarm(a.graph_timeout)
                try:
                    small = shrink(gen, mode, inputs, params, gemm, a.also_graph, fails[0][0] if fails else 0)
                except Timeout:
                    small = None
                except Exception as e:  # noqa: BLE001
                    print(f"  (shrink failed: {type(e).__name__}: {e})")
            specs = {**gen.specs, **gen.pspecs}
            if small is not None:
                m, used, keep = small
                code = code_of(used, keep, specs)
                print("  smallest failing slice (builder code; inputs as noted):")
            else:
                code = code_of(gen.steps, gen.out_ids, specs)
                print("  graph (builder code):")
            print("    " + code.replace("\n", "\n    "))
            if out_dir:
                od = Path(out_dir)
                od.mkdir(parents=True, exist_ok=True)
                (od / f"fail-{a.seed}-{i}.mlir").write_text(text)
                (od / f"fail-{a.seed}-{i}.py").write_text(
                    f"# seed={a.seed} graph={i} dtype={dtype} mode={mode}\n# {what}\n" + code + "\n")
                if small is not None:
                    (od / f"fail-{a.seed}-{i}-min.mlir").write_text(str(small[0]))
            print("=" * 100)
            if mode == "cuda" and err_text and any(s in err_text for s in STICKY):
                print(f"a sticky CUDA error ({err_text.splitlines()[0][:200]}): the context is unusable, stopping")
                break
        except Timeout:
            stats["timeout"] += 1
            print(f"[{a.seed}:{i}] TIMEOUT after {a.graph_timeout}s ({dtype}); steps {gen.kinds}")
        finally:
            signal.alarm(0)

    # ------------------------------------------------------------------ summary
    el = time.time() - t0
    print()
    print(f"summary: seed={a.seed} mode={mode} dtypes={','.join(dtypes)} {el:.0f}s")
    print(f"  graphs tried {stats['tried']}, passed {stats['passed']}, FAILED {stats['failed']}, "
          f"empty {stats['empty']}, interp-error {stats['interp_error']}, timeout {stats['timeout']}, "
          f"build-error {stats['build_error']}"
          + (f", not emulated {stats['not_emulated']}" if mode == "emulate" else ""))
    print(f"  steps skipped on GraphError: {stats['skipped_steps']} "
          f"({', '.join(f'{k} {v}' for k, v in op_skips.most_common(12))})")
    if notes_by:
        print(f"  notes: {dict(notes_by)}")
    if crashes:
        print("  builder raised something other than GraphError:")
        for c, n in crashes.most_common(10):
            print(f"    {n}x {c}")
    print("  per op (graphs containing it): tried / passed / failed")
    for m in sorted(per_op, key=lambda m: (-per_op[m]["failed"], m)):
        c = per_op[m]
        print(f"    {m:28s} {c['tried']:5d} {c['passed']:5d} {c['failed']:5d}")
    print("  per generator step kind: tried / passed / failed")
    for k in sorted(per_kind, key=lambda k: (-per_kind[k]["failed"], k)):
        c = per_kind[k]
        print(f"    {k:28s} {c['tried']:5d} {c['passed']:5d} {c['failed']:5d}")
    if failures:
        print("  failures:")
        for i, d, w in failures:
            print(f"    [{a.seed}:{i}] {d}: {w[:200]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

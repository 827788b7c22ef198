"""An outside checker for rlxc's ONNX importer.

Draws random ONNX models with onnx.helper (its own generator), checks them
with onnx.checker and shape inference, runs them on onnxruntime (CPU, no graph
optimizations) as the reference, imports them with rlxc, runs them on the
numpy backend and compares; then lowers each imported module for CUDA
(rlx-cuda{arch=sm_90 sm_count=132}) without a GPU.

    python tests/outside_onnx_fuzz.py --seed S --models N [--time-budget SEC] [--only I] [-v]

Model i of seed S is drawn from np.random.default_rng([S, i]), so `--only i`
replays it. Failing models are saved to $OUT/onnx-fail-<seed>-<i>.onnx when
OUT is set (with the inputs as $OUT/onnx-fail-<seed>-<i>.npz).
"""
from __future__ import annotations

import argparse
import collections
import math
import os
import re
import signal
import sys
import time
import traceback
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

warnings.filterwarnings("ignore")

F32, F16 = np.dtype("float32"), np.dtype("float16")
I64, I32, BOOL = np.dtype("int64"), np.dtype("int32"), np.dtype("bool")
NP2ONNX = {F32: TensorProto.FLOAT, F16: TensorProto.FLOAT16, I64: TensorProto.INT64,
           I32: TensorProto.INT32, BOOL: TensorProto.BOOL}
ONNX2NP = {v: k for k, v in NP2ONNX.items()}
IR_FOR_OPSET = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}
INT64_MAX, INT64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


class Skip(Exception):
    """The generator could not apply this op here (rolled back)."""


class Val:
    __slots__ = ("name", "shape", "dt", "exact", "lowp")

    def __init__(self, name, shape, dt, exact=True, lowp=False):
        self.name, self.shape, self.dt, self.exact, self.lowp = name, tuple(int(d) for d in shape), np.dtype(dt), exact, lowp

    @property
    def r(self):
        return len(self.shape)

    def __repr__(self):
        return f"{self.name}:{self.dt}{list(self.shape)}"


class G:
    """A graph under construction: static shapes throughout (symbolic dims are
    put on the graph inputs only when the model is built)."""

    def __init__(self, rng, opset):
        self.rng, self.opset = rng, opset
        self.fdt = F16 if rng.random() < 0.25 else F32
        self.nodes, self.inits, self.inputs = [], [], []  # inputs: Vals
        self.feeds, self.vals, self.n = {}, [], 0
        self.input_vals = set()

    # -- randomness helpers
    def ri(self, a, b):
        return int(self.rng.integers(a, b + 1))

    def ch(self, seq, p=None):
        if p is not None:
            p = np.asarray(p, float)
            p = p / p.sum()
        return seq[int(self.rng.choice(len(seq), p=p))]

    def coin(self, p=0.5):
        return bool(self.rng.random() < p)

    def shape(self, r, lo=1, hi=6):
        s = [self.ri(1, 2) if self.coin(0.15) else self.ri(lo, hi) for _ in range(r)]
        if r and self.coin(0.08):  # now and then a long axis (kernels' vector and tile paths)
            k = self.ri(0, r - 1)
            s[k] = max(s[k], self.ch([16, 17, 32, 33, 64, 127, 256]))
            while int(np.prod(s)) > 8192:
                j = int(np.argmax(s))
                s[j] = max(1, s[j] // 2)
        return tuple(s)

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def data(self, shape, dt, lo=-5, hi=5):
        dt = np.dtype(dt)
        if dt.kind == "f":
            return np.asarray(self.rng.standard_normal(shape)).astype(dt)
        if dt == BOOL:
            return np.asarray(self.rng.random(shape) < 0.5)
        return np.asarray(self.rng.integers(lo, hi + 1, size=shape)).astype(dt)

    # -- values
    def input(self, shape, dt=None, data=None, prefix="x"):
        dt = np.dtype(dt or self.fdt)
        nm = self.name(prefix)
        arr = self.data(shape, dt) if data is None else np.asarray(data).astype(dt)
        self.feeds[nm] = arr
        v = Val(nm, arr.shape, dt, True, dt == F16)
        self.inputs.append(v)
        self.input_vals.add(nm)
        self.vals.append(v)
        return v

    def const(self, arr, dt=None, node=None):
        """An import-time constant (initializer or Constant node) -> name."""
        arr = np.asarray(arr) if dt is None else np.asarray(arr).astype(dt)
        if node is None:
            node = self.coin(0.3)
        nm = self.name("k")
        if node:
            self.nodes.append(helper.make_node("Constant", [], [nm], value=numpy_helper.from_array(arr, nm + "_v")))
        else:
            self.inits.append(numpy_helper.from_array(arr, nm))
        return nm

    def ints(self, vals, dt=I64):
        return self.const(np.asarray(vals, dtype=dt))

    def weight(self, shape, dt=None, data=None, p_input=0.3, add=True):
        dt = np.dtype(dt or self.fdt)
        arr = self.data(shape, dt) if data is None else np.asarray(data).astype(dt)
        if self.coin(p_input):
            nm = self.name("w")
            self.feeds[nm] = arr
            v = Val(nm, arr.shape, dt, True, dt == F16)
            self.inputs.append(v)
            self.input_vals.add(nm)
        else:
            v = Val(self.const(arr), arr.shape, dt, True, dt == F16)
        if add:
            self.vals.append(v)
        return v

    def pick(self, pred=lambda v: True, fresh=None, p_fresh=0.12):
        cands = [v for v in self.vals if pred(v)]
        if cands and not self.coin(p_fresh):
            k = min(int(self.rng.geometric(0.45)) - 1, len(cands) - 1)  # favour recent values
            return cands[len(cands) - 1 - k]
        if fresh is None:
            raise Skip("no candidate")
        return fresh()

    def pickf(self, rmin=0, rmax=5, exact=False, dt=None, maxsize=4096):
        def ok(v):
            return (v.dt.kind == "f" and rmin <= v.r <= rmax and (v.exact or not exact)
                    and (dt is None or v.dt == dt) and int(np.prod(v.shape)) <= maxsize)
        r0 = 0 if rmin == 0 and self.coin(0.08) else max(rmin, 1)
        return self.pick(ok, lambda: self.input(self.shape(self.ri(r0, min(rmax, 4))), dt))

    def pickn(self, rmin=0, rmax=5, exact=False, p_int=0.2, maxsize=4096):
        """A float or (sometimes) an integer value."""
        if self.coin(p_int):
            dt = self.ch([I64, I64, I32])
            return self.pick(lambda v: v.dt == dt and rmin <= v.r <= rmax and int(np.prod(v.shape)) <= maxsize,
                             lambda: self.input(self.shape(self.ri(max(rmin, 1), min(rmax, 4))), dt))
        return self.pickf(rmin, rmax, exact, maxsize=maxsize)

    def pickany(self, rmin=0, rmax=5, maxsize=4096):
        return self.pick(lambda v: rmin <= v.r <= rmax and int(np.prod(v.shape)) <= maxsize,
                         lambda: self.input(self.shape(self.ri(max(rmin, 1), min(rmax, 4)))))

    # -- nodes
    def emit(self, op, ins, nout=1, exact=False, lowp=None, shapes=None, add=True, **attrs):
        ins = [i.name if isinstance(i, Val) else i for i in ins]
        outs = [self.name(re.sub("[^a-z]", "", op.lower())[:8] + "_") for _ in range(nout)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op, ins, outs, **attrs))
        if lowp is None:
            lowp = any(v.lowp for v in self.vals if v.name in ins)
        info = self.infer()
        res = []
        for k, o in enumerate(outs):
            if o not in info:
                raise Skip(f"{op}: no inferred type for output {k}")
            et, shp = info[o]
            if shapes is not None and shapes[k] is not None:
                if shp is not None and None not in shp and tuple(shp) != tuple(shapes[k]):
                    raise Skip(f"{op}: inferred {shp} != expected {shapes[k]}")
                shp = shapes[k]
            if shp is None or None in shp:
                raise Skip(f"{op}: output {k} shape not inferred ({shp})")
            if any(d <= 0 for d in shp):
                raise Skip(f"{op}: empty output {shp}")
            if et not in ONNX2NP:
                raise Skip(f"{op}: element type {et}")
            dt = ONNX2NP[et]
            v = Val(o, shp, dt, exact or dt.kind in "biu", lowp or dt == F16)
            if add:
                self.vals.append(v)
            res.append(v)
        return res

    def emit1(self, op, ins, **kw):
        return self.emit(op, ins, 1, **kw)[0]

    def graph(self, outputs, sym=None, out_shapes=True):
        sym = sym or {}
        gin = []
        for v in self.inputs:
            if v.name in sym:
                dims = [sym[v.name].get(k, d) for k, d in enumerate(v.shape)]
                gin.append(helper.make_tensor_value_info(v.name, NP2ONNX[v.dt], dims))
            else:
                gin.append(helper.make_tensor_value_info(v.name, NP2ONNX[v.dt], list(v.shape)))
        gout = [helper.make_tensor_value_info(v.name, NP2ONNX[v.dt], list(v.shape) if out_shapes else [None] * v.r)
                for v in outputs]
        return helper.make_graph(self.nodes, "fuzz", gin, gout, initializer=self.inits)

    def model(self, outputs, sym=None, out_shapes=True):
        m = helper.make_model(self.graph(outputs, sym, out_shapes),
                              opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="rlxc-dev-onnx-fuzz")
        m.ir_version = IR_FOR_OPSET[self.opset]
        return m

    def infer(self):
        m = self.model([])
        try:
            inf = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
        except Exception as e:
            raise Skip(f"shape inference: {str(e).splitlines()[0][:200]}") from None
        info = {}
        for vi in inf.graph.value_info:
            t = vi.type.tensor_type
            shp = None
            if t.HasField("shape"):
                shp = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
            info[vi.name] = (t.elem_type, shp)
        return info


# ---------------------------------------------------------------------------
# op generators: each takes a G, adds nodes (or raises Skip)


def bshape(g, s, grow=True):
    """A shape that broadcasts against s."""
    k = g.ri(0, len(s))
    suffix = [1 if g.coin(0.3) else d for d in s[len(s) - k:]]
    prefix = [g.ri(1, 3)] if grow and g.coin(0.12) and len(s) < 5 else []
    return tuple(prefix + suffix)


def other_operand(g, x, shape=None, p_val=0.4, data=None):
    """A value of x's dtype broadcasting with x: existing or a weight."""
    if data is None and g.coin(p_val):
        cands = [v for v in g.vals if v.dt == x.dt and v is not x and bcast_ok(v.shape, x.shape)
                 and int(np.prod(np.broadcast_shapes(v.shape, x.shape))) <= 8192]
        if cands:
            return g.ch(cands)
    if shape is None:
        shape = bshape(g, x.shape)
    return g.weight(shape, x.dt, data=data)


def bcast_ok(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def op_binary(g):
    op = g.ch(["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Sum", "Mean"],
              [4, 3, 4, 3, 2, 1, 1, 0.6, 0.5, 0.5])
    x = g.pickn(p_int=0.25 if op not in ("Pow", "Mean") else 0.1)
    if op in ("Mean", "Sum") and x.dt.kind != "f":
        x = g.pickf()
    if op in ("Div", "Mod"):
        shape = bshape(g, x.shape)
        if x.dt.kind == "f":
            d = (g.rng.uniform(0.5, 2.0, shape) * g.rng.choice([-1, 1], shape))
            if op == "Mod":
                d = np.abs(d) if g.coin() else d
        else:
            d = g.rng.choice([-4, -3, -2, -1, 1, 2, 3, 4, 7], shape)
        y = g.weight(shape, x.dt, data=d)
        attrs = {}
        if op == "Mod":
            if x.dt.kind == "f":
                attrs["fmod"] = 1
            elif g.coin(0.5):
                attrs["fmod"] = 1
        return g.emit1(op, [x, y], exact=x.dt.kind != "f", **attrs)
    if op == "Pow":
        if x.dt.kind == "f":
            e = g.ch([2.0, 3.0, 0.5, -1.0, 1.5, -0.5, 2.0])
            if e != int(e) or e < 0:
                a = g.emit1("Abs", [x])
                x = g.emit1("Add", [a, g.const(np.asarray(0.5, x.dt))])
            if g.coin(0.7):
                y = g.const(np.asarray(e, x.dt if g.coin(0.7) else F32))
            else:
                y = g.weight(bshape(g, x.shape), x.dt, data=g.rng.uniform(0.5, 2.0, bshape(g, x.shape, False)))
        else:
            y = g.const(np.asarray(g.ri(0, 3), g.ch([x.dt, I64, I32])))
        return g.emit1("Pow", [x, y])
    if op in ("Sum", "Mean", "Max", "Min") and g.coin(0.4):
        ys = [other_operand(g, x) for _ in range(g.ri(0, 2))]  # variadic, one operand too
        return g.emit1(op, [x, *ys], exact=(op in ("Max", "Min") and x.exact and all(y.exact for y in ys)))
    y = other_operand(g, x)
    a, b = (x, y) if g.coin() else (y, x)
    return g.emit1(op, [a, b], exact=(op in ("Max", "Min") and x.exact and y.exact))


UNARY = ["Relu", "Tanh", "Sigmoid", "Erf", "Abs", "Neg", "Exp", "Sqrt", "Log", "Gelu", "LeakyRelu",
         "Elu", "Softplus", "HardSigmoid", "Floor", "Ceil", "Round", "Sign", "Reciprocal", "Sin",
         "Cos", "HardSwish", "Selu", "Softsign", "Mish", "IsNaN", "Celu", "PRelu"]


def op_unary(g):
    op = g.ch(UNARY, [5, 3, 3, 3, 1, 1, 1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.3, 0.3, 0.7])
    if op == "Gelu" and g.opset < 20:
        op = "Erf"
    if op == "Mish" and g.opset < 18:
        op = "Tanh"
    if op == "Celu":
        x = g.pickf(dt=F32)
        return g.emit1(op, [x], alpha=g.ch([None, 0.5, 2.0]))
    exact_only = op in ("Floor", "Ceil", "Round", "Sign")
    x = g.pickf(exact=exact_only)
    if op in ("Sqrt", "Log", "Reciprocal"):
        x = g.emit1("Add", [g.emit1("Abs", [x]), g.const(np.asarray(0.25, x.dt))])
    if op == "Exp":
        x = g.emit1("Tanh", [x])
    attrs = {}
    ins = [x]
    if op == "Gelu":
        attrs["approximate"] = g.ch([None, "none", "tanh"])
    elif op in ("LeakyRelu", "Elu", "Celu"):
        attrs["alpha"] = g.ch([None, 0.01, 0.2, 1.5])
    elif op == "HardSigmoid":
        attrs["alpha"], attrs["beta"] = g.ch([None, 0.1666667]), g.ch([None, 0.5, 0.3])
    elif op == "PRelu":
        ins.append(g.weight(bshape(g, x.shape, False), x.dt, data=g.rng.uniform(0, 0.5, bshape(g, x.shape, False))))
    return g.emit1(op, ins, exact=x.exact and op in ("Relu", "Abs", "Neg", "Floor", "Ceil", "Round", "Sign", "IsNaN"))


def op_matmul(g):
    x = g.pickf(1, 4, maxsize=2048)
    K = x.shape[-1]
    kind = g.ch(["w2", "w1", "batched", "left", "vals"], [5, 1, 3, 1, 1])
    N = g.ri(1, 8)
    if kind == "w2":
        y = g.weight((K, N), x.dt)
        return g.emit1("MatMul", [x, y])
    if kind == "w1":
        return g.emit1("MatMul", [x, g.weight((K,), x.dt)])
    if kind == "left":
        if x.r < 2:
            raise Skip("left matmul on 1-D")
        M = x.shape[-2]
        y = g.weight(bshape(g, x.shape[:-2], grow=False) + (g.ri(1, 5), M), x.dt)
        return g.emit1("MatMul", [y, x])
    if kind == "vals":
        cands = [v for v in g.vals if v.dt == x.dt and v.r >= 2 and v.shape[-2] == K
                 and bcast_ok(v.shape[:-2], x.shape[:-2])]
        if x.r >= 1 and cands:
            return g.emit1("MatMul", [x, g.ch(cands)])
    batch = bshape(g, x.shape[:-2]) if x.r >= 2 else tuple(g.shape(g.ri(0, 2)))
    y = g.weight(batch + (K, N), x.dt, p_input=0.5)
    return g.emit1("MatMul", [x, y])


def op_gemm(g):
    a = g.pickf(2, 2)
    transA, transB = g.ch([None, 0, 1]), g.ch([None, 0, 1])
    M, K = (a.shape[1], a.shape[0]) if transA else a.shape
    N = g.ri(1, 9)
    b = g.weight((N, K) if transB else (K, N), a.dt)
    ins = [a, b]
    if g.coin(0.75):
        cs = g.ch([(N,), (1, N), (M, 1), (M, N), (), (1,), (1, 1)], [4, 1, 1, 2, 1, 0.5, 0.5])
        ins.append(g.weight(cs, a.dt))
    return g.emit1("Gemm", ins, transA=transA, transB=transB,
                   alpha=g.ch([None, 1.0, 0.5, 2.0, -1.0, 0.125]), beta=g.ch([None, 1.0, 0.5, 0.0, -2.0]))


def op_softmax(g):
    x = g.pickf(1, 5)
    op = g.ch(["Softmax", "LogSoftmax", "Hardmax"], [5, 3, 0.5])
    if op == "Hardmax" and not x.exact:
        x = g.pickf(1, 5, exact=True)
    axis = g.ch([None, g.ri(-x.r, x.r - 1)], [1, 3])
    return g.emit1(op, [x], axis=axis, exact=op == "Hardmax")


def op_layernorm(g):
    if g.opset < 17:
        raise Skip("LayerNormalization needs opset 17")
    x = g.pickf(1, 4)
    axis = g.ch([None, -1, g.ri(-x.r, x.r - 1)], [1, 2, 3])
    a = -1 if axis is None else axis
    ns = x.shape[a % x.r:]
    ins = [x, g.weight(ns, x.dt, p_input=0.15)]
    if g.coin(0.7):
        ins.append(g.weight(ns, x.dt, p_input=0.15))
    nout = 1 if g.coin(0.85) else 3
    outs = g.emit("LayerNormalization", ins, nout, axis=axis, epsilon=g.ch([None, 1e-5, 1e-12, 1e-3]),
                  stash_type=g.ch([None, None, 1]))
    return outs[0]


def factor_shape(g, total, r):
    f = []
    n, p = total, 2
    while n > 1:
        while n % p == 0:
            f.append(p)
            n //= p
        p += 1
    dims = [1] * r
    for q in f:
        dims[g.ri(0, r - 1)] *= q
    return dims


def op_reshape(g):
    x = g.pickany(0, 5)
    total = int(np.prod(x.shape))
    r = g.ri(1, 5)
    tgt = factor_shape(g, total, r)
    if g.coin(0.3) and x.r >= 1:  # keep a prefix (exporters do)
        k = g.ri(1, min(x.r, r))
        if int(np.prod(x.shape[:k])) and total % int(np.prod(x.shape[:k])) == 0:
            rest = total // int(np.prod(x.shape[:k]))
            tgt = list(x.shape[:k]) + factor_shape(g, rest, max(1, r - k))
    allowzero = g.ch([None, 0, 1], [3, 1, 1]) if g.opset >= 14 else None
    enc = list(tgt)
    if not allowzero:
        for i in range(min(len(enc), x.r)):
            if enc[i] == x.shape[i] and g.coin(0.4):
                enc[i] = 0
    if g.coin(0.6):
        i = g.ri(0, len(enc) - 1)
        if enc[i] != 0 or g.coin(0.3):
            enc[i] = -1
            if allowzero == 0 or not allowzero:
                pass
    if enc.count(-1) == 1 and 0 in enc and allowzero:
        raise Skip("allowzero with 0")
    return g.emit1("Reshape", [x, g.ints(enc)], exact=x.exact, shapes=[tuple(tgt)], allowzero=allowzero)


def op_transpose(g):
    x = g.pickany(1, 5)
    perm = None if g.coin(0.15) else [int(p) for p in g.rng.permutation(x.r)]
    return g.emit1("Transpose", [x], exact=x.exact, perm=perm)


def op_squeeze(g):
    if g.coin():
        x = g.pick(lambda v: 1 in v.shape)
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        if g.coin(0.2):
            return g.emit1("Squeeze", [x], exact=x.exact)
        ax = [int(a) for a in g.rng.choice(ones, g.ri(1, len(ones)), replace=False)]
        ax = [a - x.r if g.coin() else a for a in ax]
        return g.emit1("Squeeze", [x, g.ints(ax)], exact=x.exact)
    x = g.pickany(0, 4)
    k = g.ri(1, 2)
    rr = x.r + k
    ax = [int(a) for a in g.rng.choice(rr, k, replace=False)]
    ax = [a - rr if g.coin() else a for a in ax]
    return g.emit1("Unsqueeze", [x, g.ints(ax)], exact=x.exact)


def op_concat(g):
    x = g.pickany(1, 5)
    axis = g.ri(-x.r, x.r - 1)
    a = axis % x.r
    ins = [x]
    for _ in range(g.ri(1, 3)):
        if g.coin(0.3):
            ins.append(x)
            continue
        s = list(x.shape)
        s[a] = g.ri(1, 4)
        ins.append(g.weight(tuple(s), x.dt, p_input=0.4))
    g.rng.shuffle(ins)
    return g.emit1("Concat", ins, axis=axis, exact=all(v.exact for v in ins))


def op_split(g):
    x = g.pick(lambda v: v.r >= 1 and max(v.shape) >= 2, lambda: g.input(g.shape(g.ri(1, 4), 2, 7)))
    axes = [i for i, d in enumerate(x.shape) if d >= 2]
    if not axes:
        raise Skip("nothing to split")
    a = g.ch(axes)
    d = x.shape[a]
    axis = g.ch([a, a - x.r, None if a == 0 else a])
    form = g.ch(["input", "num_outputs"]) if g.opset >= 18 else g.ch(["input", "equal"])
    if form == "input":
        n = g.ri(1, min(d, 4))
        cuts = sorted(int(c) for c in g.rng.choice(np.arange(1, d), n - 1, replace=False)) if n > 1 else []
        parts = np.diff([0, *cuts, d])
        outs = g.emit("Split", [x, g.ints(parts)], len(parts), exact=x.exact, axis=axis)
    elif form == "num_outputs":
        n = g.ri(2, min(d, 4))
        c = -(-d // n)
        if c * (n - 1) >= d:
            raise Skip("num_outputs leaves an empty chunk")
        outs = g.emit("Split", [x], n, exact=x.exact, axis=axis, num_outputs=n)
    else:
        divs = [n for n in range(1, 5) if d % n == 0]
        n = g.ch(divs)
        outs = g.emit("Split", [x], n, exact=x.exact, axis=axis)
    return outs[-1]


def slice_bound(g, dim):
    return g.ch([g.ri(-dim - 2, dim + 2), INT64_MAX, INT64_MIN, -INT64_MAX, 0, dim, -1], [8, 1, 1, 0.5, 1, 1, 1])


def op_slice(g):
    x = g.pickany(1, 5)
    for _ in range(30):
        k = g.ri(1, x.r)
        axes = [int(a) for a in g.rng.choice(x.r, k, replace=False)]
        starts, ends, steps = [], [], []
        sl = [slice(None)] * x.r
        for a in axes:
            dim = x.shape[a]
            st = g.ch([1, 1, 1, 2, -1, -2, 3, -3])
            s, e = slice_bound(g, dim), slice_bound(g, dim)
            starts.append(s)
            ends.append(e)
            steps.append(st)
            sl[a] = slice(s, e, st)
        out = np.empty(x.shape)[tuple(sl)].shape
        if all(out):
            break
    else:
        raise Skip("slice empty")
    idt = I64 if g.coin(0.85) else I32
    if idt == I32:
        clip = lambda v: [int(np.clip(z, -2**31, 2**31 - 1)) for z in v]  # noqa: E731
        starts, ends = clip(starts), clip(ends)
        out2 = np.empty(x.shape)[tuple(slice(s, e, st) if a in axes else slice(None) for a, (s, e, st) in
                                       ((a, ([*zip(starts, ends, steps)][axes.index(a)] if a in axes else (0, 0, 1)))
                                        for a in range(x.r)))].shape
        if out2 != out:
            raise Skip("int32 clipping changed the slice")
    ins = [x, g.ints(starts, idt), g.ints(ends, idt)]
    omit_axes = sorted(axes) == list(range(k)) and axes == list(range(k)) and g.coin(0.5)
    if not omit_axes or any(s != 1 for s in steps) or g.coin(0.3):
        ins.append("" if omit_axes else g.ints([a - x.r if g.coin(0.4) else a for a in axes], idt))
        if any(s != 1 for s in steps) or g.coin(0.5):
            ins.append(g.ints(steps, idt))
    return g.emit1("Slice", ins, exact=x.exact, shapes=[out])


def indices(g, shape, dim, runtime_p=0.3):
    data = g.rng.integers(-dim, dim, size=shape)
    dt = I64 if g.coin(0.8) else I32
    if g.coin(runtime_p):
        return g.input(shape, dt, data=data, prefix="idx")
    return Val(g.const(data.astype(dt)), shape, dt)


def op_gather(g):
    x = g.pickany(1, 4)
    a = g.ri(0, x.r - 1)
    axis = g.ch([a, a - x.r, None if a == 0 else a])
    ishape = g.shape(g.ch([0, 1, 1, 2]), 1, 4)
    ind = indices(g, ishape, x.shape[a])
    return g.emit1("Gather", [x, ind], exact=x.exact, axis=axis)


def op_gather_elements(g):
    x = g.pickany(1, 4)
    a = g.ri(0, x.r - 1)
    shape = tuple(g.ri(1, d + 2) if i == a else g.ri(1, d) for i, d in enumerate(x.shape))
    ind = indices(g, shape, x.shape[a])
    return g.emit1("GatherElements", [x, ind], exact=x.exact, axis=g.ch([a, a - x.r]))


def op_gather_nd(g):
    x = g.pickany(1, 4)
    b = g.ri(0, min(1, x.r - 1))
    k = g.ri(1, x.r - b)
    extra = g.shape(g.ri(0, 2), 1, 3)
    shape = tuple(x.shape[:b]) + extra + (k,)
    data = np.stack([g.rng.integers(-x.shape[b + j], x.shape[b + j], size=shape[:-1]) for j in range(k)], -1)
    if g.coin(0.3):
        ind = g.input(shape, I64, data=data, prefix="idx")
    else:
        ind = g.const(data.astype(I64))
    return g.emit1("GatherND", [x, ind], exact=x.exact, batch_dims=b or None,
                   shapes=[tuple(shape[:-1]) + tuple(x.shape[b + k:])])


def boolean(g, x=None):
    """A bool value broadcasting with x (comparison of an exact value or a bool input)."""
    if x is not None and g.coin(0.3):
        return g.input(bshape(g, x.shape), BOOL, prefix="m")
    y = g.pick(lambda v: v.exact and v.dt != BOOL and (x is None or bcast_ok(v.shape, x.shape)),
               lambda: g.input(bshape(g, x.shape) if x is not None else g.shape(2), F32))
    op = g.ch(["Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual"])
    thr = np.asarray(0.0 if y.dt.kind == "f" else g.ri(-2, 2), y.dt)
    if op == "Equal" and y.dt.kind == "f":  # something that hits: an element of y
        thr = np.asarray(g.feeds[y.name].ravel()[0] if y.name in g.feeds else 0.0, y.dt)
    return g.emit1(op, [y, g.const(thr)])


def op_where(g):
    x = g.pickany(0, 4)
    c = boolean(g, x)
    y = other_operand(g, x, p_val=0.3)
    a, b = (x, y) if g.coin() else (y, x)
    return g.emit1("Where", [c, a, b], exact=x.exact and y.exact)


def op_logic(g):
    c = boolean(g, g.pickany(0, 4) if g.coin() else None)
    op = g.ch(["Not", "And", "Or", "Xor"])
    if op == "Not":
        out = g.emit1("Not", [c])
    else:
        d = boolean(g, c)
        if not bcast_ok(c.shape, d.shape):
            raise Skip("logic shapes")
        out = g.emit1(op, [c, d])
    if g.coin(0.6):
        out = g.emit1("Cast", [out], to=NP2ONNX[g.ch([g.fdt, I64, F32])])
    return out


def op_expand(g):
    x = g.pickany(0, 4)
    s = list(x.shape)
    tgt = [g.ri(1, 4) if d == 1 and g.coin(0.6) else (1 if g.coin(0.2) else d) for d in s]
    pre = [g.ri(1, 3) for _ in range(g.ri(0, 2) if len(s) < 4 else 0)]
    shp = pre + tgt
    return g.emit1("Expand", [x, g.ints(shp)], exact=x.exact)


def op_cast(g):
    x = g.pickany(0, 5)
    to = g.ch([F16, F32, I64, BOOL, I32])
    if (x.dt.kind == "f" and to.kind != "f") and not x.exact:
        x = g.pickf(exact=True)
    if x.dt == F32 and to == F16 and g.coin(0.3):
        return g.emit1("CastLike", [x, g.const(np.zeros((), F16))], exact=x.exact)
    return g.emit1("Cast", [x], to=NP2ONNX[to], exact=x.exact, lowp=x.lowp or to == F16)


REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceProd", "ReduceSumSquare",
          "ReduceL1", "ReduceLogSumExp", "ReduceLogSum"]


def op_reduce(g):
    op = g.ch(REDUCE, [5, 5, 3, 2, 2, 1, 1, 1, 1, 0.5])
    if op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
        x = g.pickn(1, 5, p_int=0.2)
    else:
        x = g.pickf(1, 5)
    if op == "ReduceLogSum":
        x = g.emit1("Add", [g.emit1("Abs", [x]), g.const(np.asarray(0.5, x.dt))])
    k = g.ch([0, 1, 1, 2, x.r], [1, 4, 1, 1, 1])
    k = min(k, x.r)
    axes = [int(a) for a in g.rng.choice(x.r, k, replace=False)]
    if op == "ReduceProd" and int(np.prod([x.shape[a] for a in axes] or x.shape)) > 24:
        raise Skip("long product")
    axes = [a - x.r if g.coin(0.4) else a for a in axes]
    as_input = op == "ReduceSum" or g.opset >= 18
    keepdims = g.ch([None, 0, 1])
    noop = g.ch([None, 0, 1], [3, 1, 1]) if as_input else None
    if as_input:
        if not axes:
            ins = [x] if g.coin() else [x, g.ints(np.zeros((0,), np.int64))]
        else:
            ins = [x, g.ints(axes)]
        return g.emit1(op, ins, keepdims=keepdims, noop_with_empty_axes=noop,
                       exact=x.exact and op in ("ReduceMax", "ReduceMin"))
    return g.emit1(op, [x], keepdims=keepdims, axes=axes or None,
                   exact=x.exact and op in ("ReduceMax", "ReduceMin"))


def op_argmax(g):
    x = g.pick(lambda v: v.exact and v.r >= 1 and v.dt in (F32, F16, I32, I64),
               lambda: g.input(g.shape(g.ri(1, 4)), g.ch([g.fdt, I64, I32])))
    op = g.ch(["ArgMax", "ArgMin"])
    a = g.ri(-x.r, x.r - 1)
    return g.emit1(op, [x], axis=g.ch([None, a]) if a == 0 else a, keepdims=g.ch([None, 0, 1]),
                   select_last_index=g.ch([None, 0, 1]))


def op_cumsum(g):
    x = g.pickn(1, 4)
    if x.dt == F16 and g.opset < 14:
        raise Skip("CumSum f16 needs opset 14")
    a = g.ri(-x.r, x.r - 1)
    return g.emit1("CumSum", [x, g.const(np.asarray(a, g.ch([I64, I32])))],
                   exclusive=g.ch([None, 0, 1]), reverse=g.ch([None, 0, 1]))


def op_topk(g):
    x = g.pick(lambda v: v.exact and v.r >= 1 and v.dt in (F32, F16, I64, I32),
               lambda: g.input(g.shape(g.ri(1, 3), 2, 7), g.ch([g.fdt, g.fdt, I64])))
    a = g.ri(-x.r, x.r - 1)
    K = g.ri(1, x.shape[a])
    outs = g.emit("TopK", [x, g.ints([K])], 2, exact=True, axis=g.ch([None, a]) if a % x.r == x.r - 1 else a,
                  largest=g.ch([None, 0, 1]), sorted=g.ch([None, 1]))
    return outs[g.ri(0, 1)]


def op_pad(g):
    x = g.pickany(1, 4)
    modes = ["constant", "reflect", "edge"] + (["wrap"] if g.opset >= 19 else [])
    mode = g.ch(modes)
    use_axes = g.opset >= 18 and g.coin(0.3)
    axes = sorted(int(a) for a in g.rng.choice(x.r, g.ri(1, x.r), replace=False)) if use_axes else list(range(x.r))
    pb, pe = [], []
    for a in axes:
        d = x.shape[a]
        if mode == "constant":
            lo = -(d - 1) // 2 if g.coin(0.2) else 0
            b_, e_ = g.ri(lo, 3), g.ri(lo, 3)
            if d + b_ + e_ < 1:
                b_, e_ = 0, 0
        elif mode == "reflect":
            b_, e_ = g.ri(0, d - 1), g.ri(0, d - 1)
        elif mode == "wrap":
            b_, e_ = g.ri(0, d), g.ri(0, d)
        else:
            b_, e_ = g.ri(0, 3), g.ri(0, 3)
        pb.append(b_)
        pe.append(e_)
    ins = [x, g.ints(pb + pe)]
    if mode == "constant" and g.coin(0.5):
        ins.append(g.const(np.asarray(g.ch([0, 1.5, -2]), x.dt)))
    if use_axes:
        ins += [""] * (3 - len(ins))
        ins.append(g.ints([a - x.r if g.coin(0.3) else a for a in axes]))
    return g.emit1("Pad", ins, mode=None if mode == "constant" and g.coin() else mode, exact=x.exact)


def op_clip(g):
    x = g.pickn(0, 5, p_int=0.15)
    lo = np.asarray(g.ch([-1, 0, -0.5]) if x.dt.kind == "f" else g.ri(-3, 0), x.dt)
    hi = np.asarray(g.ch([1, 6, 0.5]) if x.dt.kind == "f" else g.ri(0, 3), x.dt)
    form = g.ch(["both", "min", "max", "none"], [3, 1, 1, 0.5])
    ins = {"both": [x, g.const(lo), g.const(hi)], "min": [x, g.const(lo)],
           "max": [x, "", g.const(hi)], "none": [x]}[form]
    return g.emit1("Clip", ins, exact=x.exact)


def spatial_input(g, nsp, cmin=1):
    cands = [v for v in g.vals if v.dt.kind == "f" and v.r == 2 + nsp and v.shape[1] >= cmin
             and all(d >= 3 for d in v.shape[2:]) and int(np.prod(v.shape)) <= 4096]
    if cands and g.coin(0.5):
        return g.ch(cands)
    N = g.ri(1, 2)
    C = g.ch([1, 2, 3, 4, 6, 8])
    sp = tuple(g.ri(4, 10 if nsp < 3 else 6) for _ in range(nsp))
    return g.input((N, max(C, cmin)) + sp)


def conv_attrs(g, nsp, k, trans=False):
    strides = [g.ch([1, 1, 2, 3]) for _ in range(nsp)]
    dil = [g.ch([1, 1, 1, 2]) for _ in range(nsp)]
    auto = g.ch(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"], [4, 2, 1, 1, 1])
    at = {"strides": strides if (any(s != 1 for s in strides) or g.coin()) else None,
          "dilations": dil if (any(d != 1 for d in dil) or g.coin(0.3)) else None,
          "kernel_shape": list(k) if g.coin(0.7) else None}
    if auto == "NOTSET":
        if g.coin(0.8):
            at["pads"] = [g.ri(0, kk - 1) for kk in k] + [g.ri(0, kk - 1) for kk in k]
        if g.coin(0.2):
            at["auto_pad"] = "NOTSET"
    else:
        at["auto_pad"] = auto
        if trans or g.coin(0.95):  # keep clear of a negative total padding (ill-defined in ONNX)
            at["strides"] = [min(s, (kk - 1) * d + 1) for s, kk, d in zip(strides, k, dil)]
    return at


def op_conv(g):
    nsp = g.ch([1, 2, 2, 2, 3])
    x = spatial_input(g, nsp)
    C = x.shape[1]
    groups = [d for d in range(1, C + 1) if C % d == 0]
    grp = g.ch([1, C, g.ch(groups)], [3, 1, 1])
    M = grp * g.ri(1, 3)
    k = tuple(g.ri(1, 3) for _ in range(nsp))
    at = conv_attrs(g, nsp, k)
    w = g.weight((M, C // grp) + k, x.dt, p_input=0.15)
    ins = [x, w]
    if g.coin(0.6):
        ins.append(g.weight((M,), x.dt, p_input=0.15))
    return g.emit1("Conv", ins, group=grp if grp > 1 or g.coin(0.2) else None, **at)


def op_conv_transpose(g):
    nsp = g.ch([1, 2, 2])
    x = spatial_input(g, nsp)
    C = x.shape[1]
    grp = g.ch([1, 1, C])
    M = grp * g.ri(1, 3)
    k = tuple(g.ri(1, 4) for _ in range(nsp))
    at = conv_attrs(g, nsp, k, trans=True)
    strides = at["strides"] or [1] * nsp
    dil = at["dilations"] or [1] * nsp
    if g.coin(0.3):
        at["output_padding"] = [g.ri(0, max(s, d) - 1) for s, d in zip(strides, dil)]
    w = g.weight((C, M // grp) + k, x.dt, p_input=0.15)
    ins = [x, w]
    if g.coin(0.5):
        ins.append(g.weight((M,), x.dt, p_input=0.15))
    return g.emit1("ConvTranspose", ins, group=grp if grp > 1 else None, **at)


def op_pool(g):
    nsp = g.ch([1, 2, 2, 3])
    x = spatial_input(g, nsp)
    op = g.ch(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"], [4, 4, 1, 1, 0.3])
    if op.startswith("Global"):
        return g.emit1(op, [x], exact=x.exact and op == "GlobalMaxPool")
    k = tuple(g.ri(1, 3) for _ in range(nsp))
    at = conv_attrs(g, nsp, k)
    at["kernel_shape"] = list(k)
    if op == "AveragePool" and g.opset < 19:
        at["dilations"] = None
    if at.get("auto_pad", "NOTSET") != "NOTSET":
        at["dilations"] = None  # onnxruntime's pools ignore the dilation in SAME's padding (and onnx.reference too)
    if at.get("auto_pad", "NOTSET") == "NOTSET":  # the window must fit the padded extent
        pads = at.get("pads") or [0] * (2 * nsp)
        dil = at.get("dilations") or [1] * nsp
        if any((kk - 1) * d + 1 > n + pads[j] + pads[j + nsp] for j, (kk, d, n) in enumerate(zip(k, dil, x.shape[2:]))):
            raise Skip("pool window larger than the padded input")
    if op == "LpPool":
        at["p"] = g.ch([None, 1, 2])
        if g.opset < 18:
            at["dilations"] = None
            at["ceil_mode"] = None
    else:
        at["ceil_mode"] = g.ch([None, 0, 1], [3, 1, 1])
    if op == "AveragePool":
        at["count_include_pad"] = g.ch([None, 0, 1])
    nout = 2 if op == "MaxPool" and g.coin(0.1) else 1
    outs = g.emit(op, [x], nout, exact=x.exact and op == "MaxPool", **at)
    return outs[0]


def op_resize(g):
    r = g.ch([3, 4, 4, 4, 5])
    x = g.pick(lambda v: v.dt.kind == "f" and v.r == r and int(np.prod(v.shape)) <= 2048,
               lambda: g.input((g.ri(1, 2), g.ri(1, 3)) + tuple(g.ri(2, 7) for _ in range(r - 2))))
    mode = g.ch(["nearest", "linear", "cubic"], [3, 3, 1])
    if mode == "cubic" and r - 2 > 2:
        mode = "linear"
    ctms = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
    if g.opset >= 19:
        ctms.append("half_pixel_symmetric")
    at = {"mode": mode if mode != "nearest" or g.coin() else None,
          "coordinate_transformation_mode": g.ch([None, *ctms])}
    if mode == "nearest":
        at["nearest_mode"] = g.ch([None, "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
    if mode == "cubic":
        at["cubic_coeff_a"] = g.ch([None, -0.5, -0.75])
        at["exclude_outside"] = g.ch([None, 0, 1])
    sp = x.shape[2:]
    if g.coin(0.6):
        sc = [g.ch([0.5, 2.0, 1.5, 3.0, 0.75, 1.0, 2.0]) for _ in sp]
        ins = [x, "", g.const(np.asarray([1.0, 1.0] + sc, F32))]
    else:
        sz = [max(1, int(d * g.ch([0.5, 2, 1.5, 3, 0.7]))) for d in sp]
        ins = [x, "", "", g.ints(list(x.shape[:2]) + sz)]
    if g.opset >= 18 and g.coin(0.1):
        at["antialias"] = 1
    return g.emit1("Resize", ins, **at)


def op_shape_chain(g):
    x = g.pickany(1, 4)
    kind = g.ch(["flatten", "constofshape", "size", "range", "merge", "slice_shape"])
    if kind == "flatten":  # Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
        s = g.emit1("Shape", [x])
        d0 = g.emit1("Gather", [s, g.const(np.asarray(0, I64))])
        u = g.emit1("Unsqueeze", [d0, g.ints([0])])
        c = g.emit1("Concat", [u, g.ints([-1])], axis=0)
        return g.emit1("Reshape", [x, c], exact=x.exact,
                       shapes=[(x.shape[0], int(np.prod(x.shape[1:])))])
    if kind == "constofshape":
        if g.opset >= 15 and g.coin():
            s = g.emit1("Shape", [x], start=g.ch([-2, -1, 1, 0]) if x.r >= 2 else 0)
        else:
            s = g.emit1("Shape", [x])
        dt = x.dt if x.dt != BOOL else F32
        k = g.emit1("ConstantOfShape", [s], value=numpy_helper.from_array(np.asarray([1.5], dt), "v"))
        if x.dt == BOOL:
            return k
        return g.emit1("Mul", [x, k])
    if kind == "size":
        if x.dt == BOOL:
            raise Skip("size chain on bool")
        n = g.emit1("Size", [x])
        if x.dt.kind != "f":
            return g.emit1("Add", [x, g.emit1("Cast", [n], to=NP2ONNX[x.dt])])
        return g.emit1("Div", [x, g.emit1("Cast", [n], to=NP2ONNX[x.dt])])
    if kind == "range":
        if x.dt.kind != "f":
            raise Skip("range on non-float")
        s = g.emit1("Shape", [x])
        n = g.emit1("Gather", [s, g.const(np.asarray(-1, I64))])
        rs = [(x.shape[-1],)]
        if g.coin():
            rg = g.emit1("Range", [g.const(np.asarray(0, I64)), n, g.const(np.asarray(1, I64))], shapes=rs)
            rg = g.emit1("Cast", [rg], to=NP2ONNX[x.dt], shapes=rs)
        else:
            nf = g.emit1("Cast", [n], to=NP2ONNX[x.dt])
            rg = g.emit1("Range", [g.const(np.asarray(0, x.dt)), nf, g.const(np.asarray(1, x.dt))], shapes=rs)
        return g.emit1("Add", [x, rg], shapes=[x.shape])
    if kind == "merge":  # [.., a, b] -> [.., a*b] as exporters write it
        if x.r < 2:
            raise Skip("merge needs rank 2")
        s = g.emit1("Shape", [x])
        head = g.emit1("Slice", [s, g.ints([0]), g.ints([x.r - 2])]) if x.r > 2 else None
        a = g.emit1("Gather", [s, g.const(np.asarray(x.r - 2, I64))])
        b = g.emit1("Gather", [s, g.const(np.asarray(-1, I64))])
        m = g.emit1("Unsqueeze", [g.emit1("Mul", [a, b]), g.ints([0])])
        tgt = g.emit1("Concat", [head, m] if head is not None else [m], axis=0)
        return g.emit1("Reshape", [x, tgt], exact=x.exact, shapes=[x.shape[:-2] + (x.shape[-2] * x.shape[-1],)])
    # slice_shape: Expand(y, Shape(x)) with y broadcasting
    s = g.emit1("Shape", [x])
    y = g.weight(bshape(g, x.shape, grow=False), x.dt)
    return g.emit1("Expand", [y, s], exact=True)


def op_misc(g):
    op = g.ch(["Identity", "Dropout", "Flatten", "Tile", "Trilu", "Neg-int", "DepthToSpace", "SpaceToDepth"],
              [2, 2, 3, 1, 1, 0.5, 0.5, 0.5])
    if op == "Identity":
        x = g.pickany()
        return g.emit1("Identity", [x], exact=x.exact)
    if op == "Dropout":
        x = g.pickf()
        ins = [x]
        if g.coin(0.5):
            ins.append(g.const(np.asarray(g.ch([0.1, 0.5]), x.dt if g.coin() else F32)))
            if g.coin(0.5):
                ins.append(g.const(np.asarray(False)))
        nout = 2 if g.coin(0.3) else 1
        outs = g.emit("Dropout", ins, nout, exact=x.exact)
        return outs[0]
    if op == "Flatten":
        x = g.pickany(1, 5)
        return g.emit1("Flatten", [x], axis=g.ch([None, g.ri(-x.r, x.r)]), exact=x.exact)
    if op == "Tile":
        x = g.pickany(1, 4, maxsize=512)
        return g.emit1("Tile", [x, g.ints([g.ri(1, 3) for _ in x.shape])], exact=x.exact)
    if op == "Trilu":
        x = g.pickany(2, 4)
        ins = [x] if g.coin() else [x, g.const(np.asarray(g.ri(-2, 2), I64))]
        return g.emit1("Trilu", ins, upper=g.ch([None, 0, 1]), exact=x.exact)
    if op == "Neg-int":
        x = g.pickn(0, 4, p_int=1.0)
        return g.emit1(g.ch(["Neg", "Abs", "Sign"]), [x])
    x = g.pick(lambda v: v.r == 4 and v.shape[1] % 4 == 0, lambda: g.input((1, 8, g.ri(2, 4) * 2, g.ri(1, 3) * 2)))
    if op == "DepthToSpace":
        return g.emit1(op, [x], blocksize=2, mode=g.ch([None, "DCR", "CRD"]), exact=x.exact)
    if x.shape[2] % 2 or x.shape[3] % 2:
        raise Skip("odd")
    return g.emit1(op, [x], blocksize=2, exact=x.exact)


def op_norm(g):
    op = g.ch(["BatchNormalization", "InstanceNormalization", "LpNormalization", "MeanVarianceNormalization"],
              [3, 2, 1, 1])
    x = g.pickf(2, 5) if op != "LpNormalization" else g.pickf(1, 4)
    if op == "BatchNormalization":
        C = x.shape[1]
        sc, b, m = (g.weight((C,), x.dt, p_input=0.1) for _ in range(3))
        v = g.weight((C,), x.dt, data=g.rng.uniform(0.5, 2, (C,)), p_input=0.1)
        return g.emit1(op, [x, sc, b, m, v], epsilon=g.ch([None, 1e-3]))
    if op == "InstanceNormalization":
        if x.r < 3:
            raise Skip("instance norm rank")
        C = x.shape[1]
        return g.emit1(op, [x, g.weight((C,), x.dt), g.weight((C,), x.dt)], epsilon=g.ch([None, 1e-3]))
    if op == "LpNormalization":
        return g.emit1(op, [x], axis=g.ri(-x.r, x.r - 1), p=g.ch([None, 1, 2]))
    return g.emit1(op, [x], axes=g.ch([None, [0, 2, 3] if x.r == 4 else list(range(x.r))]))


EINSUMS = [("ij,jk->ik", None), ("bij,bjk->bik", None), ("bhid,bhjd->bhij", None), ("ij->ji", None),
           ("ij->", None), ("bij->bj", None), ("ij,j->i", None), ("i,i->", None), ("i,j->ij", None),
           ("...ij,...jk->...ik", None), ("ii->i", None), ("ij,ij->ij", None), ("bid,bjd->bij", None),
           ("bnqd,bnkd->bnqk", None), ("bnqk,bnkd->bnqd", None), ("ij,kj->ik", None), ("ijk", None),
           ("bij,jk", None), ("ab,bc->", None)]


def op_einsum(g):
    eq, _ = g.ch(EINSUMS)
    lhs = eq.split("->")[0]
    terms = lhs.split(",")
    sizes = {}
    ops = []
    for t in terms:
        letters = t.replace("...", "")
        ell = "..." in t
        shape = []
        if ell:
            eshape = sizes.setdefault("...", g.shape(g.ri(0, 2), 1, 3))
            shape += list(eshape)
        for c in letters:
            shape.append(sizes.setdefault(c, g.ri(1, 6)))
        cand = [v for v in g.vals if v.dt.kind == "f" and v.shape == tuple(shape)]
        if cand and g.coin(0.5):
            ops.append(g.ch(cand))
        else:
            ops.append(g.weight(tuple(shape), g.fdt if not ops else ops[0].dt, p_input=0.5))
    if len({o.dt for o in ops}) > 1:
        raise Skip("einsum dtypes")
    return g.emit1("Einsum", ops, equation=eq)


def op_attention(g):
    B, S, H, D = g.ri(1, 2), g.ri(1, 6), g.ri(1, 3), g.ch([2, 4, 8])
    E = H * D
    dt = g.fdt
    x = g.pick(lambda v: v.dt == dt and v.r == 3 and v.shape[-1] == E, lambda: g.input((B, S, E), dt))
    B, S = x.shape[0], x.shape[1]

    def proj(perm):
        w = g.weight((E, E), dt, p_input=0.1)
        p = g.emit1("MatMul", [x, w])
        if g.coin(0.5):
            p = g.emit1("Add", [p, g.weight((E,), dt, p_input=0.1)])
        rs = g.emit1("Reshape", [p, g.ints([B, S, H, D] if g.coin() else [0, 0, H, D])])
        return g.emit1("Transpose", [rs], perm=perm)

    q = proj([0, 2, 1, 3])
    k = proj([0, 2, 3, 1])
    v = proj([0, 2, 1, 3])
    s = g.emit1("MatMul", [q, k])
    if g.coin():
        s = g.emit1("Div", [s, g.const(np.asarray(math.sqrt(D), dt))])
    else:
        s = g.emit1("Mul", [s, g.const(np.asarray(1 / math.sqrt(D), dt))])
    m = g.ch(["none", "add", "causal"])
    if m == "add":
        mask = g.input((B, 1, 1, S), dt, data=np.where(g.rng.random((B, 1, 1, S)) < 0.8, 0, -1e4), prefix="mask")
        s = g.emit1("Add", [s, mask])
    elif m == "causal":
        tri = g.const(np.tril(np.ones((S, S), bool)))
        s = g.emit1("Where", [tri, s, g.const(np.asarray(-1e4 if dt == F16 else -1e9, dt))])
    p = g.emit1("Softmax", [s], axis=-1 if g.coin() else 3)
    o = g.emit1("MatMul", [p, v])
    o = g.emit1("Transpose", [o], perm=[0, 2, 1, 3])
    return g.emit1("Reshape", [o, g.ints([B, S, E] if g.coin() else [0, 0, -1])])


OPS = [  # (generator, weight)
    (op_binary, 6), (op_unary, 5), (op_matmul, 4), (op_gemm, 2), (op_softmax, 3), (op_layernorm, 2),
    (op_reshape, 3), (op_transpose, 2), (op_squeeze, 2), (op_concat, 2), (op_split, 2), (op_slice, 3),
    (op_gather, 2), (op_gather_elements, 1), (op_gather_nd, 1), (op_where, 2), (op_logic, 1), (op_expand, 1.5),
    (op_cast, 2), (op_reduce, 4), (op_argmax, 1.5), (op_cumsum, 1), (op_topk, 1), (op_pad, 1.5), (op_clip, 1.5),
    (op_conv, 2.5), (op_conv_transpose, 1.5), (op_pool, 2), (op_resize, 1.5), (op_shape_chain, 2),
    (op_misc, 2), (op_norm, 1), (op_einsum, 1.5), (op_attention, 1),
]


def draw(seed, i, stats=None):
    """Model i of seed: (model, feeds, input_shapes or None, ops, tolerances)."""
    rng = np.random.default_rng([seed, i])
    opset = int(rng.choice(list(range(13, 22)), p=np.asarray([1, 1, 1, 1, 2, 2, 1.5, 1.5, 1.5]) / 12.5))
    g = G(rng, opset)
    n_ops = g.ri(1, 7) if rng.random() < 0.7 else g.ri(6, 14)
    made = 0
    fns, w = zip(*OPS)
    w = np.asarray(w, float) / sum(w)
    for _ in range(n_ops * 4):
        if made >= n_ops:
            break
        fn = fns[int(rng.choice(len(fns), p=w))]
        snap = (len(g.nodes), len(g.inits), len(g.inputs), len(g.vals), dict(g.feeds), set(g.input_vals))
        try:
            fn(g)
            made += 1
        except Exception as e:  # Skip, or a slip of the generator's own
            if stats is not None:
                stats[f"{fn.__name__}: {'' if isinstance(e, Skip) else type(e).__name__ + ': '}{str(e)[:90]}"] += 1
            del g.nodes[snap[0]:], g.inits[snap[1]:], g.inputs[snap[2]:], g.vals[snap[3]:]
            g.feeds, g.input_vals = snap[4], snap[5]
    produced = [v for v in g.vals if v.name not in g.input_vals and any(v.name in nd.output for nd in g.nodes)]
    if not produced:
        return None
    outs = [produced[-1]]
    others = [v for v in produced[:-1] if v.name not in {o.name for o in outs}]
    for _ in range(g.ri(0, 2)):
        if others:
            v = others.pop(int(rng.integers(len(others))))
            if v.name not in {o.name for o in outs}:
                outs.append(v)
    # unique output names
    seen, uo = set(), []
    for v in outs:
        if v.name not in seen:
            seen.add(v.name)
            uo.append(v)
    outs = uo
    sym = None
    input_shapes = None
    if g.coin(0.2) and g.inputs:
        sym = {}
        for v in g.inputs:
            if v.r >= 1 and g.coin(0.7):
                k = g.ri(0, v.r - 1)
                sym[v.name] = {k: g.ch(["batch", "seq", f"{v.name}_d{k}", ""])}
        input_shapes = {v.name: list(v.shape) for v in g.inputs} if sym else None
        # an unnamed dim: dim_param "" -> make_tensor_value_info writes an empty dim
        for nm, d in sym.items():
            for k, s in d.items():
                if s == "":
                    d[k] = None
    model = g.model(outs, sym or None, out_shapes=not sym and g.coin(0.8))
    ops = [nd.op_type for nd in g.nodes if nd.op_type != "Constant"]
    tols = [(5e-2 if (v.lowp or v.dt == F16) else 1e-3) for v in outs]
    return model, g.feeds, input_shapes, ops, tols


# ---------------------------------------------------------------------------
# checking


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout("model took too long")


def rel_err(a, b):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    fa, fb = np.isfinite(a64), np.isfinite(b64)
    if not np.array_equal(fa, fb) or not np.array_equal(a64[~fa], b64[~fb], equal_nan=True):
        return float("inf")
    d = np.linalg.norm((a64 - b64)[fa])
    n = np.linalg.norm(b64[fb])
    return float(d / n) if n > 1e-30 else float(d)


def is_unsupported(msg):
    return ("is not supported" in msg or "type is not supported" in msg or "must be a constant at import" in msg
            or "must be known at import" in msg or "rlx has no" in msg)


def check(seed, i, args, counts, unsupported, failures, gen_stats, ort, rlxc):
    drawn = draw(seed, i, gen_stats)
    if drawn is None:
        counts["empty"] += 1
        return
    model, feeds, input_shapes, ops, tols = drawn
    tag = f"seed={seed} i={i} opset={model.opset_import[0].version}"
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        counts["generator-invalid"] += 1
        if args.verbose:
            print(f"[gen-invalid] {tag} {ops}: {str(e).splitlines()[0][:300]}")
        return
    try:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        ref = sess.run(None, feeds)
    except Exception as e:
        counts["ort-rejects"] += 1
        key = re.sub(r"'[^']*'|\d+", "_", str(e).splitlines()[0])[:160]
        counts_ort[key] += 1
        if args.verbose:
            print(f"[ort-reject] {tag} {ops}: {str(e).splitlines()[0][:300]}")
        return
    counts["ran-on-ort"] += 1
    if input_shapes:
        counts["symbolic-dims"] += 1
    findings = []
    module, got = None, []
    try:
        module, params = rlxc.from_onnx(model, input_shapes)
    except rlxc.OnnxImportError as e:
        msg = str(e)
        if is_unsupported(msg):
            counts["unsupported"] += 1
            m = re.match(r"(\w+) node '[^']*': (.*)", msg)
            key = f"{m.group(1)}: {re.sub(chr(39) + '[a-z]+_?[0-9]+' + chr(39), '<v>', m.group(2))[:150]}" if m else msg[:150]
            unsupported[key] += 1
            if args.verbose:
                print(f"[unsupported] {tag}: {msg[:300]}")
            return
        findings.append(("import (OnnxImportError)", msg))
    except Exception:
        findings.append(("import", traceback.format_exc()))
    if module is not None:
        try:
            got = rlxc.compile(module, target="numpy", params=params).run(feeds)
            if len(got) != len(ref):
                findings.append(("run", f"{len(got)} outputs, onnxruntime gives {len(ref)}"))
            for k, (a, b) in enumerate(zip(got, ref)):
                a = np.asarray(a)
                name = model.graph.output[k].name
                if a.shape != b.shape:
                    findings.append(("mismatch", f"output {k} '{name}': shape {a.shape}, onnxruntime {b.shape}"))
                    continue
                if a.dtype != b.dtype:
                    findings.append(("mismatch", f"output {k} '{name}': dtype {a.dtype}, onnxruntime {b.dtype}"))
                if b.dtype.kind == "f":
                    err = rel_err(a, b)
                    if not err <= tols[k]:  # 10x the f32 1e-4 / f16 5e-3 tolerances
                        findings.append(("mismatch", f"output {k} '{name}' ({b.dtype}{list(b.shape)}): rel L2 err "
                                         f"{err:.3g} > {tols[k]:.0e}; rlxc {a.ravel()[:6]} ort {b.ravel()[:6]}"))
                else:
                    if not np.array_equal(a.astype(b.dtype) if a.shape == b.shape else a, b):
                        bad = np.argwhere(a.astype(b.dtype) != b)
                        findings.append(("mismatch", f"output {k} '{name}' ({b.dtype}{list(b.shape)}): "
                                         f"{len(bad)} elements differ; first at {bad[0].tolist()}: rlxc "
                                         f"{a[tuple(bad[0])]} ort {b[tuple(bad[0])]}"))
        except Exception:
            findings.append(("run (numpy)", traceback.format_exc()))
        if not args.no_lower:
            try:
                rlxc.run_pipeline(module.clone(), "rlx-cuda{arch=sm_90 sm_count=132}")
            except Exception:
                findings.append(("lower rlx-cuda", traceback.format_exc()))
    where = None
    if findings and any(st == "mismatch" or st.startswith("import") for st, _ in findings):
        where = localize(model, feeds, rlxc, ort)
        if where:
            findings.append(("first differing node", where[1]))
    if findings and (where and where[0] == "ort-vs-reference"
                     or all(st in ("mismatch", "first differing node") for st, _ in findings)
                     and spec_agrees(model, feeds, got, tols)):
        counts["ort-vs-onnx-reference"] += 1
        divergences.append((seed, i, findings[0][1][:200], ops))
        print(f"\n--- divergence {tag} ops={ops}: rlxc agrees with onnx.reference, not onnxruntime: "
              f"{findings[0][1][:300]}")
        findings = []
        save(model, feeds, seed, i)
        return
    if findings:
        counts["FAILED"] += 1
        print(f"\n=== FAILURE {tag} ops={ops}")
        for stage, text in findings:
            lines = text.strip().splitlines()
            print(f"  [{stage}] " + ("\n    ".join(lines[-6:]) if len(lines) > 1 else lines[0][:600]))
            failures.append((seed, i, stage, lines[-1][:300], ops))
        save(model, feeds, seed, i)
    else:
        counts["passed"] += 1
        for op in set(ops):
            op_cover[op] += 1


def save(model, feeds, seed, i):
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        onnx.save(model, os.path.join(out, f"onnx-fail-{seed}-{i}.onnx"))
        np.savez(os.path.join(out, f"onnx-fail-{seed}-{i}.npz"), **feeds)


def localize(model, feeds, rlxc, ort):
    """Runs each node alone on onnxruntime's values of its inputs, on rlxc and on
    onnxruntime: (kind, text) for the first one that differs, kind "ort-vs-reference"
    where rlxc agrees with onnx.reference there and onnxruntime does not, else "node"."""
    try:
        mi = onnx.shape_inference.infer_shapes(model)
        vi = {v.name: v for v in list(mi.graph.value_info) + list(mi.graph.output)}
        m2 = onnx.ModelProto()
        m2.CopyFrom(model)
        del m2.graph.output[:]
        for nd in model.graph.node:
            for o in nd.output:
                if o and nd.op_type != "Constant" and o in vi:
                    m2.graph.output.append(vi[o])
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        sess = ort.InferenceSession(m2.SerializeToString(), so, providers=["CPUExecutionProvider"])
        vals = dict(zip([o.name for o in m2.graph.output], sess.run(None, feeds)))
    except Exception as e:
        return None
    vals.update(feeds)
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for nd in model.graph.node:
        if nd.op_type == "Constant":
            consts[nd.output[0]] = numpy_helper.to_array(nd.attribute[0].t)
    vals.update(consts)
    try:
        from rlxc.frontends.onnx.core import IMPORT_TIME_INPUTS
    except ImportError:
        IMPORT_TIME_INPUTS = {}
    for nd in model.graph.node:
        if nd.op_type == "Constant":
            continue
        import_time = {nd.input[k] for k in IMPORT_TIME_INPUTS.get(nd.op_type, ()) if k < len(nd.input)}
        if any(o and o not in vals for o in nd.output):
            return None
        ins, inits, fd = [], [], {}
        for i in nd.input:
            if not i or i in fd or any(t.name == i for t in inits):
                continue
            a = vals[i]
            if i in consts or i in import_time:
                inits.append(numpy_helper.from_array(a, i))
            else:
                ins.append(helper.make_tensor_value_info(i, NP2ONNX[a.dtype], a.shape))
                fd[i] = a
        outs = [helper.make_tensor_value_info(o, NP2ONNX[vals[o].dtype], None) for o in nd.output if o]
        one = helper.make_model(helper.make_graph([nd], "one", ins, outs, initializer=inits),
                                opset_imports=model.opset_import)
        one.ir_version = model.ir_version
        ref = [vals[o] for o in nd.output if o]
        desc = f"{helper.printable_node(nd)}  inputs {[(k, v.dtype.name, list(v.shape)) for k, v in fd.items()]}"
        try:
            mod, p = rlxc.from_onnx(one)
            got = [np.asarray(a) for a in rlxc.interpret(mod, fd, p)]
        except Exception as e:
            return "node", f"{desc}: rlxc raises {type(e).__name__}: {str(e)[:300]}"
        tol = 5e-2 if any(v.dtype == F16 for v in ref) else 1e-3

        def same(xs, ys):
            for a, b in zip(xs, ys):
                if a.shape != b.shape:
                    return False
                if b.dtype.kind == "f" and not rel_err(a, b) <= tol:
                    return False
                if b.dtype.kind != "f" and not np.array_equal(a, b):
                    return False
            return True
        if same(got, ref):
            continue
        try:
            from onnx.reference import ReferenceEvaluator
            spec = [np.asarray(a) for a in ReferenceEvaluator(one).run(None, fd)]
            spec_ok = same(got, spec) and not same(ref, spec)
        except Exception:
            spec_ok = False
        diff = "; ".join(f"out {k}: rlxc {a.shape} {a.ravel()[:5]} ort {b.shape} {b.ravel()[:5]}"
                         for k, (a, b) in enumerate(zip(got, ref)) if not same([a], [b]))
        return ("ort-vs-reference" if spec_ok else "node"), f"{desc}: {diff}"
    return None


def spec_agrees(model, feeds, got, tols):
    """Whether rlxc's outputs match onnx.reference (the spec's evaluator) where onnxruntime's did not."""
    try:
        from onnx.reference import ReferenceEvaluator
        ref = ReferenceEvaluator(model).run(None, feeds)
    except Exception:
        return False
    for a, b, t in zip(got, ref, tols):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if b.dtype.kind == "f":
            if not rel_err(a, b) <= t:
                return False
        elif not np.array_equal(a, b):
            return False
    return True


counts_ort = collections.Counter()
op_cover = collections.Counter()
divergences = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--time-budget", type=float, default=None)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--no-lower", action="store_true", help="skip the rlx-cuda lowering")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per model")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    import onnxruntime as ort

    import rlxc

    ort.set_default_logger_severity(4)
    counts, unsupported, gen_stats = collections.Counter(), collections.Counter(), collections.Counter()
    failures = []
    t0 = time.time()
    idx = [args.only] if args.only is not None else range(args.models)
    signal.signal(signal.SIGALRM, _alarm)
    done = 0
    for i in idx:
        if args.time_budget and time.time() - t0 > args.time_budget:
            print(f"time budget reached after {done} models")
            break
        signal.alarm(args.timeout)
        try:
            check(args.seed, i, args, counts, unsupported, failures, gen_stats, ort, rlxc)
        except Timeout:
            counts["FAILED"] += 1
            failures.append((args.seed, i, "timeout", f">{args.timeout}s", []))
            print(f"\n=== FAILURE seed={args.seed} i={i}: timeout (> {args.timeout}s)")
        finally:
            signal.alarm(0)
        done += 1
        if args.verbose and args.only is None and done % 25 == 0:
            print(f"... {done} models, {time.time() - t0:.0f}s, {dict(counts)}", flush=True)
    print(f"\n{done} models in {time.time() - t0:.0f}s: {dict(counts)}")
    if counts_ort:
        print("onnxruntime rejected (skipped):")
        for k, n in counts_ort.most_common():
            print(f"  {n:4d}  {k}")
    if unsupported:
        print("unsupported by rlxc (not failures):")
        for k, n in unsupported.most_common():
            print(f"  {n:4d}  {k}")
    if args.verbose and gen_stats:
        print("generator skips:")
        for k, n in gen_stats.most_common(25):
            print(f"  {n:4d}  {k}")
    if args.verbose:
        print("ops in passing models:", " ".join(f"{k}={n}" for k, n in sorted(op_cover.items())))
    if divergences:
        print("onnxruntime disagrees with onnx.reference, rlxc follows the reference (not failures):")
        for s, i, what, ops in divergences:
            print(f"  --seed {s} --only {i}  {what}")
    if failures:
        print("FAILURES:")
        for s, i, stage, last, ops in failures:
            print(f"  --seed {s} --only {i}  [{stage}] {last[:200]}  ops={ops}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

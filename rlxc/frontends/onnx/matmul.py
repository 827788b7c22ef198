"""Emitters of MatMul, Gemm and Einsum."""

from __future__ import annotations

import numpy as np

from rlxc.frontends.builder import Tensor
from rlxc.frontends.onnx.core import (
    Node,
    Value,
    emitter,
)


@emitter("MatMul")
def _matmul(n: Node) -> list[Value]:
    a, b = n.tensor(0), n.tensor(1)
    squeeze = []
    if a.ndim == 1:
        a = n.g.reshape(a, [1, a.shape[0]])
        squeeze.append(-2)
    if b.ndim == 1:
        b = n.g.reshape(b, [b.shape[0], 1])
        squeeze.append(-1)
    y = n.g.matmul(a, b)
    if squeeze:
        shape = list(y.shape)
        for ax in sorted(squeeze):
            shape.pop(ax if ax == -1 else len(shape) - 2)
        y = n.g.reshape(y, shape)
    return [y]


@emitter("Gemm")
def _gemm(n: Node) -> list[Value]:
    a, b = n.tensor(0), n.tensor(1)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if n.attr("transA", 0):
        a = n.g.transpose(a, [1, 0])
    c = n.tensor(2) if n.input(2) is not None else None
    if n.attr("transB", 0) and alpha == 1.0 and beta == 1.0 and (c is None or c.shape == (b.shape[0],)):
        return [n.g.linear(a, b, c)]  # x · wᵀ + b: one gemm with a bias epilogue
    if n.attr("transB", 0):
        b = n.g.transpose(b, [1, 0])
    y = n.g.matmul(a, b)
    if alpha != 1.0:
        y = n.g.mul(y, n.imp.scalar(alpha, y.dtype))
    if c is not None:
        y = n.g.add(y, c if beta == 1.0 else n.g.mul(c, n.imp.scalar(beta, c.dtype)))
    return [y]



def _einsum_terms(n: Node, eq: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The equation's input terms and output term, `...` spelled out as
    capital letters (free in the equation's lower-case alphabet)."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise n.error(f"equation '{eq}' has {len(terms)} inputs, the node {len(shapes)}")
    ell = ""
    spelled = []
    for t, shape in zip(terms, shapes):
        if "..." in t:
            k = len(shape) - (len(t) - 3)
            letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:k]
            ell = letters if len(letters) > len(ell) else ell
            t = t.replace("...", letters)
        if len(t) != len(shape):
            raise n.error(f"term '{t}' of equation '{eq}' does not match a rank-{len(shape)} input")
        spelled.append(t)
    if not arrow:  # implicit output: the ellipsis, then indices used once, sorted
        once = sorted(c for c in set("".join(spelled)) if "".join(spelled).count(c) == 1 and c.islower())
        out = ell + "".join(once)
    else:
        out = out.replace("...", ell)
    for t in spelled:
        if len(set(t)) != len(t):
            raise n.unsupported(f"a repeated index in term '{t}' (a diagonal)", "distinct indices per term")
    return spelled, out


def _einsum_reduce(n: Node, x: Tensor, term: str, keep: str) -> tuple[Tensor, str]:
    """Sums away the indices of `term` not in `keep`."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return n.g.reduce_sum(x, axes, False), "".join(c for c in term if c in keep)


def _einsum_permute(n: Node, x: Tensor, term: str, order: str) -> Tensor:
    perm = [term.index(c) for c in order]
    return x if perm == sorted(perm) else n.g.transpose(x, perm)


@emitter("Einsum")
def _einsum(n: Node) -> list[Value]:
    """One or two operands: indices summed in one operand only are reduced
    first; two operands become one batched matmul over [batch, free, contracted]
    layouts (transposes and views around `rlx.matmul`), then the output order."""
    xs = [n.tensor(i) for i in range(len(n.inputs))]
    if len(xs) not in (1, 2):
        raise n.unsupported(f"{len(xs)} operands", "one or two")
    terms, out = _einsum_terms(n, n.attr("equation"), [x.shape for x in xs])
    if len(xs) == 1:
        y, t = _einsum_reduce(n, xs[0], terms[0], out)
        return [_einsum_permute(n, y, t, out)]
    (a, ta), (b, tb) = (_einsum_reduce(n, x, t, out + "".join(terms[1 - k])) for k, (x, t) in enumerate(zip(xs, terms)))
    dims = {c: d for t, x in ((ta, a), (tb, b)) for c, d in zip(t, x.shape)}
    for t, x in ((ta, a), (tb, b)):
        for c, d in zip(t, x.shape):
            if dims[c] != d and d != 1 and dims[c] != 1:
                raise n.error(f"index '{c}' has extents {dims[c]} and {d}")
    batch = "".join(c for c in ta if c in tb and c in out)
    contract = "".join(c for c in ta if c in tb and c not in out)
    free_a = "".join(c for c in ta if c not in tb)
    free_b = "".join(c for c in tb if c not in ta)
    size = lambda cs: int(np.prod([max(dims[c] for t, x in ((ta, a), (tb, b)) for cc, dd in zip(t, x.shape) if cc == c) for c in cs]))  # noqa: E731
    bshape = [size(c) for c in batch]
    a2 = n.g.reshape(_einsum_permute(n, a, ta, batch + free_a + contract), [*bshape, size(free_a), size(contract)])
    b2 = n.g.reshape(_einsum_permute(n, b, tb, batch + contract + free_b), [*bshape, size(contract), size(free_b)])
    if a.dtype != b.dtype:
        raise n.error(f"operands of types {a.dtype} and {b.dtype}")
    y = n.g.matmul(a2, b2)
    term = batch + free_a + free_b
    y = n.g.reshape(y, [size(c) for c in term])
    return [_einsum_permute(n, y, term, out)]

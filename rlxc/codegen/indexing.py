"""Indexing kernels: `pad` (each output element is an input element or the
fill value) and the gathers of ONNX, `gather_elements` and `gather_nd`
(each output element is the input element its indices name). A thread per
output element through `injective`'s grid-stride loop; extents and strides
are baked in.

Kernels cannot raise: a gather index still out of range after counting
negative ones from the end is clamped (the interpreter reports it).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute

from rlxc.codegen.common import (
    Buf,
    KernelSpec,
    eltype,
    float_of,
    index_expr,
    int_of,
    ints,
    numel,
    params_decl,
    shape,
    strides,
)
from rlxc.codegen.cuda_c import literal, load, store
from rlxc.codegen.injective import (
    _RAW,
    BLOCK_THREADS,
    index_kind,
    injective,
    pack_item,
    unpack_item,
    vector_elems,
    vshape,
)
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype, dtype_name


def _coord(i: str, k: int, s: Sequence[int]) -> str:
    """Axis k's coordinate of linear index `i` in a row-major tensor of shape `s`."""
    st = strides(s)
    c = f"({i} / {st[k]}LL)" if st[k] != 1 else i
    return c if k == 0 else f"({c} % {s[k]}LL)"


def _index(var: str, extent: int, src: str) -> str:
    """`long long var` from index element `src`: negative counts from the end, then clamped."""
    return (
        f"long long {var} = (long long){src}; if ({var} < 0) {var} += {extent}LL; "
        f"{var} = {var} < 0 ? 0 : ({var} >= {extent}LL ? {extent - 1}LL : {var});"
    )


def pad_kernel(op: rlx.PadOp, sm_count: int) -> KernelSpec:
    """ONNX Pad: each output coordinate minus `low` is mapped into the axis
    (reflected, clamped or wrapped), or, in "constant" mode, marks the element
    as fill when it falls outside."""
    xs, ys = shape(op.input), shape(op.result)
    low, high = ints(op.low), ints(op.high)
    mode = op.mode.data
    t = eltype(op.input)
    xst = strides(xs)
    lines = ["long long src = 0;"]
    if mode == "constant":
        lines.append("bool inside = true;")
    for k, (d, lo, hi) in enumerate(zip(xs, low, high)):
        if ys[k] == 1 and lo == hi == 0:
            continue  # the coordinate is always 0
        c = _coord("i", k, ys)
        if lo == hi == 0:
            lines.append(f"src += {c} * {xst[k]}LL;")
            continue
        j = f"j{k}"
        lines.append(f"long long {j} = {c} - {lo}LL;")
        if mode == "constant":
            lines.append(f"inside = inside && {j} >= 0 && {j} < {d}LL;")
        elif mode == "reflect":  # pads < d: one reflection reaches the axis
            lines.append(f"{j} = {j} < 0 ? -{j} : ({j} >= {d}LL ? {2 * (d - 1)}LL - {j} : {j});")
        elif mode == "edge":
            lines.append(f"{j} = {j} < 0 ? 0 : ({j} >= {d}LL ? {d - 1}LL : {j});")
        else:  # wrap
            lines.append(f"{j} = (({j} % {d}LL) + {d}LL) % {d}LL;")
        lines.append(f"src += {j} * {xst[k]}LL;")
    if mode == "constant":
        fill = store(literal(float_of(op.value), t), t)
        lines.append(f"y[i] = inside ? x[src] : {fill};")
    else:
        lines.append("y[i] = x[src];")
    return injective(f"pad_{mode}", op.result, [("x", op.input)], lines, sm_count)


def gather_elements_kernel(op: rlx.GatherElementsOp, sm_count: int) -> KernelSpec:
    """numpy.take_along_axis: the output's coordinates, with the one on `axis`
    replaced by the index there."""
    xs, ys = shape(op.input), shape(op.result)
    axis = int_of(op.axis) % len(xs)
    xst = strides(xs)
    terms = [f"{_coord('i', k, ys)} * {xst[k]}LL" for k in range(len(ys)) if k != axis and ys[k] != 1]
    terms.append(f"q * {xst[axis]}LL")
    lines = [_index("q", xs[axis], "ids[i]"), f"y[i] = x[{' + '.join(terms)}];"]
    return injective("gather_elements", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)


def gather_nd_kernel(op: rlx.GatherNDOp, sm_count: int) -> KernelSpec:
    """ONNX GatherND: output element i is slice element `r` of index tuple `j`
    (i = j * slice + r); the tuple's batch is j / tuples-per-batch."""
    xs, ids = shape(op.input), shape(op.indices)
    b = int_of(op.batch_dims)
    m = ids[-1]
    xst = strides(xs)
    inner = numel(xs[b + m :])  # elements per gathered slice
    per_batch = numel(ids[b:-1])  # index tuples per batch
    lines = [
        f"const long long r = i % {inner}LL, j = i / {inner}LL;",
        f"long long src = (j / {per_batch}LL) * {numel(xs[b:])}LL + r;",
    ]
    for t in range(m):
        lines.append(_index(f"q{t}", xs[b + t], f"ids[j * {m}LL + {t}]"))
        lines.append(f"src += q{t} * {xst[b + t]}LL;")
    lines.append("y[i] = x[src];")
    return injective("gather_nd", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)


def _scatter_apply(t: Attribute, reduction: str) -> str:
    """The statement combining update `u[j]` into `y[dst]`."""
    name = dtype_name(t)
    if reduction == "none":
        return "y[dst] = u[j];"
    op = {"add": "RlxSum", "mul": "RlxProd", "max": "RlxMax", "min": "RlxMin"}[reduction]
    if name in ("f16", "bf16"):
        return f"rlx_atomic16<{'true' if name == 'bf16' else 'false'}>(y + dst, {load('u[j]', t)}, {op}());"
    native = {("f32", "add"): "atomicAdd(y + dst, u[j]);", ("i32", "add"): "atomicAdd(y + dst, u[j]);",
              ("i32", "max"): "atomicMax(y + dst, u[j]);", ("i32", "min"): "atomicMin(y + dst, u[j]);",
              ("i64", "add"): "atomicAdd(reinterpret_cast<unsigned long long*>(y + dst), (unsigned long long)u[j]);",
              ("i64", "max"): "atomicMax(y + dst, u[j]);", ("i64", "min"): "atomicMin(y + dst, u[j]);"}
    return native.get((name, reduction), f"rlx_atomic(y + dst, u[j], {op}());")


#: Blocks per multiprocessor at most in the scatter kernel, whose blocks all
#: wait for each other between its two phases (so they must be resident
#: together: the runtime checks the device holds them).
SCATTER_BLOCKS_PER_SM = 2


def scatter_nd_kernel(op: rlx.ScatterNDOp, sm_count: int) -> KernelSpec:
    """ONNX ScatterND in one launch of G co-resident blocks: the input
    copied to the output (grid-stride), every block's arrival counted and
    waited for (`rlx_arrive_and_wait`: the counter only grows, a launch's
    round is its count / G), then a thread per update element: its slice's
    index tuple (negative indices counted from the end, then clamped, as the
    gathers' are) gives the output element, written (reduction "none") or
    combined atomically (add, mul, max, min: native atomics where CUDA has
    them, else a compare-and-swap loop; f16/bf16 in f32 on their 32-bit
    word). Duplicate tuples with "none" leave one of their writes."""
    xs, ids = shape(op.input), shape(op.indices)
    t = eltype(op.input)
    k = ids[-1]
    xst = strides(xs)
    inner = numel(xs[k:])
    n, m = numel(xs), numel(shape(op.updates))
    blocks = max(1, min(-(-max(n, m) // BLOCK_THREADS), max(1, sm_count) * SCATTER_BLOCKS_PER_SM))
    decl = params_decl([("x", op.input, False), ("ids", op.indices, False), ("u", op.updates, False),
                        ("y", op.result, True)])
    dst = [f"const long long r = j % {inner}LL, tp = j / {inner}LL;", "long long dst = r;"]
    for a in range(k):
        dst.append(_index(f"q{a}", xs[a], f"ids[tp * {k}LL + {a}]"))
        dst.append(f"dst += q{a} * {xst[a]}LL;")
    src = [
        f"// scatter_nd: reduction {op.reduction.data}, {blocks} co-resident blocks: copy, wait for all, scatter",
        "__device__ unsigned long long ENTRY_arrived = 0;  // blocks arrived, over all launches",
        f'extern "C" __global__ void __launch_bounds__({BLOCK_THREADS}) ENTRY({decl}) {{',
        "  const long long stride = (long long)gridDim.x * blockDim.x;",
        "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
        f"  for (long long i = first; i < {n}LL; i += stride) y[i] = x[i];",
        "  __threadfence();",
        "  __syncthreads();",
        f"  if (threadIdx.x == 0) rlx_arrive_and_wait<{blocks}>(&ENTRY_arrived);",
        "  __syncthreads();",
        f"  for (long long j = first; j < {m}LL; j += stride) {{",
        *("    " + line for line in dst),
        "    " + _scatter_apply(t, op.reduction.data),
        "  }",
        "}",
    ]
    params: list[Buf | int] = [Buf(op.input), Buf(op.indices), Buf(op.updates), Buf(op.result, True)]
    return KernelSpec("scatter_nd", "\n".join(src) + "\n", params, blocks, BLOCK_THREADS, co_resident=blocks)


#: rope in pairs of vector items where half a row allows (`_rope_pairs`); off: an element a thread
ROPE_PAIRS = True


def rope_kernel(op: rlx.RopeOp, sm_count: int) -> KernelSpec:
    """Rotary position embedding, rotate-half form: y = x * cos +
    rotate_half(x) * sin, where rotate_half(x)[d] is -x[d + D/2] for d < D/2
    and x[d - D/2] after; cos and sin broadcast to x (their last axis is
    x's: `RopeOp.native_on`). The math in f32, rounded once, as the
    interpreter rounds its wide result once.

    Where D/2 splits into vectors of 16, 8 or 4 bytes (f32 and 16-bit
    types), each thread takes one vector of each half of a row and writes
    both (`_rope_pairs`: each x element read once, f16/bf16 converted in
    pairs); otherwise an element a thread, reading x at d and at the other
    half."""
    xs, cs = shape(op.input), shape(op.cos)
    t = eltype(op.input)
    d, h = xs[-1], xs[-1] // 2
    nb = dtype(t).bytes
    vw = vector_elems(nb, [h]) if nb in (2, 4) and ROPE_PAIRS else 1
    if vw > 1:
        return _rope_pairs(op, xs, cs, vw)
    x, xlo, xhi = load("x[i]", t), load(f"x[i - {h}LL]", t), load(f"x[i + {h}LL]", t)
    c, s = load("c[ci]", t), load("s[ci]", t)
    lines = [
        "// rope form: an element a thread",
        f"const float xr = i % {d}LL < {h}LL ? -{xhi} : {xlo};  // rotate_half(x)",
        f"const long long ci = {index_expr('i', xs, cs)};",
        f"y[i] = {store(f'{x} * {c} + xr * {s}', t)};",
    ]
    return injective("rope", op.result, [("x", op.input), ("c", op.cos), ("s", op.sin)], lines, sm_count)


def _rope_pairs(op: rlx.RopeOp, xs: list[int], cs: list[int], vw: int) -> KernelSpec:
    """rope over pairs of `vw`-element items: item k of a row's first half
    and item k of its second, whose outputs read exactly those two
    (y_lo = x_lo * c_lo - x_hi * s_lo, y_hi = x_hi * c_hi + x_lo * s_hi);
    cos/sin read as items at the broadcast index (their last axis is x's,
    so an item's elements are adjacent there too). The same f32 expression
    per element as the element form, so both round alike."""
    t = eltype(op.input)
    nb = dtype(t).bytes
    item = _RAW[vw * nb]
    hv = xs[-1] // 2 // vw  # items per half row
    pairs = numel(xs) // (2 * vw)
    idx_t, sfx = index_kind([op.input])
    vx, vc = vshape(xs, vw), vshape(cs, vw)

    decl = params_decl([("x_", op.input, False), ("c_", op.cos, False), ("s_", op.sin, False), ("y_", op.result, True)])
    src = [f"// rope form: a pair of {vw}-element items a thread ({vw * nb}-byte accesses), "
           f"item k of each half of a row of {xs[-1]}",
           f'extern "C" __global__ void __launch_bounds__({BLOCK_THREADS}) ENTRY({decl}) {{']
    for name in "xcs":
        src.append(f"  const {item}* __restrict__ {name} = reinterpret_cast<const {item}*>({name}_);")
    src.append(f"  {item}* __restrict__ y = reinterpret_cast<{item}*>(y_);")
    src.append(f"  const {idx_t} p = ({idx_t})blockIdx.x * {BLOCK_THREADS}{sfx} + threadIdx.x;")
    src.append(f"  if (p >= {pairs}{sfx}) return;")
    src.append(f"  const {idx_t} lo = p / {hv}{sfx} * {2 * hv}{sfx} + p % {hv}{sfx}, hi = lo + {hv}{sfx};")
    src.append(f"  const {idx_t} clo = {index_expr('lo', vx, vc, suffix=sfx)}, chi = {index_expr('hi', vx, vc, suffix=sfx)};")
    src.append(f"  const {item} xl = x[lo], xh = x[hi], cl = c[clo], ch = c[chi], sl = s[clo], sh = s[chi];")
    for var in ("xl", "xh", "cl", "ch", "sl", "sh"):
        src.append(f"  float f{var}[{vw}];")
        src.extend("  " + line for line in unpack_item(var, f"f{var}", vw, t))
    src.append(f"  float yl[{vw}], yh[{vw}];")
    src.append("  #pragma unroll")
    src.append(f"  for (int e = 0; e < {vw}; ++e) {{")
    src.append("    const float xr = -fxh[e];  // rotate_half(x) in the first half")
    src.append("    yl[e] = fxl[e] * fcl[e] + xr * fsl[e];")
    src.append("    yh[e] = fxh[e] * fch[e] + fxl[e] * fsh[e];")
    src.append("  }")
    src.append(f"  y[lo] = {pack_item('yl', vw, t)};")
    src.append(f"  y[hi] = {pack_item('yh', vw, t)};")
    src.append("}")
    params: list[Buf | int] = [Buf(op.input), Buf(op.cos), Buf(op.sin), Buf(op.result, True)]
    return KernelSpec("rope", "\n".join(src) + "\n", params, -(-pairs // BLOCK_THREADS), BLOCK_THREADS)

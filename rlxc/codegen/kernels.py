"""Kernel templates: one generated CUDA C++ kernel per region or op.

Each `*_kernel` function returns a `KernelSpec`: the source (with one
`extern "C" __global__` entry), the launch geometry and the kernel's
parameters in order, as buffer references (`Buf`) or scalars. Shapes are
static, so extents and strides are baked into the source as constants and
the compiler turns index divisions into multiplications.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, SSAValue

from rlxc.codegen.cuda_c import (
    PREAMBLE,
    compute_type,
    literal,
    load,
    render_scalar,
    storage_type,
    store,
)
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype, dtype_name, is_float, is_int

THREADS = 256
#: Vectors (float4 where the dtype allows, else single elements) each thread
#: of an elementwise kernel loads and stores, all loads issued before any use.
#: Each thread makes one trip (no grid-stride loop): on an H200 this shape
#: reached 92.6% of the 1 GiB copy bandwidth where a persistent grid-stride
#: loop reached 86-88%, and unroll 2 and 8 lost on the transcendental chain
#: (`benchmarks/ew_variants.py`, benchmarks/RESULTS.md).
UNROLL = 4

REDUCE_PREAMBLE = r"""
struct RlxSum { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct RlxProd { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct RlxMax {
  __device__ __forceinline__ float operator()(float a, float b) const { return rlx_maxf(a, b); }
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }
};
struct RlxMin {
  __device__ __forceinline__ float operator()(float a, float b) const { return rlx_minf(a, b); }
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? a : b; }
};
// Online softmax state: the running max and the sum of exp(x - max).
struct RlxMS { float m, s; };
struct RlxMSMerge {
  __device__ __forceinline__ RlxMS operator()(RlxMS a, RlxMS b) const {
    const float m = fmaxf(a.m, b.m);  // never NaN: NaN inputs go into s
    return {m, (a.s == 0.0f ? 0.0f : a.s * expf(a.m - m)) + (b.s == 0.0f ? 0.0f : b.s * expf(b.m - m))};
  }
};
__device__ __forceinline__ void rlx_ms_add(RlxMS& a, float v) {
  if (v > a.m) { a.s = a.s * expf(a.m - v) + 1.0f; a.m = v; }
  else if (v != -RLX_INF) a.s += expf(v - a.m);  // NaN and +inf make s NaN, as in two passes
}
// Welford state: count, mean, sum of squared deviations (Chan's merge).
struct RlxWelford { float n, mean, m2; };
struct RlxWelfordMerge {
  __device__ __forceinline__ RlxWelford operator()(RlxWelford a, RlxWelford b) const {
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    const float n = a.n + b.n, d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
  }
};
__device__ __forceinline__ void rlx_welford_add(RlxWelford& a, float v) {
  a.n += 1.0f;
  const float d = v - a.mean;
  a.mean += d / a.n;
  a.m2 += d * (v - a.mean);
}
template <typename T> __device__ __forceinline__ T rlx_shfl(T v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ RlxMS rlx_shfl(RlxMS v, int o) { return {rlx_shfl(v.m, o), rlx_shfl(v.s, o)}; }
__device__ __forceinline__ RlxWelford rlx_shfl(RlxWelford v, int o) { return {rlx_shfl(v.n, o), rlx_shfl(v.mean, o), rlx_shfl(v.m2, o)}; }
// Reduces v over the block; every thread gets the result. smem holds 32 T.
template <typename T, typename Op>
__device__ __forceinline__ T rlx_block_reduce(T v, Op op, T identity, T* smem) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nw ? smem[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, rlx_shfl(v, o));
    if (lane == 0) smem[0] = v;
  }
  __syncthreads();
  return smem[0];
}
"""


@dataclass(frozen=True)
class Buf:
    """A kernel parameter that points at a tensor (resolved to a location later)."""

    value: SSAValue
    writable: bool = False


@dataclass
class KernelSpec:
    """A generated kernel and how to launch it."""

    family: str
    body: str  # the kernel's code, entry named ENTRY
    params: list[Buf | int] = field(default_factory=list)
    grid: int = 1
    block: int = THREADS
    smem: int = 0

    @property
    def entry(self) -> str:
        digest = hashlib.sha256(self.body.encode()).hexdigest()[:12]
        return f"rlx_{self.family}_{digest}"

    @property
    def source(self) -> str:
        return PREAMBLE + self.body.replace("ENTRY", self.entry)


# --------------------------------------------------------------------------- helpers


def shape(v: SSAValue | Attribute) -> tuple[int, ...]:
    t = v.type if isinstance(v, SSAValue) else v
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def eltype(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, TensorType)
    return t.get_element_type()


def numel(s: Sequence[int]) -> int:
    return math.prod(s)


def strides(s: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(s):
        out.append(acc)
        acc *= d
    return out[::-1]


def index_expr(i: str, coords_of: Sequence[int], src_shape: Sequence[int], src_strides: Sequence[int] | None = None,
               suffix: str = "LL") -> str:
    """Offset into a tensor of `src_shape` (broadcast to `coords_of`, aligned
    right) at linear index `i` of the `coords_of` shape. `suffix` types the
    constants: "LL" (64-bit) or "u" (32-bit unsigned, for an unsigned `i`;
    its divisions by constants are far cheaper)."""
    if tuple(src_shape) == tuple(coords_of) and src_strides is None:
        return i
    if numel(src_shape) == 1 and src_strides is None:
        return "0"
    out_strides = strides(coords_of)
    st = list(src_strides) if src_strides is not None else strides(src_shape)
    lead = len(coords_of) - len(src_shape)
    terms = []
    for k, (d, s) in enumerate(zip(src_shape, st)):
        ok = k + lead
        if d == 1 and src_strides is None or coords_of[ok] == 1:
            continue
        c = f"({i} / {out_strides[ok]}{suffix})" if out_strides[ok] != 1 else i
        if ok != 0:
            c = f"({c} % {coords_of[ok]}{suffix})"
        terms.append(c if s == 1 else f"{c} * {s}{suffix}")
    return " + ".join(terms) if terms else "0"


def grid_for(work: int, sm_count: int, threads: int = THREADS, per_sm: int = 8) -> int:
    """A grid-stride loop's grid: enough blocks to fill the device, no more."""
    return max(1, min((work + threads - 1) // threads, sm_count * per_sm))


def params_decl(bufs: Sequence[tuple[str, SSAValue, bool]]) -> str:
    parts = []
    for name, v, writable in bufs:
        c = storage_type(eltype(v))
        parts.append(f"{c}* __restrict__ {name}" if writable else f"const {c}* __restrict__ {name}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- elementwise

def _vector_type(t: Attribute) -> str | None:
    return dtype(t).c_vector


def index_type(n: int) -> tuple[str, str]:
    """(C type, constant suffix) for indices below `n` plus one block's reach:
    32-bit unsigned where it fits, else 64-bit."""
    return ("unsigned", "u") if n + 4 * THREADS * UNROLL < 2**31 else ("long long", "LL")


def elementwise_kernel(op: rlx.ElementwiseRegionOp, sm_count: int) -> KernelSpec:
    """Straight-line C++ from the region body. Each thread owns UNROLL
    vectors: 16-byte loads and stores (4 elements) of the full-shape buffers
    when the element count allows, else single elements; broadcast inputs are
    read per element through per-input strides."""
    out_shape = shape(op.outputs[0])
    n = numel(out_shape)
    block: Block = op.body.block
    ins = list(op.inputs)
    outs = list(op.outputs)
    vec = n % 4 == 0 and n >= 4
    idx_t, sfx = index_type(n)
    names: dict[SSAValue, str] = {}
    yields = list(block.last_op.operands)  # pyright: ignore[reportOptionalMemberAccess]

    def vector_type(t: Attribute) -> str | None:
        return _vector_type(t) if vec else storage_type(t)

    held = [j for j, x in enumerate(ins) if shape(x) == out_shape and vector_type(eltype(x))]

    def body_lines() -> list[str]:
        # Vectors are unpacked into q{j}[l] / packed from r{j}[l]; single
        # elements go straight from p{j}[u] and to out{j}[w].
        out = []
        for j, (arg, x) in enumerate(zip(block.args, ins)):
            if j in held:
                value = f"q{j}[l]" if vec else load(f"p{j}[u]", eltype(x))
            else:
                value = load(f"in{j}[{index_expr('i', out_shape, shape(x), suffix=sfx)}]", eltype(x))
            out.append(f"const {compute_type(arg.type)} a{j} = {value};")
            names[arg] = f"a{j}"
        for k, v in enumerate(block.ops):
            if isinstance(v, rlx.YieldOp):
                continue
            operands = [names[x] for x in v.operands]
            out.append(f"const {compute_type(v.results[0].type)} v{k} = {render_scalar(v, operands)};")
            names[v.results[0]] = f"v{k}"
        for j, (y, r) in enumerate(zip(yields, outs)):
            target = f"r{j}[l]" if vec else f"out{j}[w]"
            out.append(f"{target} = {store(names[y], eltype(r))};")
        return out

    decl = params_decl(
        [(f"in{j}", x, False) for j, x in enumerate(ins)]
        + [(f"out{j}", r, True) for j, r in enumerate(outs)]
    )
    nv = n // 4 if vec else n
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    src.append(f"  const {idx_t} w0 = ({idx_t})blockIdx.x * {THREADS * UNROLL}{sfx} + threadIdx.x;")
    for j in held:
        src.append(f"  {vector_type(eltype(ins[j]))} p{j}[{UNROLL}];")
    if held:
        src.append("  #pragma unroll")
        src.append(f"  for (int u = 0; u < {UNROLL}; ++u) {{")
        src.append(f"    const {idx_t} w = w0 + u * {THREADS}{sfx};")
        src.append(f"    if (w < {nv}{sfx}) {{")
        for j in held:
            vt = vector_type(eltype(ins[j]))
            src.append(f"      p{j}[u] = reinterpret_cast<const {vt}*>(in{j})[w];" if vec else f"      p{j}[u] = in{j}[w];")
        src.append("    }")
        src.append("  }")
    src.append("  #pragma unroll")
    src.append(f"  for (int u = 0; u < {UNROLL}; ++u) {{")
    src.append(f"    const {idx_t} w = w0 + u * {THREADS}{sfx};")
    src.append(f"    if (w >= {nv}{sfx}) break;")
    if not vec:
        if len(held) < len(ins):
            src.append(f"    const {idx_t} i = w;")
        src.extend("    " + line for line in body_lines())
    else:
        for j in held:
            parts = ", ".join(load(f"p{j}[u].{c}", eltype(ins[j])) for c in "xyzw")
            src.append(f"    const {compute_type(eltype(ins[j]))} q{j}[4] = {{{parts}}};")
        for j, r in enumerate(outs):
            src.append(f"    {storage_type(eltype(r))} r{j}[4];")
        src.append("    #pragma unroll")
        src.append("    for (int l = 0; l < 4; ++l) {")
        if len(held) < len(ins):
            src.append(f"      const {idx_t} i = w * 4{sfx} + l;")
        src.extend("      " + line for line in body_lines())
        src.append("    }")
        for j, r in enumerate(outs):
            vt = vector_type(eltype(r))
            if vt:
                src.append(f"    reinterpret_cast<{vt}*>(out{j})[w] = make_{vt}(r{j}[0], r{j}[1], r{j}[2], r{j}[3]);")
            else:
                src.append(f"    for (int l = 0; l < 4; ++l) out{j}[w * 4{sfx} + l] = r{j}[l];")
    src.append("  }")
    src.append("}")
    params: list[Buf | int] = [Buf(x) for x in ins] + [Buf(r, True) for r in outs]
    grid = -(-nv // (THREADS * UNROLL))
    return KernelSpec("ew", "\n".join(src) + "\n", params, grid)


# --------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Rows:
    """A tensor seen as rows: the reduced axes form a row, the kept axes index rows."""

    rows: int
    cols: int
    row_base: str  # offset of element 0 of row `r`
    col_off: str  # offset of element `k` within the row

    @staticmethod
    def of(s: Sequence[int], axes: Sequence[int]) -> Rows:
        st = strides(s)
        axes = sorted(a % len(s) for a in axes)
        kept = [a for a in range(len(s)) if a not in axes]
        rows = numel([s[a] for a in kept])
        cols = numel([s[a] for a in axes])

        def expr(var: str, group: list[int]) -> str:
            sub = [s[a] for a in group]
            sub_st = strides(sub)
            terms = []
            for a, gs in zip(group, sub_st):
                if s[a] == 1:
                    continue
                c = f"({var} / {gs}LL)" if gs != 1 else var
                if gs * s[a] != numel(sub):
                    c = f"({c} % {s[a]}LL)"
                terms.append(c if st[a] == 1 else f"{c} * {st[a]}LL")
            return " + ".join(terms) if terms else "0"

        trailing = axes == list(range(len(s) - len(axes), len(s)))
        if trailing:
            return Rows(rows, cols, f"r * {cols}LL", "k")
        return Rows(rows, cols, expr("r", kept), expr("k", axes))


def _row_loop(body: list[str], rows: Rows) -> list[str]:
    return [
        f"  for (long long r = blockIdx.x; r < {rows.rows}LL; r += gridDim.x) {{",
        f"    const long long base = {rows.row_base};",
        *("    " + b for b in body),
        "  }",
    ]


def _cols(body: str, rows: Rows) -> str:
    return f"for (long long k = threadIdx.x; k < {rows.cols}LL; k += blockDim.x) {{ const long long o = base + ({rows.col_off}); {body} }}"


_REDUCERS = {
    rlx.ReduceSumOp: ("RlxSum", "0"),
    rlx.ReduceMeanOp: ("RlxSum", "0"),
    rlx.ReduceProdOp: ("RlxProd", "1"),
    rlx.ReduceMaxOp: ("RlxMax", "-RLX_INF"),
    rlx.ReduceMinOp: ("RlxMin", "RLX_INF"),
}


def _acc_type(t: Attribute) -> str:
    return "long long" if is_int(t) else "float"


def _row_kernel(decl: str, body: list[str], rows: Rows, smem_type: str = "float") -> str:
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    src.append(f"  __shared__ {smem_type} smem[32];")
    src.extend(_row_loop(body, rows))
    src.append("}")
    return REDUCE_PREAMBLE + "\n".join(src) + "\n"


#: Column reductions: outputs per block (one per lane) and warps per block
#: (each walking every COLUMN_WARPS-th reduced element).
COLUMN_WARPS = THREADS // 32


def reduce_kernel(op: rlx.ReduceOp, sm_count: int) -> KernelSpec:
    """f32 (or i64) accumulation. A block per output element (row) when the
    reduced elements are contiguous or the outputs few; a column kernel when
    the innermost axis is kept and there are outputs enough to fill the
    device: 32 adjacent outputs per block, so every load is coalesced."""
    x, y = op.input, op.result
    xs = shape(x)
    axes = sorted(a % len(xs) for a in rlx._ints(op.axes)) if xs else []
    rows = Rows.of(xs, axes)
    reducer, ident = _REDUCERS[type(op)]
    acc = _acc_type(eltype(x))
    if acc != "float":
        ident = {"-RLX_INF": "(-9223372036854775807LL - 1)", "RLX_INF": "9223372036854775807LL"}.get(ident, ident)
    finish = "acc" if not isinstance(op, rlx.ReduceMeanOp) else f"acc / (float){rows.cols}"
    decl = params_decl([("x", x, False), ("y", y, True)])
    if xs and len(xs) - 1 not in axes and xs[-1] > 1 and rows.cols > 1 and -(-rows.rows // 32) >= 2 * sm_count:
        src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
        src += [
            f"  __shared__ {acc} part[{COLUMN_WARPS}][33];",
            "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
            f"  for (long long rb = blockIdx.x * 32LL; rb < {rows.rows}LL; rb += gridDim.x * 32LL) {{",
            "    const long long r = rb + lane;",
            f"    {acc} acc = {ident};",
            f"    if (r < {rows.rows}LL) {{",
            f"      const long long base = {rows.row_base};",
            "      #pragma unroll 4",
            f"      for (long long k = warp; k < {rows.cols}LL; k += {COLUMN_WARPS}) {{",
            f"        acc = {reducer}()(acc, ({acc}){load(f'x[base + ({rows.col_off})]', eltype(x))});",
            "      }",
            "    }",
            "    part[warp][lane] = acc;",
            "    __syncthreads();",
            f"    if (warp == 0 && r < {rows.rows}LL) {{",
            f"      for (int j = 1; j < {COLUMN_WARPS}; ++j) acc = {reducer}()(acc, part[j][lane]);",
            f"      y[r] = {store(f'({compute_type(eltype(y))})({finish})', eltype(y))};",
            "    }",
            "    __syncthreads();",
            "  }",
            "}",
        ]
        grid = min(-(-rows.rows // 32), sm_count * 8)
        return KernelSpec("reduce_cols", REDUCE_PREAMBLE + "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)
    body = [
        f"{acc} acc = {ident};",
        _cols(f"acc = {reducer}()(acc, ({acc}){load('x[o]', eltype(x))});", rows),
        f"acc = rlx_block_reduce(acc, {reducer}(), ({acc}){ident}, smem);",
        f"if (threadIdx.x == 0) y[r] = {store(f'({compute_type(eltype(y))})({finish})', eltype(y))};",
    ]
    return KernelSpec("reduce", _row_kernel(decl, body, rows, acc), [Buf(x), Buf(y, True)],
                      min(rows.rows, sm_count * 16))


def argmax_kernel(op: rlx.ArgMaxOp, sm_count: int) -> KernelSpec:
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [rlx._int(op.axis)])
    acc = "float" if is_float(eltype(x)) else "long long"
    body = [
        f"{acc} bv = 0; long long bi = -1;",
        _cols(
            f"const {acc} v = ({acc}){load('x[o]', eltype(x))}; "
            "if (bi < 0 || (v != v && bv == bv) || (v > bv && bv == bv)) { bv = v; bi = k; }",
            rows,
        ),
        "for (int s = 16; s > 0; s >>= 1) {",
        f"  const {acc} ov = __shfl_xor_sync(0xffffffffu, bv, s); const long long oi = __shfl_xor_sync(0xffffffffu, bi, s);",
        "  if (oi >= 0 && (bi < 0 || rlx_argmax_better(ov, oi, bv, bi))) { bv = ov; bi = oi; }",
        "}",
        "__syncthreads();",
        "if ((threadIdx.x & 31) == 0) { vs[threadIdx.x >> 5] = bv; is[threadIdx.x >> 5] = bi; }",
        "__syncthreads();",
        "if (threadIdx.x == 0) {",
        "  for (int w = 1; w < (blockDim.x + 31) / 32; ++w)",
        "    if (is[w] >= 0 && (bi < 0 || rlx_argmax_better(vs[w], is[w], bv, bi))) { bv = vs[w]; bi = is[w]; }",
        "  y[r] = bi;",
        "}",
    ]
    decl = params_decl([("x", x, False), ("y", y, True)])
    helper = (
        f"__device__ __forceinline__ bool rlx_argmax_better({acc} av, long long ai, {acc} bv, long long bi) {{\n"
        "  const bool an = av != av, bn = bv != bv;  // NaN is the largest, as numpy.argmax\n"
        "  if (an || bn) return an && (!bn || ai < bi);\n"
        "  return av > bv || (av == bv && ai < bi);\n}\n"
    )
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    src.append(f"  __shared__ {acc} vs[32]; __shared__ long long is[32];")
    src.extend(_row_loop(body, rows))
    src.append("}")
    return KernelSpec("argmax", helper + "\n".join(src) + "\n", [Buf(x), Buf(y, True)],
                      min(rows.rows, sm_count * 16))


#: Rows up to this many elements are kept in registers: read once, written once.
CACHED_ROW_MAX = 8192


@dataclass(frozen=True)
class CachedRow:
    """Code for a row held in registers: `v[j]` for j < `items`, element
    column `col(j)`; f32 rows whose length is a multiple of 4 * THREADS move
    as float4."""

    cols: int
    t: Attribute

    @property
    def vec(self) -> bool:
        return dtype_name(self.t) == "f32" and self.cols % (4 * THREADS) == 0

    @property
    def items(self) -> int:
        return -(-self.cols // THREADS) if not self.vec else self.cols // THREADS

    def col(self, j: str) -> str:
        if self.vec:
            return f"(4 * (threadIdx.x + (long long)({j} / 4) * {THREADS}) + ({j} % 4))"
        return f"(threadIdx.x + (long long){j} * {THREADS})"

    def load(self, buf: str, into: str = "v") -> list[str]:
        if self.vec:
            return [
                f"float {into}[{self.items}];",
                "#pragma unroll",
                f"for (int j = 0; j < {self.items // 4}; ++j) {{",
                f"  const float4 q = reinterpret_cast<const float4*>({buf} + base)[threadIdx.x + j * {THREADS}];",
                f"  {into}[4 * j] = q.x; {into}[4 * j + 1] = q.y; {into}[4 * j + 2] = q.z; {into}[4 * j + 3] = q.w;",
                "}",
            ]
        return [
            f"float {into}[{self.items}];",
            "#pragma unroll",
            f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
            f"{into}[j] = k < {self.cols}LL ? {load(f'{buf}[base + k]', self.t)} : 0.0f; }}",
        ]

    def each(self, body: str) -> list[str]:
        """`body` for every cached element j that is inside the row (k valid)."""
        guard = "" if self.vec or self.cols % THREADS == 0 else f"if (k < {self.cols}LL) "
        return [
            "#pragma unroll",
            f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; {guard}{{ {body} }} }}",
        ]

    def store(self, buf: str, expr_of_j: str) -> list[str]:
        """Writes expr (in terms of v[j], k) to buf[base + k]."""
        if self.vec:
            parts = ", ".join(expr_of_j.replace("[j]", f"[4 * j + {c}]").replace("kk", f"(4 * (threadIdx.x + (long long)j * {THREADS}) + {c})") for c in range(4))
            return [
                "#pragma unroll",
                f"for (int j = 0; j < {self.items // 4}; ++j) "
                f"reinterpret_cast<float4*>({buf} + base)[threadIdx.x + j * {THREADS}] = make_float4({parts});",
            ]
        return self.each(f"{buf}[base + k] = {store(expr_of_j.replace('kk', 'k'), self.t)};")


def _cached(rows: Rows) -> bool:
    return rows.col_off == "k" and rows.cols <= CACHED_ROW_MAX


def _vec_long(rows: Rows, t: Attribute) -> bool:
    """A long contiguous f32 row that moves as float4 in the looping form."""
    return rows.col_off == "k" and dtype_name(t) == "f32" and rows.cols % 4 == 0


def _vec_loop(rows: Rows, lines: list[str]) -> list[str]:
    """`lines` for every float4 `k4` of row `r`, 4 trips unrolled so that
    their loads are in flight together."""
    return [
        "#pragma unroll 4",
        f"for (long long k4 = threadIdx.x; k4 < {rows.cols // 4}LL; k4 += blockDim.x) {{",
        *("  " + line for line in lines),
        "}",
    ]


def _ld4(buf: str, offset: str = "base") -> str:
    return f"reinterpret_cast<const float4*>({buf} + {offset})[k4]"


def _st4(buf: str, parts: Callable[[str], str]) -> str:
    return f"reinterpret_cast<float4*>({buf} + base)[k4] = make_float4({', '.join(parts(c) for c in 'xyzw')});"


def softmax_kernel(op: rlx.SoftmaxOp | rlx.LogSoftmaxOp, sm_count: int) -> KernelSpec:
    """Max-subtracted softmax / log_softmax along an axis, a block per row:
    rows up to CACHED_ROW_MAX held in registers (one read), longer or strided
    rows read twice (online max and sum, then the write)."""
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [rlx._int(op.axis)])
    t = eltype(x)
    log = isinstance(op, rlx.LogSoftmaxOp)
    if _cached(rows):
        row = CachedRow(rows.cols, t)
        ident = "-RLX_INF"
        body = [
            *row.load("x"),
            f"float m = {ident};",
            *row.each("m = rlx_maxf(m, v[j]);"),
            f"m = rlx_block_reduce(m, RlxMax(), {ident}, smem);",
            "float s = 0.0f;",
            *row.each("v[j] = v[j] - m; s += expf(v[j]);" if log else "v[j] = expf(v[j] - m); s += v[j];"),
            "s = rlx_block_reduce(s, RlxSum(), 0.0f, smem);",
            "const float ls = logf(s), inv = 1.0f / s;",
            *row.store("y", "v[j] - ls" if log else "v[j] * inv"),
        ]
    else:
        # Long rows: online softmax (max and sum in one read), then the write.
        if _vec_long(rows, t):
            out = (lambda c: f"(q.{c} - m) - ls") if log else (lambda c: f"expf(q.{c} - m) * inv")
            read = _vec_loop(rows, [f"const float4 q = {_ld4('x')};", " ".join(f"rlx_ms_add(st, q.{c});" for c in "xyzw")])
            write = _vec_loop(rows, [f"const float4 q = {_ld4('x')};", _st4("y", out)])
        else:
            read = [_cols(f"rlx_ms_add(st, {load('x[o]', t)});", rows)]
            value = store("(v - m) - ls" if log else "expf(v - m) * inv", t)
            write = [_cols(f"const float v = {load('x[o]', t)}; y[o] = {value};", rows)]
        body = [
            "__shared__ RlxMS ms_smem[32];",
            "RlxMS st = {-RLX_INF, 0.0f};",
            *read,
            "st = rlx_block_reduce(st, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem);",
            "const float m = st.m, ls = logf(st.s), inv = 1.0f / st.s;",
            *write,
        ]
    decl = params_decl([("x", x, False), ("y", y, True)])
    return KernelSpec("softmax", _row_kernel(decl, body, rows), [Buf(x), Buf(y, True)],
                      min(rows.rows, sm_count * 16))


def norm_kernel(op: rlx.LayerNormOp | rlx.RmsNormOp | rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp, sm_count: int) -> KernelSpec:
    """layer_norm / rms_norm over gamma's trailing axes, a block per row, f32
    statistics: two-pass variance for rows held in registers, Welford's for
    longer rows; the fused forms also write x + residual."""
    x = op.input
    t = eltype(x)
    g = op.gamma
    nd = len(shape(g))
    rows = Rows.of(shape(x), list(range(len(shape(x)) - nd, len(shape(x)))))
    layer = isinstance(op, rlx.LayerNormOp | rlx.FusedResidualLayerNormOp)
    fused = isinstance(op, rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp)
    eps = rlx._float(op.eps)
    bufs: list[tuple[str, SSAValue, bool]] = [("x", x, False)]
    params: list[Buf | int] = [Buf(x)]
    if fused:
        bufs.append(("res", op.residual, False))  # pyright: ignore
        params.append(Buf(op.residual))  # pyright: ignore
    bufs.append(("g", g, False))
    params.append(Buf(g))
    if layer:
        bufs.append(("b", op.beta, False))  # pyright: ignore
        params.append(Buf(op.beta))  # pyright: ignore
    if fused:
        bufs.append(("sum", op.sum, True))  # pyright: ignore
        params.append(Buf(op.sum, True))  # pyright: ignore
        y = op.normed  # pyright: ignore
        src_buf = "sum"
    else:
        y = op.result  # pyright: ignore
        src_buf = "x"
    bufs.append(("y", y, True))
    params.append(Buf(y, True))
    body: list[str] = []
    if _cached(rows):
        row = CachedRow(rows.cols, t)
        body += row.load("x")
        if fused:
            body += row.load("res", "u")
            # the sum is a result in its own type; the norm reads it rounded
            rnd = {"f16": "rlx_round_f16", "bf16": "rlx_round_bf16"}.get(dtype_name(t), "")
            body += row.each(f"v[j] = {rnd}(v[j] + u[j]);")
            body += row.store("sum", "v[j]")
        n = f"{rows.cols}.0f"
        gk, bk = load("g[kk]", t), load("b[kk]", t) if layer else ""
        if layer:
            body += [
                "float s = 0.0f;",
                *row.each("s += v[j];"),
                f"const float mean = rlx_block_reduce(s, RlxSum(), 0.0f, smem) / {n};",
                "float q = 0.0f;",
                *row.each("v[j] -= mean; q += v[j] * v[j];"),
                f"const float inv = rsqrtf(rlx_block_reduce(q, RlxSum(), 0.0f, smem) / {n} + {literal(eps, t)});",
                *row.store("y", f"v[j] * inv * {gk} + {bk}"),
            ]
        else:
            body += [
                "float q = 0.0f;",
                *row.each("q += v[j] * v[j];"),
                f"const float inv = rsqrtf(rlx_block_reduce(q, RlxSum(), 0.0f, smem) / {n} + {literal(eps, t)});",
                *row.store("y", f"v[j] * inv * {gk}"),
            ]
    # Long rows: the statistics in one read (Welford for layer_norm; the
    # fused forms write the sum in that read), then the write.
    elif _vec_long(rows, t):
        first4 = [f"const float4 q = {_ld4('x')};"]
        if fused:
            first4 = [f"float4 q = {_ld4('x')}; const float4 p = {_ld4('res')};",
                      "q.x += p.x; q.y += p.y; q.z += p.z; q.w += p.w;", _st4("sum", lambda c: f"q.{c}")]
        last4 = [f"const float4 q = {_ld4(src_buf)}; const float4 gq = {_ld4('g', '0')};"]
        if layer:
            body += [
                "__shared__ RlxWelford w_smem[32];",
                "RlxWelford st = {0.0f, 0.0f, 0.0f};",
                *_vec_loop(rows, [*first4, "rlx_welford_add(st, q.x); rlx_welford_add(st, q.y); rlx_welford_add(st, q.z); rlx_welford_add(st, q.w);"]),
                "st = rlx_block_reduce(st, RlxWelfordMerge(), RlxWelford{0.0f, 0.0f, 0.0f}, w_smem);",
                f"const float mean = st.mean, inv = rsqrtf(st.m2 / {rows.cols}.0f + {literal(eps, t)});",
                *_vec_loop(rows, [*last4, f"const float4 bq = {_ld4('b', '0')};",
                                  _st4("y", lambda c: f"(q.{c} - mean) * inv * gq.{c} + bq.{c}")]),
            ]
        else:
            body += [
                "float ss = 0.0f;",
                *_vec_loop(rows, [*first4, "ss += q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;"]),
                f"const float inv = rsqrtf(rlx_block_reduce(ss, RlxSum(), 0.0f, smem) / {rows.cols}.0f + {literal(eps, t)});",
                *_vec_loop(rows, [*last4, _st4("y", lambda c: f"q.{c} * inv * gq.{c}")]),
            ]
    else:
        rnd = {"f16": "rlx_round_f16", "bf16": "rlx_round_bf16"}.get(dtype_name(t), "")
        first = (f"const float v = {rnd}({load('x[o]', t)} + {load('res[o]', t)}); sum[o] = {store('v', t)};"
                 if fused else f"const float v = {load('x[o]', t)};")
        rd = load(f"{src_buf}[o]", t)
        if layer:
            body += [
                "__shared__ RlxWelford w_smem[32];",
                "RlxWelford st = {0.0f, 0.0f, 0.0f};",
                _cols(f"{first} rlx_welford_add(st, v);", rows),
                "st = rlx_block_reduce(st, RlxWelfordMerge(), RlxWelford{0.0f, 0.0f, 0.0f}, w_smem);",
                f"const float mean = st.mean, inv = rsqrtf(st.m2 / {rows.cols}.0f + {literal(eps, t)});",
                _cols(f"y[o] = {store(f'({rd} - mean) * inv * ' + load('g[k]', t) + ' + ' + load('b[k]', t), t)};", rows),
            ]
        else:
            body += [
                "float q = 0.0f;",
                _cols(f"{first} q += v * v;", rows),
                f"const float inv = rsqrtf(rlx_block_reduce(q, RlxSum(), 0.0f, smem) / {rows.cols}.0f + {literal(eps, t)});",
                _cols(f"y[o] = {store(f'{rd} * inv * ' + load('g[k]', t), t)};", rows),
            ]
    # The trailing axes are contiguous, so `k` is also gamma's linear index.
    return KernelSpec("norm", _row_kernel(params_decl(bufs), body, rows), params,
                      min(rows.rows, sm_count * 16))


# --------------------------------------------------------------------------- injective


def _injective(family: str, out: SSAValue, ins: list[tuple[str, SSAValue]], expr_lines: list[str], sm_count: int) -> KernelSpec:
    n = numel(shape(out))
    decl = params_decl([(name, v, False) for name, v in ins] + [("y", out, True)])
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    src.append("  const long long stride = (long long)gridDim.x * blockDim.x;")
    src.append(f"  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < {n}LL; i += stride) {{")
    src.extend("    " + line for line in expr_lines)
    src.append("  }")
    src.append("}")
    params: list[Buf | int] = [Buf(v) for _, v in ins] + [Buf(out, True)]
    return KernelSpec(family, "\n".join(src) + "\n", params, grid_for(n, sm_count))


def transpose_kernel(op: rlx.TransposeOp, sm_count: int) -> KernelSpec:
    """Swapping the last two axes (a batched 2-D transpose) goes through a
    padded 32x32 shared-memory tile, so both reads and writes are coalesced;
    other permutations map each output index to its source directly."""
    perm = rlx._ints(op.perm)
    xs, ys = shape(op.input), shape(op.result)
    r = len(perm)
    if r >= 2 and perm[:-2] == list(range(r - 2)) and perm[-2:] == [r - 1, r - 2]:
        rows, cols = xs[-2], xs[-1]
        batch = numel(xs[:-2])
        c = storage_type(eltype(op.input))
        decl = params_decl([("x", op.input, False), ("y", op.result, True)])
        tiles_r, tiles_c = (rows + 31) // 32, (cols + 31) // 32
        body = f"""extern "C" __global__ void __launch_bounds__(256) ENTRY({decl}) {{
  __shared__ {c} tile[32][33];
  for (long long t = blockIdx.x; t < {batch * tiles_r * tiles_c}LL; t += gridDim.x) {{
    const long long b = t / {tiles_r * tiles_c}LL, tr = (t / {tiles_c}LL) % {tiles_r}LL, tc = t % {tiles_c}LL;
    const {c}* xb = x + b * {rows * cols}LL;
    {c}* yb = y + b * {rows * cols}LL;
    for (int j = threadIdx.x >> 5; j < 32; j += 8) {{
      const long long row = tr * 32 + j, col = tc * 32 + (threadIdx.x & 31);
      if (row < {rows}LL && col < {cols}LL) tile[j][threadIdx.x & 31] = xb[row * {cols}LL + col];
    }}
    __syncthreads();
    for (int j = threadIdx.x >> 5; j < 32; j += 8) {{
      const long long col = tc * 32 + j, row = tr * 32 + (threadIdx.x & 31);
      if (row < {rows}LL && col < {cols}LL) yb[col * {rows}LL + row] = tile[threadIdx.x & 31][j];
    }}
    __syncthreads();
  }}
}}
"""
        grid = max(1, min(batch * tiles_r * tiles_c, sm_count * 8))
        return KernelSpec("transpose_tiled", body, [Buf(op.input), Buf(op.result, True)], grid)
    xst = strides(xs)
    src_strides = [xst[p] for p in perm]
    expr = index_expr("i", ys, ys, src_strides)
    return _injective("transpose", op.result, [("x", op.input)], [f"y[i] = x[{expr}];"], sm_count)


def expand_kernel(op: rlx.ExpandOp, sm_count: int) -> KernelSpec:
    expr = index_expr("i", shape(op.result), shape(op.input))
    return _injective("expand", op.result, [("x", op.input)], [f"y[i] = x[{expr}];"], sm_count)


def slice_kernel(op: rlx.SliceOp, sm_count: int) -> KernelSpec:
    xs, ys = shape(op.input), shape(op.result)
    xst = strides(xs)
    starts, steps = rlx._ints(op.starts), rlx._ints(op.steps)
    base = sum(s * st for s, st in zip(starts, xst))
    expr = index_expr("i", ys, ys, [st * step for st, step in zip(xst, steps)])
    return _injective("slice", op.result, [("x", op.input)], [f"y[i] = x[{base}LL + {expr}];"], sm_count)


def concat_kernel(op: rlx.ConcatOp, sm_count: int) -> KernelSpec:
    ys = shape(op.result)
    axis = rlx._int(op.axis) % len(ys)
    ins = list(op.inputs)
    inner = numel(ys[axis + 1 :])
    lines = [
        f"const long long a = (i / {inner}LL) % {ys[axis]}LL, outer = i / {inner * ys[axis]}LL, in_ = i % {inner}LL;"
    ]
    start = 0
    for j, x in enumerate(ins):
        d = shape(x)[axis]
        cond = "if" if j == 0 else "else if"
        lines.append(
            f"{cond} (a < {start + d}LL) y[i] = x{j}[(outer * {d}LL + (a - {start}LL)) * {inner}LL + in_];"
        )
        start += d
    return _injective("concat", op.result, [(f"x{j}", x) for j, x in enumerate(ins)], lines, sm_count)


def gather_kernel(op: rlx.GatherOp, sm_count: int) -> KernelSpec:
    """numpy.take: negative indices count from the end; an index still out of
    range is clamped (a kernel cannot raise; the interpreter reports it)."""
    xs, ys, ids = shape(op.input), shape(op.result), shape(op.indices)
    axis = rlx._int(op.axis) % len(xs)
    inner = numel(xs[axis + 1 :])
    nid = numel(ids)
    d = xs[axis]
    lines = [
        f"const long long in_ = i % {inner}LL, j = (i / {inner}LL) % {nid}LL, outer = i / {inner * nid}LL;",
        f"long long q = (long long)ids[j]; if (q < 0) q += {d}LL; q = q < 0 ? 0 : (q >= {d}LL ? {d - 1}LL : q);",
        f"y[i] = x[(outer * {d}LL + q) * {inner}LL + in_];",
    ]
    return _injective("gather", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)


# --------------------------------------------------------------------------- conv / pool


def conv2d_kernel(op: rlx.Conv2dOp, sm_count: int) -> KernelSpec:
    """Direct convolution: a thread per output element, f32 accumulation."""
    n, c, h, w = shape(op.input)
    o, cg, kh, kw = shape(op.weight)
    _, _, oh, ow = shape(op.result)
    sh, sw = rlx._ints(op.stride)
    dh, dw = rlx._ints(op.dilation)
    pt, pl, _, _ = rlx._ints(op.padding)
    groups = rlx._int(op.groups)
    og = o // groups
    t = eltype(op.input)
    ins = [("x", op.input), ("wt", op.weight)] + ([("bias", op.bias)] if op.bias is not None else [])
    lines = [
        f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, oc = (i / {ow * oh}LL) % {o}LL, b = i / {ow * oh * o}LL;",
        f"const long long g = oc / {og}LL;",
        "float acc = " + (load("bias[oc]", t) if op.bias is not None else "0.0f") + ";",
        f"for (int ci = 0; ci < {cg}; ++ci) {{",
        f"  const long long xc = (b * {c}LL + g * {cg}LL + ci) * {h * w}LL;",
        f"  for (int ky = 0; ky < {kh}; ++ky) {{",
        f"    const long long iy = oy * {sh} - {pt} + ky * {dh}; if (iy < 0 || iy >= {h}) continue;",
        f"    for (int kx = 0; kx < {kw}; ++kx) {{",
        f"      const long long ix = ox * {sw} - {pl} + kx * {dw}; if (ix < 0 || ix >= {w}) continue;",
        f"      acc += {load('x[xc + iy * %dLL + ix]' % w, t)} * {load(f'wt[((oc * {cg}LL + ci) * {kh} + ky) * {kw} + kx]', t)};",
        "    }",
        "  }",
        "}",
        f"y[i] = {store('acc', t)};",
    ]
    return _injective("conv2d", op.result, ins, lines, sm_count)


def pool_kernel(op: rlx.MaxPool2dOp | rlx.AvgPool2dOp, sm_count: int) -> KernelSpec:
    n, c, h, w = shape(op.input)
    _, _, oh, ow = shape(op.result)
    kh, kw = rlx._ints(op.kernel)
    sh, sw = rlx._ints(op.stride)
    pt, pl, _, _ = rlx._ints(op.padding)
    t = eltype(op.input)
    is_max = isinstance(op, rlx.MaxPool2dOp)
    include_pad = not is_max and op.count_include_pad is not None  # pyright: ignore
    lines = [
        f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, bc = i / {ow * oh}LL;",
        "float acc = " + ("-RLX_INF" if is_max else "0.0f") + "; int cnt = 0;",
        f"for (int ky = 0; ky < {kh}; ++ky) {{",
        f"  const long long iy = oy * {sh} - {pt} + ky; if (iy < 0 || iy >= {h}) continue;",
        f"  for (int kx = 0; kx < {kw}; ++kx) {{",
        f"    const long long ix = ox * {sw} - {pl} + kx; if (ix < 0 || ix >= {w}) continue;",
        f"    const float v = {load(f'x[bc * {h * w}LL + iy * {w}LL + ix]', t)};",
        "    acc = " + ("rlx_maxf(acc, v)" if is_max else "acc + v") + "; ++cnt;",
        "  }",
        "}",
    ]
    if is_max:
        lines.append(f"y[i] = {store('acc', t)};")
    else:
        div = f"{kh * kw}.0f" if include_pad else "(float)cnt"
        lines.append(f"y[i] = {store(f'acc / {div}', t)};")
    return _injective("maxpool" if is_max else "avgpool", op.result, [("x", op.input)], lines, sm_count)

"""Row kernels: a tensor seen as rows (`Rows`), a block per row and the
block reductions of the shared header. Reductions (`reduce_kernel`, with a
column form for kept innermost axes) and `argmax_kernel` are written out;
softmax and the norms are described by a `RowSpec` (what is read, the
statistics, the per-element output) and rendered by `row_kernel` in one of
three forms, picked by the row's length and layout:

* cached: rows up to CACHED_ROW_MAX contiguous elements live in registers
  (`CachedRow`): one read, passes over the registers, one write;
* float4: longer contiguous f32 rows (length a multiple of 4) stream as
  float4, statistics in one read, then the write;
* looping: any other row, element by element, the same two reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from rlxc.codegen.common import THREADS, Buf, KernelSpec, eltype, float_of, int_of, ints, numel, params_decl, shape, strides
from rlxc.codegen.cuda_c import compute_type, literal, load, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype_name, is_float, is_int


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
    """A kernel looping its blocks over the rows, `body` once per row."""
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    src.append(f"  __shared__ {smem_type} smem[32];")
    src.extend(_row_loop(body, rows))
    src.append("}")
    return "\n".join(src) + "\n"


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
    axes = sorted(a % len(xs) for a in ints(op.axes)) if xs else []
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
        return KernelSpec("reduce_cols", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)
    body = [
        f"{acc} acc = {ident};",
        _cols(f"acc = {reducer}()(acc, ({acc}){load('x[o]', eltype(x))});", rows),
        f"acc = rlx_block_reduce(acc, {reducer}(), ({acc}){ident}, smem);",
        f"if (threadIdx.x == 0) y[r] = {store(f'({compute_type(eltype(y))})({finish})', eltype(y))};",
    ]
    return KernelSpec("reduce", _row_kernel(decl, body, rows, acc), [Buf(x), Buf(y, True)],
                      min(rows.rows, sm_count * 16))


def argmax_kernel(op: rlx.ArgMaxOp, sm_count: int) -> KernelSpec:
    """numpy.argmax along an axis, a block per row: the first index of the
    largest value, NaN counting as the largest."""
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [int_of(op.axis)])
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


# --------------------------------------------------------------------------- softmax and norms

#: Rows up to this many elements are kept in registers: read once, written once.
CACHED_ROW_MAX = 8192

#: An output expression: (element, per-column param name -> its value at the
#: element's column) -> the output value, in compute type.
Out = Callable[[str, Callable[[str], str]], str]


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

    def store(self, buf: str, value: Callable[[str, str], str]) -> list[str]:
        """Writes `value(element, column)` of every element to buf[base + column]."""
        if self.vec:
            parts = ", ".join(
                value(f"v[4 * j + {c}]", f"(4 * (threadIdx.x + (long long)j * {THREADS}) + {c})")
                for c in range(4)
            )
            return [
                "#pragma unroll",
                f"for (int j = 0; j < {self.items // 4}; ++j) "
                f"reinterpret_cast<float4*>({buf} + base)[threadIdx.x + j * {THREADS}] = make_float4({parts});",
            ]
        return self.each(f"{buf}[base + k] = {store(value('v[j]', 'k'), self.t)};")


@dataclass(frozen=True)
class Stat:
    """Statistics of a row in one pass over it: `init` declares the state,
    `add(elements)` folds in one element (or the four of a float4), `done`
    reduces over the block and derives what the output needs."""

    init: tuple[str, ...]
    add: Callable[[Sequence[str]], str]
    done: tuple[str, ...]


def each_stat(init: str, statement: Callable[[str], str], *done: str) -> Stat:
    """A Stat whose update is one statement per element."""
    return Stat((init,), lambda vs: " ".join(statement(v) for v in vs), done)


@dataclass(frozen=True)
class RowSpec:
    """A row kernel whose output is elementwise in the row, given statistics
    of the row (softmax, the norms); `row_kernel` renders it.

    The row is read from `x` (plus `res`, rounded to the element type, when
    `residual`: that sum is written to `sum` and is the row from then on);
    `columns` name the per-column params (gamma, beta); the output goes to
    `y`. Each form has its statistics and output expression:

    * `cached`: passes over the registers, elements `v[j]` (a pass may
      update them, e.g. subtract the mean), then `cached_out`;
    * `streamed`: one read of a longer row, then `streamed_out` of a second
      read; `streamed4` where the float4 form needs other names (its
      float4 is `q`).

    `name_read` / `name_write`: the looping form names the element `v`
    before the statistics / the output use it (as the kernels always
    spelled it)."""

    family: str
    rows: Rows
    t: Attribute
    bufs: list[tuple[str, SSAValue, bool]]
    cached: tuple[Stat, ...]
    cached_out: Out
    streamed: Stat
    streamed_out: Out
    streamed4: Stat | None = None
    residual: bool = False
    columns: tuple[str, ...] = ()
    name_read: bool = False
    name_write: bool = False


def _round(t: Attribute) -> str:
    """The function rounding a float to `t` (nothing for f32)."""
    return {"f16": "rlx_round_f16", "bf16": "rlx_round_bf16"}.get(dtype_name(t), "")


def _cached_form(s: RowSpec) -> list[str]:
    row = CachedRow(s.rows.cols, s.t)
    body = row.load("x")
    if s.residual:
        body += row.load("res", "u")
        # the sum is a result in its own type; the statistics read it rounded
        body += row.each(f"v[j] = {_round(s.t)}(v[j] + u[j]);")
        body += row.store("sum", lambda v, k: v)
    for stat in s.cached:
        body += [*stat.init, *row.each(stat.add(["v[j]"])), *stat.done]
    return body + row.store("y", lambda v, k: s.cached_out(v, lambda p: load(f"{p}[{k}]", s.t)))


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


def _float4_form(s: RowSpec) -> list[str]:
    stat = s.streamed4 or s.streamed
    first = [f"const float4 q = {_ld4('x')};"]
    if s.residual:
        first = [f"float4 q = {_ld4('x')}; const float4 p = {_ld4('res')};",
                 " ".join(f"q.{c} += p.{c};" for c in "xyzw"), _st4("sum", lambda c: f"q.{c}")]
    # the row and the first column param are loaded on one line
    loads = [f"const float4 q = {_ld4('sum' if s.residual else 'x')};",
             *(f"const float4 {p}q = {_ld4(p, '0')};" for p in s.columns)]
    out = _st4("y", lambda c: s.streamed_out(f"q.{c}", lambda p: f"{p}q.{c}"))
    return [
        *stat.init,
        *_vec_loop(s.rows, [*first, stat.add([f"q.{c}" for c in "xyzw"])]),
        *stat.done,
        *_vec_loop(s.rows, [" ".join(loads[:2]), *loads[2:], out]),
    ]


def _looping_form(s: RowSpec) -> list[str]:
    t, stat = s.t, s.streamed
    if s.residual:
        read = [f"const float v = {_round(t)}({load('x[o]', t)} + {load('res[o]', t)}); sum[o] = {store('v', t)};"]
    else:
        read = [f"const float v = {load('x[o]', t)};"] if s.name_read else []
    row = load(f"{'sum' if s.residual else 'x'}[o]", t)
    write = [f"const float v = {row};"] if s.name_write else []
    value = s.streamed_out("v" if write else row, lambda p: load(f"{p}[k]", t))
    return [
        *stat.init,
        _cols(" ".join([*read, stat.add(["v" if read else load("x[o]", t)])]), s.rows),
        *stat.done,
        _cols(" ".join([*write, f"y[o] = {store(value, t)};"]), s.rows),
    ]


def _cached(rows: Rows) -> bool:
    return rows.col_off == "k" and rows.cols <= CACHED_ROW_MAX


def _float4(rows: Rows, t: Attribute) -> bool:
    """A long contiguous f32 row that moves as float4 in the looping form."""
    return rows.col_off == "k" and dtype_name(t) == "f32" and rows.cols % 4 == 0


def row_kernel(s: RowSpec, sm_count: int) -> KernelSpec:
    """`s` in the form its rows call for (see the module docstring)."""
    if _cached(s.rows):
        body = _cached_form(s)
    elif _float4(s.rows, s.t):
        body = _float4_form(s)
    else:
        body = _looping_form(s)
    return KernelSpec(s.family, _row_kernel(params_decl(s.bufs), body, s.rows),
                      [Buf(v, w) for _, v, w in s.bufs], min(s.rows.rows, sm_count * 16))


def softmax_kernel(op: rlx.SoftmaxOp | rlx.LogSoftmaxOp, sm_count: int) -> KernelSpec:
    """Max-subtracted softmax / log_softmax along an axis, a block per row:
    cached rows take the max, then the sum of exponentials; longer rows the
    online max and sum in one read (`RlxMS`)."""
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [int_of(op.axis)])
    log = isinstance(op, rlx.LogSoftmaxOp)
    cached = (
        each_stat("float m = -RLX_INF;", lambda v: f"m = rlx_maxf(m, {v});",
                  "m = rlx_block_reduce(m, RlxMax(), -RLX_INF, smem);"),
        each_stat("float s = 0.0f;",
                  (lambda v: f"{v} = {v} - m; s += expf({v});") if log else (lambda v: f"{v} = expf({v} - m); s += {v};"),
                  "s = rlx_block_reduce(s, RlxSum(), 0.0f, smem);", "const float ls = logf(s), inv = 1.0f / s;"),
    )  # fmt: skip
    online = Stat(
        ("__shared__ RlxMS ms_smem[32];", "RlxMS st = {-RLX_INF, 0.0f};"),
        lambda vs: " ".join(f"rlx_ms_add(st, {v});" for v in vs),
        ("st = rlx_block_reduce(st, RlxMSMerge(), RlxMS{-RLX_INF, 0.0f}, ms_smem);",
         "const float m = st.m, ls = logf(st.s), inv = 1.0f / st.s;"),
    )  # fmt: skip
    spec = RowSpec(
        "softmax", rows, eltype(x), [("x", x, False), ("y", y, True)],
        cached=cached,
        cached_out=(lambda v, p: f"{v} - ls") if log else (lambda v, p: f"{v} * inv"),
        streamed=online,
        streamed_out=(lambda v, p: f"({v} - m) - ls") if log else (lambda v, p: f"expf({v} - m) * inv"),
        name_write=True,
    )  # fmt: skip
    return row_kernel(spec, sm_count)


def norm_kernel(op: rlx.LayerNormOp | rlx.RmsNormOp | rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp, sm_count: int) -> KernelSpec:
    """layer_norm / rms_norm over gamma's trailing axes, a block per row, f32
    statistics: two-pass variance for cached rows, Welford's for longer rows;
    the fused forms also write x + residual. The trailing axes are
    contiguous, so the column is also gamma's linear index."""
    x = op.input
    t = eltype(x)
    nd = len(shape(op.gamma))
    rows = Rows.of(shape(x), list(range(len(shape(x)) - nd, len(shape(x)))))
    layer = isinstance(op, rlx.LayerNormOp | rlx.FusedResidualLayerNormOp)
    fused = isinstance(op, rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp)
    eps = literal(float_of(op.eps), t)
    n = f"{rows.cols}.0f"
    bufs: list[tuple[str, SSAValue, bool]] = [("x", x, False)]
    if fused:
        bufs.append(("res", op.residual, False))  # pyright: ignore
    bufs.append(("g", op.gamma, False))
    if layer:
        bufs.append(("b", op.beta, False))  # pyright: ignore
    if fused:
        bufs.append(("sum", op.sum, True))  # pyright: ignore
    bufs.append(("y", op.normed if fused else op.result, True))  # pyright: ignore

    def sum_of_squares(acc: str) -> Stat:
        return Stat((f"float {acc} = 0.0f;",), lambda vs: f"{acc} += {' + '.join(f'{v} * {v}' for v in vs)};",
                    (f"const float inv = rsqrtf(rlx_block_reduce({acc}, RlxSum(), 0.0f, smem) / {n} + {eps});",))

    if layer:
        cached = (
            each_stat("float s = 0.0f;", lambda v: f"s += {v};",
                      f"const float mean = rlx_block_reduce(s, RlxSum(), 0.0f, smem) / {n};"),
            each_stat("float q = 0.0f;", lambda v: f"{v} -= mean; q += {v} * {v};",
                      f"const float inv = rsqrtf(rlx_block_reduce(q, RlxSum(), 0.0f, smem) / {n} + {eps});"),
        )
        welford = Stat(
            ("__shared__ RlxWelford w_smem[32];", "RlxWelford st = {0.0f, 0.0f, 0.0f};"),
            lambda vs: " ".join(f"rlx_welford_add(st, {v});" for v in vs),
            ("st = rlx_block_reduce(st, RlxWelfordMerge(), RlxWelford{0.0f, 0.0f, 0.0f}, w_smem);",
             f"const float mean = st.mean, inv = rsqrtf(st.m2 / {n} + {eps});"),
        )
        spec = RowSpec(
            "norm", rows, t, bufs, cached=cached,
            cached_out=lambda v, p: f"{v} * inv * {p('g')} + {p('b')}",
            streamed=welford,
            streamed_out=lambda v, p: f"({v} - mean) * inv * {p('g')} + {p('b')}",
            residual=fused, columns=("g", "b"), name_read=True,
        )  # fmt: skip
    else:
        spec = RowSpec(
            "norm", rows, t, bufs, cached=(sum_of_squares("q"),),
            cached_out=lambda v, p: f"{v} * inv * {p('g')}",
            streamed=sum_of_squares("q"), streamed4=sum_of_squares("ss"),  # q names the float4 there
            streamed_out=lambda v, p: f"{v} * inv * {p('g')}",
            residual=fused, columns=("g",), name_read=True,
        )  # fmt: skip
    return row_kernel(spec, sm_count)

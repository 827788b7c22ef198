"""Row kernels: a tensor seen as rows (`Rows`) and reduced per row.
Reductions (`reduce_kernel`, with a column form for kept innermost axes)
and `argmax_kernel` are written out; softmax and the norms are described by
a `RowSpec` (what is read, the statistics, the per-element output) and
rendered by `row_kernel` in the form `row_form` picks from the row's length,
element type and layout (`ROW_FORMS`, the one table of thresholds):

* warp: a warp per row (8 rows per block), the row in registers, reduced
  with shuffles alone (no shared memory, no block barrier): attention rows
  of 64-1024 elements;
* block: a block per row, the row in registers;
* smem: a block of 1024 threads per row, the row cached in dynamic shared
  memory (f32), so long rows are still read from global memory once;
* float4 / looping: rows too long for shared memory (or not contiguous):
  the statistics in one read, then the output from a second.

The cached forms move 16 bytes per access where the row's length allows (4
f32, 8 f16/bf16 elements per lane), compute in f32 and round once on the
store; the form and the vector width are named in the kernel's source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from rlxc.codegen.common import THREADS, Buf, KernelSpec, eltype, float_of, int_of, ints, numel, params_decl, shape, strides
from rlxc.codegen.cuda_c import compute_type, literal, load, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype, dtype_name, is_float, is_int


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


def _row_kernel(decl: str, body: list[str], rows: Rows, smem_type: str = "float", form: str = "block",
                threads: int = THREADS, note: str = "") -> str:
    """A kernel looping over the rows, `body` once per row: its blocks walk
    the rows (block, smem, float4 and looping forms), or its warps do (warp
    form, `lane` the thread's lane)."""
    src = [f"// row form: {form}{f' ({note})' if note else ''}"]
    src.append(f'extern "C" __global__ void __launch_bounds__({threads}) ENTRY({decl}) {{')
    src.append(f"  __shared__ {smem_type} smem[32];")
    if form == "smem":
        src.append("  extern __shared__ float srow[];")
    if form == "warp":
        warps = threads // 32
        src += [
            "  const int lane = threadIdx.x & 31;",
            f"  for (long long r = (long long)blockIdx.x * {warps} + (threadIdx.x >> 5); r < {rows.rows}LL; r += (long long)gridDim.x * {warps}) {{",
            f"    const long long base = {rows.row_base};",
            *("    " + b for b in body),
            "  }",
        ]
    else:
        src.extend(_row_loop(body, rows))
    src.append("}")
    return "\n".join(src) + "\n"


def block_reduce(value: str, op: str, identity: str, smem: str) -> str:
    """The reduction of `value` over the block (every thread gets it)."""
    return f"rlx_block_reduce({value}, {op}(), {identity}, {smem})"


def warp_reduce(value: str, op: str, identity: str, smem: str) -> str:
    """The reduction of `value` over the warp (every lane gets it)."""
    return f"rlx_warp_reduce({value}, {op}())"


#: How a form reduces a statistic over the threads of a row: (value, op,
#: identity, shared-memory scratch) -> the reduced value.
Reducer = Callable[[str, str, str, str], str]


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

#: Row forms by the row's length: a warp per row up to WARP_ROW_MAX
#: elements, a block per row (in registers) up to BLOCK_ROW_MAX, a block of
#: SMEM_THREADS per row with the row in shared memory (as f32) up to
#: SMEM_ROW_BYTES, then the streamed forms. `row_form` reads this table
#: and nothing else.
WARP_ROW_MAX = 1024
BLOCK_ROW_MAX = 8192
SMEM_ROW_BYTES = 160 * 1024
SMEM_THREADS = 1024

#: Kept for callers of the earlier name: rows in registers up to this length.
CACHED_ROW_MAX = BLOCK_ROW_MAX


def row_form(rows: Rows, t: Attribute) -> str:
    """The form (see the module docstring) of a row kernel over `rows`."""
    if rows.col_off != "k":
        return "looping"  # not contiguous: one element at a time
    if rows.cols <= WARP_ROW_MAX:
        return "warp"
    if rows.cols <= BLOCK_ROW_MAX:
        return "block"
    if rows.cols * 4 <= SMEM_ROW_BYTES:
        return "smem"
    return "float4" if dtype_name(t) == "f32" and rows.cols % 4 == 0 else "looping"


#: An output expression: (element, per-column param name -> its value at the
#: element's column) -> the output value, in compute type.
Out = Callable[[str, Callable[[str], str]], str]

#: Unsigned types of 2, 4, 8 and 16 bytes, for vector accesses.
_RAW = {2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}


@dataclass(frozen=True)
class CachedRow:
    """Code for a row spread over `lanes` threads (`lane` is the thread's
    index among them): element j of a thread is at column `col(j)`. Accesses
    move `width` elements at once (up to 16 bytes) where the row's length is
    a multiple of lanes × width; elements are held in `v[j]` (registers) or,
    with `smem`, in `srow[column]`."""

    cols: int
    t: Attribute
    lanes: int
    lane: str
    smem: bool = False

    @property
    def width(self) -> int:
        size = dtype(self.t).bytes
        for w in (16 // size, 8 // size, 4 // size, 2 // size):
            if w >= 2 and self.cols % (self.lanes * w) == 0:
                return w
        return 1

    @property
    def items(self) -> int:
        return -(-self.cols // (self.lanes * self.width)) * self.width

    @property
    def guarded(self) -> bool:
        return self.width == 1 and self.cols % self.lanes != 0

    def col(self, j: str) -> str:
        w = self.width
        if w == 1:
            return f"({self.lane} + (long long)({j}) * {self.lanes})"
        return f"((long long)(({j}) / {w}) * {self.lanes * w} + {self.lane} * {w} + (({j}) % {w}))"

    def elem(self, j: str = "j") -> str:
        return f"srow[{self.col(j)}]" if self.smem else f"v[{j}]"

    def note(self) -> str:
        per = f"{self.width} elements per access" if self.width > 1 else "one element per access"
        return f"{self.lanes} threads per row, {per}, {self.items} per thread"

    def _chunks(self, lines: list[str]) -> list[str]:
        return ["#pragma unroll", f"for (int c = 0; c < {self.items // self.width}; ++c) {{",
                *("  " + x for x in lines), "}"]

    @property
    def raw(self) -> str:
        """The unsigned type of one access's `width` elements."""
        return _RAW[self.width * dtype(self.t).bytes]

    def _union(self, name: str) -> str:
        return f"union {{ {self.raw} raw; {dtype(self.t).c_storage} e[{self.width}]; }} {name};"

    def _vec(self, buf: str) -> str:
        """Chunk c of this thread in `buf`'s row, read as one vector."""
        return f"reinterpret_cast<const {self.raw}*>({buf} + base)[c * {self.lanes} + {self.lane}]"

    def load(self, buf: str, into: str = "v") -> list[str]:
        """Reads the row of `buf` into `into` (declared here) or, for `v`
        with smem, into the shared row."""
        target = (lambda j: self.elem(j)) if (self.smem and into == "v") else (lambda j: f"{into}[{j}]")
        decl = [] if (self.smem and into == "v") else [f"float {into}[{self.items}];"]
        w = self.width
        if w == 1:
            if self.smem and into == "v":  # the shared row has exactly cols elements
                return ["#pragma unroll",
                        f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
                        f"if (k < {self.cols}LL) {target('j')} = {load(f'{buf}[base + k]', self.t)}; }}"]
            return [*decl, "#pragma unroll",
                    f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
                    f"{target('j')} = k < {self.cols}LL ? {load(f'{buf}[base + k]', self.t)} : 0.0f; }}"]
        return [*decl, *self._chunks([
            f"{self._union('pk')} pk.raw = {self._vec(buf)};",
            "#pragma unroll",
            f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; {target('j')} = {load('pk.e[i]', self.t)}; }}",
        ])]

    def each(self, body: str) -> list[str]:
        """`body` for every element j of the thread inside the row (`k` its column)."""
        guard = f"if (k < {self.cols}LL) " if self.guarded else ""
        return [
            "#pragma unroll",
            f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; {guard}{{ {body} }} }}",
        ]

    def store(self, buf: str, value: Callable[[str, str], str]) -> list[str]:
        """Writes `value(element, column)` of every element to buf[base + column]."""
        w = self.width
        if w == 1:
            return self.each(f"{buf}[base + k] = {store(value(self.elem(), 'k'), self.t)};")
        return self._chunks([
            self._union("pk"),
            "#pragma unroll",
            f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; const long long k = {self.col('j')}; "
            f"pk.e[i] = {store(value(self.elem(), 'k'), self.t)}; }}",
            f"reinterpret_cast<{self.raw}*>({buf} + base)[c * {self.lanes} + {self.lane}] = pk.raw;",
        ])


@dataclass(frozen=True)
class Stat:
    """Statistics of a row in one pass over it: `init` declares the state,
    `add(elements)` folds in one element (or the four of a float4), `done`
    reduces over the row's threads (with the form's reducer) and derives
    what the output needs."""

    init: tuple[str, ...]
    add: Callable[[Sequence[str]], str]
    done: Callable[[Reducer], tuple[str, ...]]


def each_stat(init: str, statement: Callable[[str], str], *done: Callable[[Reducer], str]) -> Stat:
    """A Stat whose update is one statement per element."""
    return Stat((init,), lambda vs: " ".join(statement(v) for v in vs), lambda red: tuple(d(red) for d in done))


@dataclass(frozen=True)
class RowSpec:
    """A row kernel whose output is elementwise in the row, given statistics
    of the row (softmax, the norms); `row_kernel` renders it.

    The row is read from `x` (plus `res`, rounded to the element type, when
    `residual`: that sum is written to `sum` and is the row from then on);
    `columns` name the per-column params (gamma, beta); the output goes to
    `y`. Each form has its statistics and output expression:

    * `cached`: passes over the cached row (registers or shared memory), an
      element may be updated in a pass (e.g. the mean subtracted), then
      `cached_out`;
    * `streamed`: one read of a longer row, then `streamed_out` of a second
      read; `streamed4` where the float4 form needs other names (its
      float4 is `q`).

    `name_read` / `name_write`: the looping form names the element `v`
    before the statistics / the output use it."""

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


def _cached_form(s: RowSpec, row: CachedRow, red: Reducer) -> list[str]:
    body = row.load("x")
    if s.residual:
        body += row.load("res", "u")
        # the sum is a result in its own type; the statistics read it rounded
        body += row.each(f"{row.elem()} = {_round(s.t)}({row.elem()} + u[j]);")
        body += row.store("sum", lambda v, k: v)
    for stat in s.cached:
        body += [*stat.init, *row.each(stat.add([row.elem()])), *stat.done(red)]
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
        *stat.done(block_reduce),
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
        *stat.done(block_reduce),
        _cols(" ".join([*write, f"y[o] = {store(value, t)};"]), s.rows),
    ]


def row_kernel(s: RowSpec, sm_count: int) -> KernelSpec:
    """`s` in the form `row_form` picks (see the module docstring)."""
    form = row_form(s.rows, s.t)
    bufs = [Buf(v, w) for _, v, w in s.bufs]
    decl = params_decl(s.bufs)
    rows = s.rows
    if form == "warp":
        row = CachedRow(rows.cols, s.t, 32, "lane")
        src = _row_kernel(decl, _cached_form(s, row, warp_reduce), rows, form="warp", note=row.note())
        return KernelSpec(s.family, src, bufs, min(-(-rows.rows // (THREADS // 32)), sm_count * 16))
    if form == "block":
        row = CachedRow(rows.cols, s.t, THREADS, "threadIdx.x")
        src = _row_kernel(decl, _cached_form(s, row, block_reduce), rows, form="block", note=row.note())
        return KernelSpec(s.family, src, bufs, min(rows.rows, sm_count * 16))
    if form == "smem":
        row = CachedRow(rows.cols, s.t, SMEM_THREADS, "threadIdx.x", smem=True)
        src = _row_kernel(decl, _cached_form(s, row, block_reduce), rows, form="smem",
                          threads=SMEM_THREADS, note=f"{rows.cols * 4} bytes of shared memory, " + row.note())
        return KernelSpec(s.family, src, bufs, min(rows.rows, sm_count * 2), SMEM_THREADS, rows.cols * 4)
    body = _float4_form(s) if form == "float4" else _looping_form(s)
    return KernelSpec(s.family, _row_kernel(decl, body, rows, form=form), bufs, min(rows.rows, sm_count * 16))


def softmax_kernel(op: rlx.SoftmaxOp | rlx.LogSoftmaxOp, sm_count: int) -> KernelSpec:
    """Max-subtracted softmax / log_softmax along an axis: cached rows take
    the max, then the sum of exponentials; longer rows the online max and
    sum in one read (`RlxMS`)."""
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [int_of(op.axis)])
    log = isinstance(op, rlx.LogSoftmaxOp)
    cached = (
        each_stat("float m = -RLX_INF;", lambda v: f"m = rlx_maxf(m, {v});",
                  lambda red: f"m = {red('m', 'RlxMax', '-RLX_INF', 'smem')};"),
        each_stat("float s = 0.0f;",
                  (lambda v: f"{v} = {v} - m; s += expf({v});") if log else (lambda v: f"{v} = expf({v} - m); s += {v};"),
                  lambda red: f"s = {red('s', 'RlxSum', '0.0f', 'smem')};",
                  lambda red: "const float ls = logf(s), inv = 1.0f / s;"),
    )  # fmt: skip
    online = Stat(
        ("__shared__ RlxMS ms_smem[32];", "RlxMS st = {-RLX_INF, 0.0f};"),
        lambda vs: " ".join(f"rlx_ms_add(st, {v});" for v in vs),
        lambda red: (f"st = {red('st', 'RlxMSMerge', 'RlxMS{-RLX_INF, 0.0f}', 'ms_smem')};",
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
    """layer_norm / rms_norm over gamma's trailing axes, f32 statistics:
    two-pass variance for cached rows, Welford's for longer rows; the fused
    forms also write x + residual. The trailing axes are contiguous, so the
    column is also gamma's linear index."""
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
                    lambda red: (f"const float inv = rsqrtf({red(acc, 'RlxSum', '0.0f', 'smem')} / {n} + {eps});",))

    if layer:
        cached = (
            each_stat("float s = 0.0f;", lambda v: f"s += {v};",
                      lambda red: f"const float mean = {red('s', 'RlxSum', '0.0f', 'smem')} / {n};"),
            each_stat("float q = 0.0f;", lambda v: f"{v} -= mean; q += {v} * {v};",
                      lambda red: f"const float inv = rsqrtf({red('q', 'RlxSum', '0.0f', 'smem')} / {n} + {eps});"),
        )
        welford = Stat(
            ("__shared__ RlxWelford w_smem[32];", "RlxWelford st = {0.0f, 0.0f, 0.0f};"),
            lambda vs: " ".join(f"rlx_welford_add(st, {v});" for v in vs),
            lambda red: (f"st = {red('st', 'RlxWelfordMerge', 'RlxWelford{0.0f, 0.0f, 0.0f}', 'w_smem')};",
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

"""Row kernels: a tensor seen as rows (`Rows`) and reduced per row.
Reductions (`reduce_kernel`, with a column form for kept innermost axes)
and `argmax_kernel` are written out; softmax and the norms are described by
a `RowSpec` (what is read, the statistics, the per-element output) and
rendered by `row_kernel` in the form `row_form` picks from the row's length,
element type and layout (`ROW_FORMS`, the one table of thresholds):

* warp: a warp per row (8 rows per block), the row in registers, reduced
  with shuffles alone (no shared memory, no block barrier): attention rows
  of 64-1024 elements; rows of up to 31 × 16 bytes take a group of lanes,
  one 16-byte access each (64 halves: 8 lanes, 4 rows a warp), and 16-bit
  rows of 40 or 48 accesses 8 or 16 lanes (WARP_WIDE_EVEN_LANES); short
  f16/bf16 rows reduced twice, WARP_BATCH rows a group, loaded together,
  and rows of accesses under 16 bytes up to 4 (`warp_batch`); odd f16/bf16
  rows over 512 bytes, of 5-7 elements, or of 11-31 over 2-4 lanes holding
  6 or more each staged through shared memory (WARP_STAGED), and so are
  f16/bf16 rows of 12-88 elements and f32 rows of 6-28 of narrow or
  overrunning vector accesses, a thread each (WARP_STAGED_NARROW,
  WARP_STAGED_NARROW_SOLO, WARP_STAGED_SOLO_F32), and odd f16/bf16 rows of
  33-87 (WARP_STAGED_ODD_SOLO); odd f32 rows
  from 32 elements over as few lanes as hold 8 each (WARP_NARROW_ITEMS);
* block: a block per row, the row in registers (BLOCK_THREADS threads, fewer
  for rows of under 512 16-byte items: BLOCK_MIN_ITEMS; up to 512 of
  BLOCK_ROW_ELEMS elements each past 8192; on sm_90 past BLOCK_ROW_MAX,
  without a prologue, up to 960 for f32 softmax and log_softmax, 704 for
  f16/bf16 ones and 1024 for f32 layer_norm and rms_norm (640 for rms_norm
  rows 4 does not divide): `block_row_max`);
* stream (softmax, log_softmax: f16/bf16 rows of 30000-65536 elements, no
  prologue; rows 8 does not divide through their 16-byte-aligned windows,
  past the block form):
  a block of 1024 threads per row (256 or 512 for windowed rows of few
  accesses: STREAM_WINDOW_THREADS) reads it twice,
  2 loads in flight per thread, the online (max, sum) in the first read,
  the output in the second, which finds the row in L2 (STREAM_ROWS);
* cluster (sm_90, past the block form): the row split over the 2-8 blocks
  of a thread-block cluster, 128 bytes of it in each thread's registers;
  each statistic reduced over the block, then over the cluster through
  distributed shared memory (`rlx_cluster_reduce`: every block folds the
  blocks' values in rank order, so all hold the same bits); softmax's max
  and sum in one such reduction, of each thread's (max, sum) pair, where
  the row moves several elements per access (`merged_stats`); one read;
* grid (past what a cluster holds, or without clusters past the shared-memory
  row): the row split over C blocks that need not share a cluster, its part
  of the row in each thread's registers as in the cluster form; each
  statistic reduced over the block, then over the row's blocks through
  global memory (`rlx_grid_reduce`: each block's value to a scratch slot,
  an arrival count, a wait for the row's C arrivals, every block folding
  the slots in order). A block takes its (row, part) from an atomic ticket,
  so the blocks that started first hold the earliest rows and a row's C ≤
  (multiprocessors / GRID_SHARE) blocks are always resident together;
  one read;
* smem (without clusters): a block of 1024 threads per row, the row cached in dynamic shared
  memory, so long rows are still read from global memory once: as f32,
  but f16/bf16 norm rows as themselves (half the bytes, so two blocks fit
  an SM where one f32 row did), whose statistics then leave the elements
  as they are (`RowSpec.pure`: x − mean recomputed for the output);
  kept thread-major (element j of thread l at j·1024 + l), conflict-free;
* float4 / looping: rows too long for the grid form (or not contiguous):
  the statistics in one read, then the output from a second;
* columns (rows along a non-contiguous axis, COLUMN_FORM_MIN_ROWS or more):
  neighbouring rows in threadIdx.x (coalesced), slices of the axis in
  threadIdx.y, the slices' statistics met in shared memory in order. Each
  thread's slice held in registers where it is short enough
  (COLUMN_CACHED_ELEMS: one read); else, with any number of rows, the
  slices of 16 rows spread over C blocks, still held in registers, their
  statistics met across the blocks as the grid form's (COLUMN_GRID: one
  read; f16/bf16 softmax over an inner axis 16 bytes divide in 16-byte
  items of 8 rows a thread, the blocks met in groups: COLUMN_GRID_VECTORS;
  where that takes 16 blocks or more, each block folds its items'
  statistics and writes the output of the block that started LAG before
  it, its items read again mostly from L2: COLUMN_GRID_VECTOR_LAG);
  else 16-byte accesses over 8 (4) neighbouring rows per thread
  where blocks are enough (COLUMN_VECTORS); else read twice, element by
  element, 4 loads in flight. Over a short inner axis 16 does not divide,
  a block's rows are all of it (COLUMN_INNER_ROWS: consecutive reads), or
  for softmax under 32 a block's outer indices go through shared memory in
  order (COLUMN_SLAB_ELEMS).

The cached forms move 16 bytes per access where the row's length allows (4
f32, 8 f16/bf16 elements per lane; for rows in registers the width need
only divide the row, a thread's accesses past its end skipped whole, one
test per access), compute in f32 and round once on the store (softmax's
exponentials, where the results are f16/bf16, as approximate 2^x:
CACHED_APPROX, STREAM_APPROX), f16/bf16 elements
converted two per instruction (`CachedRow._paired`); the form and the
vector width are named in the kernel's source. Rows 16 bytes do not divide
(odd f32 lengths, 16-bit lengths 8 does not divide) are windowed in the
cluster form: each row's 16-byte-aligned window read whole, the elements
outside the row left out of the statistics and written around (rows a
prologue computes too, where every tensor it reads and writes is laid out
as the row: WINDOW_PROLOGUE, the residual sum written so); per-column
params (gamma, beta) are realigned to the row's start (`rlx_ld_window`: two
aligned 16-byte reads and funnel shifts) and read an element at a time only
at the window's edges; 16-bit rows held in registers keep two elements per
32-bit word (`CachedRow.packed`); windowed f32 rows are capped at
WINDOW_F32_REGS registers through `__launch_bounds__`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from xdsl.ir import Attribute, Operation, SSAValue

from rlxc.codegen.common import (
    THREADS, Buf, KernelSpec, eltype, float_of, has_clusters, index_expr, int_of, ints, numel, params_decl, shape,
    strides,
)
from rlxc.codegen.cuda_c import compute_type, literal, load, storage_type, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype, dtype_name, is_float, is_int


@dataclass(frozen=True)
class Rows:
    """A tensor seen as rows: the reduced axes form a row, the kept axes index rows."""

    rows: int
    cols: int
    row_base: str  # offset of element 0 of row `r`
    col_off: str  # offset of element `k` within the row
    #: where the reduced axes are adjacent and kept axes follow them: the
    #: elements after them (the reduced axes' stride); 0 otherwise
    inner: int = 0

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
        adjacent = axes == list(range(axes[0], axes[-1] + 1))
        return Rows(rows, cols, expr("r", kept), expr("k", axes), numel(s[axes[-1] + 1:]) if adjacent else 0)


def _row_loop(body: list[str], rows: Rows, one_row: bool = False) -> list[str]:
    """`body` once per row, the blocks walking the rows; with `one_row` (the
    launch's grid is the rows: ROW_PER_BLOCK) each block's row only, no
    loop."""
    if one_row:
        return [
            "  {  // one row per block: the grid is the rows",
            "    const long long r = blockIdx.x;",
            f"    const long long base = {rows.row_base};",
            *("    " + b for b in body),
            "  }",
        ]
    return [
        f"  for (long long r = blockIdx.x; r < {rows.rows}LL; r += gridDim.x) {{",
        f"    const long long base = {rows.row_base};",
        *("    " + b for b in body),
        "  }",
    ]


def _warp_loop(body: list[str], rows: Rows, warps: int, group: int = 32, batch: CachedRow | None = None,
               one_row: bool = False, per_group: int = 1, pre: Sequence[str] = ()) -> list[str]:
    """`body` once per row, a group of `group` lanes (a power of two up to a
    warp) per row (`lane` its thread's index in the group), `warps` × 32 /
    `group` rows per block (`per_group` times that with a batch). A group leaves the loop on its own: its
    reductions shuffle among its lanes only (`rlx_group_reduce`). With
    `batch` (a row of `per_group` rows a group: `warp_batch`), a group takes
    `per_group` rows, whose accesses it loads into `nx` before the body takes
    them one row after another (accesses past a guarded row's end left out).
    With `one_row` (the grid's groups cover the rows) a group's row only,
    no loop (see `_row_loop`). `pre`: statements once per thread, before
    its rows (`lane` defined)."""
    per_block = warps * 32 // group
    pre = ["  " + p for p in pre]
    if batch is not None:  # per_group rows per group, loaded first
        n, u = batch.items // batch.width, per_group
        inside = f" && ({batch._inside()})" if batch.guarded else ""
        # one element an access: held in its storage type (the loads convert it), not as raw bits
        held, read = ((storage_type(batch.t), f"x[base + c * {group} + lane]") if batch.width == 1
                      else (batch.raw, batch._vec("x")))
        return [
            f"  const int lane = threadIdx.x & {group - 1};",
            *pre,
            f"  const long long r0 = (long long)blockIdx.x * {per_block * u} + (threadIdx.x / {group});",
            f"  {held} nx[{u}][{n}];  // the group's {u} rows' accesses",
            "  #pragma unroll",
            f"  for (int u = 0; u < {u}; ++u) {{",
            f"    const long long r = r0 + u * {per_block}, base = r * {rows.cols}LL;",
            "    #pragma unroll",
            f"    for (int c = 0; c < {n}; ++c) if (r < {rows.rows}LL{inside}) nx[u][c] = {read};",
            "  }",
            "  #pragma unroll",
            f"  for (int u = 0; u < {u}; ++u) {{",
            f"    const long long r = r0 + u * {per_block};",
            f"    if (r >= {rows.rows}LL) break;",
            f"    const long long base = {rows.row_base};",
            *("    " + b for b in body),
            "  }",
        ]
    if one_row:
        return [
            f"  const int lane = threadIdx.x & {group - 1};",
            *pre,
            f"  const long long r = (long long)blockIdx.x * {per_block} + (threadIdx.x / {group});  // the grid covers the rows",
            f"  if (r < {rows.rows}LL) {{",
            f"    const long long base = {rows.row_base};",
            *("    " + b for b in body),
            "  }",
        ]
    return [
        f"  const int lane = threadIdx.x & {group - 1};",
        *pre,
        (f"  for (long long r = (long long)blockIdx.x * {per_block} + (threadIdx.x / {group}); r < {rows.rows}LL; "
         f"r += (long long)gridDim.x * {per_block}) {{"),
        f"    const long long base = {rows.row_base};",
        *("    " + b for b in body),
        "  }",
    ]


def _short_staged(s: RowSpec) -> bool:
    """Whether the rows of `s` are short rows staged in spans of
    WARP_STAGE_SHORT_BYTES: over WARP_STAGED_ROW_BYTES up to
    WARP_SHORT_ROW_BYTES, of an op with at most WARP_STAGED_SHORT_PARAMS
    per-column params (`_stages` decides the rest)."""
    return (WARP_STAGED_ROW_BYTES < s.rows.cols * dtype(s.t).bytes <= WARP_SHORT_ROW_BYTES
            and len(s.columns) <= WARP_STAGED_SHORT_PARAMS)


def _stages(s: RowSpec, row: CachedRow, block_rows: int, narrow: bool, odd_solo: bool = False) -> bool:
    """Whether the warp form's rows of `s` are staged through shared memory
    (WARP_STAGED): f16/bf16 elements one per access, rows over
    WARP_STAGED_ROW_BYTES (WARP_SHORT_ROW_BYTES where the row has more than
    WARP_STAGED_SHORT_PARAMS per-column params) or of a thread each from WARP_STAGED_TINY_MIN
    elements (WARP_STAGED_TINY), or short f16/bf16 rows of narrower or
    guarded vector accesses (WARP_STAGED_NARROW), no prologue, the row read from
    `x` and written to `y` alone (the other buffers are per-column params),
    a block's span of `block_rows` rows a whole number of 16-byte accesses
    (so every block's span starts on a boundary) and under 48 KB (static).
    `narrow`: whether `staged_narrow` held for the row before its lanes were
    changed; `odd_solo`: whether `staged_odd_solo` did (f32 rows too)."""
    tiny = (WARP_STAGED_TINY and s.rows.cols >= WARP_STAGED_TINY_MIN
            and (row.lanes == 1 or row.lanes <= WARP_STAGED_TINY_LANES and row.items >= WARP_STAGED_TINY_ITEMS))
    size = dtype(s.t).bytes
    if s.prologue is not None or not narrow and (
            not WARP_STAGED or row.width > 1
            or not (size == 2 or size == 4 and tiny and (WARP_STAGED_TINY_F32 or odd_solo and row.lanes == 1))
            or (s.rows.cols * size <= WARP_SHORT_ROW_BYTES and not _short_staged(s) and not tiny)):
        return False
    n = s.rows.rows * s.rows.cols
    shaped = sorted((name, w) for name, v, w in s.bufs if numel(shape(v)) == n)
    others_ok = all(not w and numel(shape(v)) == s.rows.cols for name, v, w in s.bufs if numel(shape(v)) != n)
    same = {eltype(v) for name, v, w in s.bufs if numel(shape(v)) == n} == {s.t}
    span = block_rows * s.rows.cols * dtype(s.t).bytes
    return (shaped == [("x", False), ("y", True)] and others_ok and same and span % 16 == 0 and span <= 48 * 1024
            and s.rows.row_base == f"r * {s.rows.cols}LL" and n < 2**31)


def staged_narrow(s: RowSpec, row: CachedRow) -> bool:
    """Whether the warp form's rows of `s` are short f16/bf16 rows with
    per-column params (the norms; any, for rows of up to
    WARP_STAGED_NARROW_SOLO bytes) of vector accesses under 16 bytes or
    overrunning the row, staged (WARP_STAGED_NARROW)."""
    size = dtype(s.t).bytes
    low, high = WARP_STAGED_NARROW_ROW_BYTES
    high = max(high, WARP_STAGED_NARROW_SOLO)  # rows a thread takes alone are staged up to that length
    if size == 4:  # f32 rows only a thread each (WARP_STAGED_SOLO_F32)
        params_ok, high = True, WARP_STAGED_SOLO_F32
    else:
        params_ok = bool(s.columns) or s.rows.cols * size <= WARP_STAGED_NARROW_SOLO
    return (WARP_STAGED_NARROW > 0 and size in (2, 4) and params_ok
            and row.width > 1 and low <= s.rows.cols * size <= high
            and (row.width * size < 16 or row.guarded) and not row.peel and not row.window)


def staged_solo(s: RowSpec) -> bool:
    """Whether a staged narrow row of `s` (`staged_narrow`) is a thread's
    alone: f16/bf16 rows of up to WARP_STAGED_NARROW_SOLO bytes, f32 rows
    (up to WARP_STAGED_SOLO_F32)."""
    size = dtype(s.t).bytes
    return size == 4 or s.rows.cols * size <= WARP_STAGED_NARROW_SOLO


def staged_odd_solo(s: RowSpec, row: CachedRow) -> bool:
    """Whether the warp form's rows of `s` are f16/bf16 rows of odd length (one
    element an access) of WARP_STAGED_ODD_SOLO_MIN elements up to
    WARP_STAGED_ODD_SOLO bytes, or f32 rows of one element an access of
    WARP_STAGED_ODD_SOLO_F32_MIN elements up to WARP_STAGED_ODD_SOLO_F32
    bytes (WARP_STAGED_ODD_SOLO_F32_PARAMS for ops with per-column params), loaded (no prologue), to be staged a thread a row
    (WARP_STAGED_ODD_SOLO; as WARP_STAGED_TINY's rows of 5 and 7)."""
    size = dtype(s.t).bytes
    f32_cap = min(WARP_STAGED_ODD_SOLO_F32_PARAMS, WARP_STAGED_ODD_SOLO_F32) if s.columns else WARP_STAGED_ODD_SOLO_F32
    low, cap = ((WARP_STAGED_ODD_SOLO_MIN, WARP_STAGED_ODD_SOLO) if size == 2
                else (WARP_STAGED_ODD_SOLO_F32_MIN, f32_cap) if size == 4 else (1, 0))
    return (WARP_STAGED and WARP_STAGED_TINY and s.prologue is None
            and row.width == 1 and not row.peel and not row.window and s.rows.cols % 2 == 1
            and low <= s.rows.cols and s.rows.cols * size <= cap)


def stage_rows(row_bytes: int, per_block: int, span: int) -> int:
    """Rows each group of a staged warp-form block takes: a block's span
    about `span` bytes (WARP_STAGE_BYTES, WARP_STAGE_SHORT_BYTES or
    WARP_STAGED_NARROW), 1 at least, and fewer where that makes the span a
    whole number of 16-byte accesses (odd rows of 4 groups a block: an even
    count), which `_stages` requires."""
    k = max(1, span // (per_block * row_bytes))
    while k > 1 and k * per_block * row_bytes % 16:
        k -= 1
    return k


def _staged_warp(body: list[str], rows: Rows, threads: int, group: int, per_block: int, t: Attribute,
                 pre: Sequence[str] = ()) -> list[str]:
    """The warp form's loop for rows staged through shared memory
    (WARP_STAGED): block b's `per_block` rows, from row b times that, are
    one contiguous span starting on a 16-byte boundary; the block copies
    the span from `x_` into `stage` with 16-byte loads (all of a thread's
    in flight), each of the `threads / group` groups runs `body` on its
    rows there, one after another (`x` and
    `y` both point at `stage`, `base` the row's offset in it; a thread
    writes only the elements it read), and the block copies the span to
    `y_` with 16-byte stores. A last block of fewer rows copies the
    elements past its last whole 16 bytes one at a time. `pre`: statements
    once per thread, before its rows (`lane` defined)."""
    groups = threads // group
    c_type = storage_type(t)
    span = per_block * rows.cols
    per = 16 // dtype(t).bytes
    vecs = span // per
    trips = -(-vecs // threads)

    def copy(src: str, dst: str, load_first: bool) -> list[str]:
        lines = [f"    const uint4* __restrict__ s4 = reinterpret_cast<const uint4*>({src});",
                 f"    uint4* __restrict__ d4 = reinterpret_cast<uint4*>({dst});"]
        if load_first:  # every load of the thread in flight before the first store
            lines += [f"    uint4 t[{trips}];",
                      "    #pragma unroll",
                      f"    for (int j = 0; j < {trips}; ++j) {{ const int i = threadIdx.x + j * {threads}; if (i < stage_nv) t[j] = s4[i]; }}",
                      "    #pragma unroll",
                      f"    for (int j = 0; j < {trips}; ++j) {{ const int i = threadIdx.x + j * {threads}; if (i < stage_nv) d4[i] = t[j]; }}"]
        else:
            lines += ["    #pragma unroll",
                      f"    for (int j = 0; j < {trips}; ++j) {{ const int i = threadIdx.x + j * {threads}; if (i < stage_nv) d4[i] = s4[i]; }}"]
        lines.append(f"    for (int i = stage_nv * {per} + threadIdx.x; i < stage_n; i += {threads}) ({dst})[i] = ({src})[i];")
        return lines

    return [
        f"  __shared__ __align__(16) {c_type} stage[{span}];",
        f"  const long long r0 = (long long)blockIdx.x * {per_block};",
        f"  const int stage_n = (int)(r0 + {per_block} <= {rows.rows}LL ? {span}LL : ({rows.rows}LL - r0) * {rows.cols}LL);",
        f"  const int stage_nv = stage_n / {per};  // whole 16-byte accesses",
        "  {",
        *copy(f"x_ + r0 * {rows.cols}LL", "stage", True),
        "  }",
        "  __syncthreads();",
        "  {",
        f"    const {c_type}* x = stage;",
        f"    {c_type}* y = stage;",
        f"    const int lane = threadIdx.x & {group - 1};",
        *("    " + p for p in pre),
        f"    for (int u = threadIdx.x / {group}; u < {per_block}; u += {groups}) {{  // the group's rows",
        f"      const long long r = r0 + u;",
        f"      if (r >= {rows.rows}LL) break;",
        f"      const long long base = (long long)u * {rows.cols}LL;",
        *("      " + b for b in body),
        "    }",
        "  }",
        "  __syncthreads();",
        "  {",
        *copy("stage", f"y_ + r0 * {rows.cols}LL", False),
        "  }",
    ]


def _cluster_row(body: list[str], rows: Rows, cluster: ClusterReducer) -> list[str]:
    """`body` for row blockIdx.x / C, split over the C blocks of a cluster
    (`lane` the thread's index among the C × blockDim.x), no loop: a
    block's shared statistic slots are used once."""
    slots = [f"  __shared__ {t} cl_slots{i}[{cluster.blocks}];" for i, t in enumerate(cluster.types)]
    return [
        *(slots or [f"  __shared__ float cl_slots0[{cluster.blocks}];"]),
        "  rlx_cluster_arrive();",
        f"  const int lane = (int)rlx_cluster_rank() * {cluster.threads} + threadIdx.x;",
        f"  const long long r = blockIdx.x / {cluster.blocks};",
        f"  const long long base = {rows.row_base};",
        *("  " + b for b in body),
    ]


#: The value type a reduction's combining op folds (float where unnamed).
_STATE_TYPES = {"RlxMSMerge": "RlxMS", "RlxWelfordMerge": "RlxWelford"}


def _new_slot(types: list[str], op: str) -> int:
    """Records a reduction's slot type (of `op`'s value) in a reducer's
    `types`, so that its kernel declares the slots; the slot's number."""
    types.append(_STATE_TYPES.get(op, "float"))
    return len(types) - 1


@dataclass
class ClusterReducer:
    """The cluster form's Reducer: each call reduces over the cluster
    through its own shared slots (`cl_slots<call>`, of the op's value type),
    recorded here so the kernel declares them."""

    blocks: int
    threads: int
    types: list[str] = field(default_factory=list)

    def __call__(self, value: str, op: str, identity: str, smem: str) -> str:
        first = "false" if self.types else "true"
        return (f"rlx_cluster_reduce<{self.blocks}, {first}>({value}, {op}(), {identity}, {smem}, "
                f"cl_slots{_new_slot(self.types, op)})")


def _grid_row(body: list[str], rows: Rows, grid: GridReducer) -> list[str]:
    """`body` for one (row, part) of the grid form, taken from the kernel's
    ticket counter (`lane` the thread's index among the row's C ×
    blockDim.x). Tickets are handed out in the order blocks start, so
    every row whose blocks have started was started before any later row:
    its blocks still to come are the next to start, and a row's blocks
    never all wait on blocks that cannot be scheduled. A launch takes
    rows × C consecutive tickets (launches of a kernel run one at a time,
    in stream order), so its first is a multiple of rows × C."""
    return [
        *_ticket("threadIdx.x == 0", rows.rows * grid.blocks, grid.blocks),
        f"  const int lane = rank * {grid.threads} + threadIdx.x;",
        f"  const long long r = g_at / {grid.blocks};",
        f"  const long long base = {rows.row_base};",
        *("  " + b for b in body),
    ]


def _ticket(first: str, tickets: int, blocks: int = 0, note: str = "") -> list[str]:
    """The opening of a kernel whose blocks take tickets (the grid forms):
    thread `first` draws the block's ticket, whose place `g_at` among a
    launch's `tickets` gives the block's `rank` among `blocks` (0: no rank,
    the kernel places its blocks itself)."""
    return [
        "  __shared__ unsigned long long g_ticket;",
        f"  if ({first}) g_ticket = atomicAdd(&ENTRY_ticket, 1ull);",
        "  __syncthreads();",
        f"  const long long g_at = (long long)(g_ticket % {tickets}ull);{note}",
        *([f"  const int rank = (int)(g_at % {blocks});"] if blocks else []),
    ]


@dataclass
class GridReducer:
    """The grid form's Reducer: each call reduces over the row's blocks
    through its own scratch slots (`ENTRY_part<call>`, of the op's value
    type, C per row), recorded here so the kernel declares them; the calls
    share one arrival counter per row."""

    rows: int
    blocks: int
    threads: int
    types: list[str] = field(default_factory=list)

    def __call__(self, value: str, op: str, identity: str, smem: str) -> str:
        return (f"rlx_grid_reduce<{self.blocks}>({value}, {op}(), {identity}, {smem}, "
                f"ENTRY_part{_new_slot(self.types, op)} + r * {self.blocks}, ENTRY_arrived + r * 16, rank)")

    def globals(self) -> list[str]:
        return _ticket_globals(self.rows, "row", self.rows * self.blocks, "[row][part]", self.types)


def _ticket_globals(waiters: int, what: str, slots: int, layout: str, types: list[str]) -> list[str]:
    """The module globals of a form whose blocks take tickets and meet
    through global memory: the ticket counter, an arrival counter per `what`
    (`waiters` of them, 128 bytes apart) and each statistic's `slots` slots
    (laid out as `layout`). The counters only stay in step while every
    launch runs all its blocks to the end; a launch that does not (a fault)
    leaves the context unusable anyway (CUDA errors in kernels are sticky),
    so the module is never launched again."""
    return [
        "__device__ unsigned long long ENTRY_ticket = 0;  // blocks started, over all launches",
        f"__device__ unsigned long long ENTRY_arrived[{waiters * 16}] = {{}};  // arrivals per {what} (128 bytes apart), "
        "over all launches",
        *(f"__device__ {t} ENTRY_part{i}[{slots}];  // statistic {i}: {layout}" for i, t in enumerate(types)),
    ]


def _column_rows(body: list[str], rows: Rows, per_block: int) -> list[str]:
    """`body` for row blockIdx.x × `per_block` + threadIdx.x of the columns
    form (`lane`: threadIdx.y); the threads past the last row take the last
    row too (all of a block's threads meet in its reductions), writing the
    same bits its own threads write. That holds because a row op's output
    never shares memory with its input (`rlx-plan-memory` plans only
    elementwise ops in place); an in-place softmax would need those stores
    guarded."""
    return [
        f"  const long long r = min((long long)blockIdx.x * {per_block} + threadIdx.x, {rows.rows - 1}LL);",
        f"  const long long base = {rows.row_base};",
        *("  " + b for b in body),
    ]


#: COLUMN_MS_FOLD: the columns forms' softmax statistics (RlxMS) met over a
#: block's slices (and C blocks) by `rlx_column_ms_reduce`: threads y == 0
#: fold their column's, the max first and then each sum rescaled to it
#: once, where every thread had folded its column's Y states in a chain of
#: merges (2 exponentials each; `rlx_column_reduce`,
#: `rlx_column_grid_reduce`). H200 (session 57, `variant.py
#: COLUMN_MS_FOLD=False,True COLUMN_PACKED=False -- --ops softmax_mid
#: --dtypes f32,f16,bf16 --rows 300,640,1536,3072,11008 --sizes 64,512
#: --compile-sizes none --no-eager-timing`): +1.7% to +4.9% where the forms
#: meet over slices (f32 3072 at 512 MiB 349.6 -> 333.4 µs; 16-bit 640 and
#: 1536 +3.3% to +4.1%), the rest within 0.4% (the vector forms over blocks
#: meet their own way).
COLUMN_MS_FOLD = True


@dataclass
class ColumnReducer:
    """The columns form's Reducer: each call reduces over the `slices`
    threads of a block column through its own shared slots (`col_slots<call>`,
    of the op's value type, one per thread of the block), recorded here so
    the kernel declares them (none where a row has one slice)."""

    slices: int
    threads: int
    types: list[str] = field(default_factory=list)

    def __call__(self, value: str, op: str, identity: str, smem: str) -> str:
        if self.slices == 1:
            return value
        i = _new_slot(self.types, op)
        if op == "RlxMSMerge" and COLUMN_MS_FOLD:
            return (f"rlx_column_ms_reduce<{self.slices}, 1, 1>(RlxMSN<1>{{{{{value}}}}}, col_slots{i}, "
                    "nullptr, nullptr, 0).a[0]")
        return f"rlx_column_reduce<{self.slices}>({value}, {op}(), col_slots{i})"

    def slots(self) -> list[str]:
        return [f"  __shared__ {t} col_slots{i}[{self.threads}];" for i, t in enumerate(self.types)]


@dataclass
class ColumnGridReducer:
    """The columns form over blocks' Reducer (see COLUMN_GRID): each call
    reduces over a block column's Y threads in shared memory
    (`col_slots<call>`), then over the C blocks of the rows' group through
    its own global slots (`ENTRY_part<call>`, of the op's value type, C × X
    per group), recorded here so the kernel declares them; the calls share
    one arrival counter per group."""

    groups: int
    blocks: int
    x: int
    y: int
    types: list[str] = field(default_factory=list)

    def __call__(self, value: str, op: str, identity: str, smem: str) -> str:
        i = _new_slot(self.types, op)
        if op == "RlxMSMerge" and COLUMN_MS_FOLD:
            return (f"rlx_column_ms_reduce<{self.y}, {self.blocks}, 1>(RlxMSN<1>{{{{{value}}}}}, col_slots{i}, "
                    f"ENTRY_part{i} + g * {self.blocks * self.x}, ENTRY_arrived + g * 16, rank).a[0]")
        return (f"rlx_column_grid_reduce<{self.y}, {self.blocks}>({value}, {op}(), col_slots{i}, "
                f"ENTRY_part{i} + g * {self.blocks * self.x}, ENTRY_arrived + g * 16, rank)")

    def slots(self) -> list[str]:
        return [f"  __shared__ {t} col_slots{i}[{self.x * self.y}];" for i, t in enumerate(self.types)]

    def globals(self) -> list[str]:
        return _ticket_globals(self.groups, "group of rows", self.groups * self.blocks * self.x, "[group][block][row]",
                               self.types)


def _cols(body: str, rows: Rows, lane: str = "threadIdx.x", stride: str = "blockDim.x") -> str:
    """`body` for every column `k` (`o` its element) that thread `lane` of the
    row's `stride` takes."""
    return f"for (long long k = {lane}; k < {rows.cols}LL; k += {stride}) {{ const long long o = base + ({rows.col_off}); {body} }}"


def _batched_loads(loads: int, slices: int, cols: int, share: int) -> int:
    """Loads a columns-form thread issues before folding them in: `loads`
    where a row of `cols` elements has several slices of at most `share`
    elements each, else 1."""
    return loads if slices > 1 and -(-cols // slices) <= share else 1


def _batched_read(rows: Rows, lane: str, stride: int | str, loads: int, ctype: str, value: str, fold: str,
                  at: bool = False) -> list[str]:
    """The columns `k` that thread `lane` of the row's `stride` takes, `loads`
    at a time: `value` (of element `o`, as `ctype`) loaded for each, then
    `fold` for each (the value named `v`; with `at`, its element `o` too:
    a store)."""
    o = f"const long long o = base + ({rows.col_off});"
    return [
        f"for (long long k0 = {lane}; k0 < {rows.cols}LL; k0 += {loads} * {stride}) {{  // {loads} loads in flight",
        f"  {ctype} vs[{loads}];",
        "  #pragma unroll",
        f"  for (int j = 0; j < {loads}; ++j) {{ const long long k = k0 + j * {stride}; "
        f"if (k < {rows.cols}LL) {{ {o} vs[j] = {value}; }} }}",
        "  #pragma unroll",
        f"  for (int j = 0; j < {loads}; ++j) {{ const long long k = k0 + j * {stride}; "
        f"if (k < {rows.cols}LL) {{ {o + ' ' if at else ''}const {ctype} v = vs[j]; {fold} }} }}",
        "}",
    ]


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
                threads: int = THREADS, note: str = "", srow_type: str = "float",
                cluster: ClusterReducer | None = None, group: int = 32, min_blocks: int = 0,
                grid: GridReducer | None = None, batch: CachedRow | None = None, one_row: bool = False,
                staged: tuple[int, Attribute] | None = None, per_group: int = 1, pre: Sequence[str] = ()) -> str:
    """A kernel looping over the rows, `body` once per row: its blocks walk
    the rows (block, smem, float4 and looping forms), or its warps do (warp
    form, `lane` the thread's lane), or a cluster of blocks takes one row
    (cluster form, `lane` the thread's index in the cluster); with `one_row`
    the grid is the rows, a block each (`_row_loop`). `pre`: the warp
    form's statements once per thread, before its rows."""
    dims = f"__cluster_dims__({cluster.blocks}, 1, 1) " if cluster is not None else ""
    src = [f"// row form: {form}{f' ({note})' if note else ''}"]
    bounds = f"{threads}, {min_blocks}" if min_blocks else f"{threads}"
    src.append(f'extern "C" __global__ void {dims}__launch_bounds__({bounds}) ENTRY({decl}) {{')
    src.append(f"  __shared__ {smem_type} smem[32];")
    if form == "smem":
        src.append(f"  extern __shared__ __align__(16) {srow_type} srow[];")
    if form == "warp" and staged is not None:
        src += _staged_warp(body, rows, threads, group, *staged, pre=pre)
    elif form == "warp":
        src += _warp_loop(body, rows, threads // 32, group, batch, one_row, per_group, pre)
    elif cluster is not None:
        src += _cluster_row(body, rows, cluster)
    elif grid is not None:
        src += _grid_row(body, rows, grid)
        src[1:1] = grid.globals()  # after the form's line, before the entry
    else:
        src.extend(_row_loop(body, rows, one_row))
    src.append("}")
    return "\n".join(src) + "\n"


def block_reduce(value: str, op: str, identity: str, smem: str) -> str:
    """The reduction of `value` over the block (every thread gets it)."""
    return f"rlx_block_reduce({value}, {op}(), {identity}, {smem})"


def warp_reduce(value: str, op: str, identity: str, smem: str) -> str:
    """The reduction of `value` over the warp (every lane gets it)."""
    return f"rlx_warp_reduce({value}, {op}())"


def group_reduce(group: int) -> Reducer:
    """The reduction over a group of `group` lanes (every lane of it gets it)."""
    if group == 32:
        return warp_reduce
    return lambda value, op, identity, smem: f"rlx_group_reduce<{group}>({value}, {op}())"


def _group_of(lanes: int) -> int:
    """The smallest power of two holding `lanes`, a warp at most."""
    g = 1
    while g < min(lanes, 32):
        g *= 2
    return g


#: On: warp-form rows of at most 32 16-byte accesses whose count is not a
#: power of two take the lanes of its largest power-of-two factor where
#: that leaves at most WARP_EVEN_LANES_ITEMS[element bytes][lanes] accesses
#: a lane (rows of 24 accesses: 8 lanes of 3, not 32 lanes of which 8
#: idle). Off: one access a lane. Measured on an H200 (session 38, 64 and
#: 512 MiB, against off): 2 lanes of 3 accesses, 4 of 3, 5 or 7 and 8 of 3
#: gained up to 39% (16-bit layer_norm over rows of 160: 51.2 -> 36.8 µs;
#: f32 log_softmax over rows of 96: 39.0 -> 34.9, which was 0.95x eager);
#: one lane of 3 or 5 lost up to 63% and 2 lanes of 7 up to 58%, so those
#: keep a lane an access; 2 lanes of 5 gained 14-32% in 16-bit rows of 80
#: but lost 8% in f32 rms_norm over rows of 40, so only 16-bit rows take
#: them. Rows a prologue computes (the fused residual norms' x + residual)
#: keep a lane an access: there the even lanes lost 0-6% (rows of 24-224).
WARP_EVEN_LANES = True
WARP_EVEN_LANES_ITEMS = {4: {2: 3, 4: 7, 8: 7}, 2: {2: 5, 4: 7, 8: 7}}
#: ... and rows of 33 to WARP_WIDE_EVEN_LANES_BELOW - 1 16-byte accesses
#: that 32 does not divide, of elements of WARP_WIDE_EVEN_LANES_BYTES,
#: where their largest power-of-two factor is 8 or 16 lanes of at most
#: WARP_WIDE_EVEN_LANES_ITEMS accesses each (16-bit rows of 320: 40
#: accesses, 8 lanes of 5 rather than a warp whose second access keeps 8
#: of 32 lanes busy; of 384: 16 lanes of 3): 0 off, 1 for loaded rows, 2
#: for computed ones too (measured on the fused residual norms'; an
#: `rlx.fusion`'s prologue takes them too where it reads every input 16
#: bytes an access, not measured). H200, session 49
#: (`variant.py WARP_WIDE_EVEN_LANES=0,1,2 -- --ops
#: layer_norm,rms_norm,softmax,residual_layer_norm,residual_rms_norm --rows
#: 160,320,384,640 --sizes 64 --compile-sizes none`), 2 against 0: 16-bit
#: rows of 40 accesses: residual layer_norm +5.9% / +9.9% (f16 / bf16; the
#: bf16 case had been 0.95x torch.compile), residual rms_norm +2.4% /
#: +2.9%, layer_norm f16 +8.3%, the rest within ±1.6%; of 48: layer_norm
#: +6.7% / +6.4%, residual layer_norm +1.4% / +2.0%, rms_norm and softmax
#: -1.3% to +0.1%. Rows of 80 accesses (16 lanes of 5) lost (layer_norm
#: 16-bit -4.6% / -10.8%, rms_norm -2.8% / -3.1%), and f32 rows of 40
#: mixed (layer_norm +6.1%, softmax and the residual norms -2.6% to -3.2%):
#: so 16-bit rows under 64 accesses only.
WARP_WIDE_EVEN_LANES = 2
WARP_WIDE_EVEN_LANES_ITEMS = 5
WARP_WIDE_EVEN_LANES_BELOW = 64
WARP_WIDE_EVEN_LANES_BYTES = (2,)
#: ... their blocks per multiprocessor at least this many through
#: `__launch_bounds__` (0: as the compiler likes), where a lane holds
#: WARP_WIDE_EVEN_LANES_MIN_BLOCKS_ITEMS accesses or more. NVRTC 13 (sm_90)
#: gives bf16 layer_norm of 320 over 8 lanes 90 registers (2 blocks of 256
#: threads a multiprocessor) where f16 takes 69 (3 blocks); with 3, 80 and
#: no spills (4: 64 and 112 bytes spilled). H200, session 50 (`variant.py
#: WARP_WIDE_EVEN_LANES_MIN_BLOCKS=0,3 -- --ops
#: layer_norm,residual_layer_norm --dtypes f16,bf16 --rows 320,384 --sizes
#: 64,512`, every lane capped), 3 against 0: layer_norm of 320 (5 accesses
#: a lane) bf16 41.6 -> 38.0 / 290.8 -> 260.9 µs at 64 / 512 MiB, f16 +2.4%
#: / +1.4%; of 384 (3 a lane) -6.3% to -8.7%; the residual layer_norm
#: within ±0.8%. So layer_norm's (the residual one's too) lanes of 5
#: accesses only: the cap gave f16 rms_norm of 320 80 registers where it
#: takes 64 (4 blocks a multiprocessor), not measured.
WARP_WIDE_EVEN_LANES_MIN_BLOCKS = 3
WARP_WIDE_EVEN_LANES_MIN_BLOCKS_ITEMS = 5


def row_group(cols: int, elem_bytes: int, loaded: bool = True, vector: bool = True) -> int:
    """Lanes per row of the warp form: one 16-byte access each where the row
    is that short (64 f16 elements: 8 lanes, 4 rows a warp), else a warp
    (see WARP_EVEN_LANES, for `loaded` rows: not a prologue's; and
    WARP_WIDE_EVEN_LANES, for rows of several elements an access: `vector`,
    whose prologue, if any, reads no input an element at a time)."""
    items = -(-cols * elem_bytes // 16)
    g = _group_of(items)
    if (WARP_WIDE_EVEN_LANES > (0 if loaded else 1) and vector and 32 < items < min(WARP_WIDE_EVEN_LANES_BELOW, 256)
            and items % 32 and elem_bytes in WARP_WIDE_EVEN_LANES_BYTES
            and cols * elem_bytes % 16 == 0 and (items & -items) >= 8
            and items // (items & -items) <= WARP_WIDE_EVEN_LANES_ITEMS):
        return items & -items
    if WARP_EVEN_LANES and loaded and items < g and cols * elem_bytes % 16 == 0:
        even = items & -items  # the largest power of two dividing the accesses
        if items // even <= WARP_EVEN_LANES_ITEMS.get(elem_bytes, {}).get(even, 0):
            return even
    return g


#: How a form reduces a statistic over the threads of a row: (value, op,
#: identity, shared-memory scratch) -> the reduced value.
Reducer = Callable[[str, str, str, str], str]


#: Reductions (`reduce_kernel`) by the layout of the reduced axes, once
#: size-1 axes are dropped and neighbouring axes of the same kind (reduced
#: or kept) merged (`reduce_layout`):
#:
#: * columns: the innermost axis is kept: threads own adjacent outputs (an
#:   item of up to 16 bytes of them each, so every load is coalesced) and
#:   walk the reduced axes, THREADS / (items per block) threads apart, then
#:   combine by shuffles within a warp and one round through shared memory
#:   (COLUMN_COMBINE_SHUFFLE); fewer items per block (down to 64
#:   bytes of outputs) where the outputs are too few to fill the GPU, and
#:   blocks of 1024 threads where they are fewer than the multiprocessors;
#: * group: one trailing reduced run of up to GROUP_ROW_ITEMS items: a
#:   group of 1-32 lanes per row (16-byte items), reduced with shuffles;
#: * block: a longer trailing run: a block per row, 16-byte items, 4 in
#:   flight per thread;
#: * strided: reduced axes that are not one trailing run and the innermost
#:   axis reduced: a block per row, an element at a time;
#: * split (the columns and block forms, where their blocks are fewer than
#:   the multiprocessors): the reduced axis in chunks over grid.y, partials
#:   folded by the last block (see SPLIT_BLOCKS_PER_SM below).
#:
#: Accumulation is f32 for floats (i64 for integers); the order is fixed, so
#: results are the same from run to run.
GROUP_ROW_ITEMS = 256

#: The columns form's block shape: items per block are halved (from
#: THREADS / 8) while the blocks number under COLUMN_BLOCKS_PER_SM per
#: multiprocessor and each thread still gets 4 reduced elements, down to
#: COLUMN_MIN_BYTES of outputs per block; blocks of COLUMN_WIDE_THREADS
#: threads where they still number under one per multiprocessor.
COLUMN_BLOCKS_PER_SM = 2
COLUMN_MIN_BYTES = 64  # H100: 64-byte segments read at 86% of copy bandwidth where 16-byte ones reached 76%
#: ... and COLUMN_LONG_MIN_BYTES where the reduced axis has SPLIT_LONG_ELEMS
#: elements or more (fewer, wider blocks, split along it where they are
#: too few: SPLIT_LONG_BELOW). H200, session 42 (`variant.py
#: COLUMN_MIN_BYTES=64,128 -- --ops reduce_sum_mid --rows
#: 4096,8192,16384,32768 --sizes 64,512`): 128 took [128, 16384, 128] f16
#: at 512 MiB from 153.5 to 138.7 µs, bf16 148.2 -> 141.0, f32 [64, 16384,
#: 128] 144.7 -> 122.0 (109% of copy), but cost shorter axes at 64 MiB up
#: to 4.8% (f32 [32, 4096, 128] 19.3 -> 20.2); rows of 32768 within 1%.
COLUMN_LONG_MIN_BYTES = 128
COLUMN_WIDE_THREADS = 1024

#: Split reductions: where the columns or block form still has fewer than
#: SPLIT_BELOW blocks per multiprocessor (few outputs, long reductions:
#: [4, 32768, 128] over the middle axis, a sum of everything), the reduced
#: axis is cut into chunks, a block each (grid.y), towards
#: SPLIT_BLOCKS_PER_SM blocks per multiprocessor, each thread still
#: reducing SPLIT_MIN_ITEMS items or more, at most SPLIT_MAX chunks; the
#: columns form's blocks then take SPLIT_TILE_BYTES of outputs each (wider
#: tiles make the last block's fold longer: it reads every chunk's partials
#: of its tile). Each block writes its partial into a scratch array of the
#: kernel's own module (a `__device__` global: no arena space, one per
#: loaded kernel, which is safe because an executable's launches run in
#: stream order, one at a time); the last block of a tile to arrive (an atomic counter,
#: reset by it) folds the partials in chunk order, so results are the same
#: from run to run. SPLIT_BLOCKS_PER_SM = 0 turns splitting off.
SPLIT_BELOW = 1
#: ... and below SPLIT_LONG_BELOW blocks per multiprocessor where the
#: columns form reduces SPLIT_LONG_ELEMS elements or more per output. H200,
#: session 42 (`variant.py SPLIT_BELOW=1,2,3 -- --ops reduce_sum_mid --rows
#: 4096,32768 --sizes 64,512`): 2 took [64, 32768, 128] f16/bf16 at 512 MiB
#: (256 blocks, 1.9 a multiprocessor, 512 elements a thread) from 137.6 to
#: 125.8 µs (93% -> 102% of copy; f32 [32, 32768, 128] 131.1 -> 124.9) but
#: cost [64, 4096, 128] at 64 MiB 2-3% (64 elements a thread). Then
#: `variant.py SPLIT_LONG_BELOW=1,2 -- --ops reduce_sum_mid --rows
#: 4096,8192,16384,32768 --sizes 64,512`: [64, 32768, 128] f16 133.8 ->
#: 123.7 µs (105% of copy), bf16 134.6 -> 123.0, f32 [32, 32768, 128]
#: 126.1 -> 121.4; the cases the rule leaves alone within -3.4% .. +0.5%
#: (the second run's drift).
SPLIT_LONG_BELOW = 2
SPLIT_LONG_ELEMS = 16384
#: Split chunks rounded down (the blocks at most SPLIT_BLOCKS_PER_SM a
#: multiprocessor, one wave where that many fit), not up (at least that
#: many: 768 blocks for [128, 16384, 128] f16 over 132 multiprocessors,
#: 640 for [64, 32768, 128], where the unsplit [512, 4096, 128] makes 512
#: and reads at 108% of copy). H200, session 43 (`variant.py
#: SPLIT_WHOLE_WAVE=False,True -- --ops reduce_sum_mid,reduce_sum_last,
#: argmax_last --rows 4096,16384,32768,65536 --sizes 64,512`): f16
#: [128, 16384, 128] at 512 MiB 140.1 -> 125.3 µs (+11.8%, 103% of copy),
#: bf16 142.2 -> 124.5 (+14.2%); the other 70 cases within -2.8% .. +2.3%
#: (the second run's drift) but f32 argmax of 32768 at 64 MiB (+25%, 5.0%
#: at 65536). Those argmax and last-axis cases have rows enough not to
#: split, so only the columns form (the middle-axis reductions) takes it;
#: argmax and the last-axis split of few rows round up as before.
SPLIT_WHOLE_WAVE = True
#: The columns form's loads in flight per thread (each an item of up to 16
#: bytes). H100, f16/bf16 [8, 32768, 128] over the middle axis (split): 4
#: beat 8 (64 MiB: 78-79% -> 77% of copy bandwidth; 512 MiB: 95% -> 89-90%)
#: and 2 (70%).
COLUMN_LOADS = 4
#: The columns form's threads of a column combine by shuffles within each
#: warp, then in one round through shared memory (False: pairwise through
#: shared memory, a round per halving: 5 for 32 threads apart). H200
#: (session 34, `variant.py COLUMN_COMBINE_SHUFFLE=False,True -- --ops
#: reduce_sum_mid --rows 64,128,512,768,4096,32768 --sizes 64,512`): the
#: split [8, 32768, 128] at 64 MiB, whose last block combines twice,
#: 21.5 -> 20.9 µs in f16, 21.4 -> 20.9 bf16, 20.4 -> 20.0 f32; the other
#: 33 cases within ±1.7%. An upper bound (the fold left out, wrong values)
#: put that case at 20.1 µs, and the partials' writes and the atomic too
#: at 19.1. Writing and reading the partials as float4 measured no better
#: (-0.2% to -1.4%).
COLUMN_COMBINE_SHUFFLE = True
#: ... and items of fewer bytes (outputs that 16 bytes do not divide: an odd
#: innermost axis) COLUMN_LOAD_BYTES / item bytes loads, up to
#: COLUMN_MAX_LOADS (0: COLUMN_LOADS whatever the item); threads along the
#: reduced axes only as many as leave each COLUMN_MIN_ELEMS of them (0 or 1:
#: up to 8 whatever the axis). H100 (session 19, `variant.py
#: COLUMN_LOAD_BYTES=0,32 -- --ops reduce_sum_mid --inner 49 --rows
#: 3,21,64,256,1000,3000 --sizes 64`, then COLUMN_MIN_ELEMS=0,4,8): with an
#: inner axis of 49, 32 bytes sped axes of 1000-3000 up 3-18% (f16 [228,
#: 3000, 49] 49.0 -> 41.8 µs); 8 elements axes of 3 30-79% (f16 74.7 ->
#: 41.7, was 0.62x torch.compile) and of 21 11-67% (4: f32 18%, bf16 31%);
#: with the inner axis of 128 (16-byte items) both within 1.8% over rows of
#: 3-32768 at 64 and 512 MiB.
COLUMN_LOAD_BYTES = 32
COLUMN_MAX_LOADS = 16
COLUMN_MIN_ELEMS = 8
SPLIT_BLOCKS_PER_SM = 4  # H100, [4-8, 32768, 128] at 64 MiB: 4 beat 8 and 16 (f16 78% / 76% / 76% of copy)
SPLIT_MIN_ITEMS = 16
SPLIT_MAX = 1024
SPLIT_TILE_BYTES = 128  # same cases: 128 beat 64, 256 and 512 (f16 75% / 73% / 70% / 55%)


def split_count(blocks: int, items: int, threads_along: int, sm_count: int, below: int | None = None,
                min_items: int | None = None, whole_wave: bool = False) -> int:
    """Chunks to cut a reduction of `items` per output into, for a form
    with `blocks` blocks and `threads_along` threads along the reduced
    axis (1: no split); split only where the blocks are fewer than `below`
    (default SPLIT_BELOW) per multiprocessor, each thread keeping at least
    `min_items` (default SPLIT_MIN_ITEMS) items; `whole_wave`: the count
    rounded down (SPLIT_WHOLE_WAVE, the columns form's), not up."""
    if SPLIT_BLOCKS_PER_SM <= 0 or blocks <= 0 or items <= 0 \
            or blocks >= (SPLIT_BELOW if below is None else below) * sm_count:
        return 1
    want = SPLIT_BLOCKS_PER_SM * sm_count // blocks if whole_wave else -(-SPLIT_BLOCKS_PER_SM * sm_count // blocks)
    least = SPLIT_MIN_ITEMS if min_items is None else min_items
    s = max(1, min(want, items // (threads_along * least), SPLIT_MAX))
    return -(-items // -(-items // s))  # no empty chunk


def _split_fold(values: Sequence[str], outputs: int, split: int, holds: str, index: str, tile: str,
                fold: list[str], stores: Sequence[str] | None = None, leader: str = "threadIdx.x == 0") -> list[str]:
    """The end of a split kernel: the block's partials (`values`, of the
    outputs `index` * len(values) on, written by the threads where `holds`)
    into the scratch array (or the statements `stores`, which write them
    elsewhere), then, in the last block of tile `tile` to arrive, `fold`
    (statements that read the partials with `__ldcg` in chunk order and
    store the outputs). `leader`: the thread that fences and counts (in a
    2-d block "threadIdx.x == 0 && threadIdx.y == 0"). The fences are thread
    0's, after the block's barrier, as cooperative groups' grid sync has them (a
    fence is cumulative: it orders the writes the barrier made visible to
    thread 0); the last block's second fence, before its barrier, orders
    the fold's reads after the other blocks' writes. Before, every thread
    fenced. H100, session 35 (`variant.py` over reduce_sum_mid of 4096 and
    32768 in f32/f16/bf16 at 64 and 512 MiB): 0 to +2.5% (f32 [32, 32768,
    128] at 512 MiB 193.5 -> 188.9 µs), no case slower."""
    vw = len(values)
    return [
        f"  // split: chunk blockIdx.y's partials to scratch; the last of the tile's {split} blocks folds them in chunk order",
        f"  if ({holds}) {{",
        *(f"    {line}" for line in (stores if stores is not None else [
            f"const long long at = ((long long)blockIdx.y * {outputs}LL + {index}) * {vw};",
            *(f"ENTRY_part[at + {e}] = {v};" for e, v in enumerate(values))])),
        "  }",
        "  __syncthreads();  // the block's partials written, then one thread's fence makes them visible (cumulative)",
        "  __shared__ bool rlx_last;",
        f"  if ({leader}) {{",
        "    __threadfence();",
        f"    rlx_last = atomicAdd(&ENTRY_count[{tile}], 1u) == {split - 1}u;",
        "    if (rlx_last) __threadfence();  // the other blocks' partials, seen before the fold reads them",
        "  }",
        "  __syncthreads();",
        "  if (!rlx_last) return;",
        *fold,
        f"  if ({leader}) ENTRY_count[{tile}] = 0u;  // ready for the next launch",
    ]


def _split_globals(acc: str, vw: int, outputs: int, split: int, tiles: int) -> list[str]:
    return [f"__device__ {acc} ENTRY_part[{split * outputs * vw}];  // split partials: [chunk][output]",
            f"__device__ unsigned int ENTRY_count[{tiles}];  // blocks arrived per tile (zero at load, reset by the last)"]


def reduce_layout(xs: Sequence[int], axes: Sequence[int]) -> tuple[list[int], list[int]]:
    """The same reduction over fewer axes: size-1 axes dropped, neighbours
    of the same kind merged. Returns (shape, reduced axes)."""
    red = set(axes)
    merged: list[list[int]] = []  # [extent, reduced]
    for a, d in enumerate(xs):
        if d == 1:
            continue
        if merged and merged[-1][1] == (a in red):
            merged[-1][0] *= d
        else:
            merged.append([d, int(a in red)])
    return [d for d, _ in merged], [k for k, (_, r) in enumerate(merged) if r]


def _item_elems(t: Attribute, n: int) -> int:
    """Elements per item: the widest access of 16, 8 or 4 bytes (2 elements
    or more) whose element count divides `n`; else 1."""
    size = dtype(t).bytes
    for b in (16, 8, 4):
        w = b // size
        if w >= 2 and n % w == 0:
            return w
    return 1


def _item_type(t: Attribute, vw: int) -> str:
    return dtype(t).c_storage if vw == 1 else _RAW[vw * dtype(t).bytes]


def _fold_item(item: str, t: Attribute, vw: int, fold: Callable[[int, str], str]) -> str:
    """Statements folding the `vw` elements of `item` (an expression of the
    item type): `fold(e, compute value of element e)` -> a statement.
    f16/bf16 items of 8 are converted in pairs."""
    if vw == 1:
        return fold(0, load(item, t))
    name = dtype_name(t)
    if name in ("f16", "bf16") and vw == 8:
        return f"{{ float f[8]; rlx_ld8_{name}({item}, f); " + " ".join(fold(e, f"f[{e}]") for e in range(8)) + " }"
    return (f"{{ union {{ {_item_type(t, vw)} raw; {dtype(t).c_storage} e[{vw}]; }} pk; pk.raw = {item}; "
            + " ".join(fold(e, load(f"pk.e[{e}]", t)) for e in range(vw)) + " }")


def _pack_item(t: Attribute, vw: int, value: Callable[[int], str]) -> list[str]:
    """Statements building `item` (declared here) of `vw` outputs of type
    `t` from compute values `value(e)`."""
    if vw == 1:
        return [f"const {dtype(t).c_storage} item = {store(value(0), t)};"]
    name = dtype_name(t)
    if name in ("f16", "bf16") and vw == 8:
        return [f"float o[8] = {{{', '.join(value(e) for e in range(8))}}};", f"const uint4 item = rlx_st8_{name}(o);"]
    return [f"union {{ {_item_type(t, vw)} raw; {dtype(t).c_storage} e[{vw}]; }} pk;",
            *(f"pk.e[{e}] = {store(value(e), t)};" for e in range(vw)),
            f"const {_item_type(t, vw)} item = pk.raw;"]


def _fewer_items(cv: int, outputs: int) -> int:
    """`cv` halved while half of it still covers `outputs` items."""
    while cv > 1 and cv // 2 >= outputs:
        cv //= 2
    return cv


def _reduce_columns(x: SSAValue, y: SSAValue, xs: list[int], axes: list[int], reducer: str, ident: str, acc: str,
                    finish: Callable[[str], str], sm_count: int) -> KernelSpec:
    """The columns form (see GROUP_ROW_ITEMS above): `xs` ends in a kept
    axis. Split (`split_count`) where its blocks are too few."""
    t, ty = eltype(x), eltype(y)
    vw = _item_elems(t, xs[-1]) if dtype(t) == dtype(ty) else 1
    rows = Rows.of([*xs[:-1], xs[-1] // vw], axes)  # in items: a row is an item of outputs
    item, yitem = _item_type(t, vw), _item_type(ty, vw)
    rk = 1  # threads along the reduced axes: up to 8 to begin with, each taking COLUMN_MIN_ELEMS or more
    while rk * 2 <= min(rows.cols // max(1, COLUMN_MIN_ELEMS), 8):
        rk *= 2
    loads = max(COLUMN_LOADS, min(COLUMN_MAX_LOADS, COLUMN_LOAD_BYTES // (vw * dtype(t).bytes))) \
        if COLUMN_LOAD_BYTES else COLUMN_LOADS
    cv = wide_cv = _fewer_items(THREADS // rk, rows.rows)
    long_axis = rows.cols >= SPLIT_LONG_ELEMS  # COLUMN_LONG_MIN_BYTES, SPLIT_LONG_BELOW
    min_bytes = COLUMN_LONG_MIN_BYTES if long_axis else COLUMN_MIN_BYTES
    # halved while the blocks are too few and each thread still gets 4 reduced elements
    while (cv > 1 and -(-rows.rows // cv) < COLUMN_BLOCKS_PER_SM * sm_count and rows.cols >= 4 * (THREADS // (cv // 2))
           and (cv // 2) * vw * dtype(t).bytes >= min_bytes):
        cv //= 2
    blocks = -(-rows.rows // cv)
    # still too few: split the reduced axis instead, over tiles of SPLIT_TILE_BYTES of outputs
    tile_cv = wide_cv
    while tile_cv > 1 and tile_cv * vw * dtype(t).bytes > SPLIT_TILE_BYTES:
        tile_cv //= 2
    tiles = -(-rows.rows // tile_cv)
    below = max(SPLIT_BELOW, SPLIT_LONG_BELOW) if long_axis else SPLIT_BELOW
    split = split_count(tiles, rows.cols, THREADS // tile_cv, sm_count, below,
                        whole_wave=SPLIT_WHOLE_WAVE) if blocks < below * sm_count else 1
    if split > 1 and tiles * split >= 2 * blocks:  # worth it: at least twice the blocks
        cv, blocks = tile_cv, tiles
    else:
        split = 1
    wide = COLUMN_WIDE_THREADS
    threads = wide if split == 1 and blocks < sm_count and rows.cols >= 4 * wide // cv else THREADS
    rk = threads // cv
    chunk = -(-rows.cols // split)
    ct = compute_type(ty)
    decl = params_decl([("x_", x, False), ("y_", y, True)])
    fold = _fold_item("p[j]", t, vw, lambda e, v: f"acc[{e}] = {reducer}()(acc[{e}], ({acc}){v});")
    how = f", the reduced axis split in {split} chunks of {chunk} (grid.y)" if split > 1 else ""
    src = [f"// reduce form: columns: {cv} items of {vw} adjacent outputs per block, {rk} threads apart along "
           f"the {rows.cols} reduced elements, {loads} loads in flight per thread{how}"]
    lo, hi = ("k_lo + ", "k_hi") if split > 1 else ("", f"{rows.cols}LL")
    if COLUMN_COMBINE_SHUFFLE and rk > 1:
        # the rk values a warp holds (cv < 32: lanes rk % (32 / cv) * cv + c) by shuffles, then one round
        # through shared memory: a slot per warp (or per rk where a warp holds one), folded in order
        part_rows = threads // 32 if cv < 32 else rk
        combine = [
            *(["  // the column's threads of a warp combine by shuffles (the same bits in every lane)",
               "  #pragma unroll",
               f"  for (int o = {cv}; o < 32; o <<= 1) {{",
               "    #pragma unroll",
               f"    for (int e = 0; e < {vw}; ++e) acc[e] = {reducer}()(acc[e], rlx_shfl(acc[e], o));",
               "  }"] if cv < 32 else []),
            f"  // then one value per {'warp' if cv < 32 else 'thread'} and column through shared memory, folded in order",
            f"  if ({'(threadIdx.x & 31) < ' + str(cv) if cv < 32 else 'true'}) {{",
            "    #pragma unroll",
            f"    for (int e = 0; e < {vw}; ++e) part[{'threadIdx.x >> 5' if cv < 32 else 'rk'}][c * {vw} + e] = acc[e];",
            "  }",
            "  __syncthreads();",
            "  if (rk == 0) {",
            "    #pragma unroll",
            f"    for (int e = 0; e < {vw}; ++e) {{ acc[e] = part[0][c * {vw} + e]; for (int g = 1; g < {part_rows}; ++g) "
            f"acc[e] = {reducer}()(acc[e], part[g][c * {vw} + e]); }}",
            "  }",
            "  __syncthreads();",
        ]
    else:
        part_rows = rk // 2 if rk > 1 else 1
        combine = [
            "  // the threads of a column combine pairwise, halving each step",
            f"  for (int s = {rk // 2}; s > 0; s >>= 1) {{",
            "    if (rk >= s && rk < 2 * s) {",
            "      #pragma unroll",
            f"      for (int e = 0; e < {vw}; ++e) part[rk - s][c * {vw} + e] = acc[e];",
            "    }",
            "    __syncthreads();",
            "    if (rk < s) {",
            "      #pragma unroll",
            f"      for (int e = 0; e < {vw}; ++e) acc[e] = {reducer}()(acc[e], part[rk][c * {vw} + e]);",
            "    }",
            "    __syncthreads();",
            "  }",
        ]
    store_out = [
        f"  if (rk == 0 && r < {rows.rows}LL) {{",
        *("    " + s for s in _pack_item(ty, vw, lambda e: f"({ct})({finish(f'acc[{e}]')})")),
        "    y[r] = item;",
        "  }",
    ]
    src += _split_globals(acc, vw, rows.rows, split, blocks) if split > 1 else []
    src += [
        f'extern "C" __global__ void __launch_bounds__({threads}) ENTRY({decl}) {{',
        f"  const {item}* __restrict__ x = reinterpret_cast<const {item}*>(x_);",
        f"  {yitem}* __restrict__ y = reinterpret_cast<{yitem}*>(y_);",
        f"  __shared__ {acc} part[{part_rows}][{cv * vw}];",
        f"  const int c = threadIdx.x % {cv}, rk = threadIdx.x / {cv};",
        f"  const long long r = (long long)blockIdx.x * {cv} + c;",
    ]
    if split > 1:
        src.append(f"  const long long k_lo = (long long)blockIdx.y * {chunk}LL, "
                   f"k_hi = k_lo + {chunk}LL < {rows.cols}LL ? k_lo + {chunk}LL : {rows.cols}LL;")
    src += [
        f"  {acc} acc[{vw}];",
        "  #pragma unroll",
        f"  for (int e = 0; e < {vw}; ++e) acc[e] = {ident};",
        f"  if (r < {rows.rows}LL) {{",
        f"    const long long base = {rows.row_base};",
        f"    for (long long k0 = {lo}rk; k0 < {hi}; k0 += {loads * rk}) {{",
        f"      {item} p[{loads}];",
        "      #pragma unroll",
        f"      for (int j = 0; j < {loads}; ++j) {{ const long long k = k0 + j * {rk}; if (k < {hi}) p[j] = x[base + ({rows.col_off})]; }}",
        "      #pragma unroll",
        f"      for (int j = 0; j < {loads}; ++j) {{ const long long k = k0 + j * {rk}; if (k < {hi}) {fold} }}",
        "    }",
        "  }",
        *combine,
    ]
    if split > 1:
        src += _split_fold([f"acc[{e}]" for e in range(vw)], rows.rows, split, f"rk == 0 && r < {rows.rows}LL", "r", "blockIdx.x", [
            "  // the tile's chunks, rk apart, then combined as before",
            "  #pragma unroll",
            f"  for (int e = 0; e < {vw}; ++e) acc[e] = {ident};",
            f"  if (r < {rows.rows}LL) {{",
            "    #pragma unroll 8",
            f"    for (int s = rk; s < {split}; s += {rk}) {{",
            "      #pragma unroll",
            f"      for (int e = 0; e < {vw}; ++e) acc[e] = {reducer}()(acc[e], __ldcg(&ENTRY_part[((long long)s * {rows.rows}LL + r) * {vw} + e]));",
            "    }",
            "  }",
            *combine,
            *store_out,
        ])
    else:
        src += store_out
    src.append("}")
    grid = (blocks, split, 1) if split > 1 else blocks
    return KernelSpec("reduce_cols", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid, threads)


#: Rows whose length the full 16-byte width does not divide (odd lengths:
#: 1001, 4097, 50257; 30522 in f16) are reduced "peeled" where they hold at
#: least PEEL_REDUCE_MIN full vectors: each row's aligned middle as 16-byte
#: items, the fewer-than-a-vector elements before and after it one at a time
#: (H100, 64 MiB f16 rows of 1001 and 4097: 2-byte accesses read at 62% and
#: 77% of copy). 0 turns it off.
PEEL_REDUCE_MIN = 4
#: On: the block reduce form loads its thread's peeled head or tail element
#: (a row has fewer than 2 x 16 bytes of them, so one per thread at most)
#: before the row's vectors, into a register folded after them: one round
#: trip per row. Off: a loop after the vectors reads them (a second round
#: trip per row). H200, f32 reduce_sum_last of 2049 (peeled, 2 vectors a
#: thread) at 64 MiB took 23.4 µs where unpeeled rows of 1536 took 18.1;
#: a loop over the edges placed before the vectors took 28.3 µs (the
#: vectors' loads waited for it). H200 (session 37, `variant.py
#: PEEL_EDGE_PRELOAD=False,True -- --ops reduce_sum_last --dtypes f32,f16
#: --rows 1025,2049,4097,8191 --sizes 64,512`): f32 rows of 2049 23.5 ->
#: 19.1 µs at 64 MiB (0.91x -> 1.15x eager) and 169.2 -> 127.2 at 512 MiB,
#: of 4097 +4-5%; the rest within ±2% but f16 of 8191 at 64 MiB (18.6 -> 19.7).
PEEL_EDGE_PRELOAD = True


def _reduce_peel(t: Attribute, n: int) -> int:
    """The full 16-byte width (elements) when rows of `n` are reduced peeled, else 0."""
    full = 16 // dtype(t).bytes
    if PEEL_REDUCE_MIN <= 0 or full < 2 or _item_elems(t, n) == full or n < PEEL_REDUCE_MIN * full:
        return 0
    return full


def _peel_lines(n: int, vw: int, r: str, edges: bool = True) -> list[str]:
    """Row `r`'s aligned middle: items `va` .. `vb` (16-byte aligned,
    counted from the buffer's start); with `edges`, `hc` elements before it
    and `ht` - `hc` after (from element `rs`, the row's first)."""
    lines = [
        f"const unsigned long long rs = (unsigned long long)({r}) * {n}ULL;  // the row's first element",
        f"const unsigned long long va = (rs + {vw - 1}ULL) / {vw}ULL, vb = (rs + {n}ULL) / {vw}ULL;",
    ]
    if edges:
        lines.append(f"const int hc = (int)(va * {vw}ULL - rs), ht = hc + (int)(rs + {n}ULL - vb * {vw}ULL);")
    return lines


def _peel_edge(t: Attribute, vw: int, acc: str, e: str) -> str:
    """The row's edge element `e` (of `ht`: `hc` before the middle, the rest
    after it), loaded as `acc`."""
    return f"({acc}){load(f'x_[{e} < hc ? rs + {e} : vb * {vw}ULL + ({e} - hc)]', t)}"


def _peel_fold(t: Attribute, n: int, vw: int, acc: str, reducer: str, who: str, step: str) -> str:
    """The loop folding the row's head and tail elements, thread `who`
    taking every `step`-th."""
    return f"for (int e = {who}; e < ht; e += {step}) acc = {reducer}()(acc, {_peel_edge(t, vw, acc, 'e')});"


def _reduce_rows(x: SSAValue, y: SSAValue, nrows: int, n: int, reducer: str, ident: str, acc: str,
                 finish: Callable[[str], str], sm_count: int) -> KernelSpec:
    """The group and block forms: `nrows` contiguous rows of `n` elements,
    peeled (`_reduce_peel`) where the full width does not divide `n`."""
    t, ty = eltype(x), eltype(y)
    peel = _reduce_peel(t, n)
    vw = peel or _item_elems(t, n)
    m = n // vw  # items per row (peeled: the most; a row has m or m - 1)
    item = _item_type(t, vw)
    decl = params_decl([("x_", x, False), ("y", y, True)])
    ct = compute_type(ty)
    fold = _fold_item("p[j]", t, vw, lambda e, v: f"acc = {reducer}()(acc, ({acc}){v});")
    result = store(f"({ct})({finish('acc')})", ty)
    head = [f"  const {item}* __restrict__ x = reinterpret_cast<const {item}*>(x_);"]
    peeled = (f", peeled: each row's 16-byte aligned middle as items, the fewer than {vw} elements"
              " before and after it one at a time") if peel else ""
    if m <= GROUP_ROW_ITEMS:
        g = 1
        while g * 2 <= min(m, 32):
            g *= 2
        per = -(-m // g)  # items per lane
        u = max(1, 4 // per)  # rows per group: 4 loads in flight per lane at least
        groups = THREADS // g
        src = [f"// reduce form: group: {g} lanes per row of {n} elements, {vw} elements per item, "
               f"{per} items per lane, {u} rows per group{peeled}"]
        first, count = ("va + it", "(int)(vb - va)") if peel else (f"r * {m}LL + it", f"{m}")
        src += [
            f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{',
            *head,
            f"  const int lane = threadIdx.x & {g - 1};",
            f"  const long long r0 = (long long)blockIdx.x * {groups * u} + threadIdx.x / {g};  // row s: r0 + s * {groups}",
            f"  {item} p[{u * per}];",
            "  #pragma unroll",
            f"  for (int s = 0; s < {u}; ++s) {{",
            f"    const long long r = r0 + s * {groups};",
            *(f"    {line}" for line in (_peel_lines(n, vw, "r", edges=False) if peel else [])),
            "    #pragma unroll",
            f"    for (int c = 0; c < {per}; ++c) {{",
            f"      const int it = lane + c * {g};",
            f"      if (r < {nrows}LL && it < {count}) p[s * {per} + c] = x[{first}];",
            "    }",
            "  }",
            "  #pragma unroll",
            f"  for (int s = 0; s < {u}; ++s) {{",
            f"    const long long r = r0 + s * {groups};",
            *(f"    {line}" for line in (_peel_lines(n, vw, "r") if peel else [])),
            f"    {acc} acc = {ident};",
            "    #pragma unroll",
            f"    for (int c = 0; c < {per}; ++c) {{",
            f"      const int j = s * {per} + c;",
            f"      if (r < {nrows}LL && lane + c * {g} < {count}) {fold}",
            "    }",
            *([f"    if (r < {nrows}LL) {_peel_fold(t, n, vw, acc, reducer, 'lane', str(g))}"] if peel else []),
            f"    for (int o = {g // 2}; o > 0; o >>= 1) acc = {reducer}()(acc, rlx_shfl(acc, o));",
            f"    if (lane == 0 && r < {nrows}LL) y[r] = {result};",
            "  }",
            "}",
        ]
        grid = -(-nrows // (groups * u))
        return KernelSpec("reduce", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)
    grid = max(1, min(nrows, sm_count * 16))  # unsplit: blocks walking the rows
    split = split_count(grid, m, THREADS, sm_count)
    chunk = -(-m // split)
    how = f", each row split in {split} chunks of {chunk} items (grid.y)" if split > 1 else ""
    src = [f"// reduce form: block: a block per row of {n} elements, {vw} elements per item, 4 loads in flight per thread{how}{peeled}"]
    src += _split_globals(acc, 1, nrows, split, nrows) if split > 1 else []
    end = "(int)(vb - va)" if peel else f"{m}"
    lo, hi = ("lo + ", "hi") if split > 1 else ("", end)
    src += [
        f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{',
        *head,
        f"  __shared__ {acc} smem[32];",
    ]
    ix = "int" if m < 2**31 - 4 * THREADS else "long long"
    before: list[str] = []
    after: list[str] = []
    if peel and PEEL_EDGE_PRELOAD:  # ht < 2 * vw <= THREADS: one edge element a thread at most
        who = "blockIdx.y == 0 && (int)threadIdx.x < ht" if split > 1 else "(int)threadIdx.x < ht"
        before = [f"const {acc} edge = {who} ? {_peel_edge(t, vw, acc, 'threadIdx.x')} : ({acc}){ident};  // folded after the vectors"]
        after = [f"acc = {reducer}()(acc, edge);"]
    elif peel:
        after = [_peel_fold(t, n, vw, acc, reducer, "(int)threadIdx.x", str(THREADS))]
        if split > 1:
            after = [f"if (blockIdx.y == 0) {after[0]}"]
    row_lines = _peel_lines(n, vw, "r") if peel else []  # before the split's bounds, which use them
    body = [
        f"const {item}* __restrict__ xr = x + {'va' if peel else f'r * {m}LL'};",
        f"{acc} acc = {ident};",
        *before,
        f"for ({ix} i0 = {lo}threadIdx.x; i0 < {hi}; i0 += {4 * THREADS}) {{",
        f"  {item} p[4];",
        "  #pragma unroll",
        f"  for (int j = 0; j < 4; ++j) {{ const {ix} it = i0 + j * {THREADS}; if (it < {hi}) p[j] = xr[it]; }}",
        "  #pragma unroll",
        f"  for (int j = 0; j < 4; ++j) {{ const {ix} it = i0 + j * {THREADS}; if (it < {hi}) {fold} }}",
        "}",
        *after,
        f"acc = rlx_block_reduce(acc, {reducer}(), ({acc}){ident}, smem);",
    ]
    if split == 1:
        src += [f"  for (long long r = blockIdx.x; r < {nrows}LL; r += gridDim.x) {{",
                *("    " + b for b in (*row_lines, *body)), f"    if (threadIdx.x == 0) y[r] = {result};", "  }", "}"]
        return KernelSpec("reduce", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)
    src += [
        "  const long long r = blockIdx.x;",
        *("  " + b for b in row_lines),
        f"  const {ix} lo = ({ix})blockIdx.y * {chunk}, hi = lo + {chunk} < {end} ? lo + {chunk} : {end};",
        *("  " + b for b in body),
    ]
    src += _split_fold(["acc"], nrows, split, "threadIdx.x == 0", "r", "r", [
        f"  acc = {ident};  // the row's chunks, {THREADS} apart, then over the block",
        "  #pragma unroll 8",
        f"  for (int s = threadIdx.x; s < {split}; s += {THREADS}) acc = {reducer}()(acc, __ldcg(&ENTRY_part[(long long)s * {nrows}LL + r]));",
        f"  acc = rlx_block_reduce(acc, {reducer}(), ({acc}){ident}, smem);",
        f"  if (threadIdx.x == 0) y[r] = {result};",
    ])
    src.append("}")
    return KernelSpec("reduce", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], (nrows, split, 1))


def _reduce_fill(x: SSAValue, y: SSAValue, value: str, sm_count: int) -> KernelSpec:
    """A reduction with nothing to read (an empty reduced axis, or no
    outputs): every output set to `value`, the reduction of no elements (0
    for sums, 1 for products, -inf / +inf for max / min, NaN for means, as
    ONNX and numpy's `initial` give)."""
    n = numel(shape(y))
    decl = params_decl([("x", x, False), ("y", y, True)])
    src = [f"// reduce form: fill ({n} outputs, each the reduction of no elements)",
           f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{',
           f"  for (long long i = (long long)blockIdx.x * {THREADS} + threadIdx.x; i < {n}LL; "
           f"i += (long long)gridDim.x * {THREADS}) y[i] = {value};",
           "}"]
    grid = max(1, min(-(-n // THREADS), sm_count * 16))
    return KernelSpec("reduce", "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)


def reduce_kernel(op: rlx.ReduceOp, sm_count: int) -> KernelSpec:
    """f32 (or i64) accumulation, in the form `reduce_layout` picks (see
    GROUP_ROW_ITEMS above)."""
    x, y = op.input, op.result
    xs0 = shape(x)
    axes0 = sorted(a % len(xs0) for a in ints(op.axes)) if xs0 else []
    count = numel([xs0[a] for a in axes0])  # elements per output
    reducer, ident = _REDUCERS[type(op)]
    acc = _acc_type(eltype(x))
    if acc != "float":
        ident = {"-RLX_INF": "(-9223372036854775807LL - 1)", "RLX_INF": "9223372036854775807LL"}.get(ident, ident)
    mean = isinstance(op, rlx.ReduceMeanOp)

    def finish(a: str) -> str:
        return f"{a} / (float){count}" if mean else a

    if count == 0 or numel(shape(y)) == 0:  # nothing to read: every output is the empty reduction's value
        empty = f"({acc}){ident}"
        if acc != "float" and reducer in ("RlxMax", "RlxMin"):  # the output type's least / greatest
            bits = dtype(eltype(y)).bytes * 8
            empty = f"(-{2 ** (bits - 1) - 1}LL - 1)" if reducer == "RlxMax" else f"{2 ** (bits - 1) - 1}LL"
        return _reduce_fill(x, y, store(f"({compute_type(eltype(y))})({finish(empty)})", eltype(y)), sm_count)
    xs, axes = reduce_layout(xs0, axes0)
    if not axes:  # nothing left to reduce: the columns form over every element, one each
        return _reduce_columns(x, y, [numel(xs0)], [], reducer, ident, acc, finish, sm_count)
    if len(xs) - 1 not in axes:
        return _reduce_columns(x, y, xs, axes, reducer, ident, acc, finish, sm_count)
    if axes == [len(xs) - 1]:
        return _reduce_rows(x, y, numel(xs[:-1]), xs[-1], reducer, ident, acc, finish, sm_count)
    rows = Rows.of(xs, axes)
    decl = params_decl([("x", x, False), ("y", y, True)])
    result = store(f"({compute_type(eltype(y))})({finish('acc')})", eltype(y))
    body = [
        f"{acc} acc = {ident};",
        _cols(f"acc = {reducer}()(acc, ({acc}){load('x[o]', eltype(x))});", rows),
        f"acc = rlx_block_reduce(acc, {reducer}(), ({acc}){ident}, smem);",
        f"if (threadIdx.x == 0) y[r] = {result};",
    ]
    src = _row_kernel(decl, body, rows, acc).replace("// row form: block", "// reduce form: strided: a block per row, an element at a time")
    return KernelSpec("reduce", src, [Buf(x), Buf(y, True)], max(1, min(rows.rows, sm_count * 16)))


#: argmax's block form splits its rows (grid.y) where its blocks number
#: under this many per multiprocessor (the reductions: SPLIT_BELOW), and
#: unrolls its scan this many trips (loads in flight; 0 or 1: none).
#: H100, rows of 32768-2000000 at 64 / 512 MiB, against splitting only under
#: one block per SM: bf16 of 2000000 at 512 MiB (134 rows) 607 -> 291 µs, of
#: 1048576 318 -> 244, of 151936 at 64 MiB 51.8 -> 36.9, f32 of 300001 at
#: 512 MiB 240 -> 208; the rest within 2%. Unrolling 4 trips lost (f32 of
#: 151936 at 512 MiB 180 -> 234 µs, bf16 4-8% slower) but for f32 of 32768
#: at 64 MiB (34.6 -> 28.9).
ARGMAX_SPLIT_BELOW = 4
ARGMAX_UNROLL = 0
#: ... leaving each thread of a chunk at least this many items (the
#: reductions: SPLIT_MIN_ITEMS, 16). A few rows of a vocabulary (greedy
#: decoding's argmax over [1-32, 50257]) are then spread over more blocks:
#: their scan, one dependent load after another, is latency, not bandwidth.
#: H100 (session 20, `variant.py ARGMAX_SPLIT_MIN_ITEMS=16,4,1 -- --ops
#: argmax_last --rows 30522,32000,50257 --sizes 0.1,1,4`): with 4, f16/bf16
#: 29-105% faster in all 18 cases ([1, 50257] 15.1 -> 7.5 µs, where eager
#: took 13.2), f32 of 30522 13-38%, of 50257 10-12% slower (6.6 -> 7.4,
#: eager 13.3); 1 lost to 4 in 14 of 27 cases.
ARGMAX_SPLIT_MIN_ITEMS = 4
#: argmax rows up to this many elements take a warp each (the warp form),
#: longer ones a block. H100 (session 18, `variant.py
#: ARGMAX_WARP_ROW_MAX=1024,2048,4096,8192 -- --ops argmax_last --rows
#: 1536,2048,3072,4096,8192 --sizes 64,512`): with 4096, rows of 1536-4096
#: 22-77% faster in f16/bf16 and 1536-2048 22-59% in f32 (f16 of 2048 at 64
#: MiB 46.4 -> 30.5 µs, where the block form was slower than eager), the
#: rest within 1%; 8192 lost 14% on f32 rows of 8192 at 64 MiB.
ARGMAX_WARP_ROW_MAX = 4096
#: ... and so do rows of at most ARGMAX_WARP_ITEMS_MAX items (32 a lane:
#: f16/bf16 rows up to 8192 elements, f32 to 4096, odd lengths peeled).
#: H100 (session 20, `variant.py ARGMAX_WARP_ROW_MAX=4096,8192,16384 --
#: --ops argmax_last --rows 4097,6001,8192,8193,12000,16384 --sizes
#: 64,512`): the block form's 256 threads took 2-4 accesses each of f16 rows
#: of 4097 (0.79x eager at 512 MiB, 360 µs); a warp each: f16/bf16 rows of
#: 4097 56-58% faster at 512 MiB and 21-22% at 64, of 6001 34-36% / 18-19%,
#: of 8192 20% / tie, of 8193 21% / 4% (16384); f32 of 4097 (1024 items)
#: 8-11%. Longer rows lost at 64 MiB (47-64 items a lane: f16 of 12000
#: 25% slower, of 16384 40%; f32 of 8192 14%).
ARGMAX_WARP_ITEMS_MAX = 1024
#: ... a group of fewer lanes per row (a power of two; its rows shuffle
#: among themselves) where each lane would take fewer than
#: ARGMAX_GROUP_ITEMS items (16-byte accesses, or elements where the row is
#: not read 16 bytes at a time) (0: a whole warp per row). H100
#: (session 18, `variant.py ARGMAX_GROUP_ITEMS=0,2,4 -- --ops argmax_last
#: --rows 64,128,256,512,1024 --sizes 64,512`): with 4, f16/bf16 rows of 64
#: 3.9-4.2x faster (f16 at 64 MiB 133.7 -> 34.4 µs: a warp's 5 shuffle
#: steps per row of 8 accesses), of 128 2.2x, 256-512 12-27%; f32 rows of
#: 64 2.0-2.1x, 128 16-19%; 1024 unchanged (already 4 a lane); one loss,
#: f32 of 256 at 64 MiB 2.3%. 2 was best only for f32 rows of 64 (5%).
#: ... and rows of at least ARGMAX_GROUP_WIDE_ITEMS items (f16/bf16;
#: ARGMAX_GROUP_WIDE_ITEMS_F32 for 4-byte elements) leave each lane at
#: least items / ARGMAX_GROUP_SHARE of them, up to ARGMAX_GROUP_ITEMS_MAX
#: (f16/bf16 rows of 512 elements take groups of 8 lanes, of 1024 8 lanes,
#: of 2048 16; f32 rows of 1024 16 lanes). H100 (session 19, `variant.py
#: ARGMAX_GROUP_ITEMS=4,8,16 -- --ops argmax_last --rows 64,512,1024,2048
#: --sizes 64,512`): 8 items a lane were best for f16/bf16 rows of 512 (64
#: items: 224.4 -> 207.7 µs at 512 MiB), 16 for f16/bf16 rows of 1024-2048
#: (1024 at 512 MiB: 226.0 -> 203.1) and f32 of 1024 (202.5 -> 179.2, the
#: 0.91x of session 18); rows of 64 lost 14-57% with 8 or 16, and f32 rows
#: of 256 (64 items) 13% with 8 items a lane (187 -> 212 µs at 512 MiB),
#: hence the thresholds.
ARGMAX_GROUP_ITEMS = 4
ARGMAX_GROUP_ITEMS_MAX = 16
ARGMAX_GROUP_SHARE = 8
ARGMAX_GROUP_WIDE_ITEMS = 64
ARGMAX_GROUP_WIDE_ITEMS_F32 = 256
#: argmax's block form over 16-byte accesses of at most this many elements
#: (f32's 4) keeps one (value, index) per element of the access, merged
#: after the scan: that many independent compare chains instead of one
#: through every element (0: never). H100, f32 rows of 32768-2000000 at
#: 64 / 512 MiB: [256, 524288] at 512 MiB 250 -> 188 µs, [8, 2000000] at
#: 64 MiB 39.1 -> 36.7, [128, 1048576] 202 -> 191, 8 of 10 cases faster
#: (151936 at 512 MiB 181 -> 202); f16/bf16's 8 chains lost 20% at 4096 and
#: 15-18% at 1048576 x 512 MiB, so they keep one.
ARGMAX_LANE_CHAINS = 4
#: ... the block form's chains taking this many 16-byte items a thread
#: before comparing any (loads in flight; 1: an item at a time).
ARGMAX_CHAIN_LOADS = 1
#: argmax's block form: threads per block (ARGMAX_BLOCK_THREADS_16 over
#: contiguous f16/bf16 rows at least ARGMAX_SPLIT_BELOW blocks a
#: multiprocessor: never split; fewer rows were not measured). H200, session 50 (`variant.py
#: ARGMAX_BLOCK_THREADS=256,128,512,1024 -- --ops argmax_last --rows
#: 5120,14336,24577,32768 --sizes 64,512`), 128 against 256: f16/bf16 rows
#: of 24577 25.5 -> 24.0 / 152.0 -> 134.5 µs at 64 / 512 MiB, of 14336
#: -3% / +11-12%, of 32768 +6-8% / +2-3% (rows of 5120 take the warp form);
#: f32 mixed (-4.3% to +16%: of 5120 -4.3% / +10%, of 24577 -1.8% / +1.8%);
#: 512 and 1024 lost 5-69% (a block of 1024 a multiprocessor while it
#: reduces). Also measured and not taken: ARGMAX_CHAIN_LOADS 2 and 4
#: (f32: -16% to +5%), ARGMAX_SPLIT_BELOW 32 with SPLIT_BLOCKS_PER_SM 24
#: (rows of 14336-32768 at 64 MiB 18-37% slower).
ARGMAX_BLOCK_THREADS = 256
ARGMAX_BLOCK_THREADS_16 = 128
#: argmax along a non-contiguous axis in the columns form where softmax's
#: would take it (`column_slices`: COLUMN_FORM_MIN_ROWS rows or more): X neighbouring rows
#: × Y slices of the axis per block, each thread scanning its slice (so the
#: first of equal values), the slices' (value, index) merged in shared
#: memory by value, then index. Off: the warp or block forms, a warp or
#: block per row reading the axis an element per 32-byte sector (21
#: channels: 11 of a warp's lanes idle). H100, argmax over axis 1 of
#: [n, 21 / 128 / 1000, 128] at 64 and 512 MiB (session 17, `variant.py
#: ARGMAX_COLUMNS=False,True -- --ops argmax_mid --rows 21,128,1000 --sizes
#: 64,512`): 2.1-9.5x faster in all 18 cases (f16, 21 channels at 64 MiB:
#: 327 -> 38 µs); against the faster peer 1.25-2.2x, except axes of 128
#: (f32 at 512 MiB 0.80x, f16/bf16 0.48-0.74x: 64-byte reads of 2 bytes a
#: thread, 35-38% of copy).
ARGMAX_COLUMNS = True
#: Loads the columns form's threads issue before comparing, where a row
#: has several slices each of at most ARGMAX_BATCH_SHARE elements (else a
#: load and its compare per step). H100 (session 17, `variant.py
#: ARGMAX_COLUMN_LOADS=1,4,8 -- --ops argmax_mid --rows 21,128,1000 --sizes
#: 64,512`, batching everywhere): axes of 128 (8 slices of 16) 34-42%
#: faster in f32, 65-71% in f16/bf16 with 4 (8: 26-48% in f16/bf16); axes of
#: 21 (one slice) 2-7% slower, axes of 1000 (8 slices of 125) 2-12% slower.
ARGMAX_COLUMN_LOADS = 4
ARGMAX_BATCH_SHARE = 32
#: ... and where a row is one slice of at most ARGMAX_ONE_SLICE_UNROLL
#: elements (short axes over many rows), its scan starts from 0, not
#: threadIdx.y, and is unrolled whole, its loads in flight together (0:
#: never; the unknown start kept them one at a time). H100 (session 19,
#: `variant.py ARGMAX_ONE_SLICE_UNROLL=0,16 -- --ops argmax_mid --rows 3,21
#: --sizes 64,512`, inner 128 and 49): axes of 3 26-53% faster (f16 [n, 3,
#: 49] at 64 MiB 89.2 -> 59.4 µs, where torch.compile took 59.8); axes of
#: 21, then 16 trips at a time, 2.6-5.4% slower, hence whole or not at all.
ARGMAX_ONE_SLICE_UNROLL = 16
#: ... and with 16-byte accesses over neighbouring rows where softmax's
#: columns form takes them (COLUMN_VECTORS: `inner` a multiple of 8 f16 /
#: bf16 (ARGMAX_COLUMN_VECTORS) or 4 f32 (ARGMAX_COLUMN_VECTORS_F32); blocks
#: enough), each thread scanning its rows' slice with one (value, index) per
#: row. H100 (session 18, `variant.py ARGMAX_COLUMN_VECTORS=False,True --
#: --ops argmax_mid --rows 21,128,1000 --sizes 64,512`): f16/bf16 faster in
#: 3 of 12 cases (f16 [16384, 128, 128] 290 -> 247 µs), 2-18% slower in 8
#: (bf16 21 channels at 64 MiB 38.0 -> 46.0); f32 within 4% either way; with
#: filled slices (COLUMN_VECTOR_FILLED_BLOCKS_PER_SM=3) axes of 1000 at 64
#: MiB 30% slower. H200 (session 43, `variant.py ARGMAX_COLUMN_VECTORS=
#: False,True ARGMAX_COLUMN_VECTORS_F32=True -- --ops argmax_mid --dtypes
#: f32 --rows 21,128,1000,4096 --sizes 64,512`): f32 over [8192, 128, 128]
#: at 512 MiB 157.5 -> 137.7 µs (+14.4%; torch.compile took 147.2: 0.92x
#: before), axes of 1000 +4.3%, 21 +2.1%; at 64 MiB -1.2% .. -2.8%. f32 on;
#: f16/bf16 take the packed form below instead.
ARGMAX_COLUMN_VECTORS = False
ARGMAX_COLUMN_VECTORS_F32 = True
#: ... and for f16/bf16 (axes under 65535 elements), that vector form
#: compared as packed pairs: each thread keeps its 8 rows' best values as 4
#: words of two 16-bit elements and their indices as 4 words of two 16-bit
#: indices; per step and word, `rlx_gt2_*` (set.gt.u32.f16x2: 0xffff a half
#: where greater; 0 with a NaN) and `rlx_nan2_*` give the halves that win
#: (greater, or the first NaN), and three bit selects take their values and
#: the step's index: about 3 instructions an element where the per-element
#: compare of floats took about 9. A thread's best starts as -inf at its
#: slice's first index (right where that element is -inf; any other value
#: wins there), so no "none yet" test is needed. H200 (session 43,
#: `variant.py ARGMAX_COLUMN_PACKED=False,True -- --ops argmax_mid --dtypes
#: f16,bf16 --rows 21,128,1000,4096 --sizes 64,512`): at 512 MiB axes of 128
#: 49-50% faster (f16 [16384, 128, 128] 283.4 -> 190.3 µs, where
#: torch.compile took 254.9: 0.89x before, 1.34x now), of 1000 20%, of 21
#: 15%; at 64 MiB axes of 21 6.7-6.9% slower and of 128 2-3% (still 1.2-1.5x
#: the faster peer); axes of 4096 keep the element form (too few blocks for
#: vectors: COLUMN_VECTOR_BLOCKS_PER_SM; forcing them lost 14-85%).
ARGMAX_COLUMN_PACKED = True
#: ... and where its blocks number under this many per multiprocessor (few
#: outputs over a long axis: [8, 32768, 128]; COLUMN_VECTOR_BLOCKS_PER_SM
#: sends them to the element form unsplit), the packed form and f32's vector
#: form split the axis over grid.y (`split_count`, each slice at least
#: ARGMAX_COLUMN_SPLIT_MIN_ITEMS items), each chunk's bests to scratch, the
#: last block of a tile folding them, a thread an output (0: never); f32
#: only over axes of ARGMAX_COLUMN_SPLIT_F32_AXIS or more. H200 (session 43,
#: `variant.py ARGMAX_COLUMN_SPLIT_BELOW=0,3 -- --ops argmax_mid --rows
#: 768,1000,4096,32768 --sizes 64,512`): f16/bf16 [8, 32768, 128] at 64 MiB
#: 152.5 -> 42.9 µs (eager took 105.2: 0.68x before), at 512 MiB 251.5 ->
#: 159.2; [512, 4096, 128] at 512 MiB 220.8 -> 143.9 (59% -> 90% of copy),
#: [64, 4096, 128] +10-12%, [341, 768, 128] at 64 MiB +18%, axes of 1000
#: within 2%; f32 [32, 32768, 128] at 512 MiB 205.2 -> 134.1 (0.98x
#: torch.compile before), [32, 4096, 128] at 64 MiB +17.7%, but f32 axes of
#: 768 and 1000 at 64 MiB 19% and 8% slower, hence the f32 floor.
ARGMAX_COLUMN_SPLIT_BELOW = 3
ARGMAX_COLUMN_SPLIT_MIN_ITEMS = 16
ARGMAX_COLUMN_SPLIT_F32_AXIS = 2048
#: The meeting of a block's slices in argmax's packed columns form and in
#: the split vector forms: every thread folds one of its group's outputs
#: over the slices (threadIdx.y: which), from shared memory laid out
#: output-major, where threads y == 0 folded all of them (slices - 1 merges
#: of each of the group's 8 outputs while the block's other warps waited at
#: the barrier: ncu, f16 [85, 3072, 128] at 64 MiB, one wave of 559 blocks,
#: 30% of the warps' cycles stalled at a barrier). False: y == 0 folds them
#: all. H200 (session 56, `variant.py ARGMAX_COLUMN_FOLD_SPREAD=False,True
#: -- --ops argmax_mid --dtypes f32,f16,bf16 --rows
#: 21,128,640,1000,1536,3072,11008,32768 --sizes 64,512 --compile-sizes
#: none`, inner 128): f16/bf16 +16% to +35% at 64 MiB (f16 [85, 3072, 128]
#: 32.5 -> 24.0 µs, 50% -> 68% of copy; [409, 640, 128] 30.6 -> 23.2), at
#: 512 MiB +12% to +19% over axes of 3072-32768, -0.4% to +4% elsewhere; f32
#: split (axes of 3072-32768) +2% to +12%; f32 unsplit +18.5% over axes of
#: 128 but -15% / -19% over 640 / 1000 at 512 MiB (33 registers where 32,
#: NVRTC 13.5, left 8 blocks a multiprocessor), so f32's unsplit form keeps y == 0
#: (held to 32 registers by `__launch_bounds__(256, 8)` it spills 16 bytes
#: over axes of 640-1536 and about 200 over 21-128: NVRTC 13.5, not run).
ARGMAX_COLUMN_FOLD_SPREAD = True
#: ... also for fewer rows than the columns form takes (COLUMN_FORM_MIN_ROWS:
#: f32 [4, 32768, 128], 512 rows, went to the block form, a row's elements
#: 512 bytes apart) over axes of ARGMAX_COLUMN_SPLIT_F32_AXIS or more (any
#: dtype), where the split gives each slice its ARGMAX_COLUMN_SPLIT_MIN_ITEMS.
#: H200 (session 43, `variant.py ARGMAX_COLUMN_SPLIT_FEW_ROWS=False,True --
#: --ops argmax_mid --rows 4096,32768 --inner 64 --sizes 64`): f32 [8, 32768,
#: 64] 107.6 -> 35.6 µs; the other 5 cases (1024+ rows) within -2.0% .. 0.
ARGMAX_COLUMN_SPLIT_FEW_ROWS = True
#: The unsplit packed form's slices at most (0: COLUMN_FORM_SLICES' count),
#: where its blocks stay COLUMN_VECTOR_BLOCKS_PER_SM a multiprocessor or more.
#: Over short axes (64-128) each thread scanned 8-16 steps, then wrote 8
#: values and 8 indices to shared memory, and a quarter of the block
#: (threadIdx.y 0) merged 8 slices, 56 compares each; fewer slices trade that
#: merge for longer scans. H200 (session 44, `variant.py
#: ARGMAX_PACKED_MAX_SLICES=0,1,2 -- --ops argmax_mid --dtypes f16,bf16
#: --rows 21,64,128,512,768 --sizes 64,512`): at 2, f16 [32768, 64, 128]
#: 289.7 -> 153.8 µs (46% -> 90% of copy), [16384, 128, 128] 188.6 -> 146.0,
#: [4096, 512, 128] 169.9 -> 145.0, [4096, 64, 128] at 64 MiB 48.5 -> 26.4
#: (bf16 the same); the other 12 cases within -2.1% .. +0.5%. At 1, axes of
#: 64 and 128 at 512 MiB as good, the others not faster.
ARGMAX_PACKED_MAX_SLICES = 2
#: ... and where those slices leave too few blocks, the fewest that leave
#: enough (4 rather than 8), not COLUMN_FORM_SLICES'. H200 (session 44,
#: `variant.py ARGMAX_PACKED_FILL_SLICES=False,True -- --ops argmax_mid
#: --rows 21,64,128,256,512,768 --dtypes f16,bf16 --sizes 64,512`): f16
#: [2048, 128, 128] 39.7 -> 25.4 µs (42% -> 66% of copy; ncu before: 1024
#: blocks of which 6 a multiprocessor fit, 1.3 waves), [2730, 768, 128]
#: 155.8 -> 133.5 (84% -> 98%), bf16 the same; the others (not changed)
#: within -2.9% .. +1.1%.
ARGMAX_PACKED_FILL_SLICES = True
#: The packed form's loads in flight a thread where its slices are
#: ARGMAX_PACKED_MAX_SLICES (ARGMAX_COLUMN_LOADS, 4, where 0). H200 (session
#: 44, `variant.py ARGMAX_PACKED_LOADS=0,8 -- --ops argmax_mid --rows
#: 21,64,128,256,768 --dtypes f16,bf16 --sizes 64,512`): at 2 slices, f16
#: [16384, 128, 128] 145.0 -> 138.2 µs (97% of copy), [32768, 64, 128]
#: 153.0 -> 144.7, [4096, 64, 128] 26.2 -> 25.6, [8192, 256, 128] +1.3%,
#: axes of 21 within 0.8% (bf16 the same); at 4 slices (FILL) [2730, 768,
#: 128] lost 7-9% (59-63 registers: 4 blocks a multiprocessor, not 5) and
#: [2048, 128, 128] gained 0.6-1.5%, so 4 slices keep 4 loads.
ARGMAX_PACKED_LOADS = 8
#: argmax's block form (without ARGMAX_LANE_CHAINS), where each thread
#: scans at least ARGMAX_SCREEN_ITEMS 16-byte items of a row (or of its
#: chunk), takes an item's largest element first (fmaxf over its 2-8
#: elements, and their sum, NaN where one is) and runs the per-element
#: compare, the first of equal values, only where that beats the best so far
#: or a NaN is there: a thread's best changes rarely over a long scan, so
#: most items cost a max and an add per element (0: never). H200 (session
#: 20, `variant.py ARGMAX_VECTOR_MAX=False,True -- --ops argmax_last --rows
#: 64,...,1048576 --sizes 64,512`, screening every vector scan): f16/bf16
#: rows of 1048576 at 512 MiB (about 200 items a thread) 34-40% faster
#: (201.5 -> 150.7 µs, 65% -> 88% of copy); where a thread takes 16-25 items
#: (block rows of 32768 and 50257) or a warp's lanes few, 5-20% slower: the
#: warp runs the compares whenever one lane's best still moves.
ARGMAX_VECTOR_MAX = True
ARGMAX_SCREEN_ITEMS = 64
#: 16-byte items a screened block-form thread loads before it screens any
#: (1: a load, then its screen). H200 (session 20, f16 [256, 1048576] at
#: 512 MiB, screened): 4 in flight 150.7 µs (88% of copy) against one at a
#: time 172.6 (75%); the unscreened block form lost with more than one.
ARGMAX_SCREEN_LOADS = 4
#: 16-byte items each lane of argmax's warp and lane-group forms loads
#: before it compares any (1: a load, then its compares). H200 (session 20,
#: `variant.py ARGMAX_VECTOR_LOADS=1,2,4`, same rows): with 2, f16/bf16 rows
#: of 64-8192 2-13% faster (f16 of 8192 at 64 MiB 33.2 -> 29.3 µs), f32 of
#: 64-128 5-11%, f32 of 512-4096 within 2%; 4 lost on rows of 128 (7-8%).
#: In the block form rows of 50257 lost 4-30%, so it loads one at a time.
ARGMAX_VECTOR_LOADS = 2
#: Contiguous rows whose length the 16-byte width does not divide (odd
#: lengths; vocabularies of 30522 or 50257) are scanned "peeled" where they
#: hold at least PEEL_REDUCE_MIN full vectors: the elements before the row's
#: first 16-byte boundary one at a time, the aligned middle 16 bytes at a
#: time, the elements after its last boundary one at a time (in that order
#: in each thread, so a scan still meets its indices in increasing order).
#: False: such rows are read an element at a time. H100 (session 20,
#: `variant.py ARGMAX_PEEL=False,True -- --ops argmax_last --rows
#: 77,1001,4097,30522,50257 --sizes 64,512`): f16/bf16 rows of 30522 and
#: 50257 6-22% faster (f16 of 30522 at 64 MiB 47.0 -> 38.7 µs, the 0.97x
#: of session 19 now 1.2-1.4x), f32 4-9%; rows of 1001 at 512 MiB 11-12%;
#: rows of 77 and 4097 in f16/bf16 at 64 MiB 3-7% slower (their edges'
#: single loads), which the warp form below then took back.
ARGMAX_PEEL = True
#: argmax over 16-byte items of these dtypes in the "held best" form (warp,
#: lane-group and block forms; replaces ARGMAX_LANE_CHAINS, the screen and
#: the per-element compares there): each thread loads ARGMAX_HELD_LOADS
#: items at a time (ARGMAX_HELD_WARP_LOADS in the warp and lane-group forms),
#: takes their largest element with NaN-propagating packed maxima
#: (`rlx_max2_f16`: max.NaN.f16x2, one instruction a pair; `rlx_maxf` for
#: f32) and, where it beats the best so far (strictly: the first such group
#: wins; or is the first NaN), keeps that value, the group's first item and
#: its raw items in registers. After the scan the first of the held elements
#: equal to the value (or the first NaN) gives the index, so the result is
#: numpy's. Per element half a packed max and a share of the group's
#: selects, where the per-element compare took about ten instructions.
#: H200, session 43 (`variant.py ARGMAX_HELD_DTYPES=+,f16+bf16+f32 --
#: --ops argmax_last --rows 64,128,512,1001,4096,16384,32768,50257,65536
#: --sizes 64,512`): f16/bf16 22-69% faster in all 36 cases (f16 rows of
#: 65536 at 512 MiB 196.8 -> 128.2 µs, 67% -> 101% of copy; of 1001 238.9
#: -> 157.3); f32 -7.3% .. +32.6% (rows of 1001 and of 16384
#: at 64 MiB 7% slower), hence 16-bit only. 8 loads a group lost 5-17%; 4
#: in the warp forms +10% .. -5% (16-bit: ARGMAX_HELD_WARP_LOADS_16 below).
ARGMAX_HELD_DTYPES: tuple[str, ...] = ("f16", "bf16")
#: ... and f32 rows of up to this many elements that a vector divides
#: (not peeled), in the warp and lane-group forms (0: none): session 43's
#: f32 losses were of peeled rows (77, 1001, 50257) and of the block form
#: (8192 and up). H200 (session 44, `variant.py ARGMAX_HELD_F32_MAX=0,4096
#: -- --ops argmax_last --rows 64,128,256,300,384,512,768,1024,2048,4096
#: --dtypes f32 --sizes 64,512`): all 20 cases faster, +0.2% (1024 at 512
#: MiB) to +24.6% (300 at 64 MiB: 23.7 -> 19.0 µs); rows of 512 at 512 MiB
#: 146.7 -> 130.9 (99% of copy; torch.compile took 142.1 in session 43).
ARGMAX_HELD_F32_MAX = 4096
ARGMAX_HELD_LOADS = 4
ARGMAX_HELD_WARP_LOADS = 2
#: ... and 16-bit rows' loads at a time in the warp and lane-group forms.
#: H200 (session 56, `variant.py ARGMAX_HELD_WARP_LOADS=2,4 -- --ops
#: argmax_last --dtypes f32,f16,bf16 --rows 64,128,512,768,1000,1536,3072,4096
#: --sizes 64,512 --compile-sizes none`): f16 rows of 1536 / 3072 at 64 MiB
#: 26.9 -> 20.5 / 25.8 -> 20.3 µs (66% -> 79% of copy: 8 lanes a row, 12-24
#: steps of two loads; bf16 took 21.7 / 21.4 with two), f16/bf16 of 64 and 512
#: +6% to +11%, 16-bit of 128 and 1000 at 64 MiB -3% / -7%, the rest -2.3% to
#: +8%; f32 -3.5% to +8.3%, so it keeps 2.
ARGMAX_HELD_WARP_LOADS_16 = 4


def _argmax_keep(v: str = "v", bv: str = "bv", bi: str = "bi") -> str:
    """Keeps element k (value `v`) as the best (`bv`, `bi`) where it wins:
    the first of equal values (k increases along a scan), NaN the largest."""
    return f"if ({bi} < 0 || ({v} != {v} && {bv} == {bv}) || ({v} > {bv} && {bv} == {bv})) {{ {bv} = {v}; {bi} = k; }}"


def _argmax_better(bv: str = "bv", bi: str = "bi") -> str:
    """Takes another scan's best (ov, oi) where it beats (`bv`, `bi`)."""
    return f"if (oi >= 0 && ({bi} < 0 || rlx_argmax_better(ov, oi, {bv}, {bi}))) {{ {bv} = ov; {bi} = oi; }}"


_ARGMAX_KEEP = _argmax_keep()
_ARGMAX_BETTER = _argmax_better()


def _argmax_helper(acc: str) -> str:
    """`rlx_argmax_better`: whether (av, ai) wins over (bv, bi)."""
    return (
        f"__device__ __forceinline__ bool rlx_argmax_better({acc} av, long long ai, {acc} bv, long long bi) {{\n"
        "  const bool an = av != av, bn = bv != bv;  // NaN is the largest, as numpy.argmax\n"
        "  if (an || bn) return an && (!bn || ai < bi);\n"
        "  return av > bv || (av == bv && ai < bi);\n}\n"
    )


def argmax_kernel(op: rlx.ArgMaxOp, sm_count: int) -> KernelSpec:
    """numpy.argmax along an axis: the first index of the largest value, NaN
    counting as the largest. Rows up to ARGMAX_WARP_ROW_MAX take a warp each
    (8 per block, shuffles only; a group of fewer lanes where each lane would
    take under ARGMAX_GROUP_ITEMS items), longer ones a block; contiguous rows whose length
    allows are read 16 bytes at a time (the form and width named in the
    source). Where the blocks are fewer than the multiprocessors, each row is
    split over grid.y as the reductions are (`split_count`): every chunk's
    (value, index) to scratch, the row's last block to arrive picks the best
    (the order of indices decides ties, so the result does not depend on
    which block is last)."""
    x, y = op.input, op.result
    t = eltype(x)
    rows = Rows.of(shape(x), [int_of(op.axis)])
    acc = "float" if is_float(t) else "long long"
    if ARGMAX_COLUMNS and (slices := column_slices(rows, sm_count)):
        if (vector := _argmax_column_vectors(x, y, rows, sm_count)) is not None:
            return vector
        return _argmax_columns(x, y, rows, acc, slices)
    if ARGMAX_COLUMNS and ARGMAX_COLUMN_SPLIT_FEW_ROWS and rows.inner > 0 and rows.col_off != "k" \
            and rows.cols >= ARGMAX_COLUMN_SPLIT_F32_AXIS \
            and (vector := _argmax_column_vectors(x, y, rows, sm_count)) is not None:
        return vector  # fewer rows than the columns form takes, over an axis long enough to split
    size = dtype(t).bytes
    contiguous = rows.col_off == "k" and size < 16
    peel = _reduce_peel(t, rows.cols) if ARGMAX_PEEL and contiguous else 0  # as the reductions peel
    w = peel or (16 // size if contiguous and rows.cols % (16 // size) == 0 else 1)
    items = rows.cols // w  # peeled: the most a row has (m or m - 1 aligned items)
    warp = rows.cols <= ARGMAX_WARP_ROW_MAX or items <= ARGMAX_WARP_ITEMS_MAX
    bt = THREADS if warp else ARGMAX_BLOCK_THREADS  # the block's threads
    split = 1 if warp else split_count(rows.rows, items, bt, sm_count, ARGMAX_SPLIT_BELOW, ARGMAX_SPLIT_MIN_ITEMS)
    if not warp and contiguous and size == 2 and rows.rows >= ARGMAX_SPLIT_BELOW * sm_count > 0:  # (as measured)
        bt = ARGMAX_BLOCK_THREADS_16
    lanes, lane = (32, "lane") if warp else (bt, "threadIdx.x")
    group = 32
    if warp and ARGMAX_GROUP_ITEMS:  # fewer lanes per row where each would take too few items
        wide = items >= (ARGMAX_GROUP_WIDE_ITEMS if size < 4 else ARGMAX_GROUP_WIDE_ITEMS_F32)
        least = max(ARGMAX_GROUP_ITEMS, min(ARGMAX_GROUP_ITEMS_MAX, items // ARGMAX_GROUP_SHARE) if wide else 0)
        while group > 1 and items < least * group:
            group //= 2
        lanes = group
    chunk = -(-items // split)
    lo, hi = ("k_lo + ", "k_hi") if split > 1 else ("", f"{items}LL")
    if peel:  # items counted from the buffer's start: va .. vb - 1 are the row's
        lo, hi = ("va + k_lo + ", "va + k_hi") if split > 1 else ("va + ", "vb")
    keep = _ARGMAX_KEEP
    unroll = [f"#pragma unroll {ARGMAX_UNROLL}"] if ARGMAX_UNROLL > 1 and not warp else []
    held = w > 1 and acc == "float" and (dtype_name(t) in ARGMAX_HELD_DTYPES or (
        dtype_name(t) == "f32" and warp and not peel and rows.cols <= ARGMAX_HELD_F32_MAX))
    chains = not warp and not held and 1 < w <= ARGMAX_LANE_CHAINS
    screened = (ARGMAX_VECTOR_MAX and ARGMAX_SCREEN_ITEMS > 0 and not warp and not chains and not held and w > 1
                and chunk >= ARGMAX_SCREEN_ITEMS * bt)
    held_loads = max(1, (ARGMAX_HELD_WARP_LOADS_16 if size == 2 else ARGMAX_HELD_WARP_LOADS) if warp
                     else ARGMAX_HELD_LOADS)

    def held_scan() -> list[str]:
        """ARGMAX_HELD_DTYPES: the thread's items `held_loads` at a time, each
        group's largest element (NaN where one is) against the best group so
        far, whose items stay in graw[]; then the first element of graw[]
        equal to that value (or NaN) merged into (`bv`, `bi`)."""
        at, first = ("x", " - base") if peel else ("x + base", "")
        n, name = held_loads, dtype_name(t)
        if size == 2:
            level, ty, mx = [f"raw[{j}].{c}" for j in range(n) for c in "xyzw"], "unsigned int", f"rlx_max2_{name}"
        else:
            level, ty, mx = [f"__uint_as_float(raw[{j}].{c})" for j in range(n) for c in "xyzw"], "float", "rlx_maxf"
        tree: list[str] = []
        while len(level) > 1:  # a balanced tree of maxima
            nxt = []
            for a in range(0, len(level) - 1, 2):
                tree.append(f"const {ty} m{len(tree)} = {mx}({level[a]}, {level[a + 1]});")
                nxt.append(f"m{len(tree) - 1}")
            level = nxt + level[len(level) - len(level) % 2:]
        top = (f"rlx_maxf(rlx_half_{name}({level[0]}, 0), rlx_half_{name}({level[0]}, 1))" if size == 2
               else level[0])
        item = f"reinterpret_cast<const uint4*>({at})"
        return [
            f"float gv = 0; long long gk = -1; uint4 graw[{n}];  // the best group: its largest value, first item, items",
            f"for (long long k0 = {lo}{lane}; k0 < {hi}; k0 += {n * lanes}LL) {{",
            f"  uint4 raw[{n}];",
            f"  raw[0] = {item}[k0];",
            *([
                "  #pragma unroll  // past the end: item 0 again (no new maximum)",
                f"  for (int j = 1; j < {n}; ++j) {{ const long long k4 = k0 + j * {lanes}LL; "
                f"raw[j] = k4 < {hi} ? {item}[k4] : raw[0]; }}"]
              if n > 1 else []),
            *("  " + line for line in tree),
            f"  const float v = {top};",
            "  if (gk < 0 || (v != v && gv == gv) || (v > gv && gv == gv)) {",
            "    gv = v; gk = k0;",
            "    #pragma unroll",
            f"    for (int j = 0; j < {n}; ++j) graw[j] = raw[j];",
            "  }",
            "}",
            "if (gk >= 0) {  // the first held element equal to gv (NaN: the first NaN), from the last one back",
            "  long long oi = -1; const float ov = gv;",
            "  #pragma unroll",
            f"  for (int j = {n - 1}; j >= 0; --j) {{",
            f"    union {{ uint4 raw; {dtype(t).c_storage} e[{w}]; }} pk; pk.raw = graw[j];",
            "    #pragma unroll",
            f"    for (int i = {w - 1}; i >= 0; --i) {{ const float v = (float){load('pk.e[i]', t)}; "
            f"if (v == gv || (v != v && gv != gv)) oi = (gk + j * {lanes}LL) * {w}LL + i{first}; }}",
            "  }",
            f"  {_ARGMAX_BETTER}",
            "}",
        ]

    def vector_scan(step: str) -> list[str]:
        """The row's 16-byte items this thread takes, `step` for each element;
        `screened` (ARGMAX_VECTOR_MAX): only items whose largest element
        beats (`bv`, `bi`), or that hold a NaN, take the steps."""
        at, first = ("x", " - base") if peel else ("x + base", "")
        steps = [f"for (int i = 0; i < {w}; ++i) {{ const long long k = k4 * {w} + i{first}; const {acc} v = ve[i]; {step} }}"]
        if screened:
            fl = acc == "float"
            sums = " + ".join(f"ve[{i}]" for i in range(w))
            steps = [
                f"{acc} m = ve[0];",
                "#pragma unroll",
                f"for (int i = 1; i < {w}; ++i) m = {'fmaxf(m, ve[i])' if fl else 'max(m, ve[i])'};",
                *([f"const float probe = {sums};  // NaN where an element is NaN (or both infinities)"] if fl else []),
                f"if (bi < 0 || {'probe != probe || (m > bv && bv == bv)' if fl else 'm > bv'}) {{  // this item may win",
                "  #pragma unroll",
                f"  {steps[0]}",
                "}",
            ]
        steps = steps if screened else ["#pragma unroll", *steps]

        def item(raw: str, indent: str) -> list[str]:
            """Item k4 (its 16 bytes `raw`) as values ve[], then the steps."""
            return [indent + line for line in (
                f"union {{ uint4 raw; {dtype(t).c_storage} e[{w}]; }} pk; pk.raw = {raw};",
                f"{acc} ve[{w}];",
                "#pragma unroll",
                f"for (int i = 0; i < {w}; ++i) ve[i] = ({acc}){load('pk.e[i]', t)};",
                *steps)]

        loads = ARGMAX_VECTOR_LOADS if warp else ARGMAX_SCREEN_LOADS if screened else ARGMAX_CHAIN_LOADS if chains else 1
        if loads <= 1:
            return [*unroll, f"for (long long k4 = {lo}{lane}; k4 < {hi}; k4 += {lanes}) {{",
                    *item(f"reinterpret_cast<const uint4*>({at})[k4]", "  "), "}"]
        # `loads` items a thread loaded before any is compared (in flight together)
        return [
            f"for (long long k0 = {lo}{lane}; k0 < {hi}; k0 += {loads * lanes}LL) {{",
            f"  uint4 raw[{loads}];",
            "  #pragma unroll",
            f"  for (int j = 0; j < {loads}; ++j) {{ const long long k4 = k0 + j * {lanes}LL; "
            f"if (k4 < {hi}) raw[j] = reinterpret_cast<const uint4*>({at})[k4]; }}",
            "  #pragma unroll",
            f"  for (int j = 0; j < {loads}; ++j) {{",
            f"    const long long k4 = k0 + j * {lanes}LL;",
            f"    if (k4 >= {hi}) break;",
            *item("raw[j]", "    "),
            "  }",
            "}",
        ]

    def edge(count: str, first: str, only: str) -> list[str]:
        """A peeled row's `count` elements from its element `first`, one at a time."""
        return [f"{only}for (int e = {lane}; e < {count}; e += {lanes}) {{ const long long k = {first} + e; "
                f"const {acc} v = ({acc}){load('x[base + k]', t)}; {keep} }}"]

    if chains:
        # one chain per element of the access: within a chain k increases, so
        # `keep` holds the first of equal values; the merge orders by index
        chain = _argmax_keep("v", "cbv[i]", "cbi[i]")
        scan = [
            f"{acc} cbv[{w}]; long long cbi[{w}];",
            "#pragma unroll",
            f"for (int i = 0; i < {w}; ++i) {{ cbv[i] = 0; cbi[i] = -1; }}",
            *vector_scan(chain),
            "#pragma unroll",
            f"for (int i = 0; i < {w}; ++i) {{ const {acc} ov = cbv[i]; const long long oi = cbi[i]; {_ARGMAX_BETTER} }}",
        ]
    elif held:
        scan = held_scan()
    elif w > 1:
        scan = vector_scan(keep)
    else:
        scan = [*unroll, f"for (long long k = {lo}{lane}; k < {hi}; k += {lanes}) {{ const long long o = base + ({rows.col_off}); "
                f"const {acc} v = ({acc}){load('x[o]', t)}; {keep} }}"]
    count = "vb - va" if peel else f"{items}LL"
    bounds = [f"const long long k_lo = (long long)blockIdx.y * {chunk}LL, "
              f"k_hi = k_lo + {chunk}LL < {count} ? k_lo + {chunk}LL : {count};"] if split > 1 else []
    head: list[str] = []
    tail: list[str] = []
    if peel:  # the row's aligned items va .. vb - 1; hc elements before them, tc after
        head = [f"const long long va = (base + {w - 1}LL) / {w}LL, vb = (base + {rows.cols}LL) / {w}LL;  // peeled",
                f"const int hc = (int)(va * {w}LL - base), tc = (int)(base + {rows.cols}LL - vb * {w}LL);"]
        only = "if (blockIdx.y == 0) " if split > 1 else ""
        head += edge("hc", "0LL", only)
        tail = edge("tc", f"(vb * {w}LL - base)", "if (blockIdx.y == gridDim.y - 1) " if split > 1 else "")
    mask = "0xffffffffu" if group == 32 else "gmask"
    body = [
        f"{acc} bv = 0; long long bi = -1;",
        *head,
        *bounds,
        *scan,
        *tail,
        *([f"const unsigned int gmask = {(1 << group) - 1}u << ((threadIdx.x & 31) & ~{group - 1});  // this row's lanes"]
          if group < 32 else []),
        f"for (int s = {group // 2}; s > 0; s >>= 1) {{",
        f"  const {acc} ov = __shfl_xor_sync({mask}, bv, s); const long long oi = __shfl_xor_sync({mask}, bi, s);",
        f"  {_ARGMAX_BETTER}",
        "}",
    ]
    better = _ARGMAX_BETTER
    if warp:
        body.append("if (lane == 0) y[r] = bi;")
    else:
        body += [
            "__syncthreads();",
            "if ((threadIdx.x & 31) == 0) { vs[threadIdx.x >> 5] = bv; is[threadIdx.x >> 5] = bi; }",
            "__syncthreads();",
            "if (threadIdx.x == 0) {",
            "  for (int w = 1; w < (blockDim.x + 31) / 32; ++w) { const long long oi = is[w]; const "
            f"{acc} ov = vs[w]; {better} }}",
            *(["  y[r] = bi;"] if split == 1 else [
                f"  ENTRY_pv[(long long)blockIdx.y * {rows.rows}LL + r] = bv;",
                f"  ENTRY_pi[(long long)blockIdx.y * {rows.rows}LL + r] = bi;",
                "  __threadfence();",
                f"  if (atomicAdd(&ENTRY_count[r], 1u) == {split - 1}u) {{  // the row's last block: the best of its chunks",
                "    __threadfence();",
                f"    for (int s = 0; s < {split}; ++s) {{",
                f"      const long long oi = __ldcg(&ENTRY_pi[(long long)s * {rows.rows}LL + r]); "
                f"const {acc} ov = __ldcg(&ENTRY_pv[(long long)s * {rows.rows}LL + r]);",
                f"      {better}",
                "    }",
                "    y[r] = bi;",
                "    ENTRY_count[r] = 0u;  // ready for the next launch",
                "  }"]),
            "}",
        ]
    decl = params_decl([("x", x, False), ("y", y, True)])
    helper = _argmax_helper(acc)
    per = f"{w} elements per 16-byte access" if w > 1 else "one element per access"
    per += f" ({w} compare chains)" if chains else ""
    per += (f", peeled: the row's 16-byte aligned middle as items, the fewer than {w} elements before and after it "
            "one at a time") if peel else ""
    per += ", items screened by their largest element" if screened else ""
    per += (f", the best of {held_loads} items held (their largest element by packed maxima, "
            "its index found after the scan)") if held else ""
    per += f", {ARGMAX_VECTOR_LOADS} loads in flight a lane" if warp and w > 1 and ARGMAX_VECTOR_LOADS > 1 and not held else ""
    per += f", {ARGMAX_SCREEN_LOADS} loads in flight a thread" if screened and ARGMAX_SCREEN_LOADS > 1 else ""
    per += f", {ARGMAX_CHAIN_LOADS} loads in flight a thread" if chains and ARGMAX_CHAIN_LOADS > 1 else ""
    form = ("warp (8 rows per block)" if group == 32 else f"lane groups ({group} lane{'s' if group > 1 else ''} per row, {THREADS // group} rows "
            "per block)") if warp else "block" if bt == THREADS else f"block ({bt} threads)"
    how = f", each row split in {split} chunks of {chunk} items (grid.y)" if split > 1 else ""
    src = [f"// argmax form: {form}, {per}{how}"]
    if split > 1:
        src += [f"__device__ {acc} ENTRY_pv[{split * rows.rows}];  // split partials: [chunk][row]",
                f"__device__ long long ENTRY_pi[{split * rows.rows}];",
                f"__device__ unsigned int ENTRY_count[{rows.rows}] = {{}};  // blocks arrived per row (reset by the last)"]
    src.append(f'extern "C" __global__ void __launch_bounds__({bt}) ENTRY({decl}) {{')
    if warp:
        src += _warp_loop(body, rows, THREADS // 32, group)
        grid: int | tuple[int, int, int] = min(-(-rows.rows // (THREADS // group)), sm_count * 16)
    else:
        src.append(f"  __shared__ {acc} vs[32]; __shared__ long long is[32];")
        if split > 1:  # a row per blockIdx.x, no loop
            src += ["  const long long r = blockIdx.x;", f"  const long long base = {rows.row_base};",
                    *("  " + b for b in body)]
            grid = (rows.rows, split, 1)
        else:
            src.extend(_row_loop(body, rows))
            grid = min(rows.rows, sm_count * (2048 // bt) * 2)
    src.append("}")
    return KernelSpec("argmax", helper + "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid, bt)


def _argmax_columns(x: SSAValue, y: SSAValue, rows: Rows, acc: str, slices: int) -> KernelSpec:
    """argmax in the columns form (see ARGMAX_COLUMNS): threads past the
    last row scan the last row (every thread meets the block's barrier) and
    store nothing."""
    t = eltype(x)
    per_block = COLUMN_FORM_THREADS // slices
    merge = [] if slices == 1 else [
        f"col_v[threadIdx.y * {per_block} + threadIdx.x] = bv; col_i[threadIdx.y * {per_block} + threadIdx.x] = bi;",
        "__syncthreads();",
        "if (threadIdx.y != 0) return;",
        "#pragma unroll",
        f"for (int s = 1; s < {slices}; ++s) {{ const {acc} ov = col_v[s * {per_block} + threadIdx.x]; "
        f"const long long oi = col_i[s * {per_block} + threadIdx.x]; {_ARGMAX_BETTER} }}",
    ]
    u = _batched_loads(ARGMAX_COLUMN_LOADS, slices, rows.cols, ARGMAX_BATCH_SHARE)
    if u > 1:
        scan = ["  " + line for line in _batched_read(rows, "threadIdx.y", slices, u, acc, f"({acc}){load('x[o]', t)}",
                                                      _ARGMAX_KEEP)]
    elif slices == 1 and rows.cols <= ARGMAX_ONE_SLICE_UNROLL:  # from 0, unrolled: its loads in flight together
        scan = ["  #pragma unroll", "  " + _cols(f"const {acc} v = ({acc}){load('x[o]', t)}; {_ARGMAX_KEEP}", rows, "0", "1")]
    else:
        scan = ["  " + _cols(f"const {acc} v = ({acc}){load('x[o]', t)}; {_ARGMAX_KEEP}", rows, "threadIdx.y", f"{slices}")]
    src = [
        f"// argmax form: columns ({per_block} rows x {slices} slices of the axis per block, one element per access)",
        f'extern "C" __global__ void __launch_bounds__({COLUMN_FORM_THREADS}) '
        f'ENTRY({params_decl([("x", x, False), ("y", y, True)])}) {{',
        *([f"  __shared__ {acc} col_v[{COLUMN_FORM_THREADS}]; __shared__ long long col_i[{COLUMN_FORM_THREADS}];"]
          if slices > 1 else []),
        f"  const long long rt = (long long)blockIdx.x * {per_block} + threadIdx.x;",
        f"  const long long r = rt < {rows.rows}LL ? rt : {rows.rows - 1}LL;",
        f"  const long long base = {rows.row_base};",
        f"  {acc} bv = 0; long long bi = -1;",
        *scan,
        *("  " + line for line in merge),
        f"  if (rt < {rows.rows}LL) y[r] = bi;",
        "}",
    ]
    return KernelSpec("argmax", _argmax_helper(acc) + "\n".join(src) + "\n", [Buf(x), Buf(y, True)],
                      -(-rows.rows // per_block), (per_block, slices, 1))


def _argmax_column_vectors(x: SSAValue, y: SSAValue, rows: Rows, sm_count: int) -> KernelSpec | None:
    """argmax in the columns form with 16-byte reads of `w` neighbouring
    rows per thread (see ARGMAX_COLUMN_VECTORS), or None where it does not
    apply."""
    t = eltype(x)
    ty = dtype_name(t)
    w = 16 // dtype(t).bytes
    packed = ARGMAX_COLUMN_PACKED and ty in ("f16", "bf16") and rows.cols < 65535
    if not (packed or (ARGMAX_COLUMN_VECTORS_F32 if ty == "f32" else ARGMAX_COLUMN_VECTORS and ty in ("f16", "bf16"))) \
            or rows.inner <= 0 or rows.inner % w:
        return None
    groups = rows.rows // w
    short = ARGMAX_PACKED_SHORT_AXIS if packed else None
    slices = _vector_slices(rows, groups, sm_count, short)
    split, chunk = 1, rows.cols
    if not slices and (packed or ty == "f32" and rows.cols >= ARGMAX_COLUMN_SPLIT_F32_AXIS) and rows.cols < 2**31 \
            and ARGMAX_COLUMN_SPLIT_BELOW:
        # too few blocks: split the axis over grid.y
        slices = _slice_count(rows.cols, groups, sm_count, short)
        blocks = -(-groups // (COLUMN_FORM_THREADS // slices))
        split = split_count(blocks, rows.cols, slices, sm_count, ARGMAX_COLUMN_SPLIT_BELOW, ARGMAX_COLUMN_SPLIT_MIN_ITEMS)
        if split <= 1:
            return None
        chunk = -(-rows.cols // split)
    if not slices:
        return None
    cap = 0
    if packed and split == 1 and 0 < ARGMAX_PACKED_MAX_SLICES < slices:
        cap = ARGMAX_PACKED_MAX_SLICES
        while cap < slices and -(-groups // (COLUMN_FORM_THREADS // cap)) < COLUMN_VECTOR_BLOCKS_PER_SM * sm_count:
            cap = cap * 2 if ARGMAX_PACKED_FILL_SLICES else slices  # too few blocks: the next count that fills them
    capped = 0 < cap < slices
    if capped:
        slices = cap  # fewer slices: less of the shared-memory merge, its blocks still enough
    per_block = COLUMN_FORM_THREADS // slices
    vec, unpack, elems = _vector_unpack(ty)
    keep = [_argmax_keep(f"v{e}", f"bv[{e}]", f"bi[{e}]") for e in range(w)]
    # (capped: the loads batched even in one slice, whose scan is then the longest)
    if capped:
        u = ARGMAX_PACKED_LOADS if ARGMAX_PACKED_LOADS and slices == ARGMAX_PACKED_MAX_SLICES else ARGMAX_COLUMN_LOADS
    else:
        u = _batched_loads(ARGMAX_COLUMN_LOADS, slices, chunk, ARGMAX_BATCH_SHARE)
    spread = slices > 1 and ARGMAX_COLUMN_FOLD_SPREAD and (packed or split > 1)
    per = -(-w // slices)  # (spread) the outputs a thread folds, its m-th (m < per) output `own`
    own = f"threadIdx.y + m * {slices}" if per > 1 else "threadIdx.y"
    if spread:  # every thread folds one output over the slices (see ARGMAX_COLUMN_FOLD_SPREAD)
        at = f"(s * {w} + e) * {per_block} + threadIdx.x"
        merge = [
            "#pragma unroll",
            f"for (int e = 0; e < {w}; ++e) {{ col_v[(threadIdx.y * {w} + e) * {per_block} + threadIdx.x] = bv[e]; "
            f"col_i[(threadIdx.y * {w} + e) * {per_block} + threadIdx.x] = bi[e]; }}",
            "__syncthreads();",
            f"// the outputs folded over the {slices} slices a thread each (threadIdx.y: the output of the thread's {w})",
            "#pragma unroll",
            f"for (int m = 0; m < {per}; ++m) {{",
            f"  const int e = {own};",
            "  float fv = 0; long long fi = -1;",
            f"  if (e < {w}) {{",
            "    #pragma unroll",
            f"    for (int s = 0; s < {slices}; ++s) {{ const float ov = col_v[{at}]; const long long oi = col_i[{at}]; "
            f"{_argmax_better('fv', 'fi')} }}",
            "  }",
            "  bv[m] = fv; bi[m] = fi;",
            "}",
        ]
    else:  # threads y == 0 fold their outputs over the other slices
        slot = f"(threadIdx.y * {per_block} + threadIdx.x) * {w}"
        fold = [
            f"for (int s = 1; s < {slices}; ++s) {{",
            "  #pragma unroll",
            f"  for (int e = 0; e < {w}; ++e) {{ const float ov = col_v[(s * {per_block} + threadIdx.x) * {w} + e]; "
            f"const long long oi = col_i[(s * {per_block} + threadIdx.x) * {w} + e]; {_argmax_better('bv[e]', 'bi[e]')} }}",
            "}",
        ]
        merge = [] if slices == 1 else [
            "#pragma unroll",
            f"for (int e = 0; e < {w}; ++e) {{ col_v[{slot} + e] = bv[e]; col_i[{slot} + e] = bi[e]; }}",
            "__syncthreads();",
            *(["if (threadIdx.y != 0) return;", *fold] if split == 1 else
              ["if (threadIdx.y == 0) {", *("  " + line for line in fold), "}"]),
        ]
    lo, hi = ("k_lo + ", "k_hi") if split > 1 else ("", f"{rows.cols}LL")
    bounds = [f"  const long long k_lo = (long long)blockIdx.y * {chunk}LL, "
              f"k_hi = k_lo + {chunk}LL < {rows.cols}LL ? k_lo + {chunk}LL : {rows.cols}LL;"] if split > 1 else []
    scan = _vector_pass(rows, slices, u, vec, unpack,
                        [f"{{ const float v{e} = {el}; {kp} }}" for e, (el, kp) in enumerate(zip(elems, keep))], "k",
                        lo, hi)
    init = [*bounds, f"  float bv[{w}]; long long bi[{w}];",
            "  #pragma unroll",
            f"  for (int e = 0; e < {w}; ++e) {{ bv[e] = 0; bi[e] = -1; }}"]
    if packed:  # ARGMAX_COLUMN_PACKED: values and 16-bit indices two a word
        ninf = "0xfc00fc00u" if ty == "f16" else "0xff80ff80u"
        step = ["const unsigned int kk = (unsigned int)k * 0x10001u;  // the index in both halves",
                *(f"{{ const unsigned int v = raw[j].{c}, up = rlx_gt2_{ty}(v, bw[{q}]) | (rlx_nan2_{ty}(v) & ~bn[{q}]); "
                  f"bn[{q}] |= rlx_nan2_{ty}(v); bw[{q}] = (v & up) | (bw[{q}] & ~up); bk[{q}] = (kk & up) | (bk[{q}] & ~up); }}"
                  for q, c in enumerate("xyzw"))]
        scan = _vector_pass(rows, slices, u, vec, lambda item: [], step, "k", lo, hi)
        first = f"{lo}threadIdx.y"
        init = [*bounds,
                f"  unsigned int bw[4], bk[4], bn[4];  // best values, their indices, NaN seen: two 16-bit halves a word",
                "  #pragma unroll",
                f"  for (int q = 0; q < 4; ++q) {{ bw[q] = {ninf}; bk[q] = (unsigned int)({first}) * 0x10001u; bn[q] = 0u; }}"]
        unpack_best = [
            f"  float bv[{w}]; long long bi[{w}];  // as floats and indices (-1: an empty slice)",
            "  #pragma unroll",
            f"  for (int e = 0; e < {w}; ++e) {{ bv[e] = rlx_half_{ty}(bw[e >> 1], e & 1); "
            f"bi[e] = {first} < {hi} ? (long long)((bk[e >> 1] >> (16 * (e & 1))) & 0xffffu) : -1LL; }}"]
    else:
        unpack_best = []
    form = f"{w} elements per 16-byte access" + (", compared as packed pairs (16-bit indices)" if packed else "")
    form += f", the axis split in {split} chunks of {chunk} (grid.y)" if split > 1 else ""
    src = [
        f"// argmax form: columns ({per_block} threads of {w} rows x {slices} slices of the axis per block, {form})",
        f'extern "C" __global__ void __launch_bounds__({COLUMN_FORM_THREADS}) '
        f'ENTRY({params_decl([("x", x, False), ("y", y, True)])}) {{',
        *([f"  __shared__ float col_v[{COLUMN_FORM_THREADS * w}]; "
           f"__shared__ long long col_i[{COLUMN_FORM_THREADS * w}];"] if slices > 1 else []),
        f"  const long long gt = (long long)blockIdx.x * {per_block} + threadIdx.x;",
        f"  const long long r = (gt < {groups}LL ? gt : {groups - 1}LL) * {w};",
        f"  const long long base = {rows.row_base};",
        *init,
        *scan,
        *unpack_best,
        *("  " + line for line in merge),
        *(["  if (gt < {groups}LL) {{".format(groups=groups),
           "    #pragma unroll",
           *([f"    for (int m = 0; m < {per}; ++m) {{ const int e = {own}; if (e < {w}) y[r + e] = bi[m]; }}"] if spread else
             [f"    for (int e = 0; e < {w}; ++e) y[r + e] = bi[e];"]),
           "  }"] if split == 1 else _argmax_column_fold(w, rows.rows, groups, split, per_block,
                                                        (per, own) if spread else None)),
        "}",
    ]
    blocks = -(-groups // per_block)
    glob = [] if split == 1 else [
        f"__device__ float ENTRY_pv[{split * rows.rows}];  // split partials: [chunk][output]",
        f"__device__ int ENTRY_pi[{split * rows.rows}];",
        f"__device__ unsigned int ENTRY_count[{blocks}] = {{}};  // blocks arrived per tile (reset by the last)"]
    return KernelSpec("argmax", _argmax_helper("float") + "\n".join([*src[:1], *glob, *src[1:]]) + "\n",
                      [Buf(x), Buf(y, True)], (blocks, split, 1) if split > 1 else blocks, (per_block, slices, 1))


def _argmax_column_fold(w: int, outputs: int, groups: int, split: int, per_block: int,
                        spread: tuple[int, str] | None = None) -> list[str]:
    """The end of the split packed columns form (`_split_fold`): each tile's
    chunk bests (of threads y == 0, `w` outputs each; `spread` = (per, own):
    of every thread, `per` outputs each, the m-th `own`) to scratch, then
    the last of its `split` blocks to arrive takes the best of the chunks in
    chunk order (ties: the smaller index, so the arrival order does not
    matter), all its threads an output each, 8 chunks' loads in flight."""
    tile = per_block * w
    def put(m: str) -> str:  # output r + e's partial, the thread's best m
        return (f"ENTRY_pv[(long long)blockIdx.y * {outputs}LL + r + e] = bv[{m}]; "
                f"ENTRY_pi[(long long)blockIdx.y * {outputs}LL + r + e] = (int)bi[{m}];")

    if spread:
        per, own = spread
        stores = ["#pragma unroll", f"for (int m = 0; m < {per}; ++m) {{ const int e = {own}; if (e < {w}) {{ {put('m')} }} }}"]
        holds = f"gt < {groups}LL"
    else:
        stores = ["#pragma unroll", f"for (int e = 0; e < {w}; ++e) {{ {put('e')} }}"]
        holds = f"threadIdx.y == 0 && gt < {groups}LL"
    return _split_fold([], outputs, split, holds, "r", "blockIdx.x", [
        f"  for (int t = threadIdx.y * {per_block} + threadIdx.x; t < {tile}; t += {COLUMN_FORM_THREADS}) {{  // the tile's outputs",
        f"    const long long ro = (long long)blockIdx.x * {tile}LL + t;",
        f"    if (ro >= {outputs}LL) break;",
        "    float bv = 0; long long bi = -1;",
        "    #pragma unroll 8",
        f"    for (int s = 0; s < {split}; ++s) {{",
        f"      const float ov = __ldcg(&ENTRY_pv[(long long)s * {outputs}LL + ro]); "
        f"const long long oi = __ldcg(&ENTRY_pi[(long long)s * {outputs}LL + ro]);",
        f"      {_ARGMAX_BETTER}",
        "    }",
        "    y[ro] = bi;",
        "  }",
    ], stores=stores, leader="threadIdx.x == 0 && threadIdx.y == 0")


# --------------------------------------------------------------------------- softmax and norms

#: Row forms by the row's length: a warp per row up to WARP_ROW_MAX
#: elements, a block per row (in registers) up to BLOCK_ROW_MAX (some ops'
#: rows further on sm_90: `block_row_max`, whose limits follow), a block of
#: SMEM_THREADS per row with the row in shared memory (as f32) up to
#: SMEM_ROW_BYTES (on sm_90 the cluster form first), then the grid form,
#: then the streamed forms (split over blocks where the rows are few:
#: STREAM_GRID); rows along non-contiguous axes take the columns form
#: (COLUMN_FORM) or the looping one. `row_form` reads this table and
#: nothing else (`block_row_max` reads its block limits for it).
WARP_ROW_MAX = 1024
#: H200 (session 37, `variant.py BLOCK_ROW_MAX=8192,16384,32768 -- --ops
#: layer_norm,rms_norm,softmax --dtypes f32,bf16 --rows
#: 10000,16384,20000,32768 --sizes 64,512`): rows of 8193-16384 in a block
#: of up to 512 threads (BLOCK_ROW_ELEMS each) beat the cluster form of 2
#: blocks: layer_norm bf16 of 10000 50.1 -> 37.9 µs at 64 MiB (65% -> 86%
#: of copy), f32 45.5 -> 43.2; layer_norm of 16384 +7% (f32 40.7 -> 38.1,
#: 85%); softmax bf16 of 16384 +5.5% / +11%; none of the 24 cases worse
#: than -1.0%. Past 16384 the block takes 640-1024 threads of 64
#: registers, one block a multiprocessor, whose read and write phases do
#: not overlap: bf16 layer_norm and softmax of 32768 lost 8-11%, f32
#: layer_norm of 20000 5-11% (others of 20000 gained 4-19%; session 50
#: measured the cluster form, since windowed and capped, anew: the limits
#: below). Odd rows
#: (`--ops softmax,layer_norm,residual_layer_norm --rows
#: 8193,12289,16383,12000`): the fused residual layer_norm over bf16 rows
#: of 8193-16383 173-357 -> 81-93 µs at 64 MiB (2.1-4.2x: the cluster
#: form's guarded computed rows), f32 softmax of 8193 46.5 -> 36.3, layer_norm
#: +6-30%; worst the f32 residual layer_norm of 12289 (-1.3% / -4.8%).
BLOCK_ROW_MAX = 16384
#: ... and past it, up to these lengths, the rows of the ops and dtypes the
#: block form (up to 1024 threads of BLOCK_ROW_ELEMS elements) serves faster
#: than the cluster and stream forms (`block_row_max`): f32 softmax and
#: log_softmax up to 960 threads, f16/bf16 softmax and log_softmax up to 704
#: threads, f32 layer_norm; rows an `rlx.fusion` prologue computes keep
#: BLOCK_ROW_MAX. H200, session 50 (`variant.py NAME=16384,... -- --ops
#: softmax,log_softmax | layer_norm --rows 16385,18000,20001,20480,22001 |
#: 16385,20001,24577,28001,32768 --sizes 64,512`), µs at 64 / 512 MiB:
#: f32 softmax of 16385 49.8 -> 38.6 / 371 -> 266, of 24577 48.8 -> 44.5 /
#: 361 -> 287, of 28001 +9% / +26%, of 32768 (1024 threads) -7.4% / +3.6%,
#: which keeps the cluster form; log_softmax the same; f32 layer_norm +2.8%
#: (20001) to +24% (16385) at 64 MiB, +4% to +32% at 512, 32768 +4.7% /
#: +9.7%; 16-bit softmax and log_softmax of 16385-20480 +1% to +16%, of
#: 22001 (688 threads) +2.6% to +9.9% in blocks up to 704 threads, of 24577
#: (800: one block a multiprocessor) -18% against the stream form (NVRTC 13
#: gives the 16-bit softmax rows in blocks of 672-704 threads 40 registers
#: and 16-28 bytes of spills; they were measured so). Only where the
#: cluster and stream forms are the others (sm_90): the shared-memory form
#: they replace elsewhere was not measured against. Not
#: taken (`BLOCK_ROW_MAX=16384,32768`, rows of 20001-30001 at 64 MiB): 16-bit
#: layer_norm (-1..-15%) and rms_norm (-3..-22%).
BLOCK_SOFTMAX_F32_ROW_MAX = 30720
BLOCK_SOFTMAX_16_ROW_MAX = 22528
BLOCK_LAYER_NORM_F32_ROW_MAX = 32768
#: f32 rms_norm: rows of whole 16-byte vectors up to 32768, rows 4 does not
#: divide (odd ones peeled, 33 elements a thread; even ones in 8-byte
#: accesses; 48-56 registers) while two blocks fit a multiprocessor (up to
#: 640 threads; only odd ones were measured). H200, session 51
#: (`variant.py BLOCK_ROW_MAX=16384,32768 -- --ops rms_norm --dtypes f32
#: --rows 16385,18000,20001,20480,22528,24576,24577,28672,30001,32768
#: --sizes 64,512`): whole-vector rows +0.3% to +8.1% (32768 269.6 -> 260.7
#: µs at 512 MiB, 99% of copy, where torch.compile took 268.5 and the
#: cluster form 271.2 in the issue's sweep), odd rows of 16385 and 20001
#: +2% to +6% at 64 MiB and +14% at 512, of 24577 and 30001 (800 and 960
#: threads: one block a multiprocessor) -11% and -8% at 64 MiB.
BLOCK_RMS_NORM_F32_ROW_MAX = 32768
#: f32 rows of even lengths 4 does not divide in the block form at most up
#: to this length (softmax, log_softmax, layer_norm; rms_norm's take
#: BLOCK_RMS_NORM_F32_ODD_ROW_MAX). H200 (session 53, with their 8-byte
#: accesses, before PEEL_EVEN; `variant.py BLOCK_F32_PAIRS_ROW_MAX=32768,16384
#: -- --ops softmax,log_softmax,layer_norm --dtypes f32 --rows
#: 16386,20002,24578,30522 --sizes 64,512`;
#: `sweeps/variant-BLOCK_F32_PAIRS_ROW_MAX-…-session53`), the cluster form
#: against this one: layer_norm of 24578 and 30522 +7% to +14%, of 16386 and
#: 20002 -3% to -13%; softmax and log_softmax of 16386-20002 -5% to -10%, of
#: 24578-30522 +9% at 64 MiB and -2% to -3% at 512. Peeled (PEEL_EVEN), the
#: block form then took f32 layer_norm of 30522 to 54.0 µs at 64 MiB, under
#: the cluster form's 56.5: 32768 kept.
BLOCK_F32_PAIRS_ROW_MAX = 32768
BLOCK_RMS_NORM_F32_ODD_ROW_MAX = 20480
SMEM_ROW_BYTES = 160 * 1024
SMEM_THREADS = 1024

#: Past BLOCK_ROW_MAX, where the target has thread-block clusters (sm_90),
#: the cluster form comes before the shared-memory one: a row split over
#: the C (≤ CLUSTER_MAX) blocks of a cluster, CLUSTER_ROW_BYTES of it in
#: each thread's registers (32 f32, 64 f16/bf16 elements), blocks of
#: CLUSTER_THREADS, more threads per block (up to 1024) only where C is at
#: its maximum. The row is still read once, and a block is small enough
#: that several share a multiprocessor (the smem form fits one f32 row of
#: 32768 per SM, whose read and write phases then do not overlap).
CLUSTER_MAX = 8
#: Threads per block at most in the cluster form; rows that need more take
#: the grid form. So do rows whose blocks would spill: threads × (the row's
#: registers per thread + CLUSTER_REG_OVERHEAD) over 65536, i.e. f16/bf16
#: softmax rows (64 f32 registers of row) past 8 blocks of 819 threads.
#: H100, softmax bf16 of 524288 (8 × 1024 threads, 224 bytes spilled):
#: 100.8 -> 82.0 µs at 64 MiB, 714 -> 618 at 512 MiB in the grid form; of
#: 400000 (8 × 800, 72 registers, 60 bytes spilled) the cluster form stayed
#: faster (77.5 / 516 against 80.1 / 578 µs), as did the f32 rows at 8 ×
#: 800-1024 threads (32 registers of row) taken as a whole (layer_norm of
#: 200000 gained 13-31% in the grid form, rms_norm of 262144 lost 1-3%).
CLUSTER_MAX_THREADS = 1024
CLUSTER_REG_OVERHEAD = 16
#: Measured and removed (session 26, commit e1a838d): a staged cluster form,
#: a cluster taking 1-4 rows in turn, each thread's accesses of the next row
#: copied into shared memory (cp.async) during this row's statistics and
#: writes. H200, layer_norm/rms_norm/softmax rows of 20001-50257: 10-30%
#: slower at 64 MiB, 2-18% at 512 MiB (the row loop took the 64-register
#: bodies to 80, fewer blocks per SM, and the few clusters per launch).
#: An upper bound (the first statistic reduced over the block alone, wrong
#: values) put one cluster reduction's cost at 5-24% of these rows
#: (rms_norm f32 of 50257: 330 -> 267 µs at 512 MiB). Also measured and
#: removed (commit 8491b4d): each block's value counted in on the receiving
#: block's own mbarrier in place of a barrier of the whole cluster, +1-4%
#: for rms_norm and f32 softmax, -3.5..-8.6% for layer_norm of 32768 (spills).
CLUSTER_ROW_BYTES = 128  # H100, rows of 32768 at 512 MiB: 128 bytes beat 64 and 32 (layer_norm f32 91% / 88% / 81% of copy)
CLUSTER_THREADS = 256
#: f16/bf16 rows whose statistics leave the elements as they are (`RowSpec.pure`:
#: the norms) kept in the cluster form's registers in their 16-bit type,
#: CLUSTER_STORED_ROW_BYTES of the row per thread, and converted in each
#: pass (`CachedRow.fence`). H100, rows of 32768: layer_norm f16 126 -> 80
#: registers, 79% -> 85% of copy bandwidth at 64 MiB, 87% -> 94% at 512 MiB;
#: rms_norm f16 86 -> 64 registers, 86% -> 92% and 90% -> 98%. 256 bytes per
#: thread took 100-148 registers.
CLUSTER_STORED = True
CLUSTER_STORED_ROW_BYTES = 128
#: ... and of the 16-bit rows a prologue computes (the fused residual norms'
#: x + residual, an `rlx.fusion`'s elementwise ops): a row loaded as it is
#: can be read again rather than held (NVRTC -v: f16 layer_norm of 32768 at
#: 64 registers spills 8 bytes), a computed one cannot (its residual form
#: spilled 340 bytes at 128 bytes a thread, none at 64).
CLUSTER_PROLOGUE_ROW_BYTES = 64
#: The cluster form's registers per thread at most where the thread's row
#: takes at most half of them (0: as the compiler likes), asked through
#: `__launch_bounds__`' blocks per multiprocessor (65536 / (CLUSTER_REGS ×
#: threads)). H100, rows of 32768 (blocks of 256): layer_norm f32 73 -> 64
#: registers (8 bytes spilled), 91% -> 97% of copy bandwidth at 512 MiB;
#: f16/bf16 norms (80 -> 64) and f32 softmax the same within 2%. f16
#: softmax (an f32 row of 64 registers) would spill 196 bytes.
CLUSTER_REGS = 64
#: Measured, not taken (session 34): what holds layer_norm's cluster rows
#: of 16384-65536 under the copy's bandwidth at 64 MiB is the per-column
#: params, read in full from L2 by every row. H200, upper bounds with wrong
#: values: beta left unread sped layer_norm up 3.7-7.2%, gamma and beta both
#: 6.9-15.1% (f32 of 32768 at 64 MiB: 43.7 -> 40.9 -> 38.4 µs, 74% -> 84%
#: of copy). Three ways to read them less were slower: clusters taking rows
#: in turn (as many as fit, or 2 each; each block then reads the same
#: params): f32 -4% to -24%, 16-bit -33% to -49%; the row's loads evict-first
#: (`__ldcs`) to leave L1 to the params: 0 to -5%; two rows to a cluster,
#: 64 bytes of each per thread, both rows' statistics in one float2 cluster
#: reduction and each param read once for the two (H100): layer_norm -0% to
#: -22% (f32 of 32768 at 64 MiB 52.3 -> 55.3 µs), rms_norm +1% to -13%; at 64
#: registers its 16-bit layer_norm spilled 144-268 bytes, at 96 it held no
#: spill and was still slower.
#: Measured, not taken (session 53): 16-bit layer_norm and rms_norm rows of
#: 24576-131072 (whole 16-byte accesses) in the uint4 form (read twice, the
#: second read from L2, Welford's statistics an element at a time, blocks of
#: 256) in place of this form: H200, 64 MiB, 20-36% slower (layer_norm f16 of
#: 32768 43.0 -> 67.6 µs, rms_norm 38.8 -> 55.5), so a norm form like
#: softmax's stream form (41.9 µs at 32768) would gain little where this one
#: holds its rows; not built.
#: Measured, not taken (session 52, `benchmarks/bulk_rows_probe.py`, H200, rows
#: of 16385-32768 at 64 MiB): the row brought into shared memory by one bulk
#: copy (`cp.async.bulk`, 1-D TMA, on an mbarrier), statistics and output from
#: there. A block of 512 per row was slower than these forms in 28 of the 30
#: layer_norm and softmax cases (-1% to -35%; f32 softmax of 24577 +6%, of
#: 28001 even) and than rms_norm's (16-bit 42-44 against 41-42 µs); bf16
#: matched f16 once converted in pairs. Persistent blocks with rows copied
#: one or two ahead were slower again (-5% to -40%: a block's statistics and
#: barriers, not its reads, bound a row, and at most 2 blocks of 512 fit).
#: Measured, not taken (session 55, a session-only `PARAM_PREFETCH`): the block
#: and cluster forms' per-column params copied into shared memory at the
#: kernel's start (`cp.async`, each thread its own 16-byte accesses of the
#: output pass, no barrier; up to 40 KB a block), so that the output pass
#: would not wait on L2 after the statistics. H200 (`variant.py
#: PARAM_PREFETCH=False,True -- --ops layer_norm,rms_norm --dtypes f32,f16,bf16
#: --rows 2049,4096,4097,8193,16385,20001,32768 --sizes 64,512`; table
#: `variant-PARAM_PREFETCH-…-session55`): with `cp.async.cg` every case it
#: reached slower, layer_norm f16 of 16385 49.8 -> 60.5 µs at 64 MiB, of 2049
#: -40%, rms_norm f16 of 32768 -18%; with `.ca` (through L1) the 16-bit rows of
#: 2049-8193 within noise, f32 of 4097 -14%, f16/bf16 of 16385-20001 (clusters
#: of 2 × 160, 36 KB of copies a block, 6 blocks a multiprocessor) -19% to -22%.

#: The grid form: past what a cluster holds (sm_90: rows over 8 blocks of
#: 1024 threads, 262144 f32 elements), or without clusters past
#: SMEM_ROW_BYTES, a row split over C blocks of GRID_THREADS (up to 1024
#: where C would pass its bound) that meet through global memory, the
#: same bytes of the row per thread as the cluster form. C is at most the
#: multiprocessors / GRID_SHARE, so a row's blocks fit on the GPU together
#: with room to spare for whatever else runs. Longer rows take the
#: streamed forms. GRID_FIRST (a switch for measurements): the grid form
#: before the cluster form.
GRID_ROWS = True
GRID_THREADS = 512
GRID_SHARE = 2
GRID_FIRST = False

#: The streamed forms (float4, uint4, looping: rows past the grid form's
#: reach, or without it, read twice) split each row over C blocks of
#: STREAM_GRID_THREADS where the rows are too few to give every
#: multiprocessor STREAM_GRID_BLOCKS_PER_SM blocks: C brings the blocks to
#: about that many (at most the multiprocessors / GRID_SHARE per row, as the
#: grid form, and at least STREAM_GRID_MIN_ITEMS accesses per thread). The
#: row's threads take its accesses in turn (thread `lane` of C × threads
#: every (C × threads)-th), and the blocks meet through global memory as the
#: grid form's do (`rlx_grid_reduce`), resident together: `__launch_bounds__`
#: asks for 2 blocks per multiprocessor, so the device holds 2 × C - 1 of
#: them (the runtime's `rlx.co_resident` check) with room to spare, also on
#: a part with fewer multiprocessors than the module was lowered for (an
#: H100 PCIe's 114). Before, a block took each row: [2, 5000000] ran 2
#: blocks on a GPU of 132 multiprocessors. (Measured with up to one block
#: per multiprocessor and row: rows of 1-3 then took 132-88 blocks each,
#: now 66.)
STREAM_GRID = True
STREAM_GRID_THREADS = 512
STREAM_GRID_BLOCKS_PER_SM = 2
STREAM_GRID_MIN_ITEMS = 8


#: Softmax and log_softmax over contiguous rows of STREAM_ROW_MIN elements
#: or more and STREAM_ROW_MAX_BYTES at most in STREAM_DTYPES (f32 rows only
#: where 4 divides their length; f16/bf16 rows 8 does not divide through
#: their windows: STREAM_WINDOW), without a prologue: the stream form,
#: before the cluster form (on sm_90 with USE_CLUSTERS, where it was
#: measured; elsewhere the forms are as before). A block of
#: STREAM_THREADS per row (STREAM_MIN_BLOCKS × 1024 threads per multiprocessor) reads the
#: row twice, STREAM_LOADS 16-byte loads in flight per thread: the online
#: (max, sum) in the first read, eight elements at a time
#: (`rlx_ms_add_n_afn`), the output in the second, which finds the row in
#: L2 (264 rows of 64 KB in flight on 132 multiprocessors: 17 MB of the
#: H200's 50 MB). No row is held in registers, so the threads are many and
#: their loads in flight several where the cluster form's threads wait
#: between a read's phases. H200, session 23 (`variant.py
#: STREAM_ROWS=False,True -- --ops softmax --rows
#: 16384,30528,32768,50256,131072 --dtypes f16,bf16 --sizes 64,512`, µs):
#: rows of 32768 f16 47.9 -> 42.8 / 330 -> 292 (79% -> 88% of copy at 512
#: MiB), bf16 49.5 -> 45.2 / 336 -> 310; of 50256 53.4 -> 50.5 / 371 -> 344,
#: bf16 the same; of 30528 -2% / +4%; of 16384 +1% / -4% (bf16 -8% at 512
#: MiB), so they keep the cluster form; of 131072 (256 KB rows: 67 MB in
#: flight, past L2) f16 -7% / -14%, bf16 +22%. f32 rows (STREAM_DTYPES with
#: "f32", exact expf) lost 6-30% to the cluster form. Blocks of 1024 at one
#: per multiprocessor lost 10-31%; a hand-written kernel had 512 × 4 loads
#: 4-12% slower. From 30000 (was 32000), session 24 (`variant.py
#: STREAM_ROW_MIN=32000,30000 -- --ops softmax --rows 30522,30528 --dtypes
#: f16,bf16 --sizes 64,512`, H200, µs at 64 / 512 MiB): BERT's vocabulary,
#: 30522 (windowed), f16 50.5 -> 45.7 / 346 -> 306 (0.71 -> 0.85 of copy at
#: 512 MiB), bf16 51.0 -> 45.6 / 347 -> 305; 30528 45.1 -> 45.8 / 321 -> 310.
STREAM_ROWS = True
STREAM_ROW_MIN = 30000
STREAM_ROW_MAX_BYTES = 128 * 1024
STREAM_DTYPES: tuple[str, ...] = ("f16", "bf16")
#: Forms that launch a block per row (the stream form; the block form where
#: the grid is the rows) take their row from blockIdx.x with no loop over
#: rows (`_row_loop`'s `one_row`; "warp": a group per row where the grid's
#: groups cover the rows). NVRTC 13 kept the loop's 64-bit counter live
#: across the body: the stream form, capped at 32 registers, spilled 16-84
#: bytes (16-bit softmax over rows of 32768; none without the loop), the
#: block form's f32 softmax of 4097 8 bytes at 64. H200, session 25 (old
#: tree against new, twice, `kernels.py --ops softmax,layer_norm,rms_norm
#: --rows 64,128,512,768,1000,4096,4097,8192,10001,32768 --dtypes
#: f32,f16,bf16 --sizes 64,512`; noise: the unchanged cluster and batched
#: warp kernels within ±1.6%): stream softmax f16/bf16 of 32768 4-9% faster
#: (bf16 310 -> 287 µs at 512 MiB, f16 296 -> 283: bf16 within 1.5% of
#: f16 where it was 5% slower), of 10001 2-3%; block softmax f32 of
#: 4097 29-32%, f16/bf16 of 4096 8-11%, of 8192 3-5%, but of 4097 (peeled)
#: 2-4% slower, the block form's f32 norms 0-4% slower (geomean per dtype
#: +1.3 to +1.6%); the warp form without its loop +0.3% for f16/bf16 and
#: -0.7% for f32 (f32 layer_norm of 512-1000 2-4% slower): not taken.
ROW_PER_BLOCK: tuple[str, ...] = ("stream", "block")
STREAM_THREADS = 1024
STREAM_LOADS = 2
STREAM_MIN_BLOCKS = 2
#: ... also f16/bf16 rows 8 does not divide, through the row's 16-byte-aligned
#: window (as the cluster form's `windowed`): the window's first and last
#: accesses (threads 0 and 1) masked, read and written an element at a time,
#: the accesses between as the aligned rows'. H200, session 23 (`variant.py
#: STREAM_WINDOW=False,True -- --ops softmax --rows 32001,50257 --dtypes
#: f16,bf16 --sizes 64,512`, µs at 64 / 512 MiB): f16 of 50257 64.4 -> 49.5 /
#: 475 -> 337 (55% -> 76% of copy; 0.96x eager -> 1.36x), of 32001 58.6 ->
#: 44.0 / 431 -> 303; bf16 the same.
STREAM_WINDOW = True
#: ... from rows of STREAM_WINDOW_ROW_MIN (the aligned rows' from
#: STREAM_ROW_MIN): the cluster form holds softmax's windowed rows as f32
#: (64 bytes a thread), slower than its aligned 16-bit rows. H200, session
#: 24 (`variant.py STREAM_WINDOW_ROW_MIN=30000,8200 -- --ops softmax --rows
#: 8193,10001,12345,16385,20001,24001,28002 --dtypes f16,bf16 --sizes
#: 64,512`, blocks of 1024, µs at 64 / 512 MiB, f16; bf16 within 2% of it):
#: 10001 51.5 -> 63.5 / 373 -> 467 (in blocks of 256, 297: below), 12345
#: 58.2 -> 55.0 / 425 -> 397, 16385 64.1 -> 48.4 / 472 -> 334 (55% -> 78% of
#: copy), 20001 56.0 -> 50.7 / 405 -> 352, 24001 55.1 -> 47.6 / 404 -> 323,
#: 28002 57.0 -> 46.4 / 384 -> 308. Aligned rows under 30000 lost
#: (`STREAM_ROW_MIN=30000,8200`: f16 of 8200 -35%, 12288 -17 to -23%, 20000
#: -8%). From 8193 (every windowed row past the block form) since the rows
#: of few accesses take blocks of fewer threads (STREAM_WINDOW_THREADS,
#: below); in blocks of 1024, 10001 lost (above) and the form began at
#: 12288.
STREAM_WINDOW_ROW_MIN = 8193
#: ... in blocks of fewer threads where the windowed row has few 16-byte
#: accesses: (most accesses, threads) in order, STREAM_THREADS past them
#: (`stream_threads`). H200, session 24 (`variant.py
#: STREAM_THREADS=1024,512,256 STREAM_WINDOW_ROW_MIN=8200 -- --ops softmax
#: --rows 10001,12345,16385,24001,32768 --dtypes f16 --sizes 64,512`, µs at
#: 64 / 512 MiB for 1024 / 512 / 256 threads): 10001 (1251 accesses) 63.8 /
#: 47.7 / 43.3 and 468 / 323 / 297 (87% of copy; the cluster form 373),
#: 12345 (1544) 399 / 302 / 334, 16385 (2049) 335 / 287 / 363, 24001 (3001)
#: 321 / 314 / 388; aligned rows of 32768 (4096) 292 / 372 / 400. Taken in
#: session 25 with STREAM_WINDOW_ROW_MIN 8193, against the cluster form
#: under 12288 and blocks of 1024 past it (H200, `variant.py
#: STREAM_WINDOW_ROW_MIN=12288` against `STREAM_WINDOW_ROW_MIN=8193
#: STREAM_WINDOW_THREADS=1400:256+3200:512`, `--ops softmax --rows
#: 8193,10001,12345,16385,20001,24001,25601 --dtypes f16,bf16 --sizes
#: 64,512`, µs at 64 / 512 MiB, f16; bf16 within 1%): 8193 58.8 -> 41.2 /
#: 430 -> 283 (91% of copy), 10001 51.7 -> 43.4 / 374 -> 297, 12345 55.4 ->
#: 44.5 / 398 -> 302, 16385 48.6 -> 42.6 / 336 -> 288, 20001 50.9 -> 44.6 /
#: 352 -> 302, 24001 47.5 -> 45.1 / 322 -> 313; 25601 (past the table) the
#: same.
STREAM_WINDOW_THREADS: tuple[tuple[int, int], ...] = ((1400, 256), (3200, 512))
#: ... and rows 8 divides through that code too (h = 0): H200, rows of 32768
#: f16 2.0-2.8% slower, of 50256 2.7-3.5% faster (`STREAM_EDGES=False,True`);
#: off.
STREAM_EDGES = False
#: f16/bf16 rows' exponentials in the stream form as approximate 2^x
#: (`rlx_ms_add_n_afn`; off: expf): the row is read twice, so each element
#: takes two, and with expf the form was compute-bound on the H200 (rows of
#: 32768 f16 365 µs at 512 MiB, against 292).
STREAM_APPROX = True
#: Softmax's and log_softmax's exponentials in the cached forms (rows held
#: in registers or shared memory) as approximate 2^x of (x - max) * log2(e)
#: (`rlx_ex2f`: three instructions where expf takes about eight) where the
#: results are f16/bf16: the error (a few f32 ulp, relative to |x - max|
#: times 2^-24) is far below their rounding, but for bf16 results under
#: 2^-126 (x - max between about -92 and -87), which the approximation's
#: flush to zero makes 0 where bf16 has subnormals (an absolute error under
#: 1.2e-38, as in the stream form); f32 results keep expf.
CACHED_APPROX = True


def window_setup(cols: int, width: int) -> list[str]:
    """The windowed forms' per-row bounds (row `r` at `base`, `width`
    elements per 16-byte access): `h`, the window's elements before the
    row's first, and `nb`, the window's accesses."""
    return [f"const int h = (int)(base & {width - 1});  // the window's elements before the row's first",
            f"const int nb = (h + {cols} + {width - 1}) / {width};  // accesses in the window"]


def stream_threads(cols: int, width: int) -> int:
    """Threads per block (one row) of the stream form over rows of `cols`
    elements, `width` per access: STREAM_WINDOW_THREADS for the windowed
    rows (`width` does not divide `cols`), else STREAM_THREADS."""
    if cols % width:
        accesses = -(-cols // width) + 1
        for most, threads in STREAM_WINDOW_THREADS:
            if accesses <= most:
                return threads
    return STREAM_THREADS


#: 16-bit stream rows of more than STREAM_CLUSTER_ROW_BYTES split over the
#: STREAM_CLUSTER blocks of a thread-block cluster (0: a block per row),
#: their (max, sum) merged through distributed shared memory
#: (`rlx_cluster_reduce`). The stream form's second read must find the row
#: in L2: a block of 1024 threads per row, two per multiprocessor, keeps
#: 264 rows in flight on 132 multiprocessors, 17 MB of rows of 32768 but
#: 26.5 MB of rows of 50257 (100 KB) against the GH100's 50 MB of L2 (two
#: halves), and the long rows lost bandwidth as their rows in flight grew
#: (H100, session 35, softmax f16 at 100 MiB: rows of 30522 80.4 µs, 32768
#: 82.1, 40000 90.6, 50257 96.6). Two blocks a row keep half the rows in
#: flight with the same loads in flight. H100, session 35 (`variant.py
#: STREAM_CLUSTER=0,2 STREAM_CLUSTER_ROW_BYTES=16384 -- --ops softmax --rows
#: 20001,30522,32768,40000,50257,65536 --dtypes f16,bf16 --sizes 64,512`,
#: blocks of 1024, µs at 64 / 512 MiB, f16; bf16 within 1%): 50257 62.7 ->
#: 59.7 / 478.6 -> 412.8 (+5% / +16%), 65536 65.3 -> 58.8 / 528.6 -> 440.6
#: (+11% / +20%), 40000 -4% / +7%; the rows of 64 KB and less lost (32768
#: -7% / -14%, 20001 -26%): the form begins past 64 KB.
STREAM_CLUSTER = 2
STREAM_CLUSTER_ROW_BYTES = 65536
#: ... in blocks of at most STREAM_CLUSTER_THREADS, as few as give the
#: fewest trips of STREAM_LOADS loads (whole warps; STREAM_CLUSTER_BALANCE,
#: else always STREAM_CLUSTER_THREADS): a block's share of a row of 50257
#: (3142 accesses) took 2 trips of 2 × 1024 loads with the second half
#: full, in blocks of 800 it takes 2 full ones. H100, session 35
#: (`variant.py STREAM_CLUSTER_BALANCE=False,True -- --ops softmax --rows
#: 40000,45001,50257,60000,65536 --dtypes bf16 --sizes 64,512`): 40000 (640
#: threads) +10.1% / -2.0% at 64 / 512 MiB, 45001 (704) +4.4% / +3.2%,
#: 50257 (800) +1.2% / +1.3%, 60000 (960) +0.4% / +0.1%, 65536 (1024) the
#: same.
STREAM_CLUSTER_THREADS = 1024
STREAM_CLUSTER_BALANCE = True


def stream_cluster(cols: int, size: int) -> int:
    """Blocks of a cluster per row of the stream form (0: a block per row)."""
    return STREAM_CLUSTER if STREAM_CLUSTER > 1 and size == 2 and cols * size > STREAM_CLUSTER_ROW_BYTES else 0


def stream_cluster_threads(cols: int, c: int) -> int:
    """Threads per block of the clustered stream form over 16-bit rows of
    `cols` (c blocks a row): as few trips of STREAM_LOADS loads as
    STREAM_CLUSTER_THREADS allow, each as full as whole warps make it."""
    if not STREAM_CLUSTER_BALANCE:
        return STREAM_CLUSTER_THREADS
    accesses = -(-cols // (8 * c))  # a block's share of the row's 16-byte accesses
    trips = -(-accesses // (STREAM_CLUSTER_THREADS * STREAM_LOADS))
    return min(STREAM_CLUSTER_THREADS, -(-accesses // (STREAM_LOADS * trips * 32)) * 32)


def stream_split(rows: int, items: int, sm_count: int) -> int:
    """Blocks per row of a streamed form over `rows` rows of `items`
    accesses each on `sm_count` multiprocessors; 0 for a block per row
    (see STREAM_GRID)."""
    if not STREAM_GRID or sm_count <= 0 or rows <= 0:
        return 0
    c = min(-(-sm_count * STREAM_GRID_BLOCKS_PER_SM // rows), max(2, sm_count // GRID_SHARE),
            items // (STREAM_GRID_THREADS * STREAM_GRID_MIN_ITEMS))
    return c if c >= 2 and rows * c < 2**31 else 0


#: Rows along non-contiguous axes with kept axes after them (softmax over
#: axis 1 of [n, c, h, w], or axis -2) take the columns form where at least
#: COLUMN_FORM_MIN_ROWS rows (positions of the kept axes) give the GPU
#: work: blocks of X × Y threads, threadIdx.x one of X consecutive rows
#: (whose elements are neighbours: a warp's reads are coalesced), threadIdx.y
#: one of Y slices of the reduced axis (Y up to COLUMN_FORM_SLICES: the
#: axis's length rounded up to a power of two), the slices' statistics met in shared memory
#: (`rlx_column_reduce`), the row read again for the output. Elsewhere the
#: looping form: a block per row, its threads along the reduced axis (reads
#: `inner` elements apart: a 32-byte sector per element), which left most of
#: a block idle on short axes (21 channels: 21 of 256 threads).
COLUMN_FORM = True
COLUMN_FORM_SLICES = 8
COLUMN_FORM_THREADS = 256  # per block: COLUMN_FORM_THREADS / Y rows
#: H100 (session 18, `variant.py COLUMN_FORM_MIN_ROWS=4096,1024 -- --ops
#: softmax_mid,argmax_mid --rows 8192,16384 --sizes 64,512`): from 1024
#: rows, [16, 8192, 128] f32 softmax 526.7 -> 131.2 µs, [8, 16384, 128]
#: f16 981.5 -> 379.1, argmax 1.6-3x faster where the form changed, the
#: rest within 1%. Few rows over long axes (f16 [32, 8192, 128], 0.52x
#: torch.compile with a row's slices in one block) take COLUMN_GRID.
COLUMN_FORM_MIN_ROWS = 1024
#: COLUMN_CACHED_ELEMS (f32; COLUMN_CACHED_ELEMS_16 for f16/bf16): where
#: a slice of the axis holds at most this many elements (no prologue), each
#: thread keeps its slice in registers: the row read once from memory, not
#: twice (0: never; the slices doubled, as far as COLUMN_FORM_MAX_SLICES and
#: COLUMN_FORM_MIN_RUN_BYTES allow, until they are that short); taken before
#: the 16-byte vector form with COLUMN_CACHED_OVER_VECTORS; the statistics
#: in one reduction over the slices (`RowSpec.merged`) with
#: COLUMN_CACHED_MERGED. H100 (session 18, `variant.py
#: COLUMN_CACHED_ELEMS=0,32,64 -- --ops softmax_mid --rows
#: 21,128,256,1000,2048 --sizes 64,512`, then `COLUMN_CACHED_OVER_VECTORS=
#: False,True COLUMN_CACHED_ELEMS=64 -- --dtypes f16,bf16`): f32 12-52%
#: faster in all 10 cases with 64 (axis 256 at 512 MiB 542.7 -> 374.3 µs,
#: 98% of copy; 32 lost 28% on axes of 2048 at 512 MiB); f16/bf16 over the
#: vector form 50-68% faster on axes of 21-256 (f16 axis 128 at 512 MiB
#: 600.9 -> 382.1 µs) but 32-45% slower on axes of 1000 (slices of 63
#: 2-byte elements), hence 32 for them.
COLUMN_CACHED_ELEMS = 64
COLUMN_CACHED_ELEMS_16 = 32
#: ... and softmax over f16/bf16 where those slices are too long and
#: `inner` is even: each thread takes two neighbouring rows (4-byte
#: accesses, so blocks of 8 threads still read 32-byte runs and a row may
#: take up to 32 slices), its slices of both held in registers as f32 pairs
#: where a slice has at most COLUMN_PAIRED_ELEMS elements (0: never). H100
#: (session 18, `variant.py COLUMN_PAIRED_ELEMS=0,32,64 -- --ops
#: softmax_mid --dtypes f16,bf16 --rows 1000,2048,4096,8192 --sizes
#: 64,512`): with 64, axes of 2048 15-19% faster (f16 at 512 MiB 734.7 ->
#: 615.4 µs) but axes of 1000 9-22% slower (slices of 63 pairs); with 32,
#: axes of 1000 +5-6% at 64 MiB and 7% slower at 512 (against the vector
#: form); 4096 and 8192 unchanged (too long either way). Off: no setting
#: wins everywhere.
COLUMN_PAIRED_ELEMS = 0
#: ... and where the inner axis (the elements after the reduced one) has at
#: most COLUMN_INNER_ROWS elements, 16 not dividing it (49: 7 x 7 pixels), a
#: block takes all of it (X = inner) and Y slices (as many as hold the axis
#: in COLUMN_CACHED_ELEMS, at least COLUMN_FORM_THREADS / X), up to
#: COLUMN_INNER_THREADS threads: thread (x, y) reads element k * inner + x
#: of its outer index, so a block's reads at each step are one run of
#: consecutive elements (X rows of 32 consecutive ones straddled the inner
#: axis's ends, at any alignment); where a block's elements (its outer
#: index's) take COLUMN_INNER_MIN_BYTES or more. H100 (session 19,
#: `variant.py COLUMN_INNER_ROWS=0,64 -- --ops softmax_mid --inner 49 --rows
#: 3,21,64,256 --sizes 64,512`, and `--inner 7 --rows 21,64,256 --sizes
#: 64`): 27-87% faster from 4116 bytes a block up (f32 [1337, 256, 49] at 64
#: MiB 86.0 -> 54.3 µs, 0.86x -> 1.37x torch.compile; f16 [10699, 64, 49]
#: 67.7 -> 53.2; f32 of 21 x 49 19-25%; f32 256 x 7 13.5%); 52-82% slower
#: at 588-3584 bytes (axes of 3; f16 of 21 x 49; inner 7 but f32 256):
#: blocks too small to pay for themselves.
COLUMN_INNER_ROWS = 64
COLUMN_INNER_THREADS = 512
COLUMN_INNER_MIN_BYTES = 4096
#: ... and where blocks would be smaller than that and the inner axis is
#: under COLUMN_SLAB_INNER (a warp's 32 rows always straddle its ends),
#: softmax over such an axis takes the slab form where one outer index's
#: elements (axis × inner) number at most COLUMN_SLAB_ELEMS (0: never): a
#: block reads as many outer indices' elements as fit that many f32 in
#: shared memory, in order (one run), takes each column's max and sum from
#: there (up to 16 threads per column, `rlx_group_reduce`), then writes the
#: output in order. H100 (session 19, `variant.py COLUMN_SLAB_ELEMS=0,8192
#: -- --ops softmax_mid --inner 3|7|49 --rows 21,64,256,1000 --sizes 64`):
#: inner 3 60-155% faster (f16 [532610, 21, 3] 235.1 -> 92.2 µs; f32
#: [21845, 256, 3] 137.4 -> 63.6), inner 7 5-52% (axes of 1000 took the
#: whole-inner-axis form either way); inner 49 over 21 lost 34% in
#: f16/bf16 (the columns form's warps straddle at most one end there).
COLUMN_SLAB_ELEMS = 8192
COLUMN_SLAB_INNER = 32
#: The slab form moves its elements as 16-byte items where an outer index's
#: elements fill whole items (f32 and f16/bf16; else one at a time). H200
#: (session 20, `variant.py COLUMN_SLAB_VECTORS=False,True -- --ops
#: softmax_mid --inner 3|7 --rows 21,64,256 --sizes 64,512`): axes of 64 and
#: 256 10-31% faster where it applies (f16 [74898, 64, 7] 88.2 -> 70.6 µs,
#: bf16 [43690, 256, 3] 88.7 -> 67.9); axes of 21 (63 or 147 elements an
#: outer index) keep single elements.
COLUMN_SLAB_VECTORS = True
#: The slab form's column statistics read a column's elements `inner`
#: floats apart, and the outer indices' elements (axis x inner floats) lie
#: one after the other: over an axis of 64 and an inner axis of 3 (192
#: floats, 0 modulo the 32 banks) a warp's loads fell on 6 banks, 5.75
#: words to a bank. With COLUMN_SLAB_PAD the codegen counts each warp load's
#: wavefronts (`_slab_wavefronts`) for paddings of 4-32 floats after each
#: outer index (16-byte alignment kept) and, where the fewest per outer
#: index are COLUMN_SLAB_PAD times fewer than unpadded (0: never), takes the
#: least padding within 5% of that fewest, in
#: the 16-byte item form only. H200 (session 21, first an earlier form of
#: this switch that padded wherever the count fell 5%, then this one:
#: `variant.py COLUMN_SLAB_PAD=0,2 -- --ops softmax_mid --inner 3|7 --rows
#: 21,64,128,256 --sizes 64,512`): inner 3 over 64
#: (3.0x fewer) 21-37% faster (f16 [174762, 64, 3] 88.5 -> 66.4 µs); inner 7
#: over 64 (1.5x) -4% to +2%; single-element slabs over 21 (inner 3: 2.8x;
#: 7) 3-12% slower (the padded index costs a division per element).
COLUMN_SLAB_PAD = 2.0
#: Whether the slab form goes before the whole-inner-axis form where both
#: apply; the whole-inner-axis form's slices at most COLUMN_INNER_MAX_SLICES
#: (0: as many as COLUMN_FORM_THREADS / inner). H100 (session 19,
#: `variant.py COLUMN_INNER_MAX_SLICES=0,16,32` and `COLUMN_SLAB_FIRST=
#: False,True -- --ops softmax_mid --inner 3|7 --rows 64,256,1000 --sizes
#: 64`): 16 slices, not 85, over an inner axis of 3 and 1000 elements 2.3-3.7x
#: faster (f16 232.3 -> 62.0 µs: each thread had folded 85 slots), inner 7
#: over 256 in f32 1.8x (32: 1.2x); the slab form first lost 17-25% there.
COLUMN_SLAB_FIRST = False
COLUMN_INNER_MAX_SLICES = 16
#: ... where the slices do not divide the axis, only a slice's last element
#: is guarded (COLUMN_SLICE_PEEL), not each of them: ptxas kept a 64-bit
#: offset per guarded element (f16 slices of 32 in COLUMN_GRID: 86-92
#: registers, 63 peeled; f32 slices of 63: 128 -> 80). H100 (session 19,
#: `variant.py COLUMN_SLICE_PEEL=False,True -- --ops softmax_mid --rows
#: 1000,3000 --sizes 64,512`): f16/bf16 over blocks 65-98% faster (f16 axis
#: 1000 at 64 MiB 137.5 -> 79.7 µs), f32 axis 3000 16-17%, f32 axis 1000
#: held in one block +8.0% at 64 MiB and -2.4% at 512 MiB.
COLUMN_SLICE_PEEL = True
COLUMN_CACHED_OVER_VECTORS = True
COLUMN_CACHED_MERGED = True
#: COLUMN_VECTORS: where 16 bytes of neighbouring rows are aligned (the
#: rows after the axis, `inner`, a multiple of 4 f32 / 8 f16 or bf16), each
#: thread takes that many rows, read and written 16 bytes at a time, one
#: statistic per row (`RowSpec.streamed_at`: softmax, log_softmax), where
#: that still gives COLUMN_VECTOR_BLOCKS_PER_SM blocks per multiprocessor
#: and, unless COLUMN_VECTORS_F32, in f16/bf16 only. H100, softmax over
#: axis 1 (session 17, `variant.py COLUMN_VECTORS=False,True -- --ops
#: softmax_mid --rows 21,128,1000 --sizes 64,512`): f16/bf16 20-38% faster
#: wherever the blocks were 1024 or more ([2048, 128, 128]: 120.7 -> 97.4
#: µs), 47% slower with 131 blocks ([262, 1000, 128]: 118.5 -> 223.5); f32
#: 3-8% slower in 5 of 6 cases (the element-wide form already moves 4
#: bytes per access).
#: Session 18 (`variant.py COLUMN_VECTOR_BLOCKS_PER_SM=4,2 -- --ops
#: softmax_mid --dtypes f16,bf16 --rows 1000,2048,4096 --sizes 64,512`):
#: with 2, [1024, 2048, 128] (512 blocks, 3.9 per SM) 16.7-16.9% faster,
#: the other 10 cases unchanged (same form); 3 keeps clear of the one-block
#: loss above.
COLUMN_VECTORS = True
COLUMN_VECTORS_F32 = False
COLUMN_VECTOR_BLOCKS_PER_SM = 3
#: ... and where they leave fewer, more slices per row as the element form
#: takes them (COLUMN_FORM_FILL_BLOCKS_PER_SM), the vector form kept where
#: that gives COLUMN_VECTOR_FILLED_BLOCKS_PER_SM blocks per multiprocessor
#: (0: never; [262, 1000, 128] f16 over axis 1: 32 slices, 524 blocks).
#: H100 (session 18, `variant.py COLUMN_VECTOR_FILLED_BLOCKS_PER_SM=0,3 --
#: --ops softmax_mid --rows 1000 --dtypes f16,bf16`, also with 4 output
#: loads): at 64 MiB f16 6.8-9.8% slower, bf16 9.1-12.5% faster (512 MiB:
#: unchanged, already vectors), so off.
COLUMN_VECTOR_FILLED_BLOCKS_PER_SM = 0
#: ... its statistics' read issuing COLUMN_VECTOR_LOADS 16-byte loads
#: before folding them in, where slices are short (COLUMN_FORM_BATCH_SHARE,
#: as COLUMN_FORM_LOADS); 1: `#pragma unroll 4` over a load and its folds.
#: H100 (session 17, `variant.py COLUMN_VECTOR_LOADS=1,4 -- --ops
#: softmax_mid --dtypes f16,bf16`): axes of 128 1.5-9.7% faster (f16 at 64
#: MiB 97.8 -> 89.1 µs), the rest within 1.4%.
COLUMN_VECTOR_LOADS = 4
#: ... and on axes of at most COLUMN_FORM_SHORT_AXIS elements, Y only as
#: large as COLUMN_FORM_THREADS_PER_SM threads per multiprocessor in all
#: need (0: always up to COLUMN_FORM_SLICES). H100, softmax over axis 1 of
#: [n, 21, 128] (µs at 64 / 512 MiB): f32 105.8 -> 88.6 / 804 -> 667, f16
#: 194 -> 157 / 1512 -> 1206 with one slice; on axes of 128 the same rule
#: lost at 512 MiB (f32 532 -> 849: 2 slices of 64 elements), of 1000 it
#: changed nothing (it keeps 8). Axes of 33-64 too since session 55 (H200,
#: `variant.py COLUMN_FORM_SHORT_AXIS=32,64,128 -- --ops softmax_mid,argmax_mid
#: --dtypes f32,f16,bf16 --rows 33,40,48,64,128 --sizes 64,512 --compile-sizes
#: none`, inner 128; table `variant-COLUMN_FORM_SHORT_AXIS-…-session55`): they
#: took 8 slices of 5-8 elements, now 1-2 of up to 64 (held in registers),
#: µs at 64 / 512 MiB: softmax f16 of 40 74.1 -> 38.8 / 564.6 -> 278.1 (48% ->
#: 85% of copy), of 64 54.8 -> 39.2 / 403.2 -> 282.2, bf16 the same, f32 of 33
#: 50.9 -> 37.1 / 377.3 -> 267.8, of 64 -1.9% / 0%; argmax f32 of 40 36.6 ->
#: 23.6 / 238.5 -> 149.7 (it had been 0.92x eager's 33.3 in the session's sweep
#: of unseen lengths), of 64 -2.3% / +18%. 16-bit argmax (the packed vector
#: form) lost 9-15% at 512 MiB over 33-64 (64 MiB the same): it keeps 32
#: (ARGMAX_PACKED_SHORT_AXIS). 128 moved axes of 128: softmax f16/bf16 +5%,
#: 16-bit argmax -25% at 512 MiB.
COLUMN_FORM_THREADS_PER_SM = 2048
COLUMN_FORM_SHORT_AXIS = 64
ARGMAX_PACKED_SHORT_AXIS = 32
#: ... its statistics' read issuing COLUMN_FORM_LOADS loads before folding
#: them in where a row has several slices of at most COLUMN_FORM_BATCH_SHARE
#: elements (as argmax's columns form: ARGMAX_COLUMN_LOADS); 1: a load and
#: its fold per step. H100 (session 17, `variant.py COLUMN_FORM_LOADS=1,4
#: -- --ops softmax_mid --rows 21,128,1000 --sizes 64,512`): f32 over axes
#: of 128 (8 slices of 16) 75.0 -> 61.0 µs at 64 MiB, 532 -> 443 at 512;
#: every other case within 1% (the gate left them as they were). Session
#: 18 (`variant.py COLUMN_FORM_BATCH_SHARE=32,128 -- --ops softmax_mid
#: --rows 1000`): slices of up to 128 batched too, axes of 1000 (8-16
#: slices of 63-125) 10-23% faster in all 6 cases (f16 at 64 MiB 119.0 ->
#: 96.3 µs; the vector form's statistics at 512 MiB too, 705 -> 625); and
#: (`COLUMN_FORM_BATCH_SHARE=128,1000000 -- --rows 4096`) slices of any
#: length: axes of 4096 at 512 MiB 13-24% faster (f16 960 -> 777 µs), at
#: 64 MiB within 3.6%. So every row of several slices batches.
COLUMN_FORM_LOADS = 4
COLUMN_FORM_BATCH_SHARE = 1 << 40
#: ... and its output pass (the row read again, the output stored) issuing
#: COLUMN_FORM_OUT_LOADS loads before storing, where a row has several
#: slices (the element and the vector forms; 1: a load and its store per
#: step). H100 (session 18, `variant.py COLUMN_FORM_OUT_LOADS=1,4 -- --ops
#: softmax_mid --rows 21,128,1000 --sizes 64,512`): axes of 128 2.6-6.1%
#: faster in all 6 cases (f32 at 512 MiB 443.7 -> 418.2 µs), of 1000 at
#: 512 MiB 3.7-4.3% (64 MiB: -1.8 to +0.3%); one slice of 21 channels lost
#: 6.7-7.4% at 512 MiB in f16/bf16, hence "several slices".
COLUMN_FORM_OUT_LOADS = 4
#: ... and where its blocks number fewer than COLUMN_FORM_FILL_BLOCKS_PER_SM
#: per multiprocessor (few rows, long axes: [131, 1000, 128]), more slices
#: per row, up to COLUMN_FORM_MAX_SLICES while each keeps
#: COLUMN_FORM_MIN_SHARE elements (0: off). H100 (session 17, `variant.py
#: COLUMN_FORM_FILL_BLOCKS_PER_SM=0,4,8 -- --ops softmax_mid,argmax_mid
#: --rows 1000,128 --sizes 64,512`): with 4, f32 softmax over [131, 1000,
#: 128] 114.5 -> 95.0 µs (16 slices), argmax 30.6 -> 28.1, the other 22
#: cases within 0.7%; with 8, f32 softmax 89.6 but f16/bf16 softmax and
#: argmax 4-9% slower.
COLUMN_FORM_FILL_BLOCKS_PER_SM = 4
COLUMN_FORM_MAX_SLICES = 32
COLUMN_FORM_MIN_SHARE = 16
#: ... as long as a block's rows stay COLUMN_FORM_MIN_RUN_BYTES wide (a
#: 32-byte sector: no fill to 8 rows of 2 bytes; softmax only). H100
#: (session 18, `variant.py COLUMN_FORM_MIN_RUN_BYTES=0,32 -- --ops
#: softmax_mid,argmax_mid --rows 4096,1000 --dtypes f16,bf16 --sizes
#: 64,512`): f16/bf16 softmax over [64, 4096, 128] 190 -> 133 µs (16 rows
#: x 16 slices, not 8 x 32), the other softmax cases within 0.6%; argmax
#: there 15-17% slower, so argmax fills as before.
COLUMN_FORM_MIN_RUN_BYTES = 32


#: COLUMN_GRID: where a slice of the columns form cannot be held in
#: registers (COLUMN_CACHED_ELEMS: long axes over few rows, and f16/bf16
#: axes of 1000 and more, which read the row twice two bytes at a time),
#: the slices of a group of COLUMN_GRID_ROWS rows are spread over C blocks
#: of COLUMN_FORM_THREADS threads (X rows × Y slices each), as the grid form
#: spreads a contiguous row: C just large enough that a slice holds at most
#: COLUMN_CACHED_ELEMS elements, doubled while the blocks number under
#: COLUMN_GRID_BLOCKS_PER_SM per multiprocessor (slices of at least
#: COLUMN_FORM_MIN_SHARE elements); the row read once, the slices'
#: statistics met in shared memory and then across the C blocks through
#: global slots and an arrival counter (`rlx_column_grid_reduce`; a group's
#: blocks start together, taking tickets as `_grid_row`'s). At most
#: COLUMN_GRID_MAX_BLOCKS blocks per group (and multiprocessors /
#: GRID_SHARE, as the grid form: resident together with room to spare; C is
#: doubled only as far as that), and slots of at most
#: COLUMN_GRID_SLOT_BYTES (a module's static memory). H100 (session 19,
#: `variant.py COLUMN_GRID=False,True -- --ops softmax_mid --rows
#: 1000,2048,3000,4096,8192 --sizes 64,512`, before COLUMN_SLICE_PEEL): f32
#: axes of 3000-8192 30-97% faster ([16, 8192, 128] 131.8 -> 66.9 µs;
#: 1000-2048 already held by one block), f16/bf16 axes of 2048-8192
#: 15-137% faster (f16 [32, 8192, 128] 217.8 -> 91.9 µs, the 0.51x of
#: session 18), 1000 and 3000 22-35% slower until only a slice's last
#: element was guarded (then 1000: 106.4 -> 79.7 µs). `__launch_bounds__`
#: for 3 blocks per SM (COLUMN_GRID_MIN_BLOCKS=3: f32 128 -> 80 registers)
#: was 7% slower at 64 MiB, within 2.3% at 512.
COLUMN_GRID = True
COLUMN_GRID_ROWS = 16
#: ... and for 2-byte elements, COLUMN_GRID_ROWS_16 rows a block where that
#: keeps C within its cap (else COLUMN_GRID_ROWS): a warp then reads 64
#: consecutive bytes of one slice (with 16, two 32-byte pieces of two).
#: H200 (session 46, `variant.py COLUMN_GRID_ROWS=16,32 -- --ops softmax_mid
#: --dtypes f16,bf16 --rows 1000,2048,4096,8192 --sizes 64,512
#: --compile-sizes none`, inner 128): axes of 1000 +20.5-26.1% (f16 at 512
#: MiB 456.7 -> 362.2 µs), 2048 +5.9-16.4%, 8192 +5.6-12.3%, 4096 -0.3% to
#: -9.1% (at 64 MiB 68.7 -> 75.5).
COLUMN_GRID_ROWS_16 = 32
#: ... and where 32 rows' slices of COLUMN_CACHED_ELEMS_16 would need more
#: blocks than the cap (axes of 32768 over few rows), slices of up to
#: COLUMN_GRID_HELD_16 elements in groups of 32 rows before 16 rows (0:
#: never). H200 (session 46, `variant.py COLUMN_GRID_HELD_16=0,64 -- --ops
#: softmax_mid --dtypes f16,bf16 --rows 16384,32768 --sizes 64,512
#: --compile-sizes 64`): axes of 32768 +2.4-4.6% at 64 MiB (bf16 96.9 ->
#: 92.6 µs), -2.1-2.2% at 512; 16384 unchanged (not taken there): off.
COLUMN_GRID_HELD_16 = 0
COLUMN_GRID_BLOCKS_PER_SM = 4
COLUMN_GRID_MAX_BLOCKS = 64
COLUMN_GRID_SLOT_BYTES = 16 << 20
#: `__launch_bounds__`' blocks per multiprocessor for it (0: none).
COLUMN_GRID_MIN_BLOCKS = 0


#: COLUMN_PACKED: softmax and log_softmax over a middle axis of at least
#: COLUMN_PACKED_MIN_AXIS elements (f16/bf16; f32 too with
#: COLUMN_PACKED_F32), where W = COLUMN_PACKED_BYTES / element bytes (at
#: least 2) divides the inner axis and the inner axis holds a block's run
#: (COLUMN_PACKED_RUN_BYTES): each thread takes W neighbouring rows, X =
#: RUN_BYTES / COLUMN_PACKED_BYTES threads a run of the inner axis, Y =
#: COLUMN_FORM_THREADS / X slices of the reduced axis, each thread holding
#: its slice's items raw, as loaded (at most COLUMN_PACKED_WORDS 32-bit
#: words: no converted copy kept; `__launch_bounds__` for
#: COLUMN_PACKED_MIN_BLOCKS blocks a multiprocessor), C blocks per group of
#: X × W rows as COLUMN_GRID (C = 1: one block, no tickets; C at most
#: COLUMN_PACKED_MAX_BLOCKS), where the blocks number at least
#: COLUMN_PACKED_MIN_WAVE per multiprocessor. The max, then the sum of
#: exp(x - max) from the registers, the W rows' (max, sum)s met in one
#: reduction (`rlx_column_ms_reduce`), the output's exponential taken again
#: from the registers (x - the row's max; 2^x approximate for 16-bit
#: results, as CACHED_APPROX). Where COLUMN_GRID moves 2 bytes a thread (a
#: warp's 32 rows: 64-byte runs), this moves 4 (128-byte runs).
#: H200 (session 57; tables `variant-COLUMN_PACKED-…-session57`, inner 128):
#: - First with 8-byte items and every thread folding its column's 16
#:   slices × 4 rows by merges (2 exponentials each: more than the
#:   elements' own): 12-57% slower everywhere (f16 axis 640 at 64 MiB 56.7
#:   -> 69.1 µs). With the rows' states folded once, max first, by threads
#:   y < W (`rlx_column_ms_reduce`): +2% to +17% over axes of 640-3072
#:   (`variant.py COLUMN_PACKED=False,True -- --ops softmax_mid --dtypes
#:   f16,bf16 --rows 300,640,1000,1536,3072,11008 --sizes 64,512
#:   --compile-sizes none --no-eager-timing`), 300 -6.6% / +1.9%, 11008
#:   (C = 43) -18% / -21%.
#: - Knobs (f16 over 640 and 3072, 64 / 512 MiB): 4-byte items +8.8% /
#:   +13.0% over 640 against 8-byte, the same over 3072; 16-byte -13% to
#:   -17%; runs of 128 bytes beat 64 (-5% to -10% with 4-byte items) and 256
#:   (-42% over 3072); 32 words beat 24 (+27% to +35%) and tie 40;
#:   `__launch_bounds__(256, 4)` beat none (+3% to +10%) and 3.
#: - Taken (4-byte items, `COLUMN_MS_FOLD` on): `variant.py
#:   COLUMN_PACKED=False,True -- --ops softmax_mid --dtypes f16,bf16 --rows
#:   640,1000,1536,2048,3072,4096,8192 --sizes 64,512`: f16 640 +19.7% /
#:   +26.5% (55.2 -> 46.2 µs at 64 MiB; 83% of copy at 512 MiB), 1000 +13% /
#:   +19% (81%), 1536 +4% / +5%, 2048 +12% / +8%, 3072 +8% / +2%; 4096 (C =
#:   16) -1.3% to -2.2%, hence MAX_BLOCKS 12; 8192 keeps COLUMN_GRID_VECTORS.
#:   bf16 the same within 1.5 points.
#: - Small tensors (`--sizes 1,2,4,8`, f16 over 640 and 1536): at 1-4 MiB
#:   the packed form's fewer blocks lost up to 12% (4 MiB over 640: 150
#:   blocks, 6.3 -> 7.1 µs), at 8 MiB (300 blocks) it won 18.8-20.3%: hence
#:   MIN_WAVE 2 (blocks at least twice the multiprocessors; fitted between
#:   those two points, not measured at 2 itself).
#: - f32 (COLUMN_PACKED_F32, 8-byte items): -17% / -10% over 640, -4% / +2%
#:   over 3072: off.
COLUMN_PACKED = True
COLUMN_PACKED_F32 = False
COLUMN_PACKED_BYTES = 4
COLUMN_PACKED_RUN_BYTES = 128
COLUMN_PACKED_WORDS = 32
COLUMN_PACKED_MIN_AXIS = 512
COLUMN_PACKED_MAX_BLOCKS = 12
COLUMN_PACKED_MIN_WAVE = 2
COLUMN_PACKED_MIN_BLOCKS = 4


def column_packed_shape(rows: Rows, elem_bytes: int, sm_count: int) -> tuple[int, int, int, int] | None:
    """(W rows a thread, X threads, Y slices, C blocks) of the packed
    columns form (see COLUMN_PACKED) over `rows` of `elem_bytes` elements on
    `sm_count` multiprocessors, or None where it does not apply."""
    if not COLUMN_PACKED or sm_count <= 0 or rows.inner <= 0 or rows.col_off == "k" or rows.rows == 0 \
            or rows.cols < COLUMN_PACKED_MIN_AXIS or (elem_bytes >= 4 and not COLUMN_PACKED_F32):
        return None
    w = COLUMN_PACKED_BYTES // elem_bytes
    if w < 2 or rows.inner % w or rows.inner * elem_bytes < COLUMN_PACKED_RUN_BYTES:  # (short inner axes: a run
        return None  # would straddle outer indices, COLUMN_INNER_ROWS' form reads them whole)
    x = max(1, min(COLUMN_PACKED_RUN_BYTES // COLUMN_PACKED_BYTES, COLUMN_FORM_THREADS))
    y = COLUMN_FORM_THREADS // x
    if y < w:  # rlx_column_ms_reduce: threads y < W fold a row each
        return None
    groups = -(-rows.rows // (w * x))
    most = max(1, COLUMN_PACKED_WORDS * 4 // COLUMN_PACKED_BYTES)  # items a thread holds
    c, cap = _group_blocks(groups, rows.cols, y, most, sm_count)
    if c > min(cap, COLUMN_PACKED_MAX_BLOCKS) or groups * c < COLUMN_PACKED_MIN_WAVE * sm_count or groups * c >= 2**31 \
            or groups * c * x * 8 * w > COLUMN_GRID_SLOT_BYTES:
        return None
    return w, x, y, c


#: COLUMN_GRID_VECTORS: softmax and log_softmax over a middle axis whose
#: inner axis 16 bytes divide, where one block cannot hold the axis: a
#: group of W neighbouring rows spread over C blocks of
#: COLUMN_GRID_VECTOR_THREADS threads, TX threads of 16 bytes (8 f16/bf16,
#: 4 f32 rows) a position (TX × 16 at most COLUMN_GRID_VECTOR_RUN_BYTES;
#: W all of the inner axis where that allows) and TY positions a step,
#: each thread holding COLUMN_GRID_VECTOR_HELD 16-byte items in registers
#: (where COLUMN_GRID moves a 2-byte element a thread). The (max, sum) of
#: each row met over the block's positions in shared memory, then over the
#: C blocks in groups of COLUMN_GRID_VECTOR_FAN_IN: the last block of a
#: group of them to arrive folds theirs, the last of those folds the
#: groups' (in order of rank both times, so the bits do not depend on who
#: arrives last) and counts the rows' statistics done; in the held form
#: (C under COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS, or COLUMN_GRID_VECTOR_LAG 0)
#: every block waits for that and writes from its registers (one read), C
#: at most half of what the multiprocessors hold (`__launch_bounds__`:
#: COLUMN_GRID_VECTOR_BLOCKS_PER_SM for 8 items); the lagged form is below.
#: C at least COLUMN_GRID_VECTOR_MIN_BLOCKS, the slots within
#: COLUMN_GRID_SLOT_BYTES; else COLUMN_GRID.
#: f32 only with COLUMN_GRID_VECTORS_F32. H200 (session 47, one device
#: call, `variant.py ... -- --ops softmax_mid --dtypes f32,f16,bf16 --rows
#: 1000,2048,4096,8192,32768 --sizes 64,512 --compile-sizes none`, inner
#: 128; sweeps/variant-column-grid-vectors-h200-2026-11-29-session47.md):
#: f16/bf16 axes of 4096 +19.8-26.5% (64 MiB 75.9 -> 63.3 µs), 8192
#: +2.9-8.2%, 32768 +29.5-32.7% (96.6 -> 74.4), 2048 +4.5-8.7% (C = 8),
#: but 1000 (C = 4: COLUMN_GRID's 4 blocks of 32 rows) 5.7-10.7% slower,
#: and f32, whose COLUMN_GRID moves 64-byte runs already, 7-17% slower at
#: 4096-32768: hence MIN_BLOCKS and f32 off.
#: Runs of 128 bytes beat 64, 256 and 512 (f16 at 512 MiB, axis 4096: 397.5
#: µs against 435.9, 423.0, 426.1); 4 items a thread lost 26-40% (more
#: blocks, each paying the meeting), 16 (2 blocks a multiprocessor) 2-9%;
#: groups of 4 blocks lost up to 6.8% against 16. Still 48-62% of copy
#: bandwidth: the blocks of the 2-4 groups in flight wait for the chain of
#: arrivals together, with nothing else resident to overlap it (hence the
#: lagged form below, taken where C is 16 or more).
COLUMN_GRID_VECTORS = True
COLUMN_GRID_VECTORS_F32 = False
COLUMN_GRID_VECTOR_THREADS = 256
COLUMN_GRID_VECTOR_HELD = 8
COLUMN_GRID_VECTOR_BLOCKS_PER_SM = 4
COLUMN_GRID_VECTOR_FAN_IN = 16
COLUMN_GRID_VECTOR_RUN_BYTES = 128
COLUMN_GRID_VECTOR_MIN_BLOCKS = 8
#: ... and (held form only) COLUMN_GRID_VECTOR_SHARED more items a thread
#: in static shared memory (copied in by `cp.async` on sm_80+; as many as
#: fit 48 KB), so that the blocks in flight hold more of the tensor (up to
#: 1.9x); C's cap
#: still counts COLUMN_GRID_VECTOR_BLOCKS_PER_SM blocks a multiprocessor, which
#: 45 KB blocks keep on sm_90 (228 KB) but not on sm_80/86/89 (the runtime's
#: co-residency check then refuses a large C at load). H200
#: (session 47, `variant.py COLUMN_GRID_VECTOR_SHARED=0,4,7
#: COLUMN_GRID_VECTOR_MIN_BLOCKS=0 -- --ops softmax_mid --dtypes f16,bf16
#: --rows 1000,2048,4096,8192,32768 --sizes 64,512 --compile-sizes none`):
#: 7 items +4.5-6.4% at 512 MiB over axes of 8192 and 32768, but -4% to
#: -12% at 64 MiB and -1% to -9% elsewhere (4 items: -13% to +4%): off.
COLUMN_GRID_VECTOR_SHARED = 0
#: COLUMN_GRID_VECTOR_LAG (0: off), the lagged form: the blocks take tickets
#: in the order they start; the block of ticket T folds the statistics of
#: ticket T's items (no wait: it arrives and leaves them to the last of its
#: group), then reads ticket T - LAG's items again (all 8 loads in flight
#: while it waits for their rows' statistics) and writes their output. LAG is
#: COLUMN_GRID_VECTOR_LAG blocks a multiprocessor, at least C, so that the
#: blocks it waits for started before it: no block needs another resident
#: (no co-residency, and no cap on C but the slots' COLUMN_GRID_SLOT_BYTES:
#: bf16 [128, 32768, 128] still passes it), a block holds only its second
#: read's items while thread 0 waits, and the second read mostly hits L2
#: (H200, ncu, bf16 [64, 4096, 128]: 75 MB read from HBM for a 67 MB input;
#: [64, 32768, 128]: 673 for 537).
#: COLUMN_GRID_VECTOR_LAG_HINTS: the second read and the stores streamed
#: (`__ldcs`, `__stcs`: evicted first). Only where C is at least
#: COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS; COLUMN_GRID_VECTOR_LAG_CAP: C still at
#: most half of what the multiprocessors hold. H200 (session 48, one device
#: call each, `variant.py COLUMN_GRID_VECTOR_LAG=0,2,3 -- --ops softmax_mid
#: --dtypes f16,bf16 --rows 2048,4096,8192,32768 --sizes 64,512
#: --compile-sizes none`): LAG 2 against the held form +8.0% to +22.8% over
#: axes of 4096-32768 (bf16 [8, 32768, 128] 74.3 -> 62.5 µs, [64, 32768,
#: 128] 500.3 -> 407.3), LAG 3 -1% to +9% against 2 (worse at 512 MiB), LAG
#: 1 +0.4% to +14.8%, 4 and 8 worse again (the second read from HBM);
#: axes of 2048 (C = 8, held) were -5.5% lagged at 512 MiB; hints +5% at
#: axes of 32768, else within 2%; 128 threads a block (8 a multiprocessor)
#: -4% to -38%, 512 -3% to -10%, groups of 8 blocks -0.5% to -4%. Without
#: the cap, axes of 131072 (C = 512: COLUMN_GRID's fallback read the axis
#: a thread at a time, 2153-2960 µs) take 72.6-543.5 µs, and 65536
#: (C = 256) stays within 1.4%.
COLUMN_GRID_VECTOR_LAG = 2
COLUMN_GRID_VECTOR_LAG_HINTS = True
COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS = 16
COLUMN_GRID_VECTOR_LAG_CAP = False
#: COLUMN_GRID_VECTOR_SHUFFLE (prepared in session 48): a block's
#: statistics folded over each warp's positions by shuffles (32 / TX of
#: them, where TX divides 32) before the warps' meet in shared memory, so
#: that the chain the block's other threads wait for at the barrier is 8
#: merges long instead of 32 (ncu, session 48: barrier stalls about as many
#: as the loads'). H200: session 49 (`... --rows 2048,4096,8192,32768,131072`)
#: 20 cases within -0.5% to +2.1%, left off; session 56 (`variant.py
#: COLUMN_GRID_VECTOR_SHUFFLE=False,True -- --ops softmax_mid --dtypes
#: f16,bf16 --rows 2048,4096,11008 --sizes 64,512 --compile-sizes none`):
#: all 12 cases faster, +0.1% to +2.0% (f16 [23, 11008, 128] 63.7 -> 62.4
#: µs); on, a small gain (the losses, 512 MiB over axes of 8192-32768, 0.5%
#: at most).
COLUMN_GRID_VECTOR_SHUFFLE = True


@dataclass(frozen=True)
class VectorGrid:
    """The shape of the columns form over blocks in 16-byte items (see
    COLUMN_GRID_VECTORS): TX × TY threads a block, each holding L items
    of V elements; W rows a group (`chunks` groups across the inner axis),
    C blocks a group, met in groups of F."""

    tx: int
    ty: int
    l: int
    v: int
    w: int
    chunks: int
    c: int
    f: int
    shared: int = 0  # items a thread holds in shared memory, past its L in registers
    lag: int = 0  # tickets between a block's statistics and its output (COLUMN_GRID_VECTOR_LAG; 0: held)

    @property
    def subs(self) -> int:
        return -(-self.c // self.f)


def vector_grid_blocks_per_sm() -> int:
    """The blocks a multiprocessor holds in COLUMN_GRID_VECTORS' form
    (`__launch_bounds__`): COLUMN_GRID_VECTOR_BLOCKS_PER_SM where a thread
    holds up to 8 items, fewer in proportion past that."""
    return max(1, COLUMN_GRID_VECTOR_BLOCKS_PER_SM * 8 // max(8, COLUMN_GRID_VECTOR_HELD))


def column_grid_vectors(rows: Rows, elem_bytes: int, sm_count: int) -> VectorGrid | None:
    """The VectorGrid over `rows` of `elem_bytes` elements on `sm_count`
    multiprocessors, or None where COLUMN_GRID_VECTORS does not apply."""
    if not COLUMN_GRID_VECTORS or sm_count <= 0 or rows.inner <= 0 or rows.col_off == "k" or rows.rows == 0 \
            or (elem_bytes >= 4 and not COLUMN_GRID_VECTORS_F32):
        return None
    v = 16 // elem_bytes
    if rows.inner % v:
        return None
    items = rows.inner // v  # 16-byte items across the inner axis
    tx = max(d for d in range(1, min(items, 32, max(1, COLUMN_GRID_VECTOR_RUN_BYTES // 16)) + 1) if items % d == 0)
    if tx < items and tx * 16 < 64:  # a group's run of the inner axis under 64 bytes
        return None
    ty = COLUMN_GRID_VECTOR_THREADS // tx
    if ty < v:  # a block's threads fold its W rows
        return None
    held = COLUMN_GRID_VECTOR_HELD
    room = (48 * 1024 - 64 - ty * tx * v * 8) // (tx * ty * 16)  # static shared memory past the block's (max, sum)s
    c = -(-rows.cols // (ty * held))
    lagged = COLUMN_GRID_VECTOR_LAG and c >= COLUMN_GRID_VECTOR_LAG_MIN_BLOCKS
    shared = 0 if lagged else max(0, min(COLUMN_GRID_VECTOR_SHARED, room))  # items in shared memory: held form only
    c = -(-rows.cols // (ty * (held + shared)))
    groups = rows.rows // (tx * v)
    cap = sm_count * vector_grid_blocks_per_sm() // 2
    lag = max(COLUMN_GRID_VECTOR_LAG * sm_count, c) if lagged else 0
    if c < max(2, COLUMN_GRID_VECTOR_MIN_BLOCKS) or (c > cap and not (lagged and not COLUMN_GRID_VECTOR_LAG_CAP)) \
            or groups * c + lag >= 2**31:
        return None
    vg = VectorGrid(tx, ty, held, v, tx * v, items // tx, c, min(COLUMN_GRID_VECTOR_FAN_IN, c), shared, lag)
    if groups * (c + vg.subs + 1) * vg.w * 8 + groups * (vg.subs + 2) * 128 > COLUMN_GRID_SLOT_BYTES:  # slots, counters
        return None
    return vg


def _held_elems(elem_bytes: int) -> int:
    """The elements a columns-form thread holds in registers at most
    (COLUMN_CACHED_ELEMS; COLUMN_CACHED_ELEMS_16 for 2-byte elements)."""
    return COLUMN_CACHED_ELEMS if elem_bytes >= 4 else COLUMN_CACHED_ELEMS_16


def column_grid_shape(rows: Rows, elem_bytes: int, sm_count: int) -> tuple[int, int, int] | None:
    """(X, Y, C) of the columns form over blocks (see COLUMN_GRID) over `rows`
    of `elem_bytes` elements on `sm_count` multiprocessors, or None where it
    does not apply (a block's slices hold the row, or C would be too large)."""
    most = _held_elems(elem_bytes)
    if not COLUMN_GRID or not most or sm_count <= 0 or rows.inner == 0 or rows.col_off == "k" or rows.rows == 0:
        return None
    if elem_bytes < 4 and COLUMN_GRID_ROWS_16 and COLUMN_GRID_ROWS_16 != COLUMN_GRID_ROWS:
        wide = _column_grid_shape(rows, most, sm_count, COLUMN_GRID_ROWS_16)
        if wide is None and COLUMN_GRID_HELD_16 > most:
            wide = _column_grid_shape(rows, COLUMN_GRID_HELD_16, sm_count, COLUMN_GRID_ROWS_16)
        if wide is not None:
            return wide
    return _column_grid_shape(rows, most, sm_count, COLUMN_GRID_ROWS)


def _group_blocks(groups: int, cols: int, y: int, most: int, sm_count: int) -> tuple[int, int]:
    """(C, its cap) of a columns form over blocks (COLUMN_GRID, COLUMN_PACKED)
    with `groups` groups of rows over an axis of `cols` elements, Y slices a
    block and at most `most` elements (items) a slice: C just large enough
    that a slice holds at most `most`, doubled while the blocks number under
    COLUMN_GRID_BLOCKS_PER_SM per multiprocessor and slices keep
    COLUMN_FORM_MIN_SHARE elements, as far as the cap (resident together with
    room to spare) allows; C may still exceed the cap where `most` needs it."""
    c = -(-cols // (most * y))
    cap = min(COLUMN_GRID_MAX_BLOCKS, max(2, sm_count // GRID_SHARE))
    while groups * c < COLUMN_GRID_BLOCKS_PER_SM * sm_count and cols >= 2 * c * y * COLUMN_FORM_MIN_SHARE and 2 * c <= cap:
        c *= 2
    return c, cap


def _column_grid_shape(rows: Rows, most: int, sm_count: int, rows_per_block: int) -> tuple[int, int, int] | None:
    """column_grid_shape with `rows_per_block` rows (X) a block."""
    x = min(rows_per_block, COLUMN_FORM_THREADS)
    y = COLUMN_FORM_THREADS // x
    groups = -(-rows.rows // x)
    c, cap = _group_blocks(groups, rows.cols, y, most, sm_count)
    if c < 2 or c > cap or groups * c >= 2**31 \
            or groups * c * x * 12 > COLUMN_GRID_SLOT_BYTES:  # 12: the largest statistic (RlxWelford)
        return None
    return x, y, c


def column_slices(rows: Rows, sm_count: int = 0, elem_bytes: int = 4) -> int:
    """Y (threads along the reduced axis per row) of the columns form over
    `rows` of `elem_bytes` elements (4: no width limit while
    COLUMN_FORM_MAX_SLICES and COLUMN_FORM_MIN_RUN_BYTES are at most 32) on `sm_count`
    multiprocessors (0: unknown), or 0 where it does not apply (see
    COLUMN_FORM)."""
    if not COLUMN_FORM or rows.inner == 0 or rows.col_off == "k" or rows.rows < COLUMN_FORM_MIN_ROWS:
        return 0
    return _fill_slices(_slice_count(rows.cols, rows.rows, sm_count), rows.rows, rows.cols, sm_count, elem_bytes)


def _fill_slices(y: int, threads: int, cols: int, sm_count: int, run_bytes: int = 16) -> int:
    """Y doubled while the blocks over `threads` threads (times Y) number
    under COLUMN_FORM_FILL_BLOCKS_PER_SM per multiprocessor, up to
    COLUMN_FORM_MAX_SLICES slices of COLUMN_FORM_MIN_SHARE elements, each
    block's rows still COLUMN_FORM_MIN_RUN_BYTES wide (`run_bytes` per
    thread)."""
    while (COLUMN_FORM_FILL_BLOCKS_PER_SM and sm_count and y < COLUMN_FORM_MAX_SLICES
           and -(-threads // (COLUMN_FORM_THREADS // y)) < COLUMN_FORM_FILL_BLOCKS_PER_SM * sm_count
           and cols >= 2 * y * COLUMN_FORM_MIN_SHARE
           and COLUMN_FORM_THREADS // (2 * y) * run_bytes >= COLUMN_FORM_MIN_RUN_BYTES):
        y *= 2
    return y


def _vector_slices(rows: Rows, groups: int, sm_count: int, short_axis: int | None = None) -> int:
    """Y of the 16-byte columns forms (COLUMN_VECTORS) where `groups`
    threads (times Y) take the rows, or 0 where their blocks are too few
    (`short_axis`: `_slice_count`'s)."""
    y = _slice_count(rows.cols, groups, sm_count, short_axis)
    if -(-groups // (COLUMN_FORM_THREADS // y)) >= COLUMN_VECTOR_BLOCKS_PER_SM * sm_count:
        return y
    if not COLUMN_VECTOR_FILLED_BLOCKS_PER_SM:
        return 0
    y = _fill_slices(y, groups, rows.cols, sm_count)
    return y if -(-groups // (COLUMN_FORM_THREADS // y)) >= COLUMN_VECTOR_FILLED_BLOCKS_PER_SM * sm_count else 0


def _slice_count(cols: int, threads: int, sm_count: int, short_axis: int | None = None) -> int:
    """Y of the columns form over an axis of `cols` elements where `threads`
    threads (times Y) take the rows; axes up to `short_axis` (None:
    COLUMN_FORM_SHORT_AXIS) only as many as fill the multiprocessors."""
    most = min(COLUMN_FORM_SLICES, cols)
    short = COLUMN_FORM_SHORT_AXIS if short_axis is None else short_axis
    if COLUMN_FORM_THREADS_PER_SM and sm_count and cols <= short:
        most = min(most, -(-sm_count * COLUMN_FORM_THREADS_PER_SM // threads))
    y = 1
    while y < most:
        y *= 2
    return y


#: The warp form's grid: blocks per multiprocessor at most, 0 for a block
#: per THREADS / group rows (its grid-stride loop then takes one trip).
#: Uncapped measured best (H100, softmax rows of 64/128 at 512 MiB: 88-93%
#: of copy bandwidth capped at 16 per SM, 100-101% uncapped): a group's
#: next row waited on its last row's reductions, where a new block's loads
#: are already in flight.
WARP_BLOCKS_PER_SM = 0
#: The warp form's threads per block (threads / group rows a block):
#: WARP_SHORT_THREADS where a row holds at most WARP_SHORT_ROW_BYTES, else
#: WARP_THREADS. H200 (session 27, `variant.py WARP_THREADS=256,128 --
#: --ops softmax,layer_norm,rms_norm --rows 64,128,384,512,768,1001 --sizes
#: 64,512`), 128 against 256: f32 softmax over rows of 64/128 1.6-2.4%
#: faster (512 MiB: 261.8 -> 255.6 µs, where eager took 257.7), f32
#: layer_norm 0-1.5%, 16-bit layer_norm 0.1-2.2%, 16-bit softmax and
#: rms_norm within 1.2% either way; rows of 384-1001 mixed, -1.5% (f32
#: layer_norm of 768) to +3.3%.
WARP_THREADS = THREADS
WARP_SHORT_THREADS = 128
WARP_SHORT_ROW_BYTES = 512
#: The warp form's f16/bf16 rows of odd lengths (one element per access)
#: over WARP_SHORT_ROW_BYTES are staged through shared memory
#: (`_staged_warp`): a block's rows are contiguous, so its threads copy them
#: in with 16-byte loads, the groups work on their rows there, and the
#: block copies the outputs back with 16-byte stores; each group takes
#: enough rows that a block's span holds about WARP_STAGE_BYTES. H200
#: (session 27, `variant.py WARP_STAGED=False,True` and
#: `WARP_STAGE_BYTES=8192,16384,32768 -- --ops softmax,layer_norm,rms_norm
#: --dtypes f16,bf16 --rows 65,197,257,383,1001,1023 --sizes 64,512`),
#: staged at 16 KB against unstaged over rows of 257-1023: rms_norm 10-14%
#: faster (1001 at 512 MiB: 293.0 -> 263.4 µs, 97% of copy), softmax -2%
#: to +9%, layer_norm 0-11% (1001 at 64 MiB: 46.6 -> 42.2); rows of 65 and
#: 197 lost up to 7% (layer_norm) and 11% (rms_norm) at 8 KB, more at 16
#: KB (a group's rows one after another), so shorter rows are not staged;
#: f32 rows (4-byte accesses) lost 1-18%.
WARP_STAGED = True
WARP_STAGE_BYTES = 16384
#: Measured, not taken (session 54, H200): staged rows of one element an
#: access read from the stage in each pass instead of held in registers
#: (16-bit layer_norm of 1001 58 -> 32 registers) lost 3-27% in f16/bf16
#: layer_norm and rms_norm over rows of 13-1001 (f32 -2% to +1%;
#: `sweeps/variant-WARP_STAGED_REREAD-…-session54.md`): the code was removed.
#: ... and so are rows over WARP_STAGED_ROW_BYTES up to WARP_SHORT_ROW_BYTES
#: (odd 16-bit rows of 101-255 elements over 16 or 32 lanes) where the op
#: has at most WARP_STAGED_SHORT_PARAMS per-column params (softmax,
#: log_softmax, rms_norm: not layer_norm), a block's span about
#: WARP_STAGE_SHORT_BYTES (an even count of rows where a block has 4
#: groups: `stage_rows`). H200 (session 41, `variant.py
#: WARP_STAGED_ROW_BYTES=512,200 WARP_STAGE_SHORT_BYTES=S -- --ops
#: softmax,log_softmax,layer_norm,rms_norm --rows 101,129,161,197,225,255
#: --dtypes f16,bf16 --sizes 64,512` for S of 16384, 8192 and 4096, each
#: against unstaged rows; `sweeps/variant-WARP_STAGED_ROW_BYTES-…-session41`):
#: at 8192 every softmax, log_softmax and rms_norm case faster, +1.2% to
#: +25% (softmax bf16 of 197: 43.5 -> 39.1 µs at 64 MiB, 306.5 -> 263.8 at
#: 512, 98% of copy; rms_norm bf16 of 129 327.0 -> 260.8), layer_norm -7.1%
#: to +10% (at 64 MiB 9 of 12 slower); at 16384 (the longer rows' span)
#: the 64 MiB cases lost up to 17.5% (a block's 40 rows of 197 take 10
#: rows a group, one after another), at 4096 rows of 129-161 lost up to 14%.
WARP_STAGED_ROW_BYTES = 200
WARP_STAGE_SHORT_BYTES = 8192
WARP_STAGED_SHORT_PARAMS = 1
#: ... and so are its odd 16-bit rows of a thread each (5 or 7 elements:
#: WARP_STAGED_TINY_MIN up to 8). Unstaged, a warp's loads of such rows
#: are two bytes a thread 10-14 bytes apart. H200 (session 28, `variant.py
#: WARP_STAGED_TINY=False,True -- --ops softmax,layer_norm,rms_norm --rows
#: 3,5,7 --dtypes f16,bf16 --sizes 64`; the run's time limit cut it after
#: layer_norm bf16 of 3, so rms_norm was not timed), µs at 64 MiB: softmax
#: f16 of 7 116.2 -> 40.0 (28% -> 81% of copy, 0.88x -> 2.60x eager), of 5
#: 67.7 -> 39.8; layer_norm f16 of 7 83.9 -> 45.8, of 5 58.5 -> 45.2 (bf16
#: softmax the same within 2%); rows of 3 lost 8-16% against 4 rows a group
#: (WARP_BATCH_NARROW_BYTES), so they stay unstaged.
WARP_STAGED_TINY = True
WARP_STAGED_TINY_MIN = 5
#: ... and rows of up to WARP_STAGED_TINY_LANES lanes a row holding
#: WARP_STAGED_TINY_ITEMS elements a lane or more (16-bit rows of 11-15
#: over 2 lanes, 21-31 over 4). Unstaged, a warp's loads of rows of 15
#: span 16 rows 30 bytes apart, two bytes a lane. H200 (session 29,
#: `variant.py WARP_STAGED_TINY_LANES=1,2,4,8,16 -- --ops
#: softmax,layer_norm,rms_norm --rows 9,15,17,31,33,65,127 --dtypes
#: f16,bf16 --sizes 64`; `sweeps/variant-warp-staged-tiny-lanes-…`), µs at
#: 64 MiB, staged against not: softmax f16 of 15 122.1 -> 36.2 (0.85x eager
#: -> 2.9x), of 31 87.5 -> 44.1; layer_norm of 15 82.7 -> 55.7, of 31 79.2
#: -> 58.9; rms_norm of 15 93.6 -> 43.1, of 31 76.0 -> 49.1 (bf16 alike).
#: Rows of 5 elements a lane lost: layer_norm and rms_norm of 9 (2 lanes)
#: 3-17%, of 17 (4 lanes) 8-18%, of 33 (8 lanes) 12-19%; softmax of 9
#: and 17 gained 8-16%; rows of 65 (16 lanes) lost 8-22%. Then
#: (`variant.py WARP_STAGED_TINY_ITEMS=99,6,7 -- ... --rows
#: 11,13,21,25,27,29`; `sweeps/variant-warp-staged-tiny-items-…`): rows of
#: 13-29 (7-8 a lane) gained 9-153% (softmax f16 of 29 89.0 -> 36.0 µs, 91%
#: of copy); at 6 a lane, softmax of 11 +36-72% and of 21 +30-31%, the
#: norms of 11 -3% to +5%, of 21 -6% to -1%: 6.
WARP_STAGED_TINY_LANES = 4
WARP_STAGED_TINY_ITEMS = 6
#: ... and f32 rows alike. Off: H200 (session 29, `variant.py
#: WARP_STAGED_TINY_LANES=8 WARP_STAGED_TINY_F32=False,True -- --ops
#: softmax,layer_norm,rms_norm --rows 5,7,9,15,17,31 --dtypes f32 --sizes
#: 64`; `sweeps/variant-warp-staged-tiny-f32-…`): 4-27% slower but for 3
#: of 18 cases (rms_norm of 15 +10%).
WARP_STAGED_TINY_F32 = False
#: ... and f16/bf16 rows with per-column params (layer_norm, rms_norm) of
#: WARP_STAGED_NARROW_ROW_BYTES (24-56 bytes) whose accesses are under 16 bytes
#: (rows of 12, 20 or 28 elements: 8-byte accesses) or overrun the row (24:
#: 3 accesses over 4 lanes). Unstaged, a warp's requests cover its rows in
#: part each, and rows with params batch fewer rows a group
#: (WARP_BATCH_NARROW_PARAM_BYTES). The value is a block's span in bytes
#: (WARP_STAGE_BYTES for the longer rows); 0: off. H200 (session 39), µs,
#: staged against not:
#:
#: * `variant.py WARP_STAGED_NARROW=0,16384 -- --ops
#:   softmax,log_softmax,layer_norm,rms_norm --rows 12,20,24,28,40,44,56
#:   --dtypes f16,bf16 --sizes 64,512` (`sweeps/variant-WARP_STAGED_NARROW-h200-…`):
#:   at 512 MiB rows of 12-28 gained up to 31% (rms_norm bf16 of 20 343.5 ->
#:   261.6) and rows of 40-56 lost up to 9%; at 64 MiB 52 of the 56 cases
#:   lost, up to 19% (layer_norm f16 of 56 37.5 -> 46.2);
#: * `WARP_STAGED_NARROW=0,4096,8192 -- --ops softmax,layer_norm,rms_norm
#:   --rows 12,20,24,28` (`sweeps/variant-WARP_STAGED_NARROW-span-…`): at 8
#:   KB every layer_norm and rms_norm case gained, +0.7% (rms_norm f16 of
#:   12 at 64 MiB) to +32% (rms_norm bf16 of 20 at 512 MiB: 345.7 -> 261.5,
#:   99% of copy; layer_norm f16 of 28 336.5 -> 273.3); softmax -9.5% to
#:   +4% over its lanes, so softmax and log_softmax (no params) are staged
#:   only a thread a row (WARP_STAGED_NARROW_SOLO, below);
#: * `WARP_STAGED_NARROW=0,8192 -- --ops layer_norm,rms_norm --rows
#:   14,18,22,26,36,52` (2-element accesses; cut after 15 of 48 cases:
#:   `sweeps/variant-WARP_STAGED_NARROW-rows-14-52-…`): f16 layer_norm of
#:   14-26 +3% to +26% (18 at 512 MiB 454.2 -> 359.9), bf16 of 14 -3% to
#:   0%, of 18 +2%; rows of 36 and 52 (over 56 bytes) unstaged, within 1%.
WARP_STAGED_NARROW = 8192
WARP_STAGED_NARROW_ROW_BYTES = (24, 56)
#: ... and such rows of up to WARP_STAGED_NARROW_SOLO bytes, of any op, a
#: thread each (no shuffles: the row's statistics in one thread's
#: registers; its accesses in shared memory 24-56 bytes apart, free of bank
#: conflicts); 0: off. The H200 (session 39, `kernels.py --ops
#: softmax,log_softmax,layer_norm --rows 12,20,72,136 --dtypes bf16 --sizes
#: 64 --compile-sizes 64`, `sweeps/kernels-short-rows-compile-…`) had
#: torch.compile faster over bf16 rows of 12 (softmax 54.9 against 58.2 µs,
#: layer_norm 46.0 against 58.1) and layer_norm of 20 (44.9 against 48.5).
#: Then (`variant.py WARP_STAGED_NARROW_SOLO=0,24,56 -- --ops
#: softmax,log_softmax,layer_norm,rms_norm --rows 12,20,24,28 --dtypes bf16
#: --sizes 64`, `sweeps/variant-WARP_STAGED_NARROW_SOLO-…`), at 56 every
#: case faster, +3.5% (rms_norm of 28) to +68% (softmax of 12: 58.0 -> 34.6
#: µs, 93% of copy; layer_norm of 12 58.3 -> 35.5, of 20 48.5 -> 35.3), all
#: 16 at 90-93% of the 512 MiB copy; f16 too (session 40, rows of 12-28,
#: `sweeps/variant-WARP_STAGED_NARROW_SOLO-f16-rows-12-28-…`): all 64 f16 and
#: bf16 cases faster but for one (rms_norm bf16 of 24, -0.7%), up to +68%,
#: at 87-93% of copy. Past WARP_STAGED_NARROW_ROW_BYTES' end it stages rows
#: that long too, a thread each (rows of 36-88 elements: 53-154 registers, no
#: spills; a row whose 16-byte accesses are odd in number reads shared memory
#: without bank conflicts): `variant.py WARP_STAGED_NARROW_SOLO=56,176 --
#: --ops softmax,log_softmax,layer_norm,rms_norm --rows 36,40,44,56,72,88
#: --dtypes f16,bf16 --sizes 64` (session 40,
#: `sweeps/variant-WARP_STAGED_NARROW_SOLO-176-…`): all 48 cases faster,
#: +0.2% (rms_norm f16 of 56) to +37% (layer_norm bf16 of 36: 49.5 -> 36.2
#: µs), at 84-92% of copy (the guarded rows of 72, at 64-74% in session 38:
#: log_softmax bf16 44.9 -> 37.7, layer_norm bf16 50.3 -> 38.7).
WARP_STAGED_NARROW_SOLO = 176
#: ... and f32 rows of 24 bytes up to WARP_STAGED_SOLO_F32 bytes whose 16-byte
#: accesses overrun the row (12, 20, 28 elements: 3, 5, 7 accesses over 4 or 8
#: lanes), a thread each; 0: off. f32 rows staged over lanes lost 4-27% in
#: session 29 (WARP_STAGED_TINY_F32); a thread each, `variant.py
#: WARP_STAGED_SOLO_F32=0,112 -- --ops softmax,log_softmax,layer_norm,rms_norm
#: --rows 12,20,28 --dtypes f32 --sizes 64 --compile-sizes 64` (H200, session
#: 40, `sweeps/variant-WARP_STAGED_SOLO_F32-…`): rows of 12 and 20 +3.8%
#: (rms_norm of 12) to +27.7% (log_softmax of 20: 44.8 -> 35.1 µs), rows of
#: 28 +5% (softmax, log_softmax), 0% (layer_norm) and -2.2% (rms_norm: 35.4 ->
#: 36.3); all 12 at 86-92% of copy (were 72-91%), 1.14-1.85x torch.compile.
WARP_STAGED_SOLO_F32 = 112
#: ... and f16/bf16 rows of odd length (one element an access, spread over
#: 4-16 lanes: rows of 33-87 elements, e.g. CLIP's 77 tokens) of up to
#: WARP_STAGED_ODD_SOLO bytes, a thread each (`staged_odd_solo`; the
#: staged tiny rows' form, WARP_STAGED_TINY); 0: off. Before (H200, session
#: 40, `kernels.py --ops softmax,layer_norm,rms_norm --rows
#: 50,77,96,197,200,257,577,1500 --dtypes f32,f16,bf16 --sizes 64
#: --compile-sizes 64`, `sweeps/kernels-model-rows-…`), 16-bit rows of 77
#: took 40.8-47.2 µs (68-79% of copy) where even rows of 50 and 96 took
#: 35.0-36.8. `variant.py WARP_STAGED_ODD_SOLO=0,176 -- --ops
#: softmax,log_softmax,layer_norm,rms_norm --rows 33,49,65,77,87 --dtypes
#: f16,bf16 --sizes 64` (H200, session 40,
#: `sweeps/variant-WARP_STAGED_ODD_SOLO-…`): 37 of 40 cases faster, softmax
#: and log_softmax +7% to +61% (f16 of 49: 57.1 -> 35.4 µs; of 77: 42.6 ->
#: 35.8, 90% of copy), rms_norm up to +52%, layer_norm of 33-65 +13% to
#: +33%; layer_norm of 77-87 -2.3% to +1.3% (69-70% of copy either way,
#: its gamma and beta then read an element at a time: WARP_SOLO_VECTOR_PARAMS),
#: rms_norm bf16 of 87 -3.0%.
WARP_STAGED_ODD_SOLO = 176
#: ... from rows of WARP_STAGED_ODD_SOLO_MIN elements: shorter odd rows keep
#: WARP_STAGED_TINY's forms (a thread each: 5 and 7; rows of 3 four a
#: group in registers). Rows of 9-31 took those forms too (over 2-4 lanes,
#: staged or batched in registers) until session 53, H200 (`variant.py
#: WARP_STAGED_ODD_SOLO_MIN=32,9 -- --ops softmax,log_softmax,layer_norm,rms_norm
#: --rows 9,11,13,...,31 --dtypes f16,bf16 --sizes 64 --compile-sizes none`;
#: `sweeps/variant-WARP_STAGED_ODD_SOLO_MIN-…-session53`), a thread a row
#: against lanes: 90 of 96 cases faster, layer_norm +19% to +87% (f16 of 9:
#: 78.5 -> 41.9 µs; of 13 63.7 -> 42.0, 50% -> 77% of the 512 MiB copy),
#: rms_norm +1% to +34%, log_softmax +7% to +65%, softmax +5% to +60% but
#: of 15, 23 and 29 (-2.2% to -7.3%: 36.3-39.4 -> 39.1-40.3 µs, 80-83% of
#: copy), so the rows of 9-31 are a thread's now too.
#: ptxas picks these kernels' registers, in steps of 8, by the row count
#: too: over 3001 rows, softmax, log_softmax and rms_norm of some odd
#: lengths (51-85) spill 4-16 bytes at 64-128 registers, over 37 rows up to
#: 12 (asking for fewer registers was slower: below).
WARP_STAGED_ODD_SOLO_MIN = 9
#: ... and f32 rows of odd length (one element an access) of
#: WARP_STAGED_ODD_SOLO_F32_MIN elements up to WARP_STAGED_ODD_SOLO_F32
#: bytes, up to WARP_STAGED_ODD_SOLO_F32_PARAMS where the op has per-column
#: params (the norms), a thread each, staged (0: off; staged over their 2-8
#: lanes they lost 4-27%, WARP_STAGED_TINY_F32). Before, over 2-8 lanes
#: batched in registers. H200 (session 53, `variant.py
#: WARP_STAGED_ODD_SOLO_F32=0,128 -- --ops softmax,log_softmax,layer_norm,rms_norm
#: --dtypes f32 --rows 5,7,9,11,13,15,17,21,25,27,29,31 --sizes 64
#: --compile-sizes none`; `sweeps/variant-WARP_STAGED_ODD_SOLO_F32-…-session53`),
#: a thread a row against lanes: softmax +0.8% to +92% (of 5: 68.2 -> 35.5
#: µs, 92% of the 512 MiB copy; of 7 52.0 -> 36.0), log_softmax +3% to +41%,
#: layer_norm of 5-9 +14% to +71% (62.2 -> 36.3 µs) but of 11-31 -6.9% to
#: +3.4% (at 85-90% of copy either way), rms_norm of 5-9 +4% to +13%, of
#: 11-31 -1.5% to +2.5%: so the norms' rows only up to 9 elements.
WARP_STAGED_ODD_SOLO_F32 = 128
WARP_STAGED_ODD_SOLO_F32_PARAMS = 36
WARP_STAGED_ODD_SOLO_F32_MIN = 5
#: Measured and removed (session 41): those kernels asking
#: `__launch_bounds__(128, 3)`, which leaves none spilling (up to 168
#: registers). H200 (`variant.py WARP_SOLO_MIN_BLOCKS=0,3 -- --ops
#: softmax,log_softmax,layer_norm,rms_norm --rows 51,55,63,77,81,87 --dtypes
#: f16,bf16 --sizes 64`; `sweeps/variant-WARP_SOLO_MIN_BLOCKS-…-session41`):
#: 11 of 48 faster (up to +3.8%), log_softmax -2.8% to -11.9%, layer_norm up
#: to -16.4% (f16 of 55: 39.8 -> 47.6 µs), rms_norm up to -7.9%: over 64 MiB
#: of rows the spills cost less than the occupancy the registers take.
#: The per-column params (gamma, beta) of rows of one element an access
#: taken a thread a row (WARP_STAGED_ODD_SOLO; WARP_STAGED_TINY's rows of 5
#: and 7 hold theirs in registers, WARP_HELD_PARAMS) read 16 bytes at a
#: time (every thread of a warp the same addresses), not an element at a
#: time: layer_norm over 16-bit rows of 77 read 154 params a row, one load
#: each, and ran at 69-70% of copy where softmax ran at 90%. H200 (session
#: 40, `variant.py WARP_SOLO_VECTOR_PARAMS=False,True -- --ops
#: layer_norm,rms_norm --rows 33,49,65,77,87 --dtypes f16,bf16 --sizes 64`,
#: `sweeps/variant-WARP_SOLO_VECTOR_PARAMS-…`): 19 of 20 cases faster,
#: layer_norm +3.6% to +9.8% (f16 of 77: 45.9 -> 43.6 µs, 74% of copy; bf16
#: of 87 72%), rms_norm +0.2% to +9.8%; rms_norm bf16 of 77 -1.3%.
WARP_SOLO_VECTOR_PARAMS = True
#: Rows per group of the warp form, their 16-byte accesses all loaded
#: before the first is reduced (`CachedRow.loaded`): f16/bf16 rows reduced
#: twice or more (softmax's max and sum, layer_norm's mean and variance: a
#: row's latency is two rounds of shuffles), where a thread's accesses of a
#: row hold WARP_BATCH_MAX_BYTES at most (each row of the batch takes as
#: many registers again) and cover the row exactly, with no prologue; the
#: grid shrinks by as much. H200 (`variant.py WARP_BATCH=1,2,4
#: WARP_BATCH_MAX_BYTES=32 -- --ops softmax,layer_norm,rms_norm --rows
#: 64,128,512 --sizes 64,512`), 2 against 1: softmax f16/bf16 rows of 64
#: and 128 9-14% faster (292.5 -> 260.2 µs at 512 MiB: 100% of copy, where
#: torch.compile took 265), layer_norm f16/bf16 rows of 64-512 3-9%; softmax
#: rows of 512 1-2.5% slower; f32 rows (0-3% slower) and rms_norm (one
#: reduction: 2-5% slower) keep 1; 4 measured as 2 or worse. A persistent
#: grid of 8 blocks per SM loading each group's next row during this one
#: lost 2-16% (all but 16-bit softmax rows of 64-128).
WARP_BATCH = 2
WARP_BATCH_MAX_BYTES = 32
#: ... and guarded rows too (a thread's last 16-byte access past the row's
#: end, skipped: 16-bit rows of 40, 56 or 88 elements, 5, 7 or 11 accesses
#: over 8 or 16 lanes) of WARP_BATCH_GUARDED_MIN accesses or more. H200
#: (session 39, `variant.py WARP_BATCH_GUARDED=False,True -- --ops
#: softmax,log_softmax,layer_norm --rows 24,40,56,88 --dtypes f16,bf16
#: --sizes 64,512`; `sweeps/variant-WARP_BATCH_GUARDED-*session39*`), µs, 2 rows a
#: group against 1: rows of 40 +12-18% (log_softmax bf16 at 512 MiB 357.0
#: -> 302.3), of 56 +4-11%, of 88 +11-17% (softmax f16 at 512 MiB 303.1 ->
#: 263.9, 98% of copy); rows of 24 (3 accesses over 4 lanes) -6% to -11%
#: but for f16 layer_norm (+12-18%), so they keep a row at a time. Then
#: (`... --rows 72,104,120,200,232,456`): rows of 72 +11-22% (softmax f16
#: at 512 MiB 353.6 -> 290.8), 104-232 +2-17% (one access a lane); rows of
#: 456 (two accesses a lane) -8% to +3% (layer_norm f16 -7 to -8%), so a
#: lane's accesses of a guarded row hold WARP_BATCH_GUARDED_MAX_BYTES at
#: most. With that rule, rows of 136-248 (`--rows 136,152,184,248`) gained
#: 2-29% (softmax bf16 of 136 at 512 MiB 380.3 -> 295.9).
WARP_BATCH_GUARDED = True
WARP_BATCH_GUARDED_MIN = 5
WARP_BATCH_GUARDED_MAX_BYTES = 16
#: Rows per group of the warp form where its accesses are narrower than 16
#: bytes (odd lengths: one element per access; 16-bit lengths 8 does not
#: divide), with no prologue, whatever the statistics: as many rows as keep
#: about WARP_BATCH_NARROW_BYTES of the group's rows in each thread's
#: registers, WARP_BATCH_NARROW_MAX at most (0: off). A row of 197 f16
#: elements leaves each lane 7 two-byte loads, 14 bytes in flight, where
#: f32 rows at 28 bytes reach 89-99% of copy bandwidth and f16 ones 66-74%
#: (session 27): the rows are short of bytes in flight, not of instructions.
WARP_BATCH_NARROW_BYTES = 64
WARP_BATCH_NARROW_PARAM_BYTES = 32
WARP_BATCH_NARROW_MAX = 4
WARP_BATCH_NARROW_HELD_MAX = 16


#: The warp form's rows of one element per access (odd lengths) from
#: WARP_NARROW_MIN_COLS elements: lanes per row as few as hold at most
#: WARP_NARROW_ITEMS elements each (0: off, a warp per row past 16 bytes'
#: worth of lanes: `row_group`). Fewer lanes per row waste fewer lanes on
#: the row's last access (rows of 129 f16: 160 slots over 32 lanes, 144
#: over 16) and take fewer shuffles a row (a warp's shuffle serves 32 /
#: lanes rows). H200 (session 29, `variant.py WARP_NARROW_ITEMS=0,8,16 --
#: --ops softmax,layer_norm,rms_norm --rows 33,65,129,197,255 --dtypes
#: f32,f16,bf16 --sizes 64`; `sweeps/variant-warp-narrow-items-…`): 8
#: changes only f32 rows (`row_group` already gives 16-bit rows 8 or fewer
#: a lane): softmax of 33 38.3 -> 35.5 µs, of 65 +5.5%, layer_norm of 65
#: +8.4%, rms_norm of 65 +3.7%, the rest within ±1.6%; 16 lost up to 54%
#: (16-bit rows of 33: a warp's two-byte loads then span 8 rows, 264 bytes,
#: touching 9 sectors for 64 bytes, per load).
WARP_NARROW_ITEMS = 8
WARP_NARROW_MIN_COLS = 32


def narrow_group(cols: int, width: int) -> int:
    """Lanes per row for the warp form's rows of one element per access
    (WARP_NARROW_ITEMS); 32 where it does not apply."""
    if not WARP_NARROW_ITEMS or width != 1 or cols < WARP_NARROW_MIN_COLS:
        return 32
    return _group_of(-(-cols // WARP_NARROW_ITEMS))


#: The warp form's f16/bf16 rows of odd lengths from WARP_WINDOW_MIN
#: elements windowed (see `windowed`; 0: off): each row's 16-byte-aligned
#: window read and written in 16-byte accesses, a lane an access (the
#: lanes a power of two, up to a warp, covering the window's accesses at
#: any start), the window's first and last accesses element by element;
#: rows up to WARP_SHORT_ROW_BYTES (longer odd rows are staged:
#: WARP_STAGED). Unwindowed, a lane moves two bytes an access. Off: H200
#: (session 29, `variant.py WARP_WINDOW_MIN=0,9 -- --ops
#: softmax,layer_norm,rms_norm --rows 9,15,17,33,65,129,197,255 --dtypes
#: f16,bf16 --sizes 64`; `sweeps/variant-warp-window-…`), correct but
#: 1.6-3.1x slower but over rows of 15 (softmax +6%, rms_norm -7 to -10%): a row a group at a
#: time (no batch), up to half its lanes idle, and the window's edges
#: written an element at a time by one lane while the rest wait.
WARP_WINDOW_MIN = 0

#: The warp form's per-column params (gamma, beta) of rows of one element
#: an access held in registers: a lane's columns are the same in every row
#: it takes (lane + j * lanes), so each thread reads its params once, into
#: `ph_<name>[j]`, before its rows, not once a row (a load and, for 16-bit
#: params, a conversion per element and param). f32 rows, and f16/bf16 rows
#: over at most WARP_HELD_PARAMS_16_LANES lanes (a thread a row). H200
#: (session 30, `variant.py WARP_HELD_PARAMS=False,True -- --ops
#: layer_norm,rms_norm --rows 5,7,9,11,13,15,21,25,29,31,33,65,129,197
#: --dtypes f32,f16,bf16 --sizes 64`; `sweeps/variant-warp-held-params-…`):
#: f32 +3% to +13% but layer_norm of 65 (-4.5%); 16-bit rows of 5 and 7
#: +6% to +19%; 16-bit rows over 2-32 lanes -10% to +11% (rms_norm of 15
#: -10%, layer_norm bf16 of 33-129 -6% to -8%), so they read per row.
#: Rows of more than WARP_HELD_PARAMS_ITEMS elements a thread (f32 rows of
#: 257-1024: up to 32 a thread, 64 more registers for layer_norm; not
#: measured) read per row too.
WARP_HELD_PARAMS = True
WARP_HELD_PARAMS_16_LANES = 1
WARP_HELD_PARAMS_ITEMS = 8
#: ... and f16/bf16 rows over 16 or 32 lanes of at most
#: WARP_HELD_PARAMS_16_ITEMS elements a thread (0: none): the rows of odd
#: length 89-288, which no thread-a-row form takes, and 65-87 where the
#: input is one row (rows over 2-8 lanes read per row, as measured in
#: session 30; so do rows a prologue computes, the fused residual norms',
#: which were not measured). H200 (session 41,
#: `variant.py WARP_HELD_PARAMS_16_LANES=1,32 WARP_HELD_PARAMS_ITEMS=24 --
#: --ops layer_norm,rms_norm --rows 89,97,129,161,197,225,257,321,385,449,511,577
#: --dtypes f16,bf16 --sizes 64`; `sweeps/variant-WARP_HELD_PARAMS_16-…-session41`):
#: layer_norm of 89-257 (6-9 a thread) +4.7% to +7.8% (f16 of 197: 43.3 ->
#: 41.3 µs) but bf16 of 129 (-6.7%; f16 of 129 +6.4%), rms_norm -1.0% to
#: +5.1%; of 321-449 (11-15) -3.6% to +4.4%, of 511 and 577 (16 and 19)
#: -1% to -22% (layer_norm of 577: 42.3 -> 54.5 µs).
WARP_HELD_PARAMS_16_ITEMS = 9
#: ... and rows a thread takes alone (WARP_STAGED_ODD_SOLO, WARP_STAGED_TINY,
#: the narrow solo rows) of at most WARP_HELD_PARAMS_SOLO_ITEMS elements
#: (WARP_HELD_PARAMS_ITEMS, 8, until session 53). H200 (`variant.py
#: WARP_HELD_PARAMS_SOLO_ITEMS=8,16,32 -- --ops layer_norm,rms_norm --dtypes
#: f16,bf16 --rows 9,13,17,21,27,31,33,49,77 --sizes 64 --compile-sizes none`;
#: `sweeps/variant-WARP_HELD_PARAMS_SOLO_ITEMS-…-session53`), 16 against 8:
#: rows of 13 +5% to +10% (layer_norm bf16 42.3 -> 38.3 µs), the others
#: -2.3% to +2.9% (16-bit rows of 9-15 hold theirs now; f32 rows a thread
#: each are the norms' of 5-9); 32 against 8: rows of 17-21 +4% to +9% but
#: of 27-31 up to -17.7% (bf16 layer_norm of 31: 115 registers).
WARP_HELD_PARAMS_SOLO_ITEMS = 16


def warp_window_lanes(s: RowSpec) -> int:
    """Lanes per row of the warp form's windowed rows (WARP_WINDOW_MIN); 0
    where the row is not windowed."""
    cols = s.rows.cols
    if (not WARP_WINDOW_MIN or cols < WARP_WINDOW_MIN or cols % 2 == 0 or dtype(s.t).bytes != 2
            or cols * 2 > WARP_SHORT_ROW_BYTES or s.elem_bytes != 2 or s.prologue is not None or s.rows.row_base != f"r * {cols}LL"):
        return 0
    return _group_of((cols + 7 + 7) // 8)  # the window's accesses at the worst start (7 elements before the row)


def warp_batch(s: RowSpec, row: CachedRow, per_block: int) -> int:
    """Rows per group of the warp form (WARP_BATCH_NARROW_*, then
    WARP_BATCH): 1 for a row at a time."""
    size, rows = dtype(s.t).bytes, s.rows
    if s.prologue is not None or row.stored or row.smem or rows.row_base != f"r * {rows.cols}LL":
        return 1
    held = row.items * size  # bytes of one row in a thread's registers
    u = 1
    if row.width * size < 16 and held <= WARP_BATCH_NARROW_HELD_MAX:
        most = WARP_BATCH_NARROW_PARAM_BYTES if s.columns else WARP_BATCH_NARROW_BYTES
        one_stat = size == 2 and row.width == 1 and len(s.cached or []) < 2  # 16-bit rms_norm of odd rows
        u = 1 if one_stat else max(1, min(WARP_BATCH_NARROW_MAX, most // held))
    guarded_ok = (not row.guarded or WARP_BATCH_GUARDED and held <= WARP_BATCH_GUARDED_MAX_BYTES
                  and -(-rows.cols // row.width) >= WARP_BATCH_GUARDED_MIN)
    if u == 1 and size == 2 and len(s.cached or []) >= 2 and row.width > 1 and guarded_ok and held <= WARP_BATCH_MAX_BYTES:
        u = WARP_BATCH
    # a batch has no loop: a block for all
    return u if u > 1 and -(-rows.rows // (per_block * u)) < 2**31 else 1


#: The block form's grid: blocks per multiprocessor at most, walking the
#: rows; 0 for a block per row (no loop trips). H100, rows of 4096: a block
#: per row took softmax, layer_norm and rms_norm from 90-93% to 95-97% of
#: copy bandwidth at 64 MiB and from 93-97% to 102-104% at 512 MiB (in f32,
#: f16 and bf16); rows of 2048-8192 gained 0-9% (f16 softmax of 5000: 63.0
#: -> 57.6 µs). As in the warp form, a new block's loads are in flight
#: while a finished row's reductions would have held up its block's next.
BLOCK_BLOCKS_PER_SM = 0
#: Measured and removed (session 53): the block form's registers per thread
#: capped through `__launch_bounds__`' blocks per multiprocessor, blocks of
#: up to 256 threads (ncu: 16-bit layer_norm of 2049 at 40 registers holds
#: 9 blocks of 160 a multiprocessor, 70% occupancy, rms_norm at 32 holds 12).
#: H200 (`variant.py BLOCK_REGS=0,32,40 -- --ops layer_norm,rms_norm,softmax
#: --dtypes f16,bf16,f32 --rows 1025,1537,2049,2561,3001,4097,5001,6001
#: --sizes 64`; `sweeps/variant-BLOCK_REGS-…-session53`): at 32, 60 of 72
#: cases slower, 16-bit layer_norm -6% to -27% (8 bytes spilled), rows of
#: 6001 -4% to -36%; at 40, 16-bit layer_norm -1% to -12%, rms_norm and
#: softmax of 1537/2561 -6% to -10%; nothing gained past +3%.
#: The block form's threads per block (one row each) ...
BLOCK_THREADS = THREADS
#: ... or fewer (a multiple of 32) where a row has under BLOCK_THREADS x
#: BLOCK_MIN_ITEMS 16-byte items, so each thread has this many loads in
#: flight and more blocks fit a multiprocessor; 0: always BLOCK_THREADS.
#: H200 (session 36), 64 MiB: 16-bit softmax and layer_norm over rows of
#: 1536 and 2049 (192-257 items: one load a thread, 8 blocks of 256 a
#: multiprocessor, 24-32 KB in flight) took 43-46 µs where rows of 6000
#: took 35 and f32 rows of 1536 (two loads a thread) 35-36. H200 (session
#: 37, `variant.py BLOCK_MIN_ITEMS=0,2 -- --ops softmax,layer_norm,rms_norm
#: --rows 1025,1536,2049,3072,4097 --sizes 64,512`, f32/f16/bf16), µs at 64
#: MiB: 16-bit softmax of 1025 64.1 -> 37.3, of 1536 43.4 -> 35.2, of 2049
#: 42.5 -> 35.8; 16-bit layer_norm of 1025 68.1 -> 44.0, of 1536 45.8 ->
#: 35.4, of 3072 40.6 -> 36.5; f32 rows of 1025 8-19% faster; 60 cases, the
#: worst -2.4% (rms_norm f16 of 3072 at 64 MiB), none worse at 512 MiB than -1.4%.
BLOCK_MIN_ITEMS = 2


#: Rows past BLOCK_THREADS x BLOCK_ROW_ELEMS elements (up to the block form's limit)
#: take more threads, BLOCK_ROW_ELEMS elements a thread (registers of row:
#: the cluster form's f32 share), up to 1024.
BLOCK_ROW_ELEMS = 32
#: ... and those blocks' registers a thread at most (0: as the compiler
#: likes), through `__launch_bounds__`' blocks per multiprocessor (65536 /
#: (BLOCK_WIDE_REGS x threads)), only where that is more blocks than 64
#: registers leave (elsewhere the bound would only let the compiler take
#: more): f32 layer_norm of 11008 (352 threads) takes 61 registers (NVRTC
#: 13.5; the device's 13.0 may differ), two blocks a multiprocessor, where
#: 56 leave three. H200 (session 56,
#: `variant.py BLOCK_WIDE_REGS=0,56 -- --ops layer_norm,softmax,rms_norm
#: --dtypes f32,f16 --rows 9000,11008,16385 --sizes 64,512 --compile-sizes
#: none`): f32 layer_norm of 11008 45.7 -> 41.8 / 313.4 -> 270.5 µs (+9.4% /
#: +15.9%), of 9000 +4.0% / +7.9% (three blocks -> four); the other 32 cases
#: -1.0% to +1.8% (the bound applies to rows of 288-544 threads only).
BLOCK_WIDE_REGS = 56


def block_min_blocks(threads: int) -> int:
    """The block form's `__launch_bounds__` blocks per multiprocessor for
    blocks of `threads` (BLOCK_WIDE_REGS; 0: no bound)."""
    if not BLOCK_WIDE_REGS or threads <= BLOCK_THREADS:
        return 0
    wide = 65536 // (BLOCK_WIDE_REGS * threads)
    return wide if wide > 65536 // (64 * threads) else 0


def block_threads(cols: int, elem_bytes: int) -> int:
    """The block form's threads for rows of `cols` elements of `elem_bytes`
    (see BLOCK_MIN_ITEMS and BLOCK_ROW_ELEMS)."""
    if cols > BLOCK_THREADS * BLOCK_ROW_ELEMS:
        return min(1024, 32 * -(-cols // (32 * BLOCK_ROW_ELEMS)))
    if BLOCK_MIN_ITEMS <= 0:
        return BLOCK_THREADS
    items = -(-cols * elem_bytes // 16)
    return min(BLOCK_THREADS, max(64, 32 * -(-items // (32 * BLOCK_MIN_ITEMS))))


#: Off: the cluster form is never picked (tests and benchmarks of the forms it replaces).
USE_CLUSTERS = True

#: Off: f16/bf16 rows of odd lengths move an element at a time (see `CachedRow.peels`).
PEEL_ROWS = True
#: ... and f32 rows of odd lengths too (4 elements per 16-byte access, at most 6
#: peeled). H100 (session 36, `variant.py PEEL_F32=False,True -- --ops
#: layer_norm,rms_norm,softmax,residual_layer_norm,residual_rms_norm --dtypes
#: f32 --rows 1025,2049,4097,5001,8191 --sizes 64,512`), µs at 64 / 512 MiB:
#: residual_layer_norm of 4097 122.3 -> 95.7 / 891.0 -> 726.6 (74% -> 94% of
#: copy; 1.09x -> 1.37x torch.compile), of 8191 164.8 -> 100.0 (0.71x ->
#: 1.14x); residual_rms_norm of 4097 112.8 -> 96.0 (0.96x -> 1.10x); softmax
#: of 8191 68.6 -> 48.6; rms_norm of 8191 56.4 -> 50.7; 45 of 50 cases
#: faster, layer_norm of 8191 1.8-1.9% slower, rows of 1025 within 1.2%.
PEEL_F32 = True
#: ... and rows of even lengths whose 16-byte accesses do not divide them
#: (f32 rows 4 does not divide, 16-bit rows 8 does not; 2- or 4-element
#: accesses otherwise) of PEEL_EVEN_MIN elements or more, but f32 rms_norm's
#: (PEEL_EVEN_SKIPS_F32_RMS_NORM). H200 (session 53, `variant.py
#: PEEL_EVEN=False,True -- --ops softmax,layer_norm,rms_norm --dtypes f32
#: --rows 1026,2050,4098,8194,16386,20002,30522 --sizes 64`, and `--dtypes
#: f16,bf16 --rows 1030,2050,4100,8194,12290`;
#: `sweeps/variant-PEEL_EVEN-…-session53`), block-form rows: 16-bit
#: layer_norm of 8194 67.6 -> 40.9 µs (+65%; 48% -> 80% of the 512 MiB
#: copy), of 12290 +35% / +55% (f16 / bf16), rms_norm of 8194-12290 +5% to
#: +8%, softmax +2% to +5%; f32 layer_norm of 4098-30522 +10% to +15%
#: (30522: 62.3 -> 54.0), softmax of 16386-30522 +2.5% to +5.4%; but rows of
#: 1026-4100 -11% to +2% (16-bit rms_norm of 1030 -11%, layer_norm -8%) and
#: f32 rms_norm of 16386-20002 -4% to -5%. Rows a prologue computes (the
#: fused residual norms', `rlx.fusion`s') were not measured and keep their
#: accesses.
PEEL_EVEN = True
PEEL_EVEN_MIN = 8193
PEEL_EVEN_SKIPS_F32_RMS_NORM = True
#: Off: the cluster form's f16/bf16 rows of lengths 8 does not divide move
#: fewer elements per access (see `windowed`).
WINDOW_ROWS = True
#: ... and rows a prologue computes (the fused residual norms' x + residual,
#: an `rlx.fusion`'s elementwise ops: not measured), where every tensor the prologue reads
#: or writes is laid out as the row and of its type (`window_prologue`):
#: each input read over the window, 16 bytes an access, and each output
#: written so inside the row, its window's edges element by element. Off,
#: such rows moved one element per access in the cluster form (H200,
#: session 49: bf16 residual layer_norm of 24577 at 64 MiB 393 µs, 0.46x
#: torch.compile). H200, session 49 (`variant.py WINDOW_PROLOGUE=False,True
#: -- --ops residual_layer_norm,residual_rms_norm --rows
#: 16385,20001,24577,30522,50257 --sizes 64,512 --compile-sizes none`), µs
#: at 64 / 512 MiB: bf16 residual layer_norm of 24577 391.4 -> 88.4 / 3089
#: -> 631, of 50257 417.8 -> 90.9; f16 of 16385 198.2 -> 87.9; residual
#: rms_norm 16-bit +84% to +217%, of 30522 (even: two elements an access
#: before) +1% to +17%; f32 +4% to +18% (of 30522, not windowed: -0.3% to
#: +0.4%); 60 cases, none slower.
WINDOW_PROLOGUE = True
#: ... of which each thread holds this many bytes. H100, rows of 30522,
#: 32001 and 50257 at 64 and 512 MiB: 64 bytes (45-61 registers) beat 128
#: (100-128 registers; softmax of 50257 42-46% of copy bandwidth against
#: 61-67%) and 32 (48-62%).
WINDOW_ROW_BYTES = 64
#: ... and where the row is held in its 16-bit type (the norms), two
#: elements per register (PACKED_ROWS). H100, packed rows, against 64 bytes
#: (µs at 64 / 512 MiB): layer_norm f16 of 50257 72.5 -> 69.6 / 518 -> 461,
#: bf16 73.2 -> 70.4 / 525 -> 469, bf16 of 30522 71.3 -> 69.5 / 512 -> 457;
#: rms_norm f16 of 50257 56.6 -> 54.5 / 421 -> 384, of 30522 53.4 -> 52.5 /
#: 394 -> 372 (86% -> 97% of copy bandwidth); one loss, layer_norm f16 of
#: 30522 at 64 MiB, 64.5 -> 68.8 (449 vs 448 at 512 MiB).
WINDOW_STORED_ROW_BYTES = 128
#: Off: the windowed form's per-column params (gamma, beta) are read an
#: element at a time; on: inside the row, each access's params are two
#: aligned 16-byte reads shifted to the row's alignment (`rlx_ld_window`),
#: the window's first and last accesses still an element at a time. H100,
#: (µs at 64 / 512 MiB): layer_norm f16 of 30522 79.9 -> 64.8 / 575 -> 452
#: (63% -> 80% of copy bandwidth at 512 MiB), of 32001 78.6 -> 70.0, bf16 of
#: 50257 91.9 -> 84.1 / 670 -> 615; rms_norm f16 of 30522 56.3 -> 53.8.
WINDOW_VECTOR_PARAMS = True
#: f32 rows of odd length windowed too (else one element per access), their
#: registers capped at WINDOW_F32_REGS (0: as the compiler likes) through
#: `__launch_bounds__`. H100 (µs at 64 / 512 MiB): rms_norm of 50257 81.2 ->
#: 55.5 / 571 -> 409 (56% -> 82% of copy bandwidth at 64 MiB), softmax of
#: 50257 62.6 -> 59.7 / 426 -> 439, of 30001 60.7 -> 58.3 / 413 -> 429,
#: layer_norm of 30001 64.1 -> 62.5 / 452 -> 435, of 50257 65.4 -> 65.9 /
#: 447 -> 460. Uncapped, layer_norm of 50257 took 54 registers at 416
#: threads (two blocks per SM) and fell to 81.6 / 588.
WINDOW_F32 = True
WINDOW_F32_REGS = 48
#: ... and even f32 rows whose cluster accesses do not cover the row
#: exactly (lanes × 2 does not divide the length: 30522, 32000). Measured
#: when such rows moved one element per access (before f32 rows took
#: guarded vectors, GUARDED_BELOW_BYTES = 8), off: H100 (µs at 64 / 512
#: MiB), layer_norm of 30522 63.9 -> 62.7 / 456 -> 440 and of 32000 61.1 ->
#: 58.8 / 428 -> 414 gained, softmax of 32000 lost at 512 MiB (396 -> 425,
#: 30522 410 -> 427), rms_norm 1-3% slower; not measured against guarded
#: vectors (which took softmax of 32000 to 362 µs at 512 MiB).
WINDOW_F32_EVEN = False
#: The windowed 16-bit rows held in registers (the norms; softmax's too
#: with SOFTMAX_STORED_ROWS): registers per
#: thread at most (0: as the compiler likes), through `__launch_bounds__`.
#: H100, rows of 30522 and 32001 (2 blocks of 256 threads): layer_norm 71-72
#: -> 64 registers (4 bytes spilled), 3 -> 4 blocks per SM, f16 of 30522
#: 68.7 -> 64.4 / 449 -> 415 µs at 64 / 512 MiB (81% -> 88% of copy
#: bandwidth), bf16 of 32001 70.8 -> 64.5 / 452 -> 417; rms_norm (64
#: registers already) the same. Blocks of 224 threads (rows of 50257) keep
#: 4 blocks per SM at 72 registers; 56 would spill 330 bytes.
WINDOW_STORED_REGS = 64
#: f16/bf16 rows of even lengths 8 does not divide windowed also where the
#: row is held as f32 (softmax; else 2 or 4 elements per access). Off:
#: H100, softmax f16 of 30522 64.0 -> 64.8 / 422 -> 473 µs, of 32002 64.9 ->
#: 62.5 / 429 -> 450; bf16 the same.
WINDOW_EVEN_16 = False
#: The windowed row's code for the window's edges (element by element) only
#: in the accesses c that can hold one (`CachedRow._edge_chunk`: the first,
#: and those that hold the window's last access for some start offset h);
#: the others are wholly inside the row or wholly past it. Off, every access
#: had both codes: layer_norm f16 of 50257 took 3856 instructions (NVRTC 13,
#: sm_90) where 2464 now, the aligned row of 32768 968, and 4 bytes spilled
#: at 30522. H200, session 24 (`variant.py WINDOW_EDGE_CHUNKS=False,True --
#: --ops layer_norm,rms_norm,softmax --rows 20001,30522,50257 --dtypes
#: f16,bf16,f32 --sizes 64,512`): layer_norm 1-5.5% faster (bf16 of 30522
#: 58.0 -> 54.9 / 374 -> 359 µs), rms_norm within ±1% but f16/bf16 of 50257
#: at 512 MiB 2-3% slower (309 -> 318), softmax within ±0.6% (f16/bf16 of
#: 20001 1.4-2.3% faster).
WINDOW_EDGE_CHUNKS = True
#: ... and no test at all in the accesses every thread holds wholly inside the
#: row for every start offset (`CachedRow._whole_chunks`: c = 1 .. K, and
#: 0 .. K for the load's test against the window), where each took a test
#: and a branch per pass: nvdisasm of layer_norm f16 of 50257 showed its
#: hot path at twice the aligned row's instructions, 24 branch
#: reconvergences and 306 more moves among them; now 2464 -> 2304
#: instructions, 24 -> 6 reconvergences (BSSY). H200, session 25
#: (`variant.py WINDOW_WHOLE_CHUNKS=False,True -- --ops
#: layer_norm,rms_norm,softmax --rows 20001,30522,50257 --dtypes f16,bf16,f32
#: --sizes 64,512`): layer_norm f16/bf16 2.4-6.4% faster (bf16 of 30522
#: 359 -> 338 µs at 512 MiB), rms_norm up to 8% (f16 of 50257 318 -> 295),
#: softmax -0.3..+2.3%; f32 layer_norm 0.1-1.2% slower (of 50257 it spills
#: 16 bytes at its 48-register cap).
WINDOW_WHOLE_CHUNKS = True

#: Forms whose statistics take one reduction over the row's threads where
#: the op has such a form (`RowSpec.merged`; softmax, log_softmax) and the
#: row moves several elements per access: each thread takes the max of its
#: own elements and the sum of their exponentials from that max, and the
#: threads' (max, sum) pairs are merged in one reduction (`RlxMSMerge`),
#: each thread's exponentials then scaled by exp(its max - the row's). One
#: block and cluster barrier round fewer per row, one more expf per thread.
#: H100, softmax, the same run against two reductions (µs at 64 / 512 MiB):
#: cluster rows of 32768 f16 58.9 -> 56.5 / 394 -> 384 (78% -> 81% of copy
#: bandwidth at 64 MiB), bf16 the same within 2%, f32 53.8 -> 52.6; f16 of
#: 50257 71.7 -> 67.2 / 529 -> 488 (0.95x -> 1.02x eager), bf16 535 -> 491;
#: f16 of 30522 68.8 -> 63.7. f32 rows of odd length (one element per
#: access) lost (50257: 426 -> 451 µs at 512 MiB, 8 bytes spilled), so they
#: keep two reductions; so do the warp form (rows of 64-128: 47.4 -> 50.4 µs
#: in f16) and the block form (f16 of 4097: 61.3 -> 67.8; f32 of 4097 gained,
#: 53.5 -> 48.8). `variant.py` MERGED_STATS_<FORM>=True/False compares them.
MERGED_STATS_WARP = False
#: Measured and removed (H200, session 42; `variant.py MERGED_STATS_WARP_ODD=
#: False,True -- --ops layer_norm --rows 77,101,129,197,257,577 --dtypes
#: f32,f16,bf16 --sizes 64,512`): layer_norm over the warp form's rows of
#: one element an access (odd lengths) by one RlxWelfordMerge reduction of
#: each thread's count, mean and squared deviations: 35 of 36 cases slower,
#: f32 -1% to -23%, f16/bf16 -0.1% to -41% (f16 of 129 at 64 MiB 45.3 ->
#: 73.4 µs); the per-thread mean's second pass over the row costs more
#: than the reduction it saves.
MERGED_STATS_BLOCK = False
MERGED_STATS_CLUSTER = True
MERGED_STATS_SMEM = False
#: layer_norm's merged statistics (in the forms above that take them): each
#: thread's count, mean and sum of squared deviations over its own
#: elements, merged over the row's threads in one reduction
#: (`RlxWelfordMerge`), the output (x - mean) * inv * gamma + beta; no
#: element updated, so 16-bit rows kept in registers take them too. Off:
#: H200 (session 30, `variant.py MERGED_NORM_STATS=False,True -- --ops
#: layer_norm --rows 4096,8192,16384,30522,32768,50257,65536 --sizes
#: 64,512`; `sweeps/variant-merged-norm-stats-…`), correct (the GPU
#: suite's norm cases passed with it on) but slower in 30 of 42 cases: f32
#: -1% to -10%, f16 cluster rows of 16384-65536 -29% to -32% (bf16 -2% to
#: -7%), rows of 4096-8192 within 1.5%: the per-thread mean's second pass
#: costs more than the cluster barrier round it saves. Measured and removed
#: (session 33; RESULTS.md): in the cluster and grid forms, each block's
#: statistics over its own elements (from its mean, or from each thread's
#: merged by shuffles with equal counts), merged across the blocks in one
#: exchange: +0.4% to +5.9% at 64 MiB (f32 of 32768 43.8 -> 42.2 µs), -2% to
#: -6% at 512 MiB, f32 of 262144 -26%: a round over the block costs about
#: what the cluster's does.
MERGED_NORM_STATS = False


def merged_stats(form: str) -> bool:
    """Whether row kernels of `form` take the merged statistics (see MERGED_STATS_CLUSTER)."""
    return {"warp": MERGED_STATS_WARP, "block": MERGED_STATS_BLOCK, "cluster": MERGED_STATS_CLUSTER,
            "grid": MERGED_STATS_CLUSTER, "smem": MERGED_STATS_SMEM}.get(form, False)


def windowed(cols: int, t: Attribute, stored: bool) -> bool:
    """Whether rows of `cols` elements of `t` take the windowed form in
    the cluster and grid forms (`stored`: the row is kept in registers as 16 bits;
    `row_kernel` also asks that a prologue, if any, reads and writes
    tensors laid out as the row: `window_prologue`): odd lengths (one element per
    access otherwise), and for the 16-bit rows any length 8 does not
    divide.

    Each row's 16-byte-aligned window (from the boundary at or before its
    start to the one at or after its end) is read in 16-byte accesses, `h`
    elements (per row) before the row's start; elements outside the row are
    left out of the statistics and of the write, whose first and last
    accesses go an element at a time. Reads stay inside the 16-byte segments
    the row touches (on the row's own pages). Every thread holds the same
    elements of the window, so the per-row cost is one offset, not the
    peeled form's extra register and bounds (which in the cluster form took
    112-142 registers and lost: softmax of 50257, 53% -> 35% of copy
    bandwidth).

    H100, 64/512 MiB, against the
    narrower accesses: softmax of 50257 85.8 -> 73.2 / 588 -> 535 µs, of
    32001 75.8 -> 68.5 / 505 -> 495; layer_norm of 32001 125 -> 78 / 932 ->
    553 (f16); rms_norm of 30522 73 -> 56 / 544 -> 407 (f16); layer_norm
    bf16 of 30522 126 -> 83. The f32 rows of softmax of 30522 (2 elements
    per access otherwise) lost: 452 -> 513 µs at 512 MiB; so did windowing
    the 16-bit norms' rows 8 divides but the cluster's accesses do not
    cover (32000, 20000, 10000: layer_norm f16 of 32000 55.7 -> 77.2 µs at
    64 MiB)."""
    if dtype(t).bytes == 4:
        if WINDOW_F32_EVEN and cols % 2 == 0 and cols >= 64 and (c := cluster_shape(cols, t, stored)) is not None:
            return WINDOW_F32 and cols % (c[0] * c[1] * 2) != 0  # the unwindowed row's accesses: guarded
        return WINDOW_F32 and cols % 2 == 1 and cols >= 64
    return dtype(t).bytes == 2 and cols % 8 != 0 and cols >= 64 and (stored or cols % 2 == 1 or WINDOW_EVEN_16)

#: Off: rows in registers move several elements per access only where the
#: threads' accesses cover the row exactly (lanes × width divides it), as
#: the shared-memory rows do (for comparisons; see `CachedRow.width`).
GUARDED_VECTORS = True
#: ... for elements narrower than this many bytes (4: f16/bf16; 8 takes f32 in too).
#: 8 since the per-access guards (GUARDED_ACCESS_GUARDS), H100, f32, the
#: same run (µs at 64 / 512 MiB): softmax of 32000 59.0 -> 49.9 / 395 -> 362
#: (76% -> 90% of copy bandwidth), of 30522 59.7 -> 52.9 / 409 -> 379, of
#: 20000 57.0 -> 50.3; layer_norm of 32000 61.1 -> 59.7 / 426 -> 393, of
#: 30522 63.5 -> 67.4 / 457 -> 434 (the one loss); rms_norm of 32000 52.4
#: -> 49.4; rows of 1000-5000 within 2%. (Before those guards f32 softmax
#: lost with it: 75% -> 62-69% of copy.)
GUARDED_BELOW_BYTES = 8

#: Off: the peeled forms' per-column params (gamma, beta) are read an
#: element at a time; on: each vector access's params are two aligned
#: 16-byte reads shifted to the row's first 16-byte boundary
#: (`rlx_ld_window`), as WINDOW_VECTOR_PARAMS does for the windowed form.
#: On measured worse: H100, layer_norm bf16 of 4097 76.8 -> 85.1 / 562 ->
#: 635 µs at 64 / 512 MiB, f16 67.1 -> 67.9, rows of 100 and 1001 the same.
PEELED_VECTOR_PARAMS = False
#: The windowed and peeled forms' per-column params, where they are params
#: (or constants), read from shifted copies made once when the executable
#: loads: copy s holds the param s elements later (`param_copy_bytes` each,
#: 16-byte aligned), so a row's 16 bytes of gamma at any start offset are one
#: aligned read (`rlx_ld_copy`) where they were two and a shift
#: (`rlx_ld_window`), or 8 reads of one element (the peeled form, which then
#: reads them as vectors). rlx-emit-cuda places the copies in the parameter
#: buffer (`Buf.copies`, the function's `rlx.param_copies`); the runtime
#: fills them from the param. 8 copies of a 16-bit param (4 of an f32), e.g.
#: 800 KB for a vocabulary-long gamma. Computed gamma/beta keep the
#: realignment. nvdisasm and ncu (session 25) showed the windowed
#: layer_norm at 75% more instructions than the aligned one and waiting on
#: its params' loads; an upper bound (the params read aligned, unshifted:
#: wrong values, right timing) and then this, H200, session 25 (old tree
#: against new, `kernels.py --ops layer_norm,rms_norm --rows
#: 1001,4097,7001,20001,30522,50257 --dtypes f32,f16,bf16 --sizes 64,512`;
#: 0 mismatches against PyTorch, random gamma/beta), µs at 64 / 512 MiB:
#: layer_norm f16 of 4097 (peeled block) 51.4 -> 39.6 / 374 -> 286 (+31%),
#: of 7001 55.7 -> 41.4 / 399 -> 295 (+35%), of 50257 (windowed cluster)
#: 60.4 -> 48.5 / 407 -> 331 (+23%), bf16 the same; f32 of 20001/50257
#: +7-10%; 16-bit of 20001/30522 +4-10% at 64 MiB but -4% at 512 (30522);
#: rms_norm (one param, already at 87-100% of copy) -6% to +5%: hence
#: PARAM_COPIES_MIN_COLUMNS. GPU-tested in session 26 (the alignment test's
#: "param-copies" setting, every start offset; the whole GPU suite with it on).
PARAM_COPIES = True
#: ... for rows with at least this many per-column params (layer_norm's
#: gamma and beta; not rms_norm's gamma alone).
PARAM_COPIES_MIN_COLUMNS = 2
#: Off: the peeled forms' per-element loops (statistics, the output) test
#: each element's column against the row (a 64-bit column computed per
#: element); on: one test per vector access (inside the whole vectors, or
#: not), then the head/tail element's own.
PEELED_ACCESS_GUARDS = True
#: Off: the guarded rows' per-element loops (rows that the width divides
#: but lanes × width does not, e.g. 32000) test each element's
#: 64-bit column against the row's length; on: one test per access (an
#: access lies wholly inside the row or wholly past it). H100, the same run
#: (µs at 64 / 512 MiB): softmax f16 of 5000 57.8 -> 48.3 / 416 -> 359 (78%
#: -> 94% of copy bandwidth), of 20000 64.5 -> 52.5 / 444 -> 375, of 32000
#: 60.1 -> 51.6 / 405 -> 369, bf16 the same; layer_norm bf16 of 5000 59.5 ->
#: 49.4 / 434 -> 357; rms_norm within 2%; one loss, layer_norm f16 of 5000
#: at 64 MiB 53.4 -> 58.7 (386 -> 359 at 512 MiB).
GUARDED_ACCESS_GUARDS = True

#: Off: the 16-bit rows in registers (CLUSTER_STORED) held one element per
#: 16-bit register rather than two per 32-bit word (`CachedRow.packed`).
#: H100, windowed rows of 64 bytes per thread: bf16 layer_norm of 50257 67
#: -> 56 registers, 84.2 -> 73.2 / 616 -> 525 µs at 64 / 512 MiB; rms_norm
#: bf16 of 50257 60.7 -> 57.0 / 450 -> 423; f16 and the rows of 16384 and
#: 32768 the same within 1%. It also let 128 bytes per thread fit
#: (WINDOW_STORED_ROW_BYTES: 113 -> 72 registers).
PACKED_ROWS = True
#: Packed rows computed by a prologue (an `rlx.fusion`'s elementwise ops, the
#: fused residual norms' x + residual) build each 32-bit word of the row from
#: its two elements at once (`rlx_st2_*`), not element by element through
#: `rlx_with_half` (a mask and an or per element, which took the f16
#: residual layer_norm of 32768 to 340 bytes of spills at 64 registers).
PAIRED_PROLOGUE = True

#: Off: f16/bf16 elements of vector accesses converted one at a time (see
#: `CachedRow._paired`).
PAIRED_CONVERSIONS = True
#: Measured, not taken (session 54, H200): the windowed form's 16-bit
#: output vectors written two elements a conversion, the params and packed
#: rows unpacked in pairs: -1.3% to +2.0% over 16-bit layer_norm, rms_norm
#: and softmax of 2049-32768 (`sweeps/variant-PAIRED_PARAMS-…-session54.md`),
#: noise: the code was removed.

#: f16/bf16 softmax rows of the cluster form held in their 16-bit type
#: (packed two per register, as the norms' rows: CLUSTER_STORED), the
#: exponential computed again for the output; off: held as f32. Off: H100
#: (µs at 64 / 512 MiB, f16; bf16 the same), rows of 32768 80 -> 64
#: registers (3 -> 4 blocks per SM) but 56.9 -> 57.4 / 386 -> 391; windowed
#: rows (8 elements per access where the f32 row moves 2) slower: 30522
#: 57.2 -> 77.2 / 394 -> 563, 50257 67.2 -> 80.3 / 487 -> 576; 32000 4% slower.
SOFTMAX_STORED_ROWS = False

def _row_bytes(stored: bool, window: bool, prologue: bool = False) -> int:
    """Bytes of the row each thread holds in the cluster and grid forms."""
    if stored and prologue:  # a computed row cannot be read again (see CLUSTER_PROLOGUE_ROW_BYTES)
        return min(CLUSTER_PROLOGUE_ROW_BYTES, WINDOW_STORED_ROW_BYTES) if window else CLUSTER_PROLOGUE_ROW_BYTES
    if window:
        return WINDOW_STORED_ROW_BYTES if stored else WINDOW_ROW_BYTES
    return CLUSTER_STORED_ROW_BYTES if stored else CLUSTER_ROW_BYTES


def cluster_shape(cols: int, t: Attribute, stored: bool = False, window: bool = False,
                  prologue: bool = False) -> tuple[int, int] | None:
    """(blocks per cluster, threads per block) of the cluster form for rows
    of `cols` elements of `t`, or None where a cluster cannot hold them.
    f16/bf16 rows past 262144 elements (blocks over 512 threads, 64 f32
    values each in registers) spill a little (NVRTC -v: 16-256 bytes at
    400000-524288); counting them as f32 would not fit a cluster, and a
    few spills were judged cheaper than the streamed form's second read
    (not measured)."""
    per = _row_bytes(stored, window, prologue)
    lanes = -(-cols * dtype(t).bytes // per)
    c = 2  # at least two: a row past BLOCK_ROW_MAX that one block would hold is split anyway
    while c < CLUSTER_MAX and lanes > c * CLUSTER_THREADS:
        c *= 2
    threads = -(-lanes // (c * 32)) * 32
    elems = per // dtype(t).bytes
    row_regs = elems // 2 if stored and dtype(t).bytes == 2 else elems  # 16-bit rows kept two to a register
    fits = threads * (row_regs + CLUSTER_REG_OVERHEAD) <= 65536
    return (c, threads) if threads <= CLUSTER_MAX_THREADS and fits else None


def grid_shape(cols: int, t: Attribute, sm_count: int, stored: bool = False,
               window: bool = False, prologue: bool = False) -> tuple[int, int] | None:
    """(blocks per row, threads per block) of the grid form for rows of
    `cols` elements of `t` on `sm_count` multiprocessors, or None where
    its bound on the blocks (GRID_SHARE) cannot hold them."""
    lanes = -(-cols * dtype(t).bytes // _row_bytes(stored, window, prologue))
    most = max(2, sm_count // GRID_SHARE)
    for threads in (GRID_THREADS, 1024):
        c = max(2, -(-lanes // threads))
        if c <= most:
            return c, -(-lanes // (c * 32)) * 32
    return None


def row_form(rows: Rows, t: Attribute, smem_elem_bytes: int = 4, stored: bool = False, window: bool = False,
             sm_count: int = 0, online: bool = False, prologue: bool = False, block_max: int = 0) -> str:
    """The form (see the module docstring) of a row kernel over `rows`, whose
    shared-memory row would take `smem_elem_bytes` per element, on
    `sm_count` multiprocessors (0: unknown, no grid form); `online`: the
    op's statistics take one read (softmax's online max and sum) and it has
    no prologue (the stream form); `prologue`: the row is computed by one
    (CLUSTER_PROLOGUE_ROW_BYTES); `block_max`: the block form's longest
    row, past BLOCK_ROW_MAX (`block_row_max`)."""
    if rows.col_off != "k":  # not contiguous: one element at a time
        size = dtype(t).bytes
        whole = _inner_slices(rows, _held_elems(size), size)
        return ("columns" if column_slices(rows, sm_count) or column_grid_shape(rows, size, sm_count) or whole
                or _slab_shape(rows, sm_count) or column_grid_vectors(rows, size, sm_count)
                or column_packed_shape(rows, size, sm_count) else "looping")
    if rows.cols <= WARP_ROW_MAX:
        return "warp"
    if rows.cols <= max(BLOCK_ROW_MAX, block_max):
        return "block"
    aligned = rows.cols % (16 // dtype(t).bytes) == 0
    if (STREAM_ROWS and online and USE_CLUSTERS and has_clusters()
            and (STREAM_ROW_MIN if aligned else STREAM_WINDOW_ROW_MIN) <= rows.cols and rows.cols * dtype(t).bytes <= STREAM_ROW_MAX_BYTES
            and dtype_name(t) in STREAM_DTYPES and rows.rows < 2**31
            and (aligned or STREAM_WINDOW and dtype(t).bytes == 2)):
        return "stream"
    grid = GRID_ROWS and sm_count > 0 and (g := grid_shape(rows.cols, t, sm_count, stored, window, prologue)) is not None \
        and rows.rows * g[0] < 2**31  # (no rows: row_kernel's empty kernel before any form)
    if grid and GRID_FIRST:
        return "grid"
    if USE_CLUSTERS and has_clusters() and (shape_ := cluster_shape(rows.cols, t, stored, window, prologue)) is not None \
            and rows.rows * shape_[0] < 2**31:  # a cluster per row: the grid's x limit
        return "cluster"
    if rows.cols * smem_elem_bytes <= SMEM_ROW_BYTES:
        return "smem"
    if grid:
        return "grid"
    if dtype_name(t) in ("f32", "f16", "bf16") and rows.cols % (16 // dtype(t).bytes) == 0:  # (contiguous: above)
        return "float4" if dtype(t).bytes == 4 else "uint4"
    return "looping"


#: An output expression: (element, per-column param name -> its value at the
#: element's column) -> the output value, in compute type.
Out = Callable[[str, Callable[[str], str]], str]

#: Unsigned types of 1, 2, 4, 8 and 16 bytes, for vector accesses.
_RAW = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}


@dataclass(frozen=True)
class PrologueInput:
    """A tensor an elementwise prologue reads (see `Prologue`), by how its
    elements line up with the row's:

    * `row`: its trailing axes are the row's, so row r's elements are
      contiguous from `base` (vector accesses as the row's own);
    * `scalar`: its trailing axes are 1, one value per row at `base`;
    * `elem`: anything else, element k of row r at `base` (an expression in
      r and k), one element per access."""

    name: str
    value: SSAValue
    kind: str
    base: str

    @staticmethod
    def of(name: str, value: SSAValue, full: Sequence[int], ndims: int) -> PrologueInput:
        """`value` broadcast to the row op's input shape `full`, whose last
        `ndims` axes form the row."""
        s = [1] * (len(full) - len(shape(value))) + list(shape(value))
        lead_out, lead_in = list(full[: len(full) - ndims]), s[: len(s) - ndims]
        cols = numel(full[len(full) - ndims:])
        trail = s[len(s) - ndims:]
        row_index = index_expr("r", lead_out, lead_in)
        if trail == list(full[len(full) - ndims:]):
            return PrologueInput(name, value, "row", "base" if lead_in == lead_out else f"({row_index}) * {cols}LL")
        if numel(trail) == 1:
            return PrologueInput(name, value, "scalar", row_index)
        return PrologueInput(name, value, "elem", index_expr(f"(r * {cols}LL + k)", list(full), s))


@dataclass(frozen=True)
class Prologue:
    """An elementwise computation of the row's elements from `inputs`, done
    as the row is read: `lines(args)` (statements, given each input's
    element as a compute-type expression) defines what `value` (the row
    element, rounded to the row's type) and each of `outputs` (param name,
    tensor, expression: stored per element, e.g. a residual sum) name."""

    inputs: tuple[PrologueInput, ...]
    lines: Callable[[list[str]], list[str]]
    value: str
    outputs: tuple[tuple[str, SSAValue, str], ...] = ()

    @property
    def vector(self) -> bool:
        """Whether elements can move several per access (no `elem` input)."""
        return all(i.kind != "elem" for i in self.inputs)

    @property
    def elem_bytes(self) -> int:
        """The widest element that moves per access."""
        sizes = [dtype(eltype(i.value)).bytes for i in self.inputs if i.kind == "row"]
        return max([*sizes, *(dtype(eltype(v)).bytes for _, v, _ in self.outputs)], default=1)

    def row_setup(self) -> list[str]:
        """Per-row statements: row bases and per-row scalars."""
        out = []
        for j, i in enumerate(self.inputs):
            if i.kind == "row" and i.base != "base":
                out.append(f"const long long b{j} = {i.base};")
            elif i.kind == "scalar":
                out.append(f"const {compute_type(eltype(i.value))} s{j} = {load(f'{i.name}[{i.base}]', eltype(i.value))};")
        return out

    def arg(self, j: int) -> str:
        """Input j's element at column `k`, read one at a time."""
        i = self.inputs[j]
        if i.kind == "scalar":
            return f"s{j}"
        at = f"{'base' if i.base == 'base' else f'b{j}'} + k" if i.kind == "row" else i.base
        return load(f"{i.name}[{at}]", eltype(i.value))

    def element(self, target: str, args: list[str], outputs: bool = True) -> str:
        """The statements computing the element at column `k` into `target`
        (and, with `outputs`, storing the extra outputs there)."""
        stores = [f"{n}[base + k] = {store(e, eltype(v))};" for n, v, e in self.outputs] if outputs else []
        return " ".join([*self.lines(args), f"{target} = {self.value};", *stores])


@dataclass(frozen=True)
class CachedRow:
    """Code for a row spread over `lanes` threads (`lane` is the thread's
    index among them): element j of a thread is at column `col(j)`. Accesses
    move `width` elements at once (up to 16 bytes; see `width` for which
    lengths allow it, `guarded` for rows the threads' accesses overrun);
    elements are held in `v[j]` (registers) or, with `smem`, in
    `srow[column]`."""

    cols: int
    t: Attribute
    lanes: int
    lane: str
    smem: bool = False
    elem_bytes: int = 0  # the widest element moved per access (0: t's)
    vector: bool = True  # whether several elements may move per access
    stored: bool = False  # the row (shared or in registers) holds t's storage type, not f32
    peel: bool = False  # f16/bf16 rows of an odd length: see `peels`
    window: bool = False  # rows 16 bytes do not divide, in the cluster and grid forms: see `windowed`
    loaded: str = ""  # the registers holding this row's accesses, loaded with the group's batch (WARP_BATCH), if any
    copies: tuple[str, ...] = ()  # per-column params read from their shifted copies, `<name>_c` (PARAM_COPIES)
    held: tuple[str, ...] = ()  # per-column params held in registers, `ph_<name>[j]` (WARP_HELD_PARAMS: `hold_params`)

    @staticmethod
    def for_spec(s: RowSpec, lanes: int, lane: str, smem: bool = False, stored: bool = False,
                 peel: bool = False, window: bool = False) -> CachedRow:
        """The row of `s` over `lanes` threads; with `peel`, the peeled form
        where it applies (`peels`); with `window`, the windowed form (as
        `windowed` decides)."""
        vector = s.prologue is None or s.prologue.vector
        row = CachedRow(s.rows.cols, s.t, lanes, lane, smem, s.elem_bytes, vector, stored)
        if window:
            return replace(row, window=True)
        same_base = s.prologue is None or all(i.base == "base" for i in s.prologue.inputs if i.kind == "row")
        even = (PEEL_EVEN and s.rows.cols >= PEEL_EVEN_MIN and s.prologue is None  # computed rows: not measured
                and not (s.rms_norm and dtype(s.t).bytes == 4 and PEEL_EVEN_SKIPS_F32_RMS_NORM))
        return replace(row, peel=True) if peel and row.peels(even) and same_base else row

    def peels(self, even: bool = False) -> bool:
        """Whether this row (f16/bf16 in registers, or f32 with PEEL_F32; no
        access of 2 elements or more dividing its length, or with `even`
        (PEEL_EVEN, as `for_spec` decides) no 16-byte access) takes the peeled form: each row's
        elements before its first 16-byte boundary (`h`, per row) and after
        its last (`tl`) are held one each by the first h + tl threads, in
        one more register; the `nb` whole vectors between move 16 bytes per
        access. The per-column params are then read an element at a time
        (their 16-byte boundaries are not the row's). Taken in the block
        form only: H100, 64 MiB, f16/bf16 rows of 4097 went from 56% to 70%
        of copy bandwidth (softmax), where the warp form's rows of 1001
        measured the same or worse (layer_norm bf16 83% -> 70%) and the
        cluster form's rows of 50257 far worse (softmax 53% -> 35%: 65
        registers of row per thread and the per-row column arithmetic)."""
        size = self.elem_bytes or dtype(self.t).bytes
        return (GUARDED_VECTORS and PEEL_ROWS and not self.smem and self.vector
                and size == dtype(self.t).bytes and (size == 2 or PEEL_F32 and size == 4)
                and (self.cols % 2 != 0 or even and self.cols % (16 // size) != 0) and self.cols >= 16
                and self.lanes >= 16)  # head + tail: 15 elements at most, one per thread

    @property
    def width(self) -> int:
        """Elements per access: the widest access of up to 16 bytes whose
        element count divides the row's length times the lanes (the
        threads' accesses cover the row exactly). Rows in registers of
        elements under GUARDED_BELOW_BYTES need only the row's length
        divided (every row then starts aligned): a thread's last accesses
        may fall past the row's end (`guarded`: skipped whole). H100, rows
        of 1000-50000 at 64 MiB: f16/bf16 went from 44-89% to 60-91% of copy
        bandwidth (layer_norm f16 of 32000: 0.77x -> 1.06x the faster peer);
        f32 rows joined once the guards were one per access (see
        GUARDED_BELOW_BYTES). The shared row, kept thread-major, has room
        for whole rounds of lanes × width only."""
        if not self.vector:
            return 1
        size = self.elem_bytes or dtype(self.t).bytes
        if self.peel or self.window:
            return 16 // size
        for w in (16 // size, 8 // size, 4 // size, 2 // size):
            if w >= 2 and self.cols % (w if GUARDED_VECTORS and size < GUARDED_BELOW_BYTES and not self.smem
                                       else self.lanes * w) == 0:
                return w
        return 1

    @property
    def items(self) -> int:
        """Elements of a thread moved as vectors (all of them, but for the
        peeled form's one more: `slots`)."""
        if self.peel:
            return -(-(self.cols // self.width) // self.lanes) * self.width
        if self.window:  # the window's accesses: h + cols elements, h < width
            accesses = -(-(self.cols + self.width - 1) // self.width)
            return -(-accesses // self.lanes) * self.width
        return -(-self.cols // (self.lanes * self.width)) * self.width

    @property
    def slots(self) -> int:
        """Registers of the row per thread: `items`, and the peeled form's head/tail element."""
        return self.items + (1 if self.peel else 0)

    @property
    def guarded(self) -> bool:
        return self.peel or self.window or self.cols % (self.lanes * self.width) != 0

    def _inside(self) -> str:
        """Whether this thread's access c lies in the row (all of it does, or
        none; the windowed form: in the row's window)."""
        if self.window and (k := self._whole_chunks()) >= 0:  # accesses 0 .. K of every thread are
            return f"c <= {k} || c * {self.lanes} + {self.lane} < nb"
        if self.peel or self.window:
            return f"c * {self.lanes} + {self.lane} < nb"
        return f"(long long)(c * {self.lanes} + {self.lane}) * {self.width} < {self.cols}LL"

    def peel_setup(self) -> list[str]:
        """The peeled form's per-row bounds: head, whole vectors, tail; the
        windowed form's: the window's start before the row's, its accesses."""
        w = self.width
        if self.window:
            return window_setup(self.cols, w)
        if not self.peel:
            return []
        return [f"const int h = (int)(({w} - (base & {w - 1})) & {w - 1});  // elements before the row's first 16-byte boundary",
                f"const int nb = ({self.cols} - h) / {w}, tl = {self.cols} - h - nb * {w};  // whole vectors, elements after them"]

    def _peeled_col(self) -> str:
        """The peeled form: the column of element i of access c, an access
        among the row's whole vectors (inside `_guard`)."""
        return f"h + (long long)(c * {self.lanes} + {self.lane}) * {self.width} + i"

    def _extra(self) -> str:
        """The column of the peeled form's one scalar element (the row's
        length where this thread holds none)."""
        return f"({self.lane} < h ? (long long){self.lane} : {self.lane} < h + tl ? (long long)nb * {self.width} + {self.lane} : {self.cols}LL)"

    def col(self, j: str) -> str:
        w = self.width
        if w == 1:
            return f"({self.lane} + (long long)({j}) * {self.lanes})"
        if self.window:  # negative before the row's start
            return f"((long long)((({j}) / {w}) * {self.lanes} + {self.lane}) * {w} + (({j}) % {w}) - h)"
        if self.peel:  # past the whole vectors: the row's length (no column)
            vi = f"(({j}) / {w}) * {self.lanes} + {self.lane}"
            return (f"(({j}) == {self.items} ? {self._extra()} : {vi} < nb ? "
                    f"h + (long long)({vi}) * {w} + (({j}) % {w}) : {self.cols}LL)")
        return f"((long long)(({j}) / {w}) * {self.lanes * w} + {self.lane} * {w} + (({j}) % {w}))"

    @property
    def packed(self) -> bool:
        """Whether the 16-bit row in registers is held two elements per
        32-bit word (`v` of unsigned ints, as loaded), not one per 16-bit
        register (see PACKED_ROWS)."""
        return PACKED_ROWS and self.stored and not self.smem and self.width >= 2 and not self.peel

    def _decl(self, name: str = "v") -> str:
        """The declaration of a thread's row registers."""
        if self.packed:
            return f"unsigned int {name}[{self.slots // 2}] = {{}};"
        return f"{storage_type(self.t) if self.stored else 'float'} {name}[{self.slots}];"

    @property
    def _zero(self) -> str:
        """A register's value past the row's end."""
        return f"({storage_type(self.t)})0" if self.stored else "0.0f"

    def fence(self) -> list[str]:
        """Before a pass over a row held in registers in its 16-bit type:
        the registers marked as changed, so that the pass converts them
        again rather than the compiler keeping an earlier pass's f32 values
        live (which would undo the halved registers)."""
        if not self.stored or self.smem:
            return []
        if self.packed:
            return ["#pragma unroll", f'for (int j = 0; j < {self.slots // 2}; ++j) asm volatile("" : "+r"(v[j]));']
        return ["#pragma unroll", f'for (int j = 0; j < {self.slots}; ++j) asm volatile("" : "+h"(v[j]));']

    def slot(self, j: str = "j") -> str:
        """Where element j lives: `v[j]`, or its place in the shared row."""
        # the shared row is kept thread-major (element j of lane l at j·lanes + l), not in
        # column order: consecutive lanes hit consecutive banks whatever the vector width
        # (column order put a lane's 4-8 elements side by side: 4-8-way bank conflicts)
        return f"srow[({j}) * {self.lanes} + {self.lane}]" if self.smem else f"v[{j}]"

    def elem(self, j: str = "j") -> str:
        """Element j's value (f32)."""
        if self.packed:
            return f"rlx_half_{dtype_name(self.t)}(v[({j}) >> 1], ({j}) & 1)"
        return load(self.slot(j), self.t) if self.stored else self.slot(j)

    def set(self, j: str, value: str) -> str:
        """The statement keeping `value` (already of t's precision) as element j."""
        if self.packed:
            return f"v[({j}) >> 1] = rlx_with_half(v[({j}) >> 1], ({j}) & 1, {store(value, self.t)});"
        return f"{self.slot(j)} = {store(value, self.t) if self.stored else value};"

    def note(self) -> str:
        per = f"{self.width} elements per access" if self.width > 1 else "one element per access"
        if self.peel:
            per += " between the row's 16-byte boundaries, the rest one each"
        if self.window:
            per += " over the row's 16-byte-aligned window"
        who = "a thread per row" if self.lanes == 1 else f"{self.lanes} threads per row"
        return f"{who}, {per}, {self.slots} per thread"

    def _chunks(self, lines: list[str]) -> list[str]:
        return ["#pragma unroll", f"for (int c = 0; c < {self.items // self.width}; ++c) {{",
                *("  " + x for x in lines), "}"]

    def raw_of(self, t: Attribute | None = None) -> str:
        """The unsigned type of one access's `width` elements of type `t` (the row's)."""
        return _RAW[self.width * dtype(t or self.t).bytes]

    @property
    def raw(self) -> str:
        """The unsigned type of one access's `width` elements."""
        return self.raw_of()

    def _union(self, name: str, t: Attribute | None = None) -> str:
        words = f" unsigned int w[{self.width // 2}];" if self._paired(t) or (self.packed and t is None) else ""
        return f"union {{ {self.raw_of(t)} raw; {dtype(t or self.t).c_storage} e[{self.width}];{words} }} {name};"

    def _paired(self, t: Attribute | None = None) -> bool:
        """Whether accesses of `t` (the row's type) convert their elements two
        at a time (`rlx_ld2_*` / `rlx_st2_*`, one 32-bit word holding two
        f16/bf16 elements): 16-bit floats moved several per access."""
        return PAIRED_CONVERSIONS and self.width >= 2 and dtype_name(t or self.t) in ("f16", "bf16")

    def _vec(self, buf: str, base: str = "base", t: Attribute | None = None) -> str:
        """Chunk c of this thread in `buf`'s row, read as one vector."""
        return f"reinterpret_cast<const {self.raw_of(t)}*>({buf} + {self._at(base)})[c * {self.lanes} + {self.lane}]"

    def _at(self, base: str) -> str:
        """Where this row's vectors start in a buffer laid out as the row (after the peeled head)."""
        if self.window and base != "0":
            return f"{base} - h"
        return f"{base} + h" if self.peel and base != "0" else base

    def compute(self, p: Prologue) -> list[str]:
        """The row computed by prologue `p` into `v` (declared here) or, with
        smem, the shared row; `p`'s outputs stored as they are computed."""
        decl = [] if self.smem else [self._decl(), *self.peel_setup()]
        w = self.width
        if w == 1:
            pad = "" if self.smem else f" else {self.slot('j')} = {self._zero};"
            args = [p.arg(j) for j in range(len(p.inputs))]
            element = (f"float e_; {p.element('e_', args)} {self.set('j', 'e_')}" if self.stored
                       else p.element(self.slot("j"), args))
            return [*decl, *p.row_setup(), "#pragma unroll",
                    f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
                    f"if (k < {self.cols}LL) {{ {element} }}{pad} }}"]
        reads, args = [], []
        for j, i in enumerate(p.inputs):
            if i.kind == "row":
                reads.append(f"{self._union(f'pk{j}', eltype(i.value))} "
                             f"pk{j}.raw = {self._vec(i.name, 'base' if i.base == 'base' else f'b{j}', eltype(i.value))};")
                args.append(load(f"pk{j}.e[i]", eltype(i.value)))
            else:
                args.append(f"s{j}")
        outs = [self._union(f"po{m}", eltype(v)) for m, (_, v, _) in enumerate(p.outputs)]
        stores = [f"po{m}.e[i] = {store(e, eltype(v))};" for m, (_, v, e) in enumerate(p.outputs)]
        writes = [f"reinterpret_cast<{self.raw_of(eltype(v))}*>({n} + {self._at('base')})[c * {self.lanes} + {self.lane}] = po{m}.raw;"
                  for m, (n, v, _) in enumerate(p.outputs)]
        if self.window and writes:  # inside the row whole; the window's edges element by element
            edges = [self._edge_write(n, f"po{m}") for m, (n, _, _) in enumerate(p.outputs)]
            writes = [self._first_col(), f"if ({self._whole()}) {{", *("  " + x for x in writes), f"}} else if ({self._edge_chunk()}) {{",
                      *("  " + x for x in edges), "}"]
        if self.packed and PAIRED_PROLOGUE:  # a pair of elements, then their word of v at once
            element = " ".join([*p.lines(args), f"e2_[u] = {p.value};", *stores])
            loop = [f"for (int i2 = 0; i2 < {w // 2}; ++i2) {{ float e2_[2];",
                    "  #pragma unroll",
                    f"  for (int u = 0; u < 2; ++u) {{ const int i = 2 * i2 + u; const int j = c * {w} + i; {element} }}",
                    f"  v[c * {w // 2} + i2] = rlx_st2_{dtype_name(self.t)}(e2_[0], e2_[1]);",
                    "}"]
        else:
            element = " ".join([*p.lines(args), self.set("j", p.value), *stores])
            loop = [f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; {element} }}"]
        lines = [*reads, *outs, "#pragma unroll", *loop, *writes]
        body = [*decl, *p.row_setup(), *self._chunks(self._guard(lines, None if self.smem else "v"))]
        if self.peel:  # the head/tail element, one at a time
            scalar = p.element(self.slot(str(self.items)), [p.arg(j) for j in range(len(p.inputs))])
            body.append(f"{{ const long long k = {self._extra()}; if (k < {self.cols}LL) {{ {scalar} }} "
                        f"else v[{self.items}] = {self._zero}; }}")
        return body

    def _guard(self, lines: list[str], zero: str | None = None) -> list[str]:
        """`lines` for access c, only where it lies in the row (`guarded`);
        past the row's end, the registers `zero` names (if any) set to 0."""
        if not self.guarded:
            return lines
        n = self.width // 2 if self.packed and zero == "v" else self.width
        pad = ["} else {", "  #pragma unroll", f"  for (int i = 0; i < {n}; ++i) {zero}[c * {n} + i] = {'0u' if n < self.width else self._zero};"] if zero else []
        return [f"if ({self._inside()}) {{", *("  " + x for x in lines), *pad, "}"]

    def load(self, buf: str, into: str = "v") -> list[str]:
        """Reads the row of `buf` into `into` (declared here) or, for `v`
        with smem, into the shared row."""
        shared = self.smem and into == "v"
        raw_in = self.stored and into == "v"  # the raw element, with no conversion

        def put(j: str, raw: str) -> str:
            return f"{self.slot(j) if shared else f'{into}[{j}]'} = {raw if raw_in else load(raw, self.t)};"
        decl = [] if shared else [self._decl(into), *(self.peel_setup() if into == "v" else [])]

        def put_one(k: str) -> str:
            return f"{buf}[base + {k}]" if raw_in else load(f"{buf}[base + {k}]", self.t)
        w = self.width
        if w == 1:
            if shared:  # the shared row has exactly cols elements
                return ["#pragma unroll",
                        f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
                        f"if (k < {self.cols}LL) {put('j', f'{buf}[base + k]')} }}"]
            one = (put_one("k") if not (self.loaded and into == "v")
                   else f"{self.loaded}[j]" if raw_in else load(f"{self.loaded}[j]", self.t))
            return [*decl, "#pragma unroll",
                    f"for (int j = 0; j < {self.items}; ++j) {{ const long long k = {self.col('j')}; "
                    f"{into}[j] = k < {self.cols}LL ? {one} : {self._zero}; }}"]
        extra = ([f"{{ const long long k = {self._extra()}; "
                  f"{into}[{self.items}] = k < {self.cols}LL ? {put_one('k')} : {self._zero}; }}"]
                 if self.peel else [])
        if self.packed and raw_in:  # the loaded words as they are
            convert = [f"for (int i = 0; i < {w // 2}; ++i) v[c * {w // 2} + i] = pk.w[i];"]
        elif self._paired() and not raw_in:  # two elements per conversion
            dest = (lambda j: self.slot(j)) if shared else (lambda j: f"{into}[{j}]")
            convert = [f"for (int i = 0; i < {w // 2}; ++i) {{ const int j = c * {w} + 2 * i; "
                       f"const float2 f2 = rlx_ld2_{dtype_name(self.t)}(pk.w[i]); {dest('j')} = f2.x; {dest('j + 1')} = f2.y; }}"]
        else:
            convert = [f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; {put('j', 'pk.e[i]')} }}"]
        source = f"{self.loaded}[c]" if self.loaded and into == "v" else self._vec(buf)
        return [*decl, *self._chunks(self._guard([
            f"{self._union('pk')} pk.raw = {source};",
            "#pragma unroll",
            *convert,
        ], None if shared else into)), *extra]

    def _first_col(self) -> str:
        """The windowed form: the column of access c's first element (negative before the row)."""
        return f"const long long k0 = (long long)(c * {self.lanes} + {self.lane}) * {self.width} - h;"

    def _whole_chunks(self) -> int:
        """The windowed form: the last access c (-1: none) that lies wholly
        inside the row for every thread and start offset h, but for c = 0
        (lane 0's is the window's first): c lanes + lane <= cols / width - 1.
        WINDOW_WHOLE_CHUNKS off: -1."""
        return (self.cols // self.width) // self.lanes - 1 if WINDOW_WHOLE_CHUNKS else -1

    def _whole(self) -> str:
        """The windowed form: whether access c lies wholly inside the row,
        a constant for the accesses `_whole_chunks` names (once c's loop is
        unrolled: no test, no branch there)."""
        test = f"k0 >= 0 && k0 + {self.width} <= {self.cols}LL"
        k = self._whole_chunks()
        return f"(c >= 1 && c <= {k}) || ({test})" if k >= 1 else test

    def _edge_chunk(self) -> str:
        """The windowed form: whether access c of some thread can hold an edge
        of the window, a condition on c alone (a constant once c's loop is
        unrolled). The edges are the window's first access (0) and its last
        (nb - 1, nb = (h + cols + width - 1) / width for h in 0 .. width - 1):
        every other access lies wholly inside the row or wholly past it."""
        if not WINDOW_EDGE_CHUNKS:
            return "true"
        w = self.width
        lo, hi = ((self.cols + w - 1) // w - 1) // self.lanes, ((self.cols + 2 * w - 2) // w - 1) // self.lanes
        return f"c == 0 || c == {lo}" if lo == hi else f"c == 0 || (c >= {lo} && c <= {hi})"

    def _edge_write(self, buf: str, union: str) -> str:
        """The windowed form: access c's elements inside the row, held in
        `union`.e, written to `buf` one at a time (k0: `_first_col`)."""
        return (f"for (int i = 0; i < {self.width}; ++i) {{ const long long k = k0 + i; "
                f"if ({self._in_row()}) {buf}[base + k] = {union}.e[i]; }}")

    def _in_row(self, k: str = "k") -> str:
        return f"{k} >= 0 && {k} < {self.cols}LL" if self.window else f"{k} < {self.cols}LL"

    def each(self, body: str) -> list[str]:
        """`body` for every element j of the thread inside the row (`k` its column)."""
        if self.window:  # whole accesses inside the row unguarded; the window's edges element by element
            w = self.width
            return self._chunks([
                self._first_col(),
                f"if ({self._whole()}) {{",
                "  #pragma unroll",
                f"  for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; const long long k = k0 + i; {{ {body} }} }}",
                f"}} else if ({self._edge_chunk()}) {{",
                "  #pragma unroll",
                f"  for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; const long long k = k0 + i; "
                f"if ({self._in_row()}) {{ {body} }} }}",
                "}",
            ])
        if PEELED_ACCESS_GUARDS if self.peel else self.guarded and self.width > 1 and GUARDED_ACCESS_GUARDS:
            # one test per access (wholly inside the row, or past it), then the peeled head/tail element
            w = self.width
            k = self._peeled_col() if self.peel else self.col("j")
            lines = self._chunks([
                f"if ({self._inside()}) {{",
                "  #pragma unroll",
                f"  for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; const long long k = {k}; {{ {body} }} }}",
                "}",
            ])
            if self.peel:
                lines.append(f"{{ const int j = {self.items}; const long long k = {self._extra()}; "
                             f"if (k < {self.cols}LL) {{ {body} }} }}")
            return lines
        guard = f"if ({self._in_row()}) " if self.guarded else ""
        return [
            "#pragma unroll",
            f"for (int j = 0; j < {self.slots}; ++j) {{ const long long k = {self.col('j')}; {guard}{{ {body} }} }}",
        ]

    def hold_params(self, columns: Sequence[str]) -> list[str]:
        """Statements reading the per-column params `columns` of this
        thread's elements into registers, `ph_<name>[j]` (0 past the row's
        end), before its rows (`held`: rows of one element an access)."""
        assert self.width == 1 and not self.window and not self.peel
        return [line for p in columns for line in (
            f"float ph_{p}[{self.slots}];  // {p} at this thread's columns, the same in each of its rows",
            "#pragma unroll",
            f"for (int j = 0; j < {self.slots}; ++j) {{ const long long k = {self.col('j')}; "
            f"ph_{p}[j] = k < {self.cols}LL ? {load(f'{p}[k]', self.t)} : 0.0f; }}")]

    def _paired_out(self, out: Out) -> str:
        """The loop writing the 16-bit output vector `pk` two elements a
        conversion from the per-column params `pc_<name>` (read an element
        at a time)."""
        w, ty = self.width, dtype_name(self.t)
        lo = out(self.elem("j"), lambda p: load(f"pc_{p}.e[2 * i]", self.t))
        hi = out(self.elem("j + 1"), lambda p: load(f"pc_{p}.e[2 * i + 1]", self.t))
        return (f"for (int i = 0; i < {w // 2}; ++i) {{ const int j = c * {w} + 2 * i; "
                f"pk.w[i] = rlx_st2_{ty}({lo}, {hi}); }}")

    def store(self, buf: str, out: Out, columns: Sequence[str] = ()) -> list[str]:
        """Writes `out(element, column param -> its value)` of every element
        to buf[base + column]; the per-column params (`columns`, of the row's
        type, laid out as the row) are read as vectors alongside, or taken
        from registers (`held`)."""
        w = self.width
        if w == 1 and columns and self.lanes == 1 and WARP_SOLO_VECTOR_PARAMS and not self.held and not self.window:
            # a thread's whole row (its columns 0 .. cols - 1 in order): the params 16 bytes a read,
            # the same addresses across the warp (each 256-byte aligned, its slot padded past its end)
            per = 16 // dtype(self.t).bytes
            unions = [f"union {{ uint4 raw; {dtype(self.t).c_storage} e[{per}]; }} pc_{p}; "
                      f"pc_{p}.raw = __ldg(reinterpret_cast<const uint4*>({p}) + c);" for p in columns]
            value = store(out(self.elem(), lambda p: load(f"pc_{p}.e[i]", self.t)), self.t)
            return [
                "#pragma unroll",
                f"for (int c = 0; c < {-(-self.cols // per)}; ++c) {{",
                *("  " + u for u in unions),
                "  #pragma unroll",
                f"  for (int i = 0; i < {per}; ++i) {{ const int j = c * {per} + i; const long long k = j; "
                f"if (j < {self.cols}) {buf}[base + k] = {value}; }}",
                "}",
            ]
        if w == 1:
            def param(p: str) -> str:
                return f"ph_{p}[j]" if p in self.held else load(f"{p}[k]", self.t)
            return self.each(f"{buf}[base + k] = {store(out(self.elem(), param), self.t)};")
        if self.window:  # the window's edges element by element (the params too), written so
            value = store(out(self.elem(), lambda p: load(f"{p}[k]", self.t)), self.t)
            inside = self._in_row()
            whole = self._whole()
            vector_write = f"reinterpret_cast<{self.raw}*>({buf} + {self._at('base')})[c * {self.lanes} + {self.lane}] = pk.raw;"
            edge = [
                "#pragma unroll",
                f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; const long long k = k0 + i; "
                f"pk.e[i] = {inside} ? {value} : ({storage_type(self.t)})0; }}",
            ]
            scalar_write = self._edge_write(buf, "pk")
            if columns and WINDOW_VECTOR_PARAMS:  # inside the row: each param's 16 bytes realigned to the row's
                size = dtype(self.t).bytes
                copy = param_copy_bytes(self.cols, w, size)
                params = [f"{self._union(f'pc_{p}')} pc_{p}.raw = "
                          + (f"rlx_ld_copy({p}_c, h, {copy}LL, (k0 + h) * {size});" if p in self.copies
                             else f"rlx_ld_window({p}, (k0 + h) * {size}, h * {size});")
                          for p in columns]
                vec = store(out(self.elem(), lambda p: load(f"pc_{p}.e[i]", self.t)), self.t)
                loop = f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; pk.e[i] = {vec}; }}"
                write = [
                    f"if ({whole}) {{",
                    *("  " + x for x in params),
                    "  #pragma unroll",
                    f"  {loop}",
                    "  " + vector_write,
                    f"}} else if ({self._edge_chunk()}) {{",
                    *("  " + x for x in edge),
                    "  " + scalar_write,
                    "}",
                ]
            else:
                write = [*edge, f"if ({whole}) {vector_write}", f"else {scalar_write}"]
            return self._chunks(self._guard([self._first_col(), self._union("pk"), *write]))
        size = dtype(self.t).bytes
        copied = bool(columns) and all(p in self.copies for p in columns)
        realign = self.peel and columns and (PEELED_VECTOR_PARAMS or copied) and w * size == 16
        if realign:  # the params' 16 bytes realigned to the row's vectors (which start h elements in)
            at16 = f"(long long)(c * {self.lanes} + {self.lane}) * 16 + (h ? 16 : 0)"
            copy = param_copy_bytes(self.cols, w, size)
            reads, at = [f"{self._union(f'pc_{p}')} pc_{p}.raw = "
                         + (f"rlx_ld_copy({p}_c, ({w} - h) & {w - 1}, {copy}LL, {at16});" if copied
                            else f"rlx_ld_window({p}, {at16}, (16 - h * {size}) & 15);")
                         for p in columns], ""
            value = out(self.elem(), lambda p: load(f"pc_{p}.e[i]", self.t))
        elif self.peel:  # the params' 16-byte boundaries are not the row's: an element at a time
            k = self._peeled_col() if PEELED_ACCESS_GUARDS else self.col("j")  # inside the access's guard
            reads, at = [], f"const long long k = {k}; "
            value = out(self.elem(), lambda p: load(f"{p}[k]", self.t))
        else:
            reads, at = [f"{self._union(f'pc_{p}')} pc_{p}.raw = {self._vec(p, '0')};" for p in columns], ""
            value = out(self.elem(), lambda p: load(f"pc_{p}.e[i]", self.t))
        if self._paired() and (realign or not self.peel):  # two elements per conversion
            convert = self._paired_out(out)
        else:
            convert = f"for (int i = 0; i < {w}; ++i) {{ const int j = c * {w} + i; {at}pk.e[i] = {store(value, self.t)}; }}"
        body = self._chunks(self._guard([
            *reads,
            self._union("pk"),
            "#pragma unroll",
            convert,
            f"reinterpret_cast<{self.raw}*>({buf} + {self._at('base')})[c * {self.lanes} + {self.lane}] = pk.raw;",
        ]))
        if self.peel:  # the head/tail element
            j = str(self.items)
            one = store(out(self.elem(j), lambda p: load(f"{p}[k]", self.t)), self.t)
            body.append(f"{{ const long long k = {self._extra()}; if (k < {self.cols}LL) {buf}[base + k] = {one}; }}")
        return body


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

    The row is read from `x`, or computed by a `prologue` as it is read
    (an `rlx.fusion`'s elementwise prologue, or the fused residual norms'
    x + residual, whose sum is also written); `columns` name the per-column
    params (gamma, beta); the output goes to `y`. Each form has its statistics and output expression:

    * `cached`: passes over the cached row (registers or shared memory), an
      element may be updated in a pass (e.g. the mean subtracted), then
      `cached_out`;
    * `pure` / `pure_out` (optional): the same without updating an element,
      for a shared row kept in the input's 16-bit type (an update would be
      rounded); `cached` itself where it updates nothing;
    * `merged` (optional): `cached`'s statistics with one reduction over
      the row's threads instead of one each: every pass but the last is
      thread-local, and the last merges the threads' partial statistics
      (`merged_stats`); `cached_out` then writes the output;
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
    pure: tuple[Stat, ...] | None = None
    pure_out: Out | None = None
    merged: tuple[Stat, ...] | None = None
    prologue: Prologue | None = None
    columns: tuple[str, ...] = ()
    name_read: bool = False
    name_write: bool = False
    pure_in_smem: bool = True  # whether the shared-memory form keeps a 16-bit row (given `pure`) too
    #: `streamed` and `streamed_out` with their names suffixed (so a thread can
    #: keep several rows' statistics: the vector columns form); None: no such form
    streamed_at: Callable[[str], tuple[Stat, Out]] | None = None
    #: `streamed` and `streamed_out` with approximate exponentials, for results
    #: rounded to f16/bf16 (the stream form's: STREAM_APPROX); None: none
    streamed_afn: tuple[Stat, Out] | None = None
    #: softmax (False) or log_softmax (True): the paired columns form's
    #: statistics (COLUMN_PAIRED_ELEMS); None for other ops
    softmax_log: bool | None = None
    #: the output after `merged` (None: `cached_out`), and whether `merged`
    #: updates no element (it then serves a row kept in 16 bits, `stored`)
    merged_out: Out | None = None
    merged_pure: bool = False
    #: "layer" (layer_norm) or "rms" (rms_norm), else "": their forms' reach differs
    #: (BLOCK_LAYER_NORM_F32_ROW_MAX, BLOCK_RMS_NORM_F32_ROW_MAX, PEEL_EVEN_SKIPS_F32_RMS_NORM)
    norm: str = ""

    @property
    def layer_norm(self) -> bool:
        return self.norm == "layer"

    @property
    def rms_norm(self) -> bool:
        return self.norm == "rms"

    @property
    def elem_bytes(self) -> int:
        """The widest element an access moves: an access moves `width`
        elements of every tensor involved (the row, the prologue's inputs
        and outputs), so a prologue reading f16 into an f32 row moves 4 per
        access, not 8."""
        return max(dtype(self.t).bytes, self.prologue.elem_bytes if self.prologue else 0)


def _round(t: Attribute) -> str:
    """The function rounding a float to `t` (nothing for f32)."""
    return {"f16": "rlx_round_f16", "bf16": "rlx_round_bf16"}.get(dtype_name(t), "")


def _cached_form(s: RowSpec, row: CachedRow, red: Reducer, form: str) -> list[str]:
    body = row.compute(s.prologue) if s.prologue is not None else row.load("x")
    merged = s.merged is not None and merged_stats(form) and row.width > 1
    if merged and (s.merged_pure or not row.stored):
        stats, out = s.merged, s.merged_out or s.cached_out
    elif row.stored:
        stats, out = s.pure, s.pure_out
    else:
        stats, out = s.cached, s.cached_out
    assert stats is not None and out is not None
    for i, stat in enumerate(stats):
        body += [*(row.fence() if i else []), *stat.init, *row.each(stat.add([row.elem()])), *stat.done(red)]
    return body + row.fence() + row.store("y", out, s.columns)


def _stored_row(s: RowSpec) -> bool:
    """Whether the shared-memory form keeps the row in its 16-bit type (half
    the bytes, twice the blocks per SM): f16/bf16 rows whose statistics can
    leave the elements as they are."""
    return dtype_name(s.t) in ("f16", "bf16") and s.pure is not None


def _vec_loop(rows: Rows, lines: list[str], width: int = 4, lane: str = "threadIdx.x",
              stride: str = "blockDim.x") -> list[str]:
    """`lines` for every 16-byte vector `k<width>` (of `width` elements) of row
    `r` that thread `lane` of the row's `stride` takes, 4 trips unrolled so
    that their loads are in flight together."""
    k = f"k{width}"
    return [
        "#pragma unroll 4",
        f"for (long long {k} = {lane}; {k} < {rows.cols // width}LL; {k} += {stride}) {{",
        *("  " + line for line in lines),
        "}",
    ]


def _vec_batched(rows: Rows, lines: Callable[[str], list[str]], width: int, raw: str, load: str, loads: int,
                 lane: str = "threadIdx.x", stride: str = "blockDim.x", count: str | None = None) -> list[str]:
    """`lines(v)` for every 16-byte vector `k<width>` of row `r` that thread
    `lane` of the row's `stride` takes, `loads` of them at a time: their
    loads (`load`, of type `raw`, an expression in `k<width>`) issued
    together, then `lines` of each loaded value `v`. `count`: the vectors
    (an int expression: the windowed row's `nb`), else the row's length
    over `width`."""
    k, n = f"k{width}", count or rows.cols // width
    ix = "int" if rows.cols // width + 1 + loads * THREADS * 4 < 2**31 else "long long"  # (a row's vectors, not the tensor's)
    return [
        f"for ({ix} k0 = {lane}; k0 < {n}; k0 += {loads} * {stride}) {{  // {loads} loads in flight",
        f"  {raw} pv[{loads}];",
        "  #pragma unroll",
        f"  for (int j = 0; j < {loads}; ++j) {{ const {ix} {k} = k0 + j * {stride}; if ({k} < {n}) pv[j] = {load}; }}",
        "  #pragma unroll",
        f"  for (int j = 0; j < {loads}; ++j) {{",
        f"    const {ix} {k} = k0 + j * {stride};",
        f"    if ({k} >= {n}) break;",
        *("    " + line for line in lines("pv[j]")),
        "  }",
        "}",
    ]


def _ld4(buf: str, offset: str = "base") -> str:
    return f"reinterpret_cast<const float4*>({buf} + {offset})[k4]"


def _st4(buf: str, parts: Callable[[str], str]) -> str:
    return f"reinterpret_cast<float4*>({buf} + base)[k4] = make_float4({', '.join(parts(c) for c in 'xyzw')});"


def _float4_form(s: RowSpec, red: Reducer = block_reduce, lane: str = "threadIdx.x",
                 stride: str = "blockDim.x", loads: int = 1) -> list[str]:
    """The row read twice as float4s (f32 rows of a length 4 divides):
    statistics, then the output; with `loads` > 1 (no column params) that
    many loads in flight per thread in each read (`_vec_batched`)."""
    stat = s.streamed4 or s.streamed
    row = f"const float4 q = {_ld4('x')};"
    # in the second read the row and the first column param are loaded on one line
    reads = [row, *(f"const float4 {p}q = {_ld4(p, '0')};" for p in s.columns)]
    out = _st4("y", lambda c: s.streamed_out(f"q.{c}", lambda p: f"{p}q.{c}"))
    if loads > 1:
        assert not s.columns, "batched float4 reads take no column params"
        ld = _ld4("x")
        return [
            *stat.init,
            *_vec_batched(s.rows, lambda v: [f"const float4 q = {v};", stat.add([f"q.{c}" for c in "xyzw"])],
                          4, "float4", ld, loads, lane, stride),
            *stat.done(red),
            *_vec_batched(s.rows, lambda v: [f"const float4 q = {v};", out], 4, "float4", ld, loads, lane, stride),
        ]
    return [
        *stat.init,
        *_vec_loop(s.rows, [row, stat.add([f"q.{c}" for c in "xyzw"])], 4, lane, stride),
        *stat.done(red),
        *_vec_loop(s.rows, [" ".join(reads[:2]), *reads[2:], out], 4, lane, stride),
    ]


def _unpack8(name: str, ty: str, raw: str) -> list[str]:
    """The 8 f16/bf16 elements of the uint4 `raw` as floats `<name>0.x` ...
    `<name>3.y` (`_elem8`), converted two at a time."""
    return [f"const uint4 {name}u = {raw};",
            " ".join(f"const float2 {name}{i} = rlx_ld2_{ty}({name}u.{c});" for i, c in enumerate("xyzw"))]


def _elem8(name: str, e: int) -> str:
    """Element `e` (0-7) of `_unpack8`'s floats."""
    return f"{name}{e // 2}.{'xy'[e % 2]}"


def _pack8(outs: Sequence[str], ty: str) -> str:
    """The uint4 of the 8 floats `outs` rounded to f16/bf16, two at a time."""
    return f"make_uint4({', '.join(f'rlx_st2_{ty}({outs[2 * i]}, {outs[2 * i + 1]})' for i in range(4))})"


def _uint4_form(s: RowSpec, red: Reducer = block_reduce, lane: str = "threadIdx.x",
                stride: str = "blockDim.x", loads: int = 1) -> list[str]:
    """The float4 form for f16/bf16 rows of a length 8 divides: 8 elements
    per 16-byte access, converted two at a time (`rlx_ld2_*` / `rlx_st2_*`),
    the statistics and the output in f32, the column params read the same
    way; with `loads` > 1 (no column params) that many loads in flight per
    thread in each read (`_vec_batched`)."""
    stat, ty = s.streamed4 or s.streamed, dtype_name(s.t)

    def unpack(name: str, buf: str, offset: str) -> list[str]:
        return _unpack8(name, ty, f"reinterpret_cast<const uint4*>({buf} + {offset})[k8]")

    outs = [s.streamed_out(_elem8("f", e), lambda p, e=e: _elem8(f"{p}f", e)) for e in range(8)]
    if loads > 1 or s.rows.cols % 8:  # rows 8 does not divide only through their windows (here)
        assert not s.columns, "batched uint4 reads take no column params"
        cols = s.rows.cols
        head: list[str] = []
        edge_stat: list[str] = []
        edge_out: list[str] = []
        first, count, at = lane, None, "base"
        if cols % 8 or STREAM_EDGES:
            # windowed (see `windowed`): the row's 16-byte-aligned window, h elements
            # before its start. Its first and last accesses (threads 0 and 1) hold
            # elements outside the row: -inf to the statistics, not written (an
            # element at a time); the accesses between lie in the row
            assert cols > 16, "the window's first and last accesses are two (threads 0 and 1)"
            first, count, at = f"{lane} + 1", "nb - 1", "(base - h)"
            head = window_setup(cols, 8)
            inside = [f"(unsigned)(k8 * 8 + {e} - h) < {cols}u" for e in range(8)]
            edge = [f"if ({lane} < 2) {{  // the window's first and last accesses",
                    f"  const int k8 = {lane} == 0 ? 0 : nb - 1;",
                    *("  " + line for line in _unpack8("f", ty, f"reinterpret_cast<const uint4*>(x + {at})[k8]"))]
            edge_stat = [*edge, "  " + stat.add([f"({inside[e]} ? {_elem8('f', e)} : -RLX_INF)" for e in range(8)]), "}"]
            edge_out = [*edge, *(f"  if ({inside[e]}) y[base - h + k8 * 8 + {e}] = {store(outs[e], s.t)};"
                                 for e in range(8)), "}"]
        ld = f"reinterpret_cast<const uint4*>(x + {at})[k8]"
        return [
            *head,
            *stat.init,
            *edge_stat,
            *_vec_batched(s.rows, lambda v: [*_unpack8("f", ty, v), stat.add([_elem8("f", e) for e in range(8)])],
                          8, "uint4", ld, loads, first, stride, count),
            *stat.done(red),
            *edge_out,
            *_vec_batched(s.rows, lambda v: [*_unpack8("f", ty, v),
                                             f"reinterpret_cast<uint4*>(y + {at})[k8] = {_pack8(outs, ty)};"],
                          8, "uint4", ld, loads, first, stride, count),
        ]
    return [
        *stat.init,
        *_vec_loop(s.rows, [*unpack("f", "x", "base"), stat.add([_elem8("f", e) for e in range(8)])], 8, lane, stride),
        *stat.done(red),
        *_vec_loop(s.rows, [*unpack("f", "x", "base"), *(line for p in s.columns for line in unpack(f"{p}f", p, "0")),
                            f"reinterpret_cast<uint4*>(y + base)[k8] = {_pack8(outs, ty)};"], 8, lane, stride),
    ]


def _looping_form(s: RowSpec, red: Reducer = block_reduce, lane: str = "threadIdx.x",
                  stride: str = "blockDim.x", loads: int = 1, out_loads: int = 1) -> list[str]:
    """The row read twice, an element at a time per thread (`lane` of
    `stride`): statistics, then the output; with `loads` > 1 (no prologue)
    the first read issues that many loads before folding them in, with
    `out_loads` > 1 the second before storing."""
    t, stat, p = s.t, s.streamed, s.prologue
    if p is not None:  # the prologue computes the row in both reads; its outputs are stored in the first
        args = [p.arg(j) for j in range(len(p.inputs))]
        read = ["float v;", p.element("v", args)]
        write = ["float v;", p.element("v", args, outputs=False)]
        row = "v"
    else:
        read = [f"const float v = {load('x[o]', t)};"] if s.name_read else []
        row = load("x[o]", t)
        write = [f"const float v = {row};"] if s.name_write else []
    value = s.streamed_out("v" if write else row, lambda c: load(f"{c}[k]", t))
    if loads > 1 and p is None:
        first = _batched_read(s.rows, lane, stride, loads, "float", load("x[o]", t), stat.add(["v"]))
    else:
        first = [_cols(" ".join([*read, stat.add(["v" if read else row])]), s.rows, lane, stride)]
    if out_loads > 1 and p is None:
        second = _batched_read(s.rows, lane, stride, out_loads, "float", load("x[o]", t),
                               f"y[o] = {store(s.streamed_out('v', lambda c: load(f'{c}[k]', t)), t)};", at=True)
    else:
        second = [_cols(" ".join([*write, f"y[o] = {store(value, t)};"]), s.rows, lane, stride)]
    return [
        *(p.row_setup() if p is not None else []),
        *stat.init,
        *first,
        *stat.done(red),
        *second,
    ]


def window_prologue(p: Prologue | None, t: Attribute) -> bool:
    """Whether rows prologue `p` computes can take the windowed form
    (WINDOW_PROLOGUE): each tensor it reads element by element is laid out
    as the row (from `base`) and of the row's type `t`, as are its outputs,
    so that the row's window is every such tensor's."""
    if p is None or not WINDOW_PROLOGUE:
        return False
    rows = [i for i in p.inputs if i.kind != "scalar"]
    return (all(i.kind == "row" and i.base == "base" and eltype(i.value) == t for i in rows)
            and all(eltype(v) == t for _, v, _ in p.outputs))


def param_copy_bytes(cols: int, width: int, size: int) -> int:
    """Bytes of one shifted copy of a param of `cols` elements of `size`
    bytes, `width` per 16-byte access: the param, up to width - 1 elements
    of shift before it, rounded up to whole accesses."""
    return -(-(cols + width) // width) * width * size


def _is_param(v: SSAValue) -> bool:
    """Whether `v` is an rlx.param or rlx.constant (through views)."""
    owner = v.owner
    while isinstance(owner, Operation) and rlx.is_view(owner):
        owner = owner.operands[0].owner
    return isinstance(owner, rlx.ParamOp | rlx.ConstantOp)


def _with_copies(s: RowSpec, row: CachedRow, bufs: list[Buf], decl: str) -> tuple[CachedRow, list[Buf], str]:
    """`row` reading its per-column params from shifted copies where it can
    (PARAM_COPIES: a windowed row's, with WINDOW_VECTOR_PARAMS, or a peeled
    row's, all of them or none, whose values are params or constants, moved
    16 bytes per access), with the kernel's parameters for them (`<name>_c`,
    after the others)."""
    if not PARAM_COPIES or len(s.columns) < max(1, PARAM_COPIES_MIN_COLUMNS) \
            or not (row.window and WINDOW_VECTOR_PARAMS or row.peel) or row.width * dtype(s.t).bytes != 16:
        return row, bufs, decl
    values = {name: v for name, v, _ in s.bufs}
    names = tuple(p for p in s.columns if _is_param(values[p]))
    if not names or (row.peel and len(names) < len(s.columns)):
        return row, bufs, decl
    extra = [Buf(values[p], copies=row.width) for p in names]
    decl += "".join(f", const {storage_type(s.t)}* __restrict__ {p}_c" for p in names)
    return replace(row, copies=names), [*bufs, *extra], decl


def block_row_max(s: RowSpec) -> int:
    """The block form's longest row for `s` (BLOCK_SOFTMAX_F32_ROW_MAX and
    the four below it, where the forms they were measured against, cluster
    and stream, are the others: sm_90; BLOCK_ROW_MAX for the others)."""
    size = dtype(s.t).bytes
    if s.prologue is not None or not (USE_CLUSTERS and has_clusters()):
        return BLOCK_ROW_MAX
    pairs = size == 4 and s.rows.cols % 4 == 2  # 8-byte accesses
    if s.softmax_log is not None:
        return min(BLOCK_SOFTMAX_F32_ROW_MAX, BLOCK_F32_PAIRS_ROW_MAX) if pairs else (
            BLOCK_SOFTMAX_F32_ROW_MAX if size == 4 else BLOCK_SOFTMAX_16_ROW_MAX)
    if s.layer_norm and size == 4:
        return min(BLOCK_LAYER_NORM_F32_ROW_MAX, BLOCK_F32_PAIRS_ROW_MAX) if pairs else BLOCK_LAYER_NORM_F32_ROW_MAX
    if s.rms_norm and size == 4:
        return BLOCK_RMS_NORM_F32_ROW_MAX if s.rows.cols % 4 == 0 else BLOCK_RMS_NORM_F32_ODD_ROW_MAX
    return BLOCK_ROW_MAX


def row_kernel(s: RowSpec, sm_count: int) -> KernelSpec:
    """`s` in the form `row_form` picks (see the module docstring)."""
    if s.rows.rows == 0 or s.rows.cols == 0:  # no elements in or out: a kernel that does nothing
        src = f'// row form: none (no elements)\nextern "C" __global__ void ENTRY({params_decl(s.bufs)}) {{}}\n'
        return KernelSpec(s.family, src, [Buf(v, w) for _, v, w in s.bufs], 1)
    stored = _stored_row(s)
    regs16 = CLUSTER_STORED and stored
    computed = s.prologue is not None  # the row is computed, not loaded
    window = WINDOW_ROWS and (not computed or window_prologue(s.prologue, s.t)) and windowed(s.rows.cols, s.t, regs16)
    block_max = block_row_max(s)
    form = row_form(s.rows, s.t, 2 if stored else 4, regs16, window, sm_count,
                    online=s.streamed_at is not None and not computed, prologue=computed, block_max=block_max)
    if form == "smem" and stored and not s.pure_in_smem:  # the shared row as f32 after all
        stored = regs16 = window = False
        form = row_form(s.rows, s.t, 4, sm_count=sm_count, block_max=block_max)
    bufs = [Buf(v, w) for _, v, w in s.bufs]
    decl = params_decl(s.bufs)
    rows = s.rows
    if computed and form in ("float4", "uint4"):
        form = "looping"  # the prologue's inputs are read one element at a time there
    if form == "warp":
        group = row_group(rows.cols, s.elem_bytes, loaded=not computed, vector=s.prologue is None or s.prologue.vector)
        items = -(-rows.cols * s.elem_bytes // 16)  # 16-byte accesses
        wide = group < 32 and items > 32  # WARP_WIDE_EVEN_LANES' lanes
        row = CachedRow.for_spec(s, group, "lane")
        if (narrow := narrow_group(rows.cols, row.width)) < group:
            group, row, wide = narrow, CachedRow.for_spec(s, narrow, "lane"), False
        if lanes := warp_window_lanes(s):
            group, row = lanes, CachedRow.for_spec(s, lanes, "lane", window=True)
        narrow_staged = staged_narrow(s, row)
        threads = WARP_SHORT_THREADS if rows.cols * s.elem_bytes <= WARP_SHORT_ROW_BYTES else WARP_THREADS
        span = WARP_STAGED_NARROW if narrow_staged else WARP_STAGE_SHORT_BYTES if _short_staged(s) else WARP_STAGE_BYTES

        def blocked(lanes: int) -> int:  # a block's rows, if staged, over `lanes` lanes a row
            return threads // lanes * stage_rows(rows.cols * dtype(s.t).bytes, threads // lanes, span)

        odd_solo = False
        if group > 1 and (narrow_staged and staged_solo(s) or (odd_solo := staged_odd_solo(s, row))):
            solo = CachedRow.for_spec(s, 1, "lane")  # a thread a row, where its rows are staged
            if _stages(s, solo, blocked(1), narrow_staged, odd_solo):
                group, row = 1, solo
            else:
                odd_solo = False
        per_block = threads // group
        block_rows = blocked(group)  # if staged
        staged = _stages(s, row, block_rows, narrow_staged, odd_solo)
        per_group = 1 if staged else warp_batch(s, row, per_block)
        batched = per_group > 1
        if batched:
            row = replace(row, loaded="nx[u]")
        pre: list[str] = []
        if (WARP_HELD_PARAMS and s.columns and row.width == 1 and not row.window and not row.peel
                and row.slots <= (WARP_HELD_PARAMS_SOLO_ITEMS if row.lanes == 1
                                  else WARP_HELD_PARAMS_ITEMS if dtype(s.t).bytes == 4 or row.lanes <= WARP_HELD_PARAMS_16_LANES
                                  else WARP_HELD_PARAMS_16_ITEMS if row.lanes >= 16 and s.prologue is None else 0)):
            row = replace(row, held=tuple(s.columns))
            pre = row.hold_params(s.columns)
        if staged:
            decl = params_decl([(f"{n}_" if n in ("x", "y") else n, v, w) for n, v, w in s.bufs])
        note = (row.note() + (f", {32 // group} rows per warp" if group < 32 else "")
                + (f", {per_group} rows per group" if batched else "")
                + (f", staged: the block's {block_rows} rows through shared memory, 16-byte copies" if staged else ""))
        if staged:
            grid = -(-rows.rows // block_rows)
        elif batched:
            grid = -(-rows.rows // (per_block * per_group))
        else:
            blocks = min(-(-rows.rows // per_block), 2**31 - 1)
            grid = min(blocks, sm_count * WARP_BLOCKS_PER_SM) if WARP_BLOCKS_PER_SM else blocks
        src = _row_kernel(decl, _cached_form(s, row, group_reduce(group), "warp"), rows, form="warp", note=note, group=group,
                          batch=row if batched else None, per_group=per_group, threads=threads,
                          one_row="warp" in ROW_PER_BLOCK and not batched and grid * per_block >= rows.rows,
                          staged=(block_rows, s.t) if staged else None, pre=pre,
                          min_blocks=WARP_WIDE_EVEN_LANES_MIN_BLOCKS if wide and not staged and s.layer_norm
                          and items >= group * WARP_WIDE_EVEN_LANES_MIN_BLOCKS_ITEMS else 0)
        return KernelSpec(s.family, src, bufs, grid, threads)
    if form == "block":
        threads = block_threads(rows.cols, s.elem_bytes)
        row = CachedRow.for_spec(s, threads, "threadIdx.x", peel=True)
        row, bufs, decl = _with_copies(s, row, bufs, decl)
        grid = min(rows.rows, sm_count * BLOCK_BLOCKS_PER_SM) if BLOCK_BLOCKS_PER_SM else min(rows.rows, 2**31 - 1)
        src = _row_kernel(decl, _cached_form(s, row, block_reduce, "block"), rows, form="block", note=row.note(),
                          threads=threads, one_row="block" in ROW_PER_BLOCK and grid == rows.rows,
                          min_blocks=block_min_blocks(threads))
        return KernelSpec(s.family, src, bufs, grid, threads)
    if form in ("cluster", "grid"):
        shape_ = (cluster_shape(rows.cols, s.t, regs16, window, computed) if form == "cluster"
                  else grid_shape(rows.cols, s.t, sm_count, regs16, window, computed))
        assert shape_ is not None
        blocks, threads = shape_
        red = ClusterReducer(blocks, threads) if form == "cluster" else GridReducer(rows.rows, blocks, threads)
        row = CachedRow.for_spec(s, blocks * threads, "lane", stored=regs16, window=window)
        row, bufs, decl = _with_copies(s, row, bufs, decl)
        body = _cached_form(s, row, red, form)
        row_regs = -(-row.slots // 2) if regs16 else row.slots
        capped = CLUSTER_REGS and 2 * row_regs <= CLUSTER_REGS and not row.guarded  # guarded rows spilled
        regs_cap = (CLUSTER_REGS if capped else WINDOW_F32_REGS if window and dtype(s.t).bytes == 4
                    else WINDOW_STORED_REGS if window and regs16 else 0)
        src = _row_kernel(decl, body, rows, form=form, threads=threads,
                          cluster=red if isinstance(red, ClusterReducer) else None,
                          grid=red if isinstance(red, GridReducer) else None,
                          min_blocks=max(1, 65536 // (regs_cap * threads)) if regs_cap else 0,
                          note=f"{blocks} blocks of {threads} threads per row, " + row.note())
        return KernelSpec(s.family, src, bufs, rows.rows * blocks, threads, co_resident=blocks if form == "grid" else 0)
    if form == "smem":
        row = CachedRow.for_spec(s, SMEM_THREADS, "threadIdx.x", smem=True, stored=stored)
        nbytes = rows.cols * (2 if stored else 4)
        kept = f" as {dtype_name(s.t)}" if stored else " as f32"
        src = _row_kernel(decl, _cached_form(s, row, block_reduce, "smem"), rows, form="smem",
                          threads=SMEM_THREADS, note=f"{nbytes} bytes of shared memory{kept}, " + row.note(),
                          srow_type=storage_type(s.t) if stored else "float")
        return KernelSpec(s.family, src, bufs, min(rows.rows, sm_count * 2), SMEM_THREADS, nbytes)
    if form == "columns":
        if (spec := _columns_kernel(s, decl, bufs, sm_count)) is not None:
            return spec
        form = "looping"  # rows only a form holding no prologue takes (over blocks, whole inner axis, slab)
    if form == "stream":
        width = 16 // dtype(s.t).bytes
        if width == 8 and STREAM_APPROX and s.streamed_afn is not None:  # results rounded to 16 bits
            s = replace(s, streamed=s.streamed_afn[0], streamed_out=s.streamed_afn[1], streamed4=None)
        c = stream_cluster(rows.cols, dtype(s.t).bytes)
        if c and rows.rows * c < 2**31:  # the row split over a cluster's c blocks (the grid's x limit)
            threads = stream_cluster_threads(rows.cols, c)
            red = ClusterReducer(c, threads)
            body = _uint4_form(s, red, "lane", f"{c * threads}", loads=STREAM_LOADS)
            src = _row_kernel(decl, body, rows, form="stream", threads=threads, cluster=red,
                              min_blocks=max(1, STREAM_MIN_BLOCKS * 1024 // threads),
                              note=f"a cluster of {c} blocks of {threads} threads per row, read twice, {width} "
                                   f"elements per access, {STREAM_LOADS} loads in flight per thread")
            return KernelSpec(s.family, src, bufs, rows.rows * c, threads)
        body = (_float4_form if width == 4 else _uint4_form)(s, loads=STREAM_LOADS)
        threads = stream_threads(rows.cols, width)
        src = _row_kernel(decl, body, rows, form="stream", threads=threads, one_row="stream" in ROW_PER_BLOCK,
                          min_blocks=max(1, STREAM_MIN_BLOCKS * 1024 // threads),
                          note=f"a block of {threads} threads per row, read twice, {width} elements per "
                               f"access, {STREAM_LOADS} loads in flight per thread")
        return KernelSpec(s.family, src, bufs, rows.rows, threads)
    streamed = {"float4": _float4_form, "uint4": _uint4_form}.get(form, _looping_form)
    width = {"float4": 4, "uint4": 8}.get(form, 1)
    if split := stream_split(rows.rows, rows.cols // width, sm_count):
        red = GridReducer(rows.rows, split, STREAM_GRID_THREADS)
        body = streamed(s, red, "lane", f"{split * STREAM_GRID_THREADS}")
        src = _row_kernel(decl, body, rows, form=form, threads=STREAM_GRID_THREADS, grid=red, min_blocks=2,
                          note=f"{split} blocks of {STREAM_GRID_THREADS} threads per row, read twice")
        return KernelSpec(s.family, src, bufs, rows.rows * split, STREAM_GRID_THREADS, co_resident=split)
    return KernelSpec(s.family, _row_kernel(decl, streamed(s), rows, form=form), bufs, min(rows.rows, sm_count * 16))


def _columns_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """The columns form (see COLUMN_FORM): each thread's slice held in
    registers where it is short enough (COLUMN_CACHED_ELEMS), else the paired
    or the 16-byte vector form where they apply, else the row read twice;
    None where the rows are too few for it and no other columns form takes
    them."""
    rows, size = s.rows, dtype(s.t).bytes
    y = column_slices(rows, sm_count, size)
    most = _held_elems(size)
    whole = _inner_slices(rows, most, size) if s.prologue is None else 0
    if (not whole or COLUMN_SLAB_FIRST) and (slab := _column_slab_kernel(s, decl, bufs, sm_count)) is not None:
        return slab
    if (packed := _column_packed_kernel(s, decl, bufs, sm_count)) is not None:
        return packed
    held = whole or (_slices_to_hold(y, rows.cols, most, size) if y and most and s.prologue is None else 0)
    if not held and (vgrid := _column_grid_vector_kernel(s, decl, bufs, sm_count)) is not None:
        return vgrid
    if not held and s.prologue is None and (grid := _column_grid_kernel(s, decl, bufs, sm_count)) is not None:
        return grid
    if not held and (paired := _paired_columns_kernel(s, decl, bufs, sm_count)) is not None:
        return paired
    if not (held and COLUMN_CACHED_OVER_VECTORS) and (vector := _column_vector_kernel(s, decl, bufs, sm_count)) is not None:
        return vector
    y = held or y
    if not y:
        return None
    x = rows.inner if whole else COLUMN_FORM_THREADS // y
    threads = x * y
    red = ColumnReducer(y, threads)
    if held:
        body = _cached_columns(s, y, red)
    else:
        loads = _batched_loads(COLUMN_FORM_LOADS, y, rows.cols, COLUMN_FORM_BATCH_SHARE)
        body = _looping_form(s, red, "threadIdx.y", f"{y}", loads, COLUMN_FORM_OUT_LOADS if y > 1 else 1)
    e = -(-rows.cols // y)
    how = f"{e} element{'s' if e != 1 else ''} per slice held in registers" if held else "an element at a time"
    who = " (all of the inner axis: one read of consecutive elements)" if whole else ""
    src = [f"// row form: columns ({x} rows{who} x {y} slices of the reduced axis per block, {how})",
           f'extern "C" __global__ void __launch_bounds__({threads}) ENTRY({decl}) {{',
           "  __shared__ float smem[32];", *red.slots(), *_column_rows(body, rows, x), "}"]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, -(-rows.rows // x), (x, y, 1))


def _short_inner(rows: Rows, most: int) -> bool:
    """Whether the rows' inner axis (after the reduced one) has at most `most`
    elements and 16 does not divide it: the axis the columns form's X
    neighbouring rows straddle (COLUMN_INNER_ROWS, COLUMN_SLAB_ELEMS)."""
    return 0 < rows.inner <= most and rows.inner % 16 != 0 and rows.rows % rows.inner == 0


def _slab_shape(rows: Rows, sm_count: int, items: bool = False) -> tuple[int, int, int] | None:
    """(M outer indices per block, Q threads per column, S floats from one
    outer index's elements to the next's in shared memory) of the slab form
    (see COLUMN_SLAB_ELEMS), or None where it does not apply. A block's
    shared floats, its elements (M × S) and two per column, stay within
    COLUMN_SLAB_ELEMS (static shared memory: 48 KB at most); M leaves each
    multiprocessor a block where the outer indices allow; Q threads per
    column where the columns leave threads over. The padding S - axis ×
    inner is COLUMN_SLAB_PAD's, where the slab moves 16-byte `items`."""
    inner, cols = rows.inner, rows.cols
    if not COLUMN_SLAB_ELEMS or not _short_inner(rows, COLUMN_SLAB_INNER - 1) or (cols + 2) * inner > COLUMN_SLAB_ELEMS:
        return None
    outer, n = rows.rows // inner, cols * inner

    def fit(stride: int) -> int:
        return min(COLUMN_SLAB_ELEMS // (stride + 2 * inner), max(1, outer // sm_count) if sm_count > 0 else outer)

    def q_of(m: int) -> int:
        q = 1
        while q < 16 and m * inner * q * 2 <= COLUMN_FORM_THREADS and q * 2 <= cols:
            q *= 2
        return q

    m = fit(n)
    best = (m, q_of(m), n)
    if COLUMN_SLAB_PAD and items:  # the padding with the fewest wavefronts per outer index
        costs = {best: _slab_wavefronts(inner, cols, m, best[1], n) / m}
        for pad in range(4, 33, 4):  # multiples of 4 floats: outer indices stay 16-byte aligned
            if (m_pad := fit(n + pad)) >= 1:
                q_pad = q_of(m_pad)
                costs[(m_pad, q_pad, n + pad)] = _slab_wavefronts(inner, cols, m_pad, q_pad, n + pad) / m_pad
        least = min(costs.values())
        if least * COLUMN_SLAB_PAD <= costs[best]:  # the least padding within 5% of the fewest
            best = min((k for k, c in costs.items() if c <= 1.05 * least), key=lambda k: k[2])
    return best


def _slab_wavefronts(inner: int, cols: int, m: int, q: int, stride: int) -> float:
    """The slab form's column statistics' shared-memory wavefronts per block
    (both passes): for each warp's load, the most distinct words any of the
    32 banks holds, plus a shuffle step per halving of Q (see
    COLUMN_SLAB_PAD)."""
    import numpy as np

    threads = COLUMN_FORM_THREADS
    t = np.arange(threads)
    total = 0
    for c0 in range(0, m * inner, threads // q):  # one round of columns
        c = c0 + t // q
        live = c < m * inner
        for k0 in range(0, cols, q):
            k = k0 + t % q
            ok = live & (k < cols)
            bank = np.where(ok, ((c // inner) * stride + c % inner + k * inner) % 32, 32).reshape(-1, 32)
            counts = np.zeros((bank.shape[0], 33), dtype=np.int64)
            np.add.at(counts, (np.arange(bank.shape[0])[:, None], bank), 1)
            total += int(counts[:, :32].max(axis=1).sum())
        warps = -(-min(threads, (m * inner - c0) * q) // 32)
        total += warps * (q.bit_length() - 1)
    return 2.0 * total


def _column_slab_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """Softmax over a middle axis in the slab form (see COLUMN_SLAB_ELEMS), or
    None where it does not apply."""
    rows, t, log = s.rows, s.t, s.softmax_log
    inner, cols, n = rows.inner, rows.cols, rows.cols * rows.inner
    size = dtype(t).bytes
    w = 16 // size if COLUMN_SLAB_VECTORS and size in (2, 4) and (n * size) % 16 == 0 else 1
    shape_ = _slab_shape(rows, sm_count, w > 1) if log is not None and s.prologue is None else None
    if shape_ is None:
        return None
    m, q, stride = shape_
    at = (lambda e: e) if stride == n else (lambda e: f"({e}) / {n} * {stride} + ({e}) % {n}")  # padded
    outer, threads = rows.rows // inner, COLUMN_FORM_THREADS
    red = (lambda v, op: v) if q == 1 else (lambda v, op: f"rlx_group_reduce<{q}>({v}, {op}())")
    out = "(v - cm[c]) - cv[c]" if log else "expf(v - cm[c]) * cv[c]"
    if w > 1:  # every outer index starts 16-byte aligned: the slab moves as 16-byte items
        ty = dtype_name(t)
        if size == 4:
            unpack = [f"const float4 f = reinterpret_cast<const float4*>(x + base)[p4];",
                      f"*reinterpret_cast<float4*>(slab + {at('p4 * 4')}) = f;"]
        else:
            unpack = [*_unpack8("h", ty, f"reinterpret_cast<const uint4*>(x + base)[p4]"),
                      f"float4* sp = reinterpret_cast<float4*>(slab + {at('p4 * 8')});",
                      "sp[0] = make_float4(h0.x, h0.y, h1.x, h1.y); sp[1] = make_float4(h2.x, h2.y, h3.x, h3.y);"]
        read = ["  #pragma unroll 4", f"  for (int p4 = threadIdx.x; p4 < count / {w}; p4 += {threads}) {{",
                *("    " + u for u in unpack), "  }"]
        outs = [f"r{i}" for i in range(w)]
        vals = [f"v{i}" for i in range(w)]
        write = [
            f"  for (int p4 = threadIdx.x; p4 < count / {w}; p4 += {threads}) {{",
            f"    const float* sp = slab + {at(f'p4 * {w}')};",
            *(f"    const float4 sv{j} = reinterpret_cast<const float4*>(sp)[{j}];" for j in range(w // 4)),
            "    " + " ".join(f"const float {vals[i]} = sv{i // 4}.{'xyzw'[i % 4]};" for i in range(w)),
            f"    const int cb = (p4 * {w} / {n}) * {inner}, r = p4 * {w} % {inner};  // an item lies in one outer index",
            *(f"    float {outs[i]}; {{ const int c = cb + {f'(r + {i}) % {inner}' if i else 'r'}; const float v = {vals[i]}; "
              f"{outs[i]} = {out}; }}" for i in range(w)),
            (f"    reinterpret_cast<float4*>(y + base)[p4] = make_float4({', '.join(outs)});" if size == 4 else
             f"    reinterpret_cast<uint4*>(y + base)[p4] = {_pack8(outs, ty)};"),
            "  }",
        ]
        how = f", 16-byte items ({w} elements)"
    else:
        read = ["  #pragma unroll 4",
                f"  for (int p = threadIdx.x; p < count; p += {threads}) slab[{at('p')}] = {load('x[base + p]', t)};"]
        write = [
            f"  for (int p = threadIdx.x; p < count; p += {threads}) {{",
            f"    const int c = (p / {n}) * {inner} + p % {inner};",
            f"    const float v = slab[{at('p')}];",
            f"    y[base + p] = {store(out, t)};",
            "  }",
        ]
        how = ""
    body = [
        f"  __shared__ __align__(16) float slab[{m * stride}];  // {m} outer indices' elements, in order"
        + (f", {stride - n} floats after each" if stride > n else ""),
        f"  __shared__ float cm[{m * inner}], cv[{m * inner}];  // per column: the max, and 1 / sum or log(sum)",
        f"  const long long o0 = (long long)blockIdx.x * {m};",
        f"  const int count = (int)min({m}LL, {outer}LL - o0) * {n};",
        f"  const long long base = o0 * {n}LL;",
        *read,
        "  __syncthreads();",
        f"  for (int c = threadIdx.x / {q}; c < count / {cols}; c += {threads // q}) {{  // {q} threads per column",
        f"    const float* col = slab + (c / {inner}) * {stride} + (c % {inner});",
        "    float m = -RLX_INF;",
        f"    for (int k = threadIdx.x % {q}; k < {cols}; k += {q}) m = rlx_maxf(m, col[k * {inner}]);",
        f"    m = {red('m', 'RlxMax')};",
        "    const float mz = m == -RLX_INF ? 0.0f : m;",
        "    float s = 0.0f;",
        f"    for (int k = threadIdx.x % {q}; k < {cols}; k += {q}) s += expf(col[k * {inner}] - mz);",
        f"    s = {red('s', 'RlxSum')};",
        f"    if (threadIdx.x % {q} == 0) {{ cm[c] = mz; cv[c] = {'logf(s)' if log else '1.0f / s'}; }}",
        "  }",
        "  __syncthreads();",
        *write,
    ]
    src = [f"// row form: columns slab ({m} outer indices per block: {m} x {cols} x {inner} consecutive elements in "
           f"shared memory{f' ({stride - n} floats of padding each)' if stride > n else ''}, read and written in order{how}; "
           f"{q} thread{'s' if q > 1 else ''} per column)",
           f'extern "C" __global__ void __launch_bounds__({threads}) ENTRY({decl}) {{', *body, "}"]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, -(-outer // m), threads)


def _inner_slices(rows: Rows, most: int, elem_bytes: int) -> int:
    """Y of the columns form with a block's rows all of the inner axis (see
    COLUMN_INNER_ROWS), or 0 where it does not apply."""
    inner = rows.inner
    if not COLUMN_INNER_ROWS or not most or not _short_inner(rows, COLUMN_INNER_ROWS) \
            or inner * rows.cols * elem_bytes < COLUMN_INNER_MIN_BYTES:
        return 0
    y = max(-(-rows.cols // most), min(rows.cols, COLUMN_FORM_THREADS // inner, COLUMN_INNER_MAX_SLICES or rows.cols))
    return y if inner * y <= COLUMN_INNER_THREADS else 0


def _column_grid_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """The columns form split over C blocks (see COLUMN_GRID), or None where
    it does not apply."""
    rows = s.rows
    shape_ = column_grid_shape(rows, dtype(s.t).bytes, sm_count)
    if shape_ is None:
        return None
    x, y, c = shape_
    groups, slices = -(-rows.rows // x), c * y
    red = ColumnGridReducer(groups, c, x, y)
    body = _cached_columns(s, slices, red, "sl")
    e = -(-rows.cols // slices)
    src = [
        f"// row form: columns over blocks ({x} rows x {y} slices of the reduced axis per block, {c} blocks per "
        f"{x} rows, {e} element{'s' if e != 1 else ''} per slice held in registers)",
        *red.globals(),
        f'extern "C" __global__ void __launch_bounds__({x * y}{f", {COLUMN_GRID_MIN_BLOCKS}" if COLUMN_GRID_MIN_BLOCKS else ""}) '
        f'ENTRY({decl}) {{',
        "  __shared__ float smem[32];", *red.slots(),
        *_ticket("threadIdx.x == 0 && threadIdx.y == 0", groups * c, c, "  // tickets in the order blocks start"),
        f"  const long long g = g_at / {c};",
        f"  const long long r = min(g * {x} + threadIdx.x, {rows.rows - 1}LL);",
        f"  const long long base = {rows.row_base};",
        f"  const int sl = rank * {y} + threadIdx.y;  // this thread's slice, of {slices}",
        *("  " + b for b in body),
        "}",
    ]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, groups * c, (x, y, 1), co_resident=c)


def _column_packed_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """Softmax or log_softmax in the packed columns form (see COLUMN_PACKED),
    or None where it does not apply."""
    rows, ty = s.rows, dtype_name(s.t)
    size = dtype(s.t).bytes
    if s.softmax_log is None or s.prologue is not None or ty not in ("f32", "f16", "bf16") \
            or (shape_ := column_packed_shape(rows, size, sm_count)) is None:
        return None
    w, x, y, c = shape_
    raw, words = _RAW[COLUMN_PACKED_BYTES], COLUMN_PACKED_BYTES // 4
    parts = [""] if words == 1 else [f".{p}" for p in "xyzw"[:words]]
    packs, slices = rows.rows // w, c * y
    groups = -(-packs // x)
    e = -(-rows.cols // slices)
    approx = CACHED_APPROX and size == 2
    log = s.softmax_log
    if size == 4:
        vals = [f"__uint_as_float(q[j]{p})" for p in parts]
        unpack = ""
    else:
        unpack = " ".join(f"const float2 u{i} = rlx_ld2v_{ty}(q[j]{p});" for i, p in enumerate(parts)) + " "
        vals = [f"u{i // 2}.{'xy'[i % 2]}" for i in range(w)]
    lane = "sl" if c > 1 else "threadIdx.y"
    ms = f"RlxMSN<{w}>"
    part = f"ENTRY_part0 + g * {c * x * w}, ENTRY_arrived + g * 16, rank" if c > 1 else "nullptr, nullptr, 0"
    st = (f"rlx_column_ms_reduce<{y}, {c}, {w}>({ms}{{{{{', '.join(f'RlxMS{{m{i}, s{i}}}' for i in range(w))}}}}}, "
          f"col_slots, {part})")
    outs = [f"({v} - mr{i}) - ls{i}" if log else f"{_exp_of(f'{v} - mr{i}', approx)} * inv{i}"
            for i, v in enumerate(vals)]
    if size == 4:
        packed = [f"__float_as_uint({o})" for o in outs]
    else:
        packed = [f"rlx_st2_{ty}({outs[2 * i]}, {outs[2 * i + 1]})" for i in range(words)]
    item = packed[0] if words == 1 else f"make_{raw}({', '.join(packed)})"
    body = [
        f"const long long r = min(g * {x} + threadIdx.x, {packs - 1}LL) * {w};  "
        f"// this thread's {w} rows: r, r + 1, ...",
        f"const long long base = {rows.row_base};",
        f"{raw} q[{e}];  // this thread's slice of its {w} rows, in registers as loaded",
        *_slice_loop(rows, slices, f"q[j] = *reinterpret_cast<const {raw}*>(x + o);", True, lane),
        f"float {', '.join(f'm{i} = -RLX_INF' for i in range(w))};",
        *_slice_loop(rows, slices, unpack + " ".join(f"m{i} = rlx_maxf(m{i}, {v});" for i, v in enumerate(vals)),
                     lane=lane),
        *(f"const float mz{i} = m{i} == -RLX_INF ? 0.0f : m{i};  // all -inf: adds exp(-inf) = 0" for i in range(w)),
        f"float {', '.join(f's{i} = 0.0f' for i in range(w))};",
        *_slice_loop(rows, slices, unpack + " ".join(f"s{i} += {_exp_of(f'{v} - mz{i}', approx)};"
                                                     for i, v in enumerate(vals)), lane=lane),
        f"const {ms} st = {st};",
        *(f"const float mr{i} = st.a[{i}].m == -RLX_INF ? 0.0f : st.a[{i}].m, inv{i} = 1.0f / st.a[{i}].s, "
          f"ls{i} = logf(st.a[{i}].s);" for i in range(w)),
        *_slice_loop(rows, slices, f"{unpack}*reinterpret_cast<{raw}*>(y + o) = {item};", True, lane),
    ]
    over = f", {c} blocks per {x * w} rows" if c > 1 else ""
    bound = f", {COLUMN_PACKED_MIN_BLOCKS}" if COLUMN_PACKED_MIN_BLOCKS else ""
    src = [
        f"// row form: packed columns ({x} threads of {w} rows x {y} slices of the reduced axis per block{over}, "
        f"{e} items of {COLUMN_PACKED_BYTES} bytes per slice held in registers)",
        *(_ticket_globals(groups, "group of rows", groups * c * x * w, "[group][block][row]", ["RlxMS"])
          if c > 1 else []),
        f'extern "C" __global__ void __launch_bounds__({x * y}{bound}) ENTRY({decl}) {{',
        f"  __shared__ RlxMS col_slots[{x * y * w}];",
        *(_ticket("threadIdx.x == 0 && threadIdx.y == 0", groups * c, c, "  // tickets in the order blocks start")
          if c > 1 else []),
        f"  const long long g = {f'g_at / {c}' if c > 1 else 'blockIdx.x'};",
        *([f"  const int sl = rank * {y} + threadIdx.y;  // this thread's slice, of {slices}"] if c > 1 else []),
        *("  " + b for b in body),
        "}",
    ]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, groups * c, (x, y, 1), co_resident=c if c > 1 else 0)


def _exp_of(e: str, approx: bool) -> str:
    """exp(`e`) (an element less its row's max): as approximate 2^x with
    `approx` (results rounded to f16/bf16 only: CACHED_APPROX,
    STREAM_APPROX), else expf."""
    return f"rlx_ex2f(({e}) * 1.44269504f)" if approx else f"expf({e})"


def _column_grid_vector_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """Softmax or log_softmax in the columns form over blocks in 16-byte
    items (see COLUMN_GRID_VECTORS; lagged: COLUMN_GRID_VECTOR_LAG), or
    None where it does not apply."""
    rows, ty = s.rows, dtype_name(s.t)
    if s.softmax_log is None or s.prologue is not None or ty not in ("f32", "f16", "bf16"):
        return None
    vg = column_grid_vectors(rows, dtype(s.t).bytes, sm_count)
    if vg is None:
        return None
    tx, yy, held, v, w, c, f = vg.tx, vg.ty, vg.l, vg.v, vg.w, vg.c, vg.f
    subs, log, shared, lag = vg.subs, s.softmax_log, vg.shared, vg.lag
    a, inner = rows.cols, rows.inner
    groups = rows.rows // w
    items = held + shared
    span = yy * items  # positions a block takes
    approx = CACHED_APPROX and ty != "f32"
    vec = "float4" if ty == "f32" else "uint4"
    hints = lag and COLUMN_GRID_VECTOR_LAG_HINTS

    def item(j: int) -> str:  # item j: in registers, or in shared memory past `held`
        return f"q[{j}]" if j < held else f"qs[{(j - held) * tx * yy} + t]"

    def elems(j: int) -> tuple[list[str], list[str]]:  # the lines naming item j's elements, their names
        got = [] if j < held else [f"const {vec} u{j} = {item(j)};"]
        it = f"q[{j}]" if j < held else f"u{j}"
        if ty == "f32":
            return got, [f"{it}.{k}" for k in "xyzw"]
        return ([*got, " ".join(f"const float2 p{j}_{i} = rlx_ld2v_{ty}({it}.{k});" for i, k in enumerate("xyzw"))],
                [f"p{j}_{e // 2}.{'xy'[e % 2]}" for e in range(8)])

    guarded = a % span != 0
    def each(j: int, lines: list[str]) -> list[str]:  # `lines` for item j where its position is on the axis
        test = f"if (at + {j * yy} < {a}) " if guarded else ""
        return [f"  {test}{{ {' '.join(lines)} }}"]

    def fold(src_: str, count: str, step: str) -> str:  # RlxMS over `count` slots from src_, `step` apart, in order
        return (f"RlxMS st = rlx_ldcg({src_}); for (int b = 1; b < {count}; ++b) "
                f"st = RlxMSMerge()(st, rlx_ldcg({src_} + b * {step}));")

    def locate(at_: str) -> list[str]:  # group g, rank and this thread's first element of block `at_` of a launch
        return [
            f"  const long long g = {at_} / {c};",
            f"  const int rank = (int)({at_} % {c});",
            f"  const long long at = (long long)rank * {span} + threadIdx.y;  // this thread's first position",
            f"  const long long base = (g / {vg.chunks}) * {a * inner}LL + (g % {vg.chunks}) * {w} + threadIdx.x * {v} "
            f"+ at * {inner}LL;" if vg.chunks > 1 else
            f"  const long long base = g * {a * inner}LL + threadIdx.x * {v} + at * {inner}LL;",
        ]

    slot = lambda i: f"ENTRY_{i}"  # noqa: E731
    done = f"&{slot('arrived')}[({groups * subs + groups} + g) * 16]"  # the rows' statistics done, over all launches
    def loads(again: bool) -> list[str]:  # this thread's items into registers, all in flight at once (`again`:
        # the lagged form's second read, streamed with COLUMN_GRID_VECTOR_LAG_HINTS)
        def ld(at_: str) -> str:
            return f"__ldcs({at_})" if again and hints else f"*{at_}"
        return [f"  {vec} q[{held}];  // this thread's items, in registers",
                *(line for j in range(held)
                  for line in each(j, [f"q[{j}] = {ld(f'reinterpret_cast<const {vec}*>(x + base + {j * yy * inner}LL)')};"]))]

    stats = []
    for j in range(held, items):  # the shared ones first: copies in flight without registers
        stats += each(j, [f"rlx_cp_async16(&{item(j)}, x + base + {j * yy * inner}LL);"])
    stats += loads(False)
    if shared:
        stats += ["  rlx_cp_async_wait_all();  // this thread's own copies"]
    stats += [f"  float m[{v}], s[{v}];", "#pragma unroll", f"  for (int e = 0; e < {v}; ++e) {{ m[e] = -RLX_INF; s[e] = 0.0f; }}"]
    for j in range(items):
        lines, names = elems(j)
        stats += each(j, [*lines, *(f"m[{e}] = rlx_maxf(m[{e}], {n});" for e, n in enumerate(names))])
    stats += ["#pragma unroll",  # (m, s) of none or all -inf: (0, 0), then (-inf, 0) (s is 1 or more past that)
              f"  for (int e = 0; e < {v}; ++e) m[e] = m[e] == -RLX_INF ? 0.0f : m[e];  // all -inf: adds exp(-inf) = 0"]
    for j in range(items):
        lines, names = elems(j)
        stats += each(j, [*lines, *(f"s[{e}] += {_exp_of(f'{n} - m[{e}]', approx)};" for e, n in enumerate(names))])
    warp_ys = 32 // tx if COLUMN_GRID_VECTOR_SHUFFLE and 32 % tx == 0 and tx < 32 else 1  # positions a warp folds
    if warp_ys > 1:  # a warp's positions folded by shuffles first (lane = y % P x TX + x), then the warps' in order
        stats += [
            f"  // the block's (max, sum) of each row: each warp's {warp_ys} positions by shuffles, then slot e * TX + x "
            "of the warp's row",
            "#pragma unroll",
            f"  for (int e = 0; e < {v}; ++e) {{",
            "    RlxMS st{s[e] == 0.0f ? -RLX_INF : m[e], s[e]};",
            *(f"    st = RlxMSMerge()(st, rlx_shfl(st, {o}));" for o in (tx << k for k in range(warp_ys.bit_length() - 1))),
            f"    if (threadIdx.y % {warp_ys} == 0) red[(threadIdx.y / {warp_ys} * {v} + e) * {tx} + threadIdx.x] = st;",
            "  }",
        ]
    else:
        stats += [
            "  // the block's (max, sum) of each row: slot e * TX + x of position row y",
            "#pragma unroll",
            f"  for (int e = 0; e < {v}; ++e) red[(threadIdx.y * {v} + e) * {tx} + threadIdx.x] = "
            "RlxMS{s[e] == 0.0f ? -RLX_INF : m[e], s[e]};",
        ]
    stats += [
        "  __syncthreads();",
        f"  if (t < {w}) {{",
        f"    RlxMS st = red[t]; for (int b = 1; b < {yy // warp_ys}; ++b) st = RlxMSMerge()(st, red[b * {w} + t]);",
        f"    {slot('part0')}[(g * {c} + rank) * {w} + t] = st; __threadfence();",
        "  }",
        "  __syncthreads();",
        f"  const int sub = rank / {f};",
        f"  const int members = sub == {subs - 1} ? {c - (subs - 1) * f} : {f};",
        "  if (t == 0) {",
        f"    const unsigned long long n = atomicAdd(&{slot('arrived')}[(g * {subs} + sub) * 16], 1ull);",
        "    g_round = n / members; g_last = n % members == members - 1; __threadfence();",
        "  }",
        "  __syncthreads();",
        "  if (g_last) {  // the last of its group of blocks to arrive: fold theirs, in order of rank",
    ]
    final = slot("final") if subs == 1 else slot("part1")
    first = f"{slot('part0')} + (g * {c} + sub * {f}) * {w} + t"  # the group of blocks' first slot of row t
    groups_first = f"{slot('part1')} + g * {subs * w} + t"
    stats += [
        f"    if (t < {w}) {{ {fold(first, 'members', w)} {final}[(g * {subs} + sub) * {w} + t] = st; __threadfence(); }}",
        "    __syncthreads();",
    ]
    if subs > 1:
        stats += [
            "    if (t == 0) {",
            f"      g_last = atomicAdd(&{slot('arrived')}[({groups * subs} + g) * 16], 1ull) % {subs} == {subs - 1};",
            "      __threadfence();",
            "    }",
            "    __syncthreads();",
            "    if (g_last) {  // the last group: fold the groups', in order",
            f"      if (t < {w}) {{ {fold(groups_first, str(subs), w)} {slot('final')}[g * {w} + t] = st; __threadfence(); }}",
            "      __syncthreads();",
            f"      if (t == 0) atomicAdd({done}, 1ull);",
            "    }",
        ]
    else:
        stats += [f"    if (t == 0) atomicAdd({done}, 1ull);"]
    stats += ["  }"]

    def output(round_: str) -> list[str]:  # wait for the rows' statistics of this launch, write them
        out = [
            "  if (t == 0)  // wait for the rows' statistics of this launch",
            f"    rlx_wait_count({done}, {round_} + 1ull, 64);",
            "  __syncthreads();",
            f"  if (t < {w}) red[t] = rlx_ldcg({slot('final')} + g * {w} + t);",
            "  __syncthreads();",
            f"  float mo[{v}], so[{v}];",
            "#pragma unroll",
            f"  for (int e = 0; e < {v}; ++e) {{",
            f"    const RlxMS st = red[e * {tx} + threadIdx.x];",
            "    mo[e] = st.m; so[e] = logf(st.s);" if log else "    mo[e] = st.m; so[e] = 1.0f / st.s;",
            "  }",
        ]
        for j in range(items):
            lines, names = elems(j)
            if log:
                outs = [f"({n} - mo[{e}]) - so[{e}]" for e, n in enumerate(names)]
            else:  # x - max first, as the sum's terms were: fmaf(x, log2e, -fl(max * log2e)) leaves the rounding
                # of max * log2e in the exponent (half an ulp of 1.4e9 for a column of -1e9: 2^64 off)
                outs = [f"{_exp_of(f'{n} - mo[{e}]', approx)} * so[{e}]" for e, n in enumerate(names)]
            packed = f"make_float4({', '.join(outs)})" if ty == "f32" else _pack8(outs, ty)
            dst = f"reinterpret_cast<{vec}*>(y + base + {j * yy * inner}LL)"
            out += each(j, [*lines, f"__stcs({dst}, {packed});" if hints else f"*{dst} = {packed};"])
        return out

    counters = groups * subs + 2 * groups
    launch = groups * c + lag
    head = [
        *_ticket("threadIdx.x == 0 && threadIdx.y == 0", launch, note="  // in the order blocks start"),
        f"  const int t = threadIdx.y * {tx} + threadIdx.x;",
    ]
    if lag:  # block T takes the statistics of block T's items and writes those of block T - lag's
        body = [
            *head,
            f"  const unsigned long long g_launch = g_ticket / {launch}ull;",
            f"  if (g_at < {groups * c}) {{  // the statistics of this ticket's items (no wait)",
            *("  " + b for b in [*locate("g_at"), *stats]),
            "  }",
            f"  if (g_at >= {lag}) {{  // the output of ticket {lag} back's items: their group's blocks started "
            "earlier, read again (from L2)",
            *("  " + b for b in [*locate(f"(g_at - {lag})"), *loads(True), *output("g_launch")]),
            "  }",
        ]
    else:
        body = [*head, *locate("g_at"), *stats, *output("g_round")]
    how = (f"{held} items per thread read for the statistics, read again {lag} blocks later for the output"
           if lag else f"{held} items per thread held in registers" + (f" and {shared} in shared memory" if shared else ""))
    src = [
        f"// row form: columns over blocks in 16-byte items ({tx} threads of {v} rows x {yy} positions per block, "
        f"{c} blocks per {w} rows, {how}, met in groups of {f})",
        "__device__ unsigned long long ENTRY_ticket = 0;  // blocks started, over all launches",
        f"__device__ unsigned long long ENTRY_arrived[{counters * 16}] = {{}};  // arrivals per (group of rows, group of "
        "blocks), per group of rows, statistics done per group of rows (128 bytes apart), over all launches",
        f"__device__ RlxMS ENTRY_part0[{groups * c * w}];  // each block's: [group][block][row]",
        *([f"__device__ RlxMS ENTRY_part1[{groups * subs * w}];  // each group of blocks': [group][group of blocks][row]"]
          if subs > 1 else []),
        f"__device__ RlxMS ENTRY_final[{groups * w}];  // [group][row]",
        f'extern "C" __global__ void __launch_bounds__({tx * yy}, {vector_grid_blocks_per_sm()}) ENTRY({decl}) {{',
        f"  __shared__ RlxMS red[{yy * w}];",
        *([f"  __shared__ {vec} qs[{shared * tx * yy}];  // the thread's items past its registers' (item j at j x "
           f"{tx * yy} + t)"] if shared else []),
        "  __shared__ unsigned long long g_round;",
        "  __shared__ bool g_last;",
        *body,
        "}",
    ]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, launch, (tx, yy, 1), co_resident=0 if lag else c)


def _slices_to_hold(y: int, cols: int, most: int, run_bytes: int) -> int:
    """Y doubled, as far as COLUMN_FORM_MAX_SLICES and COLUMN_FORM_MIN_RUN_BYTES
    (`run_bytes` per thread) allow, until a slice of the `cols` elements holds
    at most `most`; 0 where it cannot."""
    while (-(-cols // y) > most and y < COLUMN_FORM_MAX_SLICES
           and COLUMN_FORM_THREADS // (2 * y) * run_bytes >= COLUMN_FORM_MIN_RUN_BYTES):
        y *= 2
    return y if -(-cols // y) <= most else 0


def _slice_loop(rows: Rows, y: int, stmt: str, at: bool = False, lane: str = "threadIdx.y") -> list[str]:
    """`stmt` for each element j of the slice `lane` of `y` holds (element
    k = lane + j · y of the axis; with `at` its offset `o` named too),
    guarded where `y` does not divide the axis."""
    e = -(-rows.cols // y)
    o = f"const long long o = base + ({rows.col_off}); " if at else ""
    if rows.cols % y and COLUMN_SLICE_PEEL:  # only the last element can be past the axis
        last = f"{{ const int j = {e - 1}; const long long k = {lane} + j * {y}; if (k < {rows.cols}LL) {{ {o}{stmt} }} }}"
        body = f"const long long k = {lane} + j * {y}; {{ {o}{stmt} }}" if at else stmt
        return [*(["#pragma unroll", f"for (int j = 0; j < {e - 1}; ++j) {{ {body} }}"] if e > 1 else []), last]
    held = f"if (k < {rows.cols}LL) " if rows.cols % y else ""
    body = f"const long long k = {lane} + j * {y}; {held}{{ {o}{stmt} }}" if held or at else stmt
    return ["#pragma unroll", f"for (int j = 0; j < {e}; ++j) {{ {body} }}"]


def _cached_columns(s: RowSpec, y: int, red: Reducer, lane: str = "threadIdx.y") -> list[str]:
    """The columns form's body with each thread's slice of the row (every
    `y`-th element from `lane`) held in registers: read once, the
    statistics from the registers (`merged` where the spec has it: one
    reduction over the slices), the output from them (see
    COLUMN_CACHED_ELEMS)."""
    rows, t = s.rows, s.t
    stats = s.merged if s.merged is not None and COLUMN_CACHED_MERGED else s.cached
    out = s.cached_out("v[j]", lambda c: load(f"{c}[k]", t))
    body = [f"float v[{-(-rows.cols // y)}];  // this thread's slice, in registers",
            *_slice_loop(rows, y, f"v[j] = {load('x[o]', t)};", True, lane)]
    for stat in stats:
        body += [*stat.init, *_slice_loop(rows, y, stat.add(["v[j]"]), lane=lane), *stat.done(red)]
    return [*body, *_slice_loop(rows, y, f"y[o] = {store(out, t)};", True, lane)]


def _paired_columns_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """Softmax in the columns form over f16/bf16 with each thread taking two
    neighbouring rows (4-byte accesses) and holding its slice of both in
    registers as f32 pairs (see COLUMN_PAIRED_ELEMS), or None where it does
    not apply."""
    rows, ty = s.rows, dtype_name(s.t)
    if not COLUMN_PAIRED_ELEMS or s.softmax_log is None or s.prologue is not None or ty not in ("f16", "bf16") \
            or rows.inner <= 0 or rows.inner % 2:
        return None
    y = _slices_to_hold(column_slices(rows, sm_count, 4), rows.cols, COLUMN_PAIRED_ELEMS, 4)  # 4-byte accesses
    if not y:
        return None
    e = -(-rows.cols // y)
    x = COLUMN_FORM_THREADS // y
    pairs = rows.rows // 2
    red = ColumnReducer(y, COLUMN_FORM_THREADS)
    log = s.softmax_log
    body = [
        f"  const long long r = min((long long)blockIdx.x * {x} + threadIdx.x, {pairs - 1}LL) * 2;",
        f"  const long long base = {rows.row_base};",
        f"  float2 v[{e}];  // this thread's slices of rows r and r + 1, in registers",
        *_slice_loop(rows, y, f"v[j] = rlx_ld2_{ty}(*reinterpret_cast<const unsigned int*>(x + o));", at=True),
        "  float m0 = -RLX_INF, m1 = -RLX_INF;",
        *_slice_loop(rows, y, "m0 = rlx_maxf(m0, v[j].x); m1 = rlx_maxf(m1, v[j].y);"),
        "  const float mz0 = m0 == -RLX_INF ? 0.0f : m0, mz1 = m1 == -RLX_INF ? 0.0f : m1;",
        "  float s0 = 0.0f, s1 = 0.0f;",
        *_slice_loop(rows, y, "v[j].x = v[j].x - mz0; s0 += expf(v[j].x); v[j].y = v[j].y - mz1; s1 += expf(v[j].y);"
                     if log else "v[j].x = expf(v[j].x - mz0); s0 += v[j].x; v[j].y = expf(v[j].y - mz1); s1 += v[j].y;"),
    ]
    for i in "01":
        st = red(f"RlxMS{{m{i}, s{i}}}", "RlxMSMerge", "RlxMS{-RLX_INF, 0.0f}", "ms_smem")
        body += [f"  const RlxMS st{i} = {st};",
                 f"  const float inv{i} = expf(m{i} - st{i}.m) / st{i}.s, ls{i} = logf(st{i}.s) + (st{i}.m - mz{i});"]
    out = ("v[j].x - ls0", "v[j].y - ls1") if log else ("v[j].x * inv0", "v[j].y * inv1")
    body += _slice_loop(rows, y, f"*reinterpret_cast<unsigned int*>(y + o) = rlx_st2_{ty}({out[0]}, {out[1]});", at=True)
    body = [line if line.startswith("  ") else "  " + line for line in body]
    src = [f"// row form: columns ({x} threads of 2 rows x {y} slices of the reduced axis per block, "
           f"{e} element pairs per slice held in registers)",
           f'extern "C" __global__ void __launch_bounds__({COLUMN_FORM_THREADS}) ENTRY({decl}) {{',
           *red.slots(), *body, "}"]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, -(-pairs // x), (x, y, 1))


def _vector_pass(rows: Rows, y: int, loads: int, vec: str, unpack: Callable[[str], list[str]], stmts: Sequence[str],
                 names: str = "", lo: str = "", hi: str = "") -> list[str]:
    """One pass of the 16-byte columns forms over the `vec` items (float4 or
    uint4) of the slice thread threadIdx.y of `y` takes: `loads` loads
    issued, then for each `unpack(item)` (its values) and `stmts`; with
    `loads` 0 a load and its statements per step. `names`: what `stmts` use
    besides the values, "k" (the element's index along the axis) and "o"
    (its offset). `lo` and `hi`: the axis' chunk (a split form's), from
    `lo` (an expression ending in " + ") up to `hi` (default: all of it)."""
    o = f"const long long o = base + ({rows.col_off});"
    hi = hi or f"{rows.cols}LL"
    if not loads:
        return ["  #pragma unroll 4", f"  for (long long k = {lo}threadIdx.y; k < {hi}; k += {y}) {{ {o}",
                *(f"    {line}" for line in unpack(f"*reinterpret_cast<const {vec}*>(x + o)")),
                *(f"    {line}" for line in stmts), "  }"]
    skip = ([f"const long long k = k0 + j * {y};", f"if (k >= {hi}) continue;", *([o] if "o" in names else [])]
            if names else [f"if (k0 + j * {y} >= {hi}) continue;"])
    return [
        f"  for (long long k0 = {lo}threadIdx.y; k0 < {hi}; k0 += {loads * y}) {{  // {loads} loads in flight",
        f"    {vec} raw[{loads}];",
        "    #pragma unroll",
        f"    for (int j = 0; j < {loads}; ++j) {{ const long long k = k0 + j * {y}; if (k < {hi}) {{ "
        f"{o} raw[j] = *reinterpret_cast<const {vec}*>(x + o); }} }}",
        "    #pragma unroll",
        f"    for (int j = 0; j < {loads}; ++j) {{",
        *(f"      {line}" for line in (*skip, *unpack("raw[j]"), *stmts)),
        "    }",
        "  }",
    ]


def _vector_unpack(ty: str) -> tuple[str, Callable[[str], list[str]], list[str]]:
    """The 16-byte item type of `ty` (f32, f16 or bf16), the lines naming an
    item's values, and the values' names."""
    if ty == "f32":
        return "float4", lambda item: [f"const float4 q = {item};"], [f"q.{c}" for c in "xyzw"]
    return "uint4", lambda item: _unpack8("f", ty, item), [_elem8("f", e) for e in range(8)]


def _column_vector_kernel(s: RowSpec, decl: str, bufs: list[Buf], sm_count: int) -> KernelSpec | None:
    """The columns form with 16-byte accesses over `w` neighbouring rows per
    thread (see COLUMN_VECTORS), or None where it does not apply."""
    rows, ty = s.rows, dtype_name(s.t)
    w = 16 // dtype(s.t).bytes
    if not COLUMN_VECTORS or s.streamed_at is None or s.prologue is not None \
            or ty not in (("f32", "f16", "bf16") if COLUMN_VECTORS_F32 else ("f16", "bf16")) \
            or rows.inner <= 0 or rows.inner % w:
        return None
    groups = rows.rows // w  # the rows a thread takes are neighbours: inner is a multiple of w
    y = _vector_slices(rows, groups, sm_count)
    if not y:
        return None
    x = COLUMN_FORM_THREADS // y
    red = ColumnReducer(y, COLUMN_FORM_THREADS)
    parts = [s.streamed_at(f"_{i}") for i in range(w)]
    vec, unpack, elems = _vector_unpack(ty)
    u = _batched_loads(COLUMN_VECTOR_LOADS, y, rows.cols, COLUMN_FORM_BATCH_SHARE)
    v = COLUMN_FORM_OUT_LOADS if y > 1 else 1
    outs = [out(e, lambda p: "") for (_, out), e in zip(parts, elems)]
    if ty == "f32":
        store = f"*reinterpret_cast<float4*>(y + o) = make_float4({', '.join(outs)});"
    else:
        store = f"*reinterpret_cast<uint4*>(y + o) = {_pack8(outs, ty)};"
    body = [
        f"  const long long r = min((long long)blockIdx.x * {x} + threadIdx.x, {groups - 1}LL) * {w};",
        f"  const long long base = {rows.row_base};",
        *(f"  {line}" for stat, _ in parts for line in stat.init),
        *_vector_pass(rows, y, u if u > 1 else 0, vec, unpack, [stat.add([e]) for (stat, _), e in zip(parts, elems)]),
        *(f"  {line}" for stat, _ in parts for line in stat.done(red)),
        *_vector_pass(rows, y, v if v > 1 else 0, vec, unpack, [store], "ko"),
    ]
    src = [f"// row form: columns ({x} threads of {w} rows x {y} slices of the reduced axis per block, "
           f"{w} elements per 16-byte access)",
           f'extern "C" __global__ void __launch_bounds__({COLUMN_FORM_THREADS}) ENTRY({decl}) {{',
           *red.slots(), *body, "}"]
    return KernelSpec(s.family, "\n".join(src) + "\n", bufs, -(-groups // x), (x, y, 1))


@dataclass(frozen=True)
class Fused:
    """A row op inside an `rlx.fusion`: its input computed by `prologue`;
    `outer` maps the body's values to the fusion's operands and results
    (the kernel's buffers)."""

    prologue: Prologue
    outer: Callable[[SSAValue], SSAValue]


def _row_bufs(x: SSAValue, fused: Fused | None) -> list[tuple[str, SSAValue, bool]]:
    """The buffers the row is read from: `x`, or the prologue's inputs."""
    if fused is None:
        return [("x", x, False)]
    return [(i.name, i.value, False) for i in fused.prologue.inputs]


def _out_bufs(y: SSAValue, fused: Fused | None) -> list[tuple[str, SSAValue, bool]]:
    """The prologue's extra outputs, then `y`."""
    extra = [] if fused is None else [(n, v, True) for n, v, _ in fused.prologue.outputs]
    return [*extra, ("y", y if fused is None else fused.outer(y), True)]


def softmax_kernel(op: rlx.SoftmaxOp | rlx.LogSoftmaxOp, sm_count: int, fused: Fused | None = None) -> KernelSpec:
    """Max-subtracted softmax / log_softmax along an axis: cached rows take
    the max, then the sum of exponentials; longer rows the online max and
    sum in one read (`RlxMS`). `fused`: the input comes from a prologue."""
    x, y = op.input, op.result
    rows = Rows.of(shape(x), [int_of(op.axis)])
    log = isinstance(op, rlx.LogSoftmaxOp)
    # exp of an element less the max (CACHED_APPROX: 2^x approximate, for 16-bit results)
    approx16 = CACHED_APPROX and dtype_name(eltype(y)) in ("f16", "bf16")
    ex = lambda a: _exp_of(a, approx16)  # noqa: E731
    cached = (
        each_stat("float m = -RLX_INF;", lambda v: f"m = rlx_maxf(m, {v});",
                  lambda red: f"m = {red('m', 'RlxMax', '-RLX_INF', 'smem')};"),
        each_stat("float s = 0.0f;",
                  (lambda v: f"{v} = {v} - m; s += {ex(v)};") if log else (lambda v: f"{v} = {ex(f'{v} - m')}; s += {v};"),
                  lambda red: f"s = {red('s', 'RlxSum', '0.0f', 'smem')};",
                  lambda red: "const float ls = logf(s), inv = 1.0f / s;"),
    )  # fmt: skip
    merged = (
        # a thread whose elements are all -inf (or that holds none) adds exp(-inf - 0) = 0
        each_stat("float m = -RLX_INF;", lambda v: f"m = rlx_maxf(m, {v});",
                  lambda red: "const float mz = m == -RLX_INF ? 0.0f : m;"),
        Stat(("__shared__ RlxMS ms_smem[32];", "float s = 0.0f;"),
             lambda vs: " ".join((f"{v} = {v} - mz; s += {ex(v)};" if log else f"{v} = {ex(f'{v} - mz')}; s += {v};")
                                 for v in vs),
             lambda red: (f"const RlxMS st = {red('RlxMS{m, s}', 'RlxMSMerge', 'RlxMS{-RLX_INF, 0.0f}', 'ms_smem')};",
                          "const float inv = expf(m - st.m) / st.s, ls = logf(st.s) + (st.m - mz);")),
    )  # fmt: skip
    def online_at(sfx: str, smem: str = "smem", approx: bool = False) -> tuple[Stat, Out]:
        """The online (max, sum) and the output with names ending in `sfx`
        (several rows per thread: the vector columns form); `approx`: the
        exponentials as approximate 2^x (`rlx_ms_add_n_afn`; results rounded
        to f16/bf16 only)."""
        st, m, ls, inv = f"st{sfx}", f"m{sfx}", f"ls{sfx}", f"inv{sfx}"
        stat = Stat((f"RlxMS {st} = {{-RLX_INF, 0.0f}};",),
                    lambda vs: (f"rlx_ms_add_n_afn({st}, {{{', '.join(vs)}}});" if approx and len(vs) > 1
                                else " ".join(f"rlx_ms_add({st}, {v});" for v in vs)),
                    lambda red: (f"{st} = {red(st, 'RlxMSMerge', 'RlxMS{-RLX_INF, 0.0f}', smem)};",
                                 f"const float {m} = {st}.m, {ls} = logf({st}.s), {inv} = 1.0f / {st}.s;"))
        if log:
            return stat, lambda v, p: f"({v} - {m}) - {ls}"
        return stat, lambda v, p: f"{_exp_of(f'{v} - {m}', approx)} * {inv}"  # x - max first, as rlx_ms_add_n_afn

    def shared(stat: Stat) -> Stat:
        """`stat` with the block reduction's shared slots declared."""
        return Stat(("__shared__ RlxMS ms_smem[32];", *stat.init), stat.add, stat.done)

    one, online_out = online_at("", "ms_smem")
    online = shared(one)
    fast, fast_out = online_at("", "ms_smem", approx=True)
    # the 16-bit row kept as it is (SOFTMAX_STORED_ROWS): the max, then the exponentials'
    # sum merged across threads (no element updated), the output's exponential again
    pure = (
        merged[0],
        Stat(("__shared__ RlxMS ms_smem[32];", "float s = 0.0f;"),
             lambda vs: " ".join(f"s += expf({v} - mz);" for v in vs),
             lambda red: (f"const RlxMS st = {red('RlxMS{m, s}', 'RlxMSMerge', 'RlxMS{-RLX_INF, 0.0f}', 'ms_smem')};",
                          "const float mr = st.m, inv = 1.0f / st.s, ls = logf(st.s);")),
    )  # fmt: skip
    stored = SOFTMAX_STORED_ROWS and dtype_name(eltype(x)) in ("f16", "bf16")
    spec = RowSpec(
        "softmax" if fused is None else "fused_softmax", rows, eltype(x), [*_row_bufs(x, fused), *_out_bufs(y, fused)],
        cached=cached, merged=merged,
        pure=pure if stored else None,
        pure_out=((lambda v, p: f"({v} - mr) - ls") if log else (lambda v, p: f"expf({v} - mr) * inv")) if stored else None,
        pure_in_smem=False,
        cached_out=(lambda v, p: f"{v} - ls") if log else (lambda v, p: f"{v} * inv"),
        # `pure` (a 16-bit row) only with SOFTMAX_STORED_ROWS and never in shared memory:
        # recomputing expf for the output cost more than the 16-bit row saved (H100, f16
        # rows of 32768: 56% of copy bandwidth against 63% with the f32 row in shared
        # memory; in the cluster form's registers see SOFTMAX_STORED_ROWS)
        streamed=online,
        streamed_out=online_out,
        streamed_afn=(shared(fast), fast_out),
        name_write=True, prologue=fused.prologue if fused is not None else None, streamed_at=online_at, softmax_log=log,
    )  # fmt: skip
    return row_kernel(spec, sm_count)


def residual_prologue(op: rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp) -> Fused:
    """The fused residual norms' row: x + residual, rounded to the element
    type (the sum is a result in its own type, and the statistics read it
    rounded), written to `sum` as it is computed."""
    x, t = op.input, eltype(op.input)
    ins = tuple(PrologueInput.of(n, v, shape(x), len(shape(op.gamma))) for n, v in (("x", x), ("res", op.residual)))
    p = Prologue(ins, lambda a: [f"const float e = {_round(t)}({a[0]} + {a[1]});"], "e", (("sum", op.sum, "e"),))
    return Fused(p, lambda v: v)


def norm_kernel(op: rlx.LayerNormOp | rlx.RmsNormOp | rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp, sm_count: int,
                fused: Fused | None = None) -> KernelSpec:
    """layer_norm / rms_norm over gamma's trailing axes, f32 statistics:
    two-pass variance for cached rows, Welford's for longer rows; the fused
    residual forms also write x + residual (a prologue, as `fused` gives one
    for a norm inside an `rlx.fusion`). The trailing axes are contiguous, so
    the column is also gamma's linear index."""
    x = op.input
    t = eltype(x)
    nd = len(shape(op.gamma))
    rows = Rows.of(shape(x), list(range(len(shape(x)) - nd, len(shape(x)))))
    layer = isinstance(op, rlx.LayerNormOp | rlx.FusedResidualLayerNormOp)
    residual = isinstance(op, rlx.FusedResidualLayerNormOp | rlx.FusedResidualRmsNormOp)
    if residual:
        fused = residual_prologue(op)  # pyright: ignore[reportArgumentType]
    eps = literal(float_of(op.eps), t)
    n = f"{rows.cols}.0f"
    outer = fused.outer if fused is not None else (lambda v: v)
    bufs = _row_bufs(x, fused)
    bufs.append(("g", outer(op.gamma), False))
    if layer:
        bufs.append(("b", outer(op.beta), False))  # pyright: ignore
    bufs += _out_bufs(op.normed if residual else op.result, fused)  # pyright: ignore

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
        pure = (
            cached[0],
            each_stat("float q = 0.0f;", lambda v: f"{{ const float d_ = {v} - mean; q += d_ * d_; }}",
                      lambda red: f"const float inv = rsqrtf({red('q', 'RlxSum', '0.0f', 'smem')} / {n} + {eps});"),
        )
        # MERGED_STATS: each thread's count, mean and squared deviations from that mean over its
        # own elements, merged over the row's threads in one reduction (Chan et al.'s pairwise
        # update, RlxWelfordMerge); no element updated
        merged = (
            each_stat("float s = 0.0f, cn = 0.0f;", lambda v: f"s += {v}; cn += 1.0f;",
                      lambda red: "const float lm = cn > 0.0f ? s / cn : 0.0f;"),
            each_stat("__shared__ RlxWelford w_smem[32]; float q = 0.0f;",
                      lambda v: f"{{ const float d_ = {v} - lm; q += d_ * d_; }}",
                      lambda red: "const RlxWelford st = " + red("RlxWelford{cn, lm, q}", "RlxWelfordMerge",
                                                                   "RlxWelford{0.0f, 0.0f, 0.0f}", "w_smem") + ";",
                      lambda red: f"const float mean = st.mean, inv = rsqrtf(st.m2 / {n} + {eps});"),
        )
        spec = RowSpec(
            "norm", rows, t, bufs, cached=cached,
            cached_out=lambda v, p: f"{v} * inv * {p('g')} + {p('b')}",
            merged=merged if MERGED_NORM_STATS else None, merged_pure=True,
            merged_out=lambda v, p: f"({v} - mean) * inv * {p('g')} + {p('b')}",
            pure=pure, pure_out=lambda v, p: f"({v} - mean) * inv * {p('g')} + {p('b')}",
            streamed=welford,
            streamed_out=lambda v, p: f"({v} - mean) * inv * {p('g')} + {p('b')}",
            prologue=fused.prologue if fused else None, columns=("g", "b"), name_read=True, norm="layer",
        )  # fmt: skip
    else:
        stats, out = (sum_of_squares("q"),), (lambda v, p: f"{v} * inv * {p('g')}")
        spec = RowSpec(
            "norm", rows, t, bufs, cached=stats, cached_out=out,
            pure=stats, pure_out=out,  # the statistics update nothing
            streamed=sum_of_squares("q"), streamed4=sum_of_squares("ss"),  # q names the float4 there
            streamed_out=out,
            prologue=fused.prologue if fused else None, columns=("g",), name_read=True, norm="rms",
        )  # fmt: skip
    return row_kernel(spec, sm_count)

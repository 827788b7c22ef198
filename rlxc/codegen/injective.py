"""Injective kernels: each output element is one input element, moved.
`transpose`, `expand`, `slice`, `concat` and `gather` (numpy.take) map each
output index to its source index with baked-in strides.

They share the elementwise kernels' one-trip shape (`moves`): each thread
moves UNROLL items of the output (more where they are narrow:
`unroll_for`), all loads issued before any store. An
item is a vector of up to 16 bytes (8 f16, 4 f32) wherever the innermost
axis keeps its run in both tensors and the run's length allows (the head
transpose [b, s, h, d] -> [b, h, s, d] moves each d-run as 16-byte
vectors); the index arithmetic is then done in vectors, as if the
innermost axis were that many times shorter. A transpose that changes the
innermost axis goes through a padded 32x32 shared-memory tile, so reads
and writes are both coalesced (`transpose_tiled`). Elements of up to
STAGED_MAX_BYTES moved one at a time (rows no vector divides) are written
as 16-byte vectors through shared memory (`_staged`), or, for the
families in STAGED_RUNS (gathers, concats), read as a run of 16 bytes a
thread and packed in registers (a gather's run reads each of the two
output rows it may span's id once). The form is named in a comment line of
the source.

`injective` (a grid-stride loop writing `y[i]`) remains for the indexing
kernels (rlxc/codegen/indexing.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from rlxc.codegen.common import (
    THREADS,
    Buf,
    KernelSpec,
    eltype,
    grid_for,
    index_expr,
    int_of,
    ints,
    numel,
    params_decl,
    shape,
    strides,
)
from rlxc.codegen.cuda_c import storage_type
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype

#: Items (vectors or elements) each thread of a one-trip kernel moves.
UNROLL = 4
#: ... or more where the items are narrow: enough that a thread has at least
#: MIN_THREAD_BYTES in flight (f16/bf16 moved an element at a time, rows
#: whose length no vector divides: 8 items; 0: UNROLL always).
MIN_THREAD_BYTES = 16


def unroll_for(item_bytes: int) -> int:
    """Items per thread of a one-trip kernel moving items of `item_bytes`."""
    return max(UNROLL, MIN_THREAD_BYTES // item_bytes) if MIN_THREAD_BYTES else UNROLL
#: Threads per block of a one-trip kernel.
BLOCK_THREADS = 256

#: The unsigned type of one access of 2, 4, 8 or 16 bytes.
_RAW = {2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}


def _item_type(t, vw: int) -> str:
    """The C type of one item of `vw` elements of `t`: the element's storage
    type, or the unsigned vector of that many bytes."""
    return storage_type(t) if vw == 1 else _RAW[vw * dtype(t).bytes]


def unpack_item(item: str, dst: str, vw: int, t, tmp: str = "q") -> list[str]:
    """Statements setting floats `dst[0 .. vw)` from `item`, an access of
    `vw` elements of float type `t` (an unsigned int, uint2 or uint4 of f32
    words, or of f16/bf16 pairs converted two at a time through a float2
    `tmp`)."""
    size = dtype(t).bytes
    words = vw * size // 4
    comps = [f".{c}" for c in "xyzw"[:words]] if words > 1 else [""]
    if size == 4:
        return [f"{dst}[{w}] = __uint_as_float({item}{comp});" for w, comp in enumerate(comps)]
    name = dtype(t).name
    return [f"{{ const float2 {tmp} = rlx_ld2_{name}({item}{comp}); {dst}[{2 * w}] = {tmp}.x; {dst}[{2 * w + 1}] = {tmp}.y; }}"
            for w, comp in enumerate(comps)]


def pack_item(src: str, vw: int, t) -> str:
    """The access (unsigned int, uint2 or uint4) holding floats `src[0 ..
    vw)` stored as float type `t` (f16/bf16 rounded two at a time)."""
    size = dtype(t).bytes
    words = vw * size // 4
    if size == 4:
        ws = [f"__float_as_uint({src}[{w}])" for w in range(words)]
    else:
        ws = [f"rlx_st2_{dtype(t).name}({src}[{2 * w}], {src}[{2 * w + 1}])" for w in range(words)]
    return ws[0] if words == 1 else f"make_uint{words}({', '.join(ws)})"


def injective(family: str, out: SSAValue, ins: list[tuple[str, SSAValue]], expr_lines: list[str], sm_count: int) -> KernelSpec:
    """A grid-stride loop over the output's linear index `i`: `expr_lines`
    write `y[i]` from the inputs `ins` (name, tensor)."""
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


# --------------------------------------------------------------------------- the one-trip form


def vector_elems(bytes_: int, dims: Sequence[int]) -> int:
    """Elements per item: the widest access of 16, 8 or 4 bytes (at least 2
    elements) whose element count divides every extent in `dims` (the
    innermost runs of the tensors involved); 1 if none does."""
    for size in (16, 8, 4):
        vw = size // bytes_
        if vw >= 2 and all(d % vw == 0 for d in dims):
            return vw
    return 1


def vshape(s: Sequence[int], vw: int) -> tuple[int, ...]:
    """A shape in items of `vw` elements along its innermost axis."""
    return (*s[:-1], s[-1] // vw) if vw > 1 else tuple(s)


#: (C index type, constant suffix): 32-bit unsigned while every index fits.
Index = tuple[str, str]


def index_kind(values: Sequence[SSAValue], signed: bool = False) -> Index:
    big = max(numel(shape(v)) for v in values) + 8 * BLOCK_THREADS * max(UNROLL, MIN_THREAD_BYTES) >= 2**31
    return ("long long", "LL") if big or signed else ("unsigned", "u")


#: One-trip kernels moving elements of at most this many bytes one at a
#: time (rows no vector divides: odd slices, gathers, concats, batched
#: copies of odd runs) write 16-byte vectors instead (`_staged`): each warp
#: reads its elements a lane each, as before, puts them in shared memory and
#: writes them back out 16 bytes a lane. 0: element stores always. H200
#: (session 44, `variant.py injective.STAGED_MAX_BYTES=0,2 -- --ops
#: slice,gather,concat --rows 77,197,1001,4097 --dtypes f16,bf16 --sizes
#: 64,512`, then `=2,4` with f32): 16-bit slices +1-8.5% (f16 of 4097 at 64
#: MiB 22.9 -> 21.1 µs), gathers of 77 +7-9% (78.0 -> 71.3), concats within
#: -1.6% .. +0.9%; f32 gathers of 77 +13-14% (53.2 -> 47.0), of 197 +7-8%,
#: of 4097 -1.5%, slices and concats within -0.6% .. +1.5%. ncu (f16 slice
#: of 4097): L2 throughput 80% at 55% of DRAM's, as before. 32 bytes a
#: thread (STAGED_THREAD_BYTES) was -3.6% .. +2.6%; gathers of 1001 and 4097
#: in this form rather than `_gather_rows` 23-39% slower.
STAGED_MAX_BYTES = 4
#: The staged form's bytes per thread (rounded to whole 16-byte vectors).
STAGED_THREAD_BYTES = 16
#: The families (kernel names) whose staged moves read each thread's 16
#: bytes of output as a run, element by element, packed into words in
#: registers (no shared memory; TorchInductor's layout), not a lane each; a
#: gather's run reads the id of each of the two rows it may span once
#: rather than an element's. H200 (session 45, `variant.py
#: injective.STAGED_RUNS=False,True -- --ops gather,slice,concat --rows
#: 77,197,1001,4097 --dtypes f32,f16,bf16 --sizes 64,512`, all three
#: families then): gathers +2.8% .. +24.5% (16-bit rows of 197 49.9 against
#: 58.6 µs at 64 MiB), 16-bit concats +0.1% .. +10.5% (rows of 77 44.2 -> 40.1),
#: f32 concats -1.5% .. +2.5%; slices lost 16-bit -0.9% .. -10.5% (their
#: lanes each read a run of 16 bytes: more L1 wavefronts) and keep a lane
#: an element. With them 16-bit gathers of rows of 1001 and 4097 are 4.4%
#: to 21.8% faster than in session 36's row form (a block per output row
#: and chunk, removed; bf16 of 1001 at 64 MiB 52.5 -> 43.2 µs), and of
#: 32768 within 0.5% (`variant.py injective.GATHER_ROW_MIN_ITEMS=256,0`).
STAGED_RUNS: tuple[str, ...] = ("gather", "concat")
#: ... and their bytes per thread (two runs of 16 bytes). H200 (session 45,
#: `variant.py injective.STAGED_THREAD_BYTES=16,32 -- --ops gather,concat
#: --rows 77,197,1001,4097 --dtypes f32,f16,bf16 --sizes 64,512`, both
#: families in runs): gathers +0.2% .. +12.6% (bf16 of 1001 at 512 MiB 354.9
#: -> 315.3 µs, f32 of 4097 296.3 -> 272.6), concats -1.2% .. +6.2% (f32
#: of 1001 and 4097 -1.2% at 64 MiB, 16-bit of 1001 +6% at 512).
STAGED_RUN_BYTES = 32


def _words(c: str, g: int, v: str = "v") -> list[str]:
    """The four 32-bit words of `g` elements `v[0 .. g)` of C storage type
    `c` (16 bytes), low element first."""
    per = g // 4
    if per == 1:
        return [f"__float_as_uint({v}[{w}])" if c == "float" else f"(unsigned)({v}[{w}])" for w in range(4)]
    bits = 32 // per
    return [" | ".join(f"((unsigned){v}[{w * per + k}] << {k * bits})" if k else f"(unsigned){v}[{w * per}]"
                       for k in range(per)) for w in range(4)]


def _reads(count: int, first: str, n: int, lines: Callable[[Index], list[str]], idx: Index,
           pad: str = "  ") -> list[str]:
    """The unrolled loop setting `v[u]` for u < `count`: index `i` =
    `first` (in terms of u), `lines(idx)` where it is under `n`."""
    idx_t, sfx = idx
    return [f"{pad}#pragma unroll",
            f"{pad}for (int u = 0; u < {count}; ++u) {{",
            f"{pad}  const {idx_t} i = {first};",
            f"{pad}  if (i < {n}{sfx}) {{",
            *(f"{pad}    {line}" for line in lines(idx)),
            f"{pad}  }}",
            f"{pad}}}"]


def _store(vector: str, k: str, element: str, g: int, n: int, idx: Index) -> list[str]:
    """The staged forms' store of the `g` output elements from `e` as one
    16-byte `vector`, or, for a partial last vector, element by element
    (`element` in terms of the loop variable `k`); then the ends of the
    loop over runs and of the kernel."""
    sfx = idx[1]
    out = [f"    if (e + {g}{sfx} <= {n}{sfx}) *reinterpret_cast<uint4*>(y + e) = {vector};"]
    if n % g:
        out.append(f"    else if (e < {n}{sfx}) for (int {k} = 0; {k} < {n % g}; ++{k}) y[e + {k}] = {element};")
    return out + ["  }", "}"]


def moves(family: str, out: SSAValue, ins: list[tuple[str, SSAValue]], lines: Callable[[Index], list[str]],
          form: str, vw: int = 1, idx: Index = ("unsigned", "u"), vector_ins: Sequence[str] = ("x",),
          run: Callable[[Index, int], list[str]] | None = None) -> KernelSpec:
    """The one-trip kernel: each thread sets `v[u]`, the output item `i`,
    for UNROLL items (`lines(idx)`, in items of `vw` elements: the inputs
    named in `vector_ins` are seen as arrays of items), then stores them.
    Elements of up to STAGED_MAX_BYTES moved one at a time: the staged form
    (`run`, where given, sets a run of elements in its runs variant)."""
    if vw == 1 and dtype(eltype(out)).bytes <= STAGED_MAX_BYTES and numel(shape(out)) >= 16:
        return _staged(family, out, ins, lines, form, idx, run)
    idx_t, sfx = idx
    n = numel(shape(out)) // vw
    t = eltype(out)
    item = _item_type(t, vw)
    unroll = unroll_for(vw * dtype(t).bytes)
    vec = [name for name, _ in ins if name in vector_ins] + ["y"] if vw > 1 else []
    decl = params_decl([(f"{name}_" if name in vec else name, v, False) for name, v in ins]
                       + [("y_" if vec else "y", out, True)])
    src = [f"// injective form: {form}" + (f", {vw} elements per {vw * dtype(t).bytes}-byte item" if vw > 1 else ", one element per item")
           + f", {unroll} items per thread"]
    src.append(f'extern "C" __global__ void __launch_bounds__({BLOCK_THREADS}) ENTRY({decl}) {{')
    for name in vec:
        const = "" if name == "y" else "const "
        src.append(f"  {const}{item}* __restrict__ {name} = reinterpret_cast<{const}{item}*>({name}_);")
    src.append(f"  const {idx_t} i0 = ({idx_t})blockIdx.x * {BLOCK_THREADS * unroll}{sfx} + threadIdx.x;")
    src.append(f"  {item} v[{unroll}];")
    src += _reads(unroll, f"i0 + u * {BLOCK_THREADS}{sfx}", n, lines, idx)
    src.append("  #pragma unroll")
    src.append(f"  for (int u = 0; u < {unroll}; ++u) {{")
    src.append(f"    const {idx_t} i = i0 + u * {BLOCK_THREADS}{sfx};")
    src.append(f"    if (i < {n}{sfx}) y[i] = v[u];")
    src.append("  }")
    src.append("}")
    params: list[Buf | int] = [Buf(v) for _, v in ins] + [Buf(out, True)]
    return KernelSpec(family, "\n".join(src) + "\n", params, -(-n // (BLOCK_THREADS * unroll)), BLOCK_THREADS)


def _staged(family: str, out: SSAValue, ins: list[tuple[str, SSAValue]], lines: Callable[[Index], list[str]],
            form: str, idx: Index, run: Callable[[Index, int], list[str]] | None = None) -> KernelSpec:
    """`moves` for elements of up to STAGED_MAX_BYTES: warp w of the block
    reads elements `e0 + u * 32 + lane` (`lines(idx)` with `i` an element
    index, coalesced as in `moves`), puts them in its slice of a
    shared-memory stage, and after `__syncwarp` writes its span of the
    output as 16-byte vectors, a lane each (the output is contiguous and its
    buffer 16-byte aligned); a partial last vector is written element by
    element. For the families in STAGED_RUNS each thread instead reads runs
    of g elements from `e` (`run(idx, g)` where given, else `lines` an
    element at a time) and writes each run as a vector packed in registers
    (`_words`), with no shared memory."""
    idx_t, sfx = idx
    t = eltype(out)
    size = dtype(t).bytes
    n = numel(shape(out))
    g = 16 // size  # elements per 16-byte vector
    runs = family in STAGED_RUNS
    per = max(1, (STAGED_RUN_BYTES if runs else STAGED_THREAD_BYTES) // 16) * g  # elements per thread
    span = 32 * per  # elements per warp
    c = storage_type(t)
    decl = params_decl([(name, v, False) for name, v in ins] + [("y", out, True)])
    params: list[Buf | int] = [Buf(v) for _, v in ins] + [Buf(out, True)]
    grid = -(-n // (BLOCK_THREADS * per))
    if runs:
        src = [f"// injective form: {form}, staged: {per} elements per thread read {g} at a time in a run, "
               f"written as 16-byte vectors packed in registers",
               f'extern "C" __global__ void __launch_bounds__({BLOCK_THREADS}) ENTRY({decl}) {{',
               f"  const {idx_t} e0 = ({idx_t})blockIdx.x * {BLOCK_THREADS * per}{sfx} + threadIdx.x * {g}{sfx};",
               "  #pragma unroll",
               f"  for (int r = 0; r < {per // g}; ++r) {{",
               f"    const {idx_t} e = e0 + r * {BLOCK_THREADS * g}{sfx};",
               f"    {c} v[{g}];",
               *(["    " + line for line in run(idx, g)] if run else _reads(g, "e + u", n, lines, idx, "    ")),
               *_store(f"make_uint4({', '.join(_words(c, g))})", "u", "v[u]", g, n, idx)]
        return KernelSpec(family, "\n".join(src) + "\n", params, grid, BLOCK_THREADS)
    src = [f"// injective form: {form}, staged: {per} elements per thread read a lane each, written as "
           f"16-byte vectors ({g} elements) through shared memory",
           f'extern "C" __global__ void __launch_bounds__({BLOCK_THREADS}) ENTRY({decl}) {{',
           f"  __shared__ __align__(16) {c} stage[{BLOCK_THREADS * per}];",
           "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
           f"  const {idx_t} e0 = ({idx_t})blockIdx.x * {BLOCK_THREADS * per}{sfx} + ({idx_t})warp * {span}{sfx};",
           f"  {c}* __restrict__ s = stage + warp * {span};",
           f"  {c} v[{per}];",
           *_reads(per, f"e0 + u * 32{sfx} + lane", n, lines, idx),
           "  #pragma unroll",
            f"  for (int u = 0; u < {per}; ++u) s[u * 32 + lane] = v[u];",
            "  __syncwarp();",
            "  #pragma unroll",
            f"  for (int r = 0; r < {per // g}; ++r) {{",
            f"    const {idx_t} e = e0 + (r * 32 + lane) * {g}{sfx};",
            f"    const int at = (r * 32 + lane) * {g};",
            *_store("*reinterpret_cast<const uint4*>(s + at)", "k", "s[at + k]", g, n, idx)]
    return KernelSpec(family, "\n".join(src) + "\n", params, grid, BLOCK_THREADS)


# --------------------------------------------------------------------------- transpose


def coalesce(xs: Sequence[int], perm: Sequence[int]) -> tuple[list[int], list[int]]:
    """The same transpose with fewer axes: size-1 axes dropped, and input
    axes that stay adjacent (and in order) in the output merged."""
    keep = [a for a in range(len(xs)) if xs[a] != 1]
    renum = {a: k for k, a in enumerate(keep)}
    p = [renum[a] for a in perm if a in renum]
    s = [xs[a] for a in keep]
    groups: list[list[int]] = []  # runs of input axes, in output order
    for a in p:
        if groups and groups[-1][-1] + 1 == a:
            groups[-1].append(a)
        else:
            groups.append([a])
    order = sorted(range(len(groups)), key=lambda g: groups[g][0])  # groups in input order
    new_shape = [numel([s[a] for a in groups[g]]) for g in order]
    rank_of = {g: k for k, g in enumerate(order)}
    return new_shape, [rank_of[g] for g in range(len(groups))]


def _coord(i: str, k: int, s: Sequence[int], sfx: str) -> str:
    """Axis k's coordinate of linear index `i` in a row-major tensor of shape `s`."""
    st = strides(s)
    c = f"({i} / {st[k]}{sfx})" if st[k] != 1 else i
    return c if k == 0 else f"({c} % {s[k]}{sfx})"


def _tiled(op: rlx.TransposeOp, xs: list[int], perm: list[int], sm_count: int) -> KernelSpec:
    """A transpose that changes the innermost axis: a block per 32x32 tile of
    (input axis q, the input's innermost axis), where q is the axis that
    becomes the output's innermost; read along the input's innermost axis,
    written along the output's, through a padded shared-memory tile. The
    other axes index the tile's batch."""
    r = len(xs)
    q = perm[-1]
    p = perm.index(r - 1)  # where the input's innermost axis goes
    ys = [xs[a] for a in perm]
    xst, yst = strides(xs), strides(ys)
    batch_axes = [a for a in range(r) if a not in (q, r - 1)]
    bshape = [xs[a] for a in batch_axes]
    tq, tc = -(-xs[q] // 32), -(-xs[r - 1] // 32)
    tiles = tq * tc * numel(bshape)
    idx_t, sfx = index_kind([op.input])
    c = storage_type(eltype(op.input))
    tile_t = c if dtype(eltype(op.input)).bytes >= 4 else "unsigned int"  # 4-byte banks: no 2-way conflicts
    cast = f"({c})" if tile_t != c else ""
    decl = params_decl([("x", op.input, False), ("y", op.result, True)])
    xbase, ybase = [], []
    for k, a in enumerate(batch_axes):
        co = _coord("b", k, bshape, sfx)
        xbase.append(f"{co} * {xst[a]}{sfx}")
        ybase.append(f"{co} * {yst[perm.index(a)]}{sfx}")
    src = [f"// injective form: tiled transpose, 32x32 tiles of axes ({q}, {r - 1}) of {'x'.join(map(str, xs))} "
           "through shared memory, one tile per block"]
    src += [
        f'extern "C" __global__ void __launch_bounds__(256) ENTRY({decl}) {{',
        f"  __shared__ {tile_t} tile[32][33];",
        f"  const {idx_t} t = blockIdx.x;",
        f"  const {idx_t} b = t / {tq * tc}{sfx}, r0 = (t / {tc}{sfx}) % {tq}{sfx} * 32{sfx}, c0 = t % {tc}{sfx} * 32{sfx};",
        f"  const {idx_t} xb = {' + '.join(xbase) if xbase else '0'}, yb = {' + '.join(ybase) if ybase else '0'};",
        "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;",
        "  #pragma unroll",
        "  for (int j = ty; j < 32; j += 8) {",
        f"    const {idx_t} row = r0 + j, col = c0 + tx;",
        f"    if (row < {xs[q]}{sfx} && col < {xs[r - 1]}{sfx}) tile[j][tx] = x[xb + row * {xst[q]}{sfx} + col];",
        "  }",
        "  __syncthreads();",
        "  #pragma unroll",
        "  for (int j = ty; j < 32; j += 8) {",
        f"    const {idx_t} col = c0 + j, row = r0 + tx;",
        f"    if (row < {xs[q]}{sfx} && col < {xs[r - 1]}{sfx}) y[yb + col * {yst[p]}{sfx} + row] = {cast}tile[tx][j];",
        "  }",
        "}",
    ]
    return KernelSpec("transpose_tiled", "\n".join(src) + "\n", [Buf(op.input), Buf(op.result, True)], tiles)


def transpose_kernel(op: rlx.TransposeOp, sm_count: int) -> KernelSpec:
    """The permutation with size-1 axes dropped and axes that stay adjacent
    merged (`coalesce`): none left to move is a copy; an unchanged innermost
    axis a batched copy of its runs, as vectors where the run's length
    allows; otherwise the tiled transpose."""
    xs, perm = coalesce(shape(op.input), ints(op.perm))
    r = len(xs)
    if r >= 2 and perm[-1] != r - 1:
        return _tiled(op, xs, perm, sm_count)
    t = eltype(op.input)
    if r <= 1:  # the layout does not change: a copy
        n = numel(xs)
        vw = vector_elems(dtype(t).bytes, [n])
        return moves("transpose", op.result, [("x", op.input)], lambda idx: ["v[u] = x[i];"],
                     "copy (the layout does not change)", vw, index_kind([op.input]))
    vw = vector_elems(dtype(t).bytes, [xs[-1]])
    vx = vshape(xs, vw)
    vy = [vx[a] for a in perm]
    xst = strides(vx)

    def lines(idx: Index) -> list[str]:
        return [f"v[u] = x[{index_expr('i', vy, vy, [xst[a] for a in perm], suffix=idx[1])}];"]

    form = f"batched copy of runs of {xs[-1]} contiguous elements, {'x'.join(map(str, xs))} permuted by {perm}"
    return moves("transpose", op.result, [("x", op.input)], lines, form, vw, index_kind([op.input]))


# --------------------------------------------------------------------------- expand, slice, concat, gather


def expand_kernel(op: rlx.ExpandOp, sm_count: int) -> KernelSpec:
    """A materialised broadcast (a fused one needs none): items of the
    innermost axis where it is not broadcast."""
    xs, ys = shape(op.input), shape(op.result)
    t = eltype(op.input)
    inner_kept = len(xs) > 0 and xs[-1] == ys[-1] and ys[-1] > 1
    vw = vector_elems(dtype(t).bytes, [ys[-1]]) if inner_kept else 1
    vx, vy = vshape(xs, vw), vshape(ys, vw)

    def lines(idx: Index) -> list[str]:
        return [f"v[u] = x[{index_expr('i', vy, vx, suffix=idx[1])}];"]

    form = "broadcast copy" + (" of innermost runs" if vw > 1 else "")
    return moves("expand", op.result, [("x", op.input)], lines, form, vw, index_kind([op.input, op.result]))


def slice_kernel(op: rlx.SliceOp, sm_count: int) -> KernelSpec:
    """Strided slice: a base offset plus the steps folded into the strides;
    items where the innermost axis is sliced with step 1 at a multiple of
    their width."""
    xs, ys = shape(op.input), shape(op.result)
    starts, steps = ints(op.starts), ints(op.steps)
    t = eltype(op.input)
    vw = 1
    if xs and steps[-1] == 1:
        vw = vector_elems(dtype(t).bytes, [xs[-1], ys[-1], starts[-1]] if starts[-1] else [xs[-1], ys[-1]])
    vx, vy = vshape(xs, vw), vshape(ys, vw)
    vstarts = [*starts[:-1], starts[-1] // vw] if xs else []
    xst = strides(vx)
    base = sum(s * st for s, st in zip(vstarts, xst))
    idx = index_kind([op.input, op.result], signed=any(s < 0 for s in steps))

    def lines(idx: Index) -> list[str]:
        sfx = idx[1]
        expr = index_expr("i", vy, vy, [st * step for st, step in zip(xst, steps)], suffix=sfx)
        return [f"v[u] = x[{base}{sfx} + {expr}];" if base else f"v[u] = x[{expr}];"]

    return moves("slice", op.result, [("x", op.input)], lines, "strided slice", vw, idx)


def concat_kernel(op: rlx.ConcatOp, sm_count: int) -> KernelSpec:
    """Each output item picks its input by its coordinate on the axis."""
    ys = shape(op.result)
    axis = int_of(op.axis) % len(ys)
    ins = list(op.inputs)
    t = eltype(op.result)
    vw = vector_elems(dtype(t).bytes, [shape(x)[-1] for x in ins])
    vy = vshape(ys, vw)
    inner = numel(vy[axis + 1 :])
    names = [f"x{j}" for j in range(len(ins))]

    def lines(idx: Index) -> list[str]:
        idx_t, sfx = idx
        out = [f"const {idx_t} a = (i / {inner}{sfx}) % {vy[axis]}{sfx}, outer = i / {inner * vy[axis]}{sfx}, in_ = i % {inner}{sfx};"]
        start = 0
        for j, x in enumerate(ins):
            d = vshape(shape(x), vw)[axis]
            cond = "if" if j == 0 else "else if"
            out.append(f"{cond} (a < {start + d}{sfx}) v[u] = x{j}[(outer * {d}{sfx} + (a - {start}{sfx})) * {inner}{sfx} + in_];")
            start += d
        return out

    return moves("concat", op.result, [(n, x) for n, x in zip(names, ins)], lines, f"concat along axis {axis}", vw,
                 index_kind([op.result]), vector_ins=names)


def gather_kernel(op: rlx.GatherOp, sm_count: int) -> KernelSpec:
    """numpy.take: negative indices count from the end; an index still out of
    range is clamped (a kernel cannot raise; the interpreter reports it).
    Items of the innermost axis when the gathered axis is not it."""
    xs, ids = shape(op.input), shape(op.indices)
    axis = int_of(op.axis) % len(xs)
    t = eltype(op.input)
    vw = vector_elems(dtype(t).bytes, [xs[-1]]) if axis != len(xs) - 1 else 1
    vx = vshape(xs, vw)
    inner = numel(vx[axis + 1 :])
    nid = numel(ids)
    d = xs[axis]

    outer = numel(vx[:axis])

    def take(q: str, j: str) -> str:
        """`long long q` = ids[j], negative counting from the end, clamped."""
        return (f"long long {q} = (long long)ids[{j}]; if ({q} < 0) {q} += {d}LL; "
                f"{q} = {q} < 0 ? 0 : ({q} >= {d}LL ? {d - 1}LL : {q});")

    def lines(idx: Index) -> list[str]:
        idx_t, sfx = idx
        # One outer slice: output row j is input row ids[j], with no modulo by
        # the id count or division for the slice. H200, session 45, against
        # the general index (the staged form a lane each): 16-bit gathers of
        # rows of 77 and 197 +21% .. +27% (bf16 of 77 at 64 MiB 71.3 -> 57.6
        # µs), f32 +4% .. +12%.
        if outer == 1:
            return [f"const {idx_t} j = i / {inner}{sfx}, in_ = i - j * {inner}{sfx};",
                    take("q", "j"),
                    f"v[u] = x[q * {inner}{sfx} + in_];"]
        return [
            f"const {idx_t} in_ = i % {inner}{sfx}, j = (i / {inner}{sfx}) % {nid}{sfx}, outer = i / {inner * nid}{sfx};",
            take("q", "j"),
            f"v[u] = x[(outer * {d}{sfx} + q) * {inner}{sfx} + in_];",
        ]

    def run(idx: Index, g: int) -> list[str]:
        """A run of g elements from `e` spans at most two output rows (inner
        >= g), w0 and w1: each row's id read once, not an element's."""
        idx_t, sfx = idx
        n = numel(shape(op.result))
        c = storage_type(t)

        def src(k: str, r: str) -> list[str]:
            j, row = (r, f"q{k}") if outer == 1 else (f"{r} % {nid}{sfx}", f"(({r} / {nid}{sfx}) * {d}LL + q{k})")
            return [take(f"q{k}", j), f"const {c}* __restrict__ s{k} = x + {row} * {inner}LL;"]

        return [f"if (e < {n}{sfx}) {{",
                f"  const {idx_t} w0 = e / {inner}{sfx}, c0 = e - w0 * {inner}{sfx};",
                f"  const {idx_t} w1 = c0 + {g}{sfx} > {inner}{sfx} && e + ({inner}{sfx} - c0) < {n}{sfx} ? w0 + 1{sfx} : w0;",
                *("  " + line for line in src("0", "w0") + src("1", "w1")),
                "  #pragma unroll",
                f"  for (int u = 0; u < {g}; ++u) {{",
                f"    const {idx_t} c = c0 + u;",
                f"    if (e + u < {n}{sfx}) v[u] = *(c < {inner}{sfx} ? s0 + c : s1 + (c - {inner}{sfx}));",
                "  }",
                "}"]

    return moves("gather", op.result, [("x", op.input), ("ids", op.indices)], lines, f"gather along axis {axis}", vw,
                 index_kind([op.input, op.result]), run=run if vw == 1 and inner >= 16 else None)

"""`rlx.attention` as one fused kernel, flash-attention style: a block owns a
tile of query rows of one (batch, head), walks the keys in tiles held in
shared memory, keeps the softmax online (an f32 running max and sum per
row) and accumulates the output in f32 registers; the score matrix is
never written to memory.

Two forms, picked by `attention_form`:

* `mma` (f16, bf16 with head_dims up to 128): 4 warps, 64 query rows per
  block (16 per warp; for long sequences 128, 32 per warp, with the query
  fragments read from shared memory each step: `mma_m_tiles`,
  `mma_q_smem`), key/value tiles of 128 rows (64 where there are 64 keys
  or fewer, or two m-tiles of head_dims over 64: `mma_bn`). q·kᵀ and p·v run on the tensor cores
  (`mma.sync.m16n8k16`, f32 accumulators; fragments loaded with
  `ldmatrix`, v's transposed; each key/value fragment feeds every m-tile
  of the warp). The probabilities go from the score accumulators to the
  p·v operand fragments in registers, rounded to the input type. Tiles are
  copied with `cp.async` (16 bytes, zero-filled past the edges) where rows
  are 16-byte aligned, else element by element; the next key tile loads
  while p·v runs, the value tile while q·kᵀ runs (each waited for, with a
  barrier, before its first use). head_dims pad to a multiple of 16 in
  shared memory (zeros). Needs sm_80+.
* `tiled` (f32, head_dims up to 128, the value's a multiple of 4): 64
  query rows x 64-key tiles per block of 256 threads, register-tiled like
  an SGEMM: each thread owns 4 rows x 4 keys of the score tile (keys
  tx + 16 j) and 4 rows x 4·⌈dv/64⌉ columns of the output. Per head_dim
  step a thread reads one float4 of the transposed query tile and 4 keys
  (row pitch odd: conflict-free), for 16 FMAs; the probabilities go
  through shared memory (transposed, pitch 68: conflict-free float4
  stores) to the p·v product, which reads a float4 of them and a float4 of
  v per 16 FMAs. (Reading q and k rows as float4s, 64 FMAs per 8 loads,
  measured slower on an H100: 100 registers, 2 blocks per SM; capped at
  80, 75 vs 71 µs for BERT-base at batch 32.)
  The row max and sum are reduced over the 16 lanes of a row with
  shuffles.
* `simt` (f32 head_dims over 128 or a value head_dim not a multiple of 4; f16/bf16 over 128): a group of T lanes per query row
  (T a power of two; lane i holds chunks i, i + T, ... of W elements of q
  and of the output row, W = 4 where head_dims allow, so shared memory is
  read as float4), 128 threads per block, key/value tiles in shared memory
  as f32; all in f32 FMAs, the scores' dot products reduced over the T
  lanes with shuffles.

Both read each operand through its own (batch, head, seq) element strides,
which is how the op's layouts (`q_layout`, ...) are honoured; head_dim is
contiguous. The additive mask is read per score through strides with 0 on
broadcast axes. Scores are kept in the log2 domain (scale · log2 e folded
in); a row whose every score is -inf comes out NaN, as the reference's
softmax does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue

from rlxc.codegen.common import Buf, KernelSpec, eltype, shape, strides
from rlxc.codegen.cuda_c import float_literal, load, storage_type, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype_name

LOG2E = 1.4426950408889634

#: The mma form: key rows per tile (doubled for longer sequences: `mma_bn`), warps per block.
MMA_BN, MMA_WARPS = 64, 4
#: The largest head_dim (query/key, value) the mma form takes.
MMA_MAX_D = 128
#: Threads per block of the simt form.
SIMT_THREADS = 128
#: The tiled form: query rows and key rows per tile, threads per block, the
#: largest head_dim. (H100, 2026-11-23: faster than the simt form from BERT-base
#: at batch 1 (17 vs 20 µs) to batch 32 (71 vs 143 µs); equal on MiniLM.)
TILED_BM, TILED_BN, TILED_THREADS, TILED_MAX_D = 64, 64, 256, 128
#: The tiled form loads the next key/value tile into registers while it
#: computes with this one, where that takes at most TILED_PREFETCH_REGS
#: registers per thread (head_dims up to 64). Off: it measured slower in all
#: 6 cases (H100, 2026-11-26, f32, µs without / with): b 32 h 12 d 64 s 77
#: 63.7 / 78.0, s 128 71.7 / 88.2, b 16 s 200 123.7 / 147.8, b 8 s 384
#: 158.5 / 174.4, d 32 s 128 46.5 / 49.7, b 4 s 512 causal 104.6 / 106.2:
#: the 32 registers cost blocks per multiprocessor (3 blocks of 256 threads
#: already hide the tile loads' latency behind each other's math).
TILED_PREFETCH = False
TILED_PREFETCH_REGS = 32
#: "tiled" or "simt": the f32 form wherever it applies (tests, benchmarks); None: by rows.
FORCE_F32_FORM: str | None = None


@dataclass(frozen=True)
class Attention:
    """One attention op's problem: logical sizes, element strides of the
    (batch, head, seq) axes of each operand (head_dim has stride 1), and the
    mask's (batch, head, query, key) strides, 0 on broadcast axes."""

    q: SSAValue
    k: SSAValue
    v: SSAValue
    mask: SSAValue | None
    out: SSAValue
    b: int
    h: int
    sq: int
    sk: int
    dk: int
    dv: int
    q_st: tuple[int, int, int]
    k_st: tuple[int, int, int]
    v_st: tuple[int, int, int]
    o_st: tuple[int, int, int]
    offsets: tuple[int, int, int]  # element offsets of q, k, v (head windows)
    mask_st: tuple[int, int, int, int]
    causal: bool
    scale: float
    #: query heads per key head and per value head (grouped-query attention; 1: one each)
    kg: int = 1
    vg: int = 1

    def head(self, which: str) -> str:
        """The head of key ("K") or value ("V") that query head `h` reads."""
        g = self.kg if which == "K" else self.vg
        return "h" if g == 1 else f"(h / {g})"

    @property
    def dtype(self) -> str:
        return dtype_name(eltype(self.q))


def _logical_strides(v: SSAValue, perm: list[int]) -> tuple[list[int], list[int]]:
    """(logical shape, logical strides) of a tensor stored as logical.transpose(perm)."""
    phys = shape(v)
    pst = strides(phys)
    logical, lst = [0] * 4, [0] * 4
    for i, p in enumerate(perm):
        logical[p], lst[p] = phys[i], pst[i]
    return logical, lst


def attention_problem(op: rlx.AttentionOp) -> Attention:
    lq, lk, lv, lo = op.layouts()
    (b, h, sq, dk), qst = _logical_strides(op.query, lq)
    (_, kh, sk, _), kst = _logical_strides(op.key, lk)
    (_, vh, _, dv), vst = _logical_strides(op.value, lv)
    # a head window starts `offset` heads in; its heads stride is the wide tensor's
    windows = op.windows()
    offsets = tuple(0 if w is None else w[0] * st[1] for w, st in zip(windows, (qst, kst, vst)))
    h, kh, vh = (n if w is None else w[1] for n, w in zip((h, kh, vh), windows))
    _, ost = _logical_strides(op.result, lo)
    assert qst[3] == kst[3] == vst[3] == ost[3] == 1
    mst = (0, 0, 0, 0)
    if op.mask is not None:
        ms = list(shape(op.mask))
        ms = [1] * (4 - len(ms)) + ms
        full = strides(ms)
        mst = tuple(0 if d == 1 else s for d, s in zip(ms, full))
    scale = op.scale_value()
    return Attention(
        op.query, op.key, op.value, op.mask, op.result, b, h, sq, sk, dk, dv,
        tuple(qst[:3]), tuple(kst[:3]), tuple(vst[:3]), tuple(ost[:3]), offsets, mst,  # pyright: ignore  # pyright: ignore
        op.causal is not None, scale, h // kh, h // vh,
    )  # fmt: skip


def _tiled_ok(a: Attention) -> bool:
    return max(a.dk, a.dv) <= TILED_MAX_D and a.dv % 4 == 0


def attention_form(a: Attention) -> str:
    """`mma` for f16/bf16 with head_dims up to MMA_MAX_D; `tiled` for f32
    with head_dims up to TILED_MAX_D, the value's a multiple of 4; else `simt`."""
    if a.dtype in ("f16", "bf16") and max(a.dk, a.dv) <= MMA_MAX_D:
        return "mma"
    if FORCE_F32_FORM is not None and a.dtype == "f32" and (FORCE_F32_FORM == "simt" or _tiled_ok(a)):
        return FORCE_F32_FORM
    if a.dtype == "f32" and _tiled_ok(a):
        return "tiled"
    return "simt"


def attention_kernel(op: rlx.AttentionOp, sm_count: int) -> KernelSpec:
    a = attention_problem(op)
    form = attention_form(a)
    if form == "mma":
        return _mma_kernel(a, sm_count)
    return _tiled_kernel(a) if form == "tiled" else _simt_kernel(a)


def _params(a: Attention) -> tuple[str, list[Buf | int]]:
    c = storage_type(eltype(a.q))
    decl = [f"const {c}* __restrict__ Q", f"const {c}* __restrict__ K", f"const {c}* __restrict__ V"]
    bufs: list[Buf | int] = [Buf(a.q), Buf(a.k), Buf(a.v)]
    if a.mask is not None:
        decl.append(f"const {c}* __restrict__ M")
        bufs.append(Buf(a.mask))
    decl.append(f"{c}* __restrict__ O")
    bufs.append(Buf(a.out, True))
    return ", ".join(decl), bufs


def _constants(a: Attention) -> list[str]:
    lines = [
        f"constexpr int SQ = {a.sq}, SK = {a.sk}, DK = {a.dk}, DV = {a.dv};",
        f"constexpr long long QSB = {a.q_st[0]}LL, QSH = {a.q_st[1]}LL, QSS = {a.q_st[2]}LL;",
        f"constexpr long long KSB = {a.k_st[0]}LL, KSH = {a.k_st[1]}LL, KSS = {a.k_st[2]}LL;",
        f"constexpr long long VSB = {a.v_st[0]}LL, VSH = {a.v_st[1]}LL, VSS = {a.v_st[2]}LL;",
        f"constexpr long long OSB = {a.o_st[0]}LL, OSH = {a.o_st[1]}LL, OSS = {a.o_st[2]}LL;",
        f"constexpr long long QO = {a.offsets[0]}LL, KO = {a.offsets[1]}LL, VO = {a.offsets[2]}LL;  // head windows",
        f"constexpr float SCALE_LOG2 = {float_literal(a.scale * LOG2E)};",
        f"constexpr bool CAUSAL = {'true' if a.causal else 'false'};",
    ]
    if a.mask is not None:
        m = a.mask_st
        lines.append(
            f"constexpr long long MSB = {m[0]}LL, MSH = {m[1]}LL, MSI = {m[2]}LL, MSJ = {m[3]}LL;"
        )
    return lines


def _mask_term(a: Attention, row: str, col: str) -> str:
    """log2 e · mask[row, col] (row clamped into range; finite where the mask
    is: rlx_mask_log2), or nothing."""
    if a.mask is None:
        return ""
    t = eltype(a.q)
    return f" + rlx_mask_log2({load(f'Mb[(long long)min({row}, SQ - 1) * MSI + (long long)({col}) * MSJ]', t)})"


# --------------------------------------------------------------------------- mma form

_MMA_HELPERS = r"""
static __device__ __forceinline__ unsigned rlx_att_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void rlx_att_cp16(void* dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(rlx_att_smem(dst)), "l"(src), "r"(ok ? 16 : 0));
}
static __device__ __forceinline__ void rlx_att_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> static __device__ __forceinline__ void rlx_att_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }
static __device__ __forceinline__ void rlx_att_ldm(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(rlx_att_smem(p)));
}
static __device__ __forceinline__ void rlx_att_ldm_t(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(rlx_att_smem(p)));
}
static __device__ __forceinline__ void rlx_att_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.ETYPE.ETYPE.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// two floats -> a packed pair (lo in the low half), rounded to nearest even
static __device__ __forceinline__ unsigned rlx_att_pack(float lo, float hi) {
  unsigned r; asm("cvt.rn.ETYPEx2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
"""


def _vec_ok(d: int, st: tuple[int, int, int], offset: int) -> bool:
    """Rows of this operand start on 16 bytes (8 elements) and hold whole chunks."""
    return d % 8 == 0 and offset % 8 == 0 and all(s % 8 == 0 for s in st)


def _tile_load(name: str, dst: str, src: str, rs: str, rows: str, d: int, dp: int, st: str, vec: bool,
               safe: str, tile_rows: int, threads: int) -> list[str]:
    """Statements loading `rows` valid rows (of a `tile_rows`-row tile) into
    smem `dst` (row stride `st`) by `threads` threads, zero-filling padding
    rows and columns; `safe` is an in-bounds address that zero-filled chunks
    name as their source."""
    if vec:
        return [
            f"  // {name}: 16-byte cp.async chunks",
            f"  for (int c = threadIdx.x; c < {tile_rows} * ({dp} / 8); c += {threads}) {{",
            f"    const int r = c / ({dp} / 8), col = (c % ({dp} / 8)) * 8;",
            f"    const bool ok = r < ({rows}) && col < {d};",
            f"    rlx_att_cp16({dst} + r * {st} + col, ok ? {src} + (long long)r * {rs} + col : {safe}, ok);",
            "  }",
        ]
    return [
        f"  // {name}: element by element (rows not 16-byte aligned)",
        f"  for (int e = threadIdx.x; e < {tile_rows} * {dp}; e += {threads}) {{",
        f"    const int r = e / {dp}, col = e % {dp};",
        f"    {dst}[r * {st} + col] = (r < ({rows}) && col < {d}) ? {src}[(long long)r * {rs} + col] : (unsigned short)0;",
        "  }",
    ]


def _bases(a: Attention) -> list[str]:
    """The simt and tiled forms' pointers to this block's (batch, head) of
    each operand (head windows' offsets included) and of the mask."""
    return [
        "  const auto* Qb = Q + QO + (long long)b * QSB + (long long)h * QSH;",
        f"  const auto* Kb = K + KO + (long long)b * KSB + (long long){a.head('K')} * KSH;",
        f"  const auto* Vb = V + VO + (long long)b * VSB + (long long){a.head('V')} * VSH;",
        "  auto* Ob = O + (long long)b * OSB + (long long)h * OSH;",
        *(["  const auto* Mb = M + (long long)b * MSB + (long long)h * MSH;"] if a.mask is not None else []),
    ]


#: causal attention: blocks take their query rows heaviest first (`_block_coords`)
CAUSAL_HEAVY_FIRST = True


def _block_coords(a: Attention, rows: str) -> str:
    """The line that sets this block's first query row `m0`, head `h` and
    batch `b`. Without a causal mask every block walks every key tile: the
    grid's (x, y, z) as they are. With one, a block's work grows with its
    query rows; the blocks run heaviest first (the hardware starts blocks
    in linear order): the first b·h blocks take the last query rows of
    every (batch, head), and so on down, so the short blocks fill the tail
    of the launch instead of long ones starting last (FlashAttention-2's
    ordering)."""
    if not (a.causal and CAUSAL_HEAVY_FIRST):
        return f"  const int m0 = blockIdx.x * {rows}, h = blockIdx.y, b = blockIdx.z;"
    hb = a.h * a.b
    return (f"  const int t_ = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);  // heaviest first\n"
            f"  const int m0 = (gridDim.x - 1 - t_ / {hb}) * {rows}, h = t_ % {a.h}, b = (t_ / {a.h}) % {a.b};")


def _spec(a: Attention, src: list[str], bufs: list[Buf | int], rows: int, threads: int, smem: int) -> KernelSpec:
    """Every form's kernel: the source's non-empty lines, a block per `rows`
    query rows of each (batch, head)."""
    body = "\n".join(ln for ln in src if ln) + "\n"
    return KernelSpec("attention", body, bufs, (-(-a.sq // rows), a.h, a.b), threads, smem)


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + ln for ln in lines]


#: 16-row m-tiles per warp of the mma form, where set (1 or 2); else
#: `mma_m_tiles` picks.
FORCE_M_TILES: int | None = None


def mma_m_tiles(a: Attention, sm_count: int) -> int:
    """16-row m-tiles per warp of the mma form: 2 (128 query rows per block,
    each key/value fragment feeding two mmas, the query fragments read from
    shared memory: `mma_q_smem`) where each block walks many key tiles and
    no causal mask cuts them short: head_dims over 64 from 256 queries and
    keys, others from 1024; else 1 (64 rows). H100, f16, 2026-11-25
    (`benchmarks/attention_variants.py`, µs, against one m-tile with the
    query in registers and 128-key tiles): d 128 s 256 b 16 55.0 -> 48.3,
    s 512 b 8 88.6 -> 76.3, s 1024 b 4 157.6 -> 134.2 (64-key tiles); d 64
    s 1024 b 4 86.6 -> 76.6, s 2048 b 2 166.0 -> 142.7, s 4096 b 1 333.3 ->
    274.5 (128-key tiles). One m-tile stayed faster at d 64 s 384-512 (s 512
    b 8: 36.2 against 41.9) and with causal masks (d 64 s 1024: 64.1
    against 70.1; d 128 s 1024: 112.7 against 117.4; d 128 s 2048: 204.3
    against 212.2). Causal blocks taken heaviest first (`CAUSAL_HEAVY_FIRST`)
    changed that (H200, f16, 2026-11-27, one m-tile -> two): d 128 s 512 b
    8 57.7 -> 54.3, s 1024 b 4 97.0 -> 84.4, s 2048 b 1 178.9 -> 146.8; d 64
    s 1024 b 4 54.0 -> 50.0, s 4096 b 1 171.1 -> 151.6; at d 128 s 256 one
    stayed faster (40.1 against 42.9), so causal head_dims over 64 take two
    from 512 queries and keys."""
    if FORCE_M_TILES is not None:
        return FORCE_M_TILES
    if a.causal and not CAUSAL_HEAVY_FIRST:
        return 1
    long = min(a.sq, a.sk)
    if a.causal and max(a.dk, a.dv) > 64:  # heaviest first (H200, 2026-11-27, session 32)
        return 2 if long >= 512 else 1
    return 2 if long >= (256 if max(a.dk, a.dv) > 64 else 1024) else 1


#: Key/value rows per tile of the mma form, where set (64 or 128); else
#: `mma_bn` picks.
FORCE_BN: int | None = None


def mma_bn(a: Attention) -> int:
    """Key/value rows per tile of the mma form: 128 where there are more
    than 64 keys, else 64. (H100, f16, one m-tile per warp, 2026-11-23,
    `benchmarks/attention_variants.py`: 128 against 64 keys per tile took
    BERT-base at batch 32 from 14.4 to 13.7 µs, s 512 d 64 b 8 from 38.2 to
    36.0, s 1024 d 128 b 4 from 168 to 159, causal s 1024 from 67.6 to
    64.2; 165 registers against 126 at d 64, 239 against 168 at d 128, no
    spills.)"""
    if FORCE_BN is not None:
        return FORCE_BN
    m_tiles = mma_m_tiles(a, 0)
    if max(a.dk, a.dv) > 64 and m_tiles == 2:
        return MMA_BN  # two m-tiles of d 128 with 128-key tiles spill (s 1024 d 128: 162.6 against 134.2 µs)
    if a.causal and m_tiles == 1 and CAUSAL_HEAVY_FIRST:
        # the mask ends each block's walk on a tile: 64-key tiles walk less past it (H200,
        # f16, 2026-11-27: BERT-base-sized b 32 s 128 15.1 -> 13.1 µs, d 64 s 384 b 16 32.2
        # -> 29.5, d 128 s 256 b 16 47.0 -> 40.1)
        return MMA_BN
    return 2 * MMA_BN if a.sk > MMA_BN else MMA_BN


#: Where the mma form keeps the warp's query fragments, where set: True in
#: shared memory (each loaded with ldmatrix per head_dim step, `Qs` beside
#: the key and value tiles), False in registers for the whole kernel; else
#: `mma_q_smem` picks.
FORCE_Q_SMEM: bool | None = None


#: Blocks per multiprocessor the mma form asks `__launch_bounds__` for
#: (capping its registers at 65536 / (128 × this)), where set; else none.
FORCE_MIN_BLOCKS: int | None = None


def mma_q_smem(a: Attention, m_tiles: int) -> bool:
    """Whether the mma form reads the query fragments from shared memory
    each step instead of holding them in registers (dk/16 × 4 per m-tile:
    16-64 registers): with two m-tiles, whose registers they would spill
    (d 128: 400 bytes at 64-key tiles; d 64, 128-key tiles: 104 bytes); with
    one they measured the same (BERT-base b 32: 13.8 µs both) or slower
    (s 1024 d 128: 178 against 157 µs), so one m-tile keeps them."""
    return FORCE_Q_SMEM if FORCE_Q_SMEM is not None else m_tiles == 2


#: Warps per block of the mma form, where set (4 or 8); else MMA_WARPS.
FORCE_WARPS: int | None = None


def mma_warps(a: Attention) -> int:
    """Warps per block of the mma form (each takes 16 query rows per
    m-tile): 4. Eight warps of one m-tile (128 query rows per block sharing
    each key/value tile, as FlashAttention-2's blocks have) measured slower
    in all 12 cases (H100, f16, 2026-11-26, `attention_variants.py
    --variants auto,128:1:r:8,64:1:r:8,64:2:s:8`): s 1024 d 64 b 4 77.6 ->
    86.3 µs at best (64-key tiles), s 1024 d 128 b 4 134 -> 151 (two
    m-tiles), BERT-base b 32 13.7 -> 15.1: fewer blocks per multiprocessor
    (registers) hide less latency than the halved key/value traffic saves."""
    return FORCE_WARPS if FORCE_WARPS is not None else MMA_WARPS


def _mma_kernel(a: Attention, sm_count: int) -> KernelSpec:
    t = eltype(a.q)
    et = a.dtype  # f16 / bf16: the PTX type name
    dkp, dvp = -(-a.dk // 16) * 16, -(-a.dv // 16) * 16
    qst, vst = dkp + 8, dvp + 8  # smem row strides (elements): conflict-free ldmatrix
    mt = mma_m_tiles(a, sm_count)
    nw = mma_warps(a)
    bm, bn = 16 * mt * nw, mma_bn(a)
    decl, bufs = _params(a)
    qv, kv, vv = (_vec_ok(d, st, o) for d, st, o in zip((a.dk, a.dk, a.dv), (a.q_st, a.k_st, a.v_st), a.offsets))
    ov = a.dv % 2 == 0 and all(s % 2 == 0 for s in a.o_st)
    q_smem = mma_q_smem(a, mt)
    min_blocks = f", {FORCE_MIN_BLOCKS}" if FORCE_MIN_BLOCKS else ""
    vq_elems = bn * vst + bm * qst if q_smem else max(bm * qst, bn * vst)
    smem = (bn * qst + vq_elems) * 2
    mask_ptr = "  const unsigned short* Mb = M + (long long)b * MSB + (long long)h * MSH;" if a.mask is not None else ""

    score_lines = []
    for half in (0, 1):
        row = f"(rowb + i * 16 + {half * 8})"
        score_lines += [
            f"        {{ const int c = n0 + j * 8 + tig * 2 + e; float& x = s[i][j][{2 * half} + e];",
            f"          x = (c < SK && !(CAUSAL && c > {row})) ? x * SCALE_LOG2{_mask_term(a, row, 'c')} : -RLX_INF; }}",
        ]
    mask_loop = [
        "      #pragma unroll",
        f"      for (int i = 0; i < {mt}; ++i)",
        "      #pragma unroll",
        f"      for (int j = 0; j < {bn // 8}; ++j)",
        "        #pragma unroll",
        "        for (int e = 0; e < 2; ++e) {",
        *score_lines,
        "        }",
    ]
    if a.mask is None:
        # no mask: scores only need the edge/causal treatment on edge tiles
        scale_lines = [
            f"    if (n0 + {bn} > SK || (CAUSAL && n0 + {bn - 1} > m0 + warp * {16 * mt})) {{  // an edge tile (uniform per warp)",
            *mask_loop,
            "    } else {",
            "      #pragma unroll",
            f"      for (int i = 0; i < {mt}; ++i)",
            "      #pragma unroll",
            f"      for (int j = 0; j < {bn // 8}; ++j)",
            "        #pragma unroll",
            "        for (int e = 0; e < 4; ++e) s[i][j][e] *= SCALE_LOG2;",
            "    }",
        ]
    else:
        scale_lines = ["    {", *mask_loop, "    }"]

    if ov:
        store_lines = [
            f"      for (int dn = 0; dn < {dvp // 8}; ++dn) {{",
            "        const int c = dn * 8 + tig * 2;",
            "        if (c < DV) *(unsigned*)(Ob + (long long)r * OSS + c) = "
            "rlx_att_pack(o[i][dn][2 * half] * inv, o[i][dn][2 * half + 1] * inv);",
            "      }",
        ]
    else:
        store_lines = [
            f"      for (int dn = 0; dn < {dvp // 8}; ++dn)",
            "        #pragma unroll",
            "        for (int e = 0; e < 2; ++e) {",
            "          const int c = dn * 8 + tig * 2 + e;",
            f"          if (c < DV) Ob[(long long)r * OSS + c] = {store('o[i][dn][2 * half + e] * inv', t)};",
            "        }",
        ]

    src = [
        f"// attention, mma form ({et}): {bm} query rows ({mt} m-tiles per warp) x {bn}-key tiles per block of {nw} warps,",
        f"// query fragments {'read from shared memory each step' if q_smem else 'held in registers'},",
        f"// head_dim {a.dk}/{a.dv} padded to {dkp}/{dvp}; mask {'yes' if a.mask is not None else 'no'}, causal {'yes' if a.causal else 'no'}",
        _MMA_HELPERS.replace("ETYPE", et).strip("\n"),
        *_constants(a),
        f'extern "C" __global__ void __launch_bounds__({nw * 32}{min_blocks}) ENTRY({decl}) {{',
        "  extern __shared__ __align__(16) unsigned short rlx_att_sm[];",
        f"  unsigned short* Ks = rlx_att_sm;  // {bn} x {qst}",
        *([f"  unsigned short* Vs = rlx_att_sm + {bn * qst};  // {bn} x {vst}",
           f"  unsigned short* Qs = rlx_att_sm + {bn * qst + bn * vst};  // {bm} x {qst}, read each step"] if q_smem else
          [f"  unsigned short* Vs = rlx_att_sm + {bn * qst};  // {bn} x {vst}; the query tile ({bm} x {qst}) first"]),
        "  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tig = lane & 3;",
        _block_coords(a, str(bm)),
        "  const unsigned short* Qb = Q + QO + (long long)b * QSB + (long long)h * QSH + (long long)m0 * QSS;",
        f"  const unsigned short* Kb = K + KO + (long long)b * KSB + (long long){a.head('K')} * KSH;",
        f"  const unsigned short* Vb = V + VO + (long long)b * VSB + (long long){a.head('V')} * VSH;",
        "  unsigned short* Ob = O + (long long)b * OSB + (long long)h * OSH;",
        mask_ptr,
        f"  const int n_end = CAUSAL ? min(SK, m0 + {bm}) : SK;",
        f"  const int tiles = (n_end + {bn - 1}) / {bn};",
        *_tile_load("query tile", "Qs" if q_smem else "Vs", "Qb", "QSS", "SQ - m0", a.dk, dkp, str(qst), qv, "Q", bm, nw * 32),
        *_tile_load("key tile 0", "Ks", "Kb", "KSS", "SK", a.dk, dkp, str(qst), kv, "K", bn, nw * 32),
        "  rlx_att_commit();",
        "  rlx_att_wait<0>();",
        "  __syncthreads();",
        *([] if q_smem else [
            f"  unsigned qf[{mt}][{dkp // 16}][4];  // this warp's query rows as mma A fragments",
            "  #pragma unroll",
            f"  for (int i = 0; i < {mt}; ++i)",
            "  #pragma unroll",
            f"  for (int kc = 0; kc < {dkp // 16}; ++kc)",
            f"    rlx_att_ldm(qf[i][kc], Vs + (warp * {16 * mt} + i * 16 + (lane & 15)) * {qst} + kc * 16 + (lane >> 4) * 8);",
            "  __syncthreads();  // the query tile's smem becomes the value tile's",
        ]),
        f"  float o[{mt}][{dvp // 8}][4];",
        f"  float mrow[{mt}][2], lrow[{mt}][2];",
        "  #pragma unroll",
        f"  for (int i = 0; i < {mt}; ++i) {{",
        "    mrow[i][0] = mrow[i][1] = -RLX_INF;",
        "    lrow[i][0] = lrow[i][1] = 0.0f;",
        "    #pragma unroll",
        f"    for (int dn = 0; dn < {dvp // 8}; ++dn) o[i][dn][0] = o[i][dn][1] = o[i][dn][2] = o[i][dn][3] = 0.0f;",
        "  }",
        f"  const int rowb = m0 + warp * {16 * mt} + g;  // m-tile i's rows: rowb + i * 16, + 8",
        "  for (int tile = 0; tile < tiles; ++tile) {",
        f"    const int n0 = tile * {bn};",
        *_indent(_tile_load("value tile", "Vs", "(Vb + (long long)n0 * VSS)", "VSS", "SK - n0", a.dv, dvp, str(vst), vv, "V", bn, nw * 32), 2),
        "    rlx_att_commit();",
        "    if (tile > 0) {  // this key tile (loaded during the last p·v) must be in",
        "      rlx_att_wait<1>();",
        "      __syncthreads();",
        "    }",
        f"    float s[{mt}][{bn // 8}][4];",
        "    #pragma unroll",
        f"    for (int i = 0; i < {mt}; ++i)",
        "    #pragma unroll",
        f"    for (int j = 0; j < {bn // 8}; ++j) s[i][j][0] = s[i][j][1] = s[i][j][2] = s[i][j][3] = 0.0f;",
        "    #pragma unroll",
        f"    for (int kc = 0; kc < {dkp // 16}; ++kc) {{",
        *([f"      unsigned qk[{mt}][4];  // this step's query fragments",
           "      #pragma unroll",
           f"      for (int i = 0; i < {mt}; ++i)",
           f"        rlx_att_ldm(qk[i], Qs + (warp * {16 * mt} + i * 16 + (lane & 15)) * {qst} + kc * 16 + (lane >> 4) * 8);"]
          if q_smem else []),
        "      #pragma unroll",
        f"      for (int np = 0; np < {bn // 16}; ++np) {{",
        "        unsigned kb[4];",
        f"        rlx_att_ldm(kb, Ks + (np * 16 + (lane & 7) + (lane >> 4) * 8) * {qst} + kc * 16 + ((lane >> 3) & 1) * 8);",
        "        #pragma unroll",
        f"        for (int i = 0; i < {mt}; ++i) {{",
        f"          rlx_att_mma(s[i][2 * np], {'qk[i]' if q_smem else 'qf[i][kc]'}, kb[0], kb[1]);",
        f"          rlx_att_mma(s[i][2 * np + 1], {'qk[i]' if q_smem else 'qf[i][kc]'}, kb[2], kb[3]);",
        "        }",
        "      }",
        "    }",
        "    __syncthreads();  // every warp is done with this key tile",
        "    if (tile + 1 < tiles) {",
        *_indent(_tile_load("next key tile", "Ks", f"(Kb + (long long)(n0 + {bn}) * KSS)", "KSS", f"SK - n0 - {bn}", a.dk, dkp, str(qst), kv, "K", bn, nw * 32), 4),
        "      rlx_att_commit();",
        "    }",
        *scale_lines,
        "    // online softmax over this tile; a row's 64 scores sit in the 4 lanes of a quad",
        "    #pragma unroll",
        f"    for (int i = 0; i < {mt}; ++i)",
        "    #pragma unroll",
        "    for (int half = 0; half < 2; ++half) {",
        "      float mx = -RLX_INF;",
        "      #pragma unroll",
        f"      for (int j = 0; j < {bn // 8}; ++j) mx = fmaxf(mx, fmaxf(s[i][j][2 * half], s[i][j][2 * half + 1]));",
        "      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));",
        "      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));",
        "      const float mnew = fmaxf(mrow[i][half], mx);",
        "      const float muse = mnew == -RLX_INF ? 0.0f : mnew;  // all masked so far: p = 0",
        "      const float alpha = exp2f(mrow[i][half] - muse);",
        "      mrow[i][half] = mnew;",
        "      float sum = 0.0f;",
        "      #pragma unroll",
        f"      for (int j = 0; j < {bn // 8}; ++j) {{",
        "        s[i][j][2 * half] = exp2f(s[i][j][2 * half] - muse);",
        "        s[i][j][2 * half + 1] = exp2f(s[i][j][2 * half + 1] - muse);",
        "        sum += s[i][j][2 * half] + s[i][j][2 * half + 1];",
        "      }",
        "      lrow[i][half] = lrow[i][half] * alpha + sum;",
        "      #pragma unroll",
        f"      for (int dn = 0; dn < {dvp // 8}; ++dn) {{ o[i][dn][2 * half] *= alpha; o[i][dn][2 * half + 1] *= alpha; }}",
        "    }",
        "    if (tile + 1 < tiles) rlx_att_wait<1>(); else rlx_att_wait<0>();",
        "    __syncthreads();  // the value tile is in",
        "    #pragma unroll",
        f"    for (int kc = 0; kc < {bn // 16}; ++kc) {{",
        f"      unsigned pa[{mt}][4];",
        "      #pragma unroll",
        f"      for (int i = 0; i < {mt}; ++i) {{",
        "        pa[i][0] = rlx_att_pack(s[i][2 * kc][0], s[i][2 * kc][1]);",
        "        pa[i][1] = rlx_att_pack(s[i][2 * kc][2], s[i][2 * kc][3]);",
        "        pa[i][2] = rlx_att_pack(s[i][2 * kc + 1][0], s[i][2 * kc + 1][1]);",
        "        pa[i][3] = rlx_att_pack(s[i][2 * kc + 1][2], s[i][2 * kc + 1][3]);",
        "      }",
        "      #pragma unroll",
        f"      for (int dp = 0; dp < {dvp // 16}; ++dp) {{",
        "        unsigned vb[4];",
        f"        rlx_att_ldm_t(vb, Vs + (kc * 16 + (lane & 15)) * {vst} + dp * 16 + (lane >> 4) * 8);",
        "        #pragma unroll",
        f"        for (int i = 0; i < {mt}; ++i) {{",
        "          rlx_att_mma(o[i][2 * dp], pa[i], vb[0], vb[1]);",
        "          rlx_att_mma(o[i][2 * dp + 1], pa[i], vb[2], vb[3]);",
        "        }",
        "      }",
        "    }",
        "    __syncthreads();  // every warp is done with this value tile",
        "  }",
        "  #pragma unroll",
        f"  for (int i = 0; i < {mt}; ++i)",
        "  #pragma unroll",
        "  for (int half = 0; half < 2; ++half) {",
        "    float l = lrow[i][half];",
        "    l += __shfl_xor_sync(0xffffffffu, l, 1);",
        "    l += __shfl_xor_sync(0xffffffffu, l, 2);",
        "    const float inv = 1.0f / l;  // 0 (every score -inf): NaN, as the reference",
        "    const int r = rowb + i * 16 + half * 8;",
        "    if (r < SQ) {",
        "      #pragma unroll",
        *store_lines,
        "    }",
        "  }",
        "}",
    ]
    return _spec(a, src, bufs, bm, nw * 32, smem)


# --------------------------------------------------------------------------- simt form


def _simt_geometry(a: Attention) -> tuple[int, int, int, int, int]:
    """(lanes per row T, vector width W, W-chunks per lane of q/k and of
    v/out, key tile rows): about 16 elements of each row per lane, read
    from shared memory W (4 where head_dims allow) at a time."""
    d = max(a.dk, a.dv)
    lanes = 1
    while lanes < 32 and lanes * 16 < d:
        lanes *= 2
    w = 4 if a.dk % 4 == 0 and a.dv % 4 == 0 else 1
    ck, cv = -(-a.dk // (lanes * w)), -(-a.dv // (lanes * w))
    bn = 32
    while bn > 4 and bn * (a.dk + a.dv) * 4 > 96 * 1024:
        bn //= 2
    return lanes, w, ck, cv, bn


def _simt_kernel(a: Attention) -> KernelSpec:
    t = eltype(a.q)
    lanes, w, ck, cv, bn = _simt_geometry(a)
    rows = SIMT_THREADS // lanes
    decl, bufs = _params(a)
    smem = bn * (a.dk + a.dv) * 4
    vt = "float4" if w == 4 else "float"
    comps = ["x", "y", "z", "w"] if w == 4 else [""]

    def comp(var: str, c: int) -> str:
        return f"{var}.{comps[c]}" if w == 4 else var

    shuffles = []
    o = lanes // 2
    while o >= 1:
        shuffles.append(f"        d += __shfl_xor_sync(0xffffffffu, d, {o});")
        o //= 2
    k_guard = "" if ck * lanes * w == a.dk else "if ((e * T + lane) * W < DK) "
    v_guard = "" if cv * lanes * w == a.dv else "if ((e * T + lane) * W < DV) "
    dot = " ".join(f"d = fmaf(q[e * W + {c}], {comp('kk', c)}, d);" for c in range(w))
    acc = " ".join(f"o[e * W + {c}] = fmaf(p, {comp('vv', c)}, o[e * W + {c}]);" for c in range(w))
    src = [
        f"// attention, simt form ({a.dtype}): {lanes} lanes per query row, {rows} rows per block,",
        f"// {bn}-key tiles in shared memory (f32, read {w} at a time); head_dim {a.dk}/{a.dv}; "
        f"mask {'yes' if a.mask is not None else 'no'}, causal {'yes' if a.causal else 'no'}",
        *_constants(a),
        f"constexpr int T = {lanes}, W = {w}, CK = {ck}, CV = {cv}, BN = {bn}, ROWS = {rows};",
        f'extern "C" __global__ void __launch_bounds__({SIMT_THREADS}) ENTRY({decl}) {{',
        "  extern __shared__ __align__(16) float rlx_att_smf[];",
        "  float* Ks = rlx_att_smf;  // BN x DK",
        "  float* Vs = rlx_att_smf + BN * DK;  // BN x DV",
        "  const int lane = threadIdx.x % T;  // this lane holds elements (e * T + lane) * W + [0, W)",
        _block_coords(a, "ROWS"),
        "  const int row = m0 + threadIdx.x / T, rowc = min(row, SQ - 1);",
        *_bases(a),
        "  float q[CK * W], o[CV * W];",
        "  #pragma unroll",
        "  for (int i = 0; i < CK * W; ++i) {",
        "    const int c = ((i / W) * T + lane) * W + i % W;",
        f"    q[i] = c < DK ? {load('Qb[(long long)rowc * QSS + c]', t)} : 0.0f;",
        "  }",
        "  #pragma unroll",
        "  for (int i = 0; i < CV * W; ++i) o[i] = 0.0f;",
        "  float m = -RLX_INF, l = 0.0f;",
        "  const int n_end = CAUSAL ? min(SK, min(SQ, m0 + ROWS)) : SK;",
        "  for (int n0 = 0; n0 < n_end; n0 += BN) {",
        "    __syncthreads();",
        f"    for (int i = threadIdx.x; i < BN * DK; i += {SIMT_THREADS}) {{",
        "      const int r = i / DK, c = i % DK;",
        f"      Ks[i] = n0 + r < SK ? {load('Kb[(long long)(n0 + r) * KSS + c]', t)} : 0.0f;",
        "    }",
        f"    for (int i = threadIdx.x; i < BN * DV; i += {SIMT_THREADS}) {{",
        "      const int r = i / DV, c = i % DV;",
        f"      Vs[i] = n0 + r < SK ? {load('Vb[(long long)(n0 + r) * VSS + c]', t)} : 0.0f;",
        "    }",
        "    __syncthreads();",
        "    float s[BN];",
        "    float mx = -RLX_INF;",
        "    #pragma unroll",
        "    for (int j = 0; j < BN; ++j) {",
        "      float d = 0.0f;",
        "      #pragma unroll",
        "      for (int e = 0; e < CK; ++e)",
        f"        {k_guard}{{ const {vt} kk = *(const {vt}*)&Ks[j * DK + (e * T + lane) * W]; {dot} }}",
        *shuffles,
        "      const int c = n0 + j;",
        f"      s[j] = (c < SK && !(CAUSAL && c > row)) ? d * SCALE_LOG2{_mask_term(a, 'row', 'c')} : -RLX_INF;",
        "      mx = fmaxf(mx, s[j]);",
        "    }",
        "    const float mnew = fmaxf(m, mx);",
        "    const float muse = mnew == -RLX_INF ? 0.0f : mnew;  // all masked so far: p = 0",
        "    const float alpha = exp2f(m - muse);",
        "    m = mnew;",
        "    l *= alpha;",
        "    #pragma unroll",
        "    for (int i = 0; i < CV * W; ++i) o[i] *= alpha;",
        "    #pragma unroll",
        "    for (int j = 0; j < BN; ++j) {",
        "      const float p = exp2f(s[j] - muse);",
        "      l += p;",
        "      #pragma unroll",
        "      for (int e = 0; e < CV; ++e)",
        f"        {v_guard}{{ const {vt} vv = *(const {vt}*)&Vs[j * DV + (e * T + lane) * W]; {acc} }}",
        "    }",
        "  }",
        "  if (row < SQ) {",
        "    const float inv = 1.0f / l;  // 0 (every score -inf): NaN, as the reference",
        "    #pragma unroll",
        "    for (int i = 0; i < CV * W; ++i) {",
        "      const int c = ((i / W) * T + lane) * W + i % W;",
        f"      if (c < DV) Ob[(long long)row * OSS + c] = {store('o[i] * inv', t)};",
        "    }",
        "  }",
        "}",
    ]
    return _spec(a, src, bufs, rows, SIMT_THREADS, smem)


# --------------------------------------------------------------------------- tiled form (f32)


def _tiled_kernel(a: Attention) -> KernelSpec:
    t = eltype(a.q)
    decl, bufs = _params(a)
    ldk = a.dk + 1 if a.dk % 2 == 0 else a.dk  # odd pitch: the 16 lanes' keys hit distinct banks
    nc = -(-a.dv // 64)
    ks_floats = -(-(TILED_BN * ldk) // 4) * 4  # the value tile starts 16-byte aligned
    smem = 4 * (a.dk * 68 + ks_floats + TILED_BN * a.dv + TILED_BN * 68)
    fma_s = " ".join(
        f"s[{i}][j] = fmaf(q4.{c}, kk[j], s[{i}][j]);" for i, c in enumerate("xyzw")
    )
    fma_o = " ".join(
        f"o[{i}][k * 4 + {e}] = fmaf(p4.{ci}, v4.{ce}, o[{i}][k * 4 + {e}]);"
        for i, ci in enumerate("xyzw") for e, ce in enumerate("xyzw")
    )
    shuffles = lambda var, op: " ".join(  # noqa: E731
        f"{var} = {op.format(var, f'__shfl_xor_sync(0xffffffffu, {var}, {o})')};" for o in (8, 4, 2, 1)
    )
    # TILED_PREFETCH: the next key/value tile is loaded into registers while this one is used
    kpt, vpt = -(-TILED_BN * a.dk // TILED_THREADS), -(-TILED_BN * a.dv // TILED_THREADS)
    prefetch = TILED_PREFETCH and kpt + vpt <= TILED_PREFETCH_REGS

    def fetch(n: str, pad: str) -> list[str]:
        return [
            f"{pad}#pragma unroll",
            f"{pad}for (int u = 0; u < {kpt}; ++u) {{ const int i = threadIdx.x + u * {TILED_THREADS}, r = i / DK, c = i % DK; "
            f"kr[u] = (i < BN * DK && {n} + r < SK) ? {load(f'Kb[(long long)({n} + r) * KSS + c]', t)} : 0.0f; }}",
            f"{pad}#pragma unroll",
            f"{pad}for (int u = 0; u < {vpt}; ++u) {{ const int i = threadIdx.x + u * {TILED_THREADS}, r = i / DV, c = i % DV; "
            f"vr[u] = (i < BN * DV && {n} + r < SK) ? {load(f'Vb[(long long)({n} + r) * VSS + c]', t)} : 0.0f; }}",
        ]

    prefetch_head = [f"  float kr[{kpt}], vr[{vpt}];  // the next key/value tile, in flight during this one's use",
                     *fetch("0", "  ")]
    prefetch_store = [
        "    #pragma unroll",
        f"    for (int u = 0; u < {kpt}; ++u) {{ const int i = threadIdx.x + u * {TILED_THREADS}; "
        "if (i < BN * DK) Ks[(i / DK) * LDK + i % DK] = kr[u]; }",
        "    #pragma unroll",
        f"    for (int u = 0; u < {vpt}; ++u) {{ const int i = threadIdx.x + u * {TILED_THREADS}; if (i < BN * DV) Vs[i] = vr[u]; }}",
    ]
    prefetch_next = ["    if (n0 + BN < n_end) {", *fetch("(n0 + BN)", "      "), "    }"]
    src = [
        f"// attention, tiled form ({a.dtype}): 64 query rows x 64-key tiles per block of 256 threads,",
        f"// 4x4 scores and 4x{4 * nc} outputs per thread, f32 FMAs; head_dim {a.dk}/{a.dv}; "
        f"mask {'yes' if a.mask is not None else 'no'}, causal {'yes' if a.causal else 'no'}",
        *_constants(a),
        f"constexpr int BM = 64, BN = 64, LDQ = 68, LDK = {ldk}, LDP = 68, NC = {nc};",
        f'extern "C" __global__ void __launch_bounds__({TILED_THREADS}) ENTRY({decl}) {{',
        "  extern __shared__ __align__(16) float rlx_att_smf[];",
        "  float* Qt = rlx_att_smf;  // DK x LDQ: the query tile, transposed",
        "  float* Ks = Qt + DK * LDQ;  // BN x LDK",
        f"  float* Vs = Ks + {ks_floats};  // BN x DV",
        "  float* Ps = Vs + BN * DV;  // BN x LDP: probabilities, transposed",
        "  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;  // keys tx + 16 j, rows ty * 4 + i",
        _block_coords(a, "BM"),
        *_bases(a),
        f"  for (int i = threadIdx.x; i < BM * DK; i += {TILED_THREADS}) {{",
        "    const int r = i / DK, c = i % DK;",
        f"    Qt[c * LDQ + r] = m0 + r < SQ ? {load('Qb[(long long)(m0 + r) * QSS + c]', t)} : 0.0f;",
        "  }",
        "  float o[4][NC * 4], mrow[4], lrow[4];",
        "  #pragma unroll",
        "  for (int i = 0; i < 4; ++i) {",
        "    mrow[i] = -RLX_INF; lrow[i] = 0.0f;",
        "    #pragma unroll",
        "    for (int c = 0; c < NC * 4; ++c) o[i][c] = 0.0f;",
        "  }",
        "  const int n_end = CAUSAL ? min(SK, m0 + BM) : SK;",
        *(prefetch_head if prefetch else []),
        "  for (int n0 = 0; n0 < n_end; n0 += BN) {",
        "    __syncthreads();  // the query tile is in; the last tile's reads are done",
        *(prefetch_store if prefetch else [
            f"    for (int i = threadIdx.x; i < BN * DK; i += {TILED_THREADS}) {{",
            "      const int r = i / DK, c = i % DK;",
            f"      Ks[r * LDK + c] = n0 + r < SK ? {load('Kb[(long long)(n0 + r) * KSS + c]', t)} : 0.0f;",
            "    }",
            f"    for (int i = threadIdx.x; i < BN * DV; i += {TILED_THREADS}) {{",
            "      const int r = i / DV, c = i % DV;",
            f"      Vs[i] = n0 + r < SK ? {load('Vb[(long long)(n0 + r) * VSS + c]', t)} : 0.0f;",
            "    }",
        ]),
        "    __syncthreads();",
        *(prefetch_next if prefetch else []),
        "    float s[4][4];",
        "    #pragma unroll",
        "    for (int i = 0; i < 4; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;",
        "    #pragma unroll 8",
        "    for (int d = 0; d < DK; ++d) {",
        "      const float4 q4 = *reinterpret_cast<const float4*>(&Qt[d * LDQ + ty * 4]);",
        "      float kk[4];",
        "      #pragma unroll",
        "      for (int j = 0; j < 4; ++j) kk[j] = Ks[(tx + 16 * j) * LDK + d];",
        "      #pragma unroll",
        f"      for (int j = 0; j < 4; ++j) {{ {fma_s} }}",
        "    }",
        "    #pragma unroll",
        "    for (int i = 0; i < 4; ++i) {",
        "      const int row = m0 + ty * 4 + i;",
        "      float mx = -RLX_INF;",
        "      #pragma unroll",
        "      for (int j = 0; j < 4; ++j) {",
        "        const int c = n0 + tx + 16 * j;",
        f"        s[i][j] = (c < SK && !(CAUSAL && c > row)) ? s[i][j] * SCALE_LOG2{_mask_term(a, 'row', 'c')} : -RLX_INF;",
        "        mx = fmaxf(mx, s[i][j]);",
        "      }",
        f"      {shuffles('mx', 'fmaxf({}, {})')}",
        "      const float mnew = fmaxf(mrow[i], mx);",
        "      const float muse = mnew == -RLX_INF ? 0.0f : mnew;  // all masked so far: p = 0",
        "      const float alpha = exp2f(mrow[i] - muse);",
        "      mrow[i] = mnew;",
        "      float sum = 0.0f;",
        "      #pragma unroll",
        "      for (int j = 0; j < 4; ++j) { s[i][j] = exp2f(s[i][j] - muse); sum += s[i][j]; }",
        "      lrow[i] = lrow[i] * alpha + sum;  // this lane's part; the 16 lanes' parts add up at the end",
        "      #pragma unroll",
        "      for (int c = 0; c < NC * 4; ++c) o[i][c] *= alpha;",
        "    }",
        "    #pragma unroll",
        "    for (int j = 0; j < 4; ++j)",
        "      *reinterpret_cast<float4*>(&Ps[(tx + 16 * j) * LDP + ty * 4]) = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);",
        "    __syncthreads();",
        "    #pragma unroll 4",
        "    for (int n = 0; n < BN; ++n) {",
        "      const float4 p4 = *reinterpret_cast<const float4*>(&Ps[n * LDP + ty * 4]);",
        "      #pragma unroll",
        "      for (int k = 0; k < NC; ++k) {",
        "        if ((k * 16 + tx) * 4 < DV) {",
        "          const float4 v4 = *reinterpret_cast<const float4*>(&Vs[n * DV + (k * 16 + tx) * 4]);",
        f"          {fma_o}",
        "        }",
        "      }",
        "    }",
        "  }",
        "  #pragma unroll",
        "  for (int i = 0; i < 4; ++i) {",
        "    float l = lrow[i];",
        f"    {shuffles('l', '{} + {}')}",
        "    const float inv = 1.0f / l;  // 0 (every score -inf): NaN, as the reference",
        "    const int row = m0 + ty * 4 + i;",
        "    if (row < SQ) {",
        "      #pragma unroll",
        "      for (int k = 0; k < NC; ++k) {",
        "        const int c = (k * 16 + tx) * 4;",
        "        if (c < DV) {",
        "          #pragma unroll",
        f"          for (int e = 0; e < 4; ++e) Ob[(long long)row * OSS + c + e] = {store('o[i][k * 4 + e] * inv', t)};",
        "        }",
        "      }",
        "    }",
        "  }",
        "}",
    ]
    return _spec(a, src, bufs, TILED_BM, TILED_THREADS, smem)

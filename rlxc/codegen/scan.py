"""Kernels along one axis that are neither reductions nor elementwise:
`cumsum_kernel` (a prefix sum, f32 or i64 accumulation) and `topk_kernel`
(k selection passes of a block per row).

cumsum has two forms: a thread per line (every element but the axis fixed)
walking the axis, adjacent threads on adjacent lines, so reads coalesce
whenever the axis is not innermost; and, for a long innermost axis, a block
per row scanning THREADS elements at a time (warp shuffles, then the warps'
totals) with a running carry.
"""

from __future__ import annotations

from rlxc.codegen.common import (
    THREADS,
    Buf,
    KernelSpec,
    eltype,
    grid_for,
    int_of,
    numel,
    params_decl,
    shape,
)
from rlxc.codegen.cuda_c import load, storage_type, store
from rlxc.codegen.rows import Rows
from rlxc.dialects import rlx
from rlxc.dialects.types import is_float

#: An innermost axis at least this long is scanned by a block per row.
BLOCK_SCAN_MIN = 128


def cumsum_kernel(op: rlx.CumsumOp, sm_count: int) -> KernelSpec:
    """ONNX CumSum along one axis; floats accumulate in f32, integers in
    64 bits (stored back with the type's wrap-around)."""
    x, y = op.input, op.result
    xs = shape(x)
    axis = int_of(op.axis) % len(xs)
    d, inner, outer = xs[axis], numel(xs[axis + 1 :]), numel(xs[:axis])
    t = eltype(x)
    acc = "float" if is_float(t) else "long long"
    exclusive, reverse = op.exclusive is not None, op.reverse is not None

    def put(v: str) -> str:
        return store(v, t) if is_float(t) else f"({storage_type(t)})({v})"

    decl = params_decl([("x", x, False), ("y", y, True)])
    src = [f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{']
    if inner == 1 and d >= BLOCK_SCAN_MIN:
        warps = THREADS // 32
        out = "before + e" if exclusive else "before + s"
        src += [
            f"  __shared__ {acc} part[{warps}];",
            "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
            f"  for (long long r = blockIdx.x; r < {outer}LL; r += gridDim.x) {{",
            f"    {acc} carry = 0;",
            f"    for (long long c0 = 0; c0 < {d}LL; c0 += {THREADS}) {{",
            "      const long long j = c0 + threadIdx.x;",
            f"      const long long o = r * {d}LL + " + (f"({d - 1}LL - j);" if reverse else "j;"),
            f"      const {acc} v = j < {d}LL ? ({acc}){load('x[o]', t)} : ({acc})0;",
            f"      {acc} s = v;",
            f"      for (int w = 1; w < 32; w <<= 1) {{ const {acc} n = __shfl_up_sync(0xffffffffu, s, w); if (lane >= w) s += n; }}",
            f"      {acc} e = __shfl_up_sync(0xffffffffu, s, 1); if (lane == 0) e = 0;",
            "      if (lane == 31) part[warp] = s;",
            "      __syncthreads();",
            "      if (warp == 0) {",
            f"        {acc} p = lane < {warps} ? part[lane] : ({acc})0;",
            f"        for (int w = 1; w < {warps}; w <<= 1) {{ const {acc} n = __shfl_up_sync(0xffffffffu, p, w); if (lane >= w) p += n; }}",
            f"        if (lane < {warps}) part[lane] = p;",
            "      }",
            "      __syncthreads();",
            f"      const {acc} before = carry + (warp > 0 ? part[warp - 1] : ({acc})0);",
            f"      if (j < {d}LL) y[o] = {put(out)};",
            f"      carry += part[{warps - 1}];",
            "      __syncthreads();  // part is rewritten by the next chunk",
            "    }",
            "  }",
            "}",
        ]
        grid = max(1, min(outer, sm_count * 8))
        family = "cumsum_rows"
    else:
        lines = outer * inner
        step = f"acc += v; y[o] = {put('acc')};" if not exclusive else f"y[o] = {put('acc')}; acc += v;"
        src += [
            "  const long long stride = (long long)gridDim.x * blockDim.x;",
            f"  for (long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x; l < {lines}LL; l += stride) {{",
            f"    const long long base = (l / {inner}LL) * {d * inner}LL + l % {inner}LL;",
            f"    {acc} acc = 0;",
            f"    for (long long j = 0; j < {d}LL; ++j) {{",
            "      const long long o = base + " + (f"({d - 1}LL - j)" if reverse else "j") + f" * {inner}LL;",
            f"      const {acc} v = ({acc}){load('x[o]', t)};",
            f"      {step}",
            "    }",
            "  }",
            "}",
        ]
        grid = grid_for(lines, sm_count)
        family = "cumsum"
    return KernelSpec(family, "\n".join(src) + "\n", [Buf(x), Buf(y, True)], grid)


def topk_kernel(op: rlx.TopKOp, sm_count: int) -> KernelSpec:
    """ONNX TopK, a block per row, one selection pass per output: pass t
    finds the best element ordered after pick t-1 (the order is total: value,
    NaN as the largest, then index), a strided scan and a block reduction.
    O(k · n / THREADS) reads per row, correct for any row length; values are
    copied bit for bit."""
    x, vals, ids = op.input, op.values, op.indices
    xs, ys = shape(x), shape(vals)
    axis = int_of(op.axis) % len(xs)
    rows, out = Rows.of(xs, [axis]), Rows.of(ys, [axis])
    t = eltype(x)
    c = "float" if is_float(t) else "long long"
    smallest = op.smallest is not None
    # rlx_topk_before(a, ia, b, ib): a comes strictly before b in the output
    cmp = "<" if smallest else ">"
    helper = [f"__device__ __forceinline__ bool rlx_topk_before({c} a, long long ia, {c} b, long long ib) {{"]
    if is_float(t):
        helper += [
            "  const bool an = a != a, bn = b != b;  // NaN is the largest",
            "  if (an || bn) return an && bn ? ia < ib : " + ("bn;" if smallest else "an;"),
        ]
    helper += [f"  return a {cmp} b || (a == b && ia < ib);", "}"]
    warps = THREADS // 32
    decl = params_decl([("x", x, False), ("vals", vals, True), ("ids", ids, True)])
    merge = "if (oi >= 0 && (bi < 0 || rlx_topk_before(ov, oi, bv, bi))) { bv = ov; bi = oi; }"
    shfl = f"const {c} ov = __shfl_xor_sync(0xffffffffu, bv, s); const long long oi = __shfl_xor_sync(0xffffffffu, bi, s);"
    src = [
        f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({decl}) {{',
        f"  __shared__ {c} sv[{warps}]; __shared__ long long si[{warps}];",
        "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
        f"  for (long long r = blockIdx.x; r < {rows.rows}LL; r += gridDim.x) {{",
        f"    const long long base = {rows.row_base}, obase = {out.row_base};",
        f"    {c} pv = 0; long long pi = -1;  // the previous pick (none yet)",
        f"    for (long long t = 0; t < {out.cols}LL; ++t) {{",
        f"      {c} bv = 0; long long bi = -1;",
        f"      for (long long k = threadIdx.x; k < {rows.cols}LL; k += {THREADS}) {{",
        f"        const {c} v = ({c}){load(f'x[base + ({rows.col_off})]', t)};",
        "        if (pi >= 0 && !rlx_topk_before(pv, pi, v, k)) continue;  // taken already",
        "        if (bi < 0 || rlx_topk_before(v, k, bv, bi)) { bv = v; bi = k; }",
        "      }",
        f"      for (int s = 16; s > 0; s >>= 1) {{ {shfl} {merge} }}",
        "      if (lane == 0) { sv[warp] = bv; si[warp] = bi; }",
        "      __syncthreads();",
        "      if (warp == 0) {",
        f"        bv = lane < {warps} ? sv[lane] : ({c})0; bi = lane < {warps} ? si[lane] : -1;",
        f"        for (int s = 16; s > 0; s >>= 1) {{ {shfl} {merge} }}",
        "        if (lane == 0) { sv[0] = bv; si[0] = bi; }",
        "      }",
        "      __syncthreads();",
        "      pv = sv[0]; pi = si[0];",
        "      if (threadIdx.x == 0) {",
        "        long long from, to;",
        f"        {{ const long long k = pi; from = base + ({rows.col_off}); }}",
        f"        {{ const long long k = t; to = obase + ({out.col_off}); }}",
        "        vals[to] = x[from]; ids[to] = pi;",
        "      }",
        "      __syncthreads();  // sv is rewritten by the next pass",
        "    }",
        "  }",
        "}",
    ]
    body = "\n".join(helper) + "\n" + "\n".join(src) + "\n"
    grid = max(1, min(rows.rows, sm_count * 8))
    return KernelSpec("topk", body, [Buf(x), Buf(vals, True), Buf(ids, True)], grid)

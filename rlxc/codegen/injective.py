"""Injective kernels: each output element is one input element, moved.
`transpose` (a shared-memory tile for swapping the last two axes), `expand`,
`slice`, `concat` and `gather` (numpy.take) map each output index to its
source index with baked-in strides, in a grid-stride loop (`injective`).
"""

from __future__ import annotations

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


def transpose_kernel(op: rlx.TransposeOp, sm_count: int) -> KernelSpec:
    """Swapping the last two axes (a batched 2-D transpose) goes through a
    padded 32x32 shared-memory tile, so both reads and writes are coalesced;
    other permutations map each output index to its source directly."""
    perm = ints(op.perm)
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
    return injective("transpose", op.result, [("x", op.input)], [f"y[i] = x[{expr}];"], sm_count)


def expand_kernel(op: rlx.ExpandOp, sm_count: int) -> KernelSpec:
    """A materialised broadcast (a fused one needs none)."""
    expr = index_expr("i", shape(op.result), shape(op.input))
    return injective("expand", op.result, [("x", op.input)], [f"y[i] = x[{expr}];"], sm_count)


def slice_kernel(op: rlx.SliceOp, sm_count: int) -> KernelSpec:
    """Strided slice: a base offset plus the steps folded into the strides."""
    xs, ys = shape(op.input), shape(op.result)
    xst = strides(xs)
    starts, steps = ints(op.starts), ints(op.steps)
    base = sum(s * st for s, st in zip(starts, xst))
    expr = index_expr("i", ys, ys, [st * step for st, step in zip(xst, steps)])
    return injective("slice", op.result, [("x", op.input)], [f"y[i] = x[{base}LL + {expr}];"], sm_count)


def concat_kernel(op: rlx.ConcatOp, sm_count: int) -> KernelSpec:
    """Each output element picks its input by its coordinate on the axis."""
    ys = shape(op.result)
    axis = int_of(op.axis) % len(ys)
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
    return injective("concat", op.result, [(f"x{j}", x) for j, x in enumerate(ins)], lines, sm_count)


def gather_kernel(op: rlx.GatherOp, sm_count: int) -> KernelSpec:
    """numpy.take: negative indices count from the end; an index still out of
    range is clamped (a kernel cannot raise; the interpreter reports it)."""
    xs, ys, ids = shape(op.input), shape(op.result), shape(op.indices)
    axis = int_of(op.axis) % len(xs)
    inner = numel(xs[axis + 1 :])
    nid = numel(ids)
    d = xs[axis]
    lines = [
        f"const long long in_ = i % {inner}LL, j = (i / {inner}LL) % {nid}LL, outer = i / {inner * nid}LL;",
        f"long long q = (long long)ids[j]; if (q < 0) q += {d}LL; q = q < 0 ? 0 : (q >= {d}LL ? {d - 1}LL : q);",
        f"y[i] = x[(outer * {d}LL + q) * {inner}LL + in_];",
    ]
    return injective("gather", op.result, [("x", op.input), ("ids", op.indices)], lines, sm_count)

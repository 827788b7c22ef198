"""Elementwise kernels: one per `rlx.elementwise_region`, its body rendered
as straight-line C++ through the scalar-op table (`cuda_c.render_scalar`).

Each thread owns UNROLL vectors: 16-byte loads and stores (4 elements) of
the full-shape buffers when the element count allows, else single
elements; broadcast inputs are read per element through per-input strides.
"""

from __future__ import annotations

from xdsl.ir import Attribute, Block, SSAValue

from rlxc.codegen.common import THREADS, Buf, KernelSpec, eltype, index_expr, numel, params_decl, shape
from rlxc.codegen.cuda_c import compute_type, load, render_scalar, storage_type, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype

#: Vectors (float4 where the dtype allows, else single elements) each thread
#: of an elementwise kernel loads and stores, all loads issued before any use.
#: Each thread makes one trip (no grid-stride loop): on an H200 this shape
#: reached 92.6% of the 1 GiB copy bandwidth where a persistent grid-stride
#: loop reached 86-88%, and unroll 2 and 8 lost on the transcendental chain
#: (`benchmarks/ew_variants.py`, benchmarks/RESULTS.md).
UNROLL = 4


def _vector_type(t: Attribute) -> str | None:
    return dtype(t).c_vector


def index_type(n: int) -> tuple[str, str]:
    """(C type, constant suffix) for indices below `n` plus one block's reach:
    32-bit unsigned where it fits, else 64-bit."""
    return ("unsigned", "u") if n + 4 * THREADS * UNROLL < 2**31 else ("long long", "LL")


def elementwise_kernel(op: rlx.ElementwiseRegionOp, sm_count: int) -> KernelSpec:
    """The region's kernel (see the module docstring): inputs of the full
    shape are held in registers as vectors before any use; smaller inputs
    are read per element at their broadcast index."""
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


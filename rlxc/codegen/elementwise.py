"""Elementwise kernels: one per `rlx.elementwise_region`, its body rendered
as straight-line C++ through the scalar-op table (`cuda_c.render_body`).

Each thread owns UNROLL vectors of W elements, moved as 16-byte accesses:
W = 4 for f32/i32 regions (float4, int4), W = 8 where a buffer is f16 or
bf16 (a uint4 of 8 halves, converted in pairs; a buffer of wider elements
moves its 8 elements as two 16-byte accesses). The full-shape buffers
are read and written as vectors, and so are broadcast inputs whose
innermost axis is not broadcast (a bias row: one vector per W outputs);
a row broadcast over leading axes that W does not divide is read
cyclically (W elements from column (w W) mod K, or, in a region that only
moves its elements, one shifted 16-byte vector: CYCLIC_WINDOW); other
broadcast inputs are read per element through per-input strides.
An input read in place (a window of columns of a wider tensor: gate/up
halves) is read as vectors where the window's offset and width and the
tensor's innermost axis are multiples of W, per element otherwise.
When the element count is not a multiple of W, one more thread does the
last n % W elements one at a time (the tail); fewer than W elements take
the scalar form (one element per access). The form is named in a comment
line of the source.
"""

from __future__ import annotations

from xdsl.ir import Attribute, Block, SSAValue

from rlxc.codegen.common import Buf, KernelSpec, eltype, index_expr, numel, params_decl, shape, strides
from rlxc.codegen.cuda_c import compute_type, load, render_body, storage_type, store
from rlxc.dialects import rlx
from rlxc.dialects.types import dtype, dtype_name

#: The block's shape: BLOCK_THREADS threads, each moving UNROLL vectors
#: (16-byte accesses: see the module docstring), all loads issued before
#: any use. Each thread makes one trip (no grid-stride loop): on an H200
#: this shape reached 92.6% of the 1 GiB copy bandwidth where a persistent
#: grid-stride loop reached 86-88% (`benchmarks/ew_variants.py`,
#: benchmarks/RESULTS.md). H200 (session 27, `variant.py
#: elementwise.BLOCK_THREADS=256,128`, then `elementwise.UNROLL=4,2,1` at
#: 128 -- `--ops gelu,bias_gelu --rows 128,4096 --sizes 64,512`): 128 x 2
#: against the 256 x 4 before (256 x 2 for f32 GELU) took GELU in f32, f16
#: and bf16 from 261-263 to 253-254 µs at 512 MiB (101-102% of copy; eager
#: 256-259 in f32) and 2-4% at 64 MiB, f32 bias+gelu 2.5-3.3%. A bare
#: f32 map measured the same way: 128 x 2 and 256 x 1 at 4200 GB/s, 256 x
#: 2, 128 x 4 and 256 x 4 at 4040-4095 (`ld.global.cs`/`st.global.cs` and
#: `L1::no_allocate` loads 5-7% slower).
BLOCK_THREADS = 128
UNROLL = 2
#: ... where the region moves f16/bf16 vectors and reads a broadcast input
#: as vectors (a bias row): 16-bit bias+gelu lost 1-4% at 128 x 2 and 128 x
#: 4 against 256 x 4 (H200, session 27).
BROADCAST16_THREADS = 256
BROADCAST16_UNROLL = 4

#: Inputs broadcast over leading axes only (a bias row whose length W does
#: not divide: rows of 2049) but not read as vectors are read cyclically:
#: each thread loads its W elements of them with its vectors, before any
#: use (column c = (w * W) % K, then c + 1, wrapping), not one element at a
#: time with `i % K` inside the math. H200, 16-bit bias+gelu over rows of
#: 2049, 8191 and 24577 at 64 MiB took 45.6-48.0 µs (session 36) where rows
#: 8 divides took 39. Session 37 (`variant.py elementwise.CYCLIC_PRELOAD=
#: False,True -- --ops bias_gelu --rows 1001,2049,8191,24577 --sizes
#: 64,512`): 16-bit 2-11% faster (f16 of 8191 47.3 -> 44.0 µs at 64 MiB,
#: 358.6 -> 323.4 at 512), f32 within -2% .. +4%. Still 73-75% of copy at
#: 64 MiB: 8 two-byte loads a vector against one 16-byte load of x.
CYCLIC_PRELOAD = True
#: ... where a thread's W columns do not wrap past the row's end (all but
#: one vector a row), W loads at c + l, with no wrap test per element (the
#: vectors that wrap keep it). H200, session 42 (`variant.py
#: elementwise.CYCLIC_SPLIT=False,True -- --ops bias_gelu --rows
#: 1001,2049,4096,8191,24577,30522 --dtypes f32,f16,bf16 --sizes 64,512`):
#: 16-bit +5.6% to +11.7% (f16 of 8191 43.6 -> 40.1 µs at 64 MiB, 323.0 ->
#: 297.5 at 512; bf16 of 2049 44.8 -> 40.6), f32 within -1.2% .. +0.6%
#: (as its rows of 4096, which read no row cyclically). Measured and not
#: taken: one shifted 16-byte vector instead (`rlx_ld_window`: two 16-byte
#: loads and selects), 4-13% slower in all three; 16-bit regions that read
#: a row cyclically at BROADCAST16_THREADS x BROADCAST16_UNROLL, 4-9% slower.
CYCLIC_SPLIT = True
#: ... and where a region only moves its elements (no op in its body: an
#: expand of a row), the columns that do not wrap as one 16-byte vector
#: shifted to the column (`rlx_ld_window`: the two aligned vectors around
#: it) rather than W loads of one element, for 16-byte vector types ("move";
#: "all": every region, "none": no region). H200, session 51 (`variant.py
#: elementwise.CYCLIC_WINDOW=none,move,all -- --ops expand,bias_gelu --rows
#: 1001,2049,8191,24577,30522 --dtypes f32,f16,bf16 --sizes 64,512`):
#: 16-bit expands +38% to +58% (f16 of 24577 25.0 -> 17.8 µs at 64 MiB, 65%
#: -> 91% of copy; 180.2 -> 120.0 at 512), f32 -0.5% to +1.8%; "all" took
#: bias+gelu 0% to -13% (as session 42 found), so only moves take it.
CYCLIC_WINDOW = "move"

#: Element types moved as 8 elements per uint4, converted in pairs
#: (`rlx_ld8_*` / `rlx_st8_*` of rlx_kernels.cuh).
_HALVES = ("f16", "bf16")


def index_type(n: int) -> tuple[str, str]:
    """(C type, constant suffix) for indices below `n` plus one block's reach:
    32-bit unsigned where it fits, else 64-bit."""
    reach = 8 * max(BLOCK_THREADS * UNROLL, BROADCAST16_THREADS * BROADCAST16_UNROLL)
    return ("unsigned", "u") if n + reach < 2**31 else ("long long", "LL")


def vector_width(types: list[Attribute]) -> int:
    """Elements per vector of a kernel moving buffers of `types`: the widest
    16-byte access among them (4 for f32, 8 for f16/bf16); 1 when none has
    a vector type."""
    widths = [dtype(t).vector_width for t in types if dtype(t).c_vector]
    return max(widths, default=1)


def _halves(t: Attribute) -> bool:
    return dtype_name(t) in _HALVES


def elementwise_kernel(op: rlx.ElementwiseRegionOp, sm_count: int) -> KernelSpec:
    """The region's kernel (see the module docstring): vector inputs are held
    in registers before any use; per-element inputs are read at their
    broadcast index."""
    out_shape = shape(op.outputs[0])
    n = numel(out_shape)
    block: Block = op.body.block
    ins = list(op.inputs)
    outs = list(op.outputs)
    windows = op.input_windows()
    idx_t, sfx = index_type(max([n, *(numel(shape(ins[j])) for j in windows)]))
    yields = list(block.last_op.operands)  # pyright: ignore[reportOptionalMemberAccess]

    def window_at(j: int, i: str, coords: tuple[int, ...], per: int) -> str:
        """Windowed input j's offset, in units of `per` elements, for index
        `i` of `coords` (the output's shape in those units): from the
        window's first column, through the whole tensor's strides."""
        x, (off, width) = ins[j], windows[j]
        seen = (*op.input_shape(j)[:-1], width // per)
        st = [0 if d == 1 else s for d, s in zip(seen, strides((*shape(x)[:-1], shape(x)[-1] // per)))]
        at = index_expr(i, coords, seen, st, suffix=sfx)
        return f"{at} + {off // per}{sfx}" if off else at

    def element_at(j: int) -> str:
        """Input j's offset for output element `i`: its broadcast index, or within its window."""
        if j in windows:
            return window_at(j, "i", tuple(out_shape), 1)
        return index_expr("i", out_shape, shape(ins[j]), suffix=sfx)

    def window_aligned(j: int, w: int) -> bool:
        """Windowed input j can be read as vectors of `w` elements: the
        window's offset, its width (the output's innermost axis) and the
        whole tensor's innermost axis are multiples of `w`."""
        off, width = windows[j]
        return (width == out_shape[-1] and off % w == 0 and width % w == 0 and shape(ins[j])[-1] % w == 0
                and w % dtype(eltype(ins[j])).vector_width == 0)

    # windowed inputs are read as vectors where aligned (see `vec_index`), else an element at a time
    full = [j for j, x in enumerate(ins) if shape(x) == out_shape and j not in windows]
    vec_outs = [j for j, r in enumerate(outs) if dtype(eltype(r)).c_vector]
    w_ = vector_width([eltype(ins[j]) for j in full if dtype(eltype(ins[j])).c_vector] + [eltype(outs[j]) for j in vec_outs])
    vec = w_ > 1 and n >= w_
    W = w_ if vec else 1
    nv, tail = (n // W, n % W) if vec else (n, 0)
    # vector inputs: the full-shape ones, and broadcast ones whose innermost
    # axis is the output's (one vector per W outputs: W divides that axis)
    held = [j for j in full if dtype(eltype(ins[j])).c_vector]
    if vec:
        held += [
            j for j, x in enumerate(ins)
            if j not in full and j not in windows and dtype(eltype(x)).c_vector and len(shape(x)) > 0
            and shape(x)[-1] == out_shape[-1]
            and out_shape[-1] % W == 0 and numel(shape(x)) > 1 and W % dtype(eltype(x)).vector_width == 0
        ]  # fmt: skip
        held += [j for j in windows if dtype(eltype(ins[j])).c_vector and window_aligned(j, W)]
        held.sort()
    else:
        held = list(full)  # the scalar form holds single elements
    # inputs read cyclically (see CYCLIC_PRELOAD): broadcast over leading axes only, K elements
    cyclic: dict[int, int] = {}
    if vec and CYCLIC_PRELOAD:
        for j, x in enumerate(ins):
            xs = list(shape(x))
            while xs and xs[0] == 1:
                xs.pop(0)
            if (j not in held and j not in windows and xs and 1 < numel(xs) < n
                    and tuple(xs) == tuple(out_shape[len(out_shape) - len(xs):])):
                cyclic[j] = numel(xs)
    # cyclic inputs read as shifted 16-byte vectors (see CYCLIC_WINDOW), held as vectors from there
    assert CYCLIC_WINDOW in ("none", "move", "all"), f"elementwise.CYCLIC_WINDOW: {CYCLIC_WINDOW!r}"
    moves = len(list(block.ops)) == 1
    shifted = {  # input -> its K elements, as `cyclic`'s
        j: k for j, k in cyclic.items()
        if CYCLIC_SPLIT and k > W and (CYCLIC_WINDOW == "all" or (CYCLIC_WINDOW == "move" and moves))
        and dtype(eltype(ins[j])).vector_width == W and dtype(eltype(ins[j])).bytes * W == 16
    }
    for j in shifted:
        del cyclic[j]
    # values stored only (into f16/bf16 outputs) skip their last rounding: the store rounds
    uses: dict[SSAValue, int] = {}
    for v in block.ops:
        for x in v.operands:
            uses[x] = uses.get(x, 0) + 1
    store_only = {
        y for y, r in zip(yields, outs) if uses.get(y, 0) == 1 and _halves(eltype(r)) and y.type == eltype(r)
    }

    def chunks(t: Attribute) -> int:
        return W // dtype(t).vector_width

    def vec_index(j: int) -> str:
        """Vector index of input j's vector for the output vector `w`."""
        x = ins[j]
        if shape(x) == out_shape and j not in windows:
            return "w"
        vs = (*out_shape[:-1], out_shape[-1] // W)
        if j in windows:
            return f"({window_at(j, 'w', vs, W)})"
        xs = (*shape(x)[:-1], shape(x)[-1] // W)
        return f"({index_expr('w', vs, xs, suffix=sfx)})"

    def body_lines(mode: str) -> list[str]:
        """The region body for one element. mode "vector": element l of the
        vector (inputs from q{j}[l], outputs to r{j}[l]); "scalar": the
        scalar form (held inputs from p{j}[u], outputs to out{j}[w]);
        "tail": element i, straight from and to memory."""
        args = []
        for j, x in enumerate(ins):
            if mode == "vector" and (j in held or j in shifted):
                args.append(f"q{j}[l]")
            elif mode == "vector" and j in cyclic:
                args.append(load(f"b{j}[u][l]", eltype(x)))
            elif mode == "scalar" and j in held:
                args.append(load(f"p{j}[u]", eltype(x)))
            else:
                args.append(load(f"in{j}[{element_at(j)}]", eltype(x)))
        out, names = render_body(block, args, "v", rounded=lambda v: v not in store_only)
        for j, (y, r) in enumerate(zip(yields, outs)):
            if mode == "vector" and j in vec_outs:
                value = names[y] if _halves(eltype(r)) else store(names[y], eltype(r))
                out.append(f"r{j}[l] = {value};")
            else:
                target = {"vector": f"out{j}[w * {W}{sfx} + l]", "scalar": f"out{j}[w]", "tail": f"out{j}[i]"}[mode]
                out.append(f"{target} = {store(names[y], eltype(r))};")
        return out

    decl = params_decl(
        [(f"in{j}", x, False) for j, x in enumerate(ins)]
        + [(f"out{j}", r, True) for j, r in enumerate(outs)]
    )
    bias16 = vec and W == 8 and any(j not in full and j not in windows for j in held)
    threads, unroll = (BROADCAST16_THREADS, BROADCAST16_UNROLL) if bias16 else (BLOCK_THREADS, UNROLL)
    if vec:
        form = f"vector: {W} elements per thread and trip, 16-byte accesses"
        if tail:
            form += f", a tail of {tail} elements"
    else:
        form = "scalar: one element per access"
    src = [f"// elementwise form: {form}, {unroll} trips per thread, {threads} threads a block"]
    src += [f"// input {j} in place: columns {off}..{off + width} of {shape(ins[j])[-1]}, "
            + ("16-byte vectors" if j in held and vec else "one element per access")
            for j, (off, width) in sorted(windows.items())]
    src.append(f'extern "C" __global__ void __launch_bounds__({threads}) ENTRY({decl}) {{')
    src.append(f"  const {idx_t} w0 = ({idx_t})blockIdx.x * {threads * unroll}{sfx} + threadIdx.x;")
    for j in held:
        t = eltype(ins[j])
        if not vec:
            src.append(f"  {storage_type(t)} p{j}[{unroll}];")
        elif chunks(t) == 1:
            src.append(f"  {dtype(t).c_vector} p{j}[{unroll}];")
        else:
            src.append(f"  {dtype(t).c_vector} p{j}[{unroll}][{chunks(t)}];")
    for j in cyclic:
        src.append(f"  {storage_type(eltype(ins[j]))} b{j}[{unroll}][{W}];  // input {j}, cyclic: {cyclic[j]} elements")
    for j, k in shifted.items():
        src.append(f"  {dtype(eltype(ins[j])).c_vector} p{j}[{unroll}];  // input {j}, cyclic: {k} "
                   "elements, shifted 16-byte vectors")
    if held or cyclic or shifted:
        src.append("  #pragma unroll")
        src.append(f"  for (int u = 0; u < {unroll}; ++u) {{")
        src.append(f"    const {idx_t} w = w0 + u * {threads}{sfx};")
        src.append(f"    if (w < {nv}{sfx}) {{")
        for j in held:
            t = eltype(ins[j])
            if not vec:
                src.append(f"      p{j}[u] = in{j}[w];")
                continue
            cv, c = dtype(t).c_vector, chunks(t)
            if c == 1:
                src.append(f"      p{j}[u] = reinterpret_cast<const {cv}*>(in{j})[{vec_index(j)}];")
            else:
                for k in range(c):
                    src.append(f"      p{j}[u][{k}] = reinterpret_cast<const {cv}*>(in{j})[{vec_index(j)} * {c}{sfx} + {k}];")
        for j, k in cyclic.items():
            wrap = f"for (int l = 0; l < {W}; ++l) {{ b{j}[u][l] = in{j}[c{j}]; c{j} = c{j} + 1{sfx} == {k}{sfx} ? 0{sfx} : c{j} + 1{sfx}; }}"
            src.append(f"      {idx_t} c{j} = (w * {W}{sfx}) % {k}{sfx};")
            if CYCLIC_SPLIT and k > W:
                src += [
                    f"      if (c{j} + {W}{sfx} <= {k}{sfx}) {{  // columns c..c+{W - 1}: no wrap",
                    "        #pragma unroll",
                    f"        for (int l = 0; l < {W}; ++l) b{j}[u][l] = in{j}[c{j} + l];",
                    "      } else {",
                    "        #pragma unroll",
                    f"        {wrap}",
                    "      }",
                ]
            else:
                src += ["      #pragma unroll", f"      {wrap}"]
        for j, k in shifted.items():
            t = eltype(ins[j])
            e, cv = dtype(t).bytes, dtype(t).c_vector
            st = storage_type(t)
            if _halves(t):
                packed = "make_uint4(" + ", ".join(f"(unsigned)e[{2 * q}] | ((unsigned)e[{2 * q + 1}] << 16)" for q in range(4)) + ")"
                shift = "v"
            else:
                packed = f"make_{cv}(e[0], e[1], e[2], e[3])"
                cast = "__uint_as_float" if cv == "float4" else "(int)"
                shift = f"make_{cv}(" + ", ".join(f"{cast}(v.{f})" for f in "xyzw") + ")"
            src += [
                f"      {idx_t} c{j} = (w * {W}{sfx}) % {k}{sfx};",
                f"      if (c{j} + {W}{sfx} <= {k}{sfx}) {{  // columns c..c+{W - 1}: no wrap, one shifted vector",
                f"        const long long s = (long long)c{j} * {e}, a = (s + 15) & ~15LL;",
                f"        const uint4 v = rlx_ld_window(in{j}, a, (int)(a - s));",
                f"        p{j}[u] = {shift};",
                "      } else {",
                f"        {st} e[{W}];",
                "        #pragma unroll",
                f"        for (int l = 0; l < {W}; ++l) {{ e[l] = in{j}[c{j}]; c{j} = c{j} + 1{sfx} == {k}{sfx} ? 0{sfx} : c{j} + 1{sfx}; }}",
                f"        p{j}[u] = {packed};",
                "      }",
            ]
        src.append("    }")
        src.append("  }")
    src.append("  #pragma unroll")
    src.append(f"  for (int u = 0; u < {unroll}; ++u) {{")
    src.append(f"    const {idx_t} w = w0 + u * {threads}{sfx};")
    if not vec:
        src.append(f"    if (w >= {nv}{sfx}) break;")
        if len(held) < len(ins):
            src.append(f"    const {idx_t} i = w;")
        src.extend("    " + line for line in body_lines("scalar"))
    else:
        if tail:
            src.append(f"    if (w >= {nv}{sfx}) {{")
            src.append(f"      if (w == {nv}{sfx}) {{  // the tail: the last {tail} elements, one at a time")
            src.append(f"        for (int l = 0; l < {tail}; ++l) {{")
            src.append(f"          const {idx_t} i = {nv * W}{sfx} + l;")
            src.extend("          " + line for line in body_lines("tail"))
            src.append("        }")
            src.append("      }")
            src.append("      break;")
            src.append("    }")
        else:
            src.append(f"    if (w >= {nv}{sfx}) break;")
        for j in sorted([*held, *shifted]):
            t = eltype(ins[j])
            ct = compute_type(t)
            if _halves(t):
                src.append(f"    float q{j}[{W}]; rlx_ld8_{dtype_name(t)}(p{j}[u], q{j});")
                continue
            c = chunks(t)
            parts = ", ".join(
                load(f"p{j}[u]{'' if c == 1 else f'[{k}]'}.{e}", t) for k in range(c) for e in "xyzw"
            )
            src.append(f"    const {ct} q{j}[{W}] = {{{parts}}};")
        for j in vec_outs:
            r = outs[j]
            src.append(f"    {'float' if _halves(eltype(r)) else storage_type(eltype(r))} r{j}[{W}];")
        src.append("    #pragma unroll")
        src.append(f"    for (int l = 0; l < {W}; ++l) {{")
        if any(j not in held and j not in cyclic and j not in shifted for j in range(len(ins))):
            src.append(f"      const {idx_t} i = w * {W}{sfx} + l;")
        src.extend("      " + line for line in body_lines("vector"))
        src.append("    }")
        for j in vec_outs:
            t = eltype(outs[j])
            cv, c = dtype(t).c_vector, chunks(t)
            if _halves(t):
                src.append(f"    reinterpret_cast<uint4*>(out{j})[w] = rlx_st8_{dtype_name(t)}(r{j});")
                continue
            for k in range(c):
                parts = ", ".join(f"r{j}[{4 * k + e}]" for e in range(4))
                at = "w" if c == 1 else f"w * {c}{sfx} + {k}"
                src.append(f"    reinterpret_cast<{cv}*>(out{j})[{at}] = make_{cv}({parts});")
    src.append("  }")
    src.append("}")
    params: list[Buf | int] = [Buf(x) for x in ins] + [Buf(r, True) for r in outs]
    grid = -(-(nv + (1 if tail else 0)) // (threads * unroll))
    return KernelSpec("ew", "\n".join(src) + "\n", params, grid, threads)

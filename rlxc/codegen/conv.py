"""Convolution, pooling and resize: direct `conv2d` and `conv_transpose2d`,
max/avg `pool` and `resize` kernels, a thread per output element (through
`injective`'s grid-stride loop), f32 accumulation.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlxc.codegen.common import THREADS, Buf, KernelSpec, eltype, grid_for, int_of, ints, params_decl, shape, strides
from rlxc.codegen.cuda_c import float_literal, load, store
from rlxc.codegen.injective import _RAW, injective, vector_elems
from rlxc.dialects.types import dtype
from rlxc.dialects import rlx


def _direct(op: rlx.Conv2dOp | rlx.ConvTranspose2dOp) -> tuple[list[tuple[str, SSAValue]], str, str]:
    """What both direct convolutions start with: their buffers (x, wt, and
    bias where there is one), the output element's coordinates (ox, oy, oc,
    b) from the thread's index `i`, and the accumulator's start (the bias)."""
    _, o, oh, ow = shape(op.result)
    t = eltype(op.input)
    ins = [("x", op.input), ("wt", op.weight)] + ([("bias", op.bias)] if op.bias is not None else [])
    coords = f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, oc = (i / {ow * oh}LL) % {o}LL, b = i / {ow * oh * o}LL;"
    acc = "float acc = " + (load("bias[oc]", t) if op.bias is not None else "0.0f") + ";"
    return ins, coords, acc


def conv2d_kernel(op: rlx.Conv2dOp, sm_count: int) -> KernelSpec:
    """Direct convolution: a thread per output element, f32 accumulation."""
    n, c, h, w = shape(op.input)
    o, cg, kh, kw = shape(op.weight)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    og = o // int_of(op.groups)
    t = eltype(op.input)
    ins, coords, acc = _direct(op)
    lines = [
        coords,
        f"const long long g = oc / {og}LL;",
        acc,
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
    return injective("conv2d", op.result, ins, lines, sm_count)


def im2col_kernel(op: rlx.Im2colOp, sm_count: int) -> KernelSpec:
    """A thread per item of the [n, oh, ow, kh*kw*c] result: a run of
    channels of one tap (16, 8 or 4 bytes where c allows, else one element)
    copied from its input pixel, or zeros in the padding. Consecutive
    threads take consecutive items of a patch (coalesced stores, and loads
    coalesced along the channels), in 32-bit index arithmetic where the
    tensors' items fit."""
    n, h, w, c = shape(op.input)
    _, oh, ow, _ = shape(op.result)
    kh, kw = ints(op.kernel)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    size = dtype(eltype(op.input)).bytes
    vw = vector_elems(size, [c])
    cv = c // vw
    items = n * oh * ow * kh * kw * cv
    ix_t, u = ("unsigned", "u") if items < 2**31 and n * h * w * cv < 2**31 else ("long long", "LL")
    raw = _RAW[size * vw]
    zero = {"uint4": "make_uint4(0u, 0u, 0u, 0u)", "uint2": "make_uint2(0u, 0u)"}.get(raw, f"({raw})0")
    src = [
        f"// items of {vw} element{'s' if vw > 1 else ''} ({size * vw} bytes)",
        f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({params_decl([("x", op.input, False), ("y", op.result, True)])}) {{',
        f"  const {raw}* __restrict__ xv = reinterpret_cast<const {raw}*>(x);",
        f"  {raw}* __restrict__ yv = reinterpret_cast<{raw}*>(y);",
        f"  for ({ix_t} q = ({ix_t})blockIdx.x * blockDim.x + threadIdx.x; q < {items}{u}; q += ({ix_t})gridDim.x * blockDim.x) {{",
        f"    const {ix_t} cq = q % {cv}{u}, tap = (q / {cv}{u}) % {kh * kw}{u}, pix = q / {cv * kh * kw}{u};",
        f"    const {ix_t} ox = pix % {ow}{u}, oy = (pix / {ow}{u}) % {oh}{u}, b = pix / {ow * oh}{u};",
        f"    const int iy = (int)(oy * {sh}{u} + (tap / {kw}{u}) * {dh}{u}) - {pt}, "
        f"ix = (int)(ox * {sw}{u} + (tap % {kw}{u}) * {dw}{u}) - {pl};",
        f"    yv[q] = (iy >= 0 && iy < {h} && ix >= 0 && ix < {w}) "
        f"? xv[((b * {h}{u} + ({ix_t})iy) * {w}{u} + ({ix_t})ix) * {cv}{u} + cq] : {zero};",
        "  }",
        "}",
    ]
    return KernelSpec("im2col", "\n".join(src) + "\n", [Buf(op.input), Buf(op.result, True)], grid_for(items, sm_count))


def conv_transpose2d_kernel(op: rlx.ConvTranspose2dOp, sm_count: int) -> KernelSpec:
    """Direct transposed convolution, gathered: a thread per output element
    sums, over the kernel taps whose input row/column is whole and inside the
    input ((oy + top - ky*dilation) divisible by the stride), input times
    weight, in f32."""
    _, c, h, w = shape(op.input)
    _, og, kh, kw = shape(op.weight)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    cg = c // int_of(op.groups)
    t = eltype(op.input)
    ins, coords, acc = _direct(op)
    lines = [
        coords,
        f"const long long g = oc / {og}LL, ocg = oc % {og}LL;",
        acc,
        f"for (int ky = 0; ky < {kh}; ++ky) {{",
        f"  const long long ty = oy + {pt} - ky * {dh}; if (ty < 0 || ty % {sh} != 0 || ty / {sh} >= {h}) continue;",
        f"  const long long iy = ty / {sh};",
        f"  for (int kx = 0; kx < {kw}; ++kx) {{",
        f"    const long long tx = ox + {pl} - kx * {dw}; if (tx < 0 || tx % {sw} != 0 || tx / {sw} >= {w}) continue;",
        f"    const long long ix = tx / {sw};",
        f"    for (int ci = 0; ci < {cg}; ++ci) {{",
        f"      const long long ch = g * {cg}LL + ci;",
        f"      acc += {load(f'x[((b * {c}LL + ch) * {h}LL + iy) * {w}LL + ix]', t)} * {load(f'wt[((ch * {og}LL + ocg) * {kh} + ky) * {kw} + kx]', t)};",
        "    }",
        "  }",
        "}",
        f"y[i] = {store('acc', t)};",
    ]
    return injective("conv_transpose2d", op.result, ins, lines, sm_count)


def pool_kernel(op: rlx.MaxPool2dOp | rlx.AvgPool2dOp, sm_count: int) -> KernelSpec:
    """Max pooling (NaN-propagating) or average pooling over the window's
    (dilated) taps inside the input, divided by their count or, with
    `count_include_pad`, by the count of taps inside the padded input (the
    whole window, except where ceil mode lets it hang past the end padding)."""
    _, _, h, w = shape(op.input)
    _, _, oh, ow = shape(op.result)
    kh, kw = ints(op.kernel)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, pb, pr = ints(op.padding)
    t = eltype(op.input)
    is_max = isinstance(op, rlx.MaxPool2dOp)
    include_pad = not is_max and op.count_include_pad is not None  # pyright: ignore
    lines = [
        f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, bc = i / {ow * oh}LL;",
        f"const long long y0 = oy * {sh} - {pt}, x0 = ox * {sw} - {pl};",
        "float acc = " + ("-RLX_INF" if is_max else "0.0f") + "; int cnt = 0;",
        f"for (int ky = 0; ky < {kh}; ++ky) {{",
        f"  const long long iy = y0 + ky * {dh}; if (iy < 0 || iy >= {h}) continue;",
        f"  for (int kx = 0; kx < {kw}; ++kx) {{",
        f"    const long long ix = x0 + kx * {dw}; if (ix < 0 || ix >= {w}) continue;",
        f"    const float v = {load(f'x[bc * {h * w}LL + iy * {w}LL + ix]', t)};",
        "    acc = " + ("rlx_maxf(acc, v)" if is_max else "acc + v") + "; ++cnt;",
        "  }",
        "}",
    ]
    if is_max:
        lines.append(f"y[i] = {store('acc', t)};")
    elif include_pad and op.ceil_mode is None:
        lines.append(f"y[i] = {store(f'acc / {kh * kw}.0f', t)};")
    elif include_pad:
        # taps before the padded end: min(k, ceil((extent + pads - start) / dilation))
        lines.append(
            f"const long long nh = min({kh}LL, ({h + pt + pb}LL - (y0 + {pt}) + {dh - 1}) / {dh}), "
            f"nw = min({kw}LL, ({w + pl + pr}LL - (x0 + {pl}) + {dw - 1}) / {dw});"
        )
        lines.append(f"y[i] = {store('acc / (float)(nh * nw)', t)};")
    else:
        lines.append(f"y[i] = {store('acc / (float)cnt', t)};")
    return injective("maxpool" if is_max else "avgpool", op.result, [("x", op.input)], lines, sm_count)


def _table(name: str, ctype: str, values: list[str]) -> str:
    return f"static __device__ const {ctype} {name}[{len(values)}] = {{{', '.join(values)}}};"


def resize_kernel(op: rlx.ResizeOp, sm_count: int) -> KernelSpec:
    """Resize: a thread per output element. The source index (nearest) or the
    two neighbours and the weight (linear) of each output index along each
    resized axis are computed here, in float64 as the op defines them, and
    baked into the kernel as tables; linear blends the 2^k corners of the k
    resized axes in f32."""
    xs, ys = shape(op.input), shape(op.result)
    xst, yst = strides(xs), strides(ys)
    t = eltype(op.input)
    linear = op.mode.data == "linear"
    axes = op.resized_axes()
    tables: list[str] = []
    lines = []
    kept = []  # offset terms of the axes resize leaves alone
    for a in range(len(ys)):
        q = "i" if yst[a] == 1 else f"(i / {yst[a]}LL)"
        coord = "0" if ys[a] == 1 else q if a == 0 else f"{q} % {ys[a]}LL"
        lines.append(f"const long long c{a} = {coord};")
        if a not in axes:
            kept.append(f"c{a} * {xst[a]}LL")
    base = " + ".join(kept) if kept else "0"
    lines.append(f"const long long base = {base};")
    if not linear:
        for a in axes:
            tables.append(_table(f"ENTRY_idx{a}", "int", [str(int(v)) for v in op.nearest_indices(a)]))
        off = " + ".join([f"(long long)ENTRY_idx{a}[c{a}] * {xst[a]}LL" for a in axes]) or "0"
        lines.append(f"y[i] = x[base + {off}];")
    else:
        for a in axes:
            lo, hi, tt = op.linear_taps(a)
            tables.append(_table(f"ENTRY_lo{a}", "int", [str(int(v)) for v in lo]))
            tables.append(_table(f"ENTRY_hi{a}", "int", [str(int(v)) for v in hi]))
            tables.append(_table(f"ENTRY_t{a}", "float", [float_literal(float(v)) for v in tt]))
            lines.append(
                f"const long long lo{a} = (long long)ENTRY_lo{a}[c{a}] * {xst[a]}LL, "
                f"hi{a} = (long long)ENTRY_hi{a}[c{a}] * {xst[a]}LL; const float t{a} = ENTRY_t{a}[c{a}];"
            )
        lines.append("float acc = 0.0f;")
        for corner in range(1 << len(axes)):
            picks = [(a, (corner >> j) & 1) for j, a in enumerate(axes)]
            weight = " * ".join(f"t{a}" if hi else f"(1.0f - t{a})" for a, hi in picks) or "1.0f"
            off = " + ".join(f"hi{a}" if hi else f"lo{a}" for a, hi in picks) or "0"
            lines.append(f"acc += {weight} * {load(f'x[base + {off}]', t)};")
        lines.append(f"y[i] = {store('acc', t)};")
    spec = injective("resize", op.result, [("x", op.input)], lines, sm_count)
    spec.body = "".join(tbl + "\n" for tbl in tables) + spec.body
    return spec

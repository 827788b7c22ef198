"""Convolution, pooling and resize: direct `conv2d` and `conv_transpose2d`,
max/avg `pool` and `resize` kernels, a thread per output element (through
`injective`'s grid-stride loop), f32 accumulation.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlxc.codegen.common import THREADS, Buf, KernelSpec, eltype, grid_for, int_of, ints, params_decl, shape, strides
from rlxc.codegen.cuda_c import float_literal, load, storage_type, store
from rlxc.codegen.injective import _RAW, injective, pack_item, unpack_item, vector_elems
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
    """Direct convolution: a thread per output element, f32 accumulation;
    channels last (NHWC), `_conv2d_nhwc`."""
    if op.channels_last is not None:
        return _conv2d_nhwc(op)
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
        f"      acc += {_clamp(op, load('x[xc + iy * %dLL + ix]' % w, t), 'input')} * {load(f'wt[((oc * {cg}LL + ci) * {kh} + ky) * {kw} + kx]', t)};",
        "    }",
        "  }",
        "}",
        f"y[i] = {store(_clamp(op, 'acc', 'result'), t)};",
    ]
    return injective("conv2d", op.result, ins, lines, sm_count)


def _clamp(op: rlx.Conv2dOp, expr: str, side: str) -> str:
    """`expr` (an f32 value) clamped by the conv's input (`side` "input") or
    result ("result") bounds, max then min as rlx.maximum/minimum; `expr`
    itself where none is set."""
    in_lo, in_hi, lo, hi = op.bounds()
    lo, hi = (in_lo, in_hi) if side == "input" else (lo, hi)
    if lo is not None:
        expr = f"rlx_maxf({expr}, {float_literal(lo)})"
    if hi is not None:
        expr = f"rlx_minf({expr}, {float_literal(hi)})"
    return expr


#: Threads per block of the channels-last direct convolution.
NHWC_THREADS = 256


def _conv2d_nhwc(op: rlx.Conv2dOp) -> KernelSpec:
    """Direct convolution over NHWC: a thread per item of `vw` adjacent
    output channels of one output pixel, so a warp's loads and stores run
    along the channels (coalesced). Where each output channel reads one
    input channel of its own (depthwise, `groups` = channels) and the
    channels divide into 16-, 8- or 4-byte items, a tap's input is one
    vector load of the item's channels (f16/bf16 converted in pairs);
    otherwise an element at a time over the group's input channels. An
    OIHW weight is read per channel and tap (small, cached); an HWIO one
    (`weight_hwio`) holds a tap's channels adjacent, read with the input as
    one access of the item's channels. f32 accumulation, from the bias."""
    n, h, w, c = shape(op.input)
    hwio = op.weight_hwio is not None
    ws = shape(op.weight)
    kh, kw, cg, o = ws if hwio else (ws[2], ws[3], ws[1], ws[0])
    _, oh, ow, _ = shape(op.result)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    og = o // int_of(op.groups)
    t = eltype(op.input)
    size = dtype(t).bytes
    depthwise = cg == 1 and og == 1

    def weight(oc: str, ci: str | None) -> str:
        """Weight element (output channel oc, group input channel ci) of tap (ky, kx)."""
        if hwio:
            return load(f"wt[((ky * {kw} + kx) * {cg} + {ci or 0}) * {o} + {oc}]", t)
        row = oc if ci is None else f"({oc} * {cg} + {ci})"  # None: depthwise, one input channel
        return load(f"wt[{row} * {kh * kw} + ky * {kw} + kx]", t)

    vw = vector_elems(size, [c]) if depthwise and size in (2, 4) else 1
    raw = _RAW.get(vw * size, "")  # the type of one access of an item (vw > 1)
    items = n * oh * ow * (o // vw)
    ix_t, u = ("unsigned", "u") if items < 2**31 and n * h * w * c < 2**31 else ("long long", "LL")
    decl = params_decl([("x_" if vw > 1 else "x", op.input, False), ("wt", op.weight, False)]
                       + ([("bias", op.bias, False)] if op.bias is not None else []) + [("y_" if vw > 1 else "y", op.result, True)])
    form = (f"depthwise, {vw} channels a thread as one {vw * size}-byte access" + (", HWIO weight" if hwio else "") if vw > 1 else
            "depthwise, a channel a thread" if depthwise else f"{cg} input channels a group, an output channel a thread")
    src = [f"// conv2d form: channels last (NHWC), {form}",
           f'extern "C" __global__ void __launch_bounds__({NHWC_THREADS}) ENTRY({decl}) {{']
    if vw > 1:
        src += [f"  const {raw}* __restrict__ x = reinterpret_cast<const {raw}*>(x_);",
                f"  {raw}* __restrict__ y = reinterpret_cast<{raw}*>(y_);"]
    cv = o // vw
    src += [f"  const {ix_t} i = ({ix_t})blockIdx.x * {NHWC_THREADS}{u} + threadIdx.x;",
            f"  if (i >= {items}{u}) return;",
            f"  const {ix_t} q = i % {cv}{u}, p = i / {cv}{u};  // the item's channels, the output pixel",
            f"  const int ox = (int)(p % {ow}{u}), oy = (int)((p / {ow}{u}) % {oh}{u});",
            f"  const {ix_t} b = p / {ow * oh}{u};",
            f"  float acc[{vw}];"]
    for e in range(vw):
        oc = f"q * {vw}{u} + {e}{u}" if vw > 1 else "q"
        src.append(f"  acc[{e}] = {load(f'bias[{oc}]', t) if op.bias is not None else '0.0f'};")
    src += [f"  for (int ky = 0; ky < {kh}; ++ky) {{",
            f"    const int iy = oy * {sh} - {pt} + ky * {dh}; if (iy < 0 || iy >= {h}) continue;",
            f"    for (int kx = 0; kx < {kw}; ++kx) {{",
            f"      const int ix = ox * {sw} - {pl} + kx * {dw}; if (ix < 0 || ix >= {w}) continue;",
            f"      const {ix_t} px = (b * {h}{u} + ({ix_t})iy) * {w}{u} + ({ix_t})ix;  // the input pixel"]
    if vw > 1:
        src.append(f"      const {raw} v = x[px * {c // vw}{u} + q];")
        src.append(f"      float f[{vw}];")
        src += ["      " + line for line in unpack_item("v", "f", vw, t, "r")]
        if hwio:  # the tap's weights of the item's channels: adjacent, one access
            src.append(f"      const {raw} wv = reinterpret_cast<const {raw}*>(wt)[(ky * {kw} + kx) * {o // vw} + q];")
            src.append(f"      float fw[{vw}];")
            src += ["      " + line for line in unpack_item("wv", "fw", vw, t, "r")]
        src += ["      #pragma unroll",
                f"      for (int e = 0; e < {vw}; ++e)",
                f"        acc[e] += {_clamp(op, 'f[e]', 'input')} * {'fw[e]' if hwio else weight(f'(q * {vw}{u} + e)', None)};"]
    elif depthwise:
        src.append(f"      acc[0] += {_clamp(op, load(f'x[px * {c}{u} + q]', t), 'input')} * {weight('q', None)};")
    else:
        src += [f"      const {ix_t} xc = px * {c}{u} + (q / {og}{u}) * {cg}{u};  // the group's first input channel",
                f"      for (int ci = 0; ci < {cg}; ++ci)",
                f"        acc[0] += {_clamp(op, load('x[xc + ci]', t), 'input')} * {weight('q', 'ci')};"]
    src += ["    }", "  }"]
    if _clamp(op, "v", "result") != "v":
        src += ["  #pragma unroll", f"  for (int e = 0; e < {vw}; ++e) acc[e] = {_clamp(op, 'acc[e]', 'result')};"]
    if vw > 1:
        src.append(f"  y[i] = {pack_item('acc', vw, t)};")
    else:
        src.append(f"  y[i] = {store('acc[0]', t)};")
    src.append("}")
    params: list[Buf | int] = [Buf(op.input), Buf(op.weight)] + ([Buf(op.bias)] if op.bias is not None else []) + [Buf(op.result, True)]
    return KernelSpec("conv2d", "\n".join(src) + "\n", params, -(-items // NHWC_THREADS), NHWC_THREADS)


def im2col_kernel(op: rlx.Im2colOp, sm_count: int) -> KernelSpec:
    """A thread per item of the [n, oh, ow, columns] result (16, 8 or 4
    bytes where the row allows, else one element). Where the channels divide
    into items (an NHWC input of 8 f16 channels, say), an item is a run of
    channels of one tap, copied from its input pixel as one access, or
    zeros in the padding; otherwise (a few channels, an NCHW input) each
    element of the item is gathered on its own and the item stored at once.
    Columns past kh*kw*c are zeros. Consecutive threads take consecutive
    items of a patch (coalesced stores), in 32-bit index arithmetic where
    the tensors' items fit."""
    n, h, w, c = op.input_nhwc()
    _, oh, ow, cols = shape(op.result)
    kh, kw = ints(op.kernel)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    t = eltype(op.input)
    size = dtype(t).bytes
    first = op.channels_first is not None
    k = kh * kw * c
    run_vw = vector_elems(size, [c, cols, cols - k])  # items of one tap's channels, where they fit
    whole = not first and run_vw > 1
    vw = run_vw if whole else vector_elems(size, [cols])
    cv = cols // vw
    items = n * oh * ow * cv
    ix_t, u = ("unsigned", "u") if items < 2**31 and n * h * w * c < 2**31 else ("long long", "LL")
    raw = _RAW[size * vw]
    zero = {"uint4": "make_uint4(0u, 0u, 0u, 0u)", "uint2": "make_uint2(0u, 0u)"}.get(raw, f"({raw})0")

    def pixel(tap: str) -> list[str]:
        return [f"const int iy = (int)(oy * {sh}{u} + ({tap} / {kw}{u}) * {dh}{u}) - {pt}, "
                f"ix = (int)(ox * {sw}{u} + ({tap} % {kw}{u}) * {dw}{u}) - {pl};",
                f"const bool in = iy >= 0 && iy < {h} && ix >= 0 && ix < {w};"]  # fmt: skip

    body = [f"const {ix_t} kq = q % {cv}{u}, pix = q / {cv}{u};",
            f"const {ix_t} ox = pix % {ow}{u}, oy = (pix / {ow}{u}) % {oh}{u}, b = pix / {ow * oh}{u};"]  # fmt: skip
    if whole:
        form = f"a run of channels of one tap an item ({vw} elements, {size * vw} bytes)"
        body += [f"if (kq >= {k // vw}{u}) {{ yv[q] = {zero}; continue; }}",
                 f"const {ix_t} tap = kq / {c // vw}{u}, cq = kq % {c // vw}{u};", *pixel("tap"),
                 f"yv[q] = in ? xv[((b * {h}{u} + ({ix_t})iy) * {w}{u} + ({ix_t})ix) * {c // vw}{u} + cq] : {zero};"]  # fmt: skip
        src_types = [f"  const {raw}* __restrict__ xv = reinterpret_cast<const {raw}*>(x);"]
    else:
        form = f"each element gathered, {vw} an item ({size * vw} bytes)" + (", NCHW input" if first else "")
        st = storage_type(t)
        at = (f"x[((b * {c}{u} + ci) * {h}{u} + ({ix_t})iy) * {w}{u} + ({ix_t})ix]" if first else
              f"x[((b * {h}{u} + ({ix_t})iy) * {w}{u} + ({ix_t})ix) * {c}{u} + ci]")  # fmt: skip
        body += [f"union {{ {raw} raw; {st} e[{vw}]; }} item;",
                 "#pragma unroll",
                 f"for (int j = 0; j < {vw}; ++j) {{",
                 f"  const {ix_t} kk = kq * {vw}{u} + j;",
                 f"  if (kk >= {k}{u}) {{ item.e[j] = ({st})0; continue; }}",
                 f"  const {ix_t} tap = kk / {c}{u}, ci = kk % {c}{u};",
                 *("  " + ln for ln in pixel("tap")),
                 f"  item.e[j] = in ? {at} : ({st})0;",
                 "}",
                 "yv[q] = item.raw;"]  # fmt: skip
        src_types = []
    src = [
        f"// im2col form: {form}",
        f'extern "C" __global__ void __launch_bounds__({THREADS}) ENTRY({params_decl([("x", op.input, False), ("y", op.result, True)])}) {{',
        *src_types,
        f"  {raw}* __restrict__ yv = reinterpret_cast<{raw}*>(y);",
        f"  for ({ix_t} q = ({ix_t})blockIdx.x * blockDim.x + threadIdx.x; q < {items}{u}; q += ({ix_t})gridDim.x * blockDim.x) {{",
        *("    " + ln for ln in body),
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
    whole window, except where ceil mode lets it hang past the end padding).
    Channels last, consecutive threads take consecutive channels of a pixel."""
    last = op.channels_last is not None
    xs, ys = shape(op.input), shape(op.result)
    (h, w, c), (oh, ow) = (xs[1:], ys[1:3]) if last else ((xs[2], xs[3], xs[1]), ys[2:])
    kh, kw = ints(op.kernel)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, pb, pr = ints(op.padding)
    t = eltype(op.input)
    is_max = isinstance(op, rlx.MaxPool2dOp)
    include_pad = not is_max and op.count_include_pad is not None  # pyright: ignore
    if last:
        coords = (f"const long long ch = i % {c}LL, ox = (i / {c}LL) % {ow}LL, oy = (i / {c * ow}LL) % {oh}LL, "
                  f"b = i / {c * ow * oh}LL;")  # fmt: skip
        at = f"x[((b * {h}LL + iy) * {w}LL + ix) * {c}LL + ch]"
    else:
        coords = f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, bc = i / {ow * oh}LL;"
        at = f"x[bc * {h * w}LL + iy * {w}LL + ix]"
    lines = [
        coords,
        f"const long long y0 = oy * {sh} - {pt}, x0 = ox * {sw} - {pl};",
        "float acc = " + ("-RLX_INF" if is_max else "0.0f") + "; int cnt = 0;",
        f"for (int ky = 0; ky < {kh}; ++ky) {{",
        f"  const long long iy = y0 + ky * {dh}; if (iy < 0 || iy >= {h}) continue;",
        f"  for (int kx = 0; kx < {kw}; ++kx) {{",
        f"    const long long ix = x0 + kx * {dw}; if (ix < 0 || ix >= {w}) continue;",
        f"    const float v = {load(at, t)};",
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

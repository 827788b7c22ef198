"""Convolution and pooling: direct `conv2d` and max/avg `pool` kernels, a
thread per output element (through `injective`'s grid-stride loop), f32
accumulation.
"""

from __future__ import annotations

from rlxc.codegen.common import KernelSpec, eltype, int_of, ints, shape
from rlxc.codegen.cuda_c import load, store
from rlxc.codegen.injective import injective
from rlxc.dialects import rlx


def conv2d_kernel(op: rlx.Conv2dOp, sm_count: int) -> KernelSpec:
    """Direct convolution: a thread per output element, f32 accumulation."""
    n, c, h, w = shape(op.input)
    o, cg, kh, kw = shape(op.weight)
    _, _, oh, ow = shape(op.result)
    sh, sw = ints(op.stride)
    dh, dw = ints(op.dilation)
    pt, pl, _, _ = ints(op.padding)
    groups = int_of(op.groups)
    og = o // groups
    t = eltype(op.input)
    ins = [("x", op.input), ("wt", op.weight)] + ([("bias", op.bias)] if op.bias is not None else [])
    lines = [
        f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, oc = (i / {ow * oh}LL) % {o}LL, b = i / {ow * oh * o}LL;",
        f"const long long g = oc / {og}LL;",
        "float acc = " + (load("bias[oc]", t) if op.bias is not None else "0.0f") + ";",
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


def pool_kernel(op: rlx.MaxPool2dOp | rlx.AvgPool2dOp, sm_count: int) -> KernelSpec:
    """Max pooling (NaN-propagating) or average pooling (over the window's
    in-bounds elements, or all of it with `count_include_pad`)."""
    n, c, h, w = shape(op.input)
    _, _, oh, ow = shape(op.result)
    kh, kw = ints(op.kernel)
    sh, sw = ints(op.stride)
    pt, pl, _, _ = ints(op.padding)
    t = eltype(op.input)
    is_max = isinstance(op, rlx.MaxPool2dOp)
    include_pad = not is_max and op.count_include_pad is not None  # pyright: ignore
    lines = [
        f"const long long ox = i % {ow}LL, oy = (i / {ow}LL) % {oh}LL, bc = i / {ow * oh}LL;",
        "float acc = " + ("-RLX_INF" if is_max else "0.0f") + "; int cnt = 0;",
        f"for (int ky = 0; ky < {kh}; ++ky) {{",
        f"  const long long iy = oy * {sh} - {pt} + ky; if (iy < 0 || iy >= {h}) continue;",
        f"  for (int kx = 0; kx < {kw}; ++kx) {{",
        f"    const long long ix = ox * {sw} - {pl} + kx; if (ix < 0 || ix >= {w}) continue;",
        f"    const float v = {load(f'x[bc * {h * w}LL + iy * {w}LL + ix]', t)};",
        "    acc = " + ("rlx_maxf(acc, v)" if is_max else "acc + v") + "; ++cnt;",
        "  }",
        "}",
    ]
    if is_max:
        lines.append(f"y[i] = {store('acc', t)};")
    else:
        div = f"{kh * kw}.0f" if include_pad else "(float)cnt"
        lines.append(f"y[i] = {store(f'acc / {div}', t)};")
    return injective("maxpool" if is_max else "avgpool", op.result, [("x", op.input)], lines, sm_count)

"""Matmul and linear: the `Gemm` problem both lowerings share (sizes, batch
strides, the epilogue), the cuBLASLt epilogue names (`GEMM_EPILOGUES`), and
a generated gemm kernel for `rlx-emit-cuda{gemm=kernel}`.

The kernel is correct for every gemm the codegen emits (batch strides,
transposed B, bias and activation epilogues, f32 accumulation), but a plain
16x16 shared-memory tiling: a fallback for when cuBLASLt is missing, not a
fast path. Its activation is rendered from the activation op's own scalar
expression (the op class's `scalar`, through the scalar-op table), so it
means what the op means.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import f32
from xdsl.ir import Block, SSAValue

from rlxc.codegen.common import Buf, KernelSpec, eltype, numel, shape
from rlxc.codegen.cuda_c import load, render_scalar, storage_type, store
from rlxc.dialects import rlx
from rlxc.dialects.scalar import ScalarEmitter

#: linear activation -> the cuBLASLt epilogue that applies it after the bias
#: (cuBLASLt's GELU is the tanh form, so exact `gelu` is not here).
GEMM_EPILOGUES = {"relu": "bias_relu", "gelu_tanh": "bias_gelu"}

#: linear activation -> the op whose scalar expression the generated kernel applies.
ACTIVATION_OPS: dict[str, type[rlx.RlxOp]] = {"relu": rlx.ReluOp, "gelu_tanh": rlx.GeluTanhOp}

#: The kernel's tile edge: a block of TILE x TILE threads computes one tile of C.
TILE = 16


class GemmError(ValueError):
    """A matmul or linear that neither gemm lowering takes."""


@dataclass(frozen=True)
class Gemm:
    """C[b] = act(op(A[b]) · op(B[b]) + bias) for b < batch, row-major: A is
    [m, k] or, with `trans_a`, stored [k, m]; B is [k, n] or, with
    `trans_b`, stored [n, k] (linear's weight).
    `strides` are the batch strides of A, B and C in elements (0 broadcasts
    an operand over the batch)."""

    a: SSAValue
    b: SSAValue
    bias: SSAValue | None
    c: SSAValue
    m: int
    n: int
    k: int
    batch: int
    trans_b: bool
    strides: tuple[int, int, int]
    activation: str | None = None
    trans_a: bool = False
    #: added to the product before the bias and activation, laid out as C
    residual: SSAValue | None = None

    @property
    def epilogue(self) -> str:
        """`rlx_cuda.gemm`'s epilogue: none, bias, or a GEMM_EPILOGUES value."""
        if self.bias is None:
            return "none"
        return GEMM_EPILOGUES[self.activation] if self.activation is not None else "bias"

    @property
    def operands(self) -> list[SSAValue]:
        """A, B, [bias], [residual], C: the kernel's parameters and the gemm's locations, in order."""
        extra = [v for v in (self.bias, self.residual) if v is not None]
        return [self.a, self.b, *extra, self.c]


def gemm_problem(op: rlx.MatMulOp | rlx.LinearOp, where: str) -> Gemm:
    """The Gemm of a matmul or linear op; `where` names the op in errors
    ("op #3 of @main"). Raises GemmError for a linear activation without a
    bias or outside GEMM_EPILOGUES (rlx-unfuse splits those for cuda), and
    for a matmul whose batch dimensions broadcast partially."""
    if isinstance(op, rlx.LinearOp):
        n, k = shape(op.weight)
        act = op.activation.data if op.activation is not None else None
        if act is not None and (op.bias is None or act not in GEMM_EPILOGUES):
            raise GemmError(
                f"'{op.name}' with activation '{act}'"
                + ("" if op.bias is not None else " and no bias")
                + f" ({where}) has no cuBLASLt epilogue; rlx-unfuse splits it for cuda"
            )
        m = numel(shape(op.input)[:-1])
        return Gemm(op.input, op.weight, op.bias, op.result, m, n, k, 1, True, (0, 0, 0), act, residual=op.residual)
    a_s, b_s = rlx.MatMulOp.logical_shapes(op.lhs.type, op.rhs.type, op.properties)  # pyright: ignore
    c_s = shape(op.result)
    m, k, n = a_s[-2], a_s[-1], b_s[-1]
    batch = numel(c_s[:-2])

    def batch_stride(s: tuple[int, ...], size: int) -> int:
        if numel(s[:-2]) == 1:
            return 0
        if tuple(s[:-2]) == tuple(c_s[:-2]) or numel(s[:-2]) == batch:
            return size
        raise GemmError(
            f"'rlx.matmul' ({where}) broadcasts batch dimensions {list(s[:-2])} partially "
            f"against {list(c_s[:-2])}; cuBLASLt takes one batch stride per operand "
            "(expand the operand first)"
        )

    strides = (batch_stride(a_s, m * k), batch_stride(b_s, k * n), m * n)
    return Gemm(op.lhs, op.rhs, None, op.result, m, n, k, batch, op.transpose_rhs is not None, strides,
                trans_a=op.transpose_lhs is not None)


def activation_lines(act: str, v: str) -> list[str]:
    """Statements applying activation `act` to the float variable `v` in
    place, rendered from the activation op's scalar expression on f32."""
    x = Block(arg_types=[f32]).args[0]
    e = ScalarEmitter()
    result = ACTIVATION_OPS[act].scalar(e, x, result=f32)  # pyright: ignore[reportAttributeAccessIssue]
    names: dict[SSAValue, str] = {x: v}
    lines = []
    for i, op in enumerate(e.ops):
        names[op.results[0]] = f"{v}{i}"
        lines.append(f"const float {v}{i} = {render_scalar(op, [names[a] for a in op.operands])};")
    return [*lines, f"{v} = {names[result]};"]


def gemm_kernel(g: Gemm) -> KernelSpec:
    """A tiled gemm kernel for `g`: a TILE x TILE block per tile of C, one
    z-block per batch entry; A, B, [bias], C are its parameters."""
    t = eltype(g.c)
    c = storage_type(t)
    m, n, k = g.m, g.n, g.k
    sa, sb, sc = g.strides
    has_bias = g.bias is not None
    has_res = g.residual is not None
    b_at = "B[(long long)col * K + kk]" if g.trans_b else "B[(long long)kk * N + col]"
    a_at = "A[(long long)ka * M + row]" if g.trans_a else "A[(long long)row * K + ka]"
    finish = "\n    ".join(activation_lines(g.activation, "v")) if g.activation is not None else ""
    extra_params = (f", const {c}* __restrict__ bias" if has_bias else "") + (
        f", const {c}* __restrict__ R0" if has_res else "")
    body = f"""#define M {m}
#define N {n}
#define K {k}
extern "C" __global__ void __launch_bounds__(256) ENTRY(const {c}* __restrict__ A0, const {c}* __restrict__ B0{extra_params}, {c}* __restrict__ C0) {{
  __shared__ float As[16][17];
  __shared__ float Bs[16][17];
  const long long b = blockIdx.z;
  const {c}* A = A0 + b * {sa}LL;
  const {c}* B = B0 + b * {sb}LL;
  {c}* C = C0 + b * {sc}LL;
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {{
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? {load(a_at, t)} : 0.0f;
    {{ const int kk = kb; Bs[threadIdx.y][threadIdx.x] = (col < N && kk < K) ? {load(b_at, t)} : 0.0f; }}
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < 16; ++j) acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];
    __syncthreads();
  }}
  if (row < M && col < N) {{
    float v = acc{" + " + load(f"R0[b * {sc}LL + (long long)row * N + col]", t) if has_res else ""}{" + " + load("bias[col]", t) if has_bias else ""};
    {finish}
    C[(long long)row * N + col] = {store("v", t)};
  }}
}}
"""
    params: list[Buf | int] = [Buf(x) for x in g.operands[:-1]] + [Buf(g.c, True)]
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, g.batch)
    return KernelSpec("gemm", body, params, grid, (TILE, TILE, 1))

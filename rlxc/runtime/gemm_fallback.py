"""A generated CUDA kernel for `rlx_cuda.gemm`, until cuBLASLt is wired in.

Correct for every gemm the codegen emits (batch strides, transposed B, the
bias / relu / tanh-GELU epilogues, f32 accumulation), but a plain 16x16
shared-memory tiling: a placeholder for speed, not the library path.
"""

from __future__ import annotations

from rlxc.codegen.cuda_c import PREAMBLE, load, storage_type, store


def gemm_source(op) -> tuple[str, str, tuple[int, int, int], tuple[int, int, int]]:
    """(source, entry, grid, block) for one GemmOp."""
    t = op.result.type.get_element_type()
    c = storage_type(t)
    m, n, k = op.m.value.data, op.n.value.data, op.k.value.data
    batch = op.batch.value.data
    sa, sb, sc = op.strides.get_values()
    trans_b = op.trans_b.value.data
    epi = op.epilogue.data
    has_bias = epi != "none"
    b_at = "B[(long long)col * K + kk]" if trans_b else "B[(long long)kk * N + col]"
    if epi == "bias_relu":
        finish = "v = v > 0.0f ? v : 0.0f;"
    elif epi == "bias_gelu":
        finish = "v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));"
    else:
        finish = ""
    entry = f"rlx_gemm_{m}x{n}x{k}_b{batch}_{'t' if trans_b else 'n'}_{epi}_{c.replace(' ', '')}"
    bias_param = f", const {c}* __restrict__ bias" if has_bias else ""
    src = PREAMBLE + f"""
#define M {m}
#define N {n}
#define K {k}
extern "C" __global__ void __launch_bounds__(256) {entry}(const {c}* __restrict__ A0, const {c}* __restrict__ B0{bias_param}, {c}* __restrict__ C0) {{
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
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? {load("A[(long long)row * K + ka]", t)} : 0.0f;
    {{ const int kk = kb; Bs[threadIdx.y][threadIdx.x] = (col < N && kk < K) ? {load(b_at, t)} : 0.0f; }}
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < 16; ++j) acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];
    __syncthreads();
  }}
  if (row < M && col < N) {{
    float v = acc{" + " + load("bias[col]", t) if has_bias else ""};
    {finish}
    C[(long long)row * N + col] = {store("v", t)};
  }}
}}
"""
    grid = ((n + 15) // 16, (m + 15) // 16, batch)
    return src, entry, grid, (16, 16, 1)

"""CUDA C++ codegen: from planned rlx ops to kernel sources, as tables.

* `cuda_c`: the C++ spelling of element types and the scalar-op table
  (scalar `arith`/`math` op -> its C++ expression).
* `rlx_kernels.cuh`: the header every kernel includes (`HEADERS`, for NVRTC).
* `common`: `KernelSpec` (a kernel, its entry, parameters and launch
  geometry), `Buf`, shape/stride/index helpers.
* kernel templates by family: `elementwise` (regions), `rows` (reductions,
  argmax, softmax, norms), `injective` (transpose, expand, slice, concat,
  gather), `indexing` (pad, gather_elements, gather_nd), `scan` (cumsum,
  topk), `conv` (conv2d, pools), `gemm` (matmul/linear: the problem, the
  cuBLASLt epilogues, the fallback kernel), `attention` (the fused
  flash-style attention kernel: tensor-core MMA for f16/bf16), `fusion`
  (`rlx.fusion`: a row kernel with its elementwise prologue).
* `table`: the op -> kernel table `KERNELS`.

`rlx-emit-cuda` (rlxc/passes/emit_cuda.py) reads these to build the launch level.
"""

from rlxc.codegen.common import HEADER_NAME, HEADERS, Buf, KernelSpec
from rlxc.codegen.gemm import GEMM_EPILOGUES
from rlxc.codegen.table import KERNELS

__all__ = ["GEMM_EPILOGUES", "HEADER_NAME", "HEADERS", "KERNELS", "Buf", "KernelSpec"]

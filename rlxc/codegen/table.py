"""The op -> kernel table: which template generates each rlx op's kernel.

An op with a kernel is one entry here; matmul and linear are not (they
lower to `rlx_cuda.gemm`, or to `gemm.gemm_kernel` with
`rlx-emit-cuda{gemm=kernel}`), nor are views (no launch).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from rlxc.codegen import attention, conv, elementwise, indexing, injective, rows, scan
from rlxc.codegen.common import KernelSpec
from rlxc.codegen.fusion import fusion_kernel
from rlxc.dialects import rlx

#: A kernel template: (op, multiprocessor count) -> its kernel.
KernelFor = Callable[[Operation, int], KernelSpec]

#: rlx op -> its kernel template.
KERNELS: dict[type[Operation], KernelFor] = {
    rlx.ElementwiseRegionOp: elementwise.elementwise_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceSumOp: rows.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMeanOp: rows.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMaxOp: rows.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMinOp: rows.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceProdOp: rows.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ArgMaxOp: rows.argmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.SoftmaxOp: rows.softmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.LogSoftmaxOp: rows.softmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.LayerNormOp: rows.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.RmsNormOp: rows.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.FusedResidualLayerNormOp: rows.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.FusedResidualRmsNormOp: rows.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.TransposeOp: injective.transpose_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ExpandOp: injective.expand_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.SliceOp: injective.slice_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ConcatOp: injective.concat_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.GatherOp: injective.gather_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.PadOp: indexing.pad_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.GatherElementsOp: indexing.gather_elements_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.GatherNDOp: indexing.gather_nd_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.RopeOp: indexing.rope_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ScatterNDOp: indexing.scatter_nd_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.CumsumOp: scan.cumsum_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.TopKOp: scan.topk_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.Conv2dOp: conv.conv2d_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.Im2colOp: conv.im2col_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.MaxPool2dOp: conv.pool_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.AvgPool2dOp: conv.pool_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ConvTranspose2dOp: conv.conv_transpose2d_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ResizeOp: conv.resize_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.AttentionOp: attention.attention_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.FusionOp: fusion_kernel,  # pyright: ignore[reportAssignmentType]
}

"""`rlx-emit-cuda{arch=sm_90}`: planned IR -> the launch level (`rlx_cuda`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from rlxc.codegen import kernels as K
from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.plan import align
from rlxc.dialects.rlx_cuda import ArgAttr
from rlxc.dialects.types import dtype_name, tensor_bytes

#: Multiprocessor counts of the common parts per architecture, to size
#: grid-stride loops (override with the pass's `sm_count` option).
SM_COUNTS = {"sm_80": 108, "sm_86": 84, "sm_89": 128, "sm_90": 132, "sm_100": 148}

KernelFor = Callable[[Operation, int], K.KernelSpec]

#: rlx op -> its kernel template. Ops not here and not handled below have no
#: CUDA lowering, and the pass says so.
KERNELS: dict[type[Operation], KernelFor] = {
    rlx.ElementwiseRegionOp: K.elementwise_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceSumOp: K.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMeanOp: K.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMaxOp: K.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceMinOp: K.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ReduceProdOp: K.reduce_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ArgMaxOp: K.argmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.SoftmaxOp: K.softmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.LogSoftmaxOp: K.softmax_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.LayerNormOp: K.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.RmsNormOp: K.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.FusedResidualLayerNormOp: K.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.FusedResidualRmsNormOp: K.norm_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.TransposeOp: K.transpose_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ExpandOp: K.expand_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.SliceOp: K.slice_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.ConcatOp: K.concat_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.GatherOp: K.gather_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.Conv2dOp: K.conv2d_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.MaxPool2dOp: K.pool_kernel,  # pyright: ignore[reportAssignmentType]
    rlx.AvgPool2dOp: K.pool_kernel,  # pyright: ignore[reportAssignmentType]
}


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


@dataclass(frozen=True)
class EmitCudaPass(ModulePass):
    """Lowers planned rlx IR to `rlx_cuda`: a generated kernel per region or
    op (`rlx_cuda.kernel` + `rlx_cuda.launch`), matmul and linear as
    `rlx_cuda.gemm` (bias and relu / tanh-GELU epilogues folded in), views as
    no-ops. Params and constants get `rlx.param_offset`s in the read-only
    parameter buffer (256-byte aligned; the func gets `rlx.param_bytes`).

    Needs planned IR (run `rlx-plan` first, or the whole `rlx-cuda`
    pipeline); an op with no lowering is an error naming it and the target.

    Options:
    * `arch`: the target architecture, `sm_XY` (cubin is compiled for it).
    * `sm_count`: multiprocessors to size grid-stride loops for (0: the
      usual count for `arch`).
    """

    name = "rlx-emit-cuda"

    arch: str = "sm_90"
    sm_count: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.arch.startswith("sm_") or not self.arch[3:].isdigit():
            raise PassFailedException(f"rlx-emit-cuda: arch must look like sm_90, got '{self.arch}'")
        sms = self.sm_count or SM_COUNTS.get(self.arch, 132)
        kernels: dict[str, str] = {}  # source -> symbol
        for f in list(op.ops):
            if isinstance(f, func.FuncOp):
                self._lower_function(f, sms, kernels)

    def _lower_function(self, f: func.FuncOp, sms: int, kernels: dict[str, str]) -> None:
        fplan = P.function_plan(f)
        if fplan is None:
            raise PassFailedException(
                f"rlx-emit-cuda: @{f.sym_name.data} has no memory plan; run rlx-plan-memory "
                "(or the rlx-plan pipeline) first"
            )
        block = f.body.block
        loc: dict[SSAValue, ArgAttr] = {}
        for a, off in zip(block.args, fplan.arg_offsets):
            loc[a] = rlx_cuda.arena(off)
        param_top = 0
        for i, o in enumerate(list(block.ops)):
            if isinstance(o, rlx.ParamOp | rlx.ConstantOp):
                P.set_param_offset(o, param_top)
                loc[o.results[0]] = rlx_cuda.param(param_top)
                param_top += align(tensor_bytes(o.results[0].type))
                continue
            if rlx.is_view(o):  # no launch: the result is its input's bytes
                loc[o.results[0]] = loc[o.operands[0]]
                continue
            if isinstance(o, func.ReturnOp):
                continue
            offs = P.offsets(o)
            if offs is None:
                raise PassFailedException(
                    f"rlx-emit-cuda: op #{i} of @{f.sym_name.data} `{str(o).splitlines()[0]}` "
                    "has no rlx.offset: the IR is not fully planned"
                )
            for r, v in zip(o.results, offs):
                loc[r] = rlx_cuda.arena(v)
            new = self._lower_op(f, i, o, loc, sms, kernels)
            P.copy_slots(o, new)
            for old, r in zip(o.results, new.results):
                loc[r] = loc[old]
            Rewriter.replace_op(o, new)
        P.set_launch_info(f, param_top, self.arch)

    def _lower_op(self, f, i, o, loc, sms, kernels) -> Operation:
        if isinstance(o, rlx.MatMulOp | rlx.LinearOp):
            return self._gemm(f, i, o, loc)
        make = KERNELS.get(type(o))
        if make is None:
            hint = (
                " (run rlx-fuse-elementwise: elementwise ops reach codegen as regions)"
                if rlx.fusion_kind(o) in (rlx.FusionKind.ELEMENTWISE, rlx.FusionKind.BROADCAST)
                else " (run rlx-unfuse for this target first)" if o.get_trait(rlx.Composite) else ""
            )
            raise PassFailedException(
                f"rlx-emit-cuda: '{o.name}' (op #{i} of @{f.sym_name.data}, "
                f"`{str(o).splitlines()[0]}`) has no lowering for target cuda {self.arch}{hint}"
            )
        spec = make(o, sms)
        source = spec.source
        sym = kernels.get(source)
        if sym is None:
            sym = f"k{len(kernels)}"
            kernels[source] = sym
            Rewriter.insert_op(
                rlx_cuda.KernelOp(sym, spec.entry, self.arch, source), InsertPoint.before(f)
            )
        args = [
            loc[p.value] if isinstance(p, K.Buf) else rlx_cuda.scalar(p) for p in spec.params
        ]
        return rlx_cuda.LaunchOp(
            sym, [spec.grid, 1, 1], [spec.block, 1, 1], spec.smem, args,
            list(o.operands), [r.type for r in o.results],
        )  # fmt: skip

    def _gemm(self, f, i, o, loc) -> Operation:
        el = dtype_name(o.results[0].type.get_element_type())
        if isinstance(o, rlx.LinearOp):
            xs = K.shape(o.input)
            n, k = K.shape(o.weight)
            m = K.numel(xs[:-1])
            batch, trans_b, strides = 1, 1, [0, 0, 0]
            epilogue = "none" if o.bias is None else "bias"
            act = o.activation.data if o.activation is not None else None
            if act is not None:
                if o.bias is None or act not in rlx.CUDA_EPILOGUES:
                    raise PassFailedException(
                        f"rlx-emit-cuda: '{o.name}' with activation '{act}'"
                        + ("" if o.bias is not None else " and no bias")
                        + f" (op #{i} of @{f.sym_name.data}) has no cuBLASLt epilogue; "
                        "rlx-unfuse splits it for cuda"
                    )
                epilogue = rlx.CUDA_EPILOGUES[act]
            a, b, bias = o.input, o.weight, o.bias
        else:
            a_s, b_s, c_s = K.shape(o.lhs), K.shape(o.rhs), K.shape(o.result)
            m, k, n = a_s[-2], a_s[-1], b_s[-1]
            batch = K.numel(c_s[:-2])

            def batch_stride(s, size):
                if K.numel(s[:-2]) == 1:
                    return 0
                if tuple(s[:-2]) == tuple(c_s[:-2]) or (K.numel(s[:-2]) == batch):
                    return size
                raise PassFailedException(
                    f"rlx-emit-cuda: 'rlx.matmul' (op #{i} of @{f.sym_name.data}) broadcasts "
                    f"batch dimensions {list(s[:-2])} partially against {list(c_s[:-2])}; "
                    "cuBLASLt takes one batch stride per operand (expand the operand first)"
                )

            strides = [batch_stride(a_s, m * k), batch_stride(b_s, k * n), m * n]
            trans_b, epilogue = 0, "none"
            a, b, bias = o.lhs, o.rhs, None
        locations = [loc[a], loc[b]] + ([loc[bias]] if bias is not None else []) + [loc[o.results[0]]]
        return rlx_cuda.GemmOp.build(
            operands=[a, b, bias],
            result_types=[o.results[0].type],
            properties={
                "m": _i64(m), "n": _i64(n), "k": _i64(k), "batch": _i64(batch),
                "trans_a": _i64(0), "trans_b": _i64(trans_b),
                "strides": DenseArrayBase.from_list(i64, strides),
                "locations": ArrayAttr(locations),
                "epilogue": StringAttr(epilogue), "dtype": StringAttr(el),
            },
        )  # fmt: skip


def kernel_sources(module: ModuleOp) -> list[rlx_cuda.KernelOp]:
    """The module's generated kernels, in order."""
    return [o for o in module.ops if isinstance(o, rlx_cuda.KernelOp)]

"""`rlx-emit-cuda{arch=sm_90 gemm=cublaslt}`: planned IR -> the launch level (`rlx_cuda`)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

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

from rlxc.codegen import KERNELS
from rlxc.codegen.common import Buf, KernelSpec, generating_for
from rlxc.codegen.fusion import FusionShapeError
from rlxc.codegen.gemm import Gemm, GemmError, gemm_kernel, gemm_problem
from rlxc.codegen.rows import param_copy_bytes
from rlxc.dialects import plan as P
from rlxc.dialects import rlx, rlx_cuda
from rlxc.dialects.plan import align
from rlxc.dialects.rlx_cuda import ArgAttr
from rlxc.dialects.types import dtype, dtype_name, tensor_bytes

#: Multiprocessor counts of the common parts per architecture, to size
#: grid-stride loops (override with the pass's `sm_count` option).
SM_COUNTS = {"sm_80": 108, "sm_86": 84, "sm_89": 128, "sm_90": 132, "sm_100": 148}

#: The `gemm` option's values: how matmul and linear are lowered.
GEMM_LOWERINGS = ("cublaslt", "kernel")


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def check_target_options(pass_name: str, arch: str, sm_count: int, gemm: str) -> None:
    """The CUDA target's options, checked when the pass is made (a bad one
    is the command line's error, not the pass's input's): ValueError."""
    if not arch.startswith("sm_") or not arch[3:].isdigit():
        raise ValueError(f"{pass_name}: arch must look like sm_90, got '{arch}'")
    if sm_count < 0:
        raise ValueError(f"{pass_name}: sm_count must be 0 (the usual count for {arch}) or more, got {sm_count}")
    if gemm not in GEMM_LOWERINGS:
        raise ValueError(f"{pass_name}: gemm must be one of {', '.join(GEMM_LOWERINGS)}, got '{gemm}'")


@dataclass(frozen=True)
class EmitCudaPass(ModulePass):
    """Lowers planned rlx IR to `rlx_cuda`: a generated kernel per region or
    op (`rlx_cuda.kernel` + `rlx_cuda.launch`, templates from
    `rlxc.codegen.KERNELS`), matmul and linear as `rlx_cuda.gemm` (bias and
    relu / tanh-GELU epilogues folded in) or as generated gemm kernels,
    views as no-ops. Params and constants get `rlx.param_offset`s in the
    read-only parameter buffer (256-byte aligned; the func gets
    `rlx.param_bytes`), followed by the shifted copies of params that
    kernels ask for (`Buf.copies`, rows.PARAM_COPIES; the func's
    `rlx.param_copies` tells the runtime what to fill them with).

    Each kernel's source includes `rlx_kernels.cuh` (`rlxc.codegen.HEADERS`)
    and names the op it came from in a comment; equal kernels are emitted
    once.

    Needs planned IR (run `rlx-plan` first, or the whole `rlx-cuda`
    pipeline); an op with no lowering is an error naming it and the target.

    Options:
    * `arch`: the target architecture, `sm_XY` (cubin is compiled for it).
    * `sm_count`: multiprocessors to size grid-stride loops for (0: the
      usual count for `arch`).
    * `gemm`: `cublaslt` (matmul/linear as `rlx_cuda.gemm`, run by
      cuBLASLt) or `kernel` (as launches of a generated tiled gemm kernel,
      for when cuBLASLt is not installed).
    """

    name = "rlx-emit-cuda"

    arch: str = "sm_90"
    sm_count: int = 0
    gemm: str = "cublaslt"

    def __post_init__(self) -> None:
        check_target_options(self.name, self.arch, self.sm_count, self.gemm)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sms = self.sm_count or SM_COUNTS.get(self.arch, 132)
        kernels: dict[str, str] = {}  # kernel code -> symbol
        with generating_for(self.arch):
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
        params = _ParamBuffer()
        for i, o in enumerate(list(block.ops)):
            if isinstance(o, rlx.ParamOp | rlx.ConstantOp):
                P.set_param_offset(o, params.top)
                loc[o.results[0]] = rlx_cuda.param(params.top)
                params.top += align(tensor_bytes(o.results[0].type))
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
            new = self._lower_op(f, i, o, loc, sms, kernels, params)
            P.copy_slots(o, new)
            for old, r in zip(o.results, new.results):
                loc[r] = loc[old]
            Rewriter.replace_op(o, new)
        P.set_launch_info(f, params.top, self.arch)
        P.set_param_copies(f, list(params.copies.values()))

    def _lower_op(self, f, i, o, loc, sms, kernels, params: _ParamBuffer) -> Operation:
        where = f"op #{i} of @{f.sym_name.data}"
        if isinstance(o, rlx.MatMulOp | rlx.LinearOp):
            try:
                g = gemm_problem(o, where)
            except GemmError as e:
                raise PassFailedException(f"rlx-emit-cuda: {e}") from e
            if self.gemm == "cublaslt":
                return _gemm_op(g, loc)
            return self._launch(f, o, where, gemm_kernel(g), loc, kernels, params)
        make = KERNELS.get(type(o))
        if make is None:
            hint = (
                " (run rlx-fuse-elementwise: elementwise ops reach codegen as regions)"
                if rlx.fusion_kind(o) in (rlx.FusionKind.ELEMENTWISE, rlx.FusionKind.BROADCAST)
                else " (run rlx-unfuse for this target first)" if o.get_trait(rlx.Composite) else ""
            )
            raise PassFailedException(
                f"rlx-emit-cuda: '{o.name}' ({where}, "
                f"`{str(o).splitlines()[0]}`) has no lowering for target cuda {self.arch}{hint}"
            )
        try:
            spec = make(o, sms)
        except FusionShapeError as e:
            raise PassFailedException(f"rlx-emit-cuda: {o.name} ({where}): {e}") from e
        return self._launch(f, o, where, spec, loc, kernels, params)

    def _launch(self, f, o, where: str, spec: KernelSpec, loc, kernels, params: _ParamBuffer) -> Operation:
        """A launch of `spec`'s kernel, emitting the kernel unless an equal one was."""
        sym = kernels.get(spec.code)
        if sym is None:
            sym = f"k{len(kernels)}"
            kernels[spec.code] = sym
            source = spec.source(f"{o.name} ({where})")
            kernel = rlx_cuda.KernelOp(sym, spec.entry, self.arch, source)
            if spec.co_resident:
                kernel.attributes[rlx_cuda.CO_RESIDENT] = _i64(spec.co_resident)
            Rewriter.insert_op(kernel, InsertPoint.before(f))
        args = [(params.copies_of(p, loc[p.value], where) if p.copies else loc[p.value]) if isinstance(p, Buf)
                else rlx_cuda.scalar(p) for p in spec.params]
        return rlx_cuda.LaunchOp(
            sym, spec.grid3, spec.block3, spec.smem, args,
            list(o.operands), [r.type for r in o.results],
        )  # fmt: skip


class _ParamBuffer:
    """The parameter buffer's layout as a function is lowered: params and
    constants where they appear, then each param's shifted copies (one set
    per param and width, `rows.PARAM_COPIES`) where a kernel first asks."""

    def __init__(self) -> None:
        self.top = 0
        self.copies: dict[tuple[int, int], P.ParamCopies] = {}

    def copies_of(self, buf: Buf, source: ArgAttr, where: str) -> ArgAttr:
        if source.kind.data != "param":
            raise PassFailedException(f"rlx-emit-cuda: {where}: shifted copies asked of a value that is not a param")
        key = (source.value.value.data, buf.copies)
        if key not in self.copies:
            t = buf.value.type
            elems, size = prod(t.get_shape()), dtype(t.get_element_type()).bytes  # pyright: ignore
            c = P.ParamCopies(self.top, key[0], elems, size, buf.copies, param_copy_bytes(elems, buf.copies, size))
            self.copies[key] = c
            self.top += align(c.nbytes)
        return rlx_cuda.param(self.copies[key].offset)


def _gemm_op(g: Gemm, loc: dict[SSAValue, ArgAttr]) -> Operation:
    """`rlx_cuda.gemm` for `g`, on its operands' locations."""
    return rlx_cuda.GemmOp.build(
        operands=[g.a, g.b, g.bias, g.residual],
        result_types=[g.c.type],
        properties={
            "m": _i64(g.m), "n": _i64(g.n), "k": _i64(g.k), "batch": _i64(g.batch),
            "trans_a": _i64(int(g.trans_a)), "trans_b": _i64(int(g.trans_b)),
            "strides": DenseArrayBase.from_list(i64, list(g.strides)),
            "locations": ArrayAttr([loc[v] for v in g.operands]),
            "epilogue": StringAttr(g.epilogue), "dtype": StringAttr(dtype_name(g.c.type.get_element_type())),  # pyright: ignore
        },
    )  # fmt: skip


def kernel_sources(module: ModuleOp) -> list[rlx_cuda.KernelOp]:
    """The module's generated kernels, in order."""
    return [o for o in module.ops if isinstance(o, rlx_cuda.KernelOp)]

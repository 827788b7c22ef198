"""The standard pipelines, one level down each (see ARCHITECTURE.md):

* `rlx-optimize{target=cuda}`: graph -> fused level
  (rlx-conv-to-gemm, rlx-raise-attention, rlx-merge-projections (cuda only), rlx-unfuse, canonicalize, cse, dce,
  rlx-fold-layout (cuda only), rlx-fuse-elementwise,
  rlx-fuse-reductions (cuda only), canonicalize, cse, dce)
* `rlx-plan{target=cuda}`: the same, then rlx-plan-memory (planned level)
* `rlx-cuda{arch=sm_90 sm_count=0 gemm=cublaslt}`: rlx-plan, then
  rlx-emit-cuda (launch level); `gemm=kernel` emits matmuls as generated
  kernel launches instead of `rlx_cuda.gemm` (cuBLASLt)

`run_pipeline(module, "rlx-plan")` runs a named pipeline or any pipeline text
(`"rlx-unfuse{target=none},canonicalize"`) on a copy of `module`.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes as xdsl_passes


def all_passes():
    """Every pass name rlxc knows: xDSL's own and rlxc's."""
    from rlxc.passes import get_all_passes

    return {**xdsl_passes(), **get_all_passes()}


def optimize_spec(target: str) -> str:
    # cuda has row kernels that take an elementwise prologue (rlx.fusion)
    fuse = "rlx-fuse-elementwise,rlx-fuse-reductions" if target == "cuda" else "rlx-fuse-elementwise"
    # cuda: gemms sharing an input (Q/K/V, gate/up) become one, before
    # rlx-unfuse splits linear's activations off
    # cuda: attention spelled in primitives (ONNX exports) becomes rlx.attention
    # cuda: convolutions of one group become im2col and a cuBLASLt gemm
    merge = "rlx-conv-to-gemm,rlx-raise-attention,rlx-merge-projections," if target == "cuda" else ""
    # cuda: transposes around attention become its operand layouts
    fold = "rlx-fold-layout," if target == "cuda" else ""
    return (
        f"{merge}rlx-unfuse{{target={target}}},canonicalize,cse,dce,"
        f"{fold}{fuse},canonicalize,cse,dce"
    )


def parse_pipeline(text: str, callback=None) -> PassPipeline:
    """A PassPipeline from pipeline text, over every known pass; text that
    does not parse raises ValueError (xDSL's ArgSpecParseError is a
    BaseException, past `except Exception`)."""
    from xdsl.utils.exceptions import ArgSpecParseError

    try:
        return PassPipeline.parse_spec(all_passes(), text, callback)
    except ArgSpecParseError as e:
        raise ValueError(f"pipeline {text!r}: {e}") from None


@dataclass(frozen=True)
class OptimizePipeline(ModulePass):
    """Graph level -> fused level: unfuse for `target`, clean up, fuse."""

    name = "rlx-optimize"

    target: str = "cuda"

    def passes(self) -> tuple[ModulePass, ...]:
        return parse_pipeline(optimize_spec(self.target)).passes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)


@dataclass(frozen=True)
class PlanPipeline(ModulePass):
    """Graph level -> planned level: rlx-optimize, then rlx-plan-memory."""

    name = "rlx-plan"

    target: str = "cuda"
    strategy: str = "greedy"

    def passes(self) -> tuple[ModulePass, ...]:
        return parse_pipeline(
            optimize_spec(self.target) + f",rlx-plan-memory{{strategy={self.strategy}}}"
        ).passes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)


@dataclass(frozen=True)
class CudaPipeline(ModulePass):
    """Graph level -> launch level: rlx-plan (for the cuda target), then
    rlx-emit-cuda for `arch`, with its `sm_count` and `gemm` options
    (`gemm=kernel` lowers matmuls to generated kernels instead of cuBLASLt)."""

    name = "rlx-cuda"

    arch: str = "sm_90"
    sm_count: int = 0
    gemm: str = "cublaslt"

    def __post_init__(self) -> None:
        from rlxc.passes.emit_cuda import check_target_options

        check_target_options(self.name, self.arch, self.sm_count, self.gemm)

    def passes(self) -> tuple[ModulePass, ...]:
        return parse_pipeline(
            optimize_spec("cuda")
            + f",rlx-plan-memory,rlx-emit-cuda{{arch={self.arch} sm_count={self.sm_count} gemm={self.gemm}}}"
        ).passes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)


def expand_pipeline(text: str) -> list[ModulePass]:
    """The flat list of passes a pipeline text runs (named pipelines expanded),
    so tools can act between every pass."""
    out: list[ModulePass] = []
    for p in parse_pipeline(text).passes:
        out.extend(p.passes() if isinstance(p, OptimizePipeline | PlanPipeline | CudaPipeline) else [p])
    return out


def run_pipeline(module: ModuleOp, pipeline: str, verify_each: bool = False) -> ModuleOp:
    """Runs a named pipeline (`rlx-optimize`, `rlx-plan`, `rlx-cuda`) or pipeline text on a
    copy of `module` and returns the rewritten, verified copy.

    The result is verified once at the end; `verify_each=True` verifies after
    every pass too (as `rlxc-opt` does), which names the pass that broke the
    IR at the cost of a full verification per pass."""
    from rlxc.context import make_context

    ctx = make_context()
    # IR objects form reference cycles (parents, uses); the cyclic collector's
    # full passes over a large module made the time superlinear in its size.
    # Nothing is freed mid-pipeline that matters, so collect once afterwards.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = module.clone()
        for p in expand_pipeline(pipeline):
            p.apply(ctx, result)
            if verify_each:
                result.verify()
        result.verify()
    finally:
        if was_enabled:
            gc.enable()
    return result

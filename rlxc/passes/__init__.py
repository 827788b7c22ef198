"""rlxc's passes, one per file; `get_all_passes` registers them by name."""

from collections.abc import Callable

from xdsl.passes import ModulePass

import rlxc.xdsl_fixes  # noqa: F401  (xDSL 0.74's cse compares result types: applied before any pass runs)


def _fuse():
    from rlxc.passes.fuse_elementwise import FuseElementwisePass

    return FuseElementwisePass


def _fuse_reductions():
    from rlxc.passes.fuse_reductions import FuseReductionsPass

    return FuseReductionsPass


def _raise_attention():
    from rlxc.passes.raise_attention import RaiseAttentionPass

    return RaiseAttentionPass


def _unfuse():
    from rlxc.passes.unfuse import UnfusePass

    return UnfusePass


def _fold_layout():
    from rlxc.passes.fold_layout import FoldLayoutPass

    return FoldLayoutPass


def _plan():
    from rlxc.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _optimize():
    from rlxc.passes.pipelines import OptimizePipeline

    return OptimizePipeline


def _plan_pipeline():
    from rlxc.passes.pipelines import PlanPipeline

    return PlanPipeline


def _miscompile():
    from rlxc.passes.test_miscompile import TestMiscompilePass

    return TestMiscompilePass


def _broken_pattern():
    from rlxc.passes.test_miscompile import TestBrokenPatternPass

    return TestBrokenPatternPass


def _pow_to_mul():
    from rlxc.passes.pow_to_mul import PowToMulPass

    return PowToMulPass


def _merge_projections():
    from rlxc.passes.merge_projections import MergeProjectionsPass

    return MergeProjectionsPass


def _conv_to_gemm():
    from rlxc.passes.conv_to_gemm import ConvToGemmPass

    return ConvToGemmPass


def _verify_plan():
    from rlxc.passes.verify_plan import VerifyPlanPass

    return VerifyPlanPass


def _emit_cuda():
    from rlxc.passes.emit_cuda import EmitCudaPass

    return EmitCudaPass


def _cuda_pipeline():
    from rlxc.passes.pipelines import CudaPipeline

    return CudaPipeline


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory, for `rlxc-opt`, `xdsl-opt` and `run_pipeline`."""
    return {
        "rlx-unfuse": _unfuse,
        "rlx-fold-layout": _fold_layout,
        "rlx-fuse-elementwise": _fuse,
        "rlx-fuse-reductions": _fuse_reductions,
        "rlx-raise-attention": _raise_attention,
        "rlx-plan-memory": _plan,
        "rlx-optimize": _optimize,
        "rlx-plan": _plan_pipeline,
        "rlx-emit-cuda": _emit_cuda,
        "rlx-cuda": _cuda_pipeline,
        "rlx-pow-to-mul": _pow_to_mul,
        "rlx-merge-projections": _merge_projections,
        "rlx-conv-to-gemm": _conv_to_gemm,
        "rlx-verify-plan": _verify_plan,
        "test-rlx-miscompile": _miscompile,
        "test-rlx-broken-pattern": _broken_pattern,
    }

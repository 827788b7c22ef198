"""The `rlx` dialect: rlxc's graph level, on static ranked builtin tensors.

One module per op family; this package builds the `Rlx` dialect from them and
re-exports every name, so `from rlxc.dialects import rlx; rlx.AddOp` reads
the same wherever an op is defined:

* `base`: traits, property helpers, `RlxOp`;
* `leaves`: param, constant;
* `elementwise`: unary, binary, compare, select, cast;
* `reductions`: reduce_*, argmax, softmax, log_softmax, layer_norm, rms_norm;
* `matmul`: matmul, linear (and the activations it may carry);
* `shape`: reshape, transpose, expand, concat, slice, pad, gather,
  gather_elements, gather_nd;
* `scan`: cumsum, topk, scatter_nd;
* `conv`: conv2d, conv_transpose2d, max_pool2d, avg_pool2d, resize;
* `composites`: fused residual norms, swiglu, attention, rope;
* `region`: elementwise_region, yield;
* `decompose`: `DecomposeBuilder`, what composites decompose with.

Op facts live on the ops, never in passes:

* `Pure()` on every op (no memory effects: cse/dce may move and delete them);
* `Fusion(kind)`: TVM's pattern kind (elementwise, broadcast, injective,
  reduction, opaque) that `rlx-fuse-elementwise` reads;
* `TakesPrologue()`: a row op whose kernel can compute its input with an
  elementwise prologue (`rlx-fuse-reductions` reads it);
* `Composite(native_targets)`: an op that `rlx-unfuse` may split into
  primitives with the op's own `decompose(b)`, and the targets that keep a
  kernel for it;
* an elementwise op's scalar form (`scalar(e, *args, result=...)`), which
  `rlx-fuse-elementwise` builds into region bodies.

Every op's result types are a function of its operands and properties
(`infer_result_types`), except where the result type *is* the information
(`reshape`, `expand`, `cast`, `param`, `constant`). The verifier and the graph
builder call the same function, so a shape error reads the same in both.

Families share a base class as in `xdsl.dialects.arith`: the base declares the
operands, results, constraints, assembly format and how the scalar form is
built; a concrete op is its name, its docstring and, where it differs, the
element types it accepts and the data of its scalar form (`MATH_OP`,
`EMITTER`, `PREDICATE`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import i1
from xdsl.ir import Dialect

from rlxc.dialects.rlx.base import (
    BROADCAST,
    ELEMENTWISE,
    INJECTIVE,
    OPAQUE,
    REDUCTION,
    Composite,
    Fusion,
    FusionKind,
    IsView,
    RlxCanonicalization,
    RlxOp,
    TakesPrologue,
    _float,
    _int,
    _ints,
    _require_dtype,
    _require_same_dtype,
    _require_shape,
    _t,
    check_tensor_type,
    f64_attr,
    fusion_kind,
    i64_array,
    i64_attr,
    is_view,
    takes_prologue,
)
from rlxc.dialects.rlx.composites import (
    AttentionOp,
    FusedResidualLayerNormOp,
    FusedResidualRmsNormOp,
    RopeOp,
    SwigluOp,
)
from rlxc.dialects.rlx.conv import (
    AvgPool2dOp,
    Conv2dOp,
    ConvTranspose2dOp,
    Im2colOp,
    MaxPool2dOp,
    Pool2dOp,
    ResizeOp,
)
from rlxc.dialects.rlx.decompose import DecomposeBuilder
from rlxc.dialects.rlx.elementwise import (
    BINARY_OPS,
    COMPARE_OPS,
    UNARY_OPS,
    AbsOp,
    AcosOp,
    AcoshOp,
    AddOp,
    AsinOp,
    AsinhOp,
    AtanhOp,
    AtanOp,
    BinaryBroadcastOp,
    CastOp,
    CeilOp,
    CompareOp,
    CoshOp,
    CosOp,
    DivOp,
    EqOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GeluTanhOp,
    GeOp,
    GtOp,
    LeOp,
    LogOp,
    LtOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    NegOp,
    NeOp,
    PowOp,
    RemOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    RsqrtOp,
    SelectOp,
    SigmoidOp,
    SignedUnaryOp,
    SignOp,
    SiluOp,
    SoftplusOp,
    SinhOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TanOp,
    UnaryElementwiseOp,
)
from rlxc.dialects.rlx.leaves import ConstantOp, ParamOp
from rlxc.dialects.rlx.matmul import (
    ACTIVATIONS,
    EPILOGUE_ACTIVATIONS,
    LINEAR_ACTIVATIONS,
    LinearOp,
    MatMulOp,
)
from rlxc.dialects.rlx.reductions import (
    REDUCE_OPS,
    ArgMaxOp,
    AxisNormalizeOp,
    LayerNormOp,
    LogSoftmaxOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    RmsNormOp,
    SoftmaxOp,
)
from rlxc.dialects.rlx.region import REGION_BODY_DIALECTS, ElementwiseRegionOp, FusionOp, YieldOp
from rlxc.dialects.rlx.scan import SCATTER_REDUCTIONS, CumsumOp, ScatterNDOp, TopKOp
from rlxc.dialects.rlx.shape import (
    PAD_MODES,
    ConcatOp,
    ExpandOp,
    GatherElementsOp,
    GatherNDOp,
    GatherOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    TransposeOp,
)

Rlx = Dialect(
    "rlx",
    [
        ParamOp, ConstantOp, *UNARY_OPS, *BINARY_OPS, *COMPARE_OPS, SelectOp, CastOp,
        *REDUCE_OPS, ArgMaxOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp,
        MatMulOp, ReshapeOp, TransposeOp, ExpandOp, ConcatOp, SliceOp, GatherOp,
        PadOp, GatherElementsOp, GatherNDOp, CumsumOp, TopKOp, ScatterNDOp,
        Conv2dOp, ConvTranspose2dOp, MaxPool2dOp, AvgPool2dOp, Im2colOp, ResizeOp, LinearOp,
        FusedResidualLayerNormOp, FusedResidualRmsNormOp, SwigluOp, AttentionOp, RopeOp, ElementwiseRegionOp,
        FusionOp, YieldOp,
    ],  # fmt: skip
    [],
)

__all__ = [
    # dialect, traits, helpers
    "Rlx", "RlxOp", "RlxCanonicalization", "Fusion", "FusionKind", "fusion_kind",
    "Composite", "IsView", "is_view", "DecomposeBuilder", "ELEMENTWISE", "BROADCAST",
    "INJECTIVE", "REDUCTION", "OPAQUE", "check_tensor_type", "i64_array", "i64_attr",
    "f64_attr", "i1", "_int", "_ints", "_float", "_t", "_require_dtype",
    "_require_same_dtype", "_require_shape",
    # op families and tables
    "UnaryElementwiseOp", "SignedUnaryOp", "BinaryBroadcastOp", "CompareOp",
    "ReduceOp", "AxisNormalizeOp", "Pool2dOp", "UNARY_OPS", "BINARY_OPS",
    "COMPARE_OPS", "REDUCE_OPS", "ACTIVATIONS", "LINEAR_ACTIVATIONS",
    "EPILOGUE_ACTIVATIONS", "REGION_BODY_DIALECTS",
    # ops
    "ParamOp", "ConstantOp", "NegOp", "AbsOp", "SignOp", "ReluOp", "ExpOp", "LogOp",
    "SqrtOp", "RsqrtOp", "ReciprocalOp", "SinOp", "CosOp", "TanOp", "AsinOp", "AcosOp",
    "AtanOp", "SinhOp", "CoshOp", "AsinhOp", "AcoshOp", "AtanhOp", "TanhOp", "SigmoidOp",
    "GeluOp", "GeluTanhOp", "SiluOp", "SoftplusOp", "ErfOp", "FloorOp", "CeilOp", "RoundOp",
    "AddOp", "SubOp", "MulOp", "DivOp", "RemOp", "PowOp", "MaximumOp", "MinimumOp", "EqOp",
    "NeOp", "LtOp", "LeOp", "GtOp", "GeOp", "SelectOp", "CastOp", "ReduceSumOp",
    "ReduceMeanOp", "ReduceMaxOp", "ReduceMinOp", "ReduceProdOp", "ArgMaxOp",
    "SoftmaxOp", "LogSoftmaxOp", "LayerNormOp", "RmsNormOp", "MatMulOp", "LinearOp",
    "ReshapeOp", "TransposeOp", "ExpandOp", "ConcatOp", "SliceOp", "GatherOp",
    "PadOp", "GatherElementsOp", "GatherNDOp", "CumsumOp", "TopKOp", "ScatterNDOp", "PAD_MODES",
    "SCATTER_REDUCTIONS",
    "Conv2dOp", "ConvTranspose2dOp", "MaxPool2dOp", "AvgPool2dOp", "Im2colOp", "ResizeOp",
    "FusedResidualLayerNormOp",
    "FusedResidualRmsNormOp", "SwigluOp", "AttentionOp", "RopeOp",
    "ElementwiseRegionOp", "FusionOp", "YieldOp", "TakesPrologue", "takes_prologue",
]  # fmt: skip

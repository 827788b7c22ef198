"""The `rlx_cuda` dialect: rlxc's launch level.

* `rlx_cuda.kernel @k {entry, source, arch}` (module level): one generated
  CUDA C++ kernel, its `extern "C"` entry name and the architecture it is
  compiled for.
* `rlx_cuda.launch @k grid [..] block [..] smem N args [..] (%in) : ... -> ...`:
  one launch. `args` are what the kernel receives, in order: `#rlx_cuda.arg<arena 4096>`
  (a pointer into the activation arena), `#rlx_cuda.arg<param 0>` (into the
  read-only parameter buffer) or `#rlx_cuda.arg<i64 7>` (a scalar). The SSA
  operands and results keep the dataflow readable and checkable; the runtime
  needs only the attributes.
* `rlx_cuda.gemm`: one (batched) cuBLASLt matmul on buffer locations, with
  an optional bias/activation epilogue.
* `rlx_cuda.copy`: a device-to-device copy between locations.

Params and constants stay `rlx.param` / `rlx.constant` ops carrying their
`rlx.param_offset`; the runtime uploads them once into the parameter buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_operand_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
    operand_def,
    AttrSizedOperandSegments,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

#: Where an argument points, or that it is a scalar.
ARG_KINDS = ("arena", "param", "i64")

#: Epilogues `rlx_cuda.gemm` can fuse.
GEMM_EPILOGUES = ("none", "bias", "bias_relu", "bias_gelu")


@irdl_attr_definition
class ArgAttr(ParametrizedAttribute):
    """One kernel argument: `#rlx_cuda.arg<arena 4096>`, `<param 0>` or `<i64 7>`."""

    name = "rlx_cuda.arg"
    kind: StringAttr = param_def()
    value: IntegerAttr = param_def()

    def __init__(self, kind: str, value: int):
        super().__init__(StringAttr(kind), IntegerAttr(value, i64))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier()
            value = parser.parse_integer()
        return [StringAttr(kind), IntegerAttr(value, i64)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data} {self.value.value.data}>")

    def verify(self) -> None:
        if self.kind.data not in ARG_KINDS:
            raise VerifyException(
                f"argument kind '{self.kind.data}' is not one of {', '.join(ARG_KINDS)}"
            )


def arena(offset: int) -> ArgAttr:
    return ArgAttr("arena", offset)


def param(offset: int) -> ArgAttr:
    return ArgAttr("param", offset)


def scalar(value: int) -> ArgAttr:
    return ArgAttr("i64", value)


#: A kernel op's discardable attribute: how many blocks of one launch must be
#: resident on the GPU together (they wait for each other); the runtime
#: refuses a device that cannot hold them, rather than hang.
CO_RESIDENT = "rlx.co_resident"


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A generated kernel: CUDA C++ source with one `extern "C" __global__` entry
    (and, where its blocks wait for each other, `rlx.co_resident`)."""

    name = "rlx_cuda.kernel"
    sym_name = prop_def(SymbolNameConstraint())
    entry = prop_def(StringAttr)
    arch = prop_def(StringAttr)
    source = prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())
    assembly_format = "$sym_name `entry` $entry `arch` $arch `source` $source attr-dict"

    def __init__(self, sym: str, entry: str, arch: str, source: str):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym),
                "entry": StringAttr(entry),
                "arch": StringAttr(arch),
                "source": StringAttr(source),
            }
        )

    def verify_(self) -> None:
        if f" {self.entry.data}(" not in self.source.data or "extern \"C\"" not in self.source.data:
            raise VerifyException(
                f"the source of @{self.sym_name.data} defines no entry '{self.entry.data}'"
            )


def _dims(attr: DenseArrayBase, what: str) -> None:
    v = list(attr.get_values())
    if len(v) != 3 or any(x < 1 for x in v):
        raise VerifyException(f"{what} must be three positive integers, got {v}")


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """One kernel launch on arena/param locations (see the module docstring)."""

    name = "rlx_cuda.launch"
    kernel = prop_def(SymbolRefAttr)
    grid = prop_def(DenseArrayBase.constr(i64))
    block = prop_def(DenseArrayBase.constr(i64))
    smem = prop_def(IntegerAttr[I64])
    args = prop_def(ArrayAttr[ArgAttr])
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = (
        "$kernel `grid` $grid `block` $block `smem` $smem `args` $args "
        "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"
    )

    def __init__(
        self,
        kernel: str,
        grid: Sequence[int],
        block: Sequence[int],
        smem: int,
        args: Sequence[ArgAttr],
        inputs: Sequence,
        output_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(output_types)],
            properties={
                "kernel": SymbolRefAttr(kernel),
                "grid": DenseArrayBase.from_list(i64, list(grid)),
                "block": DenseArrayBase.from_list(i64, list(block)),
                "smem": IntegerAttr(smem, i64),
                "args": ArrayAttr(list(args)),
            },
        )

    def verify_(self) -> None:
        _dims(self.grid, "grid")
        _dims(self.block, "block")
        threads = 1
        for x in self.block.get_values():
            threads *= x
        if threads > 1024:
            raise VerifyException(f"a block of {threads} threads exceeds 1024")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """C[b] = epilogue(op(A[b]) · op(B[b]) [+ R[b]] + bias) for b < batch, row-major.

    `m, n, k` are the product's sizes; `trans_a`/`trans_b` say A is stored
    [k, m] / B is stored [n, k]; `stride_a/b/c` are batch strides in elements
    (0 broadcasts an operand over the batch). `a`, `b`, `bias`, `residual`
    (R, laid out as C; only with a bias), `c` are `#rlx_cuda.arg` locations;
    `epilogue` is none, bias, bias_relu or bias_gelu.
    """

    name = "rlx_cuda.gemm"
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    batch = prop_def(IntegerAttr[I64])
    trans_a = prop_def(IntegerAttr[I64])
    trans_b = prop_def(IntegerAttr[I64])
    strides = prop_def(DenseArrayBase.constr(i64))
    locations = prop_def(ArrayAttr[ArgAttr])
    epilogue = prop_def(StringAttr)
    dtype = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$lhs `,` $rhs (`bias` $bias^)? (`residual` $residual^)? `m` $m `n` $n `k` $k `batch` $batch "
        "`trans_a` $trans_a `trans_b` $trans_b `strides` $strides `locations` "
        "$locations `epilogue` $epilogue `dtype` $dtype attr-dict `:` type($lhs) `,` "
        "type($rhs) (`,` type($bias)^)? (`,` type($residual)^)? `->` type($result)"
    )

    def verify_(self) -> None:
        if self.epilogue.data not in GEMM_EPILOGUES:
            raise VerifyException(
                f"epilogue '{self.epilogue.data}' is not one of {', '.join(GEMM_EPILOGUES)}"
            )
        if len(self.strides.get_values()) != 3:
            raise VerifyException("strides are three batch strides: a, b, c")
        if self.residual is not None and self.bias is None:
            raise VerifyException("a residual goes with a bias")
        want = 3 + (self.bias is not None) + (self.residual is not None)
        if len(self.locations.data) != want:
            raise VerifyException(
                f"locations are a, b{', bias' if self.bias is not None else ''}"
                f"{', residual' if self.residual is not None else ''}, c: expected {want}"
            )
        if (self.bias is None) != (self.epilogue.data == "none"):
            raise VerifyException("a bias operand goes with a bias epilogue, and only then")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copies `bytes` bytes from location `src` to location `dst`."""

    name = "rlx_cuda.copy"
    src = prop_def(ArgAttr)
    dst = prop_def(ArgAttr)
    bytes = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$input `from` $src `to` $dst `bytes` $bytes attr-dict `:` type($input) `->` type($result)"
    )


RlxCuda = Dialect("rlx_cuda", [KernelOp, LaunchOp, GemmOp, CopyOp], [ArgAttr])

"""`GraphBuilder`: build rlx graphs from Python, one method per op.

    g = rlxc.GraphBuilder()
    x = g.input("x", [4, 16], "f32")
    w = g.param("w", [8, 16], "f32")
    y = g.gelu(g.linear(x, w))
    module = g.build([y])

Each method computes its result type with the op's own `infer_result_types`
(the function the verifier uses) and verifies the op on the spot, so a shape
or dtype error is raised at the call that caused it, as a `GraphError` naming
the method and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rlxc.dialects import rlx
from rlxc.dialects.rlx import f64_attr, i64_array, i64_attr
from rlxc.dialects.types import dtype_name, element_type, shape_of
from rlxc.values import dense_attr

_NUMPY_TO_RLX = {
    "float32": "f32",
    "float64": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "int32": "i32",
    "int64": "i64",
    "bool": "i1",
}


class GraphError(ValueError):
    """A builder call whose operands or arguments do not make a valid op."""


@dataclass(frozen=True, eq=False)
class Tensor:
    """A value in a graph under construction: its SSA value, shape and dtype.

    Arithmetic operators build ops too: `a + b`, `a - b`, `a * b`, `a / b`,
    `-a`, `a @ b`.
    """

    builder: GraphBuilder
    value: SSAValue

    @property
    def type(self) -> TensorType:
        return self.value.type  # pyright: ignore[reportReturnType]

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.value.type)

    @property
    def dtype(self) -> str:
        return dtype_name(self.type.get_element_type())

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.value.name_hint or '?'}: {self.type})"

    def __add__(self, o: Tensor) -> Tensor:
        return self.builder.add(self, o)

    def __sub__(self, o: Tensor) -> Tensor:
        return self.builder.sub(self, o)

    def __mul__(self, o: Tensor) -> Tensor:
        return self.builder.mul(self, o)

    def __truediv__(self, o: Tensor) -> Tensor:
        return self.builder.div(self, o)

    def __matmul__(self, o: Tensor) -> Tensor:
        return self.builder.matmul(self, o)

    def __neg__(self) -> Tensor:
        return self.builder.neg(self)


def _pair(v: int | Sequence[int], what: str) -> list[int]:
    if isinstance(v, int):
        return [v, v]
    if len(v) != 2:
        raise GraphError(f"{what} must be an int or a pair, got {v}")
    return [int(x) for x in v]


def _pads(v: int | Sequence[int]) -> list[int]:
    """int -> all sides; (ph, pw) -> symmetric; (top, left, bottom, right) as is."""
    if isinstance(v, int):
        return [v] * 4
    if len(v) == 2:
        return [v[0], v[1], v[0], v[1]]
    if len(v) == 4:
        return [int(x) for x in v]
    raise GraphError(f"padding must be an int, a pair or four ints, got {v}")


def _unary(op_type: type[rlx.UnaryElementwiseOp]):
    def method(self: GraphBuilder, x: Tensor) -> Tensor:
        self._check(x, f"{op_type.name.removeprefix('rlx.')}: its input")
        return self._op(op_type, [x], result_types=[x.type])

    method.__name__ = op_type.name.removeprefix("rlx.")
    method.__doc__ = f"`{op_type.name}`: {op_type.__doc__}"
    return method


def _binary(op_type: type[rlx.BinaryBroadcastOp]):
    def method(self: GraphBuilder, a: Tensor, b: Tensor) -> Tensor:
        return self._op(op_type, [a, b])

    method.__name__ = op_type.name.removeprefix("rlx.")
    method.__doc__ = f"`{op_type.name}` with numpy broadcasting: {op_type.__doc__}"
    return method


def _reduce(op_type: type[rlx.ReduceOp]):
    def method(
        self: GraphBuilder,
        x: Tensor,
        axes: int | Sequence[int] | None = None,
        keepdims: bool = False,
    ) -> Tensor:
        if axes is None:
            axes = list(range(x.ndim))
        elif isinstance(axes, int):
            axes = [axes]
        props: dict[str, Attribute] = {"axes": i64_array(axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        return self._op(op_type, [x], props)

    method.__name__ = op_type.name.removeprefix("rlx.")
    method.__doc__ = f"`{op_type.name}` over `axes` (all when None): {op_type.__doc__}"
    return method


class GraphBuilder:
    """Builds a `func.func @main` of rlx ops; see the module docstring."""

    def __init__(self) -> None:
        self._block = Block()
        self._input_names: list[str] = []
        self._params: dict[str, TensorType] = {}
        self._built = False

    # ------------------------------------------------------------------ plumbing

    def _check(self, t: Any, what: str) -> Tensor:
        if not isinstance(t, Tensor) or t.builder is not self:
            raise GraphError(f"{what} must be a Tensor of this GraphBuilder, got {t!r}")
        return t

    def _op(
        self,
        op_type: type[rlx.RlxOp],
        operands: Sequence[Tensor | None | Sequence[Tensor]],
        props: dict[str, Attribute] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ) -> Any:
        if self._built:
            raise GraphError("this GraphBuilder has already built its module")
        method = op_type.name.removeprefix("rlx.")
        values: list[SSAValue | None | list[SSAValue]] = []
        for i, o in enumerate(operands):
            if o is None:
                values.append(None)
            elif isinstance(o, Tensor) or not isinstance(o, list | tuple):
                values.append(self._check(o, f"{method}: operand #{i}").value)
            else:
                values.append([self._check(x, f"{method}: operand #{i}").value for x in o])
        try:
            op = op_type.make(values, props, result_types)
            op.verify()
        except VerifyException as e:
            raise GraphError(f"{method}: {e}") from None
        self._block.add_op(op)
        outs = [Tensor(self, r) for r in op.results]
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ------------------------------------------------------------------ leaves

    def input(self, name: str, shape: Sequence[int], dtype: str = "f32") -> Tensor:
        """A function argument named `name` (inputs keep declaration order)."""
        if self._built:
            raise GraphError("this GraphBuilder has already built its module")
        if not isinstance(name, str):
            raise GraphError(f"input: the name must be a string, got {name!r}")
        if name in self._input_names:
            raise GraphError(f"input '{name}' is declared twice")
        if not isinstance(shape, Sequence) or any(not isinstance(d, (int, np.integer)) or isinstance(d, bool) for d in shape):
            raise GraphError(f"input '{name}': the shape must be a sequence of ints, got {shape!r}")
        try:
            t = TensorType(element_type(dtype), [int(d) for d in shape])
            rlx.check_tensor_type(t, f"input '{name}'")
        except (ValueError, VerifyException) as e:
            raise GraphError(f"input '{name}': {e}") from None
        arg = self._block.insert_arg(t, len(self._block.args))
        arg.name_hint = name if name.isidentifier() and name.isascii() else None  # xDSL's SSA names are ASCII
        self._input_names.append(name)
        return Tensor(self, arg)

    def param(self, name: str, shape: Sequence[int], dtype: str = "f32") -> Tensor:
        """A named weight (`rlx.param`), bound through `params` at run time."""
        try:
            t = TensorType(element_type(dtype), [int(d) for d in shape])
        except ValueError as e:
            raise GraphError(f"param '{name}': {e}") from None
        if self._params.setdefault(name, t) != t:
            raise GraphError(
                f"param '{name}' was declared as {self._params[name]}, now as {t}: one "
                "name, one type"
            )
        return self._op(rlx.ParamOp, [], {"name": StringAttr(name)}, [t])

    def constant(self, value: Any, dtype: str | None = None) -> Tensor:
        """A dense constant from a numpy array or Python scalar. Without `dtype`
        it follows the array (float64 becomes f32, bool becomes i1)."""
        a = np.asarray(value)
        if dtype is None:
            if a.dtype.name not in _NUMPY_TO_RLX:
                raise GraphError(f"constant: unsupported numpy dtype {a.dtype}")
            dtype = _NUMPY_TO_RLX[a.dtype.name]
        try:
            t = TensorType(element_type(dtype), list(a.shape))
            if dtype in ("i32", "i64") and a.size and a.dtype.kind in "iufb":
                info = np.iinfo(np.int32 if dtype == "i32" else np.int64)
                lo, hi = int(a.min()), int(a.max())
                if lo < info.min or hi > info.max:
                    raise ValueError(f"values {lo}..{hi} do not fit {dtype}")
            attr = dense_attr(a, t)
        except (ValueError, OverflowError, TypeError) as e:
            raise GraphError(f"constant of {dtype}: {e}") from None
        return self._op(rlx.ConstantOp, [], {"value": attr}, [t])

    # ------------------------------------------------------------------ elementwise

    neg = _unary(rlx.NegOp)
    abs = _unary(rlx.AbsOp)
    exp = _unary(rlx.ExpOp)
    log = _unary(rlx.LogOp)
    sqrt = _unary(rlx.SqrtOp)
    rsqrt = _unary(rlx.RsqrtOp)
    reciprocal = _unary(rlx.ReciprocalOp)
    sin = _unary(rlx.SinOp)
    cos = _unary(rlx.CosOp)
    tan = _unary(rlx.TanOp)
    asin = _unary(rlx.AsinOp)
    acos = _unary(rlx.AcosOp)
    atan = _unary(rlx.AtanOp)
    sinh = _unary(rlx.SinhOp)
    cosh = _unary(rlx.CoshOp)
    asinh = _unary(rlx.AsinhOp)
    acosh = _unary(rlx.AcoshOp)
    atanh = _unary(rlx.AtanhOp)
    tanh = _unary(rlx.TanhOp)
    sigmoid = _unary(rlx.SigmoidOp)
    relu = _unary(rlx.ReluOp)
    gelu = _unary(rlx.GeluOp)
    gelu_tanh = _unary(rlx.GeluTanhOp)
    silu = _unary(rlx.SiluOp)
    softplus = _unary(rlx.SoftplusOp)
    erf = _unary(rlx.ErfOp)
    floor = _unary(rlx.FloorOp)
    ceil = _unary(rlx.CeilOp)
    round = _unary(rlx.RoundOp)
    sign = _unary(rlx.SignOp)

    add = _binary(rlx.AddOp)
    sub = _binary(rlx.SubOp)
    mul = _binary(rlx.MulOp)
    div = _binary(rlx.DivOp)
    rem = _binary(rlx.RemOp)
    pow = _binary(rlx.PowOp)
    maximum = _binary(rlx.MaximumOp)
    minimum = _binary(rlx.MinimumOp)
    eq = _binary(rlx.EqOp)
    ne = _binary(rlx.NeOp)
    lt = _binary(rlx.LtOp)
    le = _binary(rlx.LeOp)
    gt = _binary(rlx.GtOp)
    ge = _binary(rlx.GeOp)

    def select(self, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
        """`cond ? a : b`, the three broadcasting together."""
        return self._op(rlx.SelectOp, [cond, a, b])

    def cast(self, x: Tensor, dtype: str) -> Tensor:
        """Converts the element type (see `rlx.cast` for the rounding rules)."""
        try:
            t = TensorType(element_type(dtype), list(self._check(x, "cast").shape))
        except ValueError as e:
            raise GraphError(f"cast: {e}") from None
        return self._op(rlx.CastOp, [x], result_types=[t])

    # ------------------------------------------------------------------ reductions

    reduce_sum = _reduce(rlx.ReduceSumOp)
    reduce_mean = _reduce(rlx.ReduceMeanOp)
    reduce_max = _reduce(rlx.ReduceMaxOp)
    reduce_min = _reduce(rlx.ReduceMinOp)
    reduce_prod = _reduce(rlx.ReduceProdOp)

    def argmax(self, x: Tensor, axis: int = -1, keepdims: bool = False) -> Tensor:
        """Index (i64) of the maximum along `axis`, first on ties."""
        props: dict[str, Attribute] = {"axis": i64_attr(axis)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        return self._op(rlx.ArgMaxOp, [x], props)

    def softmax(self, x: Tensor, axis: int = -1) -> Tensor:
        """Numerically stable softmax along `axis`."""
        return self._op(rlx.SoftmaxOp, [x], {"axis": i64_attr(axis)}, [x.type])

    def log_softmax(self, x: Tensor, axis: int = -1) -> Tensor:
        """Numerically stable log-softmax along `axis`."""
        return self._op(rlx.LogSoftmaxOp, [x], {"axis": i64_attr(axis)}, [x.type])

    def layer_norm(self, x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
        """Layer norm over gamma's trailing axes."""
        return self._op(rlx.LayerNormOp, [x, gamma, beta], {"eps": f64_attr(eps)}, [x.type])

    def rms_norm(self, x: Tensor, gamma: Tensor, eps: float = 1e-6) -> Tensor:
        """RMS norm over gamma's trailing axes."""
        return self._op(rlx.RmsNormOp, [x, gamma], {"eps": f64_attr(eps)}, [x.type])

    def fused_residual_layer_norm(
        self, x: Tensor, residual: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5
    ) -> tuple[Tensor, Tensor]:
        """Returns (x + residual, layer_norm(x + residual))."""
        return self._op(
            rlx.FusedResidualLayerNormOp,
            [x, residual, gamma, beta],
            {"eps": f64_attr(eps)},
            [x.type, x.type],
        )

    def fused_residual_rms_norm(
        self, x: Tensor, residual: Tensor, gamma: Tensor, eps: float = 1e-6
    ) -> tuple[Tensor, Tensor]:
        """Returns (x + residual, rms_norm(x + residual))."""
        return self._op(
            rlx.FusedResidualRmsNormOp,
            [x, residual, gamma],
            {"eps": f64_attr(eps)},
            [x.type, x.type],
        )

    # ------------------------------------------------------------------ matmul

    def matmul(self, a: Tensor, b: Tensor) -> Tensor:
        """numpy.matmul (rank >= 2, batch dimensions broadcast)."""
        return self._op(rlx.MatMulOp, [a, b])

    def linear(
        self, x: Tensor, w: Tensor, b: Tensor | None = None, activation: str | None = None,
        residual: Tensor | None = None,
    ) -> Tensor:
        """x · wᵀ + b (+ residual, of the result's type; needs b) with w of
        shape [out, in], then an optional activation."""
        props: dict[str, Attribute] = {}
        if activation is not None:
            props["activation"] = StringAttr(activation)
        return self._op(rlx.LinearOp, [x, w, b, residual], props)

    # ------------------------------------------------------------------ shape

    def reshape(self, x: Tensor, shape: Sequence[int]) -> Tensor:
        """New shape, same elements; one extent may be -1 (inferred)."""
        shape = [int(d) for d in shape]
        n = int(np.prod(self._check(x, "reshape").shape))
        if shape.count(-1) > 1:
            raise GraphError(f"reshape: at most one -1 in {shape}")
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1]))
            if known == 0 or n % known:
                raise GraphError(f"reshape: cannot infer -1 in {shape} for {n} elements")
            shape[shape.index(-1)] = n // known
        t = TensorType(x.type.get_element_type(), shape)
        return self._op(rlx.ReshapeOp, [x], result_types=[t])

    def transpose(self, x: Tensor, perm: Sequence[int] | None = None) -> Tensor:
        """Permutes axes (reverses them when `perm` is None)."""
        if perm is None:
            perm = list(reversed(range(self._check(x, "transpose").ndim)))
        return self._op(rlx.TransposeOp, [x], {"perm": i64_array(perm)})

    def expand(self, x: Tensor, shape: Sequence[int]) -> Tensor:
        """numpy.broadcast_to."""
        t = TensorType(self._check(x, "expand").type.get_element_type(), list(shape))
        return self._op(rlx.ExpandOp, [x], result_types=[t])

    def concat(self, xs: Sequence[Tensor], axis: int = 0) -> Tensor:
        """Joins along `axis`."""
        return self._op(rlx.ConcatOp, [list(xs)], {"axis": i64_attr(axis)})

    def slice(
        self,
        x: Tensor,
        starts: Sequence[int],
        ends: Sequence[int],
        axes: Sequence[int] | None = None,
        steps: Sequence[int] | None = None,
    ) -> Tensor:
        """ONNX Slice: python-style starts/ends (negative from the end, clamped) on
        `axes` (default the first len(starts) axes), other axes whole."""
        shape = self._check(x, "slice").shape
        axes = list(range(len(starts))) if axes is None else list(axes)
        steps = [1] * len(starts) if steps is None else list(steps)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise GraphError("slice: starts, ends, axes and steps need equal lengths")
        s_all = [0] * len(shape)
        e_all = list(shape)
        st_all = [1] * len(shape)
        for s, e, a, st in zip(starts, ends, axes, steps):
            if not -len(shape) <= a < len(shape):
                raise GraphError(f"slice: axis {a} out of range for rank {len(shape)}")
            if st == 0:
                raise GraphError(f"slice: step of axis {a} is 0")
            a %= len(shape)
            big = 2**62  # ONNX uses INT_MAX-like ends for "to the end"
            s, e = max(min(s, big), -big), max(min(e, big), -big)
            s_all[a], e_all[a], st_all[a] = slice(s, e, st).indices(shape[a])
        props = {
            "starts": i64_array(s_all),
            "ends": i64_array(e_all),
            "steps": i64_array(st_all),
        }
        return self._op(rlx.SliceOp, [x], props)

    def gather(self, x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
        """numpy.take along `axis` (embedding lookup with axis 0)."""
        return self._op(rlx.GatherOp, [x, indices], {"axis": i64_attr(axis)})

    def pad(
        self,
        x: Tensor,
        low: Sequence[int],
        high: Sequence[int],
        mode: str = "constant",
        value: float = 0.0,
    ) -> Tensor:
        """ONNX Pad: `low[k]`/`high[k]` elements before/after axis k, filled
        per `mode` ("constant" with `value`, "reflect", "edge", "wrap")."""
        props = {
            "low": i64_array(low),
            "high": i64_array(high),
            "mode": StringAttr(mode),
            "value": f64_attr(value),
        }
        return self._op(rlx.PadOp, [x], props)

    def gather_elements(self, x: Tensor, indices: Tensor, axis: int) -> Tensor:
        """ONNX GatherElements (numpy.take_along_axis); result shape = indices'."""
        return self._op(rlx.GatherElementsOp, [x, indices], {"axis": i64_attr(axis)})

    def gather_nd(self, x: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
        """ONNX GatherND: indices' last axis indexes x's axes after `batch_dims`."""
        return self._op(rlx.GatherNDOp, [x, indices], {"batch_dims": i64_attr(batch_dims)})

    def scatter_nd(self, x: Tensor, indices: Tensor, updates: Tensor, reduction: str = "none") -> Tensor:
        """ONNX ScatterND: x with the slices indices' tuples name replaced by
        (or combined by `reduction` with: add, mul, max, min) updates.

        Where indices repeat a tuple, ONNX leaves the order of its updates
        open, and so does the CUDA target (atomics): with "none" any one of
        them may land, with float "add" and "mul" the rounding may differ in
        the last bits from run to run (the interpreter takes them in order);
        max, min and integer reductions are exact."""
        return self._op(rlx.ScatterNDOp, [x, indices, updates], {"reduction": StringAttr(reduction)})

    # ------------------------------------------------------------------ scan / select

    def cumsum(
        self, x: Tensor, axis: int, exclusive: bool = False, reverse: bool = False
    ) -> Tensor:
        """ONNX CumSum: running sums along `axis`."""
        props: dict[str, Attribute] = {"axis": i64_attr(axis)}
        if exclusive:
            props["exclusive"] = UnitAttr()
        if reverse:
            props["reverse"] = UnitAttr()
        return self._op(rlx.CumsumOp, [x], props)

    def topk(
        self,
        x: Tensor,
        k: int,
        axis: int = -1,
        largest: bool = True,
        sorted: bool = True,
    ) -> tuple[Tensor, Tensor]:
        """ONNX TopK: (values, indices as i64) of the k largest (or smallest)
        along `axis`, best first, equal values in index order."""
        props: dict[str, Attribute] = {"k": i64_attr(k), "axis": i64_attr(axis)}
        if not largest:
            props["smallest"] = UnitAttr()
        if not sorted:
            props["unsorted"] = UnitAttr()
        return self._op(rlx.TopKOp, [x], props)

    # ------------------------------------------------------------------ conv / pool

    def conv2d(
        self,
        x: Tensor,
        w: Tensor,
        b: Tensor | None = None,
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ) -> Tensor:
        """NCHW convolution with an OIHW weight; padding int, pair or 4 ints."""
        props = {
            "stride": i64_array(_pair(stride, "stride")),
            "padding": i64_array(_pads(padding)),
            "dilation": i64_array(_pair(dilation, "dilation")),
            "groups": i64_attr(groups),
        }
        return self._op(rlx.Conv2dOp, [x, w, b], props)

    def conv_transpose2d(
        self,
        x: Tensor,
        w: Tensor,
        b: Tensor | None = None,
        stride: int | Sequence[int] = (1, 1),
        padding: int | Sequence[int] = (0, 0, 0, 0),
        dilation: int | Sequence[int] = (1, 1),
        output_padding: int | Sequence[int] = (0, 0),
        groups: int = 1,
    ) -> Tensor:
        """NCHW transposed convolution (ONNX ConvTranspose) with a weight
        [in, out/groups, kh, kw]; padding int, pair or ONNX's 4 ints
        [h_begin, w_begin, h_end, w_end]; output_padding int or pair."""
        props = {
            "stride": i64_array(_pair(stride, "stride")),
            "padding": i64_array(_pads(padding)),
            "output_padding": i64_array(_pair(output_padding, "output_padding")),
            "dilation": i64_array(_pair(dilation, "dilation")),
            "groups": i64_attr(groups),
        }
        return self._op(rlx.ConvTranspose2dOp, [x, w, b], props)

    def im2col(
        self,
        x: Tensor,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        channels_first: bool = False,
        columns: int | None = None,
    ) -> Tensor:
        """A convolution's patches, channels last: [n, h, w, c] -> [n, oh, ow,
        kh*kw*c] (each patch in the order of an OHWI weight's rows);
        `channels_first` reads an NCHW input; `columns` widens each patch with
        zeros."""
        props: dict[str, Attribute] = {
            "kernel": i64_array(_pair(kernel, "kernel")),
            "stride": i64_array(_pair(stride, "stride")),
            "padding": i64_array(_pads(padding)),
            "dilation": i64_array(_pair(dilation, "dilation")),
            **({"channels_first": UnitAttr()} if channels_first else {}),
            **({"columns": i64_attr(columns)} if columns is not None else {}),
        }
        return self._op(rlx.Im2colOp, [x], props)

    def _pool(self, op_type, x, kernel, stride, padding, extra=None, dilation=1, ceil_mode=False,
              channels_last=False) -> Tensor:
        k = _pair(kernel, "kernel")
        props = {
            "kernel": i64_array(k),
            "stride": i64_array(k if stride is None else _pair(stride, "stride")),
            "padding": i64_array(_pads(padding)),
            "dilation": i64_array(_pair(dilation, "dilation")),
            **({"ceil_mode": UnitAttr()} if ceil_mode else {}),
            **({"channels_last": UnitAttr()} if channels_last else {}),
            **(extra or {}),
        }
        return self._op(op_type, [x], props)

    def max_pool2d(
        self,
        x: Tensor,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        ceil_mode: bool = False,
        channels_last: bool = False,
    ) -> Tensor:
        """Max pool; stride defaults to the kernel; `ceil_mode` rounds the
        output extent up (ONNX MaxPool); `channels_last`: NHWC in and out."""
        return self._pool(rlx.MaxPool2dOp, x, kernel, stride, padding, None, dilation, ceil_mode, channels_last)

    def avg_pool2d(
        self,
        x: Tensor,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        count_include_pad: bool = False,
        dilation: int | Sequence[int] = 1,
        ceil_mode: bool = False,
        channels_last: bool = False,
    ) -> Tensor:
        """Average pool; stride defaults to the kernel; `ceil_mode` rounds the
        output extent up (ONNX AveragePool); `channels_last`: NHWC in and out."""
        extra = {"count_include_pad": UnitAttr()} if count_include_pad else None
        return self._pool(rlx.AvgPool2dOp, x, kernel, stride, padding, extra, dilation, ceil_mode, channels_last)

    def resize(
        self,
        x: Tensor,
        out_shape: Sequence[int],
        scales: Sequence[float],
        mode: str = "nearest",
        coordinate_transformation_mode: str = "half_pixel",
        nearest_mode: str = "round_prefer_floor",
    ) -> Tensor:
        """ONNX Resize to `out_shape`; `scales[i]` is axis i's scale in the
        coordinate transformation (ONNX's scales, or out/in where the model
        gave sizes). Modes "nearest" and "linear" (n-linear)."""
        t = TensorType(self._check(x, "resize").type.get_element_type(), [int(d) for d in out_shape])
        props = {
            "scales": DenseArrayBase.from_list(f64, [float(s) for s in scales]),
            "mode": StringAttr(mode),
            "coordinate_transformation_mode": StringAttr(coordinate_transformation_mode),
            "nearest_mode": StringAttr(nearest_mode),
        }
        return self._op(rlx.ResizeOp, [x], props, result_types=[t])

    # ------------------------------------------------------------------ composites

    def attention(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        mask: Tensor | None = None,
        causal: bool = False,
        scale: float | None = None,
    ) -> Tensor:
        """Scaled dot-product attention over [batch, heads, seq, head_dim]."""
        props: dict[str, Attribute] = {}
        if causal:
            props["causal"] = UnitAttr()
        if scale is not None:
            props["scale"] = f64_attr(scale)
        return self._op(rlx.AttentionOp, [q, k, v, mask], props)

    def swiglu(self, x: Tensor) -> Tensor:
        """silu(first half of the last axis) * second half."""
        return self._op(rlx.SwigluOp, [x])

    def rope(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        """Rotary embedding, rotate-half form."""
        return self._op(rlx.RopeOp, [x, cos, sin], result_types=[x.type])

    # ------------------------------------------------------------------ build

    def build(self, outputs: Tensor | Sequence[Tensor], name: str = "main") -> ModuleOp:
        """Returns a verified module with `func.func @<name>` returning `outputs`."""
        if self._built:
            raise GraphError("this GraphBuilder has already built its module")
        outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        if not outs:
            raise GraphError("build: give at least one output")
        for i, o in enumerate(outs):
            self._check(o, f"build: output #{i}")
        self._block.add_op(func.ReturnOp(*[o.value for o in outs]))
        arg_types = [a.type for a in self._block.args]
        f = func.FuncOp(
            name,
            (arg_types, [o.type for o in outs]),
            Region(self._block),
            arg_attrs=None,
        )
        self._attach_names(f)
        module = ModuleOp([f])
        module.verify()
        self._built = True
        return module

    def _attach_names(self, f: func.FuncOp) -> None:
        """Names that are not SSA name hints as written keep them as
        `rlx.name` argument attributes, which `rlxc.interpret` reads first."""
        from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr

        # xDSL drops a trailing `_<digits>` from a name hint, so "data_0"
        # cannot be one either.
        if all(a.name_hint == n for a, n in zip(f.body.block.args, self._input_names)):
            return
        f.arg_attrs = ArrayAttr(
            [DictionaryAttr({"rlx.name": StringAttr(n)}) for n in self._input_names]
        )


def _check_tensor_arguments(cls: type) -> None:
    """Wraps each public method of `cls` taking tensors (parameters annotated
    `Tensor`, `Tensor | None`, `Sequence[Tensor]`) so that anything else
    there (a numpy array, a number) is a GraphError naming the method and
    the parameter, not an AttributeError from inside (a tensor of another
    builder is `_op`'s to name, by operand)."""
    import functools
    import inspect

    def checked(name: str, f: Any) -> Any:
        sig = inspect.signature(f)
        tensors = [(p.name, str(p.annotation)) for p in list(sig.parameters.values())[1:] if "Tensor" in str(p.annotation)]
        if not tensors:
            return f

        @functools.wraps(f)
        def method(self: GraphBuilder, *args: Any, **kwargs: Any) -> Any:
            try:
                return f(self, *args, **kwargs)
            except AttributeError:  # a method read a non-tensor's .type or .shape before `_op` checked it
                try:
                    bound = sig.bind(self, *args, **kwargs).arguments
                except TypeError:
                    bound = {}
                for p, ann in tensors:
                    v = bound.get(p)
                    if p not in bound or (v is None and "None" in ann):
                        continue
                    seq = "Sequence" in ann and isinstance(v, (list, tuple))
                    for k, t in enumerate(v if seq else [v]):
                        if not isinstance(t, Tensor):
                            where = f"{p}[{k}]" if seq else p
                            raise GraphError(f"{name}: {where} must be a Tensor (g.input, g.param, g.constant, "
                                             f"an op's result), got {type(t).__name__} {t!r}"[:300]) from None
                raise

        return method

    for name, f in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(f):
            setattr(cls, name, checked(name, f))


_check_tensor_arguments(GraphBuilder)

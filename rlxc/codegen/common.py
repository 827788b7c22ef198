"""What every kernel family shares: the `KernelSpec` a template returns, its
buffer parameters (`Buf`), the shared header, and shape/stride/index helpers.

Shapes are static, so extents and strides are baked into the source as
constants and the compiler turns index divisions into multiplications.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue

from rlxc.codegen.cuda_c import storage_type

#: Threads per block of the one-dimensional kernels.
THREADS = 256

#: The header every kernel includes, shipped next to this module.
HEADER_NAME = "rlx_kernels.cuh"

#: Its text: the element conversions, NaN-propagating min/max and the block
#: reductions the kernels call.
HEADER = resources.files(__package__).joinpath(HEADER_NAME).read_text()

#: Header name -> text, for NVRTC (`rlxc.runtime.nvrtc`'s `headers=`).
HEADERS: dict[str, str] = {HEADER_NAME: HEADER}

#: The architecture the templates generate for: `rlx-emit-cuda` sets it
#: (`generating_for`) while it lowers, so a template may pick a form that
#: needs a newer part (thread-block clusters, sm_90) only where the target
#: has it. Templates called directly generate for sm_90.
_ARCH: ContextVar[int] = ContextVar("rlxc_codegen_arch", default=90)


@contextmanager
def generating_for(arch: str) -> Iterator[None]:
    """Templates called inside generate for `arch` ("sm_XY")."""
    token = _ARCH.set(int(arch.removeprefix("sm_")))
    try:
        yield
    finally:
        _ARCH.reset(token)


def has_clusters() -> bool:
    """Whether the target has thread-block clusters and distributed shared memory (sm_90+)."""
    return _ARCH.get() >= 90


@dataclass(frozen=True)
class Buf:
    """A kernel parameter that points at a tensor (resolved to a location later)."""

    value: SSAValue
    writable: bool = False
    #: > 0: not the tensor but its `copies` shifted copies (a param's; see
    #: rows.PARAM_COPIES), laid out by rlx-emit-cuda in the parameter buffer
    copies: int = 0


Dims = int | tuple[int, int, int]


def _dims3(d: Dims) -> list[int]:
    return [d, 1, 1] if isinstance(d, int) else list(d)


@dataclass
class KernelSpec:
    """A generated kernel and how to launch it.

    `body` is the kernel's code with its entry spelled ENTRY; the entry name
    is `rlx_<family>_<hash of body>`, so equal kernels get equal names
    whichever op they came from."""

    family: str
    body: str
    params: list[Buf | int] = field(default_factory=list)
    grid: Dims = 1
    block: Dims = THREADS
    smem: int = 0
    #: Blocks of one launch that must be resident on the GPU together (the
    #: grid form's blocks of a row wait for each other); 0: none. Recorded on
    #: the kernel op (`rlx.co_resident`) and checked against the device when
    #: the executable is loaded.
    co_resident: int = 0

    @property
    def entry(self) -> str:
        digest = hashlib.sha256(self.body.encode()).hexdigest()[:12]
        return f"rlx_{self.family}_{digest}"

    @property
    def code(self) -> str:
        """The kernel's code under its entry name."""
        return self.body.replace("ENTRY", self.entry)

    def source(self, origin: str) -> str:
        """The compilable source: the shared header, one comment line naming
        where the kernel came from (`origin`, e.g. "rlx.softmax (op #3 of
        @main)"), then the kernel."""
        return f'#include "{HEADER_NAME}"\n// {origin}\n{self.code}'

    @property
    def grid3(self) -> list[int]:
        """The grid; at least one block per axis, so that an op over no
        elements still launches (every kernel guards its indices, so that
        block does nothing) and its results stay defined."""
        return [max(d, 1) for d in _dims3(self.grid)]

    @property
    def block3(self) -> list[int]:
        return _dims3(self.block)


# --------------------------------------------------------------------------- attributes


def ints(attr: Attribute | None) -> list[int]:
    assert isinstance(attr, DenseArrayBase)
    return [int(v) for v in attr.get_values()]


def int_of(attr: Attribute | None) -> int:
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def float_of(attr: Attribute | None) -> float:
    assert isinstance(attr, FloatAttr)
    return float(attr.value.data)


# --------------------------------------------------------------------------- shapes


def shape(v: SSAValue | Attribute) -> tuple[int, ...]:
    t = v.type if isinstance(v, SSAValue) else v
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def eltype(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, TensorType)
    return t.get_element_type()


def numel(s: Sequence[int]) -> int:
    return math.prod(s)


def strides(s: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(s):
        out.append(acc)
        acc *= d
    return out[::-1]


def index_expr(i: str, coords_of: Sequence[int], src_shape: Sequence[int], src_strides: Sequence[int] | None = None,
               suffix: str = "LL") -> str:
    """Offset into a tensor of `src_shape` (broadcast to `coords_of`, aligned
    right) at linear index `i` of the `coords_of` shape. `suffix` types the
    constants: "LL" (64-bit) or "u" (32-bit unsigned, for an unsigned `i`;
    its divisions by constants are far cheaper)."""
    if tuple(src_shape) == tuple(coords_of) and src_strides is None:
        return i
    if numel(src_shape) == 1 and src_strides is None:
        return "0"
    out_strides = strides(coords_of)
    st = list(src_strides) if src_strides is not None else strides(src_shape)
    lead = len(coords_of) - len(src_shape)
    terms = []
    for k, (d, s) in enumerate(zip(src_shape, st)):
        ok = k + lead
        if d == 1 and src_strides is None or coords_of[ok] == 1:
            continue
        c = f"({i} / {out_strides[ok]}{suffix})" if out_strides[ok] != 1 else i
        if ok != 0:
            c = f"({c} % {coords_of[ok]}{suffix})"
        terms.append(c if s == 1 else f"{c} * {s}{suffix}")
    return " + ".join(terms) if terms else "0"


def grid_for(work: int, sm_count: int, threads: int = THREADS, per_sm: int = 8) -> int:
    """A grid-stride loop's grid: enough blocks to fill the device, no more."""
    return max(1, min((work + threads - 1) // threads, sm_count * per_sm))


def params_decl(bufs: Sequence[tuple[str, SSAValue, bool]]) -> str:
    """The kernel's parameter list: (name, tensor, writable) -> `const T* __restrict__ name`."""
    parts = []
    for name, v, writable in bufs:
        c = storage_type(eltype(v))
        parts.append(f"{c}* __restrict__ {name}" if writable else f"const {c}* __restrict__ {name}")
    return ", ".join(parts)

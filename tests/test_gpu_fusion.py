"""GPU tests of `rlx.fusion` kernels (rlx-fuse-reductions): row ops whose
input an elementwise prologue computes as the row is read, in every row
form, f32/f16/bf16, odd and unaligned lengths, with prologue inputs read
per row (a residual), broadcast over rows (an attention mask [b, 1, n]),
once per row ([rows, 1]) and per element (broadcast inside the row axes),
against the numpy interpreter with the arena poisoned (`test_gpu.check`)."""

from __future__ import annotations

import pytest

import rlxc
from rlxc.passes.pipelines import run_pipeline
from test_gpu import check

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not rlxc.cuda.is_available(), reason="no NVIDIA GPU and driver"),
]

#: 24577 and 30522: windowed cluster rows (rows.WINDOW_PROLOGUE) where the prologue reads rows
#: laid out as the row or a value per row (the masked softmax's mask is not: an element an access)
LENGTHS = [1, 7, 64, 100, 128, 768, 1000, 4096, 4097, 9001, 24577, 30522, 50000]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols", LENGTHS)
def test_fused_prologues_every_length_and_dtype(cols, dtype):
    b, rows = 2, max(2, min(32, 2**15 // cols))
    g = rlxc.GraphBuilder()
    x = g.input("x", [b, rows, cols], dtype)
    r = g.input("r", [b, rows, cols], dtype)
    mask = g.input("m", [b, 1, cols], dtype)
    per_row = g.input("s", [b, rows, 1], dtype)
    gamma, beta = g.param("g", [cols], dtype), g.param("b", [cols], dtype)
    s = x + r
    outs = [
        g.layer_norm(s, gamma, beta), s,  # the sum is also a result
        g.softmax(x * g.constant(0.125, dtype) + mask),
        g.log_softmax(x * per_row),
        g.rms_norm(g.exp(x) - r, gamma),
    ]
    module = g.build(outs)
    fused = run_pipeline(module, "rlx-optimize")
    assert sum(o.name == "rlx.fusion" for o in fused.walk()) == 4
    check(module)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_fused_prologue_broadcast_inside_the_row(dtype):
    """A two-axis norm whose prologue input broadcasts inside the row axes
    (read element by element)."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [2, 3, 5, 33], dtype)
    c = g.input("c", [3, 1, 33], dtype)
    module = g.build([g.layer_norm(x + c, g.param("g", [5, 33], dtype), g.param("b", [5, 33], dtype))])
    check(module)


@pytest.mark.parametrize("cols", [256, 1000, 4096, 32000, 32768])
def test_fused_prologue_reading_a_narrower_type(cols):
    """A prologue reading f16 into an f32 row: an access moves as many
    elements of each (the f32 row sets the width; it once asked for a
    32-byte vector and failed to generate)."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, cols], "f16")
    module = g.build([g.softmax(g.cast(g.exp(x), "f32")), g.layer_norm(g.cast(x, "f32") * g.input("y", [3, cols]),
                                                                       g.param("g", [cols]), g.param("b", [cols]))])
    check(module)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("cols", [100, 1000, 5000, 32000, 32768])
def test_fused_prologue_reading_a_wider_type(cols, dtype):
    """A prologue reading f32 into a 16-bit row: accesses of 4 elements
    (the f32 input sets the width), guarded where the threads' accesses
    overrun the row (1000, 5000, 32000)."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [3, cols])
    r = g.input("r", [3, cols], dtype)
    module = g.build([g.softmax(g.cast(x, dtype)),
                      g.layer_norm(g.cast(x, dtype) + r, g.param("g", [cols], dtype), g.param("b", [cols], dtype))])
    check(module)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("rows,ffn", [(6, 40), (1, 100), (33, 1376)])
def test_gate_up_halves_read_in_place(dtype, rows, ffn):
    """silu(gate) * up over a merged gate/up projection: one region reading
    both halves in place (windows), against the interpreter."""
    g = rlxc.GraphBuilder()
    x = g.input("x", [rows, 64], dtype)
    h = g.rms_norm(x, g.param("n", [64], dtype))
    y = g.mul(g.silu(g.linear(h, g.param("wg", [ffn, 64], dtype))), g.linear(h, g.param("wu", [ffn, 64], dtype)))
    module = g.build([g.linear(y, g.param("wd", [64, ffn], dtype))])
    fused = run_pipeline(module, "rlx-optimize")
    assert any(o.name == "rlx.elementwise_region" and o.windows is not None for o in fused.walk())
    check(module)

"""Helpers for tests that pick a row kernel's form through rlxc.codegen.rows's
table of thresholds."""

from __future__ import annotations

from rlxc.codegen import rows

#: Every threshold bounding the block form's rows (BLOCK_ROW_MAX and the
#: per-op ones past it: rows.block_row_max).
BLOCK_LIMITS = ("BLOCK_ROW_MAX", "BLOCK_SOFTMAX_F32_ROW_MAX", "BLOCK_SOFTMAX_16_ROW_MAX", "BLOCK_LAYER_NORM_F32_ROW_MAX",
                "BLOCK_RMS_NORM_F32_ROW_MAX", "BLOCK_RMS_NORM_F32_ODD_ROW_MAX")


def block_form_up_to(monkeypatch, n: int) -> None:
    """Contiguous rows of more than `n` elements take the forms past the
    block form, whatever their op and dtype."""
    for name in BLOCK_LIMITS:
        assert hasattr(rows, name), name
        monkeypatch.setattr(rows, name, n)

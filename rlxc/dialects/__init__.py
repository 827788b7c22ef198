"""rlxc's dialects: `rlx` (graph, primitive and fused levels)."""

from rlxc.dialects.rlx import Rlx

__all__ = ["Rlx"]

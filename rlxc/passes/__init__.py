"""rlxc's passes, one per file; `get_all_passes` registers them by name."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory, for `rlxc-opt`, `xdsl-opt` and `run_pipeline`."""
    return {}

"""Plugs rlxc's dialects and passes into every xDSL tool (`xdsl-opt` included)
through the `xdsl.universe` entry point."""

from xdsl.universe import Universe


def _rlx():
    from rlxc.dialects.rlx import Rlx

    return Rlx


def _rlx_cuda():
    from rlxc.dialects.rlx_cuda import RlxCuda

    return RlxCuda


def _passes():
    from rlxc.passes import get_all_passes

    return get_all_passes()


RLXC_UNIVERSE = Universe(all_dialects={"rlx": _rlx, "rlx_cuda": _rlx_cuda}, all_passes=_passes())

"""Plugs rlxc's dialects and passes into every xDSL tool (`xdsl-opt` included)
through the `xdsl.universe` entry point."""

from xdsl.universe import Universe


def _rlx():
    from rlxc.dialects.rlx import Rlx

    return Rlx


def _passes():
    from rlxc.passes import get_all_passes

    return get_all_passes()


RLXC_UNIVERSE = Universe(all_dialects={"rlx": _rlx}, all_passes=_passes())

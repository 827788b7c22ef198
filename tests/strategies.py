"""The random-graph strategies, for the tests: they live in the package
(`rlxc.testing.strategies`, which `rlxc fuzz` draws from too); this module
re-exports them so that tests keep writing

    from strategies import graphs, random_inputs
"""

from rlxc.testing.strategies import (  # noqa: F401
    BINARY,
    COMPARE,
    OP_KINDS,
    REDUCE,
    UNARY_ANY,
    UNARY_POSITIVE,
    GraphCase,
    _broadcasts,
    _positive,
    graphs,
    random_array,
    random_inputs,
)

"""Scalar math written from the definitions, vectorised over float64 numpy arrays.

Shared by the graph-level ops (`rlx.gelu`) and the scalar ops inside
elementwise regions (`math.erf`), so both levels mean the same function.
"""

from __future__ import annotations

import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)

SQRT_2 = math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """The Gauss error function (math.erf, correctly rounded in float64)."""
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(_erf(x), dtype=np.float64).reshape(x.shape)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x) without the subtraction (math.erfc, float64)."""
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(_erfc(x), dtype=np.float64).reshape(x.shape)


def sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a large positive argument overflows to inf and gives 0: exact limit.
    return 1.0 / (1.0 + np.exp(-x))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x/2 (1 + erf(x / sqrt 2)), as x/2 erfc(-x / sqrt 2):
    the same function, with no cancellation for negative x."""
    return 0.5 * x * erfc(-x / SQRT_2)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """The tanh approximation of GELU."""
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def silu(x: np.ndarray) -> np.ndarray:
    return x * sigmoid(x)


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e**x), without overflow for large x."""
    return np.logaddexp(0.0, x)


def relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.zeros_like(x)) if x.dtype.kind != "f" else np.where(
        np.isnan(x), x, np.maximum(x, 0)
    )


def int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (C semantics); x / 0 gives 0."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    q = np.where((a < 0) != (safe < 0), -q, q)
    return np.where(b == 0, 0, q)


def int_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Remainder with the dividend's sign (C's %); x % 0 gives 0."""
    return np.where(np.asarray(b) == 0, 0, a - int_div(a, b) * b)

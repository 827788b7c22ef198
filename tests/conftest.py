"""Shared pytest setup: hypothesis profiles and the `gpu` marker's skip."""

import os

from hypothesis import HealthCheck, settings

# Graph building and interpretation take milliseconds, not microseconds:
# no per-example deadline. RLXC_HYPOTHESIS_PROFILE=thorough for a long run.
settings.register_profile(
    "default",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=500)
settings.load_profile(os.environ.get("RLXC_HYPOTHESIS_PROFILE", "default"))

"""Hypothesis profiles: ``ci`` (default, derandomized, fixed budget) and ``dev`` (longer runs).

Choose with ``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

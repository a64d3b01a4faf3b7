"""The fault-injection soak (issue 8): `python -m tests.soak [--seed N] [--faults N]`.

See runner.py for what is checked; tests/e2e/test_soak_short.py runs a short variant.
"""

from tests.soak.runner import DEFAULT_SEED, SoakConfig, SoakResult, run_soak

__all__ = ["DEFAULT_SEED", "SoakConfig", "SoakResult", "run_soak"]

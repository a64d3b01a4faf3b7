"""The soak's short variant (issue 8): 50 injected faults, the same invariants as `make soak`.

Informers of pods (all namespaces), configmaps (one namespace), a CRD kind (label-selected),
configmaps metadata-only, the CRD kind again with the ordered queue (RealFIFO, C-2) and
eager decoding, and pods again with the atomic queue (C-3); three handlers each (one raises, one blocks when armed),
while a writer churns objects and faults fire from a seeded RNG (tests/soak/faults.py).
Every checkpoint: caches and every handler's replayed view equal the server's state for their
selection (keys and resourceVersions) after relists (D8, D14), watch-list stalls and fallbacks
(D17-D20) and backoffs (D3, D4, D11); every callback is checked against what the handler saw
before; afterwards no thread or socket of ours is left and no log record holds the token.
"""

from __future__ import annotations

import pytest

from tests.soak import SoakConfig, run_soak

SEED = 8


@pytest.mark.slow
def test_short_soak_converges_with_no_lost_phantom_or_stale_events() -> None:
    result = run_soak(SoakConfig(seed=SEED, faults=50, checkpoint_every=25))
    assert result.violations == [], result.summary()
    assert result.faults == result.survived == 50
    assert (result.lost, result.phantom, result.stale_updates, result.bad_callbacks) == (0, 0, 0, 0)
    assert result.objects_compared > 0 and result.writes > 0
    # relists after compaction meet objects deleted meanwhile: DeletedFinalStateUnknown (A5)
    assert result.tombstones > 0

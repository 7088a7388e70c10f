"""Failover end to end on a 32-port emulated switch, in process, verified through the detectors."""

import numpy as np
import pytest

from firmware.fabric import Job, job_matchings
from firmware.sdk import Switch


def _lit(sw: Switch, src: int) -> np.ndarray:
    """Powers (mW) on every detector with 1 mW into ``src``."""
    return sw.transport.controller.driver.detect(np.eye(sw.ports)[src])


@pytest.mark.parametrize(
    ("spares", "failed", "most_disturbed"),
    [
        ((28, 29, 30, 31), 5, 22),  # spares at the end: the new circuit crosses 11 pairs
        ((7, 15, 23, 31), 13, 0),  # a spare next to the peer: nothing else moves
    ],
)
def test_a_spare_replaces_a_failed_accelerator_and_the_other_circuits_keep_their_light(
    spares: tuple[int, ...], failed: int, most_disturbed: int
) -> None:
    sw = Switch.emulated(ports=32, seed=0)
    job = Job("train", "ring", tuple(p for p in range(32) if p not in spares), spares=spares)
    active = job_matchings(job, 32)[0]  # every other edge of the ring: (0,1), (2,3), ...
    sw.connect(active)
    before = {p: _lit(sw, p) for p in job.endpoints}
    peer = active.partner(failed)
    new_job, seconds, disturbed = sw.failover(job, failed)
    spare = sw.matching().partner(peer)
    assert spare in spares and spare in new_job.endpoints and failed not in new_job.endpoints
    assert seconds > 0 and len(disturbed) <= most_disturbed
    # the spare and the failed port's peer now talk, both ways, through the detectors
    assert sw.matching().partner(failed) is None
    for a, b in ((peer, spare), (spare, peer)):
        power = _lit(sw, a)
        assert power[b] > 0.02 and 10 * np.log10(power[b] / np.delete(power, b).max()) > 15
    # every other circuit still delivers its light to its partner
    for a, b in active.pairs:
        if failed in (a, b):
            continue
        for src, dst in ((a, b), (b, a)):
            now = _lit(sw, src)
            assert now[dst] > 0.5 * before[src][dst], (src, dst)
            if src not in disturbed:  # untouched: same cells, so the same power within noise
                assert abs(now[dst] - before[src][dst]) < 1e-3 * before[src][dst] + 1e-5
    # the light of the failed port goes nowhere it should not
    assert sw.paths().keys() == {p for pair in sw.matching().pairs for p in pair}

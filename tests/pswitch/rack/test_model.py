"""The rack's collective prices (:mod:`pswitch.rack.model`)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware import fabric as ff
from photonics import PortError, SettingsError
from pswitch.rack import model

RACK = model.Rack(servers=4, per_server=8, ports=8, port_gbps=100.0, mesh="clements")


def test_the_ideal_switch_bounds_every_fabric():
    for ranks in (2, 4, 8, 16, 32):
        ideal = model.ideal_s(RACK, "ring", ranks, 1e9)
        assert model.photonic_s(RACK, "ring", ranks, 1e9, "step") >= ideal
        assert model.photonic_s(RACK, "ring", ranks, 1e9, "job") >= ideal
        counts = tuple([ranks // 4] * 4) if ranks >= 4 else (ranks,)
        assert model.server_domain_s(RACK, "ring", counts, 1e9) >= model.ideal_s(
            model.Rack(ports=8, port_gbps=RACK.scale_up_gbps / 8), "ring", ranks, 1e9
        )


def test_a_job_inside_one_server_runs_at_the_scale_up_bandwidth():
    inside = model.server_domain_s(RACK, "ring", (8,), 1e9)
    link = RACK.link(RACK.scale_up_gbps)
    assert inside == ff.electrical_timing(ff.ring_all_reduce(range(8), 1e9), link).total_s
    # one rank in another server: the ring's slowest links are the NICs
    split = model.server_domain_s(RACK, "ring", (7, 1), 1e9)
    out = RACK.link(RACK.scale_out_gbps)
    ring = ff.electrical_timing(ff.ring_all_reduce(range(8), 1e9), out).total_s
    # hierarchical: the lone rank all-reduces the whole buffer with its server over the NIC
    pair = ff.electrical_timing(ff.ring_all_reduce(range(2), 1e9), out).total_s
    seven = sum(
        ff.electrical_timing(f(range(7), 1e9), link).total_s
        for f in (ff.ring_reduce_scatter, ff.ring_all_gather)
    )
    assert split == min(ring, pair + seven) == pair + seven
    assert split > 2 * inside


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 32), st.floats(1e3, 1e10))
def test_the_driver_class_orders_the_photonic_price(ranks: int, n: float):
    price = {
        d: model.photonic_s(model.Rack(driver=d), "ring", ranks, n, "step")
        for d in ("product", "bench", "parallel", "integrated")
    }
    assert min(price["product"], price["bench"]) > price["parallel"] > price["integrated"]
    # per job the circuits are set once: no driver in the collective's price
    once = {
        model.photonic_s(model.Rack(driver=d), "ring", ranks, n, "job")
        for d in ("bench", "parallel")
    }
    assert len(once) == 1


def test_a_reconfiguration_is_the_driver_then_the_settling():
    fast, slow = model.Rack(driver="parallel"), model.Rack(driver="product")
    assert model.reconfigure_s(fast) < 1e-4 < 15e-3 < model.reconfigure_s(slow) <= 90.1e-3


def test_bad_racks_are_refused():
    with pytest.raises(SettingsError, match="servers must be an integer >= 1"):
        model.Rack(servers=0)
    with pytest.raises(SettingsError, match="port_gbps must be > 0"):
        model.Rack(port_gbps=-1.0)
    with pytest.raises(SettingsError, match="unknown driver class"):
        model.Rack(driver="warp")
    with pytest.raises(PortError, match=r"a hexagonal switch has 4\.\.32 ports, got 64"):
        model.Rack(servers=8, per_server=8, mesh="hexagonal")

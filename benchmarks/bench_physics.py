"""The physics in time on the emulated bench: a reconfiguration as a power meter logs it, and a
ring lock tracking an hour of ambient drift.

1. Reconfiguration. The default-seed 8-port Clements chip (no rings) on the emulated bench
   (:class:`hil.emulator.world.BenchWorld`, manual clock), the laser into input 0, routed to
   output 1; the switch (``ROUT:MATC``) then moves input 0 to output 2 while the emulated
   N7745A logs all 8 outputs (``:SENS<n>:FUNC:PAR:LOGG``, ``FUNC:STAT LOGG,STAR``,
   ``FUNC:RES?``), each sample the light's mean over its averaging time. Two drivers:

   - all channels at once (a DAC with a simultaneous update), logged at 1 us: the settling is
     the heaters' own. ``settle_s_measured``: from the write until output 2's power stays
     within 1 % of its swing (the last sample outside that band, by its end time);
     ``settle_s_model``: from the heaters' time constants, the time every heater's phase is
     within ``2 sqrt(0.01)`` rad of its final value
     (:func:`photonics.devices.transients.settle_time_s`: own first-order steps and crosstalk
     through its diffusion pole; near a routed state a phase error ``d`` leaves ``(d / 2)^2`` of the
     power, so 1 % of the swing is 0.2 rad). ``transient_worst_leak_db``: the most power at a wrong
     port (neither output 1 nor 2) during the reconfiguration, relative to output 2's settled power,
     beside the steady states'.
   - the default driver, one channel every 0.5 ms, logged at 10 us: the light passes through
     every partial state; ``reconfigure_s_sequential`` is what the switch reports (the writes
     plus the physics' settling), ``settle_s_measured_sequential`` the logged time to 1 %.

2. Ring lock under drift. The 4-port chip with output rings, input 0 routed to output 2 and its
   ring locked (``RING:LOCK 2``); the chip's temperature follows a seeded
   :class:`photonics.devices.drift.AmbientDrift` (an Ornstein-Uhlenbeck air temperature, 0.5 K over
   an hour's correlation, through a 60 s package) plus the heaters' self-heating, for ``--hours`` of
   simulated time, and the switch is sent ``RING:TRAC`` every ``--update-s``.
   ``ring_lock_drift_pm_max``: the worst true detuning of the ring from the laser (the chip's truth,
   every 0.1 s of the drift's grid), goal <= 0.5 pm; beside it the detuning had the ring not been
   tracked.

3. The band, one geometry and crosstalk through the firmware (``physics_band.py`` beside this
   script): ``isolation_band_worst_db`` (the demo's all-to-all matchings after ``CAL:RUN``, worst
   over 1530-1565 nm), ``layout_heaters_match`` (the default 8-port layout against the default
   chip: heater count and positions), ``dense_chip_isolation_db_sdk`` (a dense 6-port chip after
   ``Switch.calibrate()``, goal >= 17 dB).

Simulated time in 1 and 2 (the world's manual clock); nothing there is wall time except the
``*_wall_s`` figures. ``--plot PATH`` writes a PNG of the logged powers through both
reconfigurations (``docs/reconfiguration.png``).

Run::

    python benchmarks/bench_physics.py           # tables
    python benchmarks/bench_physics.py --json    # one JSON object
    python benchmarks/bench_physics.py --plot docs/reconfiguration.png
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import physics_band  # beside this script

from hil.emulator.clock import ManualClock
from hil.emulator.instruments.power_meters import PowerMeterN7744A
from hil.emulator.world import BenchWorld
from hil.instruments.base import parse_float32_block
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.drift import AmbientDrift
from photonics.devices.transients import settle_time_s

SEED = 0
#: The band a settled output stays in, as a fraction of the power swing.
BAND = 0.01
BEFORE, AFTER = "ROUT:MATC 0,1,2,3,4,5,6,7", "ROUT:MATC 0,2,1,3,4,5,6,7"


def _lit_world(chip: Chip, **kw: object) -> BenchWorld:
    world = BenchWorld(chip, seed=SEED, clock=ManualClock(0.0), **kw)  # type: ignore[arg-type]
    world.add_laser("tls")
    world.set_laser("tls", on=True, wavelength_nm=1550.0, power_mW=1.0)
    world.select_input(0)
    return world


def _ok(world: BenchWorld, line: str) -> None:
    reply = world.controller.handle(f"{line};SYST:ERR?")
    if reply != '0,"No error"':
        raise RuntimeError(f"{line}: {reply}")


def reconfiguration(channel_write_s: float, averaging_s: float, points: int) -> dict:
    """Log a reconfiguration (input 0: output 1 -> 2) on every output; figures and traces."""
    world = _lit_world(Chip(ChipSpec(n_ports=8, seed=SEED)))
    world.driver.channel_write_s = channel_write_s
    _ok(world, BEFORE)
    world.clock.advance(1.0)  # settled, the chip's self-heating too
    meter = PowerMeterN7744A(world, channels=8)
    for n in range(1, 9):
        meter.handle(f":SENS{n}:FUNC:PAR:LOGG {points},{averaging_s!r};:SENS{n}:POW:UNIT W")
        meter.handle(f":SENS{n}:FUNC:STAT LOGG,STAR")
    lead = 20 * averaging_s  # some samples before the write
    world.clock.advance(lead)
    old, t_write = world.driver.currents(), world.clock()
    _ok(world, AFTER)
    reported = world.settled_at - t_write
    world.clock.advance(points * averaging_s)
    mW = (
        1e3
        * np.array(
            [parse_float32_block("meter", meter.handle(f":SENS{n}:FUNC:RES?")) for n in range(1, 9)]
        ).T
    )  # (points, outputs)
    ends = world.clock() - points * averaging_s - lead + averaging_s * np.arange(1, points + 1)
    t = ends - t_write  # s after the write, at each sample's end
    dest, first = mW[:, 2], mW[t <= 0, 2].mean()
    final = mW[-20:, 2].mean()
    outside = np.abs(dest - final) > BAND * abs(final - first)
    measured = float(t[np.flatnonzero(outside)[-1]]) if outside.any() else 0.0
    # the model: the heaters' phase steps, within the phase that leaves 1 % of the power
    h, driver = world.chip.heaters, world.driver
    step = np.pi * (h.power_mW(driver.currents()) - h.power_mW(old)) / h.p_pi_mW
    written = int(np.count_nonzero(driver.currents() != old))
    thermal = settle_time_s(step, h.tau_s, world.chip.crosstalk, driver.dynamics, 2 * BAND**0.5)
    model = written * channel_write_s + thermal
    wrong = np.delete(mW, [1, 2], axis=1)
    during = (t > 0) & (t <= max(reported, measured) + averaging_s)
    routed = mW[t <= 0, 1].mean()  # output 1 before the write
    steady = np.r_[wrong[t <= 0].max(axis=1) / routed, wrong[-20:].max(axis=1) / final]
    return {
        "settle_s_measured": measured,
        "settle_s_model": model,
        "reconfigure_s_reported": reported,
        "channels_written": written,
        "transient_worst_leak_db": float(10 * np.log10(wrong[during].max() / final)),
        "steady_worst_leak_db": float(10 * np.log10(steady.max())),
        "trace": (t, mW),
    }


def ring_drift(hours: float, update_s: float, seed: int) -> dict:
    """Lock a ring, drift the chip for ``hours`` with ``RING:TRAC`` every ``update_s``."""
    chip = Chip(ChipSpec(n_ports=4, seed=SEED, output_rings=True))
    drift = AmbientDrift(seed=seed)
    world = _lit_world(chip, drift=drift)
    _ok(world, "ROUT:MATC 0,2;RING:LOCK 2")
    # the heaters' self-heating (30 ms) moves the ring ~14 pm once the lock has ended: let it
    # settle and track once before the hour starts
    world.clock.advance(1.0)
    _ok(world, "RING:TRAC")
    ring, kappa = chip.spec.ring, chip.spec.ring_thermal.ambient_nm_per_K
    start, worst, untracked, updates = world.clock(), 0.0, 0.0, 0
    locked = chip.ring_shift_nm(world.driver.currents())[2]  # at the reference temperature
    wall = time.perf_counter()
    for k in range(math.ceil(hours * 3600 / update_s)):
        world.clock.now_s = start + k * update_s
        _ok(world, "RING:TRAC")
        updates += 1
        world.wait_settled()
        t0 = world.clock()
        fine = np.arange(t0, start + (k + 1) * update_s, drift.step_s)
        # the chip's truth between updates: the ring's shift at these currents, moved by the
        # temperature (linear: kappa nm/K)
        shift = chip.ring_shift_nm(world.driver.currents())[2] + kappa * world.temperature_K(fine)
        detuning = ring.detuning_nm(1550.0, shift)
        worst = max(worst, float(np.abs(detuning).max()))
        held = ring.detuning_nm(1550.0, locked + kappa * world.temperature_K(fine))
        untracked = max(untracked, float(np.abs(held).max()))  # the heater left as locked
    return {
        "ring_lock_drift_pm_max": 1e3 * worst,
        "ring_untracked_drift_pm_max": 1e3 * untracked,
        "ring_track_updates": updates,
        "ring_track_interval_s": update_s,
        "drift_hours": hours,
        "ring_drift_wall_s": time.perf_counter() - wall,
    }


def plot(path: str, fast: dict, slow: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, run, scale, unit, title in (
        (axes[0], fast, 1e6, "us", "all channels at once (logged at 1 us)"),
        (axes[1], slow, 1e3, "ms", "one channel every 0.5 ms (logged at 10 us)"),
    ):
        t, mW = run["trace"]
        dbm = 10 * np.log10(np.maximum(mW, 1e-9))
        wrong = np.delete(dbm, [1, 2], axis=1).max(axis=1)
        ax.plot(t * scale, dbm[:, 1], label="output 1 (before)")
        ax.plot(t * scale, dbm[:, 2], label="output 2 (after)")
        ax.plot(t * scale, wrong, label="worst other output", color="grey")
        ax.axvline(run["settle_s_model"] * scale, ls="--", color="k", lw=0.8, label="model settled")
        ax.set_xlabel(f"time after the write, {unit}")
        ax.set_ylabel("power on the meter, dBm")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Input 0 moved from output 1 to output 2: 8-port Clements chip, emulated N7745A")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hours", type=float, default=1.0, help="simulated drift, h")
    parser.add_argument("--update-s", type=float, default=1.0, help="RING:TRAC interval, s")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the ambient drift")
    parser.add_argument("--plot", help="write a PNG of both reconfigurations here")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 minutes of drift")
    args = parser.parse_args()
    if args.quick:
        args.hours = 0.05
    fast = reconfiguration(0.0, 1e-6, 200)
    slow = reconfiguration(0.5e-3, 1e-5, 6000)
    drift = ring_drift(args.hours, args.update_s, args.seed)
    figures = {k: v for k, v in fast.items() if k != "trace"}
    figures["settle_agreement"] = figures["settle_s_measured"] / figures["settle_s_model"] - 1
    figures |= {
        "reconfigure_s_sequential": slow["reconfigure_s_reported"],
        "settle_s_measured_sequential": slow["settle_s_measured"],
        "settle_s_model_sequential": slow["settle_s_model"],
        "transient_worst_leak_db_sequential": slow["transient_worst_leak_db"],
    }
    figures |= drift
    static = physics_band.figures()
    figures |= static
    if args.plot:
        plot(args.plot, fast, slow)
    if args.json:
        print(json.dumps(figures))
        return
    print("Reconfiguration (input 0: output 1 -> 2), emulated N7745A logging")
    print(f"  {'':34}{'all at once':>14}{'0.5 ms/channel':>16}")
    rows = (
        ("settled, measured on the log (s)", "settle_s_measured", "{:.3e}"),
        ("settled, model from tau (s)", "settle_s_model", "{:.3e}"),
        ("reported by the switch (s)", "reconfigure_s_reported", "{:.3e}"),
        ("channels written", "channels_written", "{}"),
        ("worst leak during it (dB)", "transient_worst_leak_db", "{:.1f}"),
        ("worst leak, steady states (dB)", "steady_worst_leak_db", "{:.1f}"),
    )
    for label, key, fmt in rows:
        print(f"  {label:34}{fmt.format(fast[key]):>14}{fmt.format(slow[key]):>16}")
    print(f"  measured / model - 1 (all at once): {figures['settle_agreement']:+.1%} (goal: 20 %)")
    print(
        f"\nRing lock under {args.hours:g} h of ambient drift, RING:TRAC every {args.update_s:g} s"
    )
    print(f"  worst detuning, tracked:   {drift['ring_lock_drift_pm_max']:8.3f} pm (goal <= 0.5)")
    print(f"  worst detuning, untracked: {drift['ring_untracked_drift_pm_max']:8.1f} pm")
    print(f"  {drift['ring_track_updates']} updates, {drift['ring_drift_wall_s']:.1f} s wall")
    print()
    physics_band.print_tables(static)


if __name__ == "__main__":
    main()

"""The switch's ``CALibration`` commands: self-calibration through the chip's detectors, and
the calibration kept in non-volatile memory."""

from __future__ import annotations

import numpy as np

from firmware.commands import Param
from firmware.controller.core import Core, fabric_for
from firmware.declarations import command, query
from firmware.scpi_errors import ScpiError
from photonics.calibration.hex_crosstalk import calibrate_recirculating_crosstalk
from photonics.calibration.hex_selfcal import calibrate_recirculating
from photonics.calibration.selfcal import iv_group, peak_power_mW, self_calibrate
from photonics.chips.calibration import Calibration
from photonics.chips.switch import FeedForwardFabric, MeshFabric
from photonics.devices.thermal import DEFAULT_P_PI_MW, HeaterLayout, crosstalk_matters
from photonics.feedforward.meshes import FeedForwardMesh

#: During self-calibration the locked rings are re-centred whenever the mean power of the mesh's
#: heaters over a batch of readings differs by this much from where they were last centred, mW:
#: the die's self-heating (1 K/W: 50 mW moves a ring 4 pm, 2 % of its FWHM) and the heaters'
#: crosstalk move the rings, and a mesh parked at bar draws several hundred mW by the end. Held
#: where they were locked instead, the fringes read through them calibrated the default 8-port
#: bench chip (seed 1) to 19.5-20.4 dB worst isolation; re-centred, 24.2 dB (without the die's
#: self-heating, 24.3 dB).
RING_RECENTRE_MW = 50.0


class CalibrationCommands(Core):
    """``CALibration:...``. The rings are locked before the mesh is measured through them."""

    #: The chip's heater layout, from its design (None: unknown; crosstalk is not calibrated).
    heater_layout: HeaterLayout | None = None

    @command(
        "CALibration:RUN",
        Param("save", "bool", optional=True, default=False),
        summary="Self-calibrate through the chip's detectors (locks the rings first): a "
        "feed-forward mesh column by column; a recirculating one cell by cell on routed paths "
        "(cells it cannot fit are marked dead and not routed through), then each cell's "
        "extinction in bar and in cross, which the router predicts isolation with. Either with "
        "its thermal crosstalk where the chip's heater layout predicts it matters (routes then "
        "compensate it). The result is used at once and kept until power-off; CAL:SAVE stores "
        "it, as does ON here (all or nothing: with no store, -310 before anything runs). The "
        "applied matching is re-applied with it.",
        example="CAL:RUN",
        errors="-221 a mesh it cannot calibrate, or interlock engaged; -222 its sweeps do not "
        "fit the current limit or the power budget (refused before it starts); -200 a fit "
        "failed; "
        "-240 hardware failure; -310 no store, or it failed",
        execution="overlapped",
    )
    def run_calibration(self, save: bool) -> None:
        if save and self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        if isinstance(self.fabric, MeshFabric):
            self._run_recirculating(self.fabric, save)
            return
        mesh = self.fabric.mesh if isinstance(self.fabric, FeedForwardFabric) else None
        if not isinstance(mesh, FeedForwardMesh):
            raise ScpiError(
                -221,
                "self-calibration runs on feed-forward and recirculating meshes; load a "
                "calibration instead",
            )
        limit = float(self.current_limit_mA.min())
        group = self._calibration_fits(mesh, limit)
        keep = self.lock_all_rings()
        held = self.driver.currents()
        mesh_only = np.ones(held.size)
        mesh_only[keep] = 0.0  # the mesh's heaters' power, without the rings'
        tracked_mW = [float(self.driver.power_mW(held * mesh_only))]

        def measure(rows: np.ndarray, port: int) -> np.ndarray:
            rows = np.array(rows, dtype=float)
            # the rings stay locked: re-centred when the mesh's heaters have moved by
            # RING_RECENTRE_MW since, at this batch's mean currents
            mean_mW = float(np.mean(self.driver.power_mW(rows * mesh_only)))
            if keep and abs(mean_mW - tracked_mW[0]) > RING_RECENTRE_MW:
                base = rows.mean(axis=0)
                base[keep] = held[keep]
                held[keep] = self._recentred(base)[keep]
                tracked_mW[0] = mean_mW
            rows[:, keep] = held[keep]
            return self._measure(rows, np.eye(self.driver.n_detectors)[port])

        layout = self.heater_layout
        coupled = layout is not None and crosstalk_matters(layout, mesh.n_mzis)
        found = self_calibrate(
            mesh,
            measure,
            self._voltage,
            self.driver.n_channels,
            limit,
            positions_um=layout.positions_um if coupled and layout else None,
            chip_id=self.idn.split(",")[1],
            progress=self.progress,
            other_arm_um=layout.other_arm_um if coupled and layout else None,
            iv_group=group,
        )
        self._adopt(found.calibration, save)

    def _adopt(self, cal: Calibration, save: bool) -> None:
        """Use what CAL:RUN found and, with ``save``, store it."""
        self.use_calibration(cal, stored=False)
        if save:
            self.save_calibration()

    def _run_recirculating(self, fabric: MeshFabric, save: bool) -> None:
        """CAL:RUN on a recirculating mesh (:mod:`photonics.calibration.hex_selfcal`): within the
        current limit and the power budget at every step; cells it cannot calibrate are marked dead
        (``phase_fitted`` False), so the router leaves them out."""
        limit = float(self.current_limit_mA.min())
        group = self._heaters_fit(limit)
        mesh = fabric.router.mesh
        p_max = float(self.driver.power_mW(np.diag(np.full(self.driver.n_channels, limit))).min())
        if p_max < 2 * DEFAULT_P_PI_MW:
            raise ScpiError(
                -222,
                f"self-calibration sweeps each cell over a full period: about "
                f"{2 * DEFAULT_P_PI_MW:.3g} mW, {limit:.6g} mA gives {p_max:.3g} mW",
            )

        def measure(rows: np.ndarray, port: int) -> np.ndarray:
            return self._measure(rows, np.eye(self.driver.n_detectors)[port])

        found = calibrate_recirculating(
            mesh,
            fabric.endpoints,
            measure,
            self._voltage,
            self.driver.n_channels,
            limit,
            chip_id=self.idn.split(",")[1],
            progress=self.progress,
            iv_group=group,
            power_budget_mW=self.power_budget_mW,
        )
        cal = found.calibration
        layout = self.heater_layout
        if layout is not None and crosstalk_matters(layout, mesh.n_cells):
            cal = calibrate_recirculating_crosstalk(
                found,
                len(fabric.endpoints),
                measure,
                layout,
                limit,
                power_budget_mW=self.power_budget_mW,
                progress=self.progress,
            )
        self._adopt(cal, save)

    def _heaters_fit(self, limit: float) -> int:
        """Refuse up front (-221 interlock, -222) an I-V sweep that drives a heater alone to
        ``limit`` (mA) above the power budget, else return how many heaters it drives at once."""
        if self.interlock:
            raise ScpiError(-221, "interlock engaged: release it with SYST:INT OFF")
        n = self.driver.n_channels
        alone = self.driver.power_mW(np.diag(np.full(n, limit)))  # each heater alone, mW
        budget = self.power_budget_mW
        if alone.max() > budget:
            raise ScpiError(
                -222,
                f"self-calibration drives each heater alone to {limit:.6g} mA "
                f"({alone.max():.6g} mW): above the power budget {budget:.6g} mW",
            )
        return iv_group(alone, budget)

    def _calibration_fits(self, mesh: FeedForwardMesh, limit: float) -> int:
        """Refuse up front (-221 interlock, -222 limits) a self-calibration whose sweeps cannot
        run inside the limits, else return how many heaters its I-V sweep drives at once. It
        drives every heater in turn to ``limit`` (mA); sweeps each MZI over a full period (twice
        its P_pi, by the calibration in use, else the nominal one) up to the power ``limit``
        gives, with the MZIs before it parked at bar (the estimate of
        :func:`~photonics.calibration.selfcal.peak_power_mW`, when there is a calibration in use)
        and the other heaters as they are now (rings not locked yet at 0 mA). Each measurement is
        still checked as it is sent (:meth:`_measure`)."""
        group = self._heaters_fit(limit)
        n, budget = self.driver.n_channels, self.power_budget_mW
        alone = self.driver.power_mW(np.diag(np.full(n, limit)))
        p_max, k = float(alone.min()), mesh.n_mzis
        cal = self.calibration
        p_pi = np.full(k, DEFAULT_P_PI_MW) if cal is None else cal.p_pi_mW[:k]
        if 2 * p_pi.max() > p_max:
            raise ScpiError(
                -222,
                f"self-calibration sweeps each MZI over a full period: MZI "
                f"{int(np.argmax(p_pi))} needs about {2 * p_pi.max():.3g} mW, {limit:.6g} mA "
                f"gives {p_max:.3g} mW",
            )
        if cal is not None:
            held = self.driver.currents()
            held[:k] = 0.0
            peak = peak_power_mW(cal, k, p_max) + float(self.driver.power_mW(held))
            if peak > budget:
                raise ScpiError(
                    -222,
                    f"self-calibration's sweeps draw about {peak:.4g} mW (the MZIs parked at "
                    f"bar, one at {limit:.6g} mA): above the power budget {budget:.6g} mW",
                )
        return group

    def use_calibration(self, cal: Calibration, stored: bool) -> None:
        """Switch to ``cal``, re-applying the matching with it (locked rings re-centred), all
        or nothing. On a recirculating mesh the router leaves out the cells ``cal`` did not
        fit (``phase_fitted`` False) and predicts isolation from its measured extinction
        (``extinction_db``)."""
        with self.transaction():
            self.calibration, self.calibration_stored = cal, stored
            self.fabric = fabric_for(self.fabric, cal)
            if self.plan is not None:
                self.apply_plan(self.plan)

    @command(
        "CALibration:SAVE",
        summary="Store the calibration in non-volatile memory.",
        example="CAL:SAVE",
        errors="-221 nothing to save; -310 no store, or it failed",
    )
    def save_calibration(self) -> None:
        if self.calibration is None:
            raise ScpiError(-221, "no calibration to save: run CAL:RUN first")
        if self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        self._persist("calibration")
        self.calibration_stored = True

    @command(
        "CALibration:LOAD",
        summary="Use the stored calibration (re-applies the matching).",
        example="CAL:LOAD",
        errors="-221 nothing stored, or for another chip; -310 the stored file is unreadable",
    )
    def load_calibration(self) -> None:
        if self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        stored = self.store.read_calibration()
        if stored is None:
            raise ScpiError(-221, "no calibration is stored")
        if stored.n_heaters != self.driver.n_channels:
            raise ScpiError(
                -221,
                f"stored calibration has {stored.n_heaters} heaters, the chip "
                f"{self.driver.n_channels}",
            )
        self.use_calibration(stored, stored=True)

    @query(
        "CALibration:STATus",
        reply='0|1,"chip id","ISO 8601 time",0|1',
        summary="Whether a calibration is in use, its chip id, creation time and whether it is "
        "stored.",
        example="CAL:STAT?",
    )
    def calibration_status(self) -> str:
        cal = self.calibration
        if cal is None:
            return '0,"","",0'
        return f'1,"{cal.chip_id}","{cal.created}",{int(self.calibration_stored)}'

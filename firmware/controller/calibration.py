"""The switch's ``CALibration`` commands: self-calibration through the chip's detectors, and
the calibration kept in non-volatile memory."""

from __future__ import annotations

import numpy as np

from firmware.commands import Param, ScpiError
from firmware.controller.core import Core
from firmware.declarations import command, query
from photonics.calibration import Calibration
from photonics.feedforward import FeedForwardMesh
from photonics.selfcal import calibrate_mesh
from photonics.switch import FeedForwardFabric


class CalibrationCommands(Core):
    """``CALibration:...``. The rings are locked before the mesh is measured through them."""

    @command(
        "CALibration:RUN",
        Param("save", "bool", optional=True, default=False),
        summary="Self-calibrate through the chip's detectors (locks the rings first); the "
        "result is used at once and kept until power-off; CAL:SAVE stores it, as does ON here "
        "(all or nothing: with no store, -310 before anything runs). The applied matching is "
        "re-applied with it.",
        example="CAL:RUN",
        errors="-221 not a feed-forward mesh, or interlock engaged; -200 a fit failed "
        "(calibration unchanged); -240 hardware failure; -310 no store, or it failed",
    )
    def run_calibration(self, save: bool) -> None:
        mesh = self.fabric.mesh if isinstance(self.fabric, FeedForwardFabric) else None
        if not isinstance(mesh, FeedForwardMesh):
            raise ScpiError(
                -221, "self-calibration runs on feed-forward meshes; load a calibration instead"
            )
        if save and self.store is None:
            raise ScpiError(-310, "this switch has no non-volatile store")
        if self.interlock:
            raise ScpiError(-221, "interlock engaged: release it with SYST:INT OFF")
        keep = self.lock_all_rings()
        held = self.driver.currents()

        def measure(rows: np.ndarray, port: int) -> np.ndarray:
            rows = np.array(rows, dtype=float)
            rows[:, keep] = held[keep]  # the rings stay locked
            return self.driver.measure(rows, np.eye(self.driver.n_detectors)[port])

        limit = float(self.current_limit_mA.min())
        one = np.zeros(self.driver.n_channels)
        one[0] = limit
        group = int(0.9 * self.power_budget_mW // max(self.driver.power_mW(one), 1e-9))
        found = calibrate_mesh(
            mesh,
            measure,
            self.driver.voltage,
            self.driver.n_channels,
            limit,
            chip_id=self.idn.split(",")[1],
            progress=self.progress,
            iv_group=max(group, 1),
        )
        self.use_calibration(found.calibration, stored=False)
        if save:
            self.save_calibration()

    def use_calibration(self, cal: Calibration, stored: bool) -> None:
        """Switch to ``cal``, re-applying the matching with it (locked rings re-centred), all
        or nothing."""
        with self.transaction():
            self.calibration, self.calibration_stored = cal, stored
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

"""Emulated chips, their calibration record, the circuit-switch planners, the topology registry."""

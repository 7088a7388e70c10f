"""Calibration through the photodiodes: fits, both mesh kinds, extinction, crosstalk, rings."""

"""Tests of :mod:`photonics`."""

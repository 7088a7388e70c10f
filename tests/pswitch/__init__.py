"""Tests of :mod:`pswitch`."""

"""Fabrication yield: one emulated chip's production test, a study of many, and their statistics."""

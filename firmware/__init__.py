"""The switch controller: command language, state, safety and control loops, and the SDK client.

Builds on :mod:`photonics`; never opens a socket or a file handle of an instrument.
"""

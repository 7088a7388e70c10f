"""Recirculating waveguide meshes: lattices, scattering with loops, switches, router, covers."""

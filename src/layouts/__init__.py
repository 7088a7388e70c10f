"""gdsfactory cells of the emulated chips and layout-versus-model checks, on :mod:`photonics`."""

"""gdsfactory cells of the emulated chips, and layout-versus-model checks. Builds on :mod:`photonics`."""

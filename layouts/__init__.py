"""gdsfactory cells of the emulated chips and layout-versus-model checks, on :mod:`photonics`.

- :mod:`layouts.cells`: the heated MZI, the heated add-drop ring, bond pads, wires;
- :mod:`layouts.graph`: element-level circuit graphs of the models and their difference;
- :mod:`layouts.meshes`: Clements / Reck, hexagonal-mesh and ring layouts built from the models;
- :mod:`layouts.check`: netlist extraction, the metal check, the layout evaluated as a circuit;
- :mod:`layouts.output`: GDS files written and read back, headless PNG rendering;
- :mod:`pswitch.layout`: ``pswitch layout``.

Needs the ``layout`` extra (gdsfactory). Importing this package, :mod:`layouts.graph` or
:mod:`pswitch.layout` loads none of it; the other modules import gdsfactory.
"""

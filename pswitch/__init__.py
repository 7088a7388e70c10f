"""The pswitch application: the ``pswitch`` command line, the demo and the subcommands.

Built on the library packages: :mod:`hil` (instruments, transports, the emulated bench),
:mod:`firmware` (the switch controller and the SDK), :mod:`layouts` (gdsfactory layouts) and
:mod:`photonics` (physics and synthesis). Nothing below imports this package.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pswitch-photonics")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

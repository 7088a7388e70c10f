"""``python -m pswitch``: the same as the ``pswitch`` command."""

from pswitch.cli import main

raise SystemExit(main())

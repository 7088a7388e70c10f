"""``python -m pswitch.figures``: see the package's docstring."""

from pswitch.figures import main

raise SystemExit(main())

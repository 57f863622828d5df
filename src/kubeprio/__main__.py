"""``python -m kubeprio``: the same entry point as the ``kubeprio`` console script."""

from kubeprio.cli import main

raise SystemExit(main())

"""``python -m smtmma``: the command line (see :mod:`smtmma.cli`)."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())

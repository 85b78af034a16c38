"""``python -m tether``: the ``tether`` command."""

from __future__ import annotations

import sys

from tether.cli import main

if __name__ == "__main__":
    sys.exit(main())

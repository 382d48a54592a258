"""`python -m rasp`: the same as the `rasp` console script."""

from __future__ import annotations

import sys

from rasp.tools.entry import main

if __name__ == "__main__":
    sys.exit(main())

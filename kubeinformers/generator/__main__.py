"""`python -m kubeinformers.generator [generate] ...`."""

from __future__ import annotations

import sys

from kubeinformers.generator.cli import main

if __name__ == "__main__":
    sys.exit(main())

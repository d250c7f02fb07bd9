"""Entry point of the frozen app: the same `app.cli.main` as the `stormbound` script.

A separate file (not app/__main__.py) so PyInstaller does not put `app/` itself on
the module path of the bundle.
"""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())

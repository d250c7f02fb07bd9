"""Entry point of the frozen app: the same `app.cli.main` as the `stormbound` script.

A separate file (not app/__main__.py) so PyInstaller does not put `app/` itself on
the module path of the bundle.

macOS hands a double-clicked document to an app as an Apple event; PyInstaller's
argv emulation (packaging/stormbound.spec) turns it into `stormbound PATH`, which
becomes `stormbound gui PATH` here (a recipe on paper: packaging/macos/README.md).
"""

import os
import sys

from app.cli import main


def _argv() -> list[str]:
    args = sys.argv[1:]
    if sys.platform == "darwin" and len(args) == 1 and os.path.isfile(args[0]):
        return ["gui", args[0]]
    return args


if __name__ == "__main__":
    sys.exit(main(_argv()))

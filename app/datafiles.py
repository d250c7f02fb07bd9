"""Where the bundled data lives: `models/` (examples) and `resources/` (icons, styles).

From a checkout they sit beside `app/`; in the PyInstaller bundle they are under
`sys._MEIPASS` (dist/stormbound/_internal/). One function for both, so the GUI,
the CLI and the self-test never guess paths.
"""

from __future__ import annotations

import sys
from pathlib import Path


def is_frozen() -> bool:
    """True when running from the PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def data_root() -> Path:
    """The folder holding `models/` and `resources/`."""
    if is_frozen():
        return Path(sys._MEIPASS)  # type: ignore[attr-defined]  # set by PyInstaller's bootloader
    return Path(__file__).resolve().parent.parent


def models_dir() -> Path:
    """The example topologies shipped with the app."""
    return data_root() / "models"


def resources_dir() -> Path:
    """Icons and style sheets shipped with the app."""
    return data_root() / "resources"


def example_path(name: str) -> Path:
    """A bundled example by file name, e.g. `simple-DIA-cfg-1.storm.json`."""
    return models_dir() / name

"""File ▸ Export verified configuration…: ask for a file name, write the Verification panel's verified
configuration (topology, settings, verdicts, bound, hash) and say what happened, in words."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.gui.dialogs import Dialogs
from app.gui.panels.trace_view import save_bytes
from app.gui.panels.verification_controller import VerificationController

TITLE = "Export verified configuration"
VERIFIED_FILTER = "Verified configurations (*.verified.json)"


def export_verified(controller: VerificationController, path: str | Path) -> None:
    """Write the controller's verified configuration to `path` through `save_bytes`."""
    save_bytes(path, controller.verified_configuration())


def suggested_name(document_path: Path | None) -> str:
    """Beside the document, named after it: `wordcount.verified.json` (`topology.verified.json` unsaved)."""
    base = document_path.name.removesuffix(".json").removesuffix(".storm") if document_path else "topology"
    return str((document_path.parent if document_path else Path.cwd()) / f"{base}.verified.json")


def export_verified_dialog(parent: QWidget, controller: VerificationController, document_path: Path | None,
                           dialogs: Dialogs) -> None:
    """Why it cannot be exported, or a file name asked for (answer key `verified_file`), written, reported."""
    problem = controller.verified_problem()
    if problem is not None:
        dialogs.error(parent, TITLE, f"Cannot export: {problem}.")
        return
    path = dialogs.save_file_name(parent, TITLE, suggested_name(document_path), VERIFIED_FILTER, key="verified_file")
    if not path:
        return
    try:
        export_verified(controller, path)
    except (OSError, ValueError) as err:
        dialogs.error(parent, TITLE, str(err))
        return
    dialogs.info(parent, TITLE, f"Wrote {path}.")

"""Questions and messages the main window asks the user, behind one object tests can replace.

With $STORMBOUND_NO_DIALOGS set (tests, screenshot mode) nothing modal is shown:
messages are recorded and questions get the answers in `answers` (or safe defaults).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.gui.app_words import in_app_words

STORMBOUND_FILTER = "Stormbound topologies (*.storm.json *.json);;D-VerT JSON (*.json);;All files (*)"
FLUX_FILTER = "Flux topologies (*.yaml *.yml *.flux);;All files (*)"
PROPERTIES_FILTER = "Properties (*.properties);;All files (*)"
TIMINGS_FILTER = ("Timings and Storm UI tables (*.yaml *.yml *.csv *.tsv *.txt *.json);;All files (*)")


class Dialogs:
    """Modal dialogs of the app; `headless` records instead of blocking."""

    def __init__(self, headless: bool | None = None, answers: dict[str, Any] | None = None):
        self.headless = bool(os.environ.get("STORMBOUND_NO_DIALOGS")) if headless is None else headless
        self.answers: dict[str, Any] = dict(answers or {})
        self.shown: list[tuple[str, str, str]] = []  # (kind, title, text)

    def _answer(self, key: str, default: Any) -> Any:
        value = self.answers.get(key, default)
        if isinstance(value, list):  # a queue of answers, one per question
            return value.pop(0) if value else default
        return value

    def error(self, parent: QWidget | None, title: str, text: str) -> None:
        text = in_app_words(text)  # the core's command-line hints, as the app's dialogs (app/gui/app_words.py)
        self.shown.append(("error", title, text))
        if self.headless:
            print(f"stormbound: {title}: {text}", file=sys.stderr)
            return
        QMessageBox.critical(parent, title, text)

    def info(self, parent: QWidget | None, title: str, text: str) -> None:
        text = in_app_words(text)
        self.shown.append(("info", title, text))
        if not self.headless:
            QMessageBox.information(parent, title, text)

    def ask_save_changes(self, parent: QWidget | None, name: str) -> str:
        """'save', 'discard' or 'cancel' before the document is closed or replaced."""
        text = f"'{name}' has unsaved changes. Save them first?"
        self.shown.append(("question", "Unsaved changes", text))
        if self.headless:
            return str(self._answer("save_changes", "cancel"))
        buttons = QMessageBox.StandardButton
        reply = QMessageBox.question(parent, "Unsaved changes", text,
                                     buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        return {buttons.Save: "save", buttons.Discard: "discard"}.get(reply, "cancel")

    def ask_restore(self, parent: QWidget | None, description: str) -> bool:
        text = f"Stormbound did not exit cleanly last time.\n{description}\nRestore this work?"
        self.shown.append(("question", "Restore unsaved work", text))
        if self.headless:
            return bool(self._answer("restore", False))
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(parent, "Restore unsaved work", text, buttons.Yes | buttons.No,
                                    buttons.Yes) == buttons.Yes

    def open_file_name(self, parent: QWidget | None, title: str, folder: str = "",
                       filter: str = STORMBOUND_FILTER) -> str:
        if self.headless:
            return str(self._answer("open_file", ""))
        name, _ = QFileDialog.getOpenFileName(parent, title, folder, filter)
        return name

    def existing_folder(self, parent: QWidget | None, title: str, folder: str = "") -> str:
        """A folder to choose (answer key `folder`; headless default: none)."""
        self.shown.append(("question", title, folder))
        if self.headless:
            return str(self._answer("folder", ""))
        return QFileDialog.getExistingDirectory(parent, title, folder)

    def confirm(self, parent: QWidget | None, title: str, text: str) -> bool:
        """A yes/no question (answer key `confirm`; headless default: no)."""
        self.shown.append(("question", title, text))
        if self.headless:
            return bool(self._answer("confirm", False))
        buttons = QMessageBox.StandardButton
        return QMessageBox.question(parent, title, text, buttons.Yes | buttons.No, buttons.No) == buttons.Yes

    def save_file_name(self, parent: QWidget | None, title: str, suggestion: str = "",
                       filter: str = STORMBOUND_FILTER, key: str = "save_file") -> str:
        """A file name to write (headless: the answer `key`; default: none)."""
        if self.headless:
            return str(self._answer(key, ""))
        name, _ = QFileDialog.getSaveFileName(parent, title, suggestion, filter)
        return name


def ask_storm_ui(window: Any, group: str, keys: tuple[str, ...], title: str,
                 make_dialog: Callable[[dict[str, Any]], Any], headless: dict[str, Any] | None = None
                 ) -> dict[str, Any] | None:
    """Where a running topology's Storm UI is: the dialog `make_dialog(last values)` (or, headless, the answer
    under `group`), refused without an address and a topology; the values in `keys` are remembered under
    `group/` for the next time. `headless` adds defaults to a headless answer. None: cancelled or refused."""
    from PySide6.QtWidgets import QDialog

    last = {k: window.settings.value(f"{group}/{k}") for k in keys}
    last = {k: v for k, v in last.items() if v not in (None, "")}
    if window.dialogs.headless:
        answer = window.dialogs.answers.get(group)
        if not answer:
            return None
        request: dict[str, Any] = {**(headless or {}), **answer}
    else:
        dialog = make_dialog(last)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = dialog.values()
    if not request.get("url") or not request.get("topology"):
        window.dialogs.error(window, title, "give the Storm UI's address and the topology")
        return None
    for key in keys:
        if request.get(key) is not None:
            window.settings.setValue(f"{group}/{key}", request[key])
    return request

"""Render the app icon (resources/icons/app.svg) to the PNG sizes of the hicolor theme, with Qt offscreen.

Usage: python packaging/deb/render_icons.py OUT_DIR   (writes OUT_DIR/<N>x<N>/apps/stormbound.png and
OUT_DIR/scalable/apps/stormbound.svg; run with the build environment's Python, which has PySide6).
`--ico FILE` writes a Windows icon (256 px, Qt's ICO writer), `--iconset DIR` the PNGs of a macOS
`.iconset` for `iconutil` (both for the recipes on paper in packaging/windows and packaging/macos).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
SOURCE = Path(__file__).resolve().parents[2] / "resources" / "icons" / "app.svg"


def _image(size: int):  # noqa: ANN202  # a QImage; PySide6 is imported only when rendering
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])  # QSvgRenderer paints through the GUI module
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"render_icons.py: {SOURCE} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def render_ico(target: Path) -> None:
    if not _image(256).save(str(target), "ICO"):
        raise SystemExit(f"render_icons.py: cannot write {target} (Qt's ico image plugin missing?)")


def render_iconset(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for size in (16, 32, 128, 256, 512):
        _image(size).save(str(folder / f"icon_{size}x{size}.png"), "PNG")
        _image(size * 2).save(str(folder / f"icon_{size}x{size}@2x.png"), "PNG")


def render(out: Path, name: str = "stormbound") -> list[Path]:
    written = []
    for size in SIZES:
        target = out / f"{size}x{size}" / "apps" / f"{name}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _image(size).save(str(target), "PNG"):
            raise SystemExit(f"render_icons.py: cannot write {target}")
        written.append(target)
    scalable = out / "scalable" / "apps" / f"{name}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, scalable)
    return written + [scalable]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ico":
        render_ico(Path(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--iconset":
        render_iconset(Path(sys.argv[2]))
    elif len(sys.argv) == 2:
        for path in render(Path(sys.argv[1])):
            print(path)
    else:
        sys.exit("usage: render_icons.py OUT_DIR | --ico FILE | --iconset DIR")

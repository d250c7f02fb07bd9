"""PyInstaller runtime hook: runs before the app in the frozen bundle.

pyqtgraph picks its Qt binding from QT_API; the bundle holds PySide6 only.
"""

import os

os.environ.setdefault("QT_API", "pyside6")

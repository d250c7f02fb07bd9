"""Docked panels of the main window: palette, inspector, verification and its trace view, runs, pattern matches."""

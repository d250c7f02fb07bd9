"""Docked panels of the main window: palette, inspector, and the plug-in panels of other features."""

"""Measured runs without Spark: event-log readers, analysis, model versus measured, reliability."""

"""Scheduler plugins, one module per upstream plugin."""

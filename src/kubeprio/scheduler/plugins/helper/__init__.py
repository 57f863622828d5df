"""Helpers shared by the scheduler plugins (upstream ``pkg/scheduler/framework/plugins/helper``).

Not plugins themselves: pure functions over scores and numbers, importable by any plugin.
"""

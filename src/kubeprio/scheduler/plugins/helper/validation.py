"""The error for invalid plugin arguments (upstream ``apis/config/validation`` failures).

Raised by plugin constructors with upstream's aggregated field-error text, e.g.
``scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in
valid range (0, 100]``. Pure.
"""

from __future__ import annotations

from kubeprio.errors import KubeprioError


class PluginArgsError(KubeprioError, ValueError):
    """Plugin arguments that upstream's validation rejects."""

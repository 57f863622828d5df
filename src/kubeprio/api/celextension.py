"""The Kubernetes CEL libraries that ``api.celexpr`` adds as one runtime extension.

What it is: the quantity (``api.celquantity``), URL (``api.celurl``), IP and CIDR
(``api.celnet``) and sets (``api.celsets``) libraries of v1.32's base environment,
bundled in a single ``cel.CelExtension``. An extension, rather than plain function
declarations, because only an extension may add overloads to functions the standard
library or the strings extension already declare (``string(ip)``, ``string(cidr)``,
the list forms of ``indexOf``/``lastIndexOf``); plain declarations of those names fail
with ``function 'string' declared multiple times``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from cel_expr_python import cel

from kubeprio.api import celnet, celquantity, celsets, celurl

NAME = "kubernetes"


def extension() -> Any:
    """A new extension holding every library's declarations."""
    declared = [
        *celquantity.declarations(),
        *celurl.declarations(),
        *celnet.declarations(),
        *celsets.declarations(),
    ]
    return cel.CelExtension(NAME, declared)

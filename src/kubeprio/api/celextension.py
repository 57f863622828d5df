"""The Kubernetes CEL libraries that ``api.celexpr`` adds to every environment.

What it is: the quantity (``api.celquantity``), URL (``api.celurl``), IP and CIDR
(``api.celnet``), sets (``api.celsets``) and format (``api.celformat``) libraries of
v1.32's base environment, and the list and regex functions (``api.cellibrary``), bundled
as one ``api.celenv.Library``. The first group goes in a ``cel.CelExtension``, because
only an extension may add overloads to functions the standard library or the strings
extension already declare (``string(ip)``, ``string(cidr)``, the list forms of
``indexOf``/``lastIndexOf``); plain declarations of those names fail with ``function
'string' declared multiple times``. Overloads the runtime cannot tell apart (one
message kind) are ``celenv.SharedFunction``s. ``library(authorizer=True)`` adds the
``authorizer`` library (``api.celauthz``), which only admission policies declare. Pure:
no I/O.
"""

from __future__ import annotations

import functools

from kubeprio.api import (
    celauthz,
    celenv,
    celformat,
    cellibrary,
    celnet,
    celquantity,
    celsets,
    celurl,
)

NAME = "kubernetes"


@functools.cache
def library(*, authorizer: bool = False) -> celenv.Library:
    """Every Kubernetes library; with ``authorizer``, the authorization one too."""
    declared = [
        *celquantity.declarations(),
        *celurl.declarations(),
        *celnet.declarations(),
        *celsets.declarations(),
        *celformat.declarations(),
    ]
    shared = [*celnet.shared_declarations()]
    if authorizer:
        declared.extend(celauthz.declarations())
        shared.extend(celauthz.shared_declarations())
    return celenv.Library(
        NAME,
        tuple(declared),
        tuple(shared),
        tuple(cellibrary.declarations()),
        celformat.REWRITES,
    )

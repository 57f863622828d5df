"""Where the HPA controller reads and sets its target's ``scale``: the kinds it can target.

Upstream's HPA controller maps ``scaleTargetRef`` (group and kind) to a resource through
a discovery-backed REST mapper and talks to the scale subresource through the scale
client, so a custom resource whose CRD declares ``subresources.scale`` can be targeted
like a Deployment (``pkg/controller/podautoscaler/horizontal.go``, ``scaleForResourceMappings``).
Here the kinds of the static resource table go through ``Client.get_scale`` and
``update_scale`` (``ClientScaleTarget``); custom kinds, which ``Client`` cannot name
(it names kinds by model class), come from an injected ``CustomScaleTargets`` lookup that
serve wires to the served custom resources (``apiserver.crscaletargets``).

Who drives it: ``controllers.horizontal``. Must not import ``apiserver``, ``store``,
``admission``.
"""

from __future__ import annotations

from typing import Protocol

from kubeprio.api.apps import Scale
from kubeprio.client.protocol import Client


class ScaleTarget(Protocol):
    """The ``scale`` subresource of one kind."""

    def get_scale(self, name: str, namespace: str | None) -> Scale:
        """The object's Scale (a ``StatusError`` as the API answers it)."""
        ...

    def update_scale(self, scale: Scale) -> Scale:
        """Write the Scale (named by its metadata); the Scale after the write."""
        ...


class CustomScaleTargets(Protocol):
    """The custom kinds served now, by group and kind."""

    def lookup(self, group: str, kind: str) -> ScaleTarget | None:
        """The scale of the custom kind, or None when no CRD serves it."""
        ...


class ClientScaleTarget:
    """A kind of the static resource table: its scale through the ``Client``."""

    def __init__(self, client: Client, model: type[object]) -> None:
        self.client = client
        self.model = model

    def get_scale(self, name: str, namespace: str | None) -> Scale:
        """``Client.get_scale``."""
        return self.client.get_scale(self.model, name, namespace)

    def update_scale(self, scale: Scale) -> Scale:
        """``Client.update_scale``."""
        return self.client.update_scale(self.model, scale)

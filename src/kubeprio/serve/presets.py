"""``--preset``: PriorityClasses (and tenants) a fresh ``kubeprio serve`` starts with.

Each preset is a manifest shipped beside this module (``presets/<name>.yaml``); every
one also holds the default StorageClass ``standard`` (provisioner ``kubeprio.io/simulated``,
WaitForFirstConsumer, as kind and k3s ship one):

* ``kubernetes`` (seed 001): the documentation's ``high-priority`` example class;
* ``openshift`` (seed 002): ``openshift-user-critical`` and ``cluster-logging``;
* ``kestrel`` (seed 004): the six ``uber-*`` classes, the ``kestrel-web``,
  ``kestrel-research`` and ``platform-monitoring`` namespaces and the ``kestrel``
  Tenant, whose user ``alice`` gets a token (``serve.credentials``).

``apply_preset`` creates the objects that do not exist yet (a restart, or a user who
changed them, keeps what is stored) through the full write path, as an admin would.
``preset_users`` lists the tenant users the preset names. Who drives it: ``serve.server``.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Final

from kubeprio.api import errors, manifest
from kubeprio.api.tenant import Tenant
from kubeprio.apiserver.service import ApiService

PRESETS: Final = ("kubernetes", "openshift", "kestrel")


def preset_objects(name: str) -> list[Any]:
    """The decoded objects of preset ``name``, in file order."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    text = resources.files(__package__).joinpath("presets", f"{name}.yaml").read_text("utf-8")
    return [manifest.decode_document(doc) for doc in manifest.parse_text(text, f"{name}.yaml")]


def preset_users(name: str) -> list[str]:
    """Users the preset's Tenants name (``spec.users``), in order."""
    users: list[str] = []
    for obj in preset_objects(name):
        if isinstance(obj, Tenant) and obj.spec is not None:
            users.extend(u for u in obj.spec.users or () if u not in users)
    return users


def apply_preset(api: ApiService, name: str) -> list[str]:
    """Create the preset's missing objects; return ``kind/name`` of those created."""
    created: list[str] = []
    for obj in preset_objects(name):
        try:
            api.create_object(obj)
        except errors.AlreadyExistsError:
            continue
        created.append(f"{obj.kind}/{obj.metadata.name}")
    return created

"""Writing a Node as upstream's kubelet does: a strategic merge PATCH of ``nodes/status``.

Mirrors ``PatchNodeStatus``/``preparePatchBytesforNodeStatus`` (``pkg/util/node``): the
patch is the two-way strategic merge diff (``api.strategicdiff``) from the Node the
writer read to the Node it wants, with the wanted spec replaced by the read one (a
status write cannot change the spec, and the patch should not pretend to). Metadata
changes stay in it, as upstream's do: the kubelet sets its annotation and default labels
through this same write (``nodeStatusStrategy`` resets only the spec).

Both Nodes carry the resourceVersion that was read, so the patch carries none: the API
server applies it to its latest copy, and a concurrent writer of other fields (the TTL
controller's annotation, ``kubectl label node``) never makes this write conflict, where
a PUT of the whole Node would.

``status.addresses`` is tagged ``patchStrategy: merge`` by mistake upstream (a merge
could keep a stale address); when they changed, the patch lists them whole followed by a
``{"$patch": "replace"}`` element (``fixupPatchForNodeStatusAddresses``).

Driven by the kubelet (``kubelet.registration``, ``Kubelet._resume``,
``kubelet.pressure``). Writes through the ``Client`` it is handed.
"""

from __future__ import annotations

from kubeprio.api.core import Node, NodeStatus
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import to_dict
from kubeprio.api.strategicdiff import create_two_way_strategic_merge_patch
from kubeprio.client.protocol import Client


def node_status_patch(old: Node, new: Node) -> JsonDict:
    """The patch that turns ``old`` into ``new`` (spec excepted), as
    ``preparePatchBytesforNodeStatus`` builds it."""
    old_status = old.status or NodeStatus()
    new_status = new.status or NodeStatus()
    fix_addresses = bool(old_status.addresses) and old_status.addresses != new_status.addresses
    diff_node = evolve(new, spec=old.spec)
    if fix_addresses:
        diff_node = evolve(diff_node, status=evolve(new_status, addresses=old_status.addresses))
    patch = create_two_way_strategic_merge_patch(to_dict(old), to_dict(diff_node), kind="Node")
    if fix_addresses:
        addresses = [to_dict(address) for address in new_status.addresses or ()]
        status_patch = patch.setdefault("status", {})
        status_patch["addresses"] = [*addresses, {"$patch": "replace"}]
    return patch


def patch_node_status(client: Client, old: Node, new: Node) -> Node:
    """``PatchNodeStatus``: send the patch from ``old`` (as read) to ``new`` (as wanted)
    to ``nodes/status``; the Node the server stored."""
    return client.patch(
        Node,
        old.metadata.name or "",
        node_status_patch(old, new),
        patch_type=PatchType.STRATEGIC_MERGE_PATCH,
        subresource="status",
    )

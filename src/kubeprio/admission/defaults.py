"""The default admission chain: which plugins run, in which order.

Composition roots (``cli``, ``sim``) call ``default_chain(listers)`` and hand the chain
to ``apiserver.service.ApiService``. The order matters and is the reason this module
exists (upstream keeps it in ``pkg/kubeapiserver/options/plugins.go``)::

    mutating:   TenantPriorityClass (tenant default class)  ->  Priority (resolve)
    validating: Priority (single globalDefault)  ->  SystemPriorityClass (admins only)
                ->  TenantPriorityClass (allowlist)  ->  ResourceQuota (charges usage)

The tenant's default must be in place before ``Priority`` resolves a class-less pod,
or the global default would win; the allowlist must see the class ``Priority``
resolved (including a global default), so it validates after mutation is over. A
non-admin asking for a system class is told so before being told about its allowlist.
ResourceQuota comes last, as upstream always places it: only an object every other
plugin accepted is charged. ``limited`` is its ``limitedResources`` configuration.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubeprio.admission.chain import AdmissionChain, Listers
from kubeprio.admission.priority import PriorityPlugin
from kubeprio.admission.resourcequota import LimitedResource, ResourceQuotaPlugin
from kubeprio.admission.systemclass import SystemPriorityClassPlugin
from kubeprio.admission.tenant import TenantPriorityClassPlugin


def default_chain(listers: Listers, limited: Sequence[LimitedResource] = ()) -> AdmissionChain:
    """The admission plugins kubeprio runs by default, reading through ``listers``."""
    priority = PriorityPlugin(listers)
    tenant = TenantPriorityClassPlugin(listers)
    system = SystemPriorityClassPlugin()
    quota = ResourceQuotaPlugin(listers, limited)
    return AdmissionChain(mutating=(tenant, priority), validating=(priority, system, tenant, quota))

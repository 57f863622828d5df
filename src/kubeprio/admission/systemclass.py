"""The ``SystemPriorityClass`` admission plugin: the system classes are for admins only.

Seed 000 ("Priority in Kubernetes API", *System Priority Class Names*): "We set default
policies that deny creation of pods with PriorityClassNames corresponding to these
priorities. Cluster admins can authorize users or service accounts to create pods with
these priorities." Current upstream has no such default (it removed the kube-system-only
rule in v1.17 and points to quota ``limitedResources``); kubeprio keeps the seed's
default as a per-user rule, because ``serve`` has real users:

* **validating, pods CREATE; Deployments, ReplicaSets, ReplicationControllers, DaemonSets, StatefulSets, Jobs and CronJobs CREATE/UPDATE** — a pod
  (or a workload's pod template) naming ``system-node-critical`` or
  ``system-cluster-critical`` is refused with 403 unless the request comes from a
  cluster admin (group ``system:masters``) or from inside the server (no user: the
  scheduler, kubelets and controllers, which create a workload's pods once an admin's
  workload was admitted).

The message names the user and the class, in the style of upstream's authorization
refusals: ``pods "x" is forbidden: User "alice" cannot use PriorityClass
"system-node-critical": system priority classes are reserved for cluster administrators``
(``pod template: `` first for workloads). Runs before ``TenantPriorityClass``, so a tenant
user asking for a system class hears about this rule, not about its allowlist.
Subresources and DELETE are ignored. No listers needed; never writes.
"""

from __future__ import annotations

from typing import Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Operation, is_admin
from kubeprio.admission.priority import request_name
from kubeprio.api import errors, kinds
from kubeprio.api.batch import workload_pod_template
from kubeprio.api.core import Pod
from kubeprio.api.scheduling import system_priority_class

PLUGIN_NAME: Final = "SystemPriorityClass"


def _class_name(obj: object) -> tuple[str, str]:
    """(message prefix, class name) of a pod or a workload's pod template."""
    if isinstance(obj, Pod):
        return "", (obj.spec.priority_class_name or "") if obj.spec else ""
    template = workload_pod_template(obj)
    pod_spec = template.spec if template is not None else None
    return "pod template: ", (pod_spec.priority_class_name or "") if pod_spec else ""


class SystemPriorityClassPlugin:
    """Refuses the system PriorityClasses to users outside ``system:masters``."""

    validates_kinds = (Pod, *kinds.WORKLOAD_KINDS)
    ignores_subresources = True

    @property
    def name(self) -> str:
        """``SystemPriorityClass``."""
        return PLUGIN_NAME

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Raise 403 for a non-admin pod or workload using a system class."""
        user = request.user
        if is_admin(user) or request.subresource or request.operation is Operation.DELETE:
            return
        obj = request.obj
        if isinstance(obj, Pod):
            if request.operation is not Operation.CREATE:
                return
        elif not isinstance(obj, kinds.WORKLOAD_KINDS):
            return
        prefix, class_name = _class_name(obj)
        if not class_name or system_priority_class(class_name) is None:
            return
        assert user is not None
        raise errors.forbidden_error(
            request.resource.plural,
            request.resource.group,
            request_name(request),
            f'{prefix}User "{user.name}" cannot use PriorityClass "{class_name}": '
            "system priority classes are reserved for cluster administrators",
        )

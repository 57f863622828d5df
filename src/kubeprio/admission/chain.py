"""The admission chain: ordered mutating plugins, then validating plugins.

``apiserver.service.ApiService`` runs, for every write::

    decode -> default -> chain.mutate -> validation -> chain.validate -> store

and, for every delete (``AdmissionChain.admit_delete``), the plugins that handle DELETE
(upstream's ``Handles(admission.Delete)``: the webhook plugins and
ValidatingAdmissionPolicy) with no new object, the stored one as the old object, and the
request's DeleteOptions (``rest.AdmissionToValidateObjectDeleteFunc``: mutating, then
validating, on the object about to be deleted).

A plugin is a small object with a ``name`` and one method. It either returns the
(possibly replaced) object, or raises ``api.errors.ForbiddenError``/``InvalidError``.
Plugins read other objects only through ``Listers`` (docs/design.md, layer rules) and
report side effects as values in ``AdmissionOutcome``: warnings (sent as ``Warning:``
headers, printed by ``kubeprio check``) and events (recorded by the API service after
the write succeeds). Plugins never write to the store themselves.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.core import Event, Namespace
from kubeprio.api.ingress import IngressClass
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.model import evolve
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.storageclass import StorageClass
from kubeprio.api.tenant import Tenant
from kubeprio.client.informer import Lister
from kubeprio.client.protocol import DeleteRequest
from kubeprio.client.versionedlister import VersionedLister
from kubeprio.frozen import fast_init


class Operation(enum.StrEnum):
    """What the request does."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


MASTERS_GROUP = "system:masters"
"""Upstream's superuser group: authorization lets its members do anything."""


@dataclasses.dataclass(frozen=True, slots=True)
class UserInfo:
    """Who is asking (``kubeprio serve`` authentication); ``None`` in-process means the system."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Upstream's ``user.Info.GetExtra()`` as sorted pairs (set by impersonation)."""


def is_admin(user: UserInfo | None) -> bool:
    """In-process callers (no user: the system's own components) and ``system:masters``."""
    return user is None or MASTERS_GROUP in user.groups


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class AdmissionRequest:
    """One write under admission."""

    operation: Operation
    resource: ResourceInfo
    obj: object | None
    old_obj: object | None
    namespace: str
    name: str
    subresource: str = ""
    user: UserInfo | None = None
    dry_run: bool = False
    delete_options: DeleteRequest | None = None
    """A DELETE's options as the registry sees them (``GetOperationOptions``): what the
    webhook review's ``options`` and CEL's ``request.options`` show."""


@dataclasses.dataclass(slots=True)
class AdmissionOutcome:
    """Side effects collected while admitting: warnings to return, events to record, and
    ResourceQuotas whose status to write once the object is stored (their new usage)."""

    warnings: list[str] = dataclasses.field(default_factory=list)
    events: list[Event] = dataclasses.field(default_factory=list)
    quota_status: list[ResourceQuota] = dataclasses.field(default_factory=list)
    annotations: dict[str, str] = dataclasses.field(default_factory=dict)
    # Admission reinvocation (upstream's ReinvocationContext): a plugin that changed the
    # object in a way earlier plugins may want to see again sets ``reinvoke``; the chain
    # then runs the mutating plugins once more with ``reinvoking`` set. ``plugin_state``
    # keeps what a plugin needs across the two rounds (the webhook plugin's).
    reinvoke: bool = False
    reinvoking: bool = False
    plugin_state: dict[str, object] = dataclasses.field(default_factory=dict)


class Listers(Protocol):
    """The objects admission plugins may read."""

    @property
    def priority_classes(self) -> Lister[PriorityClass]:
        """All PriorityClasses."""
        ...

    @property
    def tenants(self) -> Lister[Tenant]:
        """All Tenants."""
        ...

    @property
    def namespaces(self) -> Lister[Namespace]:
        """All Namespaces."""
        ...

    @property
    def resource_quotas(self) -> Lister[ResourceQuota]:
        """All ResourceQuotas."""
        ...

    @property
    def service_accounts(self) -> Lister[ServiceAccount]:
        """All ServiceAccounts."""
        ...

    @property
    def limit_ranges(self) -> Lister[LimitRange]:
        """All LimitRanges."""
        ...

    @property
    def storage_classes(self) -> Lister[StorageClass]:
        """All StorageClasses."""
        ...

    @property
    def runtime_classes(self) -> Lister[RuntimeClass]:
        """All RuntimeClasses."""
        ...

    @property
    def ingress_classes(self) -> Lister[IngressClass]:
        """All IngressClasses."""
        ...

    # ValidatingAdmissionPolicy: its policies, bindings, and parameters of any kind.
    @property
    def validating_admission_policies(self) -> VersionedLister[ValidatingAdmissionPolicy]:
        """All ValidatingAdmissionPolicies."""
        ...

    @property
    def validating_admission_policy_bindings(self) -> Lister[ValidatingAdmissionPolicyBinding]:
        """All ValidatingAdmissionPolicyBindings."""
        ...

    def of_kind(self, info: ResourceInfo) -> Lister[Any]:
        """The objects of any served kind (a policy's ``paramKind``)."""
        ...


class MutatingPlugin(Protocol):
    """A plugin that may change the object. One whose ``admit`` only ever acts on some
    kinds declares them as a class attribute ``admits_kinds`` (a tuple of model classes,
    the classes its guard tests), and the chain does not call it for the others. One
    whose guards let no subresource request through (upstream's ``if
    a.GetSubresource() != "" { return nil }``) says so with a class attribute
    ``ignores_subresources = True``, and the chain does not call it for a write of
    ``pods/status``, ``pods/binding`` and the like."""

    @property
    def name(self) -> str:
        """The plugin name (upstream name where there is one, e.g. ``Priority``)."""
        ...

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Return the object to continue with (``request.obj`` if unchanged)."""
        ...


class ValidatingPlugin(Protocol):
    """A plugin that may only accept or refuse; ``validates_kinds`` as ``admits_kinds``,
    ``ignores_subresources`` as for a ``MutatingPlugin`` (for both of a plugin's phases)."""

    @property
    def name(self) -> str:
        """The plugin name."""
        ...

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Raise a ``StatusError`` to refuse."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class AdmissionChain:
    """Ordered plugins; mutating run before validation, validating after. ``deleting`` and
    ``delete_validating`` are the plugins of each phase that handle DELETE (their own
    tuples, so a delete no plugin handles costs nothing; ``delete_interest`` rules out, by an
    index look-up, the deletes that no configured webhook or policy names)."""

    mutating: Sequence[MutatingPlugin] = ()
    validating: Sequence[ValidatingPlugin] = ()
    deleting: Sequence[MutatingPlugin] = ()
    delete_validating: Sequence[ValidatingPlugin] = ()
    delete_interest: Callable[[ResourceInfo], bool] | None = None
    """Whether any DELETE plugin could act on a delete of this resource now (its
    configurations name it); ``None``: assume one could. A delete no plugin could act on
    is not admitted at all (``apiserver.deleteadmission``)."""
    _by_model: dict[
        tuple[type, bool], tuple[tuple[MutatingPlugin, ...], tuple[ValidatingPlugin, ...]]
    ] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)
    """Per model class and whether the request is on a subresource, the plugins of each
    phase that may act on it (those that declare no ``admits_kinds``/``validates_kinds``,
    and those whose declaration names the class; on a subresource, not those that declare
    ``ignores_subresources``): a write of an Event or a Lease skips the pod-only plugins,
    and a pod's status write the plugins that only look at pods themselves, without
    calling them."""

    def _plugins_for(
        self, model: type, subresource: str
    ) -> tuple[tuple[MutatingPlugin, ...], tuple[ValidatingPlugin, ...]]:
        key = (model, bool(subresource))
        selected = self._by_model.get(key)
        if selected is None:
            selected = (
                tuple(
                    p
                    for p in self.mutating
                    if _may_act(p, "admits_kinds", model, subresource=key[1])
                ),
                tuple(
                    p
                    for p in self.validating
                    if _may_act(p, "validates_kinds", model, subresource=key[1])
                ),
            )
            self._by_model[key] = selected
        return selected

    def mutate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Run the mutating plugins in order; each sees the previous one's result. When a
        plugin asked for it (``outcome.reinvoke``), run them all once more, as upstream's
        ``reinvoker`` does (warnings said twice are kept once, as upstream's recorder)."""
        obj = self._mutate_once(request, outcome)
        if outcome.reinvoke and not outcome.reinvoking:
            outcome.reinvoking = True
            obj = self._mutate_once(evolve(request, obj=obj), outcome)
            outcome.warnings[:] = list(dict.fromkeys(outcome.warnings))
        return obj

    def _mutate_once(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        obj = request.obj
        for plugin in self._plugins_for(type(obj), request.subresource)[0]:
            if obj is not request.obj:
                request = evolve(request, obj=obj)
            obj = plugin.admit(request, outcome)
        return obj

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Run the validating plugins in order."""
        for plugin in self._plugins_for(type(request.obj), request.subresource)[1]:
            plugin.validate(request, outcome)

    def admit_delete(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Admit a DELETE: the mutating plugins that handle it (they see no object, so
        they can only refuse), then the validating ones; raise a ``StatusError`` to
        refuse."""
        for mutator in self.deleting:
            mutator.admit(request, outcome)
        for validator in self.delete_validating:
            validator.validate(request, outcome)


def _may_act(plugin: object, declaration: str, model: type, *, subresource: bool) -> bool:
    """Whether ``plugin`` may act on objects of ``model`` in the phase whose declaration
    (a class attribute: the model classes its guard lets through) is ``declaration``, on
    a subresource request if ``subresource``."""
    if subresource and getattr(plugin, "ignores_subresources", False):
        return False
    kinds: tuple[type, ...] | None = getattr(plugin, declaration, None)
    return kinds is None or issubclass(model, kinds)

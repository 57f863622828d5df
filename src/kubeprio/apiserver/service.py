"""``ApiService``: the whole API server in-process, without HTTP; a ``client.protocol.Client``.

What it is: the object the simulator, the serve loop and tests hand to the scheduler,
kubelets and controllers directly, and that ``apiserver.http`` exposes over HTTP. It is
assembled from parts, one concept each:

* ``apiserver.servicecore``: the shared state (store, injected clock and ``rng``, from
  which uids and generated names come, admission chain, Service registry) and helpers;
* ``apiserver.servicewrites``: the write path (create, update, patch, delete) in
  upstream's order, so bad input never changes the store;
* ``apiserver.serviceclientwrites``: the ``Client`` write verbs over it (a controller's
  write that waits on a webhook is retried: ``apiserver.controllerwebhooks``);
* ``apiserver.servicereads``: get, list and watch with label and field selectors.

This module adds the bootstrap (default namespaces, system PriorityClasses) and the
subresources with rules of their own: ``<kind>/scale``, ``pods/binding`` and
``pods/eviction`` with PodDisruptionBudget checks (429 when no disruption is allowed).
The rules that need no store access live beside it: ``deletion``, ``binding``,
``eviction``, ``scale``, ``strategy``, ``listing``, ``watch`` and ``patchapply``.

Who drives it: ``kubeprio simulate``/``serve``/``check``, the bench workloads and tests
build one; ``apiserver.rest`` calls it per request.
"""

from __future__ import annotations

import builtins
import random
from typing import Any, cast

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors, kinds, selectors, validation
from kubeprio.api.apps import Scale
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE
from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    Binding,
    Namespace,
    Pod,
)
from kubeprio.api.meta import ObjectMeta, Status
from kubeprio.api.model import evolve
from kubeprio.api.policy import Eviction, PodDisruptionBudget
from kubeprio.api.scheduling import SYSTEM_PRIORITY_CLASSES
from kubeprio.apiserver import binding as binding_rules
from kubeprio.apiserver import eviction as eviction_rules
from kubeprio.apiserver import scale, scaleadmission, storageprecondition
from kubeprio.apiserver.serviceclientwrites import ServiceClientWrites
from kubeprio.apiserver.servicecore import MAX_CONFLICT_RETRIES, WriteResult, stored_revision
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store

DEFAULT_NAMESPACES = ("default", NODE_LEASE_NAMESPACE, "kube-public", "kube-system")


class ApiService(ServiceClientWrites):
    """The API server's logic without HTTP; a ``Client`` for in-process components."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        rng: random.Random,
        admission: AdmissionChain | None = None,
        auto_create_namespaces: bool = False,
        bootstrap: bool = True,
    ) -> None:
        super().__init__(
            store,
            clock=clock,
            rng=rng,
            admission=admission,
            auto_create_namespaces=auto_create_namespaces,
        )
        if bootstrap:
            self.bootstrap()

    # --- bootstrap -------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Create the default namespaces and the system PriorityClasses if missing.

        Upstream: the ``scheduling/bootstrap-system-priority-classes`` post-start hook and
        the system namespaces controller.
        """
        for name in DEFAULT_NAMESPACES:
            self._ensure(Namespace(metadata=ObjectMeta(name=name)))
        for pc in SYSTEM_PRIORITY_CLASSES:
            self._ensure(pc)

    def _ensure(self, obj: Any) -> None:
        info = kinds.for_object(obj)
        key = ObjectKey(info.plural, obj.metadata.namespace or "", obj.metadata.name or "")
        try:
            self.store.get(key)
        except KeyNotFoundError:
            self.create_object(obj)

    # --- subresources ---------------------------------------------------------------------------

    def get_scale(self, kind: type[Any], name: str, namespace: str | None = None) -> Scale:
        """``<kind>/scale``: the workload's autoscaling/v1 ``Scale`` (``apiserver.scale``)."""
        info = kinds.for_model(kind)
        scale.check_scalable(info)
        return scale.scale_of(self.get(kind, name, namespace))

    def update_scale(self, kind: type[Any], new_scale: Scale) -> Scale:
        """PUT ``<kind>/scale`` (the ``Client`` protocol's verb; the HPA's write, retried
        when it waits on an admission webhook: ``apiserver.controllerwebhooks``)."""
        meta = new_scale.metadata
        return self._written(
            lambda: f"scale\0{kind.__name__}\0{meta.namespace}\0{meta.name}",
            lambda: cast(Scale, self.update_scale_object(kind, new_scale).obj),
        )

    def update_scale_object(
        self,
        kind: type[Any],
        new_scale: Scale,
        *,
        user: UserInfo | None = None,
        dry_run: bool = False,
        uid_is_precondition: bool = True,
    ) -> WriteResult:
        """PUT ``<kind>/scale``: ``spec.replicas`` through the workload's update path; the
        result's object is the new ``Scale``. Admission sees Scales with subresource
        ``scale`` (``apiserver.scaleadmission``), not an update of the workload. A PUT's
        Scale uid is a storage precondition on the workload, checked first
        (``scaleUpdatedObjectInfo.Preconditions``); a PATCH's is not
        (``uid_is_precondition=False``)."""
        info = kinds.for_model(kind)
        scale.check_scalable(info)
        name = new_scale.metadata.name or ""
        current = self.get(kind, name, new_scale.metadata.namespace)
        if uid_is_precondition:
            storageprecondition.check(info, current, new_scale.metadata.uid)
        admitted = scaleadmission.admit_scale(
            self.admission, info, new_scale, current, user=user, dry_run=dry_run
        )
        result = self.update_object(
            scale.scaled(current, admitted.scale),
            user=user,
            dry_run=dry_run,
            admitted=admitted,
        )
        return WriteResult(scale.scale_of(result.obj), result.warnings)

    def bind(self, binding: Binding, *, user: UserInfo | None = None) -> None:
        """``pods/binding`` (see ``bind_object``); a controller's bind (the scheduler's)
        that waits on an admission webhook is retried (``apiserver.controllerwebhooks``)."""
        meta = binding.metadata
        target = binding.target.name if binding.target else ""
        self._written(
            lambda: f"bind\0{meta.namespace}\0{meta.name}\0{meta.uid}\0{target}",
            lambda: self.bind_object(binding, user=user),
        )

    def bind_object(self, binding: Binding, *, user: UserInfo | None = None) -> None:
        """``pods/binding``: set ``spec.nodeName`` and the PodScheduled condition.

        Mirrors ``BindingREST.Create``/``setPodNodeAndMetadata``
        (``pkg/registry/core/pod/storage/storage.go``): the Binding is admitted as a
        CREATE of ``pods/binding`` (the create handler's mutating admission, then
        ``ValidatePodBinding``, then ``createValidation``: webhooks and policies naming
        ``pods/binding`` see it); the binding's uid and resourceVersion are
        preconditions; a pod being deleted, already bound, or still gated cannot be
        bound (409 on ``pods/binding``); the binding's annotations are copied onto the
        pod.
        """
        request, outcome = self._pod_subresource_create(binding, "binding", user=user)
        binding = cast(Binding, self.admission.mutate(request, outcome))
        name = binding.metadata.name or ""
        namespace = binding.metadata.namespace or ""
        found = validation.core.validate_binding(binding)
        if found:
            # Upstream returns the bare aggregate, which the handler turns into a 500.
            raise errors.StatusError(
                Status(
                    status="Failure",
                    message=errors.aggregate_message(found),
                    reason="Unknown",
                    code=500,
                )
            )
        if not name:
            # Only the legacy ``bindings`` collection can get here without a pod name;
            # upstream's key function refuses it.
            raise errors.bad_request("Name parameter required.")
        self.admission.validate(evolve(request, obj=binding), outcome)
        node_name = binding.target.name if binding.target else ""
        info = kinds.for_model(Pod)
        key = self._key(info, name, namespace)
        for _attempt in range(MAX_CONFLICT_RETRIES):
            pod: Pod = self._get_key(info, key)
            storageprecondition.check(
                info, pod, binding.metadata.uid, binding.metadata.resource_version
            )
            refusal = binding_rules.binding_refusal(pod)
            if refusal:
                raise errors.conflict("pods/binding", "", name, refusal)
            bound = binding_rules.bind_pod(
                pod, node_name or "", self._now(), binding.metadata.annotations
            )
            try:
                self.store.update(key, bound, expected_revision=stored_revision(pod))
                return
            except RevisionConflictError:
                continue
        raise errors.conflict("pods/binding", "", name)

    @staticmethod
    def _pod_subresource_create(
        obj: Binding | Eviction,
        subresource: str,
        *,
        user: UserInfo | None,
        dry_run: bool = False,
    ) -> tuple[AdmissionRequest, AdmissionOutcome]:
        """The admission of ``obj`` as a CREATE of ``pods/<subresource>`` (the create
        handler's attributes for ``pods/binding`` and ``pods/eviction``)."""
        request = AdmissionRequest(
            Operation.CREATE,
            kinds.for_model(Pod),
            obj,
            None,
            obj.metadata.namespace or "",
            obj.metadata.name or "",
            subresource=subresource,
            user=user,
            dry_run=dry_run,
        )
        return request, AdmissionOutcome()

    def evict(self, eviction: Eviction, *, user: UserInfo | None = None) -> None:
        """``pods/eviction``: delete the pod unless its PodDisruptionBudget forbids it.

        Mirrors ``EvictionREST.Create`` (``pkg/registry/core/pod/storage/eviction.go``):

        * the Eviction is admitted as a CREATE of ``pods/eviction`` (the create handler's
          mutating admission, then ``createValidation``), before the pod is read, so a
          webhook or policy naming ``pods/eviction`` can refuse it;
        * pending, terminal and terminating pods ignore budgets and are deleted;
        * more than one matching budget answers 500 (unsupported);
        * a pod that is not Ready is deleted without touching its budget when the
          budget's ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or when the budget
          is already healthy (``currentHealthy >= desiredHealthy > 0``);
        * otherwise ``checkAndDecrement``: a budget not yet observed answers 429 with
          retryAfterSeconds 10; ``disruptionsAllowed == 0`` answers 429; else
          ``disruptionsAllowed`` is decremented and the pod recorded in
          ``disruptedPods`` before the pod is deleted (gracefully, per its options).

        The pod's delete is not admitted (upstream deletes it with
        ``rest.ValidateAllObjectFunc``): the eviction itself was.
        """
        info = kinds.for_model(Pod)
        request, outcome = self._pod_subresource_create(
            eviction,
            "eviction",
            user=user,
            dry_run=bool(eviction.delete_options and eviction.delete_options.dry_run),
        )
        eviction = cast(Eviction, self.admission.mutate(request, outcome))
        self.admission.validate(evolve(request, obj=eviction), outcome)
        name = eviction.metadata.name or ""
        namespace = eviction.metadata.namespace or ""
        pod: Pod = self._get_key(info, self._key(info, name, namespace))
        options = eviction_rules.delete_request(eviction)
        phase = pod.status.phase if pod.status else None
        if pod.metadata.deletion_timestamp or phase in (
            PHASE_SUCCEEDED,
            PHASE_FAILED,
            PHASE_PENDING,
        ):
            self.delete_object(Pod, name, namespace, options=options, admit=False)
            return
        budgets = self._matching_budgets(pod)
        if len(budgets) > 1:
            raise errors.StatusError(
                Status(
                    status="Failure",
                    message="This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    code=500,
                )
            )
        if budgets and not eviction_rules.can_skip_budget(budgets[0], pod):
            self._consume_budget(budgets[0], pod, dry_run=options.dry_run)
        self.delete_object(Pod, name, namespace, options=options, admit=False)

    def _matching_budgets(self, pod: Pod) -> builtins.list[PodDisruptionBudget]:
        """``getPodDisruptionBudgets``: budgets in the pod's namespace that select it.

        A nil, empty or invalid selector matches nothing.
        """
        pdb_info = kinds.for_model(PodDisruptionBudget)
        items, _ = self.store.list(KeyPrefix(pdb_info.plural, pod.metadata.namespace or ""))
        labels = pod.metadata.labels or {}
        matching: builtins.list[PodDisruptionBudget] = []
        for item in items:
            pdb = cast(PodDisruptionBudget, item)
            try:
                parsed = selectors.label_selector_as_selector(
                    pdb.spec.selector if pdb.spec else None
                )
            except selectors.SelectorError:
                continue
            if not parsed.is_empty() and parsed.matches(labels):
                matching.append(pdb)
        return matching

    def _consume_budget(self, pdb: PodDisruptionBudget, pod: Pod, *, dry_run: bool) -> None:
        """``checkAndDecrement``: take one disruption from the budget or refuse (429)."""
        new_status = eviction_rules.check_and_decrement(
            pdb, pod.metadata.name or "", self._now(), dry_run=dry_run
        )
        if new_status is None:
            return
        pdb_info = kinds.for_model(PodDisruptionBudget)
        pdb_name = pdb.metadata.name or ""
        key = self._key(pdb_info, pdb_name, pdb.metadata.namespace)
        try:
            self.store.update(
                key, evolve(pdb, status=new_status), expected_revision=stored_revision(pdb)
            )
        except RevisionConflictError:
            raise errors.conflict(pdb_info.plural, pdb_info.group, pdb_name) from None

"""The admission chain: which plugins run, in which order.

Composition roots (``cli``, ``sim``, ``serve``) call ``default_chain(listers)`` and hand
the chain to ``apiserver.service.ApiService``; ``enabled`` (from
``--enable-admission-plugins`` / ``--disable-admission-plugins``, ``admission.plugins``)
says which plugins are on. Whatever is on runs in ``plugins.ALL_ORDERED_PLUGINS`` order
(upstream's ``AllOrderedPlugins`` in ``pkg/kubeapiserver/options/plugins.go``); with every
plugin on::

    mutating:   LimitRanger (container defaults)  ->  ServiceAccount (serve only)
                ->  TenantPriorityClass (tenant default class)  ->  Priority (resolve)
                ->  DefaultTolerationSeconds (300 s not-ready/unreachable tolerations)
                ->  DefaultStorageClass (a class-less claim gets the default class)
                ->  StorageObjectInUseProtection (pvc-/pv-protection finalizers)
                ->  RuntimeClass (overhead, node selector, tolerations)
                ->  DefaultIngressClass (a class-less Ingress gets the default class)
    validating: LimitRanger (min/max/ratio)  ->  ServiceAccount (serve only)
                ->  SystemPriorityClass (admins only)  ->  TenantPriorityClass (allowlist)
                ->  Priority (single globalDefault)  ->  RuntimeClass (overhead matches)
                ->  CertificateApproval, CertificateSigning (serve only: the signer
                    verbs) ->  CertificateSubjectRestriction (no system:masters CSRs)
                ->  ValidatingAdmissionPolicy (CEL policies)  ->  ResourceQuota (charges usage)

A DELETE runs only the plugins ``plugins.HANDLES_DELETE`` names (the two webhook plugins
and ValidatingAdmissionPolicy), in the same order (``AdmissionChain.admit_delete``).

(``Priority`` validates PriorityClasses only, the two before it pods and workloads only,
so their relative order in the validating phase changes no outcome.)

``LimitRanger`` comes first, as upstream places it (right after the namespace checks, which
``ApiService`` makes before the chain), so every later plugin sees a pod with its
LimitRange defaults, and ResourceQuota charges (and asks for) the defaulted requests and
limits. It is in kube-apiserver's default plugin set, so every composition root runs it
unless told otherwise.

``ServiceAccount`` comes before ``Priority``, as upstream orders them, so a pod that names
a missing account hears about that before anything about its class. The tenant's default
must be in place before ``Priority`` resolves a class-less pod, or the global default
would win; the allowlist must see the class ``Priority`` resolved (including a global
default), so it validates after mutation is over. A non-admin asking for a system class
is told so before being told about its allowlist. ResourceQuota comes last, as upstream
always places it: only an object every other plugin accepted is charged. ``limited`` is its
``limitedResources`` configuration.

The two webhook plugins (``MutatingAdmissionWebhook`` last of the mutating phase,
``ValidatingAdmissionWebhook`` right before ``ResourceQuota``) run only when the caller
hands in ``webhooks``: ``kubeprio serve`` does, with an HTTPS client; ``simulate`` and
``check`` run in virtual time (or none) and call no one (docs/admission.md).

``ServiceAccount`` runs only when the caller hands in ``service_account_rng``, the seeded
generator of its volume names: ``kubeprio serve`` does, next to the service account
controller that gives every namespace its ``default`` account. ``kubeprio simulate`` and
``kubeprio check`` run no such controller and load snapshots whose pods already carry
their accounts and token volumes, so they leave it out (docs/admission.md).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from kubeprio.admission import plugins
from kubeprio.admission.certificates import (
    CertificateApprovalPlugin,
    CertificateSigningPlugin,
    CertificateSubjectRestrictionPlugin,
    SignerAuthorizer,
)
from kubeprio.admission.chain import AdmissionChain, Listers, MutatingPlugin, ValidatingPlugin
from kubeprio.admission.defaulttolerationseconds import (
    DefaultTolerations,
    DefaultTolerationSecondsPlugin,
)
from kubeprio.admission.ingressclass import DefaultIngressClassPlugin
from kubeprio.admission.limitranger import LimitRangerPlugin
from kubeprio.admission.plugins import EnabledPlugins
from kubeprio.admission.policyauthorizer import PolicyAuthorizer
from kubeprio.admission.priority import PriorityPlugin
from kubeprio.admission.resourcequota import LimitedResource, ResourceQuotaPlugin
from kubeprio.admission.runtimeclass import RuntimeClassPlugin
from kubeprio.admission.serviceaccount import ServiceAccountPlugin
from kubeprio.admission.storage import DefaultStorageClassPlugin, StorageObjectInUseProtectionPlugin
from kubeprio.admission.systemclass import SystemPriorityClassPlugin
from kubeprio.admission.tenant import TenantPriorityClassPlugin
from kubeprio.admission.validatingpolicy import ValidatingAdmissionPolicyPlugin
from kubeprio.admission.webhookcall import WebhookClient
from kubeprio.admission.webhookdispatch import (
    MutatingWebhookPlugin,
    ValidatingWebhookPlugin,
    WebhookListers,
)


@dataclasses.dataclass(frozen=True, slots=True)
class WebhookSetup:
    """What the webhook plugins need: their listers and a client that calls out."""

    listers: WebhookListers
    client: WebhookClient


def default_chain(
    listers: Listers,
    limited: Sequence[LimitedResource] = (),
    *,
    service_account_rng: random.Random | None = None,
    enabled: EnabledPlugins = plugins.DEFAULT,
    default_tolerations: DefaultTolerations | None = None,
    authorize_signer: SignerAuthorizer | None = None,
    webhooks: WebhookSetup | None = None,
    authorize_policy: PolicyAuthorizer | None = None,
) -> AdmissionChain:
    """The admission plugins ``enabled`` names that kubeprio implements, reading through
    ``listers``, in ``plugins.ALL_ORDERED_PLUGINS`` order (the default: every plugin on by
    default; ``ServiceAccount`` only with ``service_account_rng``); ``default_tolerations``
    are DefaultTolerationSeconds' two flags; ``authorize_signer`` (serve's authorizer)
    turns on CertificateApproval and CertificateSigning; ``webhooks`` (``serve`` only)
    builds the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins;
    ``authorize_policy`` (serve's authorizer) answers the ``authorizer`` checks of
    policies and of webhooks' ``matchConditions``."""
    ranger = LimitRangerPlugin(listers)
    tenant = TenantPriorityClassPlugin(listers)
    priority = PriorityPlugin(listers)
    quota = ResourceQuotaPlugin(listers, limited)
    # name -> (mutating, validating): which phases each plugin takes part in.
    built: dict[str, tuple[MutatingPlugin | None, ValidatingPlugin | None]] = {
        ranger.name: (ranger, ranger),
        tenant.name: (tenant, tenant),
        priority.name: (priority, priority),
        quota.name: (None, quota),
    }
    system = SystemPriorityClassPlugin()
    built[system.name] = (None, system)
    tolerations = DefaultTolerationSecondsPlugin(default_tolerations)
    built[tolerations.name] = (tolerations, None)
    default_class = DefaultStorageClassPlugin(listers)
    built[default_class.name] = (default_class, None)
    protection = StorageObjectInUseProtectionPlugin()
    built[protection.name] = (protection, None)
    runtime = RuntimeClassPlugin(listers)
    built[runtime.name] = (runtime, runtime)
    ingress_class = DefaultIngressClassPlugin(listers)
    built[ingress_class.name] = (ingress_class, None)
    restriction = CertificateSubjectRestrictionPlugin()
    built[restriction.name] = (None, restriction)
    if authorize_signer is not None:
        for check in (
            CertificateApprovalPlugin(authorize_signer),
            CertificateSigningPlugin(authorize_signer),
        ):
            built[check.name] = (None, check)
    if webhooks is not None:
        mutating_webhooks = MutatingWebhookPlugin(
            webhooks.listers, webhooks.client, authorize_policy
        )
        built[mutating_webhooks.name] = (mutating_webhooks, None)
        validating_webhooks = ValidatingWebhookPlugin(
            webhooks.listers, webhooks.client, authorize_policy
        )
        built[validating_webhooks.name] = (None, validating_webhooks)
    policies = ValidatingAdmissionPolicyPlugin(listers, authorize_policy)
    built[policies.name] = (None, policies)
    if service_account_rng is not None:
        accounts = ServiceAccountPlugin(
            listers,
            rng=service_account_rng,
            namespace_auto_provision=plugins.NAMESPACE_AUTO_PROVISION in enabled,
        )
        built[accounts.name] = (accounts, accounts)
    mutating: list[MutatingPlugin] = []
    validating: list[ValidatingPlugin] = []
    deleting: list[MutatingPlugin] = []
    delete_validating: list[ValidatingPlugin] = []
    for name in enabled.names:
        mutator, validator = built.get(name, (None, None))
        handles_delete = name in plugins.HANDLES_DELETE
        if mutator is not None:
            mutating.append(mutator)
            if handles_delete:
                deleting.append(mutator)
        if validator is not None:
            validating.append(validator)
            if handles_delete:
                delete_validating.append(validator)
    return AdmissionChain(
        mutating=tuple(mutating),
        validating=tuple(validating),
        deleting=tuple(deleting),
        delete_validating=tuple(delete_validating),
    )

"""Admission plugin names: the recommended order, the default set, and which ones run.

What it is: kube-apiserver's plugin table (v1.32) with kubeprio's two plugins added, and
the resolution of ``--enable-admission-plugins`` / ``--disable-admission-plugins``
(upstream's ``AdmissionOptions.Validate`` and ``enabledPluginNames`` in
``staging/src/k8s.io/apiserver/pkg/server/options/admission.go``, fed by
``AllOrderedPlugins`` and ``DefaultOffAdmissionPlugins`` of
``pkg/kubeapiserver/options/plugins.go``):

* the default set is every plugin but the default-off ones;
* ``enable`` adds to it, ``disable`` removes from it;
* the enabled plugins always run in ``ALL_ORDERED_PLUGINS`` order, whatever the order of
  the flags (mutating ones first, then validating ones, each phase in that order);
* an unknown name, or a name in both lists, is an error with upstream's text.

kubeprio's own plugins, ``SystemPriorityClass`` and ``TenantPriorityClass``, sit right
before ``Priority``: the tenant's default class must be on a pod before ``Priority``
resolves it, and the allowlist (validating) runs after every mutation anyway. Both are on
by default. Upstream plugins kubeprio has no code for (``PodSecurity``,
PersistentVolumeClaimResize...) are accepted by name, as upstream accepts them, and do nothing
(``NOT_IMPLEMENTED``; the command line says so when a user names one).

Who uses it: ``admission.defaults.default_chain`` (which plugin objects to build) and the
composition roots' flags (``cli.admissionflags``). Pure data and functions: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Final

from kubeprio.admission import (
    certificates,
    defaulttolerationseconds,
    ingressclass,
    limitranger,
    priority,
    resourcequota,
    runtimeclass,
    serviceaccount,
    storage,
    systemclass,
    validatingpolicy,
)
from kubeprio.admission import tenant as tenantplugin
from kubeprio.api.errors import aggregate_text
from kubeprio.api.gotext import go_quote
from kubeprio.errors import KubeprioError

NAMESPACE_AUTO_PROVISION: Final = "NamespaceAutoProvision"
NAMESPACE_LIFECYCLE: Final = "NamespaceLifecycle"
NAMESPACE_EXISTS: Final = "NamespaceExists"
ALWAYS_ADMIT: Final = "AlwaysAdmit"
MUTATING_ADMISSION_WEBHOOK: Final = "MutatingAdmissionWebhook"
VALIDATING_ADMISSION_WEBHOOK: Final = "ValidatingAdmissionWebhook"

ALL_ORDERED_PLUGINS: Final[tuple[str, ...]] = (
    ALWAYS_ADMIT,
    NAMESPACE_AUTO_PROVISION,
    NAMESPACE_LIFECYCLE,
    NAMESPACE_EXISTS,
    "LimitPodHardAntiAffinityTopology",
    limitranger.PLUGIN_NAME,  # LimitRanger
    serviceaccount.PLUGIN_NAME,  # ServiceAccount
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    systemclass.PLUGIN_NAME,  # SystemPriorityClass (kubeprio's own)
    tenantplugin.PLUGIN_NAME,  # TenantPriorityClass (kubeprio's own)
    priority.PLUGIN_NAME,  # Priority
    defaulttolerationseconds.PLUGIN_NAME,  # DefaultTolerationSeconds
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    storage.DEFAULT_STORAGE_CLASS,  # DefaultStorageClass
    storage.STORAGE_OBJECT_IN_USE_PROTECTION,  # StorageObjectInUseProtection
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    runtimeclass.PLUGIN_NAME,  # RuntimeClass
    certificates.APPROVAL,  # CertificateApproval
    certificates.SIGNING,  # CertificateSigning
    "ClusterTrustBundleAttest",
    certificates.SUBJECT_RESTRICTION,  # CertificateSubjectRestriction
    ingressclass.PLUGIN_NAME,  # DefaultIngressClass
    "DenyServiceExternalIPs",
    # Upstream: "webhook, resourcequota, and deny plugins must go at the end".
    "MutatingAdmissionPolicy",
    MUTATING_ADMISSION_WEBHOOK,
    validatingpolicy.PLUGIN_NAME,  # ValidatingAdmissionPolicy
    VALIDATING_ADMISSION_WEBHOOK,
    resourcequota.PLUGIN_NAME,  # ResourceQuota
    "AlwaysDeny",
)
"""Every plugin name, in the order enabled plugins run (upstream's ``AllOrderedPlugins``
of v1.32, with kubeprio's two before ``Priority``)."""

KUBEPRIO_PLUGINS: Final = frozenset({systemclass.PLUGIN_NAME, tenantplugin.PLUGIN_NAME})
"""The plugins that are kubeprio's own (docs/admission.md); on by default."""

DEFAULT_ON: Final = frozenset(
    {
        NAMESPACE_LIFECYCLE,
        limitranger.PLUGIN_NAME,
        serviceaccount.PLUGIN_NAME,
        "DefaultStorageClass",
        "PersistentVolumeClaimResize",
        defaulttolerationseconds.PLUGIN_NAME,
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        resourcequota.PLUGIN_NAME,
        "StorageObjectInUseProtection",
        priority.PLUGIN_NAME,
        "TaintNodesByCondition",
        runtimeclass.PLUGIN_NAME,
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodSecurity",
        "MutatingAdmissionPolicy",
        "ValidatingAdmissionPolicy",
        *KUBEPRIO_PLUGINS,
    }
)
"""The plugins on without flags (upstream's ``defaultOnPlugins``, plus kubeprio's own)."""

DEFAULT_OFF: Final = frozenset(ALL_ORDERED_PLUGINS) - DEFAULT_ON
"""Upstream's ``DefaultOffAdmissionPlugins()``: every plugin not on by default."""

IMPLEMENTED: Final = frozenset(
    {
        # Plugins of the admission chain (admission.defaults).
        limitranger.PLUGIN_NAME,
        serviceaccount.PLUGIN_NAME,
        systemclass.PLUGIN_NAME,
        tenantplugin.PLUGIN_NAME,
        priority.PLUGIN_NAME,
        defaulttolerationseconds.PLUGIN_NAME,
        storage.DEFAULT_STORAGE_CLASS,
        storage.STORAGE_OBJECT_IN_USE_PROTECTION,
        runtimeclass.PLUGIN_NAME,
        certificates.APPROVAL,
        certificates.SIGNING,
        certificates.SUBJECT_RESTRICTION,
        ingressclass.PLUGIN_NAME,
        validatingpolicy.PLUGIN_NAME,
        resourcequota.PLUGIN_NAME,
        # The webhook plugins (admission.webhookdispatch; serve only).
        MUTATING_ADMISSION_WEBHOOK,
        VALIDATING_ADMISSION_WEBHOOK,
        # Checks the API service makes before the chain (namespace must exist, not be
        # terminating), and its create-the-namespace-on-first-use switch.
        NAMESPACE_LIFECYCLE,
        NAMESPACE_EXISTS,
        NAMESPACE_AUTO_PROVISION,
        # Admits everything: nothing to do.
        ALWAYS_ADMIT,
    }
)
"""The plugins kubeprio has code for."""

NOT_IMPLEMENTED: Final = frozenset(ALL_ORDERED_PLUGINS) - IMPLEMENTED
"""Accepted by name (as upstream registers them), without effect in kubeprio."""

HANDLES_DELETE: Final = frozenset(
    {MUTATING_ADMISSION_WEBHOOK, VALIDATING_ADMISSION_WEBHOOK, validatingpolicy.PLUGIN_NAME}
)
"""The implemented plugins that take part in a DELETE (upstream's ``Handles(admission.Delete)``
among them; ``NamespaceLifecycle``'s delete rules are the API service's own checks). The
others are built for CREATE and UPDATE only (``admission.NewHandler(Create, Update)``)."""

ALWAYS_ON: Final = frozenset({NAMESPACE_LIFECYCLE})
"""Built into the API service: disabling it is accepted and changes nothing."""


class AdmissionPluginsError(KubeprioError, ValueError):
    """Bad ``--enable-admission-plugins`` / ``--disable-admission-plugins`` values; the
    message is upstream's (several problems joined as ``utilerrors.NewAggregate``)."""


def registered() -> list[str]:
    """Every plugin name, sorted (upstream's ``Plugins.Registered()``)."""
    return sorted(ALL_ORDERED_PLUGINS)


def default_enabled() -> list[str]:
    """The default set in run order (upstream's ``defaultEnabledPluginNames``)."""
    return [name for name in ALL_ORDERED_PLUGINS if name not in DEFAULT_OFF]


@dataclasses.dataclass(frozen=True, slots=True)
class EnabledPlugins:
    """The plugins that are on, in run order."""

    names: tuple[str, ...]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def running(self) -> tuple[str, ...]:
        """What kubeprio runs of them, in order, ``ALWAYS_ON`` included (what ``serve``
        prints at start; ``AlwaysAdmit`` does nothing and is left out)."""
        return tuple(
            name
            for name in ALL_ORDERED_PLUGINS
            if name in ALWAYS_ON
            or (name in self.names and name in IMPLEMENTED and name != ALWAYS_ADMIT)
        )


def resolve(enable: Sequence[str] = (), disable: Sequence[str] = ()) -> EnabledPlugins:
    """The enabled plugins for these flag values; ``AdmissionPluginsError`` when a name is
    unknown or in both lists (upstream's ``Validate``, then ``enabledPluginNames``)."""
    problems = [
        f"{flag} plugin {go_quote(name)} is unknown"
        for flag, names in (
            ("enable-admission-plugins", enable),
            ("disable-admission-plugins", disable),
        )
        for name in names
        if name not in ALL_ORDERED_PLUGINS
    ]
    both = sorted(set(enable) & set(disable))
    if both:
        # Go's %v of a []string: [a b].
        problems.append(
            f"[{' '.join(both)}] in enable-admission-plugins and disable-admission-plugins "
            "overlapped"
        )
    if problems:
        raise AdmissionPluginsError(aggregate_text(problems))
    off = (DEFAULT_OFF | set(disable)) - set(enable)
    return EnabledPlugins(tuple(name for name in ALL_ORDERED_PLUGINS if name not in off))


DEFAULT: Final = resolve()
"""The plugins on without flags."""


def ordered(names: Iterable[str]) -> list[str]:
    """``names`` in run order (for messages)."""
    wanted = set(names)
    return [name for name in ALL_ORDERED_PLUGINS if name in wanted]

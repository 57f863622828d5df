"""``--enable-admission-plugins`` / ``--disable-admission-plugins``: which plugins are on.

Upstream (v1.32): ``AllOrderedPlugins`` and ``DefaultOffAdmissionPlugins`` in
``pkg/kubeapiserver/options/plugins.go``; ``AdmissionOptions.Validate`` and
``enabledPluginNames`` in ``staging/src/k8s.io/apiserver/pkg/server/options/admission.go``
(its ``admission_test.go`` checks the same cases: enable adds, disable removes, the order is
the recommended one). The expected lists are kube-apiserver v1.32's ``--help`` texts, with
kubeprio's SystemPriorityClass and TenantPriorityClass before Priority.
"""

from __future__ import annotations

import pytest

from kubeprio.admission import plugins
from kubeprio.admission.defaults import default_chain
from tests.builders import stored_listers


def _names(help_text: str) -> list[str]:
    return help_text.split(", ")


# kube-apiserver v1.32 `--help`: "Comma-delimited list of admission plugins: ..."
UPSTREAM_REGISTERED = _names(
    "AlwaysAdmit, AlwaysDeny, AlwaysPullImages, CertificateApproval, CertificateSigning, "
    "CertificateSubjectRestriction, ClusterTrustBundleAttest, DefaultIngressClass, "
    "DefaultStorageClass, DefaultTolerationSeconds, DenyServiceExternalIPs, EventRateLimit, "
    "ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, "
    "LimitRanger, MutatingAdmissionPolicy, MutatingAdmissionWebhook, NamespaceAutoProvision, "
    "NamespaceExists, NamespaceLifecycle, NodeRestriction, OwnerReferencesPermissionEnforcement, "
    "PersistentVolumeClaimResize, PodNodeSelector, PodSecurity, PodTolerationRestriction, "
    "Priority, ResourceQuota, RuntimeClass, ServiceAccount, StorageObjectInUseProtection, "
    "TaintNodesByCondition, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook"
)

# kube-apiserver v1.32 `--help`: "... in addition to default enabled ones (...)", in order.
UPSTREAM_DEFAULT_ON = _names(
    "NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, "
    "Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, "
    "PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, CertificateSigning, "
    "ClusterTrustBundleAttest, CertificateSubjectRestriction, DefaultIngressClass, "
    "MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, "
    "ValidatingAdmissionWebhook, ResourceQuota"
)

OWN = ["SystemPriorityClass", "TenantPriorityClass"]


def test_the_registered_names_are_upstreams_and_kubeprios_own():
    assert plugins.registered() == sorted([*UPSTREAM_REGISTERED, *OWN])
    assert len(plugins.ALL_ORDERED_PLUGINS) == len(set(plugins.ALL_ORDERED_PLUGINS)) == 37


def test_the_default_set_is_upstreams_in_order_with_kubeprios_own_before_priority():
    expected = list(UPSTREAM_DEFAULT_ON)
    expected[expected.index("Priority") : expected.index("Priority")] = OWN
    assert plugins.default_enabled() == expected
    assert list(plugins.DEFAULT.names) == expected


def test_webhooks_quota_and_deny_come_last():
    # plugins.go: "webhook, resourcequota, and deny plugins must go at the end".
    assert plugins.ALL_ORDERED_PLUGINS[-6:] == (
        "MutatingAdmissionPolicy",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
        "AlwaysDeny",
    )


def _without(*names: str) -> list[str]:
    return [name for name in plugins.DEFAULT.names if name not in names]


def _with(*names: str) -> list[str]:
    wanted = {*plugins.DEFAULT.names, *names}
    return [name for name in plugins.ALL_ORDERED_PLUGINS if name in wanted]


@pytest.mark.parametrize(
    ("enable", "disable", "expected"),
    [
        ([], [], _without()),
        (["AlwaysPullImages"], [], _with("AlwaysPullImages")),
        # The flag order is not the run order.
        (["AlwaysDeny", "NamespaceAutoProvision"], [], _with("NamespaceAutoProvision", "AlwaysDeny")),
        (["NamespaceAutoProvision", "AlwaysDeny"], [], _with("NamespaceAutoProvision", "AlwaysDeny")),
        (["Priority"], [], _without()),  # already on
        ([], ["Priority"], _without("Priority")),
        ([], ["ResourceQuota", "LimitRanger"], _without("LimitRanger", "ResourceQuota")),
        ([], ["TenantPriorityClass"], _without("TenantPriorityClass")),
        ([], ["AlwaysPullImages"], _without()),  # already off
        (["NamespaceExists"], ["PodSecurity"], [n for n in _with("NamespaceExists") if n != "PodSecurity"]),
        (["Priority", "Priority"], [], _without()),
    ],
    ids=[
        "defaults", "enable-adds", "enable-order-1", "enable-order-2", "enable-default-on",
        "disable-removes", "disable-two", "disable-own", "disable-default-off", "both-flags",
        "repeated",
    ],
)  # fmt: skip
def test_resolution(enable, disable, expected):
    assert list(plugins.resolve(enable, disable).names) == expected


@pytest.mark.parametrize(
    ("enable", "disable", "message"),
    [
        (["Foo"], [], 'enable-admission-plugins plugin "Foo" is unknown'),
        ([], ["priority"], 'disable-admission-plugins plugin "priority" is unknown'),
        ([" Priority"], [], 'enable-admission-plugins plugin " Priority" is unknown'),
        ([""], [], 'enable-admission-plugins plugin "" is unknown'),
        (
            ["Priority"],
            ["Priority"],
            "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
        ),
        (
            ["ResourceQuota", "LimitRanger"],
            ["LimitRanger", "ResourceQuota"],
            "[LimitRanger ResourceQuota] in enable-admission-plugins and "
            "disable-admission-plugins overlapped",
        ),
        (
            ["Foo", "Bar"],
            [],
            '[enable-admission-plugins plugin "Foo" is unknown, '
            'enable-admission-plugins plugin "Bar" is unknown]',
        ),
        (["Foo", "Foo"], [], 'enable-admission-plugins plugin "Foo" is unknown'),
        (
            ["Foo"],
            ["Foo"],
            '[enable-admission-plugins plugin "Foo" is unknown, disable-admission-plugins '
            'plugin "Foo" is unknown, [Foo] in enable-admission-plugins and '
            "disable-admission-plugins overlapped]",
        ),
    ],
    ids=[
        "unknown-enable", "unknown-disable-case", "leading-space", "empty", "overlap",
        "overlap-sorted", "two-unknown", "same-unknown-once", "unknown-and-overlap",
    ],
)  # fmt: skip
def test_errors_have_upstreams_text(enable, disable, message):
    """Validate's texts, joined as utilerrors.NewAggregate joins them (a repeated message
    once); the overlap lists names sorted, as Go's %v of sets.String.List()."""
    with pytest.raises(plugins.AdmissionPluginsError) as raised:
        plugins.resolve(enable, disable)
    assert str(raised.value) == message


STORAGE = ["DefaultStorageClass", "StorageObjectInUseProtection"]
"""The two storage plugins (mutating only), after DefaultTolerationSeconds upstream;
RuntimeClass and then DefaultIngressClass follow them (``AllOrderedPlugins``)."""


def _chain_names(enabled: plugins.EnabledPlugins) -> tuple[list[str], list[str]]:
    _store, listers = stored_listers()
    chain = default_chain(listers, enabled=enabled)
    return [p.name for p in chain.mutating], [p.name for p in chain.validating]


@pytest.mark.parametrize(
    ("disable", "mutating", "validating"),
    [
        (
            [],
            ["LimitRanger", "TenantPriorityClass", "Priority", "DefaultTolerationSeconds", *STORAGE, "RuntimeClass", "DefaultIngressClass"],
            ["LimitRanger", "SystemPriorityClass", "TenantPriorityClass", "Priority", "RuntimeClass", "CertificateSubjectRestriction", "ValidatingAdmissionPolicy", "ResourceQuota"],
        ),
        (
            ["Priority"],
            ["LimitRanger", "TenantPriorityClass", "DefaultTolerationSeconds", *STORAGE, "RuntimeClass", "DefaultIngressClass"],
            ["LimitRanger", "SystemPriorityClass", "TenantPriorityClass", "RuntimeClass", "CertificateSubjectRestriction", "ValidatingAdmissionPolicy", "ResourceQuota"],
        ),
        (
            ["ResourceQuota", "LimitRanger", "SystemPriorityClass", "DefaultTolerationSeconds", "RuntimeClass", "CertificateSubjectRestriction", "ValidatingAdmissionPolicy"],
            ["TenantPriorityClass", "Priority", *STORAGE, "DefaultIngressClass"],
            ["TenantPriorityClass", "Priority"],
        ),
        (
            ["TenantPriorityClass", "PodSecurity", "MutatingAdmissionWebhook"],
            ["LimitRanger", "Priority", "DefaultTolerationSeconds", *STORAGE, "RuntimeClass", "DefaultIngressClass"],
            ["LimitRanger", "SystemPriorityClass", "Priority", "RuntimeClass", "CertificateSubjectRestriction", "ValidatingAdmissionPolicy", "ResourceQuota"],
        ),
    ],
    ids=["defaults", "no-priority", "three-off", "own-and-unimplemented-off"],
)  # fmt: skip
def test_the_chain_holds_the_enabled_plugins_kubeprio_implements(disable, mutating, validating):
    assert _chain_names(plugins.resolve(disable=disable)) == (mutating, validating)


def test_the_chain_order_does_not_depend_on_the_flag_order():
    one = _chain_names(
        plugins.resolve(["AlwaysAdmit", "NamespaceExists"], ["Priority", "ResourceQuota"])
    )
    two = _chain_names(
        plugins.resolve(["NamespaceExists", "AlwaysAdmit"], ["ResourceQuota", "Priority"])
    )
    assert one == two


def test_running_lists_what_kubeprio_runs_namespace_lifecycle_always():
    assert plugins.DEFAULT.running() == (
        "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "SystemPriorityClass",
        "TenantPriorityClass", "Priority", "DefaultTolerationSeconds", "DefaultStorageClass",
        "StorageObjectInUseProtection", "RuntimeClass", "CertificateApproval",
        "CertificateSigning", "CertificateSubjectRestriction",
        "DefaultIngressClass", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook", "ResourceQuota",
    )  # fmt: skip
    enabled = plugins.resolve(
        ["NamespaceAutoProvision", "AlwaysPullImages"], ["NamespaceLifecycle", "Priority"]
    )
    assert enabled.running() == (
        "NamespaceAutoProvision", "NamespaceLifecycle", "LimitRanger", "ServiceAccount",
        "SystemPriorityClass", "TenantPriorityClass", "DefaultTolerationSeconds",
        "DefaultStorageClass", "StorageObjectInUseProtection", "RuntimeClass",
        "CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
        "DefaultIngressClass", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook", "ResourceQuota",
    )  # fmt: skip


def test_every_name_is_implemented_or_not():
    assert set(plugins.ALL_ORDERED_PLUGINS) == plugins.IMPLEMENTED | plugins.NOT_IMPLEMENTED
    assert {
        "PodSecurity",
        "MutatingAdmissionPolicy",
        "PersistentVolumeClaimResize",
        "AlwaysDeny",
    } <= (plugins.NOT_IMPLEMENTED)
    assert {"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"} <= plugins.IMPLEMENTED


def test_the_webhook_plugins_sit_where_upstream_orders_them():
    """``AllOrderedPlugins``: MutatingAdmissionWebhook after every built-in mutating
    plugin, ValidatingAdmissionWebhook right before ResourceQuota. They are only built
    when a webhook client is handed in (serve)."""
    from kubeprio.admission.defaults import WebhookSetup
    from kubeprio.admission.webhookcall import WebhookClient
    from kubeprio.serve.webhookclient import HttpsWebhookCaller

    _store, listers = stored_listers()
    client = WebhookClient(HttpsWebhookCaller(), listers.services, listers.endpoints)
    chain = default_chain(listers, webhooks=WebhookSetup(listers, client))
    mutating = [p.name for p in chain.mutating]
    validating = [p.name for p in chain.validating]
    assert mutating[-1] == "MutatingAdmissionWebhook"
    assert validating[-2:] == ["ValidatingAdmissionWebhook", "ResourceQuota"]
    disabled = plugins.resolve(disable=["MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"])
    chain = default_chain(listers, enabled=disabled, webhooks=WebhookSetup(listers, client))
    assert "MutatingAdmissionWebhook" not in [p.name for p in chain.mutating]
    assert "ValidatingAdmissionWebhook" not in [p.name for p in chain.validating]

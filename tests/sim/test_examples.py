"""Golden reports of the examples in ``examples/`` (issue 4, "Examples"), and their outcomes.

Each example runs through ``kubeprio.sim.simulate.simulate`` with ``GOLDEN_SEED`` and its
JSON report must equal ``tests/sim/expected/<example>.json`` byte for byte. The goldens
change only through the regeneration command, and the change is reviewed as a diff:

    .venv/bin/python -m tests.sim.regenerate [EXAMPLE...]
    git diff tests/sim/expected

A golden file says *what* happened; the tests below say *why* it must happen: each one
asserts the outcome an example's README promises (who preempts whom, who stays Pending
with which upstream message) and names the upstream rule behind it. Outcomes are
checked for several seeds: they follow from the rules, not from a lucky tie-break.
"""

from __future__ import annotations

import copy
import dataclasses
import io
from collections.abc import Iterable
from contextlib import redirect_stdout
from typing import Any

import pytest

from kubeprio.api.manifest import Document
from kubeprio.cli import main
from tests.sim.examples import (
    EXAMPLES,
    EXAMPLES_DIR,
    GOLDEN_SEED,
    golden_path,
    golden_text,
    run,
)

SEEDS = [0, 1, 2]

Report = dict[str, Any]
Pod = dict[str, Any]

# --- reading a report -------------------------------------------------------------------------


def pod(report: Report, namespace: str, name: str) -> Pod:
    """The pod ``namespace/name`` (it must exist, once)."""
    found = [p for p in report["pods"] if (p["namespace"], p["name"]) == (namespace, name)]
    assert len(found) == 1, f"{namespace}/{name}: {len(found)} pods"
    return found[0]


def owned(report: Report, namespace: str, prefix: str) -> list[Pod]:
    """Pods of a Deployment or Job: generated names ``<prefix>-...``."""
    return [
        p
        for p in report["pods"]
        if p["namespace"] == namespace and p["name"].startswith(f"{prefix}-")
    ]


def ref(p: Pod) -> str:
    return f"{p['namespace']}/{p['name']}"


def refs(pods: Iterable[Pod]) -> set[str]:
    return {ref(p) for p in pods}


def by_ref(report: Report) -> dict[str, Pod]:
    return {ref(p): p for p in report["pods"]}


def pending(report: Report) -> list[Pod]:
    """Pods that are still waiting at the end (not bound, not deleted)."""
    return [p for p in report["pods"] if p["node"] is None and not p["deleted"]]


def preemptions_by(report: Report, preemptor: str) -> list[dict[str, Any]]:
    return [p for p in report["preemptions"] if p["preemptor"] == preemptor]


def failed_scheduling(report: Report, namespace: str, name: str) -> list[tuple[float, str]]:
    """(time, message) of every FailedScheduling event of a pod."""
    return [
        (e["time"], e["message"])
        for e in report["events"]
        if e["reason"] == "FailedScheduling" and e["object"] == f"Pod/{namespace}/{name}"
    ]


def victims(report: Report) -> set[str]:
    return {v for p in report["preemptions"] for v in p["victims"]}


def no_class_preempts_upwards(report: Report) -> None:
    """Every victim has a strictly lower priority than its preemptor (upstream
    ``SelectVictimsOnNode`` only removes pods with ``priority < preemptor priority``)."""
    pods = by_ref(report)
    for item in report["preemptions"]:
        for victim in item["victims"]:
            assert pods[victim]["priority"] < pods[item["preemptor"]]["priority"], item


NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"

# --- golden reports ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES, ids=EXAMPLES)
def test_example_report_matches_its_golden_file_byte_for_byte(name: str) -> None:
    expected = golden_path(name).read_text(encoding="utf-8")
    assert golden_text(name) == expected, (
        f"the report of examples/{name} changed; if that is intended, run "
        f"`.venv/bin/python -m tests.sim.regenerate {name}` and review the diff"
    )


@pytest.mark.parametrize("name", ["who-gets-evicted", "graceful-starvation"])
def test_cli_json_output_is_the_golden_report(name: str) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(
            ["simulate", str(EXAMPLES_DIR / name), "--output", "json", "--seed", str(GOLDEN_SEED)]
        )
    assert code == 0
    assert out.getvalue() == golden_path(name).read_text(encoding="utf-8")


def test_every_example_directory_has_a_readme_and_a_golden_report() -> None:
    directories = {p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir()}
    assert set(EXAMPLES) <= directories
    for name in EXAMPLES:
        assert (EXAMPLES_DIR / name / "README.md").is_file(), name
        assert golden_path(name).is_file(), name


# --- 1. who-gets-evicted (seed 003) ------------------------------------------------------------

WHO_GREEN_PENDING = (
    "0/6 nodes are available: 3 Insufficient cpu, 3 node(s) didn't match Pod's node "
    f"affinity/selector. preemption: 0/6 nodes are available: 3 {NO_VICTIMS}, 3 {NOT_HELPFUL}."
)


@pytest.mark.parametrize("seed", SEEDS)
def test_who_gets_evicted_cat3_app_preempts_green_not_blue_because_of_blues_pdb(
    seed: int,
) -> None:
    """Upstream ``pickOneNodeForPreemption`` (framework/preemption/preemption.go) first
    keeps the nodes whose victims violate the fewest PodDisruptionBudgets; only then the
    lowest highest-priority victim. Evicting any blue pod (cat-1, minAvailable 3 of 3)
    violates blue's budget; evicting one green pod (cat-2, minAvailable 2 of 3) does not,
    so a data node wins although blue's priority is lower."""
    report = run("who-gets-evicted", seed=seed)
    [orange] = owned(report, "shop", "orange")
    green = owned(report, "shop", "green")
    [preemption] = report["preemptions"]
    assert preemption["preemptor"] == ref(orange)
    assert preemption["node"].startswith("data-")
    [victim] = preemption["victims"]
    assert victim in refs(green)
    # Blue keeps all three pods; purple (cat-3, same priority) and red
    # (cluster-service) can never be victims of a cat-3 pod.
    for app in ("blue", "purple", "red"):
        pods = owned(report, "shop", app)
        assert len(pods) == 3
        assert all(p["phase"] == "Running" and not p["deleted"] for p in pods), app
    # The victim gets its 30 s default grace period; orange starts where it was.
    assert orange["node"] == preemption["node"]
    assert orange["scheduledAt"] == preemption["time"] + 30
    # Green's ReplicaSet replaces the victim; the replacement may run only in the data
    # pool, where nothing has a lower priority: no cascade onto blue, it waits.
    [replacement] = pending(report)
    assert replacement in green
    assert replacement["createdAt"] == preemption["time"]
    assert replacement["pendingMessage"] == WHO_GREEN_PENDING


def test_who_gets_evicted_without_blues_pdb_the_lowest_priority_victim_wins() -> None:
    """The counterfactual: with no budget on blue, no candidate violates a PDB and the
    next rule (the minimum highest-priority victim) picks a web node: blue (cat-1) goes."""

    def without_blue_pdb(document: Document) -> Document | None:
        data = document.data
        if data["kind"] == "PodDisruptionBudget" and data["metadata"]["name"] == "blue":
            return None
        return document

    report = run("who-gets-evicted", edit=without_blue_pdb)
    [preemption] = report["preemptions"]
    assert preemption["node"].startswith("web-")
    [victim] = preemption["victims"]
    assert victim in refs(owned(report, "shop", "blue"))


@pytest.mark.parametrize("seed", SEEDS)
def test_who_gets_evicted_without_pools_greens_replacement_preempts_blue_anyway(
    seed: int,
) -> None:
    """What the README warns about: with blue and green pods mixed on the nodes, orange
    still takes a green pod, but green's replacement (cat-2) can then only make room by
    evicting a blue pod (cat-1), and does, although that violates blue's budget: PDBs are
    best effort (upstream ``SelectVictimsOnNode`` reprieves violating pods first, and
    ``pickOneNodeForPreemption`` only prefers fewer violations)."""

    def without_pools(document: Document) -> Document:
        if document.data["kind"] == "Deployment":
            data = copy.deepcopy(document.data)
            data["spec"]["template"]["spec"].pop("nodeSelector", None)
            return dataclasses.replace(document, data=data)
        return document

    report = run("who-gets-evicted", seed=seed, edit=without_pools)
    [orange] = owned(report, "shop", "orange")
    green, blue = owned(report, "shop", "green"), owned(report, "shop", "blue")
    first, second = report["preemptions"]
    assert first["preemptor"] == ref(orange)
    assert set(first["victims"]) <= refs(green)
    assert second["preemptor"] in refs(green)
    assert set(second["victims"]) <= refs(blue)
    assert len([p for p in pending(report) if p in blue]) == 1


# --- 2. kestrel-tiers (seed 004) ---------------------------------------------------------------

KESTREL_NEVER = (
    "0/2 nodes are available: 2 Insufficient cpu. "
    "preemption: not eligible due to preemptionPolicy=Never."
)
KESTREL_NO_VICTIMS = f"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 {NO_VICTIMS}."
SIGNIFICANT, MEDIUM, HIGH = 500, 1000, 2000
INFRA = 900_000_000


@pytest.mark.parametrize("seed", SEEDS)
def test_kestrel_significant_pod_never_preempts_and_waits(seed: int) -> None:
    """Upstream ``PodEligibleToPreemptOthers`` (plugins/defaultpreemption): a pod with
    ``preemptionPolicy: Never`` is not eligible; the PostFilter message says why."""
    report = run("kestrel-tiers", seed=seed)
    late = pod(report, "kestrel-research", "late-scratch")
    assert late["priority"] == SIGNIFICANT
    assert late["preemptionPolicy"] == "Never"
    assert late["node"] is None
    assert late["pendingMessage"] == KESTREL_NEVER
    assert preemptions_by(report, ref(late)) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_kestrel_medium_evicts_only_significant_and_high_evicts_both(seed: int) -> None:
    """Victims are only pods of strictly lower priority, lowest first (upstream
    ``SelectVictimsOnNode`` reprieves the most important pods first)."""
    report = run("kestrel-tiers", seed=seed)
    pods = by_ref(report)
    no_class_preempts_upwards(report)
    medium = [p for p in report["preemptions"] if pods[p["preemptor"]]["priority"] == MEDIUM]
    high = [p for p in report["preemptions"] if pods[p["preemptor"]]["priority"] == HIGH]
    assert len(medium) == 1
    assert {pods[v]["priority"] for v in medium[0]["victims"]} == {SIGNIFICANT}
    assert {pods[v]["priority"] for p in high for v in p["victims"]} == {SIGNIFICANT, MEDIUM}
    # The two api replicas: one takes a node's scratch pods, the other the research run.
    assert sorted(len(p["victims"]) for p in high) == [1, 2]
    # The preempted research run is retried by its Job and waits: nothing below it is left.
    [retry] = [p for p in owned(report, "kestrel-research", "research-run") if not p["deleted"]]
    assert retry["pendingMessage"] == KESTREL_NO_VICTIMS


@pytest.mark.parametrize("seed", SEEDS)
def test_kestrel_nothing_evicts_infra_pods(seed: int) -> None:
    """The infra classes (900000000) are above every user tier: the pending hotfix pod
    (preempt-high, 1 CPU) would fit if a 1-CPU metrics agent left, but no victim exists."""
    report = run("kestrel-tiers", seed=seed)
    agents = owned(report, "platform-monitoring", "metrics-agent")
    assert len(agents) == 2
    assert all(a["priority"] == INFRA and a["phase"] == "Running" for a in agents)
    assert not refs(agents) & victims(report)
    hotfix = pod(report, "kestrel-web", "hotfix")
    assert hotfix["node"] is None
    assert hotfix["pendingMessage"] == KESTREL_NO_VICTIMS


def test_kestrel_tenant_pods_asking_for_classes_outside_the_allowlist_are_rejected() -> None:
    report = run("kestrel-tiers")
    allowed = "allowed: uber-user-preempt-high, uber-user-preempt-medium, uber-user-significant"
    assert report["rejected"] == [
        {
            "kind": "Pod",
            "namespace": "kestrel-research",
            "name": "sneaky-infra",
            "code": 403,
            "reason": "Forbidden",
            "message": 'pods "sneaky-infra" is forbidden: PriorityClass "uber-infra-critical" '
            'is not allowed in namespace "kestrel-research" (tenant "kestrel"); ' + allowed,
        },
        {
            "kind": "Deployment",
            "namespace": "kestrel-web",
            "name": "dashboard",
            "code": 403,
            "reason": "Forbidden",
            "message": 'deployments.apps "dashboard" is forbidden: pod template: PriorityClass '
            '"uber-user-important" is not allowed in namespace "kestrel-web" (tenant "kestrel"); '
            + allowed,
        },
    ]
    names = {p["name"] for p in report["pods"]}
    assert "sneaky-infra" not in names
    assert not any(n.startswith("dashboard-") for n in names)


# --- 3. openshift-classes (seed 002) -----------------------------------------------------------

OPENSHIFT_FLUENTD_INFRA = (
    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
    f"[NodeAffinity]. preemption: 0/3 nodes are available: 1 {NO_VICTIMS}, 2 {NOT_HELPFUL}."
)
OPENSHIFT_USER_PENDING = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
    f"preemption: 0/3 nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIMS}."
)
OPENSHIFT_PROMETHEUS_PENDING = (
    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
    f"affinity/selector. preemption: 0/3 nodes are available: 1 {NO_VICTIMS}, 2 {NOT_HELPFUL}."
)


@pytest.mark.parametrize("seed", SEEDS)
def test_openshift_logging_preempts_user_pods_but_not_openshift_user_critical(
    seed: int,
) -> None:
    """cluster-logging (1000000) outranks user pods (0, no globalDefault class) but not
    Prometheus (openshift-user-critical, 1000000000)."""
    report = run("openshift-classes", seed=seed)
    pods = by_ref(report)
    no_class_preempts_upwards(report)
    for node in ("worker-0", "worker-1"):
        [item] = preemptions_by(report, f"openshift-logging/fluentd-{node}")
        assert item["time"] == 120.0
        assert item["node"] == node
        assert len(item["victims"]) == 2
        assert {pods[v]["priority"] for v in item["victims"]} == {0}
    # On infra-0 only Prometheus could make room, and it outranks cluster-logging.
    assert preemptions_by(report, "openshift-logging/fluentd-infra-0") == []
    assert failed_scheduling(report, "openshift-logging", "fluentd-infra-0")[0] == (
        120.0,
        OPENSHIFT_FLUENTD_INFRA,
    )
    # Preempted storefront replicas come back at priority 0 and wait.
    waiting = [p for p in pending(report) if p["namespace"] == "shop"]
    assert len(waiting) == 4
    assert {p["pendingMessage"] for p in waiting} == {OPENSHIFT_USER_PENDING}


@pytest.mark.parametrize("seed", SEEDS)
def test_openshift_system_node_critical_preempts_prometheus_and_critical_pods_stay(
    seed: int,
) -> None:
    """openshift-user-critical sits below the system classes so that system pods can take
    Prometheus's room (seed 002); the room left over lets the waiting Fluentd start."""
    report = run("openshift-classes", seed=seed)
    [item] = preemptions_by(report, "openshift-cluster-node-tuning-operator/tuned-infra-0")
    prometheus = owned(report, "openshift-monitoring", "prometheus-k8s")
    [victim] = item["victims"]
    assert (item["time"], item["node"]) == (240.0, "infra-0")
    assert victim in refs(prometheus)
    tuned = pod(report, "openshift-cluster-node-tuning-operator", "tuned-infra-0")
    fluentd = pod(report, "openshift-logging", "fluentd-infra-0")
    assert tuned["scheduledAt"] == fluentd["scheduledAt"] == 270.0  # 240 + 30 s grace
    [replacement] = [p for p in prometheus if not p["deleted"] and p["node"] is None]
    assert replacement["pendingMessage"] == OPENSHIFT_PROMETHEUS_PENDING
    # system-node-critical and system-cluster-critical pods are never touched.
    critical = [p for p in report["pods"] if p["priority"] >= 2_000_000_000]
    assert len(critical) == 5  # 3 sdn, metrics-server, tuned
    assert all(p["phase"] == "Running" and not p["deleted"] for p in critical)


# --- 4. graceful-starvation (seed 001) ---------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_graceful_preemptor_waits_for_its_victims_to_terminate(seed: int) -> None:
    """Victims keep their resources until they exit: after ``kubeprio.io/termination-
    seconds`` (etl-quick, 5 s) or their whole ``terminationGracePeriodSeconds``
    (etl-checkpoint, 60 s). Meanwhile the preemptor is nominated to the node and, when
    retried, is not eligible to preempt again (upstream ``PodEligibleToPreemptOthers``)."""
    report = run("graceful-starvation", seed=seed)
    [item] = report["preemptions"]
    assert (item["time"], item["preemptor"], item["node"]) == (10.0, "default/nginx", "node-1")
    assert set(item["victims"]) == {"default/etl-quick", "default/etl-checkpoint"}
    assert pod(report, "default", "etl-quick")["deletedAt"] == 15.0
    assert pod(report, "default", "etl-checkpoint")["deletedAt"] == 70.0
    nginx = pod(report, "default", "nginx")
    assert nginx["nominatedNode"] == "node-1"
    assert nginx["scheduledAt"] == 70.0  # a 60 s gap between preemption and start
    assert failed_scheduling(report, "default", "nginx") == [
        (10.0, "0/1 nodes are available: 1 Insufficient cpu."),
        (
            15.0,
            "0/1 nodes are available: 1 Insufficient cpu. "
            "preemption: not eligible due to a terminating pod on the nominated node.",
        ),
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_graceful_lower_priority_pod_does_not_take_the_nominated_room(seed: int) -> None:
    """Seed 001's starvation: etl-late arrives at t=20 s, when etl-quick's CPU is free.
    Upstream filters with the nominated pods of equal or higher priority counted on the
    node (``RunFilterPluginsWithNominatedPods``), so that room stays reserved for nginx."""
    report = run("graceful-starvation", seed=seed)
    late = pod(report, "default", "etl-late")
    assert late["createdAt"] == 20.0 > pod(report, "default", "etl-quick")["deletedAt"]
    assert late["node"] is None
    assert late["pendingMessage"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        f"preemption: 0/1 nodes are available: 1 {NO_VICTIMS}."
    )
    assert failed_scheduling(report, "default", "etl-late")[0][0] == 20.0


# --- 5. deployment-cascade ---------------------------------------------------------------------

CASCADE_SCAVENGER_PENDING = f"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 {NO_VICTIMS}."


@pytest.mark.parametrize("seed", SEEDS)
def test_cascade_preempted_replicas_come_back_and_preempt_lower_pods(seed: int) -> None:
    """A preempted Deployment pod is replaced by its ReplicaSet at once (pods being
    deleted do not count as active: upstream ``FilterActivePods``); the replacement goes
    through the queue like any pod and preempts what is below it."""
    report = run("deployment-cascade", seed=seed)
    pods = by_ref(report)
    workers = owned(report, "jobs", "queue-worker")
    scavengers = owned(report, "jobs", "scavenger")
    [api] = owned(report, "shop", "api")
    first, *cascade = report["preemptions"]
    assert first["preemptor"] == ref(api)
    assert first["time"] == 60.0
    assert sorted(pods[v]["priorityClassName"] for v in first["victims"]) == [
        "batch",
        "batch",
        "scavenger",
        "scavenger",
    ]
    assert api["node"] == first["node"]
    assert api["scheduledAt"] == 70.0  # the workers drain for 10 s
    # Two replacement workers, each preempting one scavenger on the other node.
    replacements = [w for w in workers if w["createdAt"] == 60.0]
    assert len(replacements) == 2
    assert {c["preemptor"] for c in cascade} == refs(replacements)
    for item in cascade:
        assert item["node"] != first["node"]
        [victim] = item["victims"]
        assert pods[victim]["priorityClassName"] == "scavenger"
    assert {w["scheduledAt"] for w in replacements} == {65.0}  # scavengers exit in 5 s
    # Six pods were preempted by one new pod; the four scavenger replacements wait.
    assert len(victims(report)) == 6
    waiting = pending(report)
    assert refs(waiting) <= refs(scavengers)
    assert len(waiting) == 4
    assert {p["pendingMessage"] for p in waiting} == {CASCADE_SCAVENGER_PENDING}
    assert sum(1 for w in workers if w["phase"] == "Running") == 4


# --- 6. daemonset-agent ------------------------------------------------------------------------

AGENT_PENDING = (
    "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) "
    f"[NodeAffinity]. preemption: 0/4 nodes are available: 1 {NO_VICTIMS}, 3 {NOT_HELPFUL}."
)


@pytest.mark.parametrize("seed", SEEDS)
def test_daemonset_agent_preempts_on_each_node_only_what_that_node_must_give(seed: int) -> None:
    """A DaemonSet pod is pinned to its node (``ReplaceDaemonSetPodNodeNameNodeAffinity``),
    so DefaultPreemption's only candidate is that node: node-a gives its batch pod, node-b
    the later-started of two equal web pods (``MoreImportantPod``: earlier start is more
    important), node-c nothing (its pod outranks the agent), and the tainted gpu-1 gets no
    agent at all (``NodeShouldRunDaemonPod``). Pods are created in node-name order."""
    report = run("daemonset-agent", seed=seed)
    agents = owned(report, "logging", "log-agent")
    assert len(agents) == 3
    created = [
        e["message"].removeprefix("Created pod: ")
        for e in report["events"]
        if e["reason"] == "SuccessfulCreate" and e["object"] == "DaemonSet/logging/log-agent"
    ]
    pods = by_ref(report)
    assert [pods[f"logging/{name}"]["node"] for name in created] == ["node-a", "node-b", None]
    by_node = {item["node"]: item for item in report["preemptions"]}
    assert set(by_node) == {"node-a", "node-b"}
    assert by_node["node-a"]["victims"] == ["jobs/report-a"]
    assert by_node["node-b"]["victims"] == ["shop/web-b2"]
    for item in report["preemptions"]:
        assert item["time"] == 60.0
        assert pods[item["preemptor"]]["node"] == item["node"]
        assert pods[item["preemptor"]]["scheduledAt"] == 90.0  # the victims' 30 s grace
    no_class_preempts_upwards(report)
    [waiting] = pending(report)
    assert waiting["pendingMessage"] == AGENT_PENDING
    assert waiting["priorityClassName"] == "node-agent"
    untouched = ("shop/web-a", "shop/web-b1", "payments/ledger", "jobs/train")
    assert all(not pods[name]["deleted"] for name in untouched)


def test_daemonset_agent_records_its_template_as_revision_one() -> None:
    """constructHistory: the DaemonSet's template is ControllerRevision
    ``log-agent-<hash>``, revision 1, owned by the DaemonSet; the status counts the three
    nodes it wants (gpu-1 excluded), two of them with an available pod."""
    from kubeprio.api.controllerrevision import ControllerRevision
    from kubeprio.api.daemonset import DaemonSet
    from kubeprio.sim.simulate import simulate
    from tests.sim.examples import documents

    _report, cluster = simulate(documents("daemonset-agent"), seed=GOLDEN_SEED)
    [revision] = cluster.api.list(ControllerRevision, "logging").items
    assert revision.revision == 1
    assert (
        revision.metadata.name
        == f"log-agent-{revision.metadata.labels['controller-revision-hash']}"
    )
    [owner] = revision.metadata.owner_references or ()
    assert (owner.kind, owner.name) == ("DaemonSet", "log-agent")
    status = cluster.api.get(DaemonSet, "log-agent", "logging").status
    assert status is not None
    assert (status.desired_number_scheduled, status.current_number_scheduled) == (3, 3)
    assert (status.number_ready, status.number_available, status.number_unavailable) == (2, 2, 1)


# --- 7. cronjob-forbid --------------------------------------------------------------------------

HOUR = 3600.0
ROLLUP_MINUTE = 29_453_760  # 2026-01-01T00:00:00Z in minutes: Job names are rollup-<minute>


def cron_events(report: Report, reason: str) -> list[tuple[float, str]]:
    return [
        (e["time"], e["message"])
        for e in report["events"]
        if e["reason"] == reason and e["object"] == "CronJob/reports/rollup"
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_cronjob_forbid_run_is_preempted_and_later_runs_are_skipped(seed: int) -> None:
    """The hourly rollup (class batch-low) runs at 01:00 and completes at 01:40; the 02:00
    run is preempted at 02:10 by a checkout replica (checkout outranks batch-low), its Job
    replaces the pod, which stays Pending (nothing below batch-low to preempt), and with
    concurrencyPolicy Forbid the 03:00 and 04:00 runs are skipped (JobAlreadyActive)."""
    report = run("cronjob-forbid", seed=seed)
    assert cron_events(report, "SuccessfulCreate") == [
        (HOUR, f"Created job rollup-{ROLLUP_MINUTE + 60}"),
        (2 * HOUR, f"Created job rollup-{ROLLUP_MINUTE + 120}"),
    ]
    assert cron_events(report, "SawCompletedJob") == [
        (HOUR + 2400, f"Saw completed job: rollup-{ROLLUP_MINUTE + 60}, condition: Complete")
    ]
    skipped = "Not starting job because prior execution is running and concurrency policy is Forbid"
    assert cron_events(report, "JobAlreadyActive") == [(3 * HOUR, skipped), (4 * HOUR, skipped)]
    [preemption] = report["preemptions"]
    assert preemption["time"] == 2 * HOUR + 600
    assert preemption["preemptor"].startswith("shop/checkout-")
    [victim] = preemption["victims"]
    assert victim.startswith(f"reports/rollup-{ROLLUP_MINUTE + 120}-")
    no_class_preempts_upwards(report)
    [waiting] = pending(report)
    assert waiting["name"].startswith(f"rollup-{ROLLUP_MINUTE + 120}-")
    assert waiting["priorityClassName"] == "batch-low"
    assert waiting["pendingMessage"] == (
        f"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        f"2 {NO_VICTIMS}."
    )
    checkout = owned(report, "shop", "checkout")
    assert len(checkout) == 2
    assert all(p["phase"] == "Running" for p in checkout)


def test_cronjob_forbid_status_keeps_the_waiting_job_active() -> None:
    """The CronJob's status lists the Pending run's Job as active, lastScheduleTime is its
    02:00 and lastSuccessfulTime the first run's completion; the first Job carries the
    scheduled-timestamp annotation and a controller reference to the CronJob."""
    from kubeprio.api.batch import CronJob, Job
    from kubeprio.sim.simulate import simulate
    from tests.sim.examples import UNTIL, documents

    _report, cluster = simulate(
        documents("cronjob-forbid"), seed=GOLDEN_SEED, until=UNTIL["cronjob-forbid"]
    )
    cron = cluster.api.get(CronJob, "rollup", "reports")
    assert cron.status is not None
    assert [r.name for r in cron.status.active or ()] == [f"rollup-{ROLLUP_MINUTE + 120}"]
    assert cron.status.last_schedule_time == "2026-01-01T02:00:00Z"
    assert cron.status.last_successful_time == "2026-01-01T01:40:00Z"
    first = cluster.api.get(Job, f"rollup-{ROLLUP_MINUTE + 60}", "reports")
    assert first.metadata.annotation("batch.kubernetes.io/cronjob-scheduled-timestamp") == (
        "2026-01-01T01:00:00Z"
    )
    [owner] = first.metadata.owner_references or ()
    assert (owner.kind, owner.name, owner.uid) == ("CronJob", "rollup", cron.metadata.uid)


# --- 8. limitrange-defaults ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_limitrange_defaults_make_a_pod_without_requests_preempt(seed: int) -> None:
    """LimitRanger (``PodMutateLimitFunc``) gives each shop pod the 1-CPU default request
    before it is scheduled: web-1 fits, web-2 must preempt the batch report
    (DefaultPreemption), web-3 is refused by the quota that counts the defaulted requests,
    and huge by the range's max (LimitRanger validates before ResourceQuota)."""
    report = run("limitrange-defaults", seed=seed)
    pods = by_ref(report)
    assert pods["shop/web-1"]["node"] == "node-1"
    assert pods["shop/web-1"]["scheduledAt"] == 60.0
    assert [(p["preemptor"], p["victims"]) for p in report["preemptions"]] == [
        ("shop/web-2", ["jobs/report"])
    ]
    assert pods["shop/web-2"]["scheduledAt"] == 90.0  # the report's 30 s grace
    assert pods["jobs/report"]["preemptedBy"] == "shop/web-2"
    assert {(r["name"], r["message"]) for r in report["rejected"]} == {
        (
            "web-3",
            'pods "web-3" is forbidden: exceeded quota: shop-quota, requested: requests.cpu=1, '
            "used: requests.cpu=2, limited: requests.cpu=2",
        ),
        ("huge", 'pods "huge" is forbidden: maximum cpu usage per Container is 2, but limit is 4'),
    }
    no_class_preempts_upwards(report)


# --- 9. volume-binding --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_volume_binding_provisions_for_the_scheduled_pod_and_refuses_an_unbound_claim(
    seed: int,
) -> None:
    """VolumeBinding (``volume_binding.go``): the WaitForFirstConsumer claim is provisioned
    once ``db`` is placed and PreBind's one-second poll sees it bound; ``backup``'s claim
    names a missing class, so it counts as Immediate and unbound: PreFilter's
    UnschedulableAndUnresolvable message, and preemption is not helpful on any node."""
    report = run("volume-binding", seed=seed)
    pods = by_ref(report)
    assert pods["shop/db"]["node"] in ("node-a", "node-b")
    assert pods["shop/db"]["scheduledAt"] == 31.0
    assert pods["shop/backup"]["node"] is None
    assert pods["shop/backup"]["pendingMessage"] == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert report["preemptions"] == []


# --- 10. rwop-preemption ------------------------------------------------------------------------

RWOP_CONFLICT = (
    "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name "
    "and ReadWriteOncePod access mode. preemption: 0/2 nodes are available: 2 No preemption "
    "victims found for incoming pod."
)


@pytest.mark.parametrize("seed", SEEDS)
def test_rwop_claim_goes_to_the_higher_priority_pod_never_to_an_equal_one(seed: int) -> None:
    """VolumeRestrictions (``volume_restrictions.go``: ``ErrReasonReadWriteOncePodConflict``
    on every node while another pod names the claim) under DefaultPreemption
    (``SelectVictimsOnNode`` removes only lower-priority pods): ``writer`` preempts the
    holder ``reporter``; ``auditor``, of ``reporter``'s own priority, finds no victims."""
    report = run("rwop-preemption", seed=seed)
    pods = by_ref(report)
    assert pods["bank/reporter"]["scheduledAt"] == 10.0
    assert [(p["time"], p["preemptor"], p["victims"]) for p in report["preemptions"]] == [
        (60.0, "bank/writer", ["bank/reporter"])
    ]
    assert pods["bank/reporter"]["preemptedBy"] == "bank/writer"
    assert pods["bank/writer"]["node"] == pods["bank/reporter"]["node"]
    assert pods["bank/writer"]["scheduledAt"] == 65.0  # the reporter's 5 s grace
    assert pods["bank/auditor"]["node"] is None
    assert pods["bank/auditor"]["pendingMessage"] == RWOP_CONFLICT
    no_class_preempts_upwards(report)


def test_rwop_writer_of_equal_priority_does_not_preempt() -> None:
    """With ``writer`` in ``batch`` too, nobody preempts: both late pods wait with the
    conflict message and ``reporter`` keeps the claim."""

    def equal(doc: Document) -> Document:
        if doc.data.get("kind") == "Pod" and doc.data["metadata"]["name"] == "writer":
            data = copy.deepcopy(doc.data)
            data["spec"]["priorityClassName"] = "batch"
            return dataclasses.replace(doc, data=data)
        return doc

    report = run("rwop-preemption", edit=equal)
    pods = by_ref(report)
    assert report["preemptions"] == []
    assert pods["bank/reporter"]["node"] is not None
    assert not pods["bank/reporter"]["deleted"]
    for name in ("auditor", "writer"):
        assert pods[f"bank/{name}"]["node"] is None
        assert pods[f"bank/{name}"]["pendingMessage"] == RWOP_CONFLICT

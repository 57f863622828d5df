"""Hypothesis strategies for random clusters: nodes, bound pods, pending pods, PDBs.

A scenario is plain data (``ScenarioSpec``) so that two schedulers can replay exactly the
same one. The value pools lean on the edges the scheduler must get right: zero and odd
allocatable amounts, missing resources, ``pods`` capacity 0/1, cordoned nodes, the
three taint effects, best-effort containers, explicit zero requests (which switch off
the 100m/200Mi scoring defaults), init containers and sidecars, equal priorities,
pods without a start time, terminating pods (with or without the scheduler's
``DisruptionTarget`` condition), PDBs with no budget left, and pending pods already
nominated to a node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hypothesis import strategies as st

from kubeprio.api.core import (
    Container,
    ContainerPort,
    Node,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    ResourceRequirements,
    Taint,
    Toleration,
)
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec
from kubeprio.api.quantity import parse_quantity

GI = 2**30
MI = 2**20
TAINT_KEYS = ("a", "b", "c", "node.kubernetes.io/unreachable")
"""The last is a lost node's taint, which every pod's default tolerations tolerate as ``NoExecute``."""
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
APPS = ("x", "y", "z")

Requests = Mapping[str, int]
"""Resource name -> amount (cpu in millicores, others in units)."""


@dataclasses.dataclass(frozen=True)
class NodeSpecGen:
    """One node: allocatable amounts (None = resource absent), cordon, taints."""

    name: str
    cpu: int | None
    memory: int | None
    ephemeral: int | None
    pods: int | None
    unschedulable: bool = False
    taints: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class PodSpecGen:
    """One pod: containers' requests (None = no requests at all), priority, policy..."""

    name: str
    containers: tuple[Requests | None, ...]
    init_containers: tuple[tuple[Requests, bool], ...] = ()
    priority: int = 0
    never: bool = False
    tolerations: tuple[tuple[str, str], ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()
    host_port: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    grace: int = 0
    # Bound pods only:
    node: str | None = None
    start: int | None = None
    """Start time in seconds after the epoch of the run (None: no ``status.startTime``)."""
    terminating: bool = False
    by_preemption: bool = False
    # Pending pods only:
    nominated: str | None = None
    arrival: int = 0
    """Scheduling step at which the pod is created (0: before the scheduler starts)."""


@dataclasses.dataclass(frozen=True)
class PdbSpecGen:
    """A PodDisruptionBudget over ``app=<app>`` with a fixed ``disruptionsAllowed``."""

    name: str
    app: str
    allowed: int
    disrupted: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ChangeSpec:
    """A cluster change at a step while the scheduler runs.

    ``kind``: ``cordon`` (flip ``spec.unschedulable``), ``retaint`` (replace the taints
    with ``node.taints``), ``resize`` (replace allocatable with ``node``'s), ``delete_node``,
    ``add_node`` (``node``), ``complete`` (a pod on ``target`` succeeds) or ``delete_pod``.
    """

    step: int
    kind: str
    target: str
    node: NodeSpecGen | None = None


CHANGE_KINDS = ("cordon", "retaint", "resize", "delete_node", "add_node", "complete", "delete_pod")


@dataclasses.dataclass(frozen=True)
class ScenarioSpec:
    """A whole random cluster and the pods that arrive while it runs."""

    nodes: tuple[NodeSpecGen, ...]
    bound: tuple[PodSpecGen, ...]
    pending: tuple[PodSpecGen, ...]
    pdbs: tuple[PdbSpecGen, ...] = ()
    seed: int = 0
    finalize: tuple[bool, ...] = ()
    """Per idle-or-busy step: whether the oldest terminating pod finishes now."""
    changes: tuple[ChangeSpec, ...] = ()


# --- values ------------------------------------------------------------------------------------

CPU_EDGES = st.sampled_from([0, 1, 3, 250, 999, 1001, 3999])
MEM_EDGES = st.sampled_from([0, 1, 7, MI, GI + 1])
CPU_ALLOC = st.one_of(
    st.sampled_from([1000, 2000, 2000, 3000, 4000, 4000]), st.integers(500, 8000), CPU_EDGES
)
MEM_ALLOC = st.one_of(
    st.sampled_from([4 * GI, 8 * GI, 32 * GI]), st.integers(GI, 64 * GI), MEM_EDGES
)
EPH_ALLOC = st.sampled_from([0, 1, GI, 10 * GI, 100 * GI])
PODS_ALLOC = st.sampled_from([0, 1, 2, 3, 5, 110, 110, 110])
CPU_REQ = st.sampled_from([0, 1, 100, 333, 500, 500, 900, 999, 1000, 1000, 1500, 2500, 5000])
MEM_REQ = st.sampled_from([0, 1, 1000, MI, 200 * MI, 500 * MI, GI, GI, 3 * GI, 40 * GI])
EPH_REQ = st.sampled_from([0, 1, GI, 20 * GI])
LOW_PRIORITIES = st.sampled_from([-10, 0, 0, 5, 5, 10])
HIGH_PRIORITIES = st.sampled_from([0, 5, 10, 10, 100, 100, 1000])


@st.composite
def requests(draw: st.DrawFn, *, allow_none: bool = True) -> Requests | None:
    """A container's requests: absent, empty, or a subset of cpu/memory/ephemeral."""
    if allow_none and draw(st.integers(0, 5)) == 0:
        return None
    out: dict[str, int] = {}
    if draw(st.booleans()):
        out["cpu"] = draw(CPU_REQ)
    if draw(st.booleans()):
        out["memory"] = draw(MEM_REQ)
    if draw(st.integers(0, 4)) == 0:
        out["ephemeral-storage"] = draw(EPH_REQ)
    return out


@st.composite
def node_specs(draw: st.DrawFn, name: str) -> NodeSpecGen:
    """A node with edge-case capacity, maybe cordoned, maybe tainted."""
    taints = draw(
        st.lists(
            st.tuples(st.sampled_from(TAINT_KEYS), st.sampled_from(EFFECTS)),
            max_size=2,
            unique=True,
        ).map(tuple)
        if draw(st.integers(0, 3)) == 0
        else st.just(())
    )
    return NodeSpecGen(
        name=name,
        cpu=draw(st.none() | CPU_ALLOC) if draw(st.integers(0, 9)) == 0 else draw(CPU_ALLOC),
        memory=draw(st.none() | MEM_ALLOC) if draw(st.integers(0, 9)) == 0 else draw(MEM_ALLOC),
        ephemeral=draw(st.none() | EPH_ALLOC),
        pods=draw(st.none() | PODS_ALLOC) if draw(st.integers(0, 9)) == 0 else draw(PODS_ALLOC),
        unschedulable=draw(st.integers(0, 7)) == 0,
        taints=taints,
        labels=(("zone", draw(st.sampled_from(("z1", "z2")))),),
    )


@st.composite
def pod_specs(
    draw: st.DrawFn,
    name: str,
    *,
    plain: bool = False,
    node_names: tuple[str, ...] = (),
    bound: bool = False,
    max_arrival: int = 0,
) -> PodSpecGen:
    """A pod; ``plain`` keeps it to what the fast path handles, ``bound`` places it."""
    containers = tuple(draw(st.lists(requests(), min_size=0 if bound else 1, max_size=3)))
    inits = tuple(
        draw(st.lists(st.tuples(requests(allow_none=False), st.booleans()), max_size=2))
        if draw(st.integers(0, 3)) == 0
        else ()
    )
    tolerations: tuple[tuple[str, str], ...] = ()
    selector: tuple[tuple[str, str], ...] = ()
    host_port = None
    if not plain and draw(st.integers(0, 7)) == 0:
        tolerations = tuple(
            draw(
                st.lists(
                    st.tuples(st.sampled_from(TAINT_KEYS), st.sampled_from(("", *EFFECTS))),
                    min_size=1,
                    max_size=2,
                )
            )
        )
    if not plain and draw(st.integers(0, 11)) == 0:
        selector = (("zone", draw(st.sampled_from(("z1", "z2")))),)
    if not plain and draw(st.integers(0, 11)) == 0:
        host_port = draw(st.sampled_from((8080, 9090)))
    labels = (("app", draw(st.sampled_from(APPS))),) if draw(st.booleans()) else ()
    spec = PodSpecGen(
        name=name,
        containers=containers,
        init_containers=inits,
        priority=draw(LOW_PRIORITIES if bound else HIGH_PRIORITIES),
        never=draw(st.integers(0, 7)) == 0,
        tolerations=tolerations,
        node_selector=selector,
        host_port=host_port,
        labels=labels,
        grace=draw(st.sampled_from((0, 0, 30))),
    )
    if bound:
        terminating = draw(st.integers(0, 9)) == 0
        return dataclasses.replace(
            spec,
            node=draw(st.sampled_from(node_names)),
            start=draw(st.none() | st.sampled_from((-300, -200, -200, -100, -1))),
            terminating=terminating,
            by_preemption=terminating and draw(st.booleans()),
            grace=30 if terminating else spec.grace,
        )
    nominated = None
    if node_names and draw(st.integers(0, 7)) == 0:
        nominated = draw(st.sampled_from(node_names))
    return dataclasses.replace(spec, nominated=nominated, arrival=draw(st.integers(0, max_arrival)))


@st.composite
def scenarios(
    draw: st.DrawFn,
    *,
    max_nodes: int = 6,
    max_bound: int = 16,
    max_pending: int = 8,
    plain_only: bool = False,
    with_pdbs: bool = True,
    min_nodes: int = 1,
    max_changes: int = 3,
) -> ScenarioSpec:
    """A random cluster: nodes, pods on them, pending pods arriving over time, PDBs,
    and changes to nodes and pods while the scheduler runs.

    Past 12 nodes, nodes are copies of a few random templates (cheap to generate; what
    matters at that size is how many there are: from 100 nodes on, the scheduler stops
    after finding enough feasible nodes and rotates its start index).
    """
    count = draw(st.integers(min_nodes, max_nodes))
    filler: list[PodSpecGen] = []
    if count <= 12:
        nodes = tuple(draw(node_specs(f"node-{i}")) for i in range(count))
    else:
        roomy = NodeSpecGen("t", cpu=4000, memory=32 * GI, ephemeral=None, pods=110)
        templates = [roomy, *(draw(node_specs("t")) for _ in range(draw(st.integers(0, 2))))]
        picks = draw(
            st.lists(
                st.sampled_from([0, 0, 0, *range(len(templates))]), min_size=count, max_size=count
            )
        )
        nodes = tuple(
            dataclasses.replace(templates[k], name=f"node-{i:03d}") for i, k in enumerate(picks)
        )
        if draw(st.booleans()):
            # Fill every node with one big low-priority pod: preemption then has more
            # potential nodes than the candidate budget (100) and must stop early.
            shapes = [
                PodSpecGen(
                    name="t",
                    containers=({"cpu": draw(st.sampled_from([2000, 3000, 4000])), "memory": GI},),
                    priority=draw(LOW_PRIORITIES),
                    labels=(("app", draw(st.sampled_from(APPS))),),
                    start=draw(st.none() | st.sampled_from((-300, -200, -100))),
                )
                for _ in range(3)
            ]
            filler = [
                dataclasses.replace(
                    shapes[draw(st.integers(0, 2))], name=f"fill-{i:03d}", node=node.name
                )
                for i, node in enumerate(nodes)
            ]
    names = tuple(n.name for n in nodes)
    bound = tuple(
        draw(pod_specs(f"bound-{i}", plain=plain_only, node_names=names, bound=True))
        for i in range(draw(st.integers(0, max_bound)))
    ) + tuple(filler)
    pending = tuple(
        draw(pod_specs(f"pending-{i}", plain=plain_only, node_names=names, max_arrival=6))
        for i in range(draw(st.integers(1, max_pending)))
    )
    pdbs: tuple[PdbSpecGen, ...] = ()
    if with_pdbs:
        pdbs = tuple(
            PdbSpecGen(
                name=f"pdb-{app}",
                app=app,
                allowed=draw(st.integers(0, 1)),
                disrupted=tuple(
                    draw(st.lists(st.sampled_from([p.name for p in bound] or ["none"]), max_size=1))
                ),
            )
            for app in draw(st.lists(st.sampled_from(APPS), max_size=3, unique=True))
        )
    changes = tuple(
        ChangeSpec(
            step=draw(st.integers(1, 12)),
            kind=kind,
            target=draw(st.sampled_from(names)),
            node=draw(node_specs(f"node-new-{i}" if kind == "add_node" else "x")),
        )
        for i, kind in enumerate(
            draw(st.lists(st.sampled_from(CHANGE_KINDS), max_size=max_changes))
        )
    )
    return ScenarioSpec(
        nodes=nodes,
        changes=changes,
        bound=bound,
        pending=pending,
        pdbs=pdbs,
        seed=draw(st.integers(0, 2**16)),
        finalize=tuple(draw(st.lists(st.booleans(), min_size=8, max_size=8))),
    )


# --- objects -------------------------------------------------------------------------------------


def _quantity(name: str, amount: int) -> object:
    return parse_quantity(f"{amount}m" if name == "cpu" else str(amount))


def _resource_list(values: Requests) -> dict[str, object]:
    return {name: _quantity(name, amount) for name, amount in values.items()}


def build_node(spec: NodeSpecGen) -> Node:
    """The Node object of ``spec``."""
    allocatable: dict[str, object] = {}
    for name, amount in (
        ("cpu", spec.cpu),
        ("memory", spec.memory),
        ("ephemeral-storage", spec.ephemeral),
        ("pods", spec.pods),
    ):
        if amount is not None:
            allocatable[name] = _quantity(name, amount)
    return Node(
        metadata=ObjectMeta(name=spec.name, labels=dict(spec.labels) or None),
        spec=NodeSpec(
            unschedulable=spec.unschedulable or None,
            taints=tuple(Taint(key=k, value="v", effect=e) for k, e in spec.taints) or None,
        ),
        status=NodeStatus(capacity=allocatable, allocatable=allocatable),  # type: ignore[arg-type]
    )


def _container(name: str, values: Requests | None, *, sidecar: bool = False) -> Container:
    resources = None if values is None else ResourceRequirements(requests=_resource_list(values))  # type: ignore[arg-type]
    return Container(
        name=name,
        image="busybox",
        resources=resources,
        restart_policy="Always" if sidecar else None,
    )


def build_pod(spec: PodSpecGen, *, uid: str | None = None) -> Pod:
    """The Pod object of ``spec`` (bound when ``spec.node`` is set); no status."""
    containers = [_container(f"c{i}", values) for i, values in enumerate(spec.containers)]
    if not containers:
        containers = [_container("c0", None)]
    if spec.host_port is not None:
        port = ContainerPort(
            container_port=spec.host_port, host_port=spec.host_port, protocol="TCP"
        )
        containers[0] = dataclasses.replace(containers[0], ports=(port,))
    return Pod(
        metadata=ObjectMeta(
            name=spec.name, namespace="default", uid=uid, labels=dict(spec.labels) or None
        ),
        spec=PodSpec(
            containers=tuple(containers),
            init_containers=tuple(
                _container(f"i{i}", values, sidecar=sidecar)
                for i, (values, sidecar) in enumerate(spec.init_containers)
            )
            or None,
            priority=spec.priority,
            preemption_policy="Never" if spec.never else "PreemptLowerPriority",
            tolerations=tuple(
                Toleration(key=k, operator="Exists", effect=e or None) for k, e in spec.tolerations
            )
            or None,
            node_selector=dict(spec.node_selector) or None,
            node_name=spec.node,
            termination_grace_period_seconds=spec.grace,
        ),
    )


def build_pdb(spec: PdbSpecGen) -> PodDisruptionBudget:
    """The PDB object of ``spec`` (its status is patched separately)."""
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=spec.name, namespace="default"),
        spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels={"app": spec.app})),
    )


@st.composite
def contended_scenarios(draw: st.DrawFn, *, max_nodes: int = 6) -> ScenarioSpec:
    """Identical nodes full of low-priority pods, few priority levels and start times,
    PDBs, and higher-priority pods that need room: preemption with many candidates
    whose victims tie on the first criteria, so every tie-break of
    ``pickOneNodeForPreemption`` and the reprieve order get exercised."""
    count = draw(st.integers(2, max_nodes))
    pods_cap = draw(st.sampled_from([4, 110]))
    nodes = tuple(
        NodeSpecGen(f"node-{i}", cpu=4000, memory=16 * GI, ephemeral=None, pods=pods_cap)
        for i in range(count)
    )
    bound: list[PodSpecGen] = []
    for node in nodes:
        for j in range(draw(st.integers(1, 4))):
            bound.append(
                PodSpecGen(
                    name=f"{node.name}-v{j}",
                    containers=(
                        {"cpu": draw(st.sampled_from([500, 1000, 1000, 2000])), "memory": GI},
                    ),
                    # Few levels (ties), and negative ones: the priority-sum criterion
                    # shifts each term by 2^31 so more negative victims never look better.
                    priority=draw(st.sampled_from([-5, 0, 0, 1, 3])),
                    labels=(("app", draw(st.sampled_from(APPS))),),
                    node=node.name,
                    start=draw(st.sampled_from((-300, -200, -100, None))),
                    grace=draw(st.sampled_from((0, 0, 30))),
                )
            )
    pending = tuple(
        PodSpecGen(
            name=f"pending-{i}",
            containers=({"cpu": draw(st.sampled_from([1000, 2000, 3000, 4000])), "memory": GI},),
            priority=draw(st.sampled_from([0, 1, 5, 10, 100])),
            never=draw(st.integers(0, 9)) == 0,
            arrival=draw(st.integers(0, 4)),
        )
        for i in range(draw(st.integers(1, 5)))
    )
    pdbs = tuple(
        PdbSpecGen(name=f"pdb-{app}", app=app, allowed=draw(st.integers(0, 2)))
        for app in draw(st.lists(st.sampled_from(APPS), max_size=3, unique=True))
    )
    return ScenarioSpec(
        nodes=nodes,
        bound=tuple(bound),
        pending=pending,
        pdbs=pdbs,
        seed=draw(st.integers(0, 2**16)),
        finalize=tuple(draw(st.lists(st.booleans(), min_size=8, max_size=8))),
    )


@st.composite
def budget_scenarios(draw: st.DrawFn) -> ScenarioSpec:
    """More potential nodes (101-130) than the candidate budget (100), each full with one
    low-priority pod, most of them protected by an exhausted PDB: the dry run must go on
    past 100 PDB-violating candidates until it finds a non-violating one (§4.4)."""
    count = draw(st.integers(101, 130))
    nodes = tuple(
        NodeSpecGen(f"node-{i:03d}", cpu=4000, memory=16 * GI, ephemeral=None, pods=110)
        for i in range(count)
    )
    free = draw(st.lists(st.integers(0, 99), max_size=3))  # 0-3 unprotected, often none early
    free_late = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=3))
    unprotected = {i for i in free if draw(st.booleans())} | set(free_late)
    bound = tuple(
        PodSpecGen(
            name=f"fill-{i:03d}",
            containers=({"cpu": 4000, "memory": GI},),
            priority=draw(st.sampled_from([0, 1])) if i % 7 == 0 else 0,
            labels=(("app", "y" if i in unprotected else "x"),),
            node=node.name,
            start=-100,
        )
        for i, node in enumerate(nodes)
    )
    pending = tuple(
        PodSpecGen(name=f"pending-{i}", containers=({"cpu": 4000},), priority=100)
        for i in range(draw(st.integers(1, 3)))
    )
    return ScenarioSpec(
        nodes=nodes,
        bound=bound,
        pending=pending,
        pdbs=(PdbSpecGen(name="pdb-x", app="x", allowed=0),),
        seed=draw(st.integers(0, 2**16)),
    )

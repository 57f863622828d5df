"""The control plane's components wired to one ``ApiService``, on any clock and store.

Shared composition for both drivers: ``sim.cluster.SimCluster`` builds it on a
``SimClock`` and a ``MemoryStore`` and hands it to the discrete-event engine;
``serve.server`` builds it on the ``RealClock`` and a ``SqliteStore`` and drives it with
the real-time loop of ``serve.driver``. It holds the ``ApiService`` (with the default
admission chain), the scheduler built from the scheduler configuration, the ReplicaSet,
ReplicationController, Deployment, Job, CronJob, HorizontalPodAutoscaler, DaemonSet,
StatefulSet, disruption, garbage-collection, volume (PV binder, simulated provisioner,
PVC/PV protection, ephemeral volume), pod-GC, resource-quota, node lifecycle, taint
eviction and TTL controllers, the shared informers, and one simulated kubelet per Node
(``KubeletFleet``), with node leases in serve. Every component gets its own
``random.Random`` derived from the seed, so adding randomness to one component never
shifts another's choices.

It builds objects only; it never runs anything (the driver calls ``start`` and then
pumps ``components``). No clock reads, no threads.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Final

from kubeprio.admission import plugins
from kubeprio.admission.certificates import SignerAuthorizer
from kubeprio.admission.defaults import WebhookSetup, default_chain
from kubeprio.admission.defaulttolerationseconds import DefaultTolerations
from kubeprio.admission.policyauthorizer import PolicyAuthorizer
from kubeprio.admission.resourcequota import LimitedResource
from kubeprio.admission.webhookcall import WebhookCaller, WebhookClient
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.coordination import Lease
from kubeprio.api.core import Node, Pod
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.ingress import Ingress
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.secret import Secret
from kubeprio.api.service import Service
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.storageclass import StorageClass
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.clock import Clock
from kubeprio.controllers.cronjob import CronJobController
from kubeprio.controllers.daemonset import DaemonSetsController
from kubeprio.controllers.deployment import DeploymentController
from kubeprio.controllers.disruption import DisruptionController
from kubeprio.controllers.ephemeralvolume import EphemeralVolumeController
from kubeprio.controllers.garbagecollector import GarbageCollector
from kubeprio.controllers.horizontal import HorizontalController
from kubeprio.controllers.job import JobController
from kubeprio.controllers.nodelifecycle import NodeLifecycleConfig, NodeLifecycleController
from kubeprio.controllers.persistentvolume import PersistentVolumeController
from kubeprio.controllers.podgc import PodGCController
from kubeprio.controllers.provisioner import SimulatedProvisioner
from kubeprio.controllers.replicaset import ReplicaSetController
from kubeprio.controllers.replication import ReplicationManager
from kubeprio.controllers.resourcequota import ResourceQuotaController
from kubeprio.controllers.statefulset import StatefulSetController
from kubeprio.controllers.tainteviction import TaintEvictionController
from kubeprio.controllers.ttl import TtlController
from kubeprio.controllers.volumeprotection import PVCProtectionController, PVProtectionController
from kubeprio.kubelet.kubelet import KubeletConfig
from kubeprio.kubelet.nodelease import NodeLeases
from kubeprio.kubelet.outage import NodeOutages
from kubeprio.kubelet.router import PodRouter
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.scheduler.setup import new_scheduler
from kubeprio.sim.drive import Due, Informers, KubeletFleet
from kubeprio.sim.engine import Driven
from kubeprio.store.interface import Store

NODE_INDEX: Final = "spec.nodeName"
"""Pod informer index: the pods bound to a node (a starting kubelet lists them)."""


def derived_rng(seed: int, component: str) -> random.Random:
    """A generator for one component, independent of every other's."""
    return random.Random(f"{seed}:{component}")


class ControlPlane:
    """API service, informers, scheduler, controllers and kubelets over one store."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        seed: int = 0,
        scheduler_config: SchedulerConfig | None = None,
        kubelet_config: KubeletConfig | None = None,
        retry_unschedulable_on_timer: bool = False,
        auto_create_namespaces: bool = True,
        pod_gc_of_unseen_nodes: bool = True,
        node_leases: bool = False,
        node_lifecycle: NodeLifecycleConfig | None = None,
        limited_resources: Sequence[LimitedResource] = (),
        service_account_rng: random.Random | None = None,
        admission_plugins: plugins.EnabledPlugins = plugins.DEFAULT,
        default_tolerations: DefaultTolerations | None = None,
        stopwatch: Callable[[], float] | None = None,
        authorize_signer: SignerAuthorizer | None = None,
        webhook_caller: WebhookCaller | None = None,
        authorize_policy: PolicyAuthorizer | None = None,
    ) -> None:
        """Wire the components.

        ``retry_unschedulable_on_timer``: upstream's 5-minute flush of unschedulable pods
        (on in ``serve``; off in simulation, where a retry against an unchanged cluster
        only adds noise). ``auto_create_namespaces``: create a namespace on first use
        (simulation of dumps without Namespace objects; off in ``serve``, as upstream).
        ``pod_gc_of_unseen_nodes``: pod GC deletes pods bound to nodes it never saw, as
        upstream (off in simulation: a dump may leave out nodes that existed).
        ``node_leases``: kubelets keep their Leases in ``kube-node-lease`` renewed
        (``kubelet.nodelease``; on in ``serve``, where ``kubectl describe node`` shows them;
        off in simulation, where only kubelets annotated ``kubeprio.io/fail-at`` keep one,
        and only their nodes are judged by the node lifecycle controller).
        ``node_lifecycle``: kube-controller-manager's node lifecycle flags.
        ``limited_resources``: the ResourceQuota admission plugin's ``limitedResources``
        (``serve --admission-control-config-file``).
        ``service_account_rng``: run the ServiceAccount admission plugin, drawing its token
        volumes' name suffixes from this generator (``serve``, which also runs the service
        account controller; simulations leave it out: ``admission.defaults``).
        ``admission_plugins``: the admission plugins that are on
        (``--enable-admission-plugins`` / ``--disable-admission-plugins``).
        ``default_tolerations``: the DefaultTolerationSeconds plugin's seconds
        (``--default-not-ready-toleration-seconds`` and
        ``--default-unreachable-toleration-seconds``).
        ``stopwatch``: what times scheduling attempts for the scheduler's metrics (``serve``
        passes a monotonic wall clock; simulations keep the default, the injected clock, so
        nothing real-time reaches a run).
        ``authorize_signer``: the authorizer's answer for the ``signers`` resource, which
        turns on the CertificateApproval and CertificateSigning plugins (``serve``).
        ``webhook_caller``: run the MutatingAdmissionWebhook and ValidatingAdmissionWebhook
        plugins, posting AdmissionReviews through it (``serve``; simulations call no one).
        ``authorize_policy``: the authorizer's answer to ValidatingAdmissionPolicies'
        ``authorizer`` checks (``serve``; simulations have no users and allow them).
        """
        self.seed = seed
        self.clock = clock
        self.store = store
        self.api = ApiService(
            store,
            clock=clock,
            rng=derived_rng(seed, "apiserver"),
            auto_create_namespaces=auto_create_namespaces,
        )
        self.api.admission = default_chain(
            self.api.listers,
            limited_resources,
            service_account_rng=service_account_rng,
            enabled=admission_plugins,
            default_tolerations=default_tolerations,
            authorize_signer=authorize_signer,
            authorize_policy=authorize_policy,
            webhooks=(
                None
                if webhook_caller is None
                else WebhookSetup(
                    self.api.listers,
                    WebhookClient(
                        webhook_caller, self.api.listers.services, self.api.listers.endpoints
                    ),
                )
            ),
        )
        api = self.api
        self.pods: Informer[Pod] = Informer(api, Pod)
        self.nodes: Informer[Node] = Informer(api, Node)
        self.replicasets: Informer[ReplicaSet] = Informer(api, ReplicaSet)
        self.replication_controllers: Informer[ReplicationController] = Informer(
            api, ReplicationController
        )
        self.deployments: Informer[Deployment] = Informer(api, Deployment)
        self.jobs: Informer[Job] = Informer(api, Job)
        self.cron_jobs: Informer[CronJob] = Informer(api, CronJob)
        self.hpas: Informer[HorizontalPodAutoscaler] = Informer(api, HorizontalPodAutoscaler)
        self.daemonsets: Informer[DaemonSet] = Informer(api, DaemonSet)
        self.revisions: Informer[ControllerRevision] = Informer(api, ControllerRevision)
        self.statefulsets: Informer[StatefulSet] = Informer(api, StatefulSet)
        self.pdbs: Informer[PodDisruptionBudget] = Informer(api, PodDisruptionBudget)
        # Kinds no controller here acts on, held for the quota controller to count (and for
        # serve's endpoints, service account and root CA controllers to read).
        self.services: Informer[Service] = Informer(api, Service)
        self.config_maps: Informer[ConfigMap] = Informer(api, ConfigMap)
        self.secrets: Informer[Secret] = Informer(api, Secret)
        self.service_accounts: Informer[ServiceAccount] = Informer(api, ServiceAccount)
        self.quotas: Informer[ResourceQuota] = Informer(api, ResourceQuota)
        self.claims: Informer[PersistentVolumeClaim] = Informer(api, PersistentVolumeClaim)
        self.volumes: Informer[PersistentVolume] = Informer(api, PersistentVolume)
        self.storage_classes: Informer[StorageClass] = Informer(api, StorageClass)
        self.ingresses: Informer[Ingress] = Informer(api, Ingress)
        self.network_policies: Informer[NetworkPolicy] = Informer(api, NetworkPolicy)
        self.router = PodRouter()
        # Before the kubelets and leases: they read the outages in their node handlers.
        self.outages = NodeOutages(clock, self.nodes)
        self.pods.add_index(
            NODE_INDEX, lambda p: [p.spec.node_name] if p.spec and p.spec.node_name else []
        )
        self.pods.add_handler(self.router)
        self.fleet = KubeletFleet(
            api,
            clock=clock,
            rng=derived_rng(seed, "kubelet"),
            router=self.router,
            config=kubelet_config or KubeletConfig(register_node=False),
            bound_pods=lambda name: self.pods.by_index(NODE_INDEX, name),
            outages=self.outages,
        )
        self.scheduler = new_scheduler(
            api,
            clock=clock,
            rng=derived_rng(seed, "scheduler"),
            config=scheduler_config,
            retry_unschedulable_on_timer=retry_unschedulable_on_timer,
            stopwatch=stopwatch,
        )

        def rng(name: str) -> random.Random:
            return derived_rng(seed, name)

        # Every kubelet keeps its Lease in serve; a simulation keeps those that can fail.
        self.leases: Informer[Lease] = Informer(api, Lease)
        self.node_leases = NodeLeases(
            api,
            clock=clock,
            rng=rng("nodelease"),
            nodes=self.nodes,
            outages=self.outages,
            keeps_lease=None if node_leases else self.outages.may_fail,
        )
        lease_informers: list[Informer[Any]] = [self.leases] if node_leases else []

        outages = self.outages
        self.node_lifecycle = NodeLifecycleController(
            api,
            clock=clock,
            nodes=self.nodes,
            pods=self.pods,
            leases=self.leases,
            config=node_lifecycle,
            assume_healthy=None if node_leases else (lambda node: not outages.may_fail(node)),
        )
        self.taint_eviction = TaintEvictionController(
            api, clock=clock, pods=self.pods, nodes=self.nodes
        )

        self.hpa = HorizontalController(
            api,
            clock=clock,
            rng=rng("horizontal"),
            hpas=self.hpas,
            pods=self.pods,
            nodes=self.nodes,
        )
        self.controllers: list[Any] = [
            ReplicaSetController(
                api,
                clock=clock,
                rng=rng("replicaset"),
                pods=self.pods,
                replicasets=self.replicasets,
            ),
            ReplicationManager(
                api,
                clock=clock,
                rng=rng("replication"),
                pods=self.pods,
                controllers=self.replication_controllers,
            ),
            DeploymentController(
                api,
                clock=clock,
                rng=rng("deployment"),
                deployments=self.deployments,
                replicasets=self.replicasets,
                pods=self.pods,
            ),
            JobController(api, clock=clock, rng=rng("job"), jobs=self.jobs, pods=self.pods),
            CronJobController(
                api, clock=clock, rng=rng("cronjob"), cron_jobs=self.cron_jobs, jobs=self.jobs
            ),
            self.hpa,
            DaemonSetsController(
                api,
                clock=clock,
                rng=rng("daemonset"),
                daemonsets=self.daemonsets,
                revisions=self.revisions,
                pods=self.pods,
                nodes=self.nodes,
            ),
            StatefulSetController(
                api,
                clock=clock,
                rng=rng("statefulset"),
                statefulsets=self.statefulsets,
                revisions=self.revisions,
                pods=self.pods,
                claims=self.claims,
            ),
            DisruptionController(
                api,
                clock=clock,
                rng=rng("disruption"),
                pods=self.pods,
                pdbs=self.pdbs,
                replicasets=self.replicasets,
                deployments=self.deployments,
                statefulsets=self.statefulsets,
                replication_controllers=self.replication_controllers,
            ),
            GarbageCollector(
                api,
                clock=clock,
                rng=rng("gc"),
                # A Lease is owned by its Node: deleting the Node lets the collector delete it.
                # A StatefulSet's claim is owned by the set or, scaled away, by its pod
                # (persistentVolumeClaimRetentionPolicy Delete).
                owners=[
                    self.deployments,
                    self.replicasets,
                    self.replication_controllers,
                    self.jobs,
                    self.cron_jobs,
                    self.daemonsets,
                    self.statefulsets,
                    self.pods,
                    *([self.nodes] if lease_informers else []),
                ],
                dependents=[
                    self.replicasets,
                    self.pods,
                    self.revisions,
                    self.jobs,
                    self.claims,
                    *lease_informers,
                ],
            ),
            PodGCController(
                api,
                clock=clock,
                pods=self.pods,
                nodes=self.nodes,
                orphans_of_unseen_nodes=pod_gc_of_unseen_nodes,
            ),
            self.node_lifecycle,
            self.taint_eviction,
            TtlController(api, clock=clock, rng=rng("ttl"), nodes=self.nodes),
            PVCProtectionController(
                api, clock=clock, rng=rng("pvcprotection"), claims=self.claims, pods=self.pods
            ),
            PVProtectionController(api, clock=clock, rng=rng("pvprotection"), volumes=self.volumes),
            EphemeralVolumeController(
                api, clock=clock, rng=rng("ephemeralvolume"), pods=self.pods, claims=self.claims
            ),
            PersistentVolumeController(
                api,
                clock=clock,
                rng=rng("persistentvolume"),
                claims=self.claims,
                volumes=self.volumes,
                classes=self.storage_classes,
            ),
            SimulatedProvisioner(
                api,
                clock=clock,
                rng=rng("provisioner"),
                claims=self.claims,
                volumes=self.volumes,
                classes=self.storage_classes,
            ),
        ]
        counted: list[Informer[Any]] = [
            self.services,
            self.config_maps,
            self.secrets,
            self.service_accounts,
            self.deployments,
            self.replicasets,
            self.replication_controllers,
            self.jobs,
            self.cron_jobs,
            self.hpas,
            self.daemonsets,
            self.statefulsets,
            self.revisions,
            self.pdbs,
            self.claims,
            self.ingresses,
            self.network_policies,
            *lease_informers,
        ]
        self.quota_controller = ResourceQuotaController(
            api,
            clock=clock,
            rng=rng("resourcequota"),
            pods=self.pods,
            quotas=self.quotas,
            counted=counted,
        )
        self.controllers.append(self.quota_controller)
        self.informers = Informers(
            [
                self.nodes,
                self.pdbs,
                self.deployments,
                self.replicasets,
                self.replication_controllers,
                self.jobs,
                self.daemonsets,
                self.statefulsets,
                self.revisions,
                self.pods,
                self.services,
                self.config_maps,
                self.secrets,
                self.service_accounts,
                self.quotas,
                self.cron_jobs,
                self.hpas,
                self.leases,
                self.claims,
                self.volumes,
                self.storage_classes,
                self.ingresses,
                self.network_policies,
            ]
        )

    def attach_fleet(self) -> None:
        """Start kubelets for Nodes: register the fleet on the node informer.

        Separate from ``__init__`` so a composition root can register its own node
        handlers first (the simulation's recorder sees a Node before its kubelet does).
        """
        self.nodes.add_handler(self.fleet)

    @property
    def components(self) -> list[Driven]:
        """What a driver settles, in order: informers, scheduler, controllers, kubelets."""
        return [
            self.informers,
            self.scheduler,
            *self._controller_components(),
            self.fleet,
            Due(self.node_leases, self.clock),
        ]

    def _controller_components(self) -> list[Driven]:
        """The controllers as the driver settles them: each behind its own ``Due``."""
        return [Due(c, self.clock) for c in self.controllers]

    def start(self) -> None:
        """List and watch everything; components start working at the first settle."""
        self.informers.start()
        self.scheduler.start()

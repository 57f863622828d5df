"""``kubeprio serve``'s composition root: store, control plane, HTTPS server, real time.

``run(options)`` opens the SQLite store in the data directory (WAL, ``kubeprio.db``),
wires the control plane (``sim.controlplane.ControlPlane``: API service with admission,
the ServiceAccount plugin included, with its own seeded generator for token volume names,
scheduler retrying unschedulable pods on upstream's 5-minute timer, controllers, one
simulated kubelet per Node), creates what the preset and the node options ask for
(only what is missing, so a restart keeps the stored state), then runs on one asyncio
loop:

* uvicorn serving ``apiserver.http.create_app`` over TLS (``serve.pki``), with bearer
  tokens from ``DATA_DIR/tokens.csv`` (``apiserver.authn``) or service account tokens
  (``apiserver.serviceaccountauthn``, signed with ``DATA_DIR/pki/sa.key`` by the
  ``serviceaccounts/token`` subresource, ``apiserver.tokenrequest``) and the authorizer:
  admins, the tenant policy (``apiserver.authz``), then RBAC (``apiserver.rbac``, with
  the bootstrap roles of ``apiserver.rbacbootstrap`` and the escalation guard of
  ``apiserver.rbacescalation``);
* the ``serve.driver.RealTimeDriver`` settling the components on the ``RealClock``,
  with serve's own controllers beside the shared ones (resource quota among those):
  endpoints, service accounts (``default`` in every namespace), the tokens controller
  (filling the service account token Secrets users create, signed with ``sa.key``), the
  root CA publisher (``kube-root-ca.crt`` in every namespace, holding the CA of
  ``serve.pki``), the ClusterRole aggregation controller, and the API Priority and
  Fairness configuration (``apiserver.flowcontrolconfig``: bootstrap FlowSchemas and
  priority levels, ``Dangling`` conditions, the ``X-Kubernetes-PF-*`` headers).

As soon as the socket listens it renders the service account issuer's discovery documents
for that address (``apiserver.issuerdiscovery``), writes ``DATA_DIR/kubeconfig`` and prints
``export KUBECONFIG=...``. SIGINT/SIGTERM stop it gracefully: the driver stops, open
watches end (clients see their stream close), uvicorn finishes the requests in flight,
and the store closes (checkpointing its WAL). ``kill -9`` loses nothing acknowledged
(docs/storage.md). Only this module imports uvicorn (an import-linter contract).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
import os
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import IO, Any, Final
from urllib.parse import urlsplit

import uvicorn

from kubeprio.admission import plugins
from kubeprio.admission.chain import UserInfo
from kubeprio.admission.defaulttolerationseconds import DefaultTolerations
from kubeprio.admission.resourcequota import LimitedResource
from kubeprio.api import errors
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.celauthz import AuthorizationAnswer, AuthorizationRequest
from kubeprio.api.certificates import GROUP as CERTIFICATES_GROUP
from kubeprio.api.certificates import CertificateSigningRequest
from kubeprio.api.componentstatus import ComponentCondition
from kubeprio.api.core import Namespace, Node
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.rbac import ClusterRole
from kubeprio.apiserver import (
    componentstatus,
    issuerdiscovery,
    kubernetesservice,
    policyauthz,
    rbacbootstrap,
)
from kubeprio.apiserver.authn import TokenAuthenticator, UnionAuthenticator
from kubeprio.apiserver.authz import Attributes, TenantAuthorizer
from kubeprio.apiserver.autoregister import APIServiceRegistration
from kubeprio.apiserver.controllerwebhooks import ControllerWebhookWrites
from kubeprio.apiserver.crinstances import StoredCustomResources
from kubeprio.apiserver.crscaletargets import CustomResourceScales
from kubeprio.apiserver.eventttl import DEFAULT_EVENT_TTL, EventExpiry
from kubeprio.apiserver.flowclassifier import FlowClassifier
from kubeprio.apiserver.flowcontrolconfig import FlowControlConfiguration
from kubeprio.apiserver.groupcommit import GroupCommit
from kubeprio.apiserver.http import KubeApp, create_app
from kubeprio.apiserver.legacytokens import LegacyTokenAuthenticator, LegacyTokenGenerator
from kubeprio.apiserver.rbac import RbacAuthorizer, RbacIndex, UnionAuthorizer
from kubeprio.apiserver.rbacescalation import EscalationGuard
from kubeprio.apiserver.requestmetrics import RequestMetrics
from kubeprio.apiserver.serviceaccountauthn import (
    ServiceAccountTokenAuthenticator,
    StoreTokenGetter,
)
from kubeprio.apiserver.serviceranges import DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR
from kubeprio.apiserver.tokenrequest import DEFAULT_ISSUER, TokenIssuer
from kubeprio.apiserver.tokensigning import PublicKeys, SigningKey, TokenSigner
from kubeprio.apiserver.webhookwaits import WebhookWaits
from kubeprio.apiserver.x509authn import ClientCertAuthenticator
from kubeprio.client.informer import Informer
from kubeprio.clock import RealClock, rfc3339
from kubeprio.controllers.base import Controller
from kubeprio.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kubeprio.controllers.crdfinalizer import CrdFinalizerController
from kubeprio.controllers.crdnaming import CrdNamingController
from kubeprio.controllers.csrsigning import CsrSigningController
from kubeprio.controllers.endpoints import EndpointsController
from kubeprio.controllers.nodelifecycle import NodeLifecycleConfig
from kubeprio.controllers.rootcacert import RootCACertPublisher
from kubeprio.controllers.serviceaccount import ServiceAccountsController
from kubeprio.controllers.serviceaccounttokens import TokensController
from kubeprio.kubelet.kubelet import KubeletConfig, register_node
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.serve import credentials, pki, presets
from kubeprio.serve.clientcerts import ClientCertProtocol
from kubeprio.serve.compaction import PeriodicCompaction
from kubeprio.serve.driver import RealTimeDriver
from kubeprio.serve.metrics import MetricsPage
from kubeprio.serve.webhookclient import HttpsWebhookCaller
from kubeprio.sim.controlplane import NODE_INDEX, ControlPlane, derived_rng
from kubeprio.sim.drive import Due, Informers
from kubeprio.sim.engine import Driven
from kubeprio.store.sqlite import SqliteStore

DATABASE: Final = "kubeprio.db"
SHUTDOWN_GRACE: Final = 5
"""uvicorn's limit on requests still running at shutdown."""
KEEP_ALIVE: Final = 90
"""Seconds an idle keep-alive connection stays open (Go's default transport idle timeout;
uvicorn's 5 s default closes the connections of clients that pause between requests)."""
IDLE_GRACE: Final = 1.0
"""After this, connections still open at shutdown are aborted (see ``_abort_connections``)."""
LOG: Final = logging.getLogger("kubeprio.serve")

_UPGRADE_WARNINGS: Final = ("Unsupported upgrade request.", "No supported WebSocket library")
"""What uvicorn logs for every upgrade request it leaves to the application; kubeprio
answers them (``apiserver.podstreams``), so they are not a problem worth a log line."""


def _quiet_upgrade_warnings(record: logging.LogRecord) -> bool:
    """A ``logging`` filter: False drops uvicorn's upgrade warnings, True keeps the rest."""
    return not record.getMessage().startswith(_UPGRADE_WARNINGS)


@dataclasses.dataclass(frozen=True, slots=True)
class ServeOptions:
    """What ``kubeprio serve`` was asked for (``cli.serve`` parses the command line)."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 6443
    nodes: int = 3
    node_cpu: str = "4"
    node_memory: str = "16Gi"
    node_objects: Sequence[Any] = ()
    """Nodes from ``--nodes-file`` (decoded); when given, ``nodes`` is not used."""
    preset: str | None = None
    scheduler_config: SchedulerConfig | None = None
    seed: int | None = None
    event_ttl: float = DEFAULT_EVENT_TTL
    """Seconds an Event lives after its last write (kube-apiserver ``--event-ttl``)."""
    etcd_compaction_interval: float = 0.0
    """Seconds between watch-history compactions (kube-apiserver
    ``--etcd-compaction-interval``); 0: never (``serve.compaction``)."""
    service_cidr: str = DEFAULT_SERVICE_CIDR
    """Cluster IPs of Services (kube-apiserver ``--service-cluster-ip-range``)."""
    node_port_range: str = DEFAULT_NODE_PORT_RANGE
    """Node ports of NodePort Services (kube-apiserver ``--service-node-port-range``)."""
    limited_resources: Sequence[LimitedResource] = ()
    """The ResourceQuota admission plugin's ``limitedResources``."""
    node_lifecycle: NodeLifecycleConfig = dataclasses.field(default_factory=NodeLifecycleConfig)
    """kube-controller-manager's node lifecycle flags (``--node-monitor-grace-period``, ...)."""
    default_tolerations: DefaultTolerations = dataclasses.field(default_factory=DefaultTolerations)
    """kube-apiserver's ``--default-not-ready-toleration-seconds`` and
    ``--default-unreachable-toleration-seconds`` (DefaultTolerationSeconds)."""
    admission_plugins: plugins.EnabledPlugins = plugins.DEFAULT
    """The admission plugins that are on (kube-apiserver's ``--enable-admission-plugins`` and
    ``--disable-admission-plugins``); ``NamespaceAutoProvision`` among them creates a
    missing namespace on first use."""
    service_account_issuers: Sequence[str] = (DEFAULT_ISSUER,)
    """kube-apiserver's ``--service-account-issuer`` (repeatable): the first is written into
    new tokens, all are accepted."""
    api_audiences: Sequence[str] = ()
    """``--api-audiences``; empty means the issuers, as upstream defaults it."""
    service_account_max_token_expiration: int = 0
    """``--service-account-max-token-expiration`` in seconds; 0: no limit."""
    service_account_extend_token_expiration: bool = True
    """``--service-account-extend-token-expiration``."""
    service_account_jwks_uri: str = ""
    """``--service-account-jwks-uri``: the ``jwks_uri`` of the issuer's OIDC configuration;
    empty means ``https://<listening address>/openid/v1/jwks``."""


class _Server(uvicorn.Server):
    """uvicorn without its signal handling: ``run`` owns SIGINT/SIGTERM.

    uvicorn re-raises captured signals after shutting down, which would kill the process
    before the store is closed.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def _abort_connections(server: uvicorn.Server) -> None:
    """Abort the connections that outlived the shutdown's grace period.

    They are idle keep-alive connections of clients that are still running but not
    reading (a Python client holding its pool): closing TLS politely waits for the
    peer's close_notify, up to asyncio's 30 s SSL shutdown timeout. uvicorn keeps its
    connections' protocols in ``server_state.connections``; each has its ``transport``.
    """
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        if transport is not None:
            transport.abort()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so; without it
    # every response pays Nagle's algorithm against the client's delayed ACK (40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def server_url(host: str, port: int) -> str:
    """The URL clients use (a wildcard bind is reached on 127.0.0.1)."""
    if host in pki.WILDCARD_HOSTS:
        host = "127.0.0.1"
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def _create_nodes(plane: ControlPlane, options: ServeOptions) -> list[str]:
    """Create the missing Nodes (from the manifest, else ``node-1..N``); return their names."""
    created: list[str] = []
    api = plane.api
    if options.node_objects:
        for obj in options.node_objects:
            try:
                api.create_object(obj)
            except errors.AlreadyExistsError:
                continue
            created.append(obj.metadata.name)
        return created
    capacity = {
        "cpu": options.node_cpu,
        "memory": options.node_memory,
        "ephemeral-storage": "100Gi",
        "pods": "110",
    }
    for index in range(1, options.nodes + 1):
        name = f"node-{index}"
        try:
            api.get(Node, name)
        except errors.NotFoundError:
            register_node(api, name, clock=plane.clock, capacity=capacity)
            created.append(name)
    return created


def _seed(options: ServeOptions) -> int:
    # A fresh seed per start: uids and generated names continue a stored history, so
    # replaying a fixed sequence after a restart would collide with existing names.
    return options.seed if options.seed is not None else int.from_bytes(os.urandom(8), "big")


def advertised_address(host: str) -> str:
    """The address the ``kubernetes`` Service's endpoints list (a wildcard bind: loopback)."""
    try:
        return str(ipaddress.ip_address(host)) if host not in pki.WILDCARD_HOSTS else "127.0.0.1"
    except ValueError:
        return "127.0.0.1"


class Serving:
    """One running server: what ``run`` built, for the shutdown path and for tests."""

    def __init__(self, options: ServeOptions, out: IO[str]) -> None:
        self.options = options
        self.out = out
        self.clock = RealClock()
        data_dir = options.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.store = SqliteStore(data_dir / DATABASE)
        seed = _seed(options)
        service_account_rng = derived_rng(seed, "serviceaccount-admission")
        try:
            self.plane = ControlPlane(
                self.store,
                clock=self.clock,
                seed=seed,
                scheduler_config=options.scheduler_config,
                retry_unschedulable_on_timer=True,
                auto_create_namespaces=plugins.NAMESPACE_AUTO_PROVISION
                in options.admission_plugins,
                node_leases=True,
                node_lifecycle=options.node_lifecycle,
                # kubectl describe pod shows a real kubelet's Pulled/Created/Started and,
                # on deletion, Killing events; learners read them there.
                kubelet_config=KubeletConfig(register_node=False, container_events=True),
                limited_resources=options.limited_resources,
                admission_plugins=options.admission_plugins,
                default_tolerations=options.default_tolerations,
                service_account_rng=service_account_rng,
                stopwatch=time.perf_counter,
                authorize_signer=self._authorize_signer,
                authorize_policy=self._authorize_policy_check,
                webhook_caller=HttpsWebhookCaller(),
            )
            self.plane.attach_fleet()
            self.plane.api.use_service_ranges(options.service_cidr, options.node_port_range)
            self._wire_endpoints(seed)
            self.event_expiry = EventExpiry(self.store, clock=self.clock, ttl=options.event_ttl)
            self.compaction = (
                [
                    PeriodicCompaction(
                        self.store, clock=self.clock, interval=options.etcd_compaction_interval
                    )
                ]
                if options.etcd_compaction_interval > 0
                else []
            )
            users = presets.preset_users(options.preset) if options.preset else []
            if options.preset:
                presets.apply_preset(self.plane.api, options.preset)
            _create_nodes(self.plane, options)
            self.pki = pki.ensure_pki(data_dir / "pki", host=options.host, now=self.clock.now())
            self._wire_namespace_controllers(seed, self.pki.ca_cert.read_bytes())
            # The rbac/bootstrap-roles post-start hook (upstream runs it as the server starts).
            rbacbootstrap.ensure(self.plane.api)
            self._wire_rbac(seed)
            self.tokens = credentials.ensure_tokens(data_dir / "tokens.csv", users=users)
            signing_key = pki.ensure_service_account_key(self.pki.directory)
            signer = TokenSigner(options.service_account_issuers[0], signing_key)
            self._wire_tokens_controller(seed, signing_key)
            self._wire_csr_signing(seed)
        except BaseException:
            self.store.close()
            raise
        audiences = tuple(options.api_audiences or options.service_account_issuers)
        self.token_issuer = TokenIssuer(
            signer,
            api_audiences=audiences,
            rng=derived_rng(seed, "serviceaccount-token"),
            max_expiration_seconds=options.service_account_max_token_expiration,
            extend_expiration=options.service_account_extend_token_expiration,
        )
        public_keys = PublicKeys([signer.public_key])
        token_getter = StoreTokenGetter(self.store)
        legacy_tokens = LegacyTokenAuthenticator(
            keys=public_keys,
            api_audiences=audiences,
            getter=token_getter,
            secrets=self.plane.api,
            clock=self.clock,
        )
        service_account_tokens = ServiceAccountTokenAuthenticator(
            issuers=options.service_account_issuers,
            keys=public_keys,
            api_audiences=audiences,
            getter=token_getter,
            clock=self.clock,
        )
        requests = RequestMetrics()
        self.metrics = MetricsPage.for_serve(
            scheduler=self.plane.scheduler, requests=requests, store=self.store
        )
        # Upstream's order: the token file, then secret-based and bound service account tokens.
        authenticator = UnionAuthenticator(
            [
                TokenAuthenticator(self.tokens, api_audiences=audiences),
                legacy_tokens,
                service_account_tokens,
            ]
        )
        self.app = create_app(
            self.plane.api,
            authenticator=authenticator,
            token_reviewer=authenticator,
            authorizer=self.authorizer,
            clock=self.clock,
            request_metrics=requests,
            metrics=self.metrics.render,
            token_issuer=self.token_issuer,
            # NodeMetrics sum a node's pods through the plane's index, not a scan of them all.
            pods_on_node=lambda name: self.plane.pods.by_index(NODE_INDEX, name),
            # --client-ca-file: kubeadm points it at the cluster CA, which signs CSRs too.
            cert_authenticator=ClientCertAuthenticator(
                self.pki.ca_cert.read_bytes(), clock=self.clock
            ),
        )
        self.kube: KubeApp = self.app.state.kube
        # The HPA controller can target custom kinds with a scale subresource.
        self.plane.hpa.custom_scales = CustomResourceScales(self.kube.custom, self.kube.custom_rest)
        # Writes wait on admission webhooks off the event loop; a replayed write draws
        # the same names and uids from the generators the write path uses.
        self.webhook_waits = WebhookWaits(
            self.plane.api, generators=(self.plane.api.rng, service_account_rng)
        )
        self.kube.webhook_waits = self.webhook_waits
        # HTTP writes of one loop turn share a COMMIT; replies wait for it.
        self.group_commit = GroupCommit(self.store)
        self.kube.group_commit = self.group_commit
        # The in-process controllers' writes wait on webhooks off the loop too: they are
        # retried once the answers are in (apiserver.controllerwebhooks).
        self.controller_writes = ControllerWebhookWrites(self.plane.api, self.webhook_waits)
        self.plane.api.controller_writes = self.controller_writes
        # Quotas count custom resources too (count/<plural>.<group>), also those the CRD
        # finalizer deletes.
        self.plane.quota_controller.count_custom(self.kube.custom_counts)
        self.crd_instances.counts = self.kube.custom_counts
        # API Priority and Fairness: bootstrap objects, Dangling conditions, PF headers.
        self.flow_config = FlowControlConfiguration(
            self.plane.api, clock=self.clock, on_classifier=self._use_classifier
        )
        # The aggregator's autoregistration: local APIServices, CRD ones, availability.
        self.api_services = APIServiceRegistration(self.plane.api, clock=self.clock)
        self.signer = signer
        self.stop = asyncio.Event()
        self.url = ""

    def _use_classifier(self, classifier: FlowClassifier) -> None:
        self.kube.flow_classifier = classifier

    def _wire_endpoints(self, seed: int) -> None:
        """The endpoints controller over its own informers and the plane's Service and pod
        informers; quotas count Endpoints and EndpointSlices too."""
        plane = self.plane
        api = plane.api
        endpoints: Informer[Endpoints] = Informer(api, Endpoints)
        slices: Informer[EndpointSlice] = Informer(api, EndpointSlice)
        self.endpoints_controller = EndpointsController(
            api,
            clock=self.clock,
            rng=derived_rng(seed, "endpoints"),
            services=plane.services,
            pods=plane.pods,
            endpoints=endpoints,
            slices=slices,
        )
        plane.quota_controller.count(endpoints)
        plane.quota_controller.count(slices)
        # Namespaces: read by the service account controller and the root CA publisher.
        self.namespaces: Informer[Namespace] = Informer(api, Namespace)
        # The informers only serve's controllers read.
        self.serve_informers = Informers([endpoints, slices, self.namespaces])

    def _authorize_signer(self, user: UserInfo, verb: str, name: str) -> bool:
        """The authorizer's answer for ``verb`` on the certificates.k8s.io ``signers``
        named ``name`` (the certificate admission plugins; set up by ``_wire_rbac``)."""
        return self.authorizer.authorize(
            Attributes(user, verb, CERTIFICATES_GROUP, "signers", name=name)
        )

    def _authorize_policy_check(
        self, user: UserInfo | None, check: AuthorizationRequest
    ) -> AuthorizationAnswer:
        """The authorizer's answer to a policy's CEL ``authorizer`` check
        (``apiserver.policyauthz``; ``self.authorizer`` is set up by ``_wire_rbac``)."""
        return policyauthz.answer(self.authorizer, user, check)

    def _wire_rbac(self, seed: int) -> None:
        """The authorization chain (admins, the tenant policy, then RBAC), the escalation
        guard on RBAC writes, and the ClusterRole aggregation controller."""
        api = self.plane.api
        index = RbacIndex(self.store)
        self.authorizer = UnionAuthorizer(TenantAuthorizer(api.listers), RbacAuthorizer(index))
        api.write_guard = EscalationGuard(self.authorizer, index)
        cluster_roles: Informer[ClusterRole] = Informer(api, ClusterRole)
        self.aggregation_controller = ClusterRoleAggregationController(
            api,
            clock=self.clock,
            rng=derived_rng(seed, "clusterrole-aggregation"),
            cluster_roles=cluster_roles,
        )
        self.serve_informers.add(cluster_roles)

    def _wire_namespace_controllers(self, seed: int, root_ca: bytes) -> None:
        """What every namespace holds on a real cluster: the ``default`` ServiceAccount
        and the ``kube-root-ca.crt`` ConfigMap."""
        api = self.plane.api
        self.service_account_controller = ServiceAccountsController(
            api,
            clock=self.clock,
            rng=derived_rng(seed, "serviceaccount"),
            namespaces=self.namespaces,
            service_accounts=self.plane.service_accounts,
        )
        self._wire_crd_naming_controller(seed)
        self.root_ca_publisher = RootCACertPublisher(
            api,
            clock=self.clock,
            rng=derived_rng(seed, "rootcacert"),
            root_ca=root_ca,
            namespaces=self.namespaces,
            config_maps=self.plane.config_maps,
        )

    def _wire_crd_naming_controller(self, seed: int) -> None:
        """The apiextensions controllers: a new CRD's names accepted and established; a
        deleted one's custom resources removed before it goes (the cleanup finalizer)."""
        crds: Informer[CustomResourceDefinition] = Informer(
            self.plane.api, CustomResourceDefinition
        )
        self.crd_naming_controller = CrdNamingController(
            self.plane.api,
            clock=self.clock,
            rng=derived_rng(seed, "crd-naming"),
            crds=crds,
        )
        self.crd_instances = StoredCustomResources(self.store, clock=self.clock)
        self.crd_finalizer = CrdFinalizerController(
            self.plane.api,
            clock=self.clock,
            rng=derived_rng(seed, "crd-finalizer"),
            crds=crds,
            instances=self.crd_instances,
        )
        self.serve_informers.add(crds)

    def _publish_issuer_discovery(self) -> None:
        """Render the issuer's OIDC documents for the listening address; an issuer they
        cannot describe (not https) leaves them out with upstream's log line."""
        try:
            self.kube.issuer_discovery = issuerdiscovery.build(
                self.options.service_account_issuers[0],
                jwks_uri=self.options.service_account_jwks_uri,
                external_address=urlsplit(self.url).netloc,
                keys=[self.signer.public_key],
            )
        except issuerdiscovery.DiscoveryError as exc:
            LOG.warning(
                "Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery "
                "endpoints. Endpoints will not be enabled. Error: %s",
                exc,
            )

    def _wire_tokens_controller(self, seed: int, signing_key: SigningKey) -> None:
        """The tokens controller: fills token Secrets users create (the key signs their
        legacy tokens, as kube-controller-manager's ``--service-account-private-key-file``)."""
        self.tokens_controller = TokensController(
            self.plane.api,
            clock=self.clock,
            rng=derived_rng(seed, "serviceaccount-tokens"),
            service_accounts=self.plane.service_accounts,
            secrets=self.plane.secrets,
            root_ca=self.pki.ca_cert.read_bytes(),
            generate_token=LegacyTokenGenerator(signing_key),
        )

    def _wire_csr_signing(self, seed: int) -> None:
        """The csrsigning controller, signing with the cluster CA (kube-controller-manager's
        ``--cluster-signing-cert-file``/``--cluster-signing-key-file`` on a kubeadm cluster)."""
        csrs: Informer[CertificateSigningRequest] = Informer(
            self.plane.api, CertificateSigningRequest
        )
        self.csr_signing_controller = CsrSigningController(
            self.plane.api,
            clock=self.clock,
            rng=derived_rng(seed, "csrsigning"),
            ca_cert=self.pki.ca_cert.read_bytes(),
            ca_key=self.pki.ca_key.read_bytes(),
            csrs=csrs,
        )
        self.serve_informers.add(csrs)

    @property
    def kubeconfig(self) -> Path:
        """``DATA_DIR/kubeconfig``."""
        return self.options.data_dir / "kubeconfig"

    def _print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self) -> None:
        """Serve until ``stop`` is set (a signal), then shut down gracefully."""
        options = self.options
        sock = _listen(options.host, options.port)
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            ssl_certfile=str(self.pki.cert),
            ssl_keyfile=str(self.pki.key),
            # Ask for a client certificate (optional) verified by the cluster CA, and hand
            # it to the app (serve.clientcerts, apiserver.x509authn).
            ssl_cert_reqs=ssl.CERT_OPTIONAL,
            ssl_ca_certs=str(self.pki.ca_cert),
            http=ClientCertProtocol,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=SHUTDOWN_GRACE,
            timeout_keep_alive=KEEP_ALIVE,
            # Upgrade requests (kubectl exec/attach/port-forward) are answered as plain
            # HTTP with upstream's Status (apiserver.podstreams): no WebSocket protocol.
            ws="none",
        )
        logging.getLogger("uvicorn.error").addFilter(_quiet_upgrade_warnings)
        server = _Server(config)
        self.plane.start()
        self.serve_informers.start()
        self.event_expiry.start()
        self.flow_config.start()
        self.api_services.start()
        driver = RealTimeDriver(
            [
                *self.plane.components,
                self.serve_informers,
                Due(self.endpoints_controller, self.clock),
                Due(self.service_account_controller, self.clock),
                Due(self.tokens_controller, self.clock),
                Due(self.root_ca_publisher, self.clock),
                Due(self.crd_naming_controller, self.clock),
                Due(self.crd_finalizer, self.clock),
                Due(self.aggregation_controller, self.clock),
                Due(self.csr_signing_controller, self.clock),
                self.event_expiry,
                self.flow_config,
                self.api_services,
                *self.compaction,
            ],
            clock=self.clock,
            store=self.store,
        )
        # A controller's write whose webhook answers came in is retried at once.
        self.controller_writes.wake = driver.wake
        # Custom objects live outside the driver's watches: their deletions wake it, so the
        # quota controller recounts at once (controllers.quotacustom).
        self.kube.custom_counts.subscribe(lambda _namespace, _name: driver.wake())
        self.kube.component_probes = {
            **component_probes(driver, scheduler=self.plane.scheduler),
            **self.kube.component_probes,
        }
        driver_task = asyncio.create_task(driver.run(self.stop))
        server_task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not server_task.done():
            await asyncio.sleep(0.01)
        if server_task.done():
            self.stop.set()
            await driver_task
            server_task.result()
            raise RuntimeError("the HTTPS server did not start")
        self.url = server_url(options.host, port)
        self._publish_issuer_discovery()
        kubernetesservice.ensure(
            self.plane.api, address=advertised_address(options.host), port=port
        )
        credentials.write_kubeconfig(
            self.kubeconfig,
            server=self.url,
            ca_pem=self.pki.ca_cert.read_bytes(),
            records=self.tokens,
        )
        # kube-apiserver logs the plugins it loaded, in order; so does kubeprio.
        self._print(
            "kubeprio serve: admission plugins " + ",".join(options.admission_plugins.running())
        )
        self._print(f"kubeprio serve: listening on {self.url} (data in {options.data_dir})")
        self._print(f"export KUBECONFIG={self.kubeconfig.resolve()}")
        stop_waiter = asyncio.create_task(self.stop.wait())
        await asyncio.wait({stop_waiter, server_task}, return_when=asyncio.FIRST_COMPLETED)
        self.stop.set()
        try:
            await driver_task
        finally:
            # Events the scheduler deferred while busy are written before the store closes.
            self.plane.scheduler.recorder.flush()
        self.kube.close_watches()
        server.should_exit = True
        done, _ = await asyncio.wait({server_task}, timeout=IDLE_GRACE)
        if not done:
            _abort_connections(server)
        with contextlib.suppress(asyncio.CancelledError):
            await server_task
        self.group_commit.commit()
        self._print(f"kubeprio serve: stopped at {rfc3339(self.clock.now())}")

    def close(self) -> None:
        """Close the store (checkpoints the WAL) and the webhook call threads."""
        self.controller_writes.close()
        self.webhook_waits.close()
        # A group still open (the server stopped by an error) is written, not lost.
        self.group_commit.commit()
        self.store.close()


def loop_probe(driver: RealTimeDriver, components: Sequence[Driven]) -> componentstatus.Probe:
    """A ComponentStatus probe of in-process components: healthy (``ok``, a ``/healthz``
    body) while the driver loop runs and none of them failed on its last pass."""

    def probe() -> ComponentCondition:
        if not driver.running:
            return componentstatus.unhealthy("the control loop is not running")
        for component in components:
            failure = driver.failure(component)
            if failure is not None:
                return componentstatus.unhealthy(f"last pass failed: {failure}")
        return componentstatus.healthy()

    return probe


def component_probes(
    driver: RealTimeDriver, *, scheduler: Driven
) -> dict[str, componentstatus.Probe]:
    """``controller-manager`` (every controller the driver runs) and ``scheduler``, in
    the order ``kubectl get cs`` usually shows them."""
    controllers = [
        c for c in driver.components if isinstance(c, Due) and isinstance(c.component, Controller)
    ]
    return {
        "controller-manager": loop_probe(driver, controllers),
        "scheduler": loop_probe(driver, [scheduler]),
    }


def run(options: ServeOptions, *, out: IO[str] = sys.stdout) -> int:
    """Run ``kubeprio serve`` until SIGINT/SIGTERM; return the exit status."""
    serving = Serving(options, out)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, serving.stop.set)
        try:
            await serving.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(main())
    finally:
        serving.close()
    return 0


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (every platform but Windows), else asyncio's.

    The server's requests, TLS and watch streams all run on this one loop; uvloop's is
    written in Cython over libuv and carries the same load with less CPU.
    """
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        return None
    return uvloop.new_event_loop

"""``simulate``: run manifests through a simulated cluster and report what happened.

The driver of ``kubeprio simulate``: builds a ``SimCluster``, schedules every document
as a timed submission, runs the engine until nothing more can happen (or ``until``)
and returns the report of ``sim.report``. Deterministic: the same documents and seed
give a byte-identical report. A run whose only remaining work is the scheduler retrying
pods against a cluster in which nothing changes any more ends there (``sim.stall``).
A CronJob always has a next run, so a run with one and no ``until`` ends a day
(``CRONJOB_HORIZON``) after the last submission instead of never.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from kubeprio.admission import plugins
from kubeprio.admission.resourcequota import LimitedResource
from kubeprio.api import manifest
from kubeprio.api.batch import CronJob
from kubeprio.kubelet.kubelet import KubeletConfig
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.sim.cluster import SimCluster
from kubeprio.sim.report import build_report
from kubeprio.sim.scenario import Submitter, submissions
from kubeprio.sim.stall import Stall

CRONJOB_HORIZON: Final = 86_400.0
"""Without ``until``, a run with CronJobs ends this long after the last submission."""


def simulate(
    documents: Sequence[manifest.Document],
    *,
    seed: int = 0,
    until: float | None = None,
    scheduler_config: SchedulerConfig | None = None,
    kubelet_config: KubeletConfig | None = None,
    limited_resources: Sequence[LimitedResource] = (),
    admission_plugins: plugins.EnabledPlugins = plugins.DEFAULT,
    on_step: Callable[[float], None] | None = None,
    prepare: Callable[[SimCluster], None] | None = None,
) -> tuple[dict[str, Any], SimCluster]:
    """Simulate ``documents``; return the report and the cluster (for inspection).

    ``limited_resources``: the ResourceQuota admission plugin's ``limitedResources``
    (``--admission-control-config-file``), as ``kubeprio serve`` takes them;
    ``admission_plugins``: the admission plugins that are on (``--enable-admission-plugins``,
    ``--disable-admission-plugins``); ``prepare``: called with the cluster before it
    starts (``bench.sim_accounting`` counts its API calls and watch events there)."""
    items = submissions(documents)
    if until is None and any(isinstance(item.obj, CronJob) for item in items):
        until = max(item.at for item in items) + CRONJOB_HORIZON
    cluster = SimCluster(
        seed=seed,
        scheduler_config=scheduler_config,
        kubelet_config=kubelet_config,
        limited_resources=limited_resources,
        admission_plugins=admission_plugins,
    )
    if prepare is not None:
        prepare(cluster)
    cluster.start()
    submitter = Submitter(cluster)
    submitter.schedule(items)
    stall = Stall(
        cluster.clock,
        horizon=(scheduler_config or SchedulerConfig(profiles=())).pod_max_backoff_seconds + 1,
        others=[
            c
            for c in cluster.timed_components
            if c is not cluster.scheduler and c is not cluster.hpa
        ],
        periodic=[cluster.hpa],
    )
    for informer in cluster.informers.informers:
        if informer is not cluster.events:
            informer.add_handler(stall)
    end = cluster.engine.run(until, on_step=on_step, stop=stall)
    report = build_report(
        cluster.recorder,
        seed=seed,
        end_time=end,
        rejected=submitter.rejected,
        existing=submitter.existing,
    )
    return report, cluster

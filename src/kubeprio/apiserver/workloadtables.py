"""The workload Tables: Deployment, ReplicaSet, ReplicationController, DaemonSet,
StatefulSet, ControllerRevision, Job and CronJob (``printDeployment``, ``printReplicaSet``,
``printReplicationController``, ``printDaemonSet``, ``printStatefulSet``,
``printControllerRevision``, ``printJob`` and ``printCronJob`` in upstream's
``pkg/printers/internalversion/printers.go``), and the PodTemplate (``printPodTemplate``:
NAME CONTAINERS IMAGES POD LABELS, no AGE).

The kinds that own a pod template share its wide cells: CONTAINERS, IMAGES and SELECTOR
(``_template_cells``); the DaemonSet's own cells are in ``daemonsettables``.

Who drives it: ``apiserver.tables`` (the printer registry). Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Container, PodTemplateSpec
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.meta import LabelSelector
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.replicationcontroller import ReplicationController, label_selector_of
from kubeprio.api.statefulset import StatefulSet
from kubeprio.apiserver import daemonsettables
from kubeprio.apiserver.tableformat import (
    NONE,
    Cells,
    Column,
    RowConditions,
    age_column,
    human_duration,
    name_column,
    selector_string,
    since,
)
from kubeprio.clock import parse_rfc3339

CONTAINERS_DOC: Final = "Names of each container in the template."
IMAGES_DOC: Final = "Images referenced by each container in the template."


def _template_cells(template: PodTemplateSpec | None, selector: LabelSelector | None) -> Cells:
    containers: Sequence[Container] = ()
    if template is not None and template.spec is not None:
        containers = template.spec.containers or ()
    names = ",".join(c.name or "" for c in containers)
    images = ",".join(c.image or "" for c in containers)
    return [names, images, selector_string(selector)]


DEPLOYMENT_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Ready", "string", "Number of the pod with ready state"),
    Column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
    Column("Available", "string", "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.", 1),
)  # fmt: skip


def print_deployment(deploy: Deployment, now: float) -> tuple[Cells, RowConditions]:
    """``printDeployment``: READY ``ready/desired``, UP-TO-DATE, AVAILABLE."""
    spec = deploy.spec
    status = deploy.status
    desired = spec.replicas if spec and spec.replicas is not None else 0
    cells: Cells = [
        deploy.metadata.name or "",
        f"{(status.ready_replicas if status else None) or 0}/{desired}",
        (status.updated_replicas if status else None) or 0,
        (status.available_replicas if status else None) or 0,
        since(deploy.metadata.creation_timestamp, now),
    ]
    cells.extend(_template_cells(spec.template if spec else None, spec.selector if spec else None))
    return cells, None


REPLICA_SET_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Desired", "integer", "Replicas is the number of desired pods."),
    Column("Current", "integer", "Replicas is the most recently observed number of non-terminating pods."),
    Column("Ready", "integer", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "Selector is a label query over pods that should match the replica count.", 1),
)  # fmt: skip


def print_replica_set(rs: ReplicaSet, now: float) -> tuple[Cells, RowConditions]:
    """``printReplicaSet``: DESIRED CURRENT READY."""
    spec = rs.spec
    status = rs.status
    cells: Cells = [
        rs.metadata.name or "",
        (spec.replicas if spec else None) or 0,
        (status.replicas if status else None) or 0,
        (status.ready_replicas if status else None) or 0,
        since(rs.metadata.creation_timestamp, now),
    ]
    cells.extend(_template_cells(spec.template if spec else None, spec.selector if spec else None))
    return cells, None


REPLICATION_CONTROLLER_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Desired", "integer", "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"),
    Column("Current", "integer", "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"),
    Column("Ready", "integer", "The number of ready replicas for this replication controller."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", 1),
)  # fmt: skip


def print_replication_controller(
    rc: ReplicationController, now: float
) -> tuple[Cells, RowConditions]:
    """``printReplicationController``: DESIRED CURRENT READY; wide SELECTOR is the map as
    ``labels.FormatLabels`` prints it (``a=b,c=d``, ``<none>`` when empty)."""
    spec = rc.spec
    status = rc.status
    cells: Cells = [
        rc.metadata.name or "",
        (spec.replicas if spec else None) or 0,
        (status.replicas if status else None) or 0,
        (status.ready_replicas if status else None) or 0,
        since(rc.metadata.creation_timestamp, now),
    ]
    cells.extend(_template_cells(spec.template if spec else None, label_selector_of(rc)))
    return cells, None


DAEMON_SET_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Desired", "integer", "The number of nodes that should run the daemon pod."),
    Column("Current", "integer", "The number of those nodes running at least one daemon pod."),
    Column("Ready", "integer", "The number of those nodes whose daemon pod is Ready."),
    Column("Up-to-date", "integer", "The number of those nodes running the current template."),
    Column("Available", "integer", "The number of those nodes whose daemon pod has been Ready for minReadySeconds."),
    Column("Node Selector", "string", "The nodeSelector of the pod template."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "The label query over the pods the DaemonSet owns.", 1),
)  # fmt: skip


def print_daemon_set(ds: DaemonSet, now: float) -> tuple[Cells, RowConditions]:
    """``printDaemonSet``: the status counts and NODE SELECTOR (``apiserver.daemonsettables``)."""
    spec = ds.spec
    cells: Cells = [ds.metadata.name or "", *daemonsettables.daemon_set_cells(ds)]
    cells.append(since(ds.metadata.creation_timestamp, now))
    cells.extend(_template_cells(spec.template if spec else None, spec.selector if spec else None))
    return cells, None


STATEFUL_SET_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Ready", "string", "Number of the pod with ready state"),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
)
"""``printStatefulSet``'s columns: no SELECTOR, unlike the other template kinds."""


def print_stateful_set(sts: StatefulSet, now: float) -> tuple[Cells, RowConditions]:
    """``printStatefulSet``: READY ``ready/desired``; wide CONTAINERS IMAGES."""
    spec = sts.spec
    desired = spec.replicas if spec and spec.replicas is not None else 0
    ready = (sts.status.ready_replicas if sts.status else None) or 0
    cells: Cells = [
        sts.metadata.name or "",
        f"{ready}/{desired}",
        since(sts.metadata.creation_timestamp, now),
    ]
    cells.extend(_template_cells(spec.template if spec else None, None)[:2])
    return cells, None


CONTROLLER_REVISION_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Controller", "string", "The object that controls this revision."),
    Column("Revision", "string", "The revision's place in its controller's history."),
    age_column(),
)


def print_controller_revision(cr: ControllerRevision, now: float) -> tuple[Cells, RowConditions]:
    """``printControllerRevision``: CONTROLLER (``daemonset.apps/<name>``), REVISION."""
    return [
        cr.metadata.name or "",
        daemonsettables.controller_cell(cr),
        cr.revision or 0,
        since(cr.metadata.creation_timestamp, now),
    ], None


JOB_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Status", "string", "Status of the job."),
    Column("Completions", "string", "The number of pods which reached phase Succeeded."),
    Column("Duration", "string", "Time required to complete the job."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "A label query over pods that should match the pod count.", 1),
)

_JOB_STATES: Final = (
    ("Complete", "Complete"),
    ("Failed", "Failed"),
    ("", "Terminating"),
    ("Suspended", "Suspended"),
    ("FailureTarget", "FailureTarget"),
    ("SuccessCriteriaMet", "SuccessCriteriaMet"),
)


def print_job(job: Job, now: float) -> tuple[Cells, RowConditions]:
    """``printJob``: STATUS from the conditions, COMPLETIONS ``succeeded/completions``."""
    spec = job.spec
    status = job.status
    succeeded = (status.succeeded if status else None) or 0
    if spec is not None and spec.completions is not None:
        completions = f"{succeeded}/{spec.completions}"
    else:
        parallelism = (spec.parallelism if spec else None) or 0
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    duration = ""
    start = status.start_time if status else None
    if start:
        end = status.completion_time if status else None
        try:
            finish = parse_rfc3339(end) if end else now
            duration = human_duration(finish - parse_rfc3339(start))
        except ValueError:
            duration = ""
    true_conditions = {
        c.type for c in ((status.conditions if status else None) or ()) if c.status == "True"
    }
    state = "Running"
    for condition, text in _JOB_STATES:
        if condition == "" and job.metadata.deletion_timestamp:
            state = text
            break
        if condition and condition in true_conditions:
            state = text
            break
    cells: Cells = [
        job.metadata.name or "",
        state,
        completions,
        duration,
        since(job.metadata.creation_timestamp, now),
    ]
    cells.extend(_template_cells(spec.template if spec else None, spec.selector if spec else None))
    return cells, None


CRON_JOB_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Schedule", "string", "The cron schedule the Jobs are created on."),
    Column("Timezone", "string", "The time zone the schedule is read in."),
    Column("Suspend", "boolean", "Whether new runs are held back."),
    Column("Active", "integer", "How many of its Jobs are running."),
    Column("Last Schedule", "string", "When a Job was last scheduled."),
    age_column(),
    Column("Containers", "string", CONTAINERS_DOC, 1),
    Column("Images", "string", IMAGES_DOC, 1),
    Column("Selector", "string", "The label query of the job template (none: generated per Job).", 1),
)  # fmt: skip


def _bool_pointer(value: bool | None) -> str:
    """``printBoolPtr``: ``True``/``False``, ``<unset>`` for nil."""
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def print_cron_job(cron_job: CronJob, now: float) -> tuple[Cells, RowConditions]:
    """``printCronJob``: SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE (an age);
    wide: the job template's containers, images and selector."""
    spec = cron_job.spec
    status = cron_job.status
    last_schedule = status.last_schedule_time if status else None
    cells: Cells = [
        cron_job.metadata.name or "",
        (spec.schedule if spec else None) or "",
        (spec.time_zone if spec else None) or NONE,
        _bool_pointer(spec.suspend if spec else None),
        len((status.active if status else None) or ()),
        since(last_schedule, now) if last_schedule else NONE,
        since(cron_job.metadata.creation_timestamp, now),
    ]
    job_spec = spec.job_template.spec if spec and spec.job_template else None
    cells.extend(
        _template_cells(
            job_spec.template if job_spec else None, job_spec.selector if job_spec else None
        )
    )
    return cells, None


POD_TEMPLATE_COLUMNS: Final[tuple[Column, ...]] = (
    name_column(),
    Column("Containers", "string", CONTAINERS_DOC),
    Column("Images", "string", IMAGES_DOC),
    Column("Pod Labels", "string", "The labels for the pod template."),
)
"""``podTemplateColumnDefinitions``: no AGE column."""


def print_pod_template(pod_template: PodTemplate, now: float) -> tuple[Cells, RowConditions]:
    """``printPodTemplate``: the template's containers and images (comma-joined, as
    ``layoutContainerCells``) and its labels (``labels.FormatLabels``)."""
    template = pod_template.template
    names, images, _ = _template_cells(template, None)
    labels = template.metadata.labels if template and template.metadata else None
    return [
        pod_template.metadata.name or "",
        names,
        images,
        daemonsettables.format_labels(labels),
    ], None

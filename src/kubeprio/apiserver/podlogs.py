"""``pods/log``: which container a log request names, and what its kubelet would answer.

Upstream splits a log request in two. The API server (``pkg/registry/core/pod/rest/
log.go`` and ``LogLocation`` in ``pkg/registry/core/pod/strategy.go``) validates the
``PodLogOptions``, picks the container (``validateContainer``) and, for a pod with no
node yet, answers an empty log; otherwise it proxies to the node's kubelet, whose
``validateContainerLogStatus`` (``pkg/kubelet/kubelet_pods.go``) refuses containers
with nothing to show — waiting, not started, no previous instance — with a message the
API server relays as a 400.

kubeprio's containers are simulated: they run for their scripted time and print
nothing. A container that has started therefore answers an empty log, exactly as a real
container that wrote nothing would; every refusal uses upstream's words. Driven by
``restreads.RestReads.logs``; pure (no I/O, no clock).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import validate_nonnegative
from kubeprio.apiserver.negotiation import flag

POD_LOG_OPTIONS_KIND = "PodLogOptions"
_INTEGER_OPTIONS = ("tailLines", "limitBytes", "sinceSeconds")


@dataclasses.dataclass(frozen=True, slots=True)
class LogOptions:
    """The ``PodLogOptions`` of a request (query parameters, as kubectl sends them)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: str | None = None


def parse_options(query: Mapping[str, str], pod_name: str) -> LogOptions:
    """The query as ``LogOptions``, validated as upstream's ``ValidatePodLogOptions``.

    A parameter that is not an integer is a 400; an out-of-range one is upstream's 422
    ``PodLogOptions "<pod>" is invalid``.
    """
    numbers: dict[str, int | None] = {}
    for name in _INTEGER_OPTIONS:
        raw = query.get(name)
        if raw is None or raw == "":
            numbers[name] = None
            continue
        try:
            numbers[name] = int(raw)
        except ValueError:
            raise errors.bad_request(
                f'invalid value "{raw}" for query parameter "{name}"'
            ) from None
    options = LogOptions(
        container=query.get("container", ""),
        follow=flag(query, "follow"),
        previous=flag(query, "previous"),
        timestamps=flag(query, "timestamps"),
        tail_lines=numbers["tailLines"],
        limit_bytes=numbers["limitBytes"],
        since_seconds=numbers["sinceSeconds"],
        since_time=query.get("sinceTime") or None,
    )
    found = _validate(options)
    if found:
        raise errors.invalid_error(POD_LOG_OPTIONS_KIND, "", pod_name, found)
    return options


def _validate(options: LogOptions) -> list[FieldError]:
    found: list[FieldError] = []
    if options.tail_lines is not None:
        found.extend(validate_nonnegative(options.tail_lines, "tailLines"))
    if options.limit_bytes is not None and options.limit_bytes < 1:
        found.append(errors.invalid("limitBytes", options.limit_bytes, "must be greater than 0"))
    if options.since_seconds is not None and options.since_time is not None:
        found.append(
            errors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified")
        )
    elif options.since_seconds is not None and options.since_seconds < 1:
        found.append(
            errors.invalid("sinceSeconds", options.since_seconds, "must be greater than 0")
        )
    return found


def container_names(pod: Pod) -> list[str]:
    """``podutil.VisitContainers`` order: init containers, containers, ephemeral containers."""
    spec = pod.spec
    if spec is None:
        return []
    return [
        c.name or ""
        for group in (spec.init_containers, spec.containers, spec.ephemeral_containers)
        for c in group or ()
    ]


def container_for(pod: Pod, requested: str) -> str:
    """Upstream ``validateContainer``: the named container (of any kind, ephemeral ones
    included), or the only regular one."""
    spec = pod.spec
    containers = (spec.containers if spec else None) or ()
    name = pod.metadata.name or ""
    if not requested:
        if len(containers) == 1:
            return containers[0].name or ""
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {name}")
        # Go's %s of a []string.
        names = " ".join(container_names(pod))
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: [{names}]"
        )
    if requested not in container_names(pod):
        raise errors.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _status_of(pod: Pod, container: str) -> dict[str, Any] | None:
    """The container's status as the API holds it (``state``, ``lastState``, ...); the
    kubelet's ``validateContainerLogStatus`` looks among the ephemeral ones too."""
    status = pod.status
    if status is None:
        return None
    for entry in (*(status.container_statuses or ()), *(status.ephemeral_container_statuses or ())):
        if entry.name == container:
            return dict(entry.extra)
    # Init container statuses are kept as the JSON they were written with.
    for raw in status.extra.get("initContainerStatuses") or ():
        if isinstance(raw, dict) and raw.get("name") == container:
            return dict(raw)
    return None


def is_running(pod: Pod, container: str) -> bool:
    """Whether ``container`` is running (a followed log stays open while it is)."""
    found = _status_of(pod, container)
    return found is not None and bool((found.get("state") or {}).get("running"))


def check_kubelet_answer(pod: Pod, container: str, *, previous: bool) -> None:
    """Raise the 400 the kubelet's ``validateContainerLogStatus`` relays, if any.

    Only for a pod with a node. Passing means the log can be read (and is empty).
    """
    pod_name = pod.metadata.name or ""
    found = _status_of(pod, container)
    if found is None:
        raise errors.bad_request(f'container "{container}" in pod "{pod_name}" is not available')
    state: dict[str, Any] = found.get("state") or {}
    last: dict[str, Any] = found.get("lastState") or {}
    last_terminated: dict[str, Any] | None = last.get("terminated")
    terminated: dict[str, Any] | None = state.get("terminated")
    waiting: dict[str, Any] | None = state.get("waiting")
    if previous:
        if not (last_terminated and last_terminated.get("containerID")):
            raise errors.bad_request(
                f'previous terminated container "{container}" in pod "{pod_name}" not found'
            )
        return
    if state.get("running") is not None:
        return
    if terminated is not None:
        if terminated.get("containerID") or (
            last_terminated and last_terminated.get("containerID")
        ):
            return
        raise errors.bad_request(f'container "{container}" in pod "{pod_name}" is terminated')
    if last_terminated is not None:
        if last_terminated.get("containerID"):
            return
        raise errors.bad_request(f'container "{container}" in pod "{pod_name}" is terminated')
    if waiting is not None:
        reason = waiting.get("reason") or ""
        detail = {
            "ErrImagePull": "image can't be pulled",
            "ImagePullBackOff": "trying and failing to pull image",
        }.get(reason, reason)
        raise errors.bad_request(
            f'container "{container}" in pod "{pod_name}" is waiting to start: {detail}'
        )
    raise errors.bad_request(
        f'container "{container}" in pod "{pod_name}" is waiting to start - no logs yet'
    )

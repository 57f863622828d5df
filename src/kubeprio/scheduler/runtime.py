"""Runs the plugins of one profile at each extension point (upstream ``runtime/framework.go``).

The runtime owns plugin ordering, skips, weights and error handling: a plugin that
raises is a bug, turned into a ``Code.ERROR`` status stamped with its name; a filter
that returns something other than success or a rejection is reported as an error too.
``run_filter_plugins_with_nominated_pods`` implements semantics §5 (nominated pods of
equal or higher priority count against a node, in a first pass; the pod must also fit
without them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal

from kubeprio.api.model import INT64_MAX
from kubeprio.client.writepending import WritePendingError
from kubeprio.scheduler.framework import (
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    NodeScore,
    NodeToStatus,
    PermitPlugin,
    PodInfo,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
    error,
    unresolvable,
)
from kubeprio.scheduler.snapshot import NodeInfo

NominatedPodsLookup = Callable[[str], Sequence[PodInfo]]
"""node name -> pods nominated to it (freshest versions)."""

MAX_TOTAL_SCORE: Final = INT64_MAX


class PreBindWritePendingError(Exception):
    """A PreBind plugin's write waits on admission webhook answers (``kubeprio serve``):
    not a failure; the binding cycle resumes from ``plugin`` once ``pending`` is answered
    (upstream's binding goroutine blocks in that call and goes on when it returns)."""

    def __init__(self, plugin: str, pending: WritePendingError) -> None:
        super().__init__(f"{plugin}: {pending}")
        self.plugin = plugin
        self.pending = pending


class PluginError(Exception):
    """A plugin broke its contract (raised inside the runtime, reported as a status)."""


def _as_error(plugin: str, exc: Exception) -> Status:
    return error(f"running {plugin!r} plugin: {exc}").with_plugin(plugin)


def _failed(point: str, plugin: str, status: Status) -> Status:
    """A rejection keeps its message; anything else becomes the Error upstream's runtime
    returns: ``running <point> plugin "<name>": <message>``."""
    if status.is_rejected():
        return status.with_plugin(plugin)
    return error(f'running {point} plugin "{plugin}": {status.message}').with_plugin(plugin)


class Framework:
    """One scheduling profile's plugins, ready to run."""

    def __init__(
        self,
        *,
        profile_name: str = "default-scheduler",
        queue_sort: QueueSortPlugin,
        pre_enqueue: Sequence[PreEnqueuePlugin] = (),
        pre_filter: Sequence[PreFilterPlugin] = (),
        filter: Sequence[FilterPlugin] = (),
        post_filter: Sequence[PostFilterPlugin] = (),
        pre_score: Sequence[PreScorePlugin] = (),
        score: Sequence[tuple[ScorePlugin, int]] = (),
        reserve: Sequence[ReservePlugin] = (),
        permit: Sequence[PermitPlugin] = (),
        pre_bind: Sequence[PreBindPlugin] = (),
        bind: Sequence[BindPlugin] = (),
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.queue_sort = queue_sort
        self.pre_enqueue_plugins = list(pre_enqueue)
        self.pre_filter_plugins = list(pre_filter)
        self.filter_plugins = list(filter)
        self.post_filter_plugins = list(post_filter)
        self.pre_score_plugins = list(pre_score)
        self.score_plugins = list(score)
        self.reserve_plugins = list(reserve)
        self.permit_plugins = list(permit)
        self.pre_bind_plugins = list(pre_bind)
        self.bind_plugins = list(bind)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.nominated_pods: NominatedPodsLookup = lambda _node: ()
        self._extensions = [
            (plugin.name, ext)
            for plugin in self.pre_filter_plugins
            if (ext := plugin.pre_filter_extensions()) is not None
        ]

    # --- PreEnqueue -----------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod_info: PodInfo) -> Status | None:
        """The first rejecting PreEnqueue status, or None."""
        for plugin in self.pre_enqueue_plugins:
            try:
                status = plugin.pre_enqueue(pod_info.pod)
            except Exception as exc:  # a plugin bug must not kill the scheduler
                return _as_error(plugin.name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return None

    # --- PreFilter / Filter -----------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Upstream ``RunPreFilterPlugins``: (merged result, status, plugins that narrowed nodes)."""
        result: PreFilterResult | None = None
        rejection: Status | None = None
        narrowing: list[str] = []
        skipped: set[str] = set()
        for plugin in self.pre_filter_plugins:
            try:
                plugin_result, status = plugin.pre_filter(state, pod, nodes)
            except Exception as exc:
                return None, _as_error(plugin.name, exc), narrowing
            if status is not None and status.code is Code.SKIP:
                skipped.add(plugin.name)
                continue
            if status is not None and status.code is not Code.SUCCESS:
                status = status.with_plugin(plugin.name)
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, narrowing
                if status.code is Code.UNSCHEDULABLE:
                    rejection = status
                    continue
                return None, status, narrowing
            if plugin_result is not None and plugin_result.node_names is not None:
                narrowing.append(plugin.name)
                if result is None or result.node_names is None:
                    result = plugin_result
                else:
                    result = PreFilterResult(result.node_names & plugin_result.node_names)
                if not result.node_names:
                    if len(narrowing) == 1:
                        message = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        message = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    return result, unresolvable(message), narrowing
        state.skip_filter_plugins = skipped
        return result, rejection, narrowing

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """The first failing filter's status (stamped with its name), or None if all pass."""
        skip = state.skip_filter_plugins
        for plugin in self.filter_plugins:
            name = plugin.name
            if name in skip:
                continue
            try:
                status = plugin.filter(state, pod, node)
            except Exception as exc:
                return _as_error(name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                if not status.is_rejected():
                    return error(f"running {name!r} filter plugin: {status.message}").with_plugin(
                        name
                    )
                return status.with_plugin(name)
        return None

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Tell every PreFilter extension that ``pod_to_add`` joined ``node``.

        Any failure is an Error ``running AddPod on PreFilter plugin "<name>": <message>``
        (upstream ``RunPreFilterExtensionAddPod``).
        """
        return self._run_pre_filter_extension("AddPod", state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Tell every PreFilter extension that ``pod_to_remove`` left ``node``.

        Any failure is an Error ``running RemovePod on PreFilter plugin "<name>": <message>``
        (upstream ``RunPreFilterExtensionRemovePod``).
        """
        return self._run_pre_filter_extension("RemovePod", state, pod, pod_to_remove, node)

    def _run_pre_filter_extension(
        self,
        operation: Literal["AddPod", "RemovePod"],
        state: CycleState,
        pod: PodInfo,
        other: PodInfo,
        node: NodeInfo,
    ) -> Status | None:
        """Run one extension hook on every PreFilter plugin not skipped this cycle."""
        skip = state.skip_filter_plugins
        for name, ext in self._extensions:
            if name in skip:
                continue
            hook = ext.add_pod if operation == "AddPod" else ext.remove_pod
            status = hook(state, pod, other, node)
            if status is not None and status.code is not Code.SUCCESS:
                message = f'running {operation} on PreFilter plugin "{name}": {status.message}'
                return error(message).with_plugin(name)
        return None

    def _add_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        """Upstream ``addGENominatedPods``: nominated pods of >= priority, on a copy."""
        nominated = self.nominated_pods(node.name)
        if not nominated:
            return False, state, node, None
        node_out: NodeInfo | None = None
        state_out = state
        added = False
        for other in nominated:
            if other.priority >= pod.priority and other.uid != pod.uid:
                if node_out is None:
                    node_out = node.clone()
                    state_out = state.clone()
                node_out.add_pod(other)
                status = self.run_pre_filter_extension_add_pod(state_out, pod, other, node_out)
                if status is not None:
                    return False, state, node, status
                added = True
        if node_out is None:
            return False, state, node, None
        return added, state_out, node_out, None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Semantics §5: filter with >= priority nominated pods added, then without them."""
        added, state_with, node_with, err = self._add_nominated_pods(state, pod, node)
        if err is not None:
            return error(err.message).with_plugin(err.plugin)
        status = self.run_filter_plugins(state_with, pod, node_with)
        if status is not None and not status.is_rejected():
            return status
        if not added or status is not None:
            return status
        return self.run_filter_plugins(state, pod, node)

    # --- PostFilter ---------------------------------------------------------------------------

    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Upstream ``RunPostFilterPlugins``: the first success wins; else the last rejection."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.post_filter_plugins:
            try:
                plugin_result, status = plugin.post_filter(state, pod, filtered)
            except Exception as exc:
                return None, _as_error(plugin.name, exc)
            if status is None or status.code is Code.SUCCESS:
                return plugin_result, status
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return plugin_result, status.with_plugin(plugin.name)
            if not status.is_rejected():
                return None, status.with_plugin(plugin.name)
            if plugin_result is not None:
                result = plugin_result
            reasons.extend(status.reasons)
            rejector = plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # --- scoring --------------------------------------------------------------------------------

    def run_pre_score_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Run PreScore; SKIP marks the plugin's Score as skipped."""
        skipped: set[str] = set()
        for plugin in self.pre_score_plugins:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as exc:
                return _as_error(plugin.name, exc)
            if status is not None and status.code is Code.SKIP:
                skipped.add(plugin.name)
            elif status is not None and status.code is not Code.SUCCESS:
                return status.with_plugin(plugin.name)
        state.skip_score_plugins = skipped
        return None

    def run_score_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Weighted total score per node (same order as ``nodes``)."""
        totals = [0] * len(nodes)
        for plugin, weight in self.score_plugins:
            if plugin.name in state.skip_score_plugins:
                continue
            scores: list[NodeScore] = []
            try:
                for node in nodes:
                    value, status = plugin.score(state, pod, node)
                    if status is not None and status.code is not Code.SUCCESS:
                        return totals, status.with_plugin(plugin.name)
                    scores.append(NodeScore(node.name, value))
                status = plugin.normalize_score(state, pod, scores)
            except Exception as exc:
                return totals, _as_error(plugin.name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                return totals, status.with_plugin(plugin.name)
            for i, node_score in enumerate(scores):
                if not 0 <= node_score.score <= 100:
                    return totals, error(
                        f"plugin {plugin.name!r} returns an invalid score {node_score.score}, "
                        "it should in the range of [0, 100] after normalizing"
                    )
                totals[i] += node_score.score * weight
        return totals, None

    # --- reserve / permit / bind --------------------------------------------------------------

    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> Status | None:
        """Reserve in order; the first failure stops."""
        for plugin in self.reserve_plugins:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as exc:
                return _as_error(plugin.name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                return _failed("Reserve", plugin.name, status)
        return None

    def run_reserve_plugins_unreserve(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> None:
        """Unreserve in reverse order."""
        for plugin in reversed(self.reserve_plugins):
            plugin.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Permit; WAIT is not supported in-process and counts as rejection."""
        for plugin in self.permit_plugins:
            try:
                status = plugin.permit(state, pod, node_name)
            except Exception as exc:
                return _as_error(plugin.name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                return _failed("Permit", plugin.name, status)
        return None

    def run_pre_bind_plugins(
        self, state: CycleState, pod: PodInfo, node_name: str, *, resume_from: str = ""
    ) -> Status | None:
        """PreBind in order.

        A plugin may answer ``Code.WAIT``: it is not done yet (VolumeBinding waiting for
        its claims to be bound, where upstream blocks the binding goroutine). The status
        is returned stamped with the plugin; the scheduler calls again later with
        ``resume_from`` naming it, and the plugins before it are not run again. A plugin
        whose write waits on admission webhook answers raises ``PreBindWritePendingError``
        (the scheduler resumes from it once they are in).
        """
        plugins = self.pre_bind_plugins
        if resume_from:
            names = [plugin.name for plugin in plugins]
            plugins = plugins[names.index(resume_from) :] if resume_from in names else []
        for plugin in plugins:
            try:
                status = plugin.pre_bind(state, pod, node_name)
            except WritePendingError as pending:
                raise PreBindWritePendingError(plugin.name, pending) from pending
            except Exception as exc:
                return _as_error(plugin.name, exc)
            if status is not None and status.code is Code.WAIT:
                return status.with_plugin(plugin.name)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                return _failed("PreBind", plugin.name, status)
        return None

    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """The first binder that does not SKIP binds."""
        for plugin in self.bind_plugins:
            try:
                status = plugin.bind(state, pod, node_name)
            except WritePendingError:
                raise  # not a failure: the binding cycle waits for the answers
            except Exception as exc:
                return _as_error(plugin.name, exc)
            if status is not None and status.code is Code.SKIP:
                continue
            if status is not None and status.code is not Code.SUCCESS:
                return _failed("Bind", plugin.name, status)
            return None
        return error("no bind plugin bound the pod")

"""``VolumeBindingArgs`` in a ``KubeSchedulerConfiguration``: parsing, upstream's
``ValidateVolumeBindingArgs`` (``pkg/scheduler/apis/config/validation/validation_pluginargs.go``,
v1.32, VolumeCapacityPriority off) and the timeout reaching the plugin."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.scheduler import plugin_args
from kubeprio.scheduler.plugins import registry, volumebinding
from kubeprio.scheduler.profile import ProfileError
from kubeprio.scheduler.setup import load_config
from tests.conftest import ManualClock

PATH = "pluginConfig[VolumeBinding].args"


def config(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "VolumeBinding", "args": args}],
            }
        ],
    }


def test_defaults_and_a_given_timeout():
    assert plugin_args.parse_args("VolumeBinding", {}, PATH) == volumebinding.VolumeBindingArgs(600)
    parsed = plugin_args.parse_args("VolumeBinding", {"bindTimeoutSeconds": 30}, PATH)
    assert parsed == volumebinding.VolumeBindingArgs(30)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"bindTimeoutSeconds": -1},
            f"{PATH}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, "
            "should not be a negative value",
        ),
        (
            {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
            f"{PATH}.shape: Invalid value: []config.UtilizationShapePoint{{"
            "config.UtilizationShapePoint{Utilization:0, Score:0}, "
            "config.UtilizationShapePoint{Utilization:100, Score:10}}: "
            "unsupported when VolumeCapacityPriority feature is disabled",
        ),
        (
            {"bindTimeout": 5},
            f'{PATH}: strict decoding error: unknown field "bindTimeout"',
        ),
    ],
    ids=["negative-timeout", "shape-with-gate-off", "unknown-field"],
)
def test_invalid_args_are_refused(args, message):
    with pytest.raises(ProfileError) as caught:
        plugin_args.parse_args("VolumeBinding", args, PATH)
    assert str(caught.value) == message


def test_the_configured_timeout_reaches_the_plugin():
    loaded = load_config(config({"bindTimeoutSeconds": 45}))
    args = plugin_args.parse_args(
        "VolumeBinding", loaded.profiles[0].plugin_args["VolumeBinding"], PATH
    )
    ctx = registry.PluginContext(
        clock=ManualClock(),
        volume_binder=object(),  # type: ignore[arg-type]
        node_lookup=lambda name: None,
        args=args,
    )
    plugin = registry.new_plugin("VolumeBinding", ctx)
    assert isinstance(plugin, volumebinding.VolumeBinding)
    assert plugin.bind_timeout == 45

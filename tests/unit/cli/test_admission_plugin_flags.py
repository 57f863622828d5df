"""``--enable-admission-plugins`` / ``--disable-admission-plugins`` on ``kubeprio serve``,
``simulate`` and ``check``.

Upstream: kube-apiserver refuses to start on a bad value (``AdmissionOptions.Validate``,
``staging/src/k8s.io/apiserver/pkg/server/options/admission.go``); kubeprio stops with
the same text on one line and exit status 2, as for its other flags. The values are pflag
``StringSlice``s: comma-separated, repeatable, nothing trimmed. A simulation with
``Priority`` off answers "who gets evicted without priority admission": nobody, since
every pod then has priority 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubeprio.cli import admissionflags, build_parser, main

PREEMPTION = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "1", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "1", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: batch, namespace: default}
spec:
  priorityClassName: low
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  annotations: {kubeprio.io/submit-at: 10s}
spec:
  priorityClassName: high
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
"""


@pytest.fixture
def manifests(tmp_path: Path) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(PREEMPTION)
    return str(path)


def _simulate(capsys, manifests: str, *flags: str) -> tuple[dict, str]:
    """The JSON report and what went to stderr."""
    assert main(["simulate", manifests, "--output", "json", "--until", "60s", *flags]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_simulate_with_priority_admission_off_evicts_nobody(capsys, manifests):
    report, _ = _simulate(capsys, manifests)
    assert [p["victims"] for p in report["preemptions"]] == [["default/batch"]]
    assert {p["name"]: p["priority"] for p in report["pods"]} == {"batch": 100, "web": 1000}

    report, err = _simulate(capsys, manifests, "--disable-admission-plugins=Priority")
    assert err == ""
    assert report["preemptions"] == []
    pods = {p["name"]: p for p in report["pods"]}
    assert {name: p["priority"] for name, p in pods.items()} == {"batch": 0, "web": 0}
    assert (pods["batch"]["node"], pods["web"]["node"]) == ("n1", None)


BAD_VALUES = [
    (["--enable-admission-plugins=Foo"], 'enable-admission-plugins plugin "Foo" is unknown'),
    (
        ["--disable-admission-plugins", "LimitRanger, Priority"],
        'disable-admission-plugins plugin " Priority" is unknown',
    ),
    (
        ["--enable-admission-plugins=Priority", "--disable-admission-plugins=Priority"],
        "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
    ),
    (
        ["--enable-admission-plugins=LimitRanger,", "--enable-admission-plugins=Nope"],
        '[enable-admission-plugins plugin "" is unknown, '
        'enable-admission-plugins plugin "Nope" is unknown]',
    ),
]
BAD_IDS = ["unknown", "space-not-trimmed", "overlap", "repeated-flag-and-empty-name"]


@pytest.mark.parametrize(("flags", "message"), BAD_VALUES, ids=BAD_IDS)
def test_serve_stops_on_a_bad_value(tmp_path, capsys, flags, message):
    assert main(["serve", "--data-dir", str(tmp_path / "d"), *flags]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(("flags", "message"), BAD_VALUES, ids=BAD_IDS)
def test_simulate_stops_on_a_bad_value(capsys, manifests, flags, message):
    assert main(["simulate", manifests, *flags]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"error: {message}\n")


def test_check_stops_on_a_bad_value(capsys, manifests):
    assert main(["check", manifests, "--disable-admission-plugins=Quota"]) == 2
    assert capsys.readouterr().err == (
        'kubeprio check: disable-admission-plugins plugin "Quota" is unknown\n'
    )


def test_check_reports_what_the_chain_without_priority_gives(capsys, manifests):
    assert main(["check", manifests, "-o", "json", "--disable-admission-plugins=Priority"]) == 0
    pods = {e["name"]: e for e in json.loads(capsys.readouterr().out) if e["kind"] == "Pod"}
    assert {name: e["priority"] for name, e in pods.items()} == {"batch": None, "web": None}
    assert pods["web"]["priorityClassName"] == "high"


def _notes(*argv: str, command: str) -> list[str]:
    args = build_parser().parse_args([command, *(["x"] if command != "serve" else []), *argv])
    admissionflags.enabled_plugins(args)
    return admissionflags.notes(args, command=command)


@pytest.mark.parametrize(
    ("command", "flags", "notes"),
    [
        ("serve", [], []),
        ("serve", ["--disable-admission-plugins=Priority,LimitRanger"], []),
        (
            "serve",
            ["--enable-admission-plugins=AlwaysPullImages,NodeRestriction",
             "--disable-admission-plugins=PodSecurity"],
            ["note: accepted, but not implemented by kubeprio (no effect): NodeRestriction, "
             "AlwaysPullImages, PodSecurity"],
        ),
        (
            "serve",
            ["--disable-admission-plugins=NamespaceLifecycle"],
            ["note: NamespaceLifecycle stays on: kubeprio's API service makes its checks itself"],
        ),
        ("serve", ["--disable-admission-plugins=ServiceAccount"], []),
        (
            "simulate",
            ["--disable-admission-plugins=ServiceAccount"],
            ["note: kubeprio simulate does not run ServiceAccount (no service account "
             "controller; docs/admission.md)"],
        ),
        (
            "check",
            ["--disable-admission-plugins=NamespaceAutoProvision"],
            ["note: kubeprio check always creates a namespace on first use "
             "(NamespaceAutoProvision stays on)"],
        ),
        ("serve", ["--disable-admission-plugins=ValidatingAdmissionWebhook"], []),
        (
            "simulate",
            ["--disable-admission-plugins=ValidatingAdmissionWebhook,MutatingAdmissionWebhook"],
            ["note: kubeprio simulate calls no webhooks (MutatingAdmissionWebhook, "
             "ValidatingAdmissionWebhook run in serve only; docs/admission.md)"],
        ),
    ],
    ids=["none", "implemented", "not-implemented", "lifecycle", "serve-sa", "simulate-sa",
         "check-autoprovision", "serve-webhooks", "simulate-webhooks"],
)  # fmt: skip
def test_notes_name_the_switches_that_change_nothing(command, flags, notes):
    assert _notes(*flags, command=command) == notes


def test_simulate_prints_its_notes_on_stderr(capsys, manifests):
    assert _simulate(capsys, manifests)[1] == ""  # no note without flags
    assert _simulate(capsys, manifests, "--enable-admission-plugins=PodSecurity")[1] == (
        "note: accepted, but not implemented by kubeprio (no effect): PodSecurity\n"
    )


@pytest.mark.parametrize("command", ["serve", "simulate", "check"])
def test_the_help_lists_the_default_set_and_says_what_does_nothing(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--enable-admission-plugins PLUGINS" in help_text
    assert "(NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition," in help_text
    assert "The order of plugins in this flag does not matter" in help_text
    assert "the other names are accepted and do nothing" in help_text

"""The HTML report (``sim.html``): structure, self-containment, escaping, determinism.

Checked by parsing the page with ``html.parser`` and looking at the elements the report
promises (issue 4, ``--report FILE.html``): an SVG lane per node, a bar per scheduled
pod coloured by its priority class, an arrow per preemption victim grouped per
preemption, the pending-time chart, and tables; nothing fetched from the network.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.sim import html, svg
from kubeprio.sim.simulate import simulate
from tests.conftest import REPO_ROOT
from tests.unit.sim.reports import node, pod, report

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "source", "wbr", "area", "base"}
SVG_SELF_CLOSING = {"rect", "line", "path", "circle"}


class Page(HTMLParser):
    """Every element with its attributes; checks that tags nest and close properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, css: str | None = None) -> list[dict[str, str]]:
        """Elements ``tag`` (with class ``css`` among their classes)."""
        return [
            attrs
            for name, attrs in self.elements
            if name == tag and (css is None or css in attrs.get("class", "").split())
        ]


def parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    assert parser.errors == []
    assert parser.stack == []
    return parser


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    """The report of examples/report-demo (3 nodes, 4 classes, 4 preemptions)."""
    root = REPO_ROOT / "examples" / "report-demo"
    documents: list[manifest.Document] = []
    for path in sorted(root.glob("*.yaml")):
        documents += manifest.parse_text(path.read_text(), str(path))
    result, _cluster = simulate(documents, seed=0)
    return result


def test_demo_page_parses_with_balanced_tags(demo: dict[str, Any]) -> None:
    page = parse(html.render(demo))
    assert page.find("svg", "timeline")
    assert page.find("svg", "waits")
    assert page.find("title")


def test_one_lane_per_node_plus_the_pending_lane(demo: dict[str, Any]) -> None:
    page = parse(html.render(demo))
    lanes = [attrs["data-node"] for attrs in page.find("g", "lane")]
    assert lanes == ["node-a", "node-b", "node-c", ""]  # "" is the never-scheduled lane
    assert [n["name"] for n in demo["nodes"]] == ["node-a", "node-b", "node-c"]


def test_a_bar_per_scheduled_pod_in_its_class_colour(demo: dict[str, Any]) -> None:
    page = parse(html.render(demo))
    colours = svg.class_colours(demo)
    bars = {attrs["data-pod"]: attrs for attrs in page.find("rect", "bar")}
    scheduled = {f"{p['namespace']}/{p['name']}": p for p in demo["pods"] if p["node"]}
    assert set(bars) == set(scheduled)
    for key, attrs in bars.items():
        klass = scheduled[key]["priorityClassName"] or ""
        assert attrs["data-class"] == klass
        assert attrs["fill"] == colours[klass], key
    # Highest priority first in the palette: critical (100000) gets the first colour.
    assert colours["critical"] == svg.PALETTE[0]
    assert colours["batch"] == svg.PALETTE[3]
    legend = [li["data-class"] for li in page.find("li")]
    assert legend == ["critical", "high", "standard", "batch"]


def test_an_arrow_per_preemption_victim_grouped_per_preemption(demo: dict[str, Any]) -> None:
    page = parse(html.render(demo))
    groups = page.find("g", "preemption")
    assert [g["data-preemptor"] for g in groups] == [p["preemptor"] for p in demo["preemptions"]]
    arrows = [a["data-victim"] for a in page.find("path", "arrow")]
    assert arrows == [v for p in demo["preemptions"] for v in p["victims"]]
    assert len(arrows) == 4
    assert all(a["marker-end"] == "url(#arrowhead)" for a in page.find("path", "arrow"))


def test_victims_show_their_termination_and_preemptors_their_wait(
    demo: dict[str, Any],
) -> None:
    page = parse(html.render(demo))
    # Each victim terminated gracefully (termination-seconds 20) after being preempted.
    assert len(page.find("rect", "terminating")) == 4
    # Each preemptor waited on its nominated node for its victims to exit.
    assert len(page.find("line", "wait")) == 4


def test_nothing_is_fetched_from_the_network(demo: dict[str, Any]) -> None:
    text = html.render(demo)
    page = parse(text)
    assert "http://" not in text
    assert "https://" not in text
    assert not page.find("script")
    assert not page.find("link")
    assert not page.find("img")
    for _tag, attrs in page.elements:
        for name in ("src", "href", "xlink:href"):
            assert name not in attrs or attrs[name].startswith("#")
    for _tag, attrs in page.elements:
        for value in attrs.values():
            if "url(" in value:
                assert value.startswith("url(#")


HOSTILE = "<script>alert(1)</script>"


def test_text_from_the_report_is_escaped() -> None:
    data = report(
        [
            pod(HOSTILE, node="n&1", klass='"><img src=x>', priority=5),
            pod("p<b>", namespace="ns'x", message=f"0/1 nodes {HOSTILE}", created=3.0),
        ],
        nodes=[node("n&1")],
        preemptions=[{"time": 1.0, "preemptor": HOSTILE, "node": "n&1", "victims": [HOSTILE]}],
        rejected=[
            {
                "kind": "Pod",
                "namespace": "a",
                "name": HOSTILE,
                "code": 403,
                "reason": "Forbidden",
                "message": f'pods "{HOSTILE}" is forbidden',
            }
        ],
    )
    text = html.render(data)
    page = parse(text)
    assert not page.find("script")
    assert not page.find("img")
    assert "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "".join(page.text).count(HOSTILE) >= 4  # bar label, tables, tooltips
    assert [g["data-node"] for g in page.find("g", "lane")] == ["n&1", ""]


def test_same_report_same_bytes(demo: dict[str, Any]) -> None:
    assert html.render(demo) == html.render(demo)
    root = REPO_ROOT / "examples" / "report-demo"
    documents: list[manifest.Document] = []
    for path in sorted(root.glob("*.yaml")):
        documents += manifest.parse_text(path.read_text(), str(path))
    again, _cluster = simulate(documents, seed=0)
    assert html.render(again) == html.render(demo)


def test_an_empty_run_renders() -> None:
    page = parse(html.render(report([], end=0.0)))
    assert page.find("g", "lane") == []
    assert "No preemptions." in "".join(page.text)
    assert "Every pod was scheduled." in "".join(page.text)


def test_tables_list_preemptions_pending_pods_and_rejections() -> None:
    data = report(
        [
            pod("low", node="n1", priority=1, klass="low", terminating=10.0, deleted=40.0),
            pod("high", node="n1", priority=9, klass="high", created=10.0, scheduled=40.0),
            pod("stuck", priority=1, klass="low", created=5.0, message="0/1 nodes are available"),
        ],
        nodes=[node("n1")],
        preemptions=[{"time": 10.0, "preemptor": "default/high", "node": "n1",
                      "victims": ["default/low"]}],
        rejected=[{"kind": "PriorityClass", "namespace": None, "name": "system-x", "code": 422,
                   "reason": "Invalid", "message": "is invalid"}],
    )  # fmt: skip
    page = parse(html.render(data))
    cells = [t.strip() for t in page.text if t.strip()]
    assert "default/high (9)" in cells
    assert "default/low (1)" in cells
    assert "0/1 nodes are available" in cells
    assert "1m 35s" in cells  # stuck waited from t=5 to the end at t=100
    assert "422 Invalid" in cells
    assert "system-x" in cells
    assert "1 never scheduled, waiting 1m 35s" in cells  # the wait chart's note


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (None, "-"),
        (0.0, "0s"),
        (2.5, "2.5s"),
        (59.96, "60s"),
        (60.0, "1m"),
        (292.0, "4m 52s"),
        (3600.0, "1h"),
        (3930.0, "1h 5m"),
    ],
    ids=["none", "zero", "fraction", "rounds-up", "minute", "min-sec", "hour", "hour-min"],
)
def test_durations_read_naturally(seconds: float | None, expected: str) -> None:
    assert svg.duration(seconds) == expected


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (10.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        (100.0, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]),
        (1800.0, [0, 300, 600, 900, 1200, 1500, 1800]),
        (3600.0 * 10, [i * 3600 * 1.0 for i in range(11)]),
    ],
    ids=["seconds", "tens", "half-hour", "ten-hours"],
)
def test_ticks_are_round_and_at_most_twelve(span: float, expected: list[float]) -> None:
    assert svg.ticks(span) == expected

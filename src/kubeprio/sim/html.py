"""The HTML report of ``kubeprio simulate --report FILE.html``: one self-contained page.

Driven by ``cli.simulate`` with the report dict of ``sim.report.build_report``; reads
nothing else. The page has a summary, a legend of priority classes, the pod timeline
per node with preemption arrows (``sim.timeline`` lays it out, ``sim.svg`` draws it),
the pending time per priority class, and tables of preemptions, pods still Pending
(with their FailedScheduling message) and rejected objects.

Self-contained: inline CSS and SVG only, no scripts, fonts, images or links to fetch, so
it renders offline and can be attached to a ticket. Deterministic: the same report gives
the same bytes (no timestamps, fixed number formats, report order). Every text from
the report is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.sim import svg
from kubeprio.sim.svg import duration, text
from kubeprio.sim.timeline import PENDING_LANE, layout

MAX_TABLE_ROWS: Final = 500
"""Rows per table at most; the JSON report has them all."""

CSS: Final = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1d232b; margin: 20px 28px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #dde1e7; padding-bottom: 4px; }
.summary { color: #4a5563; margin: 0 0 12px; }
.summary b { color: #1d232b; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 6px 0 10px; padding: 0;
          list-style: none; font-size: 13px; }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; }
.glyphs { color: #4a5563; font-size: 12.5px; }
.note { color: #6b7480; font-size: 12.5px; margin: 4px 0; }
.scroll { overflow-x: auto; border: 1px solid #e3e6eb; border-radius: 4px; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.lane-label { font-size: 12.5px; font-weight: 600; fill: #1d232b; }
.pending-label { font-style: italic; fill: #8a3b12; }
.lane-sub { font-size: 10.5px; font-weight: 400; fill: #6b7480; }
.tick { font-size: 10.5px; fill: #6b7480; text-anchor: middle; }
.grid { stroke: #d9dde3; stroke-width: 1; }
.bar-label { font-size: 10px; fill: #ffffff; pointer-events: none; }
.bar-label.dark { fill: #1d232b; }
.halo { fill: none; stroke: #ffffff; stroke-width: 4; stroke-opacity: 0.85; }
.arrow { fill: none; stroke-width: 1.6; }
.wait-note { font-size: 12px; fill: #3b434d; }
.never { fill: #b3261e; font-weight: 600; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid #e6e9ee; vertical-align: top; }
th { background: #f4f5f8; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.msg { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
footer { margin-top: 28px; color: #8a929c; font-size: 12px; }
"""


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], *, css: str, empty: str
) -> str:
    """A table of escaped cells; each cell is ``(text, class)``."""
    if not rows:
        return f'<p class="note">{text(empty)}</p>'
    out = [f'<table class="{css}"><thead><tr>']
    out.extend(f"<th>{text(h)}</th>" for h in headers)
    out.append("</tr></thead><tbody>")
    for row in rows[:MAX_TABLE_ROWS]:
        cells = "".join(
            f'<td class="{kind}">{text(value)}</td>' if kind else f"<td>{text(value)}</td>"
            for value, kind in row
        )
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    if len(rows) > MAX_TABLE_ROWS:
        out.append(
            f'<p class="note">… and {len(rows) - MAX_TABLE_ROWS} more (see --output json).</p>'
        )
    return "".join(out)


def _legend(report: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    counts: dict[str, tuple[int, int]] = {}
    for pod in report["pods"]:
        name = pod["priorityClassName"] or ""
        counts[name] = (pod["priority"], counts.get(name, (0, 0))[1] + 1)
    items = []
    for name, colour in colours.items():
        if name not in counts:
            continue
        priority, pods = counts[name]
        label = f"{name} ({priority})" if name else "no class"
        items.append(
            f'<li data-class="{text(name)}"><span class="swatch" style="background:{colour}">'
            f"</span>{text(label)} · {pods} pod{'s' if pods != 1 else ''}</li>"
        )
    return f'<ul class="legend">{"".join(items)}</ul>'


GLYPHS: Final = (
    '<p class="glyphs">Bars: a pod on its node from binding to its end (finished, deleted or '
    "end of run); hatched: terminating after deletion (still holding resources); dashed line: "
    "a preemptor nominated to the node, waiting for its victims to exit; arrow: preemption, "
    "from the preemptor to each victim at the preemption time; dashed outline: never "
    "scheduled. Hover for details.</p>"
)


def _summary(report: Mapping[str, Any]) -> str:
    pods = report["pods"]
    live = [p for p in pods if not p["deleted"]]
    placed = sum(1 for p in live if p["node"])
    pending = sum(1 for p in live if p["node"] is None and p["phase"] == "Pending")
    parts = [
        f"simulated <b>{text(duration(report['endTime']))}</b> of virtual time "
        f"(seed {text(report['seed'])})",
        f"<b>{len(pods)}</b> pods",
        f"<b>{placed}</b> placed",
        f"<b>{pending}</b> pending",
        f"<b>{len(report['preemptions'])}</b> preemptions",
        f"<b>{len(report['rejected'])}</b> rejected",
    ]
    return f'<p class="summary">{" · ".join(parts)}</p>'


def _preemptions(report: Mapping[str, Any]) -> str:
    priority = {f"{p['namespace']}/{p['name']}": p["priority"] for p in report["pods"]}
    rows = [
        [
            (duration(item["time"]), "num"),
            (f"{item['preemptor']} ({priority.get(item['preemptor'], '?')})", ""),
            (item["node"], ""),
            (", ".join(f"{v} ({priority.get(v, '?')})" for v in item["victims"]), ""),
        ]
        for item in report["preemptions"]
    ]
    return _table(
        ("time", "preemptor (priority)", "node", "victims (priority)"),
        rows,
        css="preemptions",
        empty="No preemptions.",
    )


def _pending(report: Mapping[str, Any]) -> str:
    end = float(report["endTime"])
    rows = [
        [
            (f"{p['namespace']}/{p['name']}", ""),
            (str(p["priority"]), "num"),
            (p["priorityClassName"] or "", ""),
            (duration(end - float(p.get("createdAt") or 0.0)), "num"),
            (p.get("pendingMessage") or "", "msg"),
        ]
        for p in report["pods"]
        if p["node"] is None and not p["deleted"] and p["phase"] == "Pending"
    ]
    return _table(
        ("pod", "priority", "class", "waiting", "why (last FailedScheduling message)"),
        rows,
        css="pending",
        empty="Every pod was scheduled.",
    )


def _rejected(report: Mapping[str, Any]) -> str:
    rows = [
        [
            (r["kind"], ""),
            (f"{r['namespace']}/{r['name']}" if r["namespace"] else (r["name"] or ""), ""),
            (f"{r['code']} {r['reason']}", ""),
            (r["message"], "msg"),
        ]
        for r in report["rejected"]
    ]
    return _table(
        ("kind", "object", "status", "message"), rows, css="rejected", empty="Nothing rejected."
    )


def render(report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page."""
    colours = svg.class_colours(report)
    lanes = layout(report)
    notes = []
    if lanes.hidden_nodes:
        shown = sum(1 for lane in lanes.lanes if lane.node != PENDING_LANE)
        notes.append(
            f"Showing {shown} of {shown + lanes.hidden_nodes} nodes (those with preemptions first)."
        )
    if lanes.hidden_pending:
        notes.append(f"{lanes.hidden_pending} more never-scheduled pods are in the table below.")
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>kubeprio simulation report</title>",
            f"<style>{CSS}</style></head><body>",
            "<h1>kubeprio simulation</h1>",
            _summary(report),
            _legend(report, colours),
            '<h2 id="timeline">Pods per node</h2>',
            GLYPHS,
            *(f'<p class="note">{text(n)}</p>' for n in notes),
            f'<div class="scroll">{svg.timeline(lanes, colours)}</div>',
            '<h2 id="waiting">Pending time per priority class</h2>',
            '<p class="glyphs">From creation to binding, for pods that were scheduled: solid '
            "bar mean, light bar max. Pods never scheduled are counted apart.</p>",
            f'<div class="scroll">{svg.wait_chart(report, colours)}</div>',
            '<h2 id="preemptions">Preemptions</h2>',
            _preemptions(report),
            '<h2 id="pending">Pods still Pending</h2>',
            _pending(report),
            '<h2 id="rejected">Rejected objects</h2>',
            _rejected(report),
            f"<footer>kubeprio simulate · report version {text(report['version'])}</footer>",
            "</body></html>",
            "",
        ]
    )

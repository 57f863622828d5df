"""Inline SVG for the HTML report: the pod timeline and the pending-time chart.

Driven by ``sim.html``, which embeds the markup in the page. Draws what
``sim.timeline`` laid out; reads nothing else but the report dict. No scripts, no
external references (fonts, images, stylesheets): the page must render offline. Every
text is escaped; every number is printed with a fixed format, so the same report gives
the same bytes. Tooltips are SVG ``<title>`` elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any, Final

from kubeprio.sim.timeline import PENDING_LANE, Bar, Lane, Timeline

PALETTE: Final = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#59a14f",
    "#b07aa1",
    "#edc948",
    "#76b7b2",
    "#ff9da7",
    "#9c755f",
    "#8cd17d",
    "#d37295",
    "#a0cbe8",
)
"""Tableau 10 plus two: distinct, colour-blind-considerate hues, highest priority first."""

NO_CLASS_COLOUR: Final = "#9d9d9d"

Scale = Callable[[float], float]
"""Virtual time (s) to an x coordinate."""

WIDTH: Final = 1320
LABEL_W: Final = 170
RIGHT_PAD: Final = 24
AXIS_H: Final = 26
ROW_H: Final = 18
BAR_H: Final = 13
LANE_PAD: Final = 5
MIN_LANE_H: Final = 38
ARROW_COLOUR: Final = "#1b1b1b"


def text(value: Any) -> str:
    """Escape for HTML/SVG text and attribute values."""
    return escape(str(value), quote=True)


def num(value: float) -> str:
    """A coordinate with one decimal, trailing zeros dropped (stable across runs)."""
    out = f"{value:.1f}"
    return out[:-2] if out.endswith(".0") else out


def duration(seconds: float | None) -> str:
    """A readable duration: ``45s``, ``2.5s``, ``4m 52s``, ``1h 5m``; ``-`` for None."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{num(seconds)}s"
    whole = round(seconds)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        return f"{minutes}m {secs}s" if secs else f"{minutes}m"
    hours, rest = divmod(whole, 3600)
    minutes = rest // 60
    return f"{hours}h {minutes}m" if minutes else f"{hours}h"


def class_colours(report: Mapping[str, Any]) -> dict[str, str]:
    """Colour per priority class name (``""``: no class), by priority, highest first."""
    classes: dict[str, int] = {}
    for row in report.get("waiting", []):
        classes.setdefault(row["priorityClassName"] or "", row["priority"])
    for pod in report["pods"]:
        classes.setdefault(pod["priorityClassName"] or "", pod["priority"])
    named = sorted((c for c in classes if c), key=lambda c: (-classes[c], c))
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(named)}
    colours[""] = NO_CLASS_COLOUR
    return colours


def ticks(span: float, *, most: int = 12) -> list[float]:
    """Round tick times (1, 2, 5 x 10^k seconds, or whole minutes/hours) up to ``span``."""
    steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600]
    step = next((s for s in steps if span / s <= most), 0.0)
    if not step:
        step = 43200 * math.ceil(span / (43200 * most))
    return [i * step for i in range(int(span // step) + 1)]


def _colour(colours: Mapping[str, str], pod: Mapping[str, Any]) -> str:
    return colours.get(pod["priorityClassName"] or "", NO_CLASS_COLOUR)


def is_light(colour: str) -> bool:
    """Whether dark text reads better than white on ``colour`` (``#rrggbb``)."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * red + 0.587 * green + 0.114 * blue > 160


# --- timeline ---------------------------------------------------------------------------------


def _lane_height(lane: Lane) -> float:
    return max(MIN_LANE_H, max(lane.rows, 1) * ROW_H + 2 * LANE_PAD)


def _tooltip(bar: Bar) -> str:
    pod = bar.pod
    lines = [
        bar.key,
        f"priority {pod['priority']} ({pod['priorityClassName'] or 'no class'})",
        f"phase {pod['phase']}" + (", deleted" if pod["deleted"] else ""),
    ]
    if pod["node"]:
        lines.append(f"on {pod['node']} from {duration(bar.start)} to {duration(bar.end)}")
    else:
        lines.append(f"pending since {duration(bar.start)}")
    if bar.waiting_from is not None:
        lines.append(f"nominated at {duration(bar.waiting_from)}, waited for victims")
    if bar.terminating is not None:
        lines.append(f"terminating from {duration(bar.terminating)}")
    if pod.get("preemptedBy"):
        lines.append(f"preempted by {pod['preemptedBy']}")
    if pod.get("pendingMessage"):
        lines.append(pod["pendingMessage"])
    return "\n".join(lines)


def _bar(bar: Bar, y: float, x: Scale, colour: str) -> list[str]:
    x0, x1 = x(bar.start), x(bar.end)
    width = max(x1 - x0, 2.0)
    top = y + (ROW_H - BAR_H) / 2
    pending = not bar.pod["node"]
    out = [f'<g class="pod" data-pod="{text(bar.key)}"><title>{text(_tooltip(bar))}</title>']
    if bar.waiting_from is not None:
        mid = num(y + ROW_H / 2)
        out.append(
            f'<line class="wait" x1="{num(x(bar.waiting_from))}" y1="{mid}" x2="{num(x0)}" '
            f'y2="{mid}" stroke="{colour}" stroke-width="2" stroke-dasharray="3 3"/>'
        )
    css = "pending-bar" if pending else "bar"
    style = (
        f'fill="{colour}" fill-opacity="0.2" stroke="{colour}" stroke-dasharray="4 2"'
        if pending
        else f'fill="{colour}"'
    )
    out.append(
        f'<rect class="{css}" data-pod="{text(bar.key)}" '
        f'data-class="{text(bar.pod["priorityClassName"] or "")}" x="{num(x0)}" '
        f'y="{num(top)}" width="{num(width)}" height="{BAR_H}" rx="2" {style}/>'
    )
    if bar.terminating is not None:
        xt = x(bar.terminating)
        out.append(
            f'<rect class="terminating" x="{num(xt)}" y="{num(top)}" '
            f'width="{num(max(x1 - xt, 1.0))}" height="{BAR_H}" fill="url(#hatch)"/>'
        )
    label = bar.pod["name"]
    if width > 6.2 * len(label) + 8:
        out.append(
            f'<text class="bar-label{" dark" if pending or is_light(colour) else ""}" '
            f'x="{num(x0 + 4)}" '
            f'y="{num(top + BAR_H - 3)}">{text(label)}</text>'
        )
    out.append("</g>")
    return out


def timeline(layout: Timeline, colours: Mapping[str, str]) -> str:
    """The timeline SVG: a lane per node, a bar per pod, an arrow per preemption victim."""
    plot = WIDTH - LABEL_W - RIGHT_PAD

    def x(t: float) -> float:
        return LABEL_W + t / layout.span * plot

    lane_top: list[float] = []
    y = float(AXIS_H)
    for lane in layout.lanes:
        lane_top.append(y)
        y += _lane_height(lane)
    height = y + 4
    out = [
        f'<svg class="timeline" width="{WIDTH}" '
        f'height="{num(height)}" viewBox="0 0 {WIDTH} {num(height)}" role="img" '
        f'aria-label="pods per node over time">',
        "<defs>"
        '<marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{ARROW_COLOUR}"/></marker>'
        '<pattern id="hatch" patternUnits="userSpaceOnUse" width="5" height="5" '
        'patternTransform="rotate(45)"><rect width="2.5" height="5" fill="#ffffff" '
        'fill-opacity="0.6"/></pattern>'
        "</defs>",
    ]
    for index, lane in enumerate(layout.lanes):
        top = lane_top[index]
        shade = "#f4f5f8" if index % 2 == 0 else "#ffffff"
        name = lane.node or "pending"
        out.append(
            f'<g class="lane" data-node="{text(lane.node)}"><rect class="lane-bg" x="0" '
            f'y="{num(top)}" width="{WIDTH}" height="{num(_lane_height(lane))}" '
            f'fill="{shade}"/>'
        )
        if lane.node == PENDING_LANE:
            out.append(
                f'<text class="lane-label pending-label" x="8" y="{num(top + 16)}">'
                f"never scheduled</text>"
            )
        else:
            out.append(f'<text class="lane-label" x="8" y="{num(top + 16)}">{text(name)}</text>')
            alloc = lane.allocatable
            if alloc:
                resources = " · ".join(f"{k} {alloc[k]}" for k in ("cpu", "memory") if k in alloc)
                out.append(
                    f'<text class="lane-sub" x="8" y="{num(top + 30)}">{text(resources)}</text>'
                )
        out.append("</g>")
    for t in ticks(layout.span):
        xt = num(x(t))
        out.append(
            f'<line class="grid" x1="{xt}" y1="{AXIS_H - 4}" x2="{xt}" y2="{num(height - 4)}"/>'
            f'<text class="tick" x="{xt}" y="{AXIS_H - 9}">{text(duration(t))}</text>'
        )
    for index, lane in enumerate(layout.lanes):
        for bar in lane.bars:
            row_y = lane_top[index] + LANE_PAD + bar.row * ROW_H
            out.extend(_bar(bar, row_y, x, _colour(colours, bar.pod)))
    out.extend(_arrows(layout, lane_top, x))
    out.append("</svg>")
    return "\n".join(out)


def _arrows(layout: Timeline, lane_top: Sequence[float], x: Scale) -> list[str]:
    out: list[str] = []
    current = -1
    for arrow in layout.arrows:
        if arrow.index != current:
            if current >= 0:
                out.append("</g>")
            current = arrow.index
            out.append(
                f'<g class="preemption" data-preemptor="{text(arrow.preemptor)}" '
                f'data-time="{num(arrow.time)}">'
            )
        top = lane_top[arrow.lane] + LANE_PAD
        lane = layout.lanes[arrow.lane]
        if arrow.source_row is None:  # the preemptor never ran here: start at the lane edge
            y1 = lane_top[arrow.lane] + 2
        else:
            y1 = top + (arrow.source_row + 0.5) * ROW_H
        if arrow.target_row is None:
            y2 = lane_top[arrow.lane] + _lane_height(lane) - 2
        else:
            centre = top + (arrow.target_row + 0.5) * ROW_H
            y2 = centre - BAR_H / 2 if centre > y1 else centre + BAR_H / 2
        if abs(y2 - y1) < 4:
            y1 -= ROW_H / 2
        xa = x(arrow.time)
        # Leaves the preemptor sideways, lands on the victim vertically (the arrowhead
        # follows the last tangent), so fan-outs to several victims stay readable.
        mid = num((y1 + y2) / 2)
        path = f"M{num(xa)},{num(y1)} C{num(xa + 14)},{num(y1)} {num(xa)},{mid} {num(xa)},{num(y2)}"
        label = f"{duration(arrow.time)}: {arrow.preemptor} preempted {arrow.victim}"
        out.append(
            f'<path class="halo" d="{path}"/>'
            f'<path class="arrow" data-victim="{text(arrow.victim)}" d="{path}" '
            f'stroke="{ARROW_COLOUR}" marker-end="url(#arrowhead)"><title>{text(label)}'
            f"</title></path>"
            f'<circle class="arrow-start" cx="{num(xa)}" cy="{num(y1)}" r="3" '
            f'fill="{ARROW_COLOUR}"/>'
        )
    if current >= 0:
        out.append("</g>")
    return out


# --- pending time per class -----------------------------------------------------------------


def still_waiting(report: Mapping[str, Any]) -> dict[tuple[int, str], tuple[int, float]]:
    """Per (priority, class): pods still Pending at the end and the longest such wait."""
    out: dict[tuple[int, str], tuple[int, float]] = {}
    for pod in report["pods"]:
        if pod["node"] or pod["deleted"] or pod["phase"] != "Pending":
            continue
        key = (pod["priority"], pod["priorityClassName"] or "")
        wait = float(report["endTime"]) - float(pod.get("createdAt") or 0.0)
        count, longest = out.get(key, (0, 0.0))
        out[key] = (count + 1, max(longest, wait))
    return out


def wait_chart(report: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    """Bars per priority class: max wait (light) behind mean wait (solid), pods never bound."""
    rows = report.get("waiting", [])
    stuck = still_waiting(report)
    label_w, row_h, plot = 200, 30, 520
    top_pad = 8
    scale = max([1.0, *(r["maxWait"] or 0.0 for r in rows)])
    height = top_pad + row_h * len(rows) + 26
    out = [
        f'<svg class="waits" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="pending time per priority class">'
    ]
    for t in ticks(scale, most=8):
        xt = num(label_w + t / scale * plot)
        bottom = top_pad + row_h * len(rows)
        out.append(
            f'<line class="grid" x1="{xt}" y1="{top_pad}" x2="{xt}" y2="{bottom}"/>'
            f'<text class="tick" x="{xt}" y="{bottom + 16}">{text(duration(t))}</text>'
        )
    for index, row in enumerate(rows):
        name = row["priorityClassName"] or ""
        colour = colours.get(name, NO_CLASS_COLOUR)
        y = top_pad + index * row_h
        out.append(
            f'<g class="wait-row" data-class="{text(name)}">'
            f'<text class="lane-label" x="8" y="{y + 19}">{text(name or "(no class)")}'
            f'<tspan class="lane-sub"> {text(row["priority"])}</tspan></text>'
        )
        for key, opacity, bar_h in (("maxWait", "0.35", 20), ("meanWait", "1", 12)):
            value = row[key]
            if value is None:
                continue
            out.append(
                f'<rect class="{key}" x="{label_w}" y="{num(y + (row_h - bar_h) / 2)}" '
                f'width="{num(max(value / scale * plot, 1.5))}" height="{bar_h}" '
                f'fill="{colour}" fill-opacity="{opacity}"/>'
            )
        note = text(
            f"mean {duration(row['meanWait'])} · max {duration(row['maxWait'])} · "
            f"{row['scheduled']}/{row['pods']} scheduled"
        )
        count, longest = stuck.get((row["priority"], name), (0, 0.0))
        never = row["pods"] - row["scheduled"]
        if never:
            who = "" if count == never else f" {count}"
            still = f",{who} waiting {duration(longest)}" if count else ""
            note += f' · <tspan class="never">{never} never scheduled{text(still)}</tspan>'
        # Notes in one column right of the plot, so a long bar never pushes them off.
        out.append(
            f'<text class="wait-note" x="{label_w + plot + 16}" y="{y + 19}">{note}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)

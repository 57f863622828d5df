"""The HTML report: placeholder for the self-contained timeline (see issue 4)."""

from __future__ import annotations

import html as _html
import json
from typing import Any


def render(report: dict[str, Any]) -> str:
    """A minimal self-contained page embedding the report JSON."""
    body = _html.escape(json.dumps(report, indent=2))
    return f"<!doctype html><html><head><meta charset='utf-8'><title>kubeprio simulation</title></head><body><pre>{body}</pre></body></html>\n"

"""Rewrite the golden reports of the examples: the only way they change.

    .venv/bin/python -m tests.sim.regenerate              # every example
    .venv/bin/python -m tests.sim.regenerate kestrel-tiers

Then review the change as a diff (``git diff tests/sim/expected``): every line that moved
is a behaviour change of the simulator, scheduler, kubelet or controllers.
"""

from __future__ import annotations

import sys

from tests.sim.examples import EXAMPLES, golden_path, golden_text


def main(names: list[str]) -> int:
    """Regenerate ``names`` (all examples when empty); report what changed."""
    unknown = sorted(set(names) - set(EXAMPLES))
    if unknown:
        sys.stderr.write(
            f"unknown example(s): {', '.join(unknown)}; known: {', '.join(EXAMPLES)}\n"
        )
        return 2
    for name in names or EXAMPLES:
        path = golden_path(name)
        text = golden_text(name)
        before = path.read_text(encoding="utf-8") if path.exists() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        state = "unchanged" if before == text else ("created" if before is None else "CHANGED")
        print(f"{path.relative_to(path.parents[3])}: {state}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Score normalisation shared by plugins (upstream ``helper/normalize_score.go``).

Called from NormalizeScore of TaintToleration and NodeAffinity. Pure.
"""

from __future__ import annotations

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.gomath import go_div


def default_normalize_score(
    max_priority: int, reverse: bool, scores: list[framework.NodeScore]
) -> None:
    """Scale ``scores`` in place to ``0..max_priority`` (upstream ``DefaultNormalizeScore``).

    Each score becomes ``max_priority * score / max`` (integer division); with
    ``reverse`` it becomes ``max_priority`` minus that. When every score is 0 they stay
    0, or all become ``max_priority`` with ``reverse``.
    """
    max_count = 0
    for entry in scores:
        if entry.score > max_count:
            max_count = entry.score
    if max_count == 0:
        if reverse:
            for i, entry in enumerate(scores):
                scores[i] = framework.NodeScore(entry.name, max_priority)
        return
    for i, entry in enumerate(scores):
        score = go_div(max_priority * entry.score, max_count)
        if reverse:
            score = max_priority - score
        scores[i] = framework.NodeScore(entry.name, score)

"""Generated names: a prefix plus five random characters, as the API server makes them.

Mirrors upstream ``staging/src/k8s.io/apiserver/pkg/storage/names/generate.go``
(``SimpleNameGenerator``) with ``k8s.io/apimachinery/pkg/util/rand.String``'s alphabet
(no vowels, no confusable digits, so no words appear by accident). Used for
``metadata.generateName`` (``apiserver.servicewrites``) and for the ``kube-api-access-*``
volume of the ServiceAccount admission plugin. The caller supplies the seeded
``random.Random`` (docs/design.md: no module-level randomness). Pure: no I/O.
"""

from __future__ import annotations

import random
from typing import Final

ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``utilrand``'s alphanumerics."""
RANDOM_LENGTH: Final = 5
MAX_NAME_LENGTH: Final = 63
MAX_GENERATED_NAME_LENGTH: Final = MAX_NAME_LENGTH - RANDOM_LENGTH
"""A longer prefix is cut to this length, so a generated name fits a DNS label."""


def generate_name(prefix: str, rng: random.Random) -> str:
    """``SimpleNameGenerator.GenerateName``: ``prefix`` (cut to 58 characters) + 5 random."""
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH]
    return prefix + "".join(rng.choice(ALPHABET) for _ in range(RANDOM_LENGTH))

"""kubeprio: a Kubernetes-compatible control plane built around pod priority and preemption.

This package facade exports only the version. Everything else lives in the layered
subpackages described in ``docs/design.md``: ``api`` (pure object model), ``client``,
``store``, ``admission``, ``apiserver``, ``scheduler``, ``kubelet``, ``controllers``,
and the composition roots ``sim`` and ``cli``.
"""

__version__ = "0.1.0"

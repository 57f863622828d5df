"""Revisioned object storage (layer 3): the ``Store`` protocol and its back-ends."""

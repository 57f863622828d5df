"""Composition root for virtual time (layer 1): the discrete-event engine and ``kubeprio simulate``."""

"""Admission control (layer 3): plugins that mutate and validate writes before storage."""

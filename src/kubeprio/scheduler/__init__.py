"""The scheduler (layer 2): priority queue, filter/score framework, DefaultPreemption. Sees the cluster only through ``client``."""

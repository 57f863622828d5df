"""The simulated kubelet (layer 2): runs, terminates and evicts pods of one node. Sees the cluster only through ``client``."""

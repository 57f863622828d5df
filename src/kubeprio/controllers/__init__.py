"""Controllers (layer 2): PDB status, ReplicaSet, Deployment, Job. See the cluster only through ``client``."""

"""Controllers (layer 2): PDB status, ReplicaSet, Deployment, DaemonSet, Job, CronJob, garbage
collection, pod GC, quotas. See the cluster only through ``client``."""

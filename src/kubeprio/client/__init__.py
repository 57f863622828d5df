"""What components may know about the cluster (layer 4): the ``Client`` protocol and informers."""

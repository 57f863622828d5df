"""``kubeprio serve``: the control plane on real time, behind TLS, for kubectl and clients."""

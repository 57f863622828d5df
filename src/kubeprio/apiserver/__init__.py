"""The API server (layer 2): the in-process ``ApiService`` and, later, its HTTP adapter."""

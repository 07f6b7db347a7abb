"""Kube Kitchen's cluster: the store, the API server (hub), and the spokes that talk to it."""

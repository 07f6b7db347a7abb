"""The kubelet: the simulated node agent, one per node, a client of the hub like every other spoke.

It registers its Node, renews its Lease, runs the pods bound to it through a small simulated
container runtime (start, crash, restart with back-off, readiness, graceful stop), gives their
containers env and files (ConfigMaps, Secrets, the downward API, ServiceAccount tokens, emptyDirs,
claims on disk: `runtime`, `envvars`, `volumes`) and serves their logs and exec over HTTP. It imports only `control.client`, `control.kinds` and `control.errors`.
"""

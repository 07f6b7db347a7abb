"""The kubelet: the simulated node agent, one per node, a client of the hub like every other spoke.

It registers its Node, renews its Lease, runs the pods bound to it through a small simulated
container runtime (start, crash, restart with back-off, readiness, graceful stop) and serves their
logs over HTTP. It imports only `control.client`, `control.kinds` and `control.errors`.
"""

"""kube-proxy: one per node, a spoke that keeps its own forwarding table from Services and
Endpoints and sends traffic through it (see `proxy`)."""

"""The Gateway API (`gateway.networking.k8s.io`) in Kube Kitchen: its definitions (`manifests`), what
a fresh cluster gets besides them (`install`), and the gateway controller spoke (`controller`) with
its pure parts — routing (`routing`), statuses (`status`) — and its data plane (`dataplane`).
Like every spoke it imports only `control.client` and `control.kinds`."""

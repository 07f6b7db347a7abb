"""Kube Kitchen's paths beside the Kubernetes API: /kubekitchen/* (snapshot, changes, DNS, traffic,
proxy rules), metrics.k8s.io, pod logs through the kubelet, and the events.k8s.io/v1 view.

They follow the same rules as any other caller of storage: reads and writes through
`control.storage`, answers as the API's replies and Status errors. `VIEWS` are the API
group-versions they serve, for discovery to list beside the registry's.
"""

from control.api.extras import events_v1, metrics

VIEWS = (metrics.VIEW, events_v1.VIEW)

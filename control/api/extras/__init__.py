"""Kube Kitchen's paths beside the Kubernetes API: /kubekitchen/* (snapshot, changes, DNS, traffic,
proxy rules), metrics.k8s.io, and logs through the kubelet.

They follow the same rules as any other caller of storage: reads and writes through
`control.storage`, answers as the API's replies and Status errors. `VIEWS` are the API
group-versions they serve, for discovery to list beside the registry's.
"""

from control.api.extras import metrics

VIEWS = (metrics.VIEW,)

"""The cluster's clocks of life and death, shared by kubelets, the node lifecycle controller and
the hub's pod defaults: Kubernetes' values by default, a workshop's seconds with KK_PACE=workshop.

Guarantees: every value can be overridden one by one from the environment (KK_LEASE_RENEW,
KK_LEASE_DURATION, KK_NODE_GRACE, KK_NODE_MONITOR, KK_TOLERATION_SECONDS, KK_STATUS_REPORT, KK_CPU_WINDOW,
KK_HPA_SYNC, KK_QUOTA_SYNC, KK_STATUS_CHECK).

A node's liveness is its Lease (renewed every lease_duration/4, as upstream's kubelet does); its
status is written only when it changes or every status_report s (upstream: 5 min), so an idle
cluster costs the hub about one write per node per lease_renew. The workshop pace keeps upstream's
ratios (renewal = duration / 4, grace = 5 renewals): a Lease write every 3 s per node keeps an idle
10-node hub under 2 % of a core, and a stopped kubelet's node still goes NotReady within 15 s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

KUBERNETES = {"lease_renew": 10.0, "lease_duration": 40.0, "node_grace": 50.0, "node_monitor": 5.0,
              "toleration_seconds": 300.0, "status_report": 300.0, "cpu_window": 10.0,
              "hpa_sync": 15.0, "quota_sync": 30.0, "status_check": 10.0}
WORKSHOP = {"lease_renew": 3.0, "lease_duration": 12.0, "node_grace": 15.0, "node_monitor": 1.0,
            "toleration_seconds": 5.0, "status_report": 60.0, "cpu_window": 3.0,
            "hpa_sync": 2.0, "quota_sync": 5.0, "status_check": 1.0}


@dataclass(frozen=True)
class Timings:
    lease_renew: float  # kubelet renews its Lease this often
    lease_duration: float  # the Lease's leaseDurationSeconds
    node_grace: float  # a node whose Lease is older than this is NotReady (Unknown)
    node_monitor: float  # how often the node lifecycle controller looks
    toleration_seconds: float  # default tolerationSeconds for not-ready/unreachable NoExecute
    status_report: float  # kubelet writes its node status at least this often (nodeStatusReportFrequency)
    cpu_window: float = 10.0  # the trailing window over which a pod's simulated CPU follows its requests/s
    hpa_sync: float = 15.0  # the horizontal pod autoscaler looks at every HPA this often
    quota_sync: float = 30.0  # the resourcequota controller recounts every quota this often
    status_check: float = 10.0  # kubelet compares its node status with the Node's this often (nodeStatusUpdateFrequency)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Timings":
        env = os.environ if env is None else env
        base = WORKSHOP if env.get("KK_PACE", "").lower() == "workshop" else KUBERNETES
        values = {}
        for f in fields(cls):
            raw = env.get(f"KK_{f.name.upper()}")
            values[f.name] = float(raw) if raw else base[f.name]
        return cls(**values)

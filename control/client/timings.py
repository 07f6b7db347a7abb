"""The cluster's clocks of life and death, shared by kubelets, the node lifecycle controller and
the hub's pod defaults: Kubernetes' values by default, a workshop's seconds with KK_PACE=workshop.

Guarantees: every value can be overridden one by one from the environment (KK_LEASE_RENEW,
KK_LEASE_DURATION, KK_NODE_GRACE, KK_NODE_MONITOR, KK_TOLERATION_SECONDS, KK_STATUS_REPORT, KK_CPU_WINDOW,
KK_HPA_SYNC, KK_QUOTA_SYNC, KK_STATUS_CHECK); both paces' defaults are `control.config`'s table's
(`KUBERNETES`, `WORKSHOP` are read from it).

A node's liveness is its Lease (renewed every lease_duration/4, as upstream's kubelet does); its
status is written only when it changes or every status_report s (upstream: 5 min), so an idle
cluster costs the hub about one write per node per lease_renew. The workshop pace keeps upstream's
ratios (renewal = duration / 4, grace = 5 renewals): a Lease write every 3 s per node keeps an idle
10-node hub under 2 % of a core, and a stopped kubelet's node still goes NotReady within 15 s.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

from control import config

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
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Timings":
        """Each field from its KK_<FIELD> variable, else the pace's default (`control.config`'s table)."""
        env = config.environment() if env is None else env
        return cls(**{f.name: config.value(f"KK_{f.name.upper()}", env) for f in fields(cls)})


def _pace(pace: str) -> dict[str, float]:
    return {f.name: config.value(f"KK_{f.name.upper()}", {"KK_PACE": pace}) for f in fields(Timings)}


KUBERNETES, WORKSHOP = _pace("kubernetes"), _pace("workshop")

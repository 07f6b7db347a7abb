"""Where a static pod's container log lives, spelled once for the two sides that meet there: the
supervisor's static pod runner (`control.staticpods`) writes it, the node's kubelet serves it to
`kubectl logs` (upstream: /var/log/pods/<namespace>_<pod>_<uid>/<container>/).

Guarantees: a pure function of the kubelet's folder and the names; the last run's output is kept
beside the current one with the suffix `.previous`.
"""

from __future__ import annotations

from pathlib import Path


def log_path(kubelet_dir: Path, namespace: str, pod: str, container: str) -> Path:
    return Path(kubelet_dir) / "pod-logs" / f"{namespace}_{pod}" / f"{container}.log"


# A pod whose container is one of the node's own processes (kube-proxy from its DaemonSet): the
# node's kubelet leaves it to the static pod runner, which reports that process's state as its status.
HOST_PROCESS = "kubekitchen.dev/host-process"

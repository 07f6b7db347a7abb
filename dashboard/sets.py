"""View models of the kinds that keep pods on every node, in order, or within a budget: DaemonSets,
StatefulSets with their PersistentVolumeClaims and PersistentVolumes, and PodDisruptionBudgets;
and a CronJob's next run.

Guarantees: every function is pure (no I/O, no clock): the same object gives the same view model,
with only what the page draws, read as `kubectl get` reads it. Missing or malformed fields give
zeros and empty strings, never an exception (the page must draw whatever the hub stores).
"""

from __future__ import annotations

from typing import Any

from control.kinds import cron
from control.kinds.meta import format_time, metadata as _meta, parse_time

Obj = dict[str, Any]


def _base(obj: Obj) -> Obj:
    meta = _meta(obj)
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    return {"key": f"{namespace}/{name}" if namespace else name, "ns": namespace, "name": name}


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def daemonset_vm(daemonset: Obj) -> Obj:
    """`kubectl get ds`: DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE (the pods, one per node,
    are found on the page by their owner)."""
    status = daemonset.get("status") or {}
    return {**_base(daemonset), "desired": _int(status.get("desiredNumberScheduled")),
            "current": _int(status.get("currentNumberScheduled")), "ready": _int(status.get("numberReady")),
            "updated": _int(status.get("updatedNumberScheduled")),
            "available": _int(status.get("numberAvailable")),
            "misscheduled": _int(status.get("numberMisscheduled"))}


def statefulset_vm(statefulset: Obj) -> Obj:
    """`kubectl get sts` (READY ready/replicas) and what the ordinals need: the headless Service,
    the names of the claim templates (a pod's claim is "<template>-<set>-<ordinal>")."""
    spec, status = statefulset.get("spec") or {}, statefulset.get("status") or {}
    templates = [str(_meta(t).get("name", "")) for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    return {**_base(statefulset), "replicas": _int(spec.get("replicas", 1)),
            "current": _int(status.get("currentReplicas")), "ready": _int(status.get("readyReplicas")),
            "service": str(spec.get("serviceName") or ""), "policy": str(spec.get("podManagementPolicy") or "OrderedReady"),
            "claims": [t for t in templates if t]}


def pvc_vm(claim: Obj) -> Obj:
    """`kubectl get pvc`: STATUS, VOLUME, CAPACITY (the request while Pending), STORAGECLASS."""
    spec, status = claim.get("spec") or {}, claim.get("status") or {}
    requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "")
    return {**_base(claim), "phase": str(status.get("phase") or "Pending"), "volume": str(spec.get("volumeName") or ""),
            "capacity": str((status.get("capacity") or {}).get("storage") or requested or ""),
            "storageClass": str(spec.get("storageClassName") or "")}


def pv_vm(volume: Obj) -> Obj:
    """`kubectl get pv`: CAPACITY, RECLAIM POLICY, STATUS, CLAIM ("<namespace>/<name>")."""
    spec, status = volume.get("spec") or {}, volume.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref.get("name") else ""
    return {**_base(volume), "phase": str(status.get("phase") or "Pending"), "claim": claim,
            "capacity": str((spec.get("capacity") or {}).get("storage") or ""),
            "reclaim": str(spec.get("persistentVolumeReclaimPolicy") or "")}


def pdb_vm(budget: Obj) -> Obj:
    """`kubectl get pdb`: MIN AVAILABLE, MAX UNAVAILABLE ("N/A" when unset, as kubectl prints),
    ALLOWED DISRUPTIONS; and the healthy counts behind them."""
    spec, status = budget.get("spec") or {}, budget.get("status") or {}
    selector = (spec.get("selector") or {}).get("matchLabels") or {}

    def bound(field: str) -> str:
        return "N/A" if spec.get(field) is None else str(spec[field])

    return {**_base(budget), "minAvailable": bound("minAvailable"), "maxUnavailable": bound("maxUnavailable"),
            "allowed": _int(status.get("disruptionsAllowed")), "currentHealthy": _int(status.get("currentHealthy")),
            "desiredHealthy": _int(status.get("desiredHealthy")), "expected": _int(status.get("expectedPods")),
            "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))}


def next_run(cronjob: Obj) -> str:
    """The first time the schedule fires after the last scheduled run (or after the CronJob was made),
    RFC 3339; "" when suspended or the schedule cannot be read. Pure: it counts from stored times,
    so a controller that keeps up runs it then."""
    spec, status = cronjob.get("spec") or {}, cronjob.get("status") or {}
    if spec.get("suspend"):
        return ""
    since = parse_time(status.get("lastScheduleTime")) or parse_time(_meta(cronjob).get("creationTimestamp"))
    if since is None:
        return ""
    try:
        at = cron.parse(str(spec.get("schedule") or "")).next_after(since, spec.get("timeZone") or "UTC")
    except (cron.CronError, ValueError, KeyError):  # a bad schedule or zone: the hub's warning says why
        return ""
    return format_time(at) if at is not None else ""

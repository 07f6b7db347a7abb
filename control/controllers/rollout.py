"""The arithmetic of a Deployment rollout, with no I/O: template comparison (the hash itself is
`control.kinds.hashing.template_hash`, upstream's ComputeHash), surge and unavailability
fences, how far to scale the new and the old ReplicaSets, proportional scaling, and status with
its Available and Progressing conditions.

Guarantees (Kubernetes' deployment util): maxSurge rounds up and maxUnavailable rounds down
(both 0 → 1 unavailable); a rolling update never plans more than replicas + maxSurge pods nor
fewer than replicas - maxUnavailable available ones; every function only reads its arguments.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from control.controllers.common import Obj, created_at
from control.kinds.meta import find_condition, format_time, metadata, new_condition, parse_time
from control.kinds.structure import without_nulls

REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
# sync.go's maxRevHistoryLengthInChars: the oldest entries give way beyond it.
MAX_REVISION_HISTORY_CHARS = 2000
HASH_LABEL = "pod-template-hash"
SKIPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration", REVISION, DESIRED, MAX_REPLICAS,
                       REVISION_HISTORY, "deprecated.deployment.rollback.to"}


# --- reading -----------------------------------------------------------------------------------

def replicas(obj: Obj | None) -> int:
    return 0 if obj is None else int((obj.get("spec") or {}).get("replicas", 1) or 0)


def status_count(obj: Obj | None, key: str) -> int:
    return 0 if obj is None else int((obj.get("status") or {}).get(key) or 0)


def annotation_int(obj: Obj, key: str) -> int | None:
    try:
        return int((metadata(obj).get("annotations") or {})[key])
    except (KeyError, ValueError, TypeError):
        return None


def revision(rs: Obj) -> int:
    return annotation_int(rs, REVISION) or 0


def is_rolling(deploy: Obj) -> bool:
    return ((deploy.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") != "Recreate"


def advance_revision(annotations: dict[str, str], next_revision: int,
                     limit: int = MAX_REVISION_HISTORY_CHARS) -> None:
    """Give a ReplicaSet that becomes the new one again (a rollback) `next_revision`, keeping the
    number it had in `revision-history` (SetNewReplicaSetAnnotations): "1" then "1,3" as the same
    template comes back; a revision never goes down, and the oldest entries make room past `limit`."""
    old_text = annotations.get(REVISION) or None  # an empty annotation counts as none
    try:
        old = int(old_text) if old_text is not None else 0
    except ValueError:
        return  # upstream leaves a set with an unreadable revision alone
    if old >= next_revision:
        return
    annotations[REVISION] = str(next_revision)
    if old_text is None:
        return  # a set that never had a revision has no history to keep
    history = annotations.get(REVISION_HISTORY, "")
    if not history:
        annotations[REVISION_HISTORY] = old_text
        return
    entries = history.split(",")
    length, start = len(history) + len(old_text) + 1, 0
    while length > limit and start < len(entries):
        length -= len(entries[start]) + 1
        start += 1
    if length <= limit:
        annotations[REVISION_HISTORY] = ",".join([*entries[start:], old_text])


# --- templates ---------------------------------------------------------------------

def without_hash(template: Obj | None) -> Obj:
    out = without_nulls(copy.deepcopy(template or {}))
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return out


def same_template(rs: Obj, deploy: Obj) -> bool:
    return without_hash((rs.get("spec") or {}).get("template")) == without_hash((deploy.get("spec") or {}).get("template"))


# --- fences ------------------------------------------------------------------------------------

def resolve(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return 0


def fenceposts(deploy: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as pod counts; both 0 would deadlock, so unavailable becomes 1."""
    rolling = ((deploy.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    total = replicas(deploy)
    surge = resolve(rolling.get("maxSurge", "25%"), total, True)
    unavailable = resolve(rolling.get("maxUnavailable", "25%"), total, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(deploy: Obj) -> int:
    return fenceposts(deploy)[0] if is_rolling(deploy) else 0


def max_unavailable(deploy: Obj) -> int:
    if not is_rolling(deploy) or replicas(deploy) == 0:
        return 0
    return min(fenceposts(deploy)[1], replicas(deploy))


# --- rolling update steps ----------------------------------------------------------------------

def new_rs_target(deploy: Obj, all_rss: list[Obj], new_replicas: int) -> int:
    """How many replicas the new ReplicaSet may have now (Kubernetes' NewRSNewReplicas)."""
    wanted = replicas(deploy)
    if not is_rolling(deploy):
        return wanted
    current = sum(replicas(rs) for rs in all_rss)
    ceiling = wanted + max_surge(deploy)
    if current >= ceiling:
        return new_replicas
    return new_replicas + max(0, min(ceiling - current, wanted - new_replicas))


def old_scale_down(deploy: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> dict[str, int]:
    """New sizes for old ReplicaSets: unhealthy replicas first, then available ones, oldest first,
    never taking availability below replicas - maxUnavailable (a ReplicaSet counts at most as many
    available pods as it is sized for)."""
    if sum(replicas(rs) for rs in old_rss) == 0:
        return {}
    all_rss = old_rss + ([new_rs] if new_rs else [])
    min_available = replicas(deploy) - max_unavailable(deploy)
    new_unavailable = replicas(new_rs) - status_count(new_rs, "availableReplicas")
    budget = sum(replicas(rs) for rs in all_rss) - min_available - new_unavailable
    if budget <= 0:
        return {}
    ordered = sorted(old_rss, key=lambda rs: (created_at(rs), metadata(rs)["name"]))
    sizes = {metadata(rs)["name"]: replicas(rs) for rs in ordered}
    cleaned = 0
    for rs in ordered:
        name, available = metadata(rs)["name"], status_count(rs, "availableReplicas")
        if cleaned >= budget:
            break
        if sizes[name] == 0 or available >= sizes[name]:
            continue
        down = min(budget - cleaned, sizes[name] - available)
        sizes[name] -= down
        cleaned += down
    # A ReplicaSet just scaled down reports the pods it had until its controller sees them go:
    # counting more available pods than it is sized for would take a second step from a stale
    # figure and dip below min_available (upstream sums the status as it is).
    surplus = sum(min(status_count(rs, "availableReplicas"), replicas(rs)) for rs in all_rss) - min_available
    done = 0
    for rs in ordered:
        name = metadata(rs)["name"]
        if done >= surplus:
            break
        if sizes[name] == 0:
            continue
        down = min(sizes[name], surplus - done)
        sizes[name] -= down
        done += down
    return {metadata(rs)["name"]: sizes[metadata(rs)["name"]] for rs in ordered if sizes[metadata(rs)["name"]] != replicas(rs)}


# --- scaling (not a rollout: spec.replicas changed, or paused) ---------------------------------

def is_scaling_event(deploy: Obj, rss: list[Obj]) -> bool:
    return any(annotation_int(rs, DESIRED) not in (None, replicas(deploy)) for rs in rss if replicas(rs) > 0)


def active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    every = ([new_rs] if new_rs else []) + old_rss
    active = [rs for rs in every if replicas(rs) > 0]
    if len(active) == 1:
        return active[0]
    if active:
        return None
    if new_rs is not None:
        return new_rs
    return max(old_rss, key=created_at) if old_rss else None


def saturated(deploy: Obj, rs: Obj | None) -> bool:
    return (rs is not None and replicas(rs) == replicas(deploy) and annotation_int(rs, DESIRED) == replicas(deploy)
            and status_count(rs, "availableReplicas") == replicas(deploy))


def scale_targets(deploy: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> dict[str, int]:
    """New sizes when the Deployment was scaled: one active set takes it all; otherwise the change
    (up to replicas + maxSurge) is spread in proportion to each set's share (Kubernetes' scale())."""
    only = active_or_latest(new_rs, old_rss)
    if only is not None:
        return {} if replicas(only) == replicas(deploy) else {metadata(only)["name"]: replicas(deploy)}
    if saturated(deploy, new_rs):
        return {metadata(rs)["name"]: 0 for rs in old_rss if replicas(rs) > 0}
    if not is_rolling(deploy):
        return {}
    active = [rs for rs in ([new_rs] if new_rs else []) + old_rss if replicas(rs) > 0]
    allowed = replicas(deploy) + max_surge(deploy) if replicas(deploy) > 0 else 0
    to_add = allowed - sum(replicas(rs) for rs in active)
    if to_add == 0:
        return {}
    newer_first = to_add > 0
    active.sort(key=lambda rs: (-replicas(rs), -created_at(rs) if newer_first else created_at(rs)))
    sizes, added = {}, 0
    for rs in active:
        share = _fraction(rs, deploy)
        share = min(share, to_add - added) if to_add > 0 else max(share, to_add - added)
        sizes[metadata(rs)["name"]] = replicas(rs) + share
        added += share
    first = metadata(active[0])["name"]
    sizes[first] = max(0, sizes[first] + to_add - added)
    return {name: size for name, size in sizes.items()}


def _fraction(rs: Obj, deploy: Obj) -> int:
    if replicas(deploy) == 0:
        return -replicas(rs)
    annotated = annotation_int(rs, MAX_REPLICAS)
    if annotated is None:
        annotated = status_count(deploy, "replicas")
    if not annotated:
        return 0
    return round(replicas(rs) * (replicas(deploy) + max_surge(deploy)) / annotated) - replicas(rs)


# --- status and conditions ---------------------------------------------------------------------

def condition(status: Obj, kind: str) -> dict[str, Any] | None:
    return find_condition(status.get("conditions"), kind)


def set_condition(status: Obj, kind: str, value: str, reason: str, message: str, now: float,
                  *, refresh: bool = False) -> None:
    """Kubernetes' SetDeploymentCondition; `refresh` also renews an unchanged condition's lastUpdateTime."""
    current = condition(status, kind)
    if current and current.get("status") == value and current.get("reason") == reason and not refresh:
        return
    new = new_condition(kind, value, now, current, lastUpdateTime=format_time(now), reason=reason, message=message)
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != kind] + [new]


def complete(deploy: Obj, status: Obj) -> bool:
    wanted = replicas(deploy)
    return (status.get("updatedReplicas") == wanted and status.get("replicas") == wanted
            and status.get("availableReplicas") == wanted
            and int(status.get("observedGeneration") or 0) >= int(metadata(deploy).get("generation") or 0))


def progressed(old: Obj, new: Obj) -> bool:
    old_rest = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
    new_rest = int(new.get("replicas") or 0) - int(new.get("updatedReplicas") or 0)
    return (int(new.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0) or new_rest < old_rest
            or int(new.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
            or int(new.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0))


def deadline(deploy: Obj) -> int | None:
    value = (deploy.get("spec") or {}).get("progressDeadlineSeconds")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def progress_deadline_at(deploy: Obj, status: Obj) -> float | None:
    """When the current rollout times out, or None when it has finished, failed or has no deadline."""
    limit, current = deadline(deploy), condition(status, "Progressing")
    if limit is None or current is None or current.get("reason") in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded",
                                                                      "DeploymentPaused"):
        return None
    since = parse_time(current.get("lastUpdateTime"))
    return None if since is None else since + limit


def calculate_status(deploy: Obj, base: Obj, all_rss: list[Obj], new_rs: Obj | None, now: float,
                     *, estimate_progress: bool) -> Obj:
    """The Deployment's next status from its ReplicaSets; `base` is the status it has now (with any
    condition this pass already set), against which progress is measured."""
    available = sum(status_count(rs, "availableReplicas") for rs in all_rss)
    status = copy.deepcopy(base)
    status.update({
        "observedGeneration": int(metadata(deploy).get("generation") or 0),
        "replicas": sum(status_count(rs, "replicas") for rs in all_rss),
        "updatedReplicas": status_count(new_rs, "replicas"),
        "readyReplicas": sum(status_count(rs, "readyReplicas") for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum(replicas(rs) for rs in all_rss) - available),
    })
    if available >= replicas(deploy) - max_unavailable(deploy):
        set_condition(status, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now)
    else:
        set_condition(status, "Available", "False", "MinimumReplicasUnavailable",
                      "Deployment does not have minimum availability.", now)
    limit = deadline(deploy)
    paused = bool((deploy.get("spec") or {}).get("paused"))
    current = condition(base, "Progressing")
    if limit is None:
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != "Progressing"]
    elif current is None or current.get("reason") != "ProgressDeadlineExceeded":
        if paused and (current is None or current.get("reason") != "DeploymentPaused"):
            set_condition(status, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now)
        elif not paused and current is not None and current.get("reason") == "DeploymentPaused":
            set_condition(status, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now)
    if limit is not None and estimate_progress and not paused:
        _estimate_progress(deploy, base, status, new_rs, now)
    return status


def _estimate_progress(deploy: Obj, base: Obj, status: Obj, new_rs: Obj | None, now: float) -> None:
    """Kubernetes' syncRolloutStatus: complete, progressing, or past the progress deadline."""
    current = condition(base, "Progressing")
    if (status["replicas"] == status["updatedReplicas"] and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"):
        return  # a finished rollout being resynced: nothing to estimate
    subject = f'ReplicaSet "{metadata(new_rs)["name"]}"' if new_rs else f'Deployment "{metadata(deploy)["name"]}"'
    if complete(deploy, status):
        set_condition(status, "Progressing", "True", "NewReplicaSetAvailable", f"{subject} has successfully progressed.", now)
        return
    if progressed(base, status):
        set_condition(status, "Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing.", now, refresh=True)
        return
    progressing = condition(status, "Progressing")
    at = progress_deadline_at(deploy, status)
    if progressing is not None and (progressing.get("reason") == "ProgressDeadlineExceeded" or (at is not None and at < now)):
        set_condition(status, "Progressing", "False", "ProgressDeadlineExceeded", f"{subject} has timed out progressing.", now)

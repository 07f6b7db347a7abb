"""The DaemonSet controller's decisions as pure functions (upstream `pkg/controller/daemon`:
`NodeShouldRunDaemonPod`, `util.CreatePodTemplate`, `podsShouldBeOnNode`, `rollingUpdate`,
`updateDaemonSetStatus`, and `controller.ComputeHash` for revisions).

Guarantees: nothing here does I/O or reads a clock (callers pass `now`); cached objects are
never changed (every pod built is a deep copy).
- A node should run the daemon pod when the template's nodeName (if any) names it, its
  nodeSelector and required node affinity match it, and it has no NoSchedule/NoExecute taint the
  pod (with the daemon tolerations added) does not tolerate; a pod already there may continue
  while only NoSchedule taints are untolerated.
- Every daemon pod gets the default tolerations (not-ready and unreachable NoExecute;
  disk-, memory- and pid-pressure and unschedulable NoSchedule; network-unavailable with
  hostNetwork), the labels `controller-revision-hash` and `pod-template-generation`, and a
  required node affinity `matchFields metadata.name In [node]` in place of its own terms (the
  default scheduler binds it there).
- The revision hash is upstream's ComputeHash of the template (`control.kinds.hashing.template_hash`,
  with `status.collisionCount` once there is one); the revision's data is the template as a strategic
  merge patch that replaces it (what `kubectl rollout undo` applies).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from control.controllers.common import created_at, pod_available, pod_ready, terminating
from control.kinds.daemonsets import template_generation
from control.kinds.meta import metadata, new_controller_ref
from control.kinds.placement import required_affinity_matches, untolerated_taint

Obj = dict[str, Any]

REVISION_HASH_LABEL = "controller-revision-hash"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"


def _toleration(key: str, effect: str) -> Obj:
    return {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}


DAEMON_TOLERATIONS = (_toleration("not-ready", "NoExecute"), _toleration("unreachable", "NoExecute"),
                      _toleration("disk-pressure", "NoSchedule"), _toleration("memory-pressure", "NoSchedule"),
                      _toleration("pid-pressure", "NoSchedule"), _toleration("unschedulable", "NoSchedule"))
HOST_NETWORK_TOLERATION = _toleration("network-unavailable", "NoSchedule")


def owner_ref(ds: Obj) -> Obj:
    """The controller reference on what a DaemonSet creates (list items may carry no kind)."""
    return new_controller_ref(ds, api_version="apps/v1", kind="DaemonSet")


# --- revisions ---------------------------------------------------------------------------------

def revision_data(ds: Obj) -> Obj:
    """The patch a revision stores: the template, replacing the DaemonSet's whole."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def new_revision(ds: Obj, hash_: str, number: int) -> Obj:
    meta = metadata(ds)
    labels = dict((((ds.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels[REVISION_HASH_LABEL] = hash_
    out_meta: Obj = {"name": f"{meta['name']}-{hash_}", "namespace": meta.get("namespace"), "labels": labels,
                     "ownerReferences": [owner_ref(ds)]}
    if meta.get("annotations"):
        out_meta["annotations"] = dict(meta["annotations"])  # kubectl's change-cause travels with it
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": out_meta,
            "data": revision_data(ds), "revision": number}


# --- pods --------------------------------------------------------------------------------------

def with_daemon_tolerations(spec: Obj) -> Obj:
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    wanted = list(DAEMON_TOLERATIONS) + ([HOST_NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    for toleration in wanted:
        if not any(t.get("key") == toleration["key"] and t.get("effect") == toleration["effect"] for t in tolerations):
            tolerations.append(dict(toleration))
    spec["tolerations"] = tolerations
    return spec


def pin_to_node(spec: Obj, node: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: one required term naming the node."""
    affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity.get("nodeAffinity"), dict) else {}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    affinity["nodeAffinity"] = node_affinity
    spec["affinity"] = affinity
    return spec


def new_pod(ds: Obj, node: str, hash_: str) -> Obj:
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels[REVISION_HASH_LABEL] = hash_
    labels[TEMPLATE_GENERATION_LABEL] = str(template_generation(ds) or 1)
    pod_meta: Obj = {"generateName": f"{metadata(ds)['name']}-", "namespace": metadata(ds)["namespace"],
                     "labels": labels, "ownerReferences": [owner_ref(ds)]}
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    spec = pin_to_node(with_daemon_tolerations(template.get("spec") or {}), node)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


def target_node(pod: Obj) -> str:
    """The node a daemon pod is on, or is pinned to while unscheduled (util.GetTargetNodeName)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = ((((spec.get("affinity") or {}).get("nodeAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution")) or {})
    for term in required.get("nodeSelectorTerms") or []:
        for requirement in (term or {}).get("matchFields") or []:
            if (requirement.get("key") == "metadata.name" and requirement.get("operator") == "In"
                    and len(requirement.get("values") or []) == 1):
                return requirement["values"][0]
    return ""


def should_run(ds: Obj, node: Obj) -> tuple[bool, bool]:
    """(should run, should continue running) — NodeShouldRunDaemonPod."""
    spec = with_daemon_tolerations(copy.deepcopy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {}))
    name = metadata(node).get("name")
    if spec.get("nodeName") and spec["nodeName"] != name:
        return False, False
    if not required_affinity_matches(spec, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    if untolerated_taint(spec["tolerations"], taints) is None:
        return True, True
    # A pod already there may stay while only NoSchedule taints are untolerated.
    return False, untolerated_taint(spec["tolerations"], taints, ("NoExecute",)) is None


def is_updated(pod: Obj, hash_: str, generation: int) -> bool:
    labels = metadata(pod).get("labels") or {}
    if labels.get(REVISION_HASH_LABEL):
        return labels[REVISION_HASH_LABEL] == hash_
    return labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)


def oldest_first(pods: list[Obj]) -> list[Obj]:
    return sorted(pods, key=lambda p: (created_at(p), metadata(p).get("name", "")))


# --- rolling update ----------------------------------------------------------------------------

def scaled(value: Any, total: int, default: int) -> int:
    """An IntOrString against `total`, percentages rounded up (intstr.GetScaledValueFromIntOrPercent)."""
    if value is None:
        return default
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return math.ceil(int(value[:-1]) * total / 100)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def surge_and_unavailable(ds: Obj, desired: int) -> tuple[int, int]:
    rolling = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge"), desired, 0)
    unavailable = scaled(rolling.get("maxUnavailable"), desired, 1)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # an impossible configuration: upstream's default
    return surge, unavailable


def split_on_node(pods: list[Obj], hash_: str, generation: int) -> tuple[Obj | None, Obj | None, bool]:
    """(new pod, old pod, ok): ok is False when a node has more than one of either."""
    new = old = None
    for pod in pods:
        if terminating(pod):
            continue
        if is_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


@dataclass
class Plan:
    delete: list[Obj] = field(default_factory=list)
    create: list[str] = field(default_factory=list)


def rolling_update(ds: Obj, by_node: dict[str, list[Obj]], desired: int, hash_: str, now: float) -> Plan:
    """Which old pods to delete (and, with maxSurge, which nodes get a new pod first)."""
    generation = template_generation(ds)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    surge, max_unavailable = surge_and_unavailable(ds, desired)
    plan = Plan()
    if surge == 0:
        unavailable, allowed, candidates = 0, [], []
        for node in sorted(by_node):
            new, old, ok = split_on_node(by_node[node], hash_, generation)
            if not ok or (new is None) == (old is None):
                unavailable += 1  # the manage pass creates or deletes there first
            elif new is not None:
                if not pod_available(new, min_ready, now):
                    unavailable += 1
            elif not pod_available(old, min_ready, now):
                allowed.append(old)  # an unavailable old pod is replaced at once
            elif unavailable < max_unavailable:
                candidates.append(old)
        room = min(max(0, max_unavailable - unavailable), len(candidates))
        plan.delete = allowed + candidates[:room]
        return plan
    surging, allowed_nodes, candidate_nodes = 0, [], []
    for node in sorted(by_node):
        new, old, ok = split_on_node(by_node[node], hash_, generation)
        if not ok or old is None:
            continue
        if new is None:
            if not pod_available(old, min_ready, now):
                allowed_nodes.append(node)
            elif surging < surge:
                candidate_nodes.append(node)
        elif not pod_available(new, min_ready, now):
            surging += 1
        else:
            plan.delete.append(old)
    room = min(max(0, surge - surging), len(candidate_nodes))
    plan.create = allowed_nodes + candidate_nodes[:room]
    return plan


# --- status ------------------------------------------------------------------------------------

def compute_status(ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, now: float) -> Obj:
    generation = template_generation(ds)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    desired = current = ready = available = updated = misscheduled = 0
    for node in nodes:
        run, _ = should_run(ds, node)
        pods = oldest_first([p for p in by_node.get(metadata(node)["name"], []) if not terminating(p)])
        if run:
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0]
            ready += pod_ready(pod)
            available += pod_available(pod, min_ready, now)
            updated += is_updated(pod, hash_, generation)
        elif pods:
            misscheduled += 1
    status = copy.deepcopy(ds.get("status") or {})
    status.update({"desiredNumberScheduled": desired, "currentNumberScheduled": current, "numberReady": ready,
                   "numberAvailable": available, "updatedNumberScheduled": updated,
                   "numberMisscheduled": misscheduled, "numberUnavailable": max(0, desired - available),
                   "observedGeneration": metadata(ds).get("generation", 0)})
    if not status["numberUnavailable"]:
        status.pop("numberUnavailable")  # omitempty, as upstream serializes a zero
    return status

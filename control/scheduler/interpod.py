"""Filters and scores that look at the other pods: inter-pod affinity and anti-affinity, and
topology spread constraints (kube-scheduler's InterPodAffinity and PodTopologySpread plugins).

Guarantees:
- `ClusterFilters(pod, infos, anti_affinity)` does the PreFilter work once per decision (counts
  per topology domain), so checking each node is a few dictionary reads; its `reason(info)`
  returns the upstream reason or None, checked in upstream's order:
  - the pod's required affinity: the node has every term's topologyKey label and every term a
    matching pod in the node's domain; when no pod anywhere matches and the pod matches its own
    terms, any node with the labels will do (the first of a group): "node(s) didn't match pod
    affinity rules";
  - the pod's required anti-affinity: no matching pod in the node's domain: "node(s) didn't
    match pod anti-affinity rules";
  - existing pods' required anti-affinity that matches the pod, in the node's domain:
    "node(s) didn't satisfy existing pods anti-affinity rules";
  - each DoNotSchedule topology spread constraint: the node must carry the topologyKey
    ("node(s) didn't match pod topology spread constraints (missing required label)") and
    placing the pod there must keep (count in its domain + self − global minimum) ≤ maxSkew
    ("node(s) didn't match pod topology spread constraints"); domains are those of the nodes
    matching the pod's nodeSelector/required node affinity.
- A term matches pods in `namespaces` (default: the pod's own; an empty `namespaceSelector`
  means all) whose labels match its `labelSelector` (none matches nothing); terminating pods
  are not counted.
- `affinity_scores` gives each node the sum of the preferred (anti-)affinity weights of the
  matching pods in its domains (anti negative); `spread_scores` the number of matching pods in
  its domains for the ScheduleAnyway constraints (fewer is better; the caller normalises).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from control.kinds.placement import required_affinity_matches
from control.kinds.selectors import SelectorError, label_selector_from_object
from control.scheduler.demand import NodeInfo, Obj

EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
AFFINITY_MISMATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_MISMATCH = "node(s) didn't match pod anti-affinity rules"
SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
# reasons a preemption might cure (Unschedulable, not UnschedulableAndUnresolvable, upstream)
PREEMPTABLE = (EXISTING_ANTI_AFFINITY, ANTI_AFFINITY_MISMATCH, SPREAD_MISMATCH)

Pair = tuple[str, str]


def _affinity(pod: Obj, kind: str) -> dict[str, Any]:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    out = affinity.get(kind) if isinstance(affinity, dict) else None
    return out if isinstance(out, dict) else {}


def required_terms(pod: Obj, kind: str) -> list[Obj]:
    return [t for t in _affinity(pod, kind).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            if isinstance(t, dict)]


def preferred_terms(pod: Obj, kind: str) -> list[tuple[int, Obj]]:
    out = []
    for item in _affinity(pod, kind).get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        if isinstance(item, dict) and isinstance(item.get("podAffinityTerm"), dict):
            weight = item.get("weight")
            out.append((weight if isinstance(weight, int) else 0, item["podAffinityTerm"]))
    return out


def _namespace(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("namespace") or "default"


def _labels(obj: Obj | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def term_matches(term: Obj, owner: Obj, other: Obj) -> bool:
    """Does `other` match a pod (anti-)affinity term written in `owner`?"""
    namespaces = term.get("namespaces") or []
    if not namespaces and term.get("namespaceSelector") != {}:
        namespaces = [_namespace(owner)]
    if namespaces and _namespace(other) not in namespaces:
        return False
    return _selector_matches(term.get("labelSelector"), other)


def _counted_pods(infos: Iterable[NodeInfo]) -> Iterable[tuple[Obj, NodeInfo]]:
    for info in infos:
        for other in info.pod_objects.values():
            if not (other.get("metadata") or {}).get("deletionTimestamp"):
                yield other, info


class ClusterFilters:
    """Per decision: what the other pods say about each node."""

    def __init__(self, pod: Obj, infos: list[NodeInfo], anti_affinity: dict[str, tuple[Obj, str]]):
        self.pod = pod
        self.affinity = required_terms(pod, "podAffinity")
        self.anti = required_terms(pod, "podAntiAffinity")
        labels_by_node = ({info.name: _labels(info.node) for info in infos}
                          if anti_affinity or self.affinity or self.anti else {})
        self.existing_anti: Counter = Counter()
        for other, node in anti_affinity.values():
            node_labels = labels_by_node.get(node, {})
            for term in required_terms(other, "podAntiAffinity"):
                key = term.get("topologyKey", "")
                if key in node_labels and term_matches(term, other, pod):
                    self.existing_anti[(key, node_labels[key])] += 1
        self.affinity_counts: Counter = Counter()
        self.anti_counts: Counter = Counter()
        if self.affinity or self.anti:
            for other, info in _counted_pods(infos):
                node_labels = labels_by_node.get(info.name, {})
                if self.affinity and all(term_matches(t, pod, other) for t in self.affinity):
                    for term in self.affinity:
                        key = term.get("topologyKey", "")
                        if key in node_labels:
                            self.affinity_counts[(key, node_labels[key])] += 1
                for term in self.anti:
                    key = term.get("topologyKey", "")
                    if key in node_labels and term_matches(term, pod, other):
                        self.anti_counts[(key, node_labels[key])] += 1
        self.first_of_group = (not self.affinity_counts
                               and all(term_matches(t, pod, pod) for t in self.affinity))
        self.spread = [c for c in _constraints(pod) if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]
        self.spread_counts, self.spread_min = _domain_counts(pod, self.spread, infos)

    @property
    def active(self) -> bool:
        return bool(self.existing_anti or self.affinity or self.anti or self.spread)

    def reason(self, info: NodeInfo) -> str | None:
        labels = _labels(info.node)
        if self.affinity:  # upstream's order: affinity, anti-affinity, existing pods' anti-affinity
            keys = [term.get("topologyKey", "") for term in self.affinity]
            if any(key not in labels for key in keys):
                return AFFINITY_MISMATCH  # every topology label must be there, even for the first of a group
            if not all(self.affinity_counts.get((key, labels[key])) for key in keys) and not self.first_of_group:
                return AFFINITY_MISMATCH
        for term in self.anti:
            key = term.get("topologyKey", "")
            if key in labels and self.anti_counts.get((key, labels[key])):
                return ANTI_AFFINITY_MISMATCH
        if any(self.existing_anti.get((k, v)) for k, v in labels.items()):
            return EXISTING_ANTI_AFFINITY
        for i, constraint in enumerate(self.spread):
            key = constraint.get("topologyKey", "")
            if key not in labels:
                return SPREAD_MISSING_LABEL
            own = 1 if _selects(constraint, self.pod, self.pod) else 0
            skew = self.spread_counts[i].get(labels[key], 0) + own - self.spread_min[i]
            if skew > int(constraint.get("maxSkew") or 1):
                return SPREAD_MISMATCH
        return None


# --- topology spread ---------------------------------------------------------------------------

def _constraints(pod: Obj) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or [] if isinstance(c, dict)]


def _selects(constraint: Obj, pod: Obj, other: Obj) -> bool:
    if _namespace(other) != _namespace(pod):
        return False
    return _selector_matches(constraint.get("labelSelector"), other)


def _selector_matches(selector: Any, pod: Obj) -> bool:
    """A missing or malformed labelSelector matches nothing, as upstream's nil selector does."""
    if not isinstance(selector, dict):
        return False
    try:
        return label_selector_from_object(selector).matches(_labels(pod))
    except SelectorError:
        return False


def _domain_counts(pod: Obj, constraints: list[Obj], infos: list[NodeInfo]) -> tuple[list[Counter], list[int]]:
    """Per constraint: matching pods per domain value, and the smallest count over the domains of
    the nodes the pod may go to (nodeAffinityPolicy Honor) that carry every constraint's key."""
    if not constraints:
        return [], []
    keys = [c.get("topologyKey", "") for c in constraints]
    spec = pod.get("spec") or {}
    eligible = [info for info in infos if info.node is not None and all(k in _labels(info.node) for k in keys)
                and required_affinity_matches(spec, info.node)]
    counts: list[Counter] = []
    minimums: list[int] = []
    for constraint, key in zip(constraints, keys):
        counter: Counter = Counter({_labels(info.node)[key]: 0 for info in eligible})
        for info in eligible:
            value = _labels(info.node)[key]
            counter[value] += sum(1 for other in info.pod_objects.values()
                                  if not (other.get("metadata") or {}).get("deletionTimestamp")
                                  and _selects(constraint, pod, other))
        counts.append(counter)
        minimums.append(min(counter.values()) if counter else 0)
    return counts, minimums


def spread_scores(pod: Obj, feasible: list[NodeInfo], infos: list[NodeInfo]) -> dict[str, int] | None:
    """Matching pods in each feasible node's domains, over the ScheduleAnyway constraints (None
    when the pod has none)."""
    soft = [c for c in _constraints(pod) if c.get("whenUnsatisfiable") == "ScheduleAnyway"]
    if not soft:
        return None
    counts, _ = _domain_counts(pod, soft, infos)
    out = {}
    for info in feasible:
        labels = _labels(info.node)
        out[info.name] = sum(counts[i].get(labels.get(c.get("topologyKey", ""), ""), 0) for i, c in enumerate(soft))
    return out


# --- preferred inter-pod affinity --------------------------------------------------------------

def affinity_scores(pod: Obj, feasible: list[NodeInfo], infos: list[NodeInfo]) -> dict[str, int] | None:
    """Sum of preferred affinity weights (anti-affinity negative) of the matching pods sharing a
    domain with each feasible node (None when the pod prefers nothing)."""
    weighted = [(w, t) for w, t in preferred_terms(pod, "podAffinity")]
    weighted += [(-w, t) for w, t in preferred_terms(pod, "podAntiAffinity")]
    if not weighted:
        return None
    domain_weights: Counter = Counter()
    for other, info in _counted_pods(infos):
        labels = _labels(info.node)
        for weight, term in weighted:
            key = term.get("topologyKey", "")
            if key in labels and term_matches(term, pod, other):
                domain_weights[(key, labels[key])] += weight
    return {info.name: sum(domain_weights.get(pair, 0) for pair in _labels(info.node).items()) for info in feasible}

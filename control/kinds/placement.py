"""Where a pod may run, as data says it: node selectors, node affinity terms, taints and
tolerations — upstream's `k8s.io/component-helpers/scheduling/corev1` (and `nodeaffinity`), shared
by the scheduler and the DaemonSet controller so both judge a node alike.

Guarantees: pure functions of plain objects, never raising on odd input (a malformed term or
toleration simply does not match):
- `tolerates` is Toleration.ToleratesTaint: an empty effect matches every effect, an empty key
  every key; then `Exists` matches any value and `Equal` (or no operator) an equal value (so an
  empty key with `Exists` tolerates every taint; with `Equal`, which validation refuses on write,
  every taint of that value, as upstream); any other operator matches nothing;
- `untolerated_taint` returns the first taint with one of the given effects no toleration
  tolerates (FindMatchingUntoleratedTaint);
- `term_matches` is a NodeSelectorTerm: every matchExpressions requirement on the node's labels
  (In, NotIn, Exists, DoesNotExist, Gt, Lt) and every matchFields requirement on `metadata.name`;
  an empty term matches no node; `required_affinity_matches` is nodeSelector (every label equal)
  AND any required nodeSelectorTerm (GetRequiredNodeAffinity(pod).Match(node)).
"""

from __future__ import annotations

from typing import Any, Iterable

Obj = dict[str, Any]
HARD_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated_taint(tolerations: Iterable[Any], taints: Iterable[Any],
                      effects: tuple[str, ...] = HARD_EFFECTS) -> Obj | None:
    tolerations = [t for t in tolerations or [] if isinstance(t, dict)]
    for taint in taints or []:
        if not isinstance(taint, dict) or taint.get("effect") not in effects:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def expression_matches(expression: Any, value: str | None) -> bool:
    """One NodeSelectorRequirement against a label's value (None: the label is absent)."""
    if not isinstance(expression, dict):
        return False
    operator, values = expression.get("operator"), [str(v) for v in expression.get("values") or []]
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def term_matches(term: Any, node: Obj) -> bool:
    if not isinstance(term, dict):
        return False
    meta = node.get("metadata") or {}
    labels, name = meta.get("labels") or {}, meta.get("name", "")
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    return (all(expression_matches(e, labels.get((e or {}).get("key", "")) if isinstance(e, dict) else None)
                for e in expressions)
            and all(expression_matches(f, name if isinstance(f, dict) and f.get("key") == "metadata.name" else None)
                    for f in fields))


def node_affinity(pod_spec: Obj) -> Obj:
    affinity = pod_spec.get("affinity") if isinstance(pod_spec, dict) else None
    out = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    return out if isinstance(out, dict) else {}


def required_affinity_matches(pod_spec: Obj, node: Obj) -> bool:
    """nodeSelector and the required node affinity terms of a pod spec, against one node."""
    pod_spec = pod_spec if isinstance(pod_spec, dict) else {}
    selector = pod_spec.get("nodeSelector") or {}
    if not selector and not pod_spec.get("affinity"):
        return True  # the common case, asked for every node of every decision
    labels = (node.get("metadata") or {}).get("labels") or {}
    if isinstance(selector, dict) and any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = node_affinity(pod_spec).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        return True
    return any(term_matches(term, node) for term in required.get("nodeSelectorTerms") or [])


def preferred_affinity_score(pod_spec: Obj, node: Obj) -> int:
    """The sum of the weights of the preferred node affinity terms this node matches."""
    preferred = node_affinity(pod_spec if isinstance(pod_spec, dict) else {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution") or []
    total = 0
    for item in preferred:
        if isinstance(item, dict) and term_matches(item.get("preference"), node):
            weight = item.get("weight")
            total += weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
    return total

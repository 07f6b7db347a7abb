"""rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and ClusterRoleBinding: validation
with upstream's messages (`pkg/apis/rbac/validation`) and kubectl's tables.

Guarantees: every rule has verbs; a resource rule has apiGroups and resources; a rule with
nonResourceURLs has neither and is refused in a (namespaced) Role; a binding's roleRef names a
Role or ClusterRole (a ClusterRoleBinding: a ClusterRole only) in group rbac.authorization.k8s.io
and cannot change on update; subjects are User, Group or ServiceAccount with a name (a
ServiceAccount of a ClusterRoleBinding also a namespace). Who may write them (escalation, `bind`)
is `control.auth.gate`'s. `aggregated_rules` is the clusterrole-aggregation controller's
computation (the rules of every role a selector matches, in name order, without duplicates).
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, name_causes
from control.kinds.meta import age

GROUP = "rbac.authorization.k8s.io"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
CREATED_COLUMN = Column("Created At", type="string", format="date",
                        description="CreationTimestamp is the server time when this object was created.")
ROLE_COLUMN = Column("Role", description="The role this binding grants.")
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def required(path: str, detail: str) -> Cause:
    return cause(path, f"Required value: {detail}" if detail else "Required value", "FieldValueRequired")


def _go_list(value: Any) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in value) + "}" if isinstance(value, list) else go_value(value)


def rule_causes(rule: Any, path: str, namespaced: bool) -> list[Cause]:
    if not isinstance(rule, dict):
        return [cause(path, "Invalid value: must be an object")]
    out: list[Cause] = []
    for key in ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"):
        value = rule.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            out.append(cause(f"{path}.{key}", f"Invalid value: {go_value(value)}: must be a list of strings"))
    if out:
        return out
    if not rule.get("verbs"):
        out.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    if rule.get("nonResourceURLs"):
        if namespaced:
            out.append(cause(f"{path}.nonResourceURLs", f"Invalid value: {_go_list(rule['nonResourceURLs'])}: "
                             "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            out.append(cause(f"{path}.nonResourceURLs", f"Invalid value: {_go_list(rule['nonResourceURLs'])}: "
                             "rules cannot apply to both regular resources and non-resource URLs"))
        return out
    if not rule.get("apiGroups"):
        out.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        out.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return out


def _rules_causes(role: Obj, namespaced: bool) -> list[Cause]:
    rules = role.get("rules")
    if rules is None:
        return []
    if not isinstance(rules, list):
        return [cause("rules", "Invalid value: must be a list of rules")]
    return [c for i, rule in enumerate(rules) for c in rule_causes(rule, f"rules[{i}]", namespaced)]


def validate_role(role: Obj) -> list[Cause]:
    return _rules_causes(role, True)


def validate_cluster_role(role: Obj) -> list[Cause]:
    out = _rules_causes(role, False)
    aggregation = role.get("aggregationRule")
    if aggregation is not None:
        selectors = aggregation.get("clusterRoleSelectors") if isinstance(aggregation, dict) else None
        # an aggregated role's rules are the clusterrole-aggregation controller's to write: no rule
        # about them here (upstream's ValidateClusterRole has none)
        if not isinstance(selectors, list) or not selectors:
            out.append(required("aggregationRule.clusterRoleSelectors",
                                "at least one clusterRoleSelector required if aggregationRule is non-nil"))
    return out


def _binding_causes(binding: Obj, cluster: bool) -> list[Cause]:
    out: list[Cause] = []
    ref = binding.get("roleRef")
    if not isinstance(ref, dict):
        return [required("roleRef", "")]
    kinds = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("apiGroup") != GROUP:
        out.append(cause("roleRef.apiGroup", f'Unsupported value: {go_value(ref.get("apiGroup", ""))}: supported '
                         f'values: "{GROUP}"', "FieldValueNotSupported"))
    if ref.get("kind") not in kinds:
        out.append(cause("roleRef.kind", f'Unsupported value: {go_value(ref.get("kind", ""))}: supported values: '
                         + ", ".join(f'"{k}"' for k in kinds), "FieldValueNotSupported"))
    if not ref.get("name"):
        out.append(required("roleRef.name", ""))
    subjects = binding.get("subjects")
    if subjects is not None and not isinstance(subjects, list):
        return out + [cause("subjects", "Invalid value: must be a list of subjects")]
    for i, subject in enumerate(subjects or []):
        path = f"subjects[{i}]"
        if not isinstance(subject, dict):
            out.append(cause(path, "Invalid value: must be an object"))
            continue
        if not subject.get("name"):
            out.append(required(f"{path}.name", ""))
        kind = subject.get("kind")
        if kind not in SUBJECT_KINDS:
            out.append(cause(f"{path}.kind", f'Unsupported value: {go_value(kind or "")}: supported values: '
                             '"ServiceAccount", "User", "Group"', "FieldValueNotSupported"))
        elif kind == "ServiceAccount":
            if subject.get("apiGroup"):
                out.append(cause(f"{path}.apiGroup", f'Unsupported value: {go_value(subject["apiGroup"])}: '
                                 'supported values: ""', "FieldValueNotSupported"))
            if cluster and not subject.get("namespace"):
                out.append(required(f"{path}.namespace", ""))
        elif subject.get("apiGroup") != GROUP:
            out.append(cause(f"{path}.apiGroup", f'Unsupported value: {go_value(subject.get("apiGroup", ""))}: '
                             f'supported values: "{GROUP}"', "FieldValueNotSupported"))
    return out


def _ref_fixed(new: Obj, old: Obj) -> list[Cause]:
    if new.get("roleRef") != old.get("roleRef"):
        return [cause("roleRef", f"Invalid value: {go_value(new.get('roleRef'))}: cannot change roleRef")]
    return []


def binding_defaults(binding: Obj) -> None:
    """The API server defaults a User/Group subject's apiGroup (SetDefaults_Subject)."""
    for subject in binding.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = GROUP


def _created(obj: Obj, now: float) -> list[Any]:
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp", "")]


def _binding_cells(binding: Obj, now: float) -> list[Any]:
    ref = binding.get("roleRef") or {}
    return [binding["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}", age(binding, now)]


def _rbac_name(value: Any) -> list[Cause]:
    """upstream ValidateRBACName: any name that is a valid path segment."""
    if not isinstance(value, str) or not value:
        return name_causes(value)
    if value in (".", "..") or "/" in value or "%" in value:
        return [cause("metadata.name", f'Invalid value: "{value}": may not contain \'/\' or \'%\'')]
    return []


def _kind(kind: str, plural: str, namespaced: bool, **options: Any) -> Kind:
    return Kind(group=GROUP, version="v1", kind=kind, plural=plural, namespaced=namespaced,
                definition=f"io.k8s.api.rbac.v1.{kind}", name_rule=_rbac_name, **options)


ROLE = _kind("Role", "roles", True, validate=validate_role, columns=(NAME_COLUMN, CREATED_COLUMN), cells=_created)
CLUSTERROLE = _kind("ClusterRole", "clusterroles", False, validate=validate_cluster_role,
                    columns=(NAME_COLUMN, CREATED_COLUMN), cells=_created)
ROLEBINDING = _kind("RoleBinding", "rolebindings", True, defaults=binding_defaults,
                    validate=lambda b: _binding_causes(b, False), validate_update=_ref_fixed,
                    columns=(NAME_COLUMN, ROLE_COLUMN, AGE_COLUMN), cells=_binding_cells)
CLUSTERROLEBINDING = _kind("ClusterRoleBinding", "clusterrolebindings", False, defaults=binding_defaults,
                           validate=lambda b: _binding_causes(b, True), validate_update=_ref_fixed,
                           columns=(NAME_COLUMN, ROLE_COLUMN, AGE_COLUMN), cells=_binding_cells)


# --- aggregation (the clusterrole-aggregation controller's computation) --------------------------

def selects(selector: Any, labels: dict[str, str]) -> bool:
    """A clusterRoleSelector (matchLabels and matchExpressions) against a role's labels."""
    if not isinstance(selector, dict):
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, op, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True  # an empty selector selects every role (metav1.LabelSelectorAsSelector: Everything)


def aggregated_rules(role: Obj, roles: list[Obj]) -> list[Obj]:
    """upstream ClusterRoleAggregationController.syncClusterRole: the rules of every other role any
    selector matches, in name order, without duplicates."""
    selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    out: list[Obj] = []
    for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
        if other["metadata"]["name"] == role["metadata"]["name"]:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(selects(s, labels) for s in selectors):
            for r in other.get("rules") or []:
                if r not in out:
                    out.append(r)
    return out


def aggregate(roles: list[Obj]) -> list[Obj]:
    """Every aggregated role's rules computed until nothing changes (aggregations chain: view
    into edit into admin)."""
    for _ in range(len(roles)):
        changed = False
        for role in roles:
            if role.get("aggregationRule"):
                rules = aggregated_rules(role, roles)
                if rules != role.get("rules"):
                    role["rules"], changed = rules, True
        if not changed:
            break
    return roles

"""RBAC evaluation as upstream's `plugin/pkg/auth/authorizer/rbac` and `pkg/registry/rbac/validation`.

Guarantees (pure functions over plain objects, no store access):
- `rule_allows` is upstream's `RuleAllows`: verb, apiGroup, resource (`pods/log`, `*/scale`, `*`)
  and resourceNames for resource requests, verb and nonResourceURLs (`*`, `/healthz`, `/api/*`)
  for the others; an empty list matches nothing except resourceNames (empty: any name);
- `Policy.allowed` visits the ClusterRoleBindings' ClusterRoles, then (for a namespaced request)
  the namespace's RoleBindings' Roles or ClusterRoles, whose subjects name the user (User by
  name, Group by membership, ServiceAccount as `system:serviceaccount:NS:NAME`); members of
  `system:masters` are always allowed (kube-apiserver's privileged-groups authorizer);
- `forbidden_message` is the apiserver's wording (`User "alice" cannot list resource "pods" in
  API group "" in the namespace "bob"`);
- `covers` is upstream's `validation.Covers`, and `missing_rules` lists what an escalation would
  grant beyond the owner's rules, in upstream's compact form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

Obj = dict[str, Any]
MASTERS = "system:masters"
ALL = "*"


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Attributes:
    """What a request asks (upstream's authorizer.Attributes)."""

    verb: str
    resource_request: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and (ALL in values or wanted in values)


def resource_matches(rule: Obj, combined: str, subresource: str) -> bool:
    for item in rule.get("resources") or []:
        if item == ALL or item == combined:
            return True
        if subresource and item == "*/" + subresource:
            return True
    return False


def non_resource_url_matches(rule: Obj, path: str) -> bool:
    for item in rule.get("nonResourceURLs") or []:
        if item == ALL or item == path or (item.endswith("*") and path.startswith(item[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Obj) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return non_resource_url_matches(rule, attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    names = rule.get("resourceNames") or []
    return (_has(rule.get("apiGroups"), attrs.api_group) and resource_matches(rule, combined, attrs.subresource)
            and (not names or attrs.name in names))


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def applies_to(user: User, subjects: Any, binding_namespace: str) -> bool:
    for subject in subjects or []:
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == user.name:
            return True
        if kind == "Group" and name in user.groups:
            return True
        if kind == "ServiceAccount":
            namespace = subject.get("namespace") or binding_namespace
            if user.name == service_account_user(namespace, name or ""):
                return True
    return False


RULES_MEMO = 10_000  # (user, namespace) pairs remembered per snapshot


@dataclass
class Policy:
    """The stored RBAC objects: ClusterRoles by name, Roles by (namespace, name), the bindings."""

    cluster_roles: dict[str, Obj] = field(default_factory=dict)
    roles: dict[tuple[str, str], Obj] = field(default_factory=dict)
    cluster_role_bindings: list[Obj] = field(default_factory=list)
    role_bindings: dict[str, list[Obj]] = field(default_factory=dict)
    # (user, groups, namespace) -> the rules that apply: a snapshot never changes, so neither do they
    _rules: dict[tuple[str, tuple[str, ...], str], tuple[Obj, ...]] = field(
        default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, cluster_roles: Iterable[Obj], roles: Iterable[Obj], cluster_role_bindings: Iterable[Obj],
           role_bindings: Iterable[Obj]) -> "Policy":
        policy = cls({r["metadata"]["name"]: r for r in cluster_roles},
                     {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in roles},
                     list(cluster_role_bindings))
        for binding in role_bindings:
            policy.role_bindings.setdefault(binding["metadata"]["namespace"], []).append(binding)
        return policy

    def role_rules(self, ref: Any, namespace: str) -> list[Obj]:
        """The rules of a roleRef (none when the role does not exist, as upstream)."""
        if not isinstance(ref, dict):
            return []
        if ref.get("kind") == "ClusterRole":
            role = self.cluster_roles.get(ref.get("name", ""))
        elif ref.get("kind") == "Role" and namespace:
            role = self.roles.get((namespace, ref.get("name", "")))
        else:
            role = None
        return [r for r in (role or {}).get("rules") or [] if isinstance(r, dict)]

    def rules_for(self, user: User, namespace: str) -> Iterator[Obj]:
        """Every rule that applies to `user` for a request in `namespace` ("" for cluster scope)."""
        for binding in self.cluster_role_bindings:
            if applies_to(user, binding.get("subjects"), ""):
                yield from self.role_rules(binding.get("roleRef"), "")
        if namespace:
            for binding in self.role_bindings.get(namespace, []):
                if applies_to(user, binding.get("subjects"), namespace):
                    yield from self.role_rules(binding.get("roleRef"), namespace)

    def rules_of(self, user: User, namespace: str) -> tuple[Obj, ...]:
        """`rules_for`, worked out once per user, groups and namespace for this snapshot (a room
        of attendees asks the same few questions thousands of times)."""
        key = (user.name, tuple(user.groups), namespace)
        rules = self._rules.get(key)
        if rules is None:
            if len(self._rules) >= RULES_MEMO:
                self._rules.clear()
            rules = self._rules[key] = tuple(self.rules_for(user, namespace))
        return rules

    def allowed(self, user: User, attrs: Attributes) -> bool:
        if MASTERS in user.groups:
            return True
        return any(rule_allows(attrs, rule) for rule in self.rules_of(user, attrs.namespace))


def forbidden_message(user: User, attrs: Attributes) -> str:
    """The apiserver's `forbiddenMessage`, then prefixed as errors.NewForbidden does."""
    if not attrs.resource_request:
        return f'forbidden: User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = (f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope")
    why = f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'
    return f"{qualified(attrs.resource, attrs.api_group, attrs.name)} is forbidden: {why}"


def qualified(resource: str, group: str, name: str = "") -> str:
    """`pods`, `deployments.apps`, `pods "web"`: how a Status names what it refuses."""
    text = f"{resource}.{group}" if group else resource
    return f'{text} "{name}"' if name else text


# --- escalation: validation.Covers ----------------------------------------------------------------

def _simple_rules(rule: Obj) -> Iterator[Obj]:
    """upstream `BreakdownRule`: one verb, group, resource and name per rule."""
    verbs = rule.get("verbs") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in verbs:
                names = rule.get("resourceNames") or []
                if names:
                    for name in names:
                        yield {"apiGroups": [group], "resources": [resource], "resourceNames": [name], "verbs": [verb]}
                else:
                    yield {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
    for url in rule.get("nonResourceURLs") or []:
        for verb in verbs:
            yield {"nonResourceURLs": [url], "verbs": [verb]}


def _covers_one(owner: Obj, sub: Obj) -> bool:
    """upstream `ruleCovers` for one broken-down rule."""
    def has_all(mine: Any, theirs: Any) -> bool:
        mine = mine or []
        return ALL in mine or all(t in mine for t in theirs or [])

    if not has_all(owner.get("verbs"), sub.get("verbs")):
        return False
    if sub.get("nonResourceURLs"):
        urls = owner.get("nonResourceURLs") or []
        return all(any(u == ALL or u == s or (u.endswith("*") and s.startswith(u[:-1])) for u in urls)
                   for s in sub["nonResourceURLs"])
    if not has_all(owner.get("apiGroups"), sub.get("apiGroups")):
        return False
    for resource in sub.get("resources") or []:
        mine = owner.get("resources") or []
        group_wide = "/" in resource and f"*/{resource.split('/', 1)[1]}" in mine
        if not (ALL in mine or resource in mine or group_wide):
            return False
    names = owner.get("resourceNames") or []
    wanted = sub.get("resourceNames") or []
    # an owner limited to names covers only requests for those names (no names: every name)
    return not names or (bool(wanted) and all(n in names for n in wanted))


def missing_rules(owner_rules: list[Obj], wanted: list[Obj]) -> list[Obj]:
    """The broken-down rules of `wanted` that no owner rule covers (empty: `covers`)."""
    return [sub for rule in wanted if isinstance(rule, dict) for sub in _simple_rules(rule)
            if not any(_covers_one(owner, sub) for owner in owner_rules)]


def covers(owner_rules: list[Obj], wanted: list[Obj]) -> bool:
    return not missing_rules(owner_rules, wanted)


def _go_quoted(values: list[str]) -> str:
    import json
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def compact(rule: Obj) -> str:
    """upstream `CompactString`: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`."""
    parts = [f"{label}:{_go_quoted(rule[key])}" for label, key in
             (("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
              ("ResourceNames", "resourceNames"), ("Verbs", "verbs")) if rule.get(key)]
    return "{" + ", ".join(parts) + "}"


def escalation_message(user: User, missing: list[Obj]) -> str:
    return (f'user "{user.name}" (groups={_go_quoted(list(user.groups))}) is attempting to grant RBAC permissions '
            "not currently held:\n" + "\n".join(compact(rule) for rule in missing))

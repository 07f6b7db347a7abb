"""Which of the hub's traffic records one browser may receive: the same rule as for objects
(`control.auth.visibility`), decided from what the hub says the viewer may do.

Guarantees:
- With no viewer (authentication off) every record passes.
- A record passes when it is the viewer's own (its `user`), or its `scope` (namespace, API group,
  resource) is one the viewer may `list` there or cluster-wide; a record without a scope (a path
  that is no Kubernetes resource) or a cluster-scoped one needs the cluster-wide permission. A
  viewer who may list everything (a cluster admin) receives every record, with no decision made.
- The viewer's rules come from the hub as a SelfSubjectRulesReview (`kubectl auth can-i --list`),
  asked as the viewer: once for the cluster scope and once per namespace met, never per record;
  decisions are memoized per (namespace, group, resource).
- The rules are asked again when a record says an RBAC object changed (a successful write to
  `rbac.authorization.k8s.io`: a namespace's Roles/RoleBindings drop that namespace's rules,
  cluster-wide ones drop all), and at most `MAX_AGE` seconds after they were read (on the given
  clock); a failed review hides the records it was for and is retried after `RETRY_AFTER`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from control.auth.rbac import Attributes, User, rule_allows
from control.auth.visibility import Visibility
from control.clock import REAL, Clock

Record = dict[str, Any]
Rules = list[dict[str, Any]]
RBAC_GROUP = "rbac.authorization.k8s.io"
READS = ("get", "list", "watch")
MAX_AGE = 30.0
RETRY_AFTER = 2.0
MAX_NAMESPACES = 1000
RULES_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"


class _Rules:
    """The viewer's rules per namespace ("" for the cluster scope), as a Policy for `Visibility`."""

    def __init__(self) -> None:
        self.by_namespace: dict[str, Rules] = {}

    def allowed(self, user: User, attrs: Attributes) -> bool:
        return any(rule_allows(attrs, rule) for rule in self.by_namespace.get(attrs.namespace, ()))


class Audience:
    def __init__(self, viewer: str | None, review: Callable[[str], Awaitable[Rules]], clock: Clock = REAL):
        self.viewer, self.review, self.clock = viewer, review, clock
        self._rules = _Rules()
        self._read_at: dict[str, float] = {}
        self._seen: Visibility | None = None

    async def visible(self, records: list[Record]) -> list[Record]:
        if self.viewer is None:
            return records
        self._forget_changed(records)
        await self._known("")
        if self._visibility().sees_everything:
            return records
        namespaces = {r["scope"].get("namespace", "") for r in records
                      if r.get("user") != self.viewer and isinstance(r.get("scope"), dict)} - {""}
        await asyncio.gather(*(self._known(ns) for ns in namespaces))
        return [r for r in records if self._allows(r)]

    def _allows(self, record: Record) -> bool:
        if record.get("user") == self.viewer:
            return True
        scope = record.get("scope")
        if not isinstance(scope, dict):
            return False  # not a Kubernetes resource: a cluster admin's to see (`sees_everything`)
        group, resource = str(scope.get("group") or ""), str(scope.get("resource") or "")
        namespace = str(scope.get("namespace") or "")
        return self._visibility().allows(f"{group}/{resource}" if group else resource, namespace)

    def _visibility(self) -> Visibility:
        if self._seen is None:
            self._seen = Visibility(self._rules, User(self.viewer or ""), "list")  # type: ignore[arg-type]
        return self._seen

    async def _known(self, namespace: str) -> None:
        """The viewer's rules in `namespace` are at hand (asked when missing or old)."""
        read_at = self._read_at.get(namespace)
        if read_at is not None and self.clock.monotonic() - read_at < MAX_AGE:
            return
        if len(self._read_at) > MAX_NAMESPACES:  # many short-lived namespaces: start over
            self._forget(None)
        try:
            rules = await self.review(namespace)
        except Exception:  # the hub refused or went away: hide, and ask again soon
            rules, read_at = [], self.clock.monotonic() - MAX_AGE + RETRY_AFTER
        else:
            read_at = self.clock.monotonic()
        self._rules.by_namespace[namespace] = rules
        self._read_at[namespace] = read_at
        self._seen = None

    def _forget_changed(self, records: list[Record]) -> None:
        for record in records:
            scope = record.get("scope")
            if (record.get("type") == "request" and isinstance(scope, dict) and scope.get("group") == RBAC_GROUP
                    and record.get("verb") not in READS and int(record.get("code") or 0) < 400):
                self._forget(str(scope.get("namespace") or "") or None)

    def _forget(self, namespace: str | None) -> None:
        """Drop one namespace's rules, or (None) all of them."""
        if namespace is None:
            self._read_at.clear()
            self._rules.by_namespace.clear()
        else:
            self._read_at.pop(namespace, None)
            self._rules.by_namespace.pop(namespace, None)
        self._seen = None


def hub_review(client: Any) -> Callable[[str], Awaitable[Rules]]:
    """The viewer's resource rules in a namespace, from the hub (a SelfSubjectRulesReview made by
    `client`, which acts as the viewer)."""
    async def review(namespace: str) -> Rules:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                "spec": {"namespace": namespace}}
        answer = await client.request("POST", RULES_REVIEW, body=body)
        rules = ((answer or {}).get("status") or {}).get("resourceRules") or []
        return [rule for rule in rules if isinstance(rule, dict)]
    return review

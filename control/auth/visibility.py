"""Which stored objects a user may see through the kitchen's own feed (`/kubekitchen/snapshot`,
`/kubekitchen/changes`): RBAC on the object's kind and namespace, as if the user had listed (or
watched) that kind in that namespace themselves.

Guarantees: `Visibility(policy, user, verb).allows(resource, namespace)` is True when the user may
`verb` the store resource ("/pods", "apps/deployments", "GROUP/PLURAL") cluster-wide, or in
`namespace` when the object has one; a cluster-scoped object needs the cluster-wide permission.
Answers are memoized per (resource, namespace): one feed asks the same question many times.
`sees_everything` says whether no filtering is needed at all (a cluster admin), so the common
case costs nothing. The policy is the one given (a watch is authorized when it starts, as upstream).
"""

from __future__ import annotations

from control.auth.rbac import Attributes, Policy, User

EVERYTHING = Attributes("*", True, "*", "*")


class Visibility:
    def __init__(self, policy: Policy | None, user: User | None, verb: str):
        self.policy, self.user, self.verb = policy, user, verb
        self._memo: dict[tuple[str, str], bool] = {}
        self.sees_everything = policy is None or user is None or policy.allowed(user, Attributes(verb, True, "*", "*"))

    def allows(self, resource: str, namespace: str) -> bool:
        if self.sees_everything:
            return True
        key = (resource, namespace)
        known = self._memo.get(key)
        if known is None:
            known = self._memo[key] = self._decide(resource, namespace)
        return known

    def _decide(self, resource: str, namespace: str) -> bool:
        assert self.policy is not None and self.user is not None
        group, _, plural = resource.rpartition("/")
        if self.policy.allowed(self.user, Attributes(self.verb, True, group, plural)):
            return True
        return bool(namespace) and self.policy.allowed(
            self.user, Attributes(self.verb, True, group, plural, namespace=namespace))

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
- A batch is looked over once for every page it goes to (`digest`: its records' scopes, users,
  namespaces, RBAC writes and numbering); a page then decides per distinct scope, and a batch with
  nothing for it (an attendee's page, most batches) costs it no pass over the records.
- The rules are asked again when the traffic says they may have changed, not on a short timer (a
  room of N pages each meeting N namespaces would ask N² reviews per period):
  - a record says an RBAC object changed (a successful write to `rbac.authorization.k8s.io`),
    and only what that write can concern is asked again: a ClusterRole or ClusterRoleBinding drops
    every rule; a Role or RoleBinding in a namespace where the viewer holds rules of its own (beyond
    the cluster scope's: it may take them away) drops that namespace's rules at once; in a namespace
    where it holds none of its own, the write can only grant, and that namespace's rules are read
    again within `GRANT_RECHECK` seconds (however many writes meanwhile: a room of attendees writing
    RBAC in their own namespaces does not make every page ask after each); a viewer who sees
    everything (a cluster admin) asks nothing for a namespace's Roles or RoleBindings, which cannot
    take away what the cluster scope gives. Rules read within `RECHECK_AFTER` seconds of a write are
    read once more `RECHECK_AFTER` later (`GRANT_RECHECK` for a write that can only grant), as the
    hub answering may be another one whose RBAC snapshot is up to `policystore.MAX_AGE` old;
  - records may have been lost (a batch's `source`, a hub process, not met before, or a gap in its
    records' `seq`; the channel layer drops batches a slow page has no room for): a lost record may
    have been an RBAC write, so every rule is read again within `LOST_RECHECK` seconds, not at once
    (a page that keeps losing batches asks no more often than once per `LOST_RECHECK`);
  - and, as a backstop for anything else, at most `MAX_AGE` seconds after they were read (on the
    given clock). A failed review hides the records it was for and is retried after `RETRY_AFTER`.
  The hub still authorizes every request: these rules only decide which records a page is shown.
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
MAX_AGE = 300.0  # a backstop only: changes are noticed from the traffic itself
RECHECK_AFTER = 5.0  # > control.auth.policystore.MAX_AGE, how stale another hub's RBAC may be
GRANT_RECHECK = 30.0  # a write that can only grant to the viewer is seen this late at most
LOST_RECHECK = 30.0
RETRY_AFTER = 2.0
MAX_NAMESPACES = 1000
MAX_SOURCES = 64  # hub processes followed (restarts make new ones); beyond, start over
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
        self._memo: dict[tuple[Any, Any, Any], bool] = {}  # (namespace, group, resource) -> shown
        self._last_seq: dict[str, int] = {}  # source -> the last record's seq received from it
        # namespace (None: all) -> (until, after): rules read before `until` are read again `after` s later
        self._doubt_until: dict[str | None, tuple[float, float]] = {}

    async def visible(self, records: list[Record], source: str | None = None) -> list[Record]:
        """The records this viewer may receive, of one batch from `source` (a hub process; None: not
        followed, as for records that come with no numbering)."""
        if self.viewer is None:
            return records
        batch = digest(records)
        if source is not None:
            self._follow(source, batch)
        namespaces = self._namespaces(batch)
        await self._known("")
        if self._visibility().sees_everything:
            return records
        now = self.clock.monotonic()
        missing = [ns for ns in namespaces if not self._fresh(ns, now)]
        if missing:
            await asyncio.gather(*(self._known(ns) for ns in missing))
        shown = {key for key in batch.scopes if self._shows(key)}
        if not shown and self.viewer not in batch.users:
            return []  # an attendee's page, most batches: others' records in others' namespaces
        if len(shown) == len(batch.scopes) and not batch.unscoped:
            return records
        return [record for record, key, user in zip(records, batch.keys, batch.record_users)
                if user == self.viewer or key in shown]

    def _shows(self, key: tuple[Any, Any, Any]) -> bool:
        """Whether others' records of this (namespace, group, resource) reach the viewer (memoized)."""
        known = self._memo.get(key)
        if known is None:
            namespace, group, resource = (str(part) for part in key)
            known = self._memo[key] = self._visibility().allows(f"{group}/{resource}" if group else resource,
                                                                namespace)
        return known

    def _visibility(self) -> Visibility:
        if self._seen is None:
            self._seen = Visibility(self._rules, User(self.viewer or ""), "list")  # type: ignore[arg-type]
        return self._seen

    def _rules_changed(self) -> None:
        """Every decision made so far may be wrong now."""
        self._seen, self._memo = None, {}

    def _fresh(self, namespace: str, now: float | None = None) -> bool:
        read_at = self._read_at.get(namespace)
        if read_at is None:
            return False
        return (self.clock.monotonic() if now is None else now) - read_at < MAX_AGE

    async def _known(self, namespace: str) -> None:
        """The viewer's rules in `namespace` are at hand (asked when missing or old)."""
        if self._fresh(namespace):
            return
        if len(self._read_at) > MAX_NAMESPACES:  # many short-lived namespaces: start over
            self._forget(None)
        try:
            rules = await self.review(namespace)
        except Exception:  # the hub refused or went away: hide, and ask again soon
            rules, read_at = [], self.clock.monotonic() - MAX_AGE + RETRY_AFTER
        else:
            read_at = self.clock.monotonic()
            again = [after for until, after in (self._doubt_until.get(namespace, (0.0, 0.0)),
                                                self._doubt_until.get(None, (0.0, 0.0))) if read_at < until]
            if again:  # just after an RBAC change: once more, later
                read_at -= MAX_AGE - min(again)
        self._rules.by_namespace[namespace] = rules
        self._read_at[namespace] = read_at
        self._rules_changed()

    def _namespaces(self, batch: Digest) -> set[str]:
        """The namespaces of others' records, forgetting the rules an RBAC write changed."""
        for namespace in batch.rbac_writes:
            self._changed(namespace)
        return batch.namespaces - batch.alone.get(self.viewer, set())

    def _follow(self, source: str, batch: Digest) -> None:
        """Notice records that never reached this page: a source not met before or a gap in its
        `seq`. What they said is unknown: every rule is read again within `LOST_RECHECK`."""
        lost = False
        if source not in self._last_seq:
            if len(self._last_seq) >= MAX_SOURCES:
                self._last_seq.clear()
            lost = bool(self._read_at)  # nothing held yet: nothing that could be stale
        last = self._last_seq.get(source)
        if batch.first_seq is not None:
            if (last is not None and batch.first_seq != last + 1) or batch.gap:
                lost = True
            self._last_seq[source] = batch.last_seq
        if lost:
            latest = self.clock.monotonic() - MAX_AGE + LOST_RECHECK
            for namespace, read_at in self._read_at.items():
                self._read_at[namespace] = min(read_at, latest)

    def _changed(self, namespace: str | None) -> None:
        """RBAC objects of one namespace, or (None) cluster-scoped ones, changed: read again what
        that can concern (now, or within `GRANT_RECHECK` when it can only grant), and once more
        `RECHECK_AFTER` later if read before then."""
        now = self.clock.monotonic()
        self._doubt_until = {ns: doubt for ns, doubt in self._doubt_until.items() if doubt[0] > now}
        if namespace is not None and self._sees_everything():
            return  # a Role or RoleBinding takes nothing away from what the cluster scope gives
        if namespace is None or self._holds_own_rules(namespace):
            self._doubt_until[namespace] = (now + RECHECK_AFTER, RECHECK_AFTER)
            self._forget(namespace)
            return
        # It can only grant: no hurry, then or for the read that may have come too soon after it.
        _, after = self._doubt_until.get(namespace, (0.0, GRANT_RECHECK))  # an earlier hurry stands
        self._doubt_until[namespace] = (now + RECHECK_AFTER, after)
        if namespace in self._read_at:
            self._read_at[namespace] = min(self._read_at[namespace], now - MAX_AGE + GRANT_RECHECK)

    def _sees_everything(self) -> bool:
        return "" in self._read_at and self._visibility().sees_everything

    def _holds_own_rules(self, namespace: str) -> bool:
        """Whether the viewer's rules in `namespace` hold any beyond the cluster scope's (when the
        cluster scope's are unknown, every rule counts as its own)."""
        cluster = self._rules.by_namespace.get("", []) if "" in self._read_at else []
        return any(rule not in cluster for rule in self._rules.by_namespace.get(namespace, ()))

    def _forget(self, namespace: str | None) -> None:
        """Drop one namespace's rules, or (None) all of them."""
        if namespace is None:
            self._read_at.clear()
            self._rules.by_namespace.clear()
        else:
            self._read_at.pop(namespace, None)
            self._rules.by_namespace.pop(namespace, None)
        self._rules_changed()


class Digest:
    """What every page asks of one batch, worked out once for all of them: per record its scope key
    (namespace, group, resource; None without a scope) and user; the distinct keys and users; the
    namespaces met, and per user those where every record is theirs; the RBAC writes' namespaces
    (None for a cluster-scoped one), in order; and the first and last `seq` and whether they run
    with a gap."""

    __slots__ = ("keys", "record_users", "scopes", "users", "unscoped", "namespaces", "alone", "rbac_writes",
                 "first_seq", "last_seq", "gap")

    def __init__(self, records: list[Record]):
        self.keys: list[tuple[Any, Any, Any] | None] = []
        self.record_users: list[Any] = []
        namespace_users: dict[str, set[Any]] = {}
        self.rbac_writes: list[str | None] = []
        self.unscoped = False
        self.first_seq: int | None = None
        self.last_seq: int | None = None
        self.gap = False
        for record in records:
            user = record.get("user")
            self.record_users.append(user)
            seq = record.get("seq")
            if isinstance(seq, int):
                if self.last_seq is None:
                    self.first_seq = seq
                elif seq != self.last_seq + 1:
                    self.gap = True
                self.last_seq = seq
            scope = record.get("scope")
            if not isinstance(scope, dict):
                self.keys.append(None)
                self.unscoped = True
                continue
            namespace = scope.get("namespace") or ""
            self.keys.append((namespace, scope.get("group") or "", scope.get("resource") or ""))
            namespace_users.setdefault(namespace, set()).add(user)
            if (scope.get("group") == RBAC_GROUP and record.get("type") == "request"
                    and record.get("verb") not in READS and int(record.get("code") or 0) < 400):
                self.rbac_writes.append(str(namespace) or None)
        self.scopes = {key for key in self.keys if key is not None}
        self.users = set(self.record_users)
        self.namespaces = {namespace for namespace in namespace_users if namespace}
        self.alone: dict[Any, set[str]] = {}  # user -> the namespaces where every record is theirs
        for namespace, users in namespace_users.items():
            if len(users) == 1:
                self.alone.setdefault(next(iter(users)), set()).add(namespace)


def digest(records: list[Record]) -> Digest:
    """The batch's digest, made once for every page the batch goes to (the embedded channel layer
    hands each page the same list; through Redis each page has its own copy and makes its own)."""
    known = _DIGESTS.get(id(records))
    if known is not None and known[0] is records:
        return known[1]
    made = Digest(records)
    if len(_DIGESTS) >= _DIGESTS_MAX:
        del _DIGESTS[next(iter(_DIGESTS))]
    _DIGESTS[id(records)] = (records, made)
    return made


# id(batch) -> (the batch, its digest): the last few batches (the entry holds the batch, so its id
# is not reused while the entry lives).
_DIGESTS: dict[int, tuple[list[Record], Digest]] = {}
_DIGESTS_MAX = 8


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

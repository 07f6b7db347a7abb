"""Watchers indexed by what they select: a change is looked at only for the watchers it can concern.

kube-apiserver's cacher keeps its watchers by namespace and by "trigger" values (`IndexerFuncs`,
`triggerValues`: a kubelet's `spec.nodeName=node-3` is found by the value, not by asking every
kubelet); etcd keeps the watchers that have caught up in a "synced" group the write path feeds
directly. This is both, for the hub's change feed (`control.storage.feed.ChangeFeed`).

Guarantees:
- A watcher joins once its reader has caught up with the feed (its revision is the feed's last),
  with its resource, its namespace ("" for all namespaces) and at most one `Trigger`: a name and a
  value its selector requires exactly (a field `f=v`, or a label `l=v`) with the function giving an
  object's value for it. From then on `dispatch` hands it a change (appended to `pending`) only
  when the change is of its resource and namespace scope and either it has no trigger, the
  object's value equals its trigger's, or it "holds" the object: the object's value equalled its
  trigger when the object was last handed to it (or the object was in the list it started from).
  The held objects are what lets a watcher see an update that moves an object out of its selector
  (upstream uses the previous object's trigger value for the same purpose), so after the
  selector's own translation (ADDED / MODIFIED / DELETED) a watcher sends exactly what a scan of
  every change would have sent; no other group, namespace or value is looked at for it.
- A watcher of every resource (joined with resource None: the kitchen's change stream of one
  dashboard page) is handed each change its `admits(resource, namespace)` accepts (every change
  without one), so a page that may see only its own namespace is not woken by the others'.
- Order and no loss: changes are appended in the order `dispatch` is called (the feed's revision
  order), each at most once per watcher. A watcher whose `pending` grows past `limit` or holds a
  change the feed has let go of (a slow reader: `forget_before`, so pending changes never hold
  memory beyond the feed's own bounds), or whose feed restarts its run (`drop_all`), is dropped: it leaves the index, its pending
  changes are cleared, and its reader goes back to reading the feed after the last revision it
  consumed (etcd's unsynced group), so it neither misses nor repeats a change.
- Index state is touched only on the event loop (the feed offers and readers read there).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from control.storage.store import DELETED, Change

Key = tuple[str, str]  # (namespace, name)
Getter = Callable[[dict[str, Any]], "str | None"]

PENDING_LIMIT = 10_000  # a reader this far behind reads the feed itself again


@dataclass(frozen=True)
class Trigger:
    """A value a watcher's selector requires exactly: `get(obj) == value` is necessary for a match."""

    name: str
    value: str
    get: Getter = field(compare=False, hash=False)


@dataclass
class Interest:
    """What a watcher selects, for the index: namespace ("" all), trigger, and the objects it
    holds when it joins (those of its list or its translated past). A watcher of every resource
    (joined with resource None: the kitchen's change stream) selects by `admits(resource,
    namespace)` instead (None: every change)."""

    namespace: str = ""
    trigger: Trigger | None = None
    held: Callable[[], Iterable[Key]] = lambda: ()
    admits: Callable[[str, str], bool] | None = None


class _Group:
    """The watchers of one resource in one namespace scope."""

    def __init__(self) -> None:
        self.everyone: set[Watcher] = set()
        self.by_trigger: dict[str, tuple[Getter, dict[str, set[Watcher]]]] = {}
        self.holders: dict[Key, set[Watcher]] = {}

    def empty(self) -> bool:
        return not self.everyone and not self.by_trigger


class Watcher:
    """One reader's place in the index: the changes handed to it and not yet taken."""

    def __init__(self, index: WatcherIndex, where: tuple[str, str], group: _Group, trigger: Trigger | None,
                 limit: int, admits: Callable[[str, str], bool] | None = None):
        self.index, self.where, self.group, self.trigger, self.limit = index, where, group, trigger, limit
        self.admits = admits
        self.pending: list[Change] = []
        self.held: set[Key] = set()
        self.dropped = False
        self._wake: asyncio.Future | None = None

    def push(self, change: Change) -> None:
        self.pending.append(change)
        if len(self.pending) > self.limit:
            self.index.overflowed.append(self)  # dropped once the dispatch is over, not inside its loop
        self.index.woken.add(self)

    def hold(self, key: Key) -> None:
        if key not in self.held:
            self.held.add(key)
            self.group.holders.setdefault(key, set()).add(self)

    def release(self, key: Key) -> None:
        if key in self.held:
            self.held.discard(key)
            holders = self.group.holders.get(key)
            if holders is not None:
                holders.discard(self)
                if not holders:
                    del self.group.holders[key]

    def take(self) -> tuple[list[Change], int]:
        """The changes handed over since the last take, and the revision they bring the reader to
        (the feed's newest: every change up to it that concerns this watcher is among them)."""
        changes, self.pending = self.pending, []
        return changes, self.index.head

    async def wait(self, timeout: float) -> None:
        """Until a change is handed over (or the watcher is dropped), at most `timeout` seconds."""
        if self.pending or self.dropped:
            return
        # A future of its own and one timer: asyncio.wait's set, waiter and callbacks cost more
        # than the watch's whole turn once every watcher wakes for every change.
        loop = asyncio.get_running_loop()
        self._wake = wake = loop.create_future()
        timer = loop.call_later(timeout, _settle, wake)
        try:
            await wake
        finally:
            timer.cancel()
            self._wake = None

    def wake(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def drop(self) -> None:
        """Leave the index; the reader goes back to reading the feed from its own revision."""
        if self.dropped:
            return
        self.dropped = True
        self.pending = []
        self.index.remove(self)
        self.wake()


def _settle(wake: asyncio.Future) -> None:
    if not wake.done():
        wake.set_result(None)


class WatcherIndex:
    def __init__(self, head: int, *, limit: int = PENDING_LIMIT):
        self.head = head  # the revision of the last change dispatched
        self.limit = limit
        self.groups: dict[tuple[str, str], _Group] = {}
        self.everywhere = _Group()  # watchers of every resource, each with its `admits`
        self.woken: set[Watcher] = set()
        self.overflowed: list[Watcher] = []
        self.members = 0

    def join(self, resource: str | None, interest: Interest) -> Watcher:
        """Index a watcher of `resource` as `interest` says, or (resource None) of every resource,
        handed the changes `interest.admits` (namespace and trigger then play no part)."""
        if resource is None:
            watcher = Watcher(self, ("", ""), self.everywhere, None, self.limit, interest.admits)
            self.everywhere.everyone.add(watcher)
            self.members += 1
            return watcher
        where = (resource, interest.namespace)
        group = self.groups.setdefault(where, _Group())
        watcher = Watcher(self, where, group, interest.trigger, self.limit)
        trigger = interest.trigger
        if trigger is None:
            group.everyone.add(watcher)
        else:
            _, by_value = group.by_trigger.setdefault(trigger.name, (trigger.get, {}))
            by_value.setdefault(trigger.value, set()).add(watcher)
            for key in interest.held():
                watcher.hold(key)
        self.members += 1
        return watcher

    def remove(self, watcher: Watcher) -> None:
        group = watcher.group
        for key in list(watcher.held):
            watcher.release(key)
        self.woken.discard(watcher)
        trigger = watcher.trigger
        if trigger is None:
            if watcher not in group.everyone:
                return
            group.everyone.discard(watcher)
        else:
            getter_values = group.by_trigger.get(trigger.name)
            members = getter_values[1].get(trigger.value) if getter_values else None
            if not members or watcher not in members:
                return
            members.discard(watcher)
            if not members:
                del getter_values[1][trigger.value]
                if not getter_values[1]:
                    del group.by_trigger[trigger.name]
        self.members -= 1
        if group is not self.everywhere and group.empty() and self.groups.get(watcher.where) is group:
            del self.groups[watcher.where]

    def dispatch(self, change: Change) -> None:
        """Hand one committed change (the next revision) to the watchers it can concern."""
        self.head = change.revision
        for watcher in self.everywhere.everyone:
            if watcher.admits is None or watcher.admits(change.resource, change.namespace):
                watcher.push(change)
        scopes = (change.namespace, "") if change.namespace else ("",)
        for scope in scopes:
            group = self.groups.get((change.resource, scope))
            if group is not None:
                self._dispatch(group, change)
        if self.overflowed:
            overflowed, self.overflowed = self.overflowed, []
            for watcher in overflowed:
                watcher.drop()

    def _dispatch(self, group: _Group, change: Change) -> None:
        for watcher in group.everyone:
            watcher.push(change)
        if not group.by_trigger:
            return
        key = (change.namespace, change.name)
        gone = change.type == DELETED
        matched: set[Watcher] = set()
        obj = change.obj()
        for get, by_value in group.by_trigger.values():
            value = get(obj)
            if value is not None:
                matched.update(by_value.get(value, ()))
        for watcher in matched:
            watcher.push(change)
            if gone:
                watcher.release(key)
            else:
                watcher.hold(key)
        holders = group.holders.get(key)
        if holders:
            # It matched them before and no longer does (or is deleted): they must hear of it once.
            for watcher in [w for w in holders if w not in matched]:  # a copy: release changes `holders`
                watcher.push(change)
                watcher.release(key)

    def wake(self) -> None:
        """Wake every watcher handed something since the last wake-up."""
        woken, self.woken = self.woken, set()
        for watcher in woken:
            watcher.wake()

    def forget_before(self, first: int) -> None:
        """The feed let changes before `first` leave its memory: a watcher still holding one of
        them is dropped, so a stuck reader never keeps changes alive past the feed's own bounds."""
        behind = [w for group in self._all_groups() for w in _members(group) if w.pending
                  and w.pending[0].revision < first]
        for watcher in behind:
            watcher.drop()

    def drop_all(self, head: int) -> None:
        """The feed restarted its run at `head`: every watcher reads for itself again."""
        for watcher in [w for group in self._all_groups() for w in _members(group)]:
            watcher.drop()
        self.head = head

    def _all_groups(self) -> list[_Group]:
        return [*self.groups.values(), self.everywhere]


def _members(group: _Group) -> list[Watcher]:
    return [*group.everyone, *(w for _, by_value in group.by_trigger.values() for ws in by_value.values() for w in ws)]

"""Kube Kitchen's own two paths for the dashboard (not part of the Kubernetes API):

- `GET /kubekitchen/snapshot`: the objects the picture draws, and the revision they are
  consistent with (the "list" half of list-then-watch): the built-in kinds of `SNAPSHOT_KINDS`
  that the hub serves (keyed by plural), and every object of every custom kind (keyed
  "<group>/<plural>", so a custom plural never shadows a built-in one).
- `GET /kubekitchen/snapshot?resourceVersion=N`: the same objects as they were at revision N, read
  from the version log (`control.storage.snapshot`), for the page's timeline. Every answer carries
  the retained window, `"window": {"oldest": C, "newest": L}` (a snapshot can be read at any
  revision from C to L) and, at a revision, `"time"`: when that revision's newest write was made.
  A revision before the window is 410 Expired naming the oldest one kept (`too old resource
  version: N (C)`, and C in `details.causes`), above it 504 "Too large resource version", anything
  but a whole number 400.
- `GET /kubekitchen/changes?watch=1&resourceVersion=N`: every committed change after N, of every
  kind, in revision order, each with the client that caused it (the "watch" half; the version log).
  Without `watch`, one page of them as a list (`?resourceVersion=N&limit=M`, at most `MAX_PAGE`):
  `{"revision": R, "window": ..., "more": bool, "items": [...]}`, R the last revision in the page
  (N when empty), items shaped as the watch's lines plus `time` (when written); a page before the window is 410 as above.

What a caller receives is what RBAC lets it see (`control.auth.visibility`): each object (and each
change) only if the caller may `list` (for a change: `watch`) its kind cluster-wide or in its
namespace, so an attendee bound to `admin` in one namespace sees that namespace's objects and nothing
of another's; a cluster admin sees everything, unfiltered. The paths themselves are open to every
authenticated user (the ClusterRole `kubekitchen:feed`).

Guarantees: the same semantics as a Kubernetes watch, on the same loop as the API watch
(`control.api.watch.change_stream`) — nothing missed or repeated when resumed from the last revision
seen, a bookmark line (`{"type":"BOOKMARK","revision":N}`) every `KK_BOOKMARK_INTERVAL` seconds, and
one ERROR line with a 410 Status when N was compacted away.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import json

from control import errors, protocol
from control.auth import enabled as auth_enabled
from control.auth.policystore import cache as policy_cache
from control.auth.visibility import Visibility
from control.storage import snapshot as at_revision
from control.storage import store
from control import kinds as registry
from control.api import traffic
from control.storage.db import run_db
from control.storage.feed import get_feed
from control.storage.watchers import Interest
from control.api.request import Route, int_param, parse_revision
from control.api.responses import Reply, Stream, dumps, raw_json_response
from control.api.watch import change_stream

SNAPSHOT_KINDS = protocol.SNAPSHOT_KINDS
_CHANGES = SimpleNamespace(plural="changes", group="kubekitchen")


def snapshot_keys() -> dict[str, str]:
    """{snapshot key: store resource} for the built-in kinds the picture draws and every custom
    kind served now (one key per kind, however many versions it serves)."""
    keys = {k.plural: k.resource for k in registry.KINDS if k.plural in SNAPSHOT_KINDS}
    keys.update({k.resource: k.resource for k in registry.all_kinds() if k.custom})
    return keys


MAX_PAGE = 10_000


def _window(newest: int) -> str:
    return f'"window":{{"oldest":{store.compacted_revision()},"newest":{newest}}}'


def _namespace_of(body: str) -> str:
    return str((json.loads(body).get("metadata") or {}).get("namespace") or "")


def _visible(resource: str, bodies: list[str], seen: Visibility) -> list[str]:
    if seen.allows(resource, ""):
        return bodies
    return [body for body in bodies if seen.allows(resource, _namespace_of(body))]


def _objects_text(keys: dict[str, str], bodies: dict[str, list[str]], seen: Visibility) -> str:
    return ",".join(f'"{plural}":[{",".join(_visible(key, bodies[key], seen))}]' for plural, key in keys.items())


async def visibility(request: Any, verb: str) -> Visibility:
    """What the request's user may see of the feed (everything when authentication is off)."""
    if not auth_enabled() or getattr(request, "user", None) is None:
        return Visibility(None, None, verb)
    return Visibility(await policy_cache().current(), request.user, verb)


def _snapshot_text(seen: Visibility) -> str:
    keys = snapshot_keys()
    bodies, revision = store.objects_of(list(keys.values()))
    return f'{{"revision":{revision},{_window(revision)},"objects":{{{_objects_text(keys, bodies, seen)}}}}}'


def _too_old(revision: int) -> errors.Gone:
    """410 for a revision before the window, as the watch cache words it, naming the oldest kept."""
    oldest = store.compacted_revision()
    return errors.Gone(f"too old resource version: {revision} ({oldest})",
                       details={"group": "kubekitchen", "kind": "snapshot", "causes": [
                           {"reason": "ResourceVersionTooOld", "field": "resourceVersion",
                            "message": f"the oldest retained revision is {oldest}"}]})


def _requested_revision(query: dict[str, str]) -> int:
    revision = parse_revision(query.get("resourceVersion", ""))
    if revision < 0:
        raise errors.BadRequest(errors.field_invalid("resourceVersion", query["resourceVersion"],
                                                     "must be a non-negative integer"))
    return revision


def _snapshot_at_text(revision: int, seen: Visibility) -> str:
    keys = snapshot_keys()
    newest = store.current_revision()
    if revision < store.compacted_revision():
        raise _too_old(revision)
    try:
        bodies = at_revision.lists_at(list(keys.values()), revision)
    except errors.Gone:
        raise _too_old(revision) from None  # compacted while we read: the same answer as before
    return (f'{{"revision":{revision},{_window(max(newest, revision))},"time":{dumps(at_revision.time_at(revision))},'
            f'"objects":{{{_objects_text(keys, bodies, seen)}}}}}')


async def snapshot(query: dict[str, str] | None = None, seen: Visibility | None = None) -> Reply:
    seen = seen or Visibility(None, None, "list")
    if query and query.get("resourceVersion", "") != "":
        revision = _requested_revision(query)
        return raw_json_response(await run_db(lambda: _snapshot_at_text(revision, seen)))
    return raw_json_response(await run_db(lambda: _snapshot_text(seen)))


def _shown(changes: list[store.Change], seen: Visibility) -> list[store.Change]:
    return [c for c in changes if seen.allows(c.resource, c.namespace)]


def _changes_page_text(revision: int, limit: int, seen: Visibility) -> str:
    try:
        page = store.events_since(revision, limit=limit + 1)
    except errors.Gone:
        raise _too_old(revision) from None
    more, page = len(page) > limit, page[:limit]
    last = page[-1].revision if page else revision
    # A list item also says when it was written (the timeline labels a revision with its time).
    items = ",".join(f'{_encoded(c).decode()[:-2]},"time":{c.created_at!r}}}' for c in _shown(page, seen))
    return (f'{{"revision":{last},{_window(store.current_revision())},"more":{"true" if more else "false"},'
            f'"items":[{items}]}}')


async def changes_page(query: dict[str, str], seen: Visibility | None = None) -> Reply:
    """One page of the changes after a revision, as a list (the timeline's replay reads these)."""
    if query.get("resourceVersion", "") == "":
        raise errors.BadRequest("the change stream is a watch (add watch=1), or a list after a resourceVersion")
    revision = _requested_revision(query)
    limit = min(int_param(query, "limit") or 1000, MAX_PAGE)
    seen = seen or Visibility(None, None, "list")
    return raw_json_response(await run_db(lambda: _changes_page_text(revision, limit, seen)))


def _encoded(change: store.Change) -> bytes:
    group, _, plural = change.resource.rpartition("/")
    head = {"type": change.type, "revision": change.revision, "resource": plural, "group": group,
            "namespace": change.namespace, "name": change.name, "actor": change.actor}
    return (dumps(head)[:-1] + f',"object":{change.body}}}\n').encode()


def change_line(change: store.Change) -> bytes:
    """The change as one line of the stream (on the event loop): encoded once per change, however
    many streams carry it (every open dashboard page holds one), as the API watch shares
    `Change.line`."""
    known = _LINES.get(id(change))
    if known is not None and known[0] is change:
        return known[1]
    line = _encoded(change)
    if len(_LINES) >= _LINES_MAX:
        del _LINES[next(iter(_LINES))]  # the oldest: a stream still to send it encodes it again
    _LINES[id(change)] = (change, line)
    return line


# id(change) -> (the change, its line). The entry holds the change itself, so its id is not reused
# while the entry lives; the feed hands every stream the same Change objects of a batch.
_LINES: dict[int, tuple[store.Change, bytes]] = {}
_LINES_MAX = 1024


def _bookmark(revision: int) -> bytes:
    return f'{{"type":"BOOKMARK","revision":{revision}}}\n'.encode()


async def changes(query: dict[str, str], actor: str, seen: Visibility | None = None, user: Any = None) -> Stream:
    if query.get("watch") not in ("1", "true", "True"):
        raise errors.BadRequest("the change stream is a watch: add watch=1")
    requested = query.get("resourceVersion", "")
    start = parse_revision(requested) if requested else (await get_feed()).last
    timeout = float(int_param(query, "timeoutSeconds") or 3600)
    seen = seen or Visibility(None, None, "watch")

    def render(batch: list[store.Change]) -> list[bytes]:
        return [change_line(c) for c in _shown(batch, seen)]

    # Joined to the feed's index as a watcher of every resource: a page that may see only its own
    # namespace is woken by its changes alone, not by every batch of the room's.
    interest = Interest(admits=None if seen.sees_everything else seen.allows)
    return Stream(change_stream(start, render=render, timeout=timeout, bookmark=_bookmark, interest=interest,
                                delivered=lambda count, revision: traffic.delivered(actor, _CHANGES, count, revision,
                                                                                    user)))


async def snapshot_request(request: Any) -> Reply:
    request.tag = {"verb": "list", "resource": "snapshot"}
    return await snapshot(request.query, await visibility(request, "list"))


async def changes_request(request: Any) -> Stream | Reply:
    if request.query.get("watch") not in ("1", "true", "True"):
        request.tag = {"verb": "list", "resource": "changes"}
        return await changes_page(request.query, await visibility(request, "list"))
    request.tag = {"verb": "watch", "resource": "changes"}
    return await changes(request.query, request.actor, await visibility(request, "watch"), request.user)


ROUTES = (Route(r"/kubekitchen/snapshot", snapshot_request), Route(r"/kubekitchen/changes", changes_request))

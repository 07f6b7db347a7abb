"""Kube Kitchen's own two paths for the dashboard (not part of the Kubernetes API):

- `GET /kubekitchen/snapshot`: the objects the picture draws, and the revision they are
  consistent with (the "list" half of list-then-watch): the built-in kinds of `SNAPSHOT_KINDS`
  that the hub serves (keyed by plural), and every object of every custom kind (keyed
  "<group>/<plural>", so a custom plural never shadows a built-in one).
- `GET /kubekitchen/changes?watch=1&resourceVersion=N`: every committed change after N, of every
  kind, in revision order, each with the client that caused it (the "watch" half; the version log).

Guarantees: the same semantics as a Kubernetes watch, on the same loop as the API watch
(`control.api.watch.change_stream`) — nothing missed or repeated when resumed from the last revision
seen, a bookmark line (`{"type":"BOOKMARK","revision":N}`) every `KK_BOOKMARK_INTERVAL` seconds, and
one ERROR line with a 410 Status when N was compacted away.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from control import errors, protocol
from control.storage import store
from control import kinds as registry
from control.api import traffic
from control.storage.db import run_db
from control.storage.feed import get_feed
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


def _snapshot_text() -> str:
    keys = snapshot_keys()
    bodies, revision = store.objects_of(list(keys.values()))
    parts = ",".join(f'"{plural}":[{",".join(bodies[key])}]' for plural, key in keys.items())
    return f'{{"revision":{revision},"objects":{{{parts}}}}}'


async def snapshot() -> Reply:
    return raw_json_response(await run_db(_snapshot_text))


def change_line(change: store.Change) -> bytes:
    group, _, plural = change.resource.rpartition("/")
    head = {"type": change.type, "revision": change.revision, "resource": plural, "group": group,
            "namespace": change.namespace, "name": change.name, "actor": change.actor}
    return (dumps(head)[:-1] + f',"object":{change.body}}}\n').encode()


def _bookmark(revision: int) -> bytes:
    return f'{{"type":"BOOKMARK","revision":{revision}}}\n'.encode()


def _render(changes: list[store.Change]) -> list[bytes]:
    return [change_line(c) for c in changes]


async def changes(query: dict[str, str], actor: str) -> Stream:
    if query.get("watch") not in ("1", "true", "True"):
        raise errors.BadRequest("the change stream is a watch: add watch=1")
    requested = query.get("resourceVersion", "")
    start = parse_revision(requested) if requested else (await get_feed()).last
    timeout = float(int_param(query, "timeoutSeconds") or 3600)
    return Stream(change_stream(start, render=_render, timeout=timeout, bookmark=_bookmark,
                                delivered=lambda count, revision: traffic.delivered(actor, _CHANGES, count, revision)))


async def snapshot_request(request: Any) -> Reply:
    request.tag = {"verb": "list", "resource": "snapshot"}
    return await snapshot()


async def changes_request(request: Any) -> Stream:
    request.tag = {"verb": "watch", "resource": "changes"}
    return await changes(request.query, request.actor)


ROUTES = (Route(r"/kubekitchen/snapshot", snapshot_request), Route(r"/kubekitchen/changes", changes_request))

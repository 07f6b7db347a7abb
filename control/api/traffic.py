"""Traffic attribution: who asked the hub what, with which answer, how fast; and which watch
events the hub delivered to whom. The dashboard draws these as movements along the spokes.

Guarantees: every HTTP request through the hub produces exactly one record (also errors and
unknown paths); recording never blocks or fails a request; records are kept in a bounded ring
and handed to in-process listeners and, in batches (bounded), to the channel layer group
`protocol.TRAFFIC_GROUP`, each batch naming this process (`SOURCE`) so that a reader can tell a gap in
the records' `seq` (numbered 1, 2, ... per process) from another hub's numbering; watch deliveries are summed per client, user, resource and namespace
between flushes.

A 409 Conflict (optimistic concurrency, reason "Conflict") answered to one of the cluster's own
components (controller-manager, scheduler, a node's kubelet or kube-proxy, the restaurant's
cooks, which conflict on purpose) is marked `retried`:
those components requeue the key and write again on a fresh read, by design, so the answer is a
retry to come and not a request that failed for good (kubectl's and the dashboard's are not marked:
a person decides what to do with theirs). A watch whose start revision was compacted is answered
HTTP 200 and one ERROR event carrying 410 Expired, as Kubernetes does; that answer is published as
one more record of the same request (`inStream`: it is not counted as a second request).

Each record names its `user` (the user the request ran as: after impersonation, "" when it was
never authenticated) and, for a request on a Kubernetes resource, its `scope` (namespace, API
group and plural, as the authorizer reads the path), so a dashboard can pass a viewer only the
records it may see (`dashboard.audience`); a person's client is drawn as their own spoke: `who` is
`kubectl · alice` for alice's kubectl (`spoke_name`), also as the author of the changes it makes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import uuid
from collections import deque
from typing import Any, Callable

from control import protocol
from control.auth.requestinfo import attributes
from control.clock import REAL as clock

log = logging.getLogger(__name__)

GROUP = protocol.TRAFFIC_GROUP
MAX_PENDING = 10_000
recent: deque[dict[str, Any]] = deque(maxlen=2000)
_listeners: list[Callable[[dict[str, Any]], None]] = []
_pending: list[dict[str, Any]] = []
_flusher: asyncio.Task | None = None
_sequence = itertools.count(1)
# This process's records, told apart from another hub's (or this hub's before a restart) by readers
# of the channel layer that follow `seq` to notice records they never received.
SOURCE = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


def listen(listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def publish(record: dict[str, Any]) -> None:
    record["seq"] = next(_sequence)
    recent.append(record)
    for listener in list(_listeners):
        try:
            listener(record)
        except Exception:
            log.exception("traffic listener failed")
    _pending.append(record)
    if len(_pending) > MAX_PENDING:  # nobody is draining fast enough: keep the newest
        del _pending[:len(_pending) - MAX_PENDING]
    _ensure_flusher()


def _ensure_flusher() -> None:
    global _flusher
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if _flusher is None or _flusher.done() or _flusher.get_loop() is not loop:
        _flusher = loop.create_task(_flush_forever())


async def _flush_forever() -> None:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    while True:
        await clock.sleep(0.05)
        _drain_deliveries()
        if not _pending:
            # Nothing left: the task ends and the next record starts another (`_ensure_flusher`),
            # so an idle hub is not woken 20 times a second for nothing.
            return
        if layer is None:
            continue
        batch = _pending[:500]
        del _pending[:len(batch)]
        try:
            await layer.group_send(GROUP, {"type": protocol.TRAFFIC_BATCH, "records": batch, "source": SOURCE})
        except Exception:
            log.warning("could not publish traffic to the channel layer", exc_info=True)


FAILURE_MESSAGE_CHARS = 200


def failed(tag: dict[str, str], path: str, query: dict[str, str], body: bytes) -> dict[str, str]:
    """The tag of a request answered 4xx/5xx, with what the dashboard names a failure by: the path,
    the answer's Status reason and message (cut short), and whether it was a dry run."""
    try:
        status = json.loads(body) if body else {}
    except ValueError:
        status = {}
    status = status if isinstance(status, dict) else {}
    return {**tag, "path": path, "reason": str(status.get("reason") or ""),
            "message": str(status.get("message") or "")[:FAILURE_MESSAGE_CHARS],
            "dryRun": "All" if query.get("dryRun") == "All" else ""}


SPOKE_SEPARATOR = protocol.SPOKE_SEPARATOR
# Users that are a spoke of their own (controllers, scheduler, nodes, pods' service accounts, the
# kitchen's helpers) and the dashboard's clients, which already name their user (`dashboard/<user>`).
_OWN_SPOKES = ("system:", "kubekitchen:")


def spoke_name(actor: str, user: str, groups: tuple[str, ...] = ()) -> str:
    """The spoke a request is drawn on: a person's client (kubectl, the Python client, curl) is
    theirs, `kubectl · alice`; spokes, the dashboard and cluster admins keep the client's name."""
    if (not user or user.startswith(_OWN_SPOKES) or actor.startswith("dashboard") or "system:masters" in groups
            or actor.endswith(SPOKE_SEPARATOR + user)):
        return actor
    return f"{actor}{SPOKE_SEPARATOR}{user}"


def scope(method: str, path: str, query: dict[str, str]) -> dict[str, str] | None:
    """What a request touches, as the authorizer reads its path: None for a non-resource path."""
    attrs = attributes(method, path, query)
    if not attrs.resource_request:
        return None
    return {"namespace": attrs.namespace, "group": attrs.api_group, "resource": attrs.resource}


RETRYING_COMPONENTS = ("kube-controller-manager", "kube-scheduler", "line-cook", "garnish-cook",
                       "gateway-controller")
RETRYING_AGENTS = ("kubelet/", "kube-proxy/")


def retried_conflict(who: str, code: int, tag: dict[str, str]) -> bool:
    """Whether an answer is a 409 Conflict that the client, one of the cluster's own components on
    its own spoke, retries by requeueing (not a person's client, not the dashboard)."""
    return (code == 409 and tag.get("reason") == "Conflict"
            and (who in RETRYING_COMPONENTS or who.startswith(RETRYING_AGENTS)))


def request_done(actor: str, tag: dict[str, str], code: int, started: float, user: Any = None,
                 where: dict[str, str] | None = None) -> None:
    """One request answered (called once per request by the hub's ASGI app); `user` is who made it
    (control.auth.rbac.User, None when never authenticated), `where` its `scope`."""
    name, groups = (user.name, user.groups) if user is not None else ("", ())
    who = spoke_name(actor, name, groups)
    record = {"type": protocol.RECORD_REQUEST, "who": who, **tag, "code": code,
              "latency_ms": round((clock.monotonic() - started) * 1000, 3), "ts": clock.now(), "user": name}
    if retried_conflict(who, code, tag):
        record["retried"] = True
    if where is not None:
        record["scope"] = where
    publish(record)


def watch_expired(actor: str, resource: str, group: str, namespace: str, status: dict[str, Any],
                  user: Any = None) -> None:
    """A watch of `resource` in `namespace` ("" cluster-wide) was answered, inside its HTTP 200
    stream, with an ERROR event carrying `status` (410 Expired): one record of that answer, marked
    `inStream` (the request itself was recorded when its stream began)."""
    name, groups = (user.name, user.groups) if user is not None else ("", ())
    record = {"type": protocol.RECORD_REQUEST, "who": spoke_name(actor, name, groups), "verb": "watch",
              "resource": resource, "namespace": namespace, "code": int(status.get("code") or 410),
              "reason": str(status.get("reason") or ""),
              "message": str(status.get("message") or "")[:FAILURE_MESSAGE_CHARS], "dryRun": "",
              "inStream": True, "latency_ms": 0, "ts": clock.now(), "user": name,
              "scope": {"namespace": namespace, "group": group, "resource": resource}}
    publish(record)


_deliveries: dict[tuple[str, str, str, str, str | None], list[int]] = {}


def delivered(actor: str, kind: Any, count: int, revision: int, user: Any = None,
              namespace: str | None = None) -> None:
    """A watch stream just carried `count` events up to `revision` to `actor`, for `user`, of a watch
    in `namespace` ("" cluster-wide; None: not a Kubernetes resource). Deliveries are summed per
    (client, user, resource, namespace) and published every flush, so a busy fan-out (100 watchers
    × 500 events/s) costs a dictionary update per batch, not a record."""
    name, groups = (user.name, user.groups) if user is not None else ("", ())
    key = (spoke_name(actor, name, groups), name, kind.plural, kind.group, namespace)
    total = _deliveries.get(key)
    if total is None:
        _deliveries[key] = [count, revision]
    else:
        total[0] += count
        total[1] = max(total[1], revision)
    _ensure_flusher()


def _drain_deliveries() -> None:
    if not _deliveries:
        return
    now = clock.now()
    items = list(_deliveries.items())
    _deliveries.clear()
    for (who, user, plural, group, namespace), (count, revision) in items:
        record = {"type": protocol.RECORD_WATCH, "who": who, "resource": plural, "group": group,
                  "count": count, "revision": revision, "ts": now, "user": user}
        if namespace is not None:
            record["scope"] = {"namespace": namespace, "group": group, "resource": plural}
        publish(record)

"""The page's websockets. Thin by design: they translate websocket messages into calls of
`live.LiveFeed` / `wire.relay` / `wire_h2.relay` and channel-layer messages into websocket messages,
nothing more.

Guarantees:
- `LiveConsumer` forwards the traffic batches the hub publishes on `protocol.TRAFFIC_GROUP`
  (messages of type `protocol.TRAFFIC_BATCH`, handled by `traffic_batch`) as
  `{"t": "traffic", "records": [...]}`, with only the records its user may see
  (`dashboard.audience`: their own, and those of namespaces and kinds they may list; all of them
  for a cluster admin or with authentication off; each record encoded once for all the pages it
  goes to); a batch left empty is not sent and, when the browser asks `{"op": "watch",
  "revision": N|null}`, the list-then-watch of `LiveFeed` from that revision (a new request
  replaces the previous one).
- `WireConsumer` forwards the raw bytes of one watch stream as binary frames, then closes.
- `WireH2Consumer` forwards the same watch over HTTP/2 (the hub's HTTPS port) as one JSON text
  message per HTTP/2 frame (`wire_h2.describe`), or `{"note": ...}` when the hub serves no HTTP/2,
  then closes.
- Both act as the user the browser's session is logged in as (`dashboard.login`): the snapshot and
  changes a browser receives are what the hub lets that user list and watch. With authentication
  on, a socket without a logged-in session is refused at the handshake (403).
- Closing the socket stops everything it started and leaves the traffic group.
- Only the handshake and the close read Django's database (the session): Channels' closing of
  stale database connections (a hop to the sync thread) runs for those, not for every traffic
  batch and page message (`LiveConsumer.dispatch`; 31 pages in a room took a hop per batch each).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer

from control import jsontext, protocol
from control.auth import enabled
from dashboard import audience, hub, live, wire, wire_h2
from dashboard.login import identity_of


async def _identity(scope: dict[str, Any]) -> tuple[bool, hub.Identity | None]:
    """(may it connect, as whom)."""
    identity = await identity_of(scope.get("session"))
    return identity is not None or not enabled(), identity


async def _cancel(task: asyncio.Task | None) -> None:
    if task is not None and not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def traffic_text(batch: list[dict[str, Any]], records: list[dict[str, Any]]) -> str:
    """`{"t": "traffic", "records": records}` as `send_json` writes it (compact, `jsontext.dumps`), for
    `records` taken from `batch`: each record of a batch is encoded once for every page it goes to
    (the embedded layer hands every page the same batch, `control.serving.channel_layer`)."""
    known = _ENCODED.get(id(batch))
    if known is None or known[0] is not batch:
        known = (batch, {})
        if len(_ENCODED) >= _ENCODED_MAX:
            del _ENCODED[next(iter(_ENCODED))]
        _ENCODED[id(batch)] = known
    texts = known[1]
    parts = []
    for record in records:
        text = texts.get(id(record))
        if text is None:
            text = texts[id(record)] = jsontext.dumps(record)
        parts.append(text)
    return '{"t":"traffic","records":[' + ",".join(parts) + "]}"


# id(batch) -> (the batch, {id(record): its JSON}): the last few batches (the entry holds the batch,
# so neither its id nor its records' ids are reused while the entry lives).
_ENCODED: dict[int, tuple[list[dict[str, Any]], dict[int, str]]] = {}
_ENCODED_MAX = 8

# Messages whose handlers never touch Django's database: no stale connection to close first.
_NO_DATABASE = frozenset({"websocket.receive", protocol.TRAFFIC_BATCH})


class LiveConsumer(AsyncJsonWebsocketConsumer):
    feed_task: asyncio.Task | None = None

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return jsontext.dumps(content)  # what every page receives: compact, encoded in C

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None) if message.get("type") in _NO_DATABASE else None
        if handler is None:
            await super().dispatch(message)  # connect, disconnect, anything else: as Channels does it
        else:
            await handler(message)

    async def connect(self) -> None:
        allowed, identity = await _identity(self.scope)
        if not allowed:
            await self.close()
            return
        # the process's one client for this user, not closed here
        self.client = hub.client(hub.hub_url(self.scope), identity)
        viewer = identity.user if identity is not None and enabled() else None
        self.audience = audience.Audience(viewer, audience.hub_review(self.client))
        if self.channel_layer is not None:
            await self.channel_layer.group_add(protocol.TRAFFIC_GROUP, self.channel_name)
        await self.accept()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("op") == "watch":
            revision = content.get("revision")
            await _cancel(self.feed_task)
            feed = live.LiveFeed(self.client, self.send_json)
            self.feed_task = asyncio.ensure_future(feed.run(revision if isinstance(revision, int) else None))

    async def traffic_batch(self, message: dict[str, Any]) -> None:
        records = await self.audience.visible(message["records"], message.get("source"))
        if records:
            await self.send(text_data=traffic_text(message["records"], records))

    async def disconnect(self, code: int) -> None:
        await _cancel(self.feed_task)
        if self.channel_layer is not None:
            await self.channel_layer.group_discard(protocol.TRAFFIC_GROUP, self.channel_name)


class WireConsumer(AsyncWebsocketConsumer):
    relay_task: asyncio.Task | None = None

    async def connect(self) -> None:
        allowed, identity = await _identity(self.scope)
        if not allowed:
            await self.close()
            return
        await self.accept()
        host, port = hub.hub_address(self.scope)
        self.relay_task = asyncio.ensure_future(self._relay(host, port, identity, hub.cluster_ca(hub.hub_url(self.scope))))

    async def _relay(self, host: str, port: int, identity: hub.Identity | None, ca: bytes | None) -> None:
        try:
            with hub.acting_as(identity):
                await wire.relay(host, port, lambda data: self.send(bytes_data=data), ca=ca)
        except OSError as exc:
            await self.send(text_data=f"cannot reach the hub at {host}:{port}: {exc}")
        await self.close()

    async def disconnect(self, code: int) -> None:
        await _cancel(self.relay_task)


class WireH2Consumer(AsyncJsonWebsocketConsumer):
    relay_task: asyncio.Task | None = None

    async def connect(self) -> None:
        allowed, identity = await _identity(self.scope)
        if not allowed:
            await self.close()
            return
        await self.accept()
        self.relay_task = asyncio.ensure_future(self._relay(identity))

    async def _relay(self, identity: hub.Identity | None) -> None:
        address = await asyncio.to_thread(wire_h2.secure_address, self.scope)
        try:
            if address is None:
                raise wire_h2.NoHttp2("the hub serves no HTTPS: start it with runhub --secure-addr (runcluster does)")
            with hub.acting_as(identity):
                await wire_h2.relay(*address, self.send_json)
        except wire_h2.NoHttp2 as exc:
            await self.send_json({"note": str(exc)})
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            await self.send_json({"note": f"cannot reach the hub over HTTPS at {address}: {exc}"})
        await self.close()

    async def disconnect(self, code: int) -> None:
        await _cancel(self.relay_task)

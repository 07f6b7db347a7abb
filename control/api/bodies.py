"""Request bodies decoded away from the event loop, within a budget, before any handler runs.

Guarantees:
- A body is decoded here only after it was read within KK_MAX_BODY_BYTES (`control.api.app`
  refuses a larger one with 413 before reading it in full, so nothing here ever sees it).
- YAML, and JSON over KK_INLINE_JSON_BYTES, are decoded in a worker process (`control.offloop`
  runs `control.api.decoding`, with `control.safeyaml`'s depth, node and aliasing budget): neither
  the event loop nor the database thread spends a moment on them, nor do they contend for the
  hub's interpreter lock. While a body waits for a worker and decodes, its request holds its
  sender's fairness seats (`control.api.fairness.body_seats`, more for a bigger body), so one
  sender's bodies cannot take the others' share.
- Small JSON is left to the handler (it costs microseconds): `predecode` answers None for it.
  A YAML body of at most KK_INLINE_JSON_BYTES whose text is JSON (what kubectl's and the
  dashboard's server-side apply send as application/apply-patch+yaml) is read here as the JSON it
  is, at JSON's speed, with its seats held: only YAML that is not JSON goes to the worker.
- A whole object already too big for the store is refused with the store's 413 before any handler
  work (`refuse_unstorable`).
- A body over the node budget is refused with 413 RequestEntityTooLarge; an undecodable body (too
  deep, excessive aliasing, malformed) becomes a `Decoded` whose `problem` the handler turns into
  kube-apiserver's 400 for its endpoint. A worker process that dies is replaced; its body is
  refused with 413, and the hub keeps serving.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from control import errors, offloop
from control.api import decoding
from control.storage import store

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass
class Decoded:
    """What a body decoded to, for the handler: its value (a YAML body: its documents) as the
    worker packed it, or `problem` (Go's words). Each `take` unpacks a fresh value: a handler run
    twice (it waited for a revision) never sees what the first run changed."""

    media: str
    packed: bytes = b""
    problem: str | None = None
    compact_bytes: int = 0  # the size of the object as compact JSON: what the store would hold of it
    json_text: str | None = None  # a YAML body that is JSON text, read again on each take

    def take(self) -> Any:
        if self.json_text is not None:
            return [json.loads(self.json_text)]  # a YAML stream of one document, as the worker gives it
        return pickle.loads(self.packed)  # noqa: S301 - packed by our own worker (decoding.decode_packed)


def wants_worker(method: str, raw: bytes, media: str) -> bool:
    """Whether this body is decoded in the worker: any YAML, and JSON too large to decode inline."""
    if method not in WRITE_METHODS or not raw or media == PROTOBUF or not raw.strip():
        return False
    return "yaml" in media or len(raw) > settings.KK_INLINE_JSON_BYTES


def budget() -> decoding.Budget:
    return decoding.Budget(max_depth=settings.KK_YAML_MAX_DEPTH, max_nodes=settings.KK_YAML_MAX_NODES)


def shutdown() -> None:
    """Stop the decoding workers (the hub's ASGI lifespan.shutdown)."""
    offloop.shutdown()


async def decode_in_worker(raw: bytes, media: str) -> decoding.Outcome:
    """`decoding.decode_packed` in a worker process (`control.offloop`)."""
    try:
        return await offloop.run(decoding.decode_packed, raw, media, budget())
    except offloop.WorkerLost:
        return decoding.Outcome("too_large", "the body could not be decoded within the server's resources")


async def predecode(method: str, raw: bytes, media: str) -> Decoded | None:
    """The body decoded off the loop, or None when the handler decodes it itself (small JSON, none,
    protobuf). Raises RequestEntityTooLarge when the body is over the node budget."""
    if not wants_worker(method, raw, media):
        return None
    media = media or "application/json"  # what the handlers read a body without a Content-Type as
    inline = json_yaml(raw, media)
    if inline is not None:
        return inline
    outcome = await decode_in_worker(raw, media)
    if outcome.verdict == "too_large":
        raise errors.RequestEntityTooLarge(f"Request entity too large: {outcome.value}")
    if outcome.verdict == "undecodable":
        return Decoded(media, problem=outcome.value)
    packed, size = outcome.value
    return Decoded(media, packed=packed, compact_bytes=size)


def json_yaml(raw: bytes, media: str) -> Decoded | None:
    """A small YAML body whose text is one JSON object, read inline; None for any other body. The
    worker's own first reading (`decoding.json_object`), without the round trip to another process."""
    if "yaml" not in media or len(raw) > settings.KK_INLINE_JSON_BYTES:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None  # the worker refuses it, in YAML's words
    value = decoding.json_object(text)
    if value is None:
        return None
    return Decoded(media, json_text=text, compact_bytes=decoding.compact_size(value))


def single_object(decoded: Decoded | None) -> Any:
    """The one object a YAML body holds (None when it holds another number, or is undecodable)."""
    if decoded is None or decoded.problem is not None:
        return None
    value = decoded.take()
    if "yaml" in decoded.media:
        return value[0] if isinstance(value, list) and len(value) == 1 else None
    return value


def refuse_unstorable(verb: str, media: str, query: dict[str, str], decoded: Decoded | None) -> None:
    """A create, update or server-side apply whose object, as compact JSON, is already over what
    the store holds (etcd's 1.5 MiB) is refused now, with the store's own 413, rather than after
    the handler spent seconds of the one database thread on it (a ConfigMap of 40,000 keys). A dry
    run too: its real run could only be refused. Only with fieldValidation Strict (the default):
    Ignore and Warn drop unknown fields, and the object could shrink under the limit."""
    if decoded is None or decoded.problem is not None or decoded.compact_bytes <= store.MAX_OBJECT_BYTES:
        return
    if verb not in ("create", "update") and not (verb == "patch" and "apply-patch" in media):
        return
    if query.get("fieldValidation", "Strict") not in ("", "Strict"):
        return
    raise errors.RequestEntityTooLarge("etcdserver: request is too large")

"""The manifest form's work: read a YAML stream, then apply each object through the hub as
`kubectl apply --server-side --force-conflicts` would (create or update, one request per object).
Each apiVersion and kind is mapped to its resource through the hub's discovery (`dashboard.discovery`),
so every kind the hub serves can be applied, custom ones and ones added later included.

Guarantees:
- `read` takes the form's text only within KK_MAX_BODY_BYTES (413, as the API) and only while its
  sender holds their fairness seats (`control.seats`, the hub's own: 429 when they are all taken);
  then reads it as the API reads YAML (`control.safeyaml`: within a depth, node and aliasing
  budget, without implicit timestamps, so a document is plain JSON) in a worker process
  (`control.offloop`), so a big form never pauses the event loop the API is served on.
- A stream that cannot be read, or a document that is not an object with apiVersion, kind and
  metadata.name, raises `ManifestError` with a message naming the document (and the status to
  answer), and nothing is sent.
- All objects are first applied with `dryRun=All` (together, with the reads of what each is now);
  if the hub refuses any, its message is shown for that object and nothing is stored. Only when
  all pass are they applied for real, one after another, in order.
- A Namespace the stream itself creates (it does not exist yet) is the one exception: a dry run of
  an object inside it could only answer `namespaces "X" not found`, so once everything else passed
  its dry run, such Namespaces are created first and the objects in them are dry-run then; if one
  of those is refused, the new Namespaces stay (as with kubectl apply) and nothing else is stored.
- A kind the hub does not serve in that version is refused with kubectl's words
  (`no matches for kind "X" in version "Y"`, 404) before anything is sent for it, and, as any refusal,
  nothing of the stream is stored.
- Each result says what kubectl would print: `deployment.apps/web created|configured|unchanged`.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any, Awaitable

import yaml
from django.conf import settings

from control import errors, offloop, safeyaml, seats
from control.auth.tokenfile import ADMIN
from control.client.http import HubClient
from control.client.resources import NAMESPACES, Resource
from dashboard import discovery

FIELD_MANAGER = "dashboard"
APPLY_TYPE = "application/apply-patch+yaml"
MAX_DOCUMENTS = 50


class ManifestError(ValueError):
    """The text is not a stream of Kubernetes objects (or is too big to read now): `code` is the
    status the form answers."""

    def __init__(self, message: str, code: int = 400):
        super().__init__(message)
        self.code = code


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and reads timestamps as strings: the lessons' own files are
    composed with it (for their line numbers); a manifest form is read by `read`."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ManifestError(f"YAML aliases are not allowed (line {event.start_mark.line + 1})")
        return super().compose_node(parent, index)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


IN_FLIGHT = 4  # requests a stream's dry runs and reads keep in flight at once (one sender's fair share)


@dataclass
class Outcome:
    ref: str
    verdict: str  # created | configured | unchanged | valid | error
    message: str = ""
    code: int = 200
    found: str | None = None  # a dry run's: the resourceVersion the object has now (None: there is none)

    @property
    def ok(self) -> bool:
        return self.verdict != "error"


def _budget() -> safeyaml.Budget:
    return safeyaml.Budget(max_depth=settings.KK_YAML_MAX_DEPTH, max_nodes=settings.KK_YAML_MAX_NODES)


def parse(text: str) -> list[dict[str, Any]]:
    """The objects of a YAML stream, read here (a lesson's own manifest; a form goes through `read`).
    A text read before is not read again (`_PARSED`): the caller gets its own copy of the same
    objects, or the same ManifestError."""
    budget = _budget()
    key = (text, budget.max_depth, budget.max_nodes)
    known = _PARSED.get(key)
    if known is None:
        try:
            known = checked(safeyaml.read_stream(text, budget))
        except ManifestError as exc:
            known = exc
        if len(text) <= _PARSED_MAX_CHARS:
            if len(_PARSED) >= _PARSED_MAX:
                del _PARSED[next(iter(_PARSED))]
            _PARSED[key] = known
    if isinstance(known, ManifestError):
        raise ManifestError(str(known), known.code)
    return copy.deepcopy(known)


# (text, depth budget, node budget) -> its objects or its error: the lessons' manifests, parsed on
# every step shown and button pressed (the rights they need, then the apply), are a few small files.
_PARSED: dict[tuple[str, int, int], list[dict[str, Any]] | ManifestError] = {}
_PARSED_MAX = 64
_PARSED_MAX_CHARS = 64 * 1024


def flow_of(user: str | None, address: str) -> tuple[seats.PriorityLevel, str]:
    """The hub's priority level and flow for a form's sender (`control.api.fairness.classify`): an
    attendee's own flow, the instructor exempt; with authentication off, the browser's address."""
    levels = seats.levels()
    if user == ADMIN:
        return levels["exempt"], user
    return levels["global-default"], user or f"dashboard-form@{address}"


async def read(text: str, sender: tuple[seats.PriorityLevel, str]) -> list[dict[str, Any]]:
    """The objects of a form's YAML stream: bounded, then decoded in a worker holding the sender's seats."""
    limit = settings.KK_MAX_BODY_BYTES
    size = len(text.encode())
    if size > limit:
        raise ManifestError(f"Request entity too large: limit is {limit}", 413)  # the API's own words
    level, flow = sender
    try:
        release = await seats.LIMITER.acquire(level, flow, seats.body_seats(level, size))
    except errors.TooManyRequests as exc:
        raise ManifestError(exc.message, exc.code) from None
    try:
        outcome = await offloop.run(safeyaml.read_stream, text, _budget())
    except offloop.WorkerLost:
        raise ManifestError("the YAML could not be read within the server's resources", 413) from None
    finally:
        release()  # before the objects are sent: the hub's requests for them take seats of the same flow
    return checked(outcome)


def checked(outcome: safeyaml.Outcome) -> list[dict[str, Any]]:
    if outcome.verdict == "too_large":
        raise ManifestError(f"Request entity too large: {outcome.value}", 413)
    if outcome.verdict != "ok":
        raise ManifestError(f"the YAML cannot be read: {outcome.value}")
    documents = outcome.value
    if not documents:
        raise ManifestError("the manifest is empty")
    if len(documents) > MAX_DOCUMENTS:
        raise ManifestError(f"at most {MAX_DOCUMENTS} documents at once")
    for number, doc in enumerate(documents, 1):
        if not isinstance(doc, dict):
            raise ManifestError(f"document {number} is not an object")
        missing = [f for f in ("apiVersion", "kind") if not isinstance(doc.get(f), str) or not doc.get(f)]
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        if not name:
            missing.append("metadata.name")
        if missing:
            raise ManifestError(f"document {number}: {', '.join(missing)} must be set")
    return documents


def reference(doc: dict[str, Any], resource: Resource | None = None) -> str:
    kind = str(doc.get("kind", "")).lower()
    group = resource.group if resource else str(doc.get("apiVersion", "")).rpartition("/")[0]
    return f"{kind}.{group}/{doc['metadata']['name']}" if group else f"{kind}/{doc['metadata']['name']}"


async def _target(client: HubClient, doc: dict[str, Any],
                  default_namespace: str) -> tuple[Resource | None, str | None, str]:
    resource = await discovery.resource_for(client, doc["apiVersion"], doc["kind"])
    namespace = None
    if resource is not None and resource.namespaced:
        namespace = doc["metadata"].get("namespace") or default_namespace
    return resource, namespace, doc["metadata"]["name"]


_UNREAD: Any = object()  # "what is stored was not found out beforehand": _apply_one reads it itself


async def _apply_one(client: HubClient, doc: dict[str, Any], default_namespace: str, *, dry_run: bool,
                     found: Any = _UNREAD) -> Outcome:
    """One server-side apply (or its dry run). `found`: the resourceVersion the object had before,
    None when there was none, or _UNREAD (read here first): "configured" or "unchanged" is told by
    whether the apply moved it; "created" by the 201 the hub answers."""
    try:
        resource, namespace, name = await _target(client, doc, default_namespace)
    except errors.ApiError as exc:  # discovery itself failed (the hub is down, say)
        return Outcome(reference(doc), "error", exc.message, exc.code)
    ref = reference(doc, resource)
    if resource is None:
        return Outcome(ref, "error", f'no matches for kind "{doc["kind"]}" in version "{doc["apiVersion"]}"', 404)
    params = {"fieldManager": FIELD_MANAGER, "force": "true"}
    if dry_run:
        params["dryRun"] = "All"
    try:
        if found is _UNREAD and not dry_run:
            try:
                found = _version(await client.get(resource, name, namespace))
            except errors.NotFound:
                found = None
        code, after = await client.request_coded("PATCH", resource.path(namespace, name), params=params, body=doc,
                                                 content_type=APPLY_TYPE)
    except errors.ApiError as exc:
        return Outcome(ref, "error", exc.message, exc.code)
    if dry_run:  # nothing written: the answer carries the version the object has now, if it exists
        return Outcome(ref, "valid", found=None if code == 201 else _version(after))
    if code == 201:
        return Outcome(ref, "created", code=201)
    return Outcome(ref, "configured" if _version(after) != found else "unchanged")


def _version(obj: Any) -> str | None:
    return ((obj or {}).get("metadata") or {}).get("resourceVersion")


async def apply_all(client: HubClient, documents: list[dict[str, Any]], *,
                    default_namespace: str = "default") -> tuple[bool, list[Outcome]]:
    """(stored, outcomes): every object checked by a dry run first, then applied if all passed.
    The dry runs go out together (one round trip's wait instead of one per object), and each tells
    what its object is now, so the applies need no read beforehand; an object named twice in the
    stream is read again just before its second apply."""
    created_here = await _new_namespaces(client, documents)
    inside = [index for index, doc in enumerate(documents)
              if _declared_namespace(doc, default_namespace) in created_here]
    seen: set[tuple[str, str, str, str]] = set()
    first: list[bool] = []  # True for an object's first mention in the stream
    for doc in documents:
        name = _identity(doc, default_namespace)
        first.append(name not in seen)
        seen.add(name)
    gate = asyncio.Semaphore(IN_FLIGHT)
    checked = [index for index in range(len(documents)) if index not in inside]
    checks = await asyncio.gather(*(_gated(gate, _apply_one(client, documents[index], default_namespace, dry_run=True))
                                    for index in checked))
    if not all(check.ok for check in checks):
        return False, list(checks)
    found = {index: check.found for index, check in zip(checked, checks) if first[index]}
    early: dict[int, Outcome] = {}
    if inside:  # the Namespaces first, so that the objects in them can be dry-run at all
        for index, doc in enumerate(documents):
            if _is_namespace(doc) and doc["metadata"]["name"] in created_here:
                early[index] = await _apply_one(client, doc, default_namespace, dry_run=False,
                                                found=found.get(index, _UNREAD))
        later = [await _apply_one(client, documents[index], default_namespace, dry_run=True) for index in inside]
        if not all(outcome.ok for outcome in [*early.values(), *later]):
            return False, [*early.values(), *later]
        found.update((index, check.found) for index, check in zip(inside, later) if first[index])
    return True, [early.get(index) or await _apply_one(client, doc, default_namespace, dry_run=False,
                                                         found=found.get(index, _UNREAD))
                  for index, doc in enumerate(documents)]


def _identity(doc: dict[str, Any], default_namespace: str) -> tuple[str, str, str, str]:
    return (str(doc.get("apiVersion")), str(doc.get("kind")), _declared_namespace(doc, default_namespace),
            str(doc["metadata"]["name"]))


async def _gated(gate: asyncio.Semaphore, work: Awaitable[Any]) -> Any:
    async with gate:
        return await work


def _is_namespace(doc: dict[str, Any]) -> bool:
    return doc.get("apiVersion") == "v1" and doc.get("kind") == "Namespace"


def _declared_namespace(doc: dict[str, Any], default_namespace: str) -> str:
    return "" if _is_namespace(doc) else str(doc["metadata"].get("namespace") or default_namespace)


async def _new_namespaces(client: HubClient, documents: list[dict[str, Any]]) -> set[str]:
    """The names of the Namespaces in the stream that the hub does not hold yet."""
    missing = set()
    for doc in documents:
        if _is_namespace(doc):
            try:
                await client.get(NAMESPACES, doc["metadata"]["name"])
            except errors.NotFound:
                missing.add(doc["metadata"]["name"])
            except errors.ApiError:
                pass  # the dry run reports the hub's refusal as it does for any object
    return missing

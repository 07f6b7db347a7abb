"""The manifest form's work: read a YAML stream, then apply each object through the hub as
`kubectl apply --server-side --force-conflicts` would (create or update, one request per object).
Each apiVersion and kind is mapped to its resource through the hub's discovery (`dashboard.discovery`),
so every kind the hub serves can be applied, custom ones and ones added later included.

Guarantees:
- YAML is read without aliases and without implicit timestamps, so a document is plain JSON; a
  stream that cannot be read, or a document that is not an object with apiVersion, kind and
  metadata.name, raises `ManifestError` with a message naming the document, and nothing is sent.
- All objects are first applied with `dryRun=All`; if the hub refuses any, its message is shown
  for that object and nothing is stored. Only when all pass are they applied for real, in order.
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

from dataclasses import dataclass
from typing import Any

import yaml

from control import errors
from control.client.http import HubClient
from control.client.resources import NAMESPACES, Resource
from dashboard import discovery

FIELD_MANAGER = "dashboard"
APPLY_TYPE = "application/apply-patch+yaml"
MAX_DOCUMENTS = 50


class ManifestError(ValueError):
    """The text is not a stream of Kubernetes objects."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no billion laughs) and reads timestamps as strings."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ManifestError(f"YAML aliases are not allowed (line {event.start_mark.line + 1})")
        return super().compose_node(parent, index)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class Outcome:
    ref: str
    verdict: str  # created | configured | unchanged | valid | error
    message: str = ""
    code: int = 200

    @property
    def ok(self) -> bool:
        return self.verdict != "error"


def parse(text: str) -> list[dict[str, Any]]:
    try:
        documents = [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as exc:
        raise ManifestError(f"the YAML cannot be read: {exc}") from None
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


async def _apply_one(client: HubClient, doc: dict[str, Any], default_namespace: str, *, dry_run: bool) -> Outcome:
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
    before = None
    try:
        if not dry_run:
            try:
                before = await client.get(resource, name, namespace)
            except errors.NotFound:
                before = None
        after = await client.request("PATCH", resource.path(namespace, name), params=params, body=doc,
                                     content_type=APPLY_TYPE)
    except errors.ApiError as exc:
        return Outcome(ref, "error", exc.message, exc.code)
    if dry_run:
        return Outcome(ref, "valid")
    if before is None:
        return Outcome(ref, "created", code=201)
    changed = (after or {}).get("metadata", {}).get("resourceVersion") != before["metadata"].get("resourceVersion")
    return Outcome(ref, "configured" if changed else "unchanged")


async def apply_all(client: HubClient, documents: list[dict[str, Any]], *,
                    default_namespace: str = "default") -> tuple[bool, list[Outcome]]:
    """(stored, outcomes): every object checked by a dry run first, then applied if all passed."""
    created_here = await _new_namespaces(client, documents)
    inside = [doc for doc in documents if _declared_namespace(doc, default_namespace) in created_here]
    waiting = {id(doc) for doc in inside}
    checks = [await _apply_one(client, doc, default_namespace, dry_run=True) for doc in documents if id(doc) not in waiting]
    if not all(check.ok for check in checks):
        return False, checks
    early: dict[int, Outcome] = {}
    if inside:  # the Namespaces first, so that the objects in them can be dry-run at all
        for index, doc in enumerate(documents):
            if _is_namespace(doc) and doc["metadata"]["name"] in created_here:
                early[index] = await _apply_one(client, doc, default_namespace, dry_run=False)
        later = [await _apply_one(client, doc, default_namespace, dry_run=True) for doc in inside]
        if not all(outcome.ok for outcome in [*early.values(), *later]):
            return False, [*early.values(), *later]
    return True, [early.get(index) or await _apply_one(client, doc, default_namespace, dry_run=False)
                  for index, doc in enumerate(documents)]


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

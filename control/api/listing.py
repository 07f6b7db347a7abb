"""A list's options, as kube-apiserver reads them: which revision it is read at, where a continued
list resumes, and the 4xx/410 answers when either cannot be honoured.

Guarantees:
- Every page of a paginated list is read at the revision of the first page: the continue token
  carries that revision and the last key served (etcd3's GetList). `resourceVersionMatch=Exact`,
  and a resourceVersion with a `limit` (the legacy exact case), are read at that revision too;
  NotOlderThan waits for it (`FutureRevision`) and reads the newest.
- Past the log's window: 410 Expired with etcd3's messages; for a continue token the Status carries
  a token that goes on at the newest revision, as kube-apiserver's does.
- Options kube-apiserver refuses are refused with its Status (422 for resourceVersionMatch, 400 for
  a continue token no list handed out); the read itself is `control.storage.snapshot`'s.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from control import errors
from control.api.request import Call, parse_revision
from control.storage import snapshot, store

INVALID_CONTINUE = "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"


def encode_continue(revision: int, after: tuple[str, str]) -> str:
    raw = json.dumps({"v": "kk.1", "rv": revision, "ns": after[0], "name": after[1]})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(data["rv"]), (str(data["ns"]), str(data["name"]))
    except (ValueError, KeyError, TypeError):
        raise errors.BadRequest(INVALID_CONTINUE) from None


class FutureRevision(errors.Timeout):
    """A read asked for a revision this hub has not seen yet. The async layer waits for it (up to
    3 s, like the real server) and retries; only then does the client get this 504."""

    def __init__(self, revision: int, current: int):
        super().__init__(f"Too large resource version: {revision}, current: {current}",
                         details={"causes": [{"reason": "ResourceVersionTooLarge",
                                              "message": "Too large resource version"}], "retryAfterSeconds": 1})
        self.revision = revision


def require_revision(revision: int) -> None:
    current = store.current_revision()
    if current < revision:
        raise FutureRevision(revision, current)


# etcd3's answer to a continue token whose revision was compacted (storage/etcd3/errors.go).
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")


class ContinueExpired(errors.Gone):
    """410 for a continue token past compaction. Like kube-apiserver it carries a token that goes on
    after the same key at the newest revision (revision -1), for a client that accepts that."""

    def __init__(self, after: tuple[str, str]):
        super().__init__(INCONSISTENT_CONTINUE)
        self.token = encode_continue(-1, after)

    def status(self) -> dict[str, Any]:
        body = super().status()
        body["metadata"] = {**(body.get("metadata") or {}), "continue": self.token}
        return body


def validate_match(match: str, requested: str, token: str) -> None:
    """resourceVersionMatch as kube-apiserver validates a list's options (ValidateListOptions): 422."""
    if not match:
        return
    forbidden = []
    if not requested:
        forbidden.append("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if token:
        forbidden.append("resourceVersionMatch is forbidden when continue is provided")
    causes = [{"reason": "FieldValueForbidden", "message": f"Forbidden: {text}", "field": "resourceVersionMatch"}
              for text in forbidden]
    if match not in ("Exact", "NotOlderThan"):
        supported = '"Exact", "NotOlderThan", ""'
        causes.append({"reason": "FieldValueNotSupported", "field": "resourceVersionMatch",
                       "message": f"Unsupported value: {json.dumps(match)}: supported values: {supported}"})
    if match == "Exact" and requested == "0":
        causes.append({"reason": "FieldValueForbidden", "field": "resourceVersionMatch",
                       "message": 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'})
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def list_revision(query: dict[str, str], limit: int | None, token: str) -> tuple[int | None, tuple[str, str] | None]:
    """The revision a list is read at (None: the newest) and the key a continued list resumes
    after, as etcd3's GetList decides: a continue token's revision, an Exact resourceVersion, or a
    resourceVersion with a limit (the legacy exact case); NotOlderThan waits for it, then reads the newest."""
    requested = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    validate_match(match, requested, token)
    if token:
        if requested not in ("", "0"):
            raise errors.BadRequest("specifying resource version is not allowed when using continue")
        revision, after = decode_continue(token)
        if revision == 0 or revision > store.current_revision():  # no list was ever served at it
            raise errors.BadRequest(INVALID_CONTINUE)
        return (revision if revision > 0 else None), after  # below 0: go on at the newest (after a 410)
    if requested in ("", "0"):
        return None, None
    wanted = parse_revision(requested)
    require_revision(wanted)
    return (wanted if match == "Exact" or (not match and limit) else None), None


def read_list(call: Call, revision: int | None, after: tuple[str, str] | None,
              name: str | None = None) -> tuple[list[str], int]:
    """The stored objects of the call's scope at `revision` (None: the newest), and that revision;
    a continued list past compaction answers `ContinueExpired`."""
    try:
        return snapshot.list_at(resource=call.kind.resource, namespace=call.namespace or None, name=name,
                                revision=revision)
    except errors.Gone:
        if after is not None:
            raise ContinueExpired(after) from None
        raise

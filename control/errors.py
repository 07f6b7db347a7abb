"""Errors as values with one meaning each: every one maps to exactly one Kubernetes Status reason.

Guarantees: `ApiError.status()` is a complete `Status` object (kind, apiVersion, metadata, status,
message, reason, details, code) that kubectl and the Python client can parse. The spoke toolkit
raises the same classes for the same reasons, so both sides of the wire speak one vocabulary.
"""

from __future__ import annotations

import json
from typing import Any


class ApiError(Exception):
    code = 500
    reason = "InternalError"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, headers: dict | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        # kube-apiserver's field order (metav1.Status as Go marshals it): clients that compare bodies
        # byte for byte see the same text.
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # Go leaves an empty reason out (a Status a REST storage returned as failed)
            body["reason"] = self.reason
        details = ordered_details(self.details)
        if details:
            body["details"] = details
        body["code"] = self.code
        return body


# metav1.StatusDetails in its declaration order; Go marshals struct fields in that order and leaves
# each one out when empty (all are `omitempty`).
DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")


def ordered_details(details: dict[str, Any] | None) -> dict[str, Any]:
    """`details` as kube-apiserver writes a StatusDetails: name, group, kind, uid, causes,
    retryAfterSeconds, empty ones left out (an empty group is a core resource, not `"group": ""`).
    Keys StatusDetails does not know follow in their own order, so nothing a builder set is lost."""
    if not details:
        return {}
    ordered = {key: details[key] for key in DETAILS_ORDER if details.get(key) not in (None, "", [], 0)}
    ordered.update((key, value) for key, value in details.items() if key not in DETAILS_ORDER)
    return ordered


class BadRequest(ApiError):
    code, reason = 400, "BadRequest"


class Unauthorized(ApiError):
    code, reason = 401, "Unauthorized"


class Forbidden(ApiError):
    code, reason = 403, "Forbidden"


class NotFound(ApiError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(ApiError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(ApiError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(ApiError):
    code, reason = 409, "AlreadyExists"


class Conflict(ApiError):
    code, reason = 409, "Conflict"


class Gone(ApiError):
    """410 for a list whose exact resourceVersion or continue token has been compacted away."""

    code, reason = 410, "Expired"


class RequestEntityTooLarge(ApiError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(ApiError):
    code, reason = 422, "Invalid"


class TooManyRequests(ApiError):
    code, reason = 429, "TooManyRequests"


class InternalError(ApiError):
    code, reason = 500, "InternalError"


class ServiceUnavailable(ApiError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(ApiError):
    code, reason = 504, "Timeout"


BY_REASON: dict[str, type[ApiError]] = {
    cls.reason: cls
    for cls in (
        BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, NotAcceptable,
        AlreadyExists, Conflict, Gone, RequestEntityTooLarge, UnsupportedMediaType, Invalid,
        TooManyRequests, InternalError, ServiceUnavailable, Timeout,
    )
}


BY_CODE: dict[int, type[ApiError]] = {cls.code: cls for cls in BY_REASON.values()}  # 409 is Conflict


def from_status(body: Any, code: int) -> ApiError:
    """The error an answer of `code` stands for (client-go's `errors.FromObject`), from its body as
    sent (bytes or text of a Status; anything that is not JSON becomes the message) or decoded: by the
    Status reason when it names one, else by the HTTP code, else InternalError. The one place a spoke,
    the dashboard or a command turns a failed answer into an error."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        body = bytes(body).decode(errors="replace")
    if isinstance(body, str):
        try:
            body = json.loads(body) if body.strip() else {}
        except ValueError:
            body = {"message": body.strip()[:500]}
    status = body if isinstance(body, dict) else {"message": str(body)}
    cls = BY_REASON.get(str(status.get("reason") or "")) or BY_CODE.get(code, InternalError)
    details = status.get("details")
    return cls(str(status.get("message") or f"the hub answered {code}"),
               details=details if isinstance(details, dict) else None)


def qualified_resource(resource: str) -> str:
    """ "apps/deployments" -> "deployments.apps"; "/pods" or "pods" -> "pods"."""
    group, _, plural = resource.rpartition("/")
    return f"{plural}.{group}" if group else plural


def _details(resource: str, name: str) -> dict[str, Any]:
    group, _, plural = resource.rpartition("/")
    return ordered_details({"name": name, "group": group, "kind": plural})


def not_found(resource: str, name: str) -> NotFound:
    return NotFound(f'{qualified_resource(resource)} "{name}" not found', details=_details(resource, name))


def already_exists(resource: str, name: str) -> AlreadyExists:
    return AlreadyExists(
        f'{qualified_resource(resource)} "{name}" already exists', details=_details(resource, name)
    )


def conflict(resource: str, name: str, why: str | None = None) -> Conflict:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return Conflict(
        f'Operation cannot be fulfilled on {qualified_resource(resource)} "{name}": {why}',
        details=_details(resource, name),
    )


def invalid(kind: str, group: str, name: str, causes: list[dict[str, str]]) -> Invalid:
    """422 with causes; each cause is {"reason", "message", "field"} as Kubernetes sends them."""
    summary = ", ".join(
        f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes
    )
    details = ordered_details({"name": name, "group": group, "kind": kind, "causes": causes})
    qualified = f"{kind}.{group}" if group else kind
    return Invalid(f'{qualified} "{name}" is invalid: {summary}', details=details)


NOT_FOUND = "the server could not find the requested resource"


def path_not_found() -> NotFound:
    """404 for a path nothing serves, in kube-apiserver's words."""
    return NotFound(NOT_FOUND)


def expired(message: str) -> Gone:
    return Gone(message)


def go_value(value: Any) -> str:
    """A bad value as Kubernetes' field errors print it (`Invalid value: <this>`): strings and
    null quoted (`"null"`), numbers and booleans bare (`true`, `3`), anything else as JSON, so no
    Python spelling (`None`, `True`, `'x'`) reaches a message."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def field_invalid(field: str, value: Any, detail: str) -> str:
    """`<field>: Invalid value: <value>: <detail>`, the text of Go's field.Invalid."""
    return f"{field}: Invalid value: {go_value(value)}: {detail}"


def go_text(value: Any) -> str:
    """A value as Go's %s/%v prints a decoded string field in a message: unquoted, an absent (null)
    field as the empty string, booleans lower-case, numbers bare; never a Python spelling."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return go_value(value)


def go_strings(values: Any) -> str:
    """A list of strings as Go's %#v prints a []string in field errors: `[]string{"a", "b"}`, an
    empty or absent list as `[]string(nil)`; a value that is no list as `go_value` prints it."""
    if values is None or values == []:
        return "[]string(nil)"
    if not isinstance(values, list):
        return go_value(values)
    return "[]string{" + ", ".join(go_value(go_text(v)) for v in values) + "}"

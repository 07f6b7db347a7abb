"""What the hub answers, before it goes on the wire: a whole reply or a stream of chunks.

Guarantees: every JSON reply carries `Content-Type: application/json` (kubectl picks its decoder
from it); errors always come out as a complete Kubernetes Status, byte for byte as kube-apiserver
writes it (its field order, a trailing newline); JSON is compact and UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from control import jsontext
from control.errors import ApiError

JSON = "application/json"


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return jsontext.loads(self.body)


@dataclass
class Stream:
    """A chunked response (watch, `logs -f`): headers first, then chunks as they come."""

    chunks: AsyncIterator[bytes]
    status: int = 200
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)


def dumps(obj: Any) -> str:
    return jsontext.dumps(obj)


def json_response(obj: Any, status: int = 200, *, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, dumps(obj).encode(), JSON, headers or {})


def raw_json_response(text: str, status: int = 200, *, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, text.encode(), JSON, headers or {})


def error_response(error: ApiError) -> Reply:
    """The error's Status as kube-apiserver writes it: its field order, then a newline (Go's
    json.Encoder ends every document with one)."""
    return Reply(error.code, (dumps(error.status()) + "\n").encode(), JSON, dict(error.headers))


def success_status(details: dict[str, Any], code: int = 200) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

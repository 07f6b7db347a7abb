"""Building HTTP responses the real clients accept.

Guarantees: every response carries `Content-Type: application/json` (kubectl picks its decoder
from it); errors always come out as a complete Kubernetes Status; JSON is compact and UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse

from control.errors import ApiError

JSON = "application/json"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def json_response(obj: Any, status: int = 200, *, headers: dict[str, str] | None = None) -> HttpResponse:
    return raw_json_response(dumps(obj), status, headers=headers)


def raw_json_response(text: str, status: int = 200, *, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(text.encode(), status=status, content_type=JSON)
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def error_response(error: ApiError) -> HttpResponse:
    return json_response(error.status(), error.code, headers=error.headers)


def success_status(details: dict[str, Any], code: int = 200) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

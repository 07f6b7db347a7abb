"""The hub's HTTP entry points: thin translation from a request to a verb and back.

Guarantees: every answer is JSON with `Content-Type: application/json` (except pod logs); every
failure is a Kubernetes Status, including bugs (a logged InternalError, never a stack trace);
each request is tagged with its verb and resource for the traffic record.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from control import errors
from control import kinds as registry
from control.api import discovery, subresources, verbs
from control.api.podlog import pod_log
from control.api.request import Call, client_name
from control.api.responses import error_response, json_response
from control.api.feed import get_feed
from control.api.watch import watch

log = logging.getLogger(__name__)

WATCH_VALUES = ("1", "true", "True")


def _guard_sync(fn: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    def run(*args: Any) -> HttpResponse:
        try:
            return fn(*args)
        except errors.ApiError as exc:
            return error_response(exc)
        except RecursionError:
            return error_response(errors.BadRequest("the object is nested too deeply"))
        except Exception:
            log.exception("unexpected error in %s", getattr(fn, "__name__", fn))
            return error_response(errors.InternalError("an internal error occurred; the server logged it"))
    return run


async def _run(fn: Callable[..., HttpResponse], *args: Any) -> HttpResponse:
    return await sync_to_async(_guard_sync(fn))(*args)


def _tag(request: HttpRequest, verb: str, resource: str, namespace: str = "", name: str = "") -> None:
    request.kk_traffic = {"verb": verb, "resource": resource, "namespace": namespace, "name": name}  # type: ignore[attr-defined]


# --- discovery and documents ------------------------------------------------------------------

async def api_versions(request: HttpRequest) -> HttpResponse:
    _tag(request, "get", "discovery")
    return json_response(discovery.api_versions(request.get_host()))


async def api_groups(request: HttpRequest) -> HttpResponse:
    _tag(request, "get", "discovery")
    return json_response(discovery.api_group_list())


async def api_group(request: HttpRequest, group: str) -> HttpResponse:
    _tag(request, "get", "discovery")
    document = discovery.api_group(group)
    return json_response(document) if document else error_response(errors.NotFound("the server could not find the requested resource"))


async def resource_list(request: HttpRequest, group: str = "", version: str = "v1") -> HttpResponse:
    _tag(request, "get", "discovery")
    document = discovery.resource_list(group, version)
    return json_response(document) if document else error_response(errors.NotFound("the server could not find the requested resource"))


async def version(request: HttpRequest) -> HttpResponse:
    _tag(request, "get", "version")
    return json_response(discovery.VERSION)


async def openapi_root(request: HttpRequest) -> HttpResponse:
    from control.api import openapi

    _tag(request, "get", "openapi")
    return json_response(openapi.root_document())


async def openapi_group_version(request: HttpRequest, path: str) -> HttpResponse:
    from control.api import openapi

    _tag(request, "get", "openapi")
    document = openapi.group_version_document(path.strip("/"))
    if document is None:
        return error_response(errors.NotFound("the server could not find the requested resource"))
    return json_response(document)


async def healthz(request: HttpRequest) -> HttpResponse:
    _tag(request, "get", "healthz")
    await get_feed()
    return HttpResponse(b"ok", content_type="text/plain")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(errors.NotFound("the server could not find the requested resource"))


# --- resources --------------------------------------------------------------------------------

def _parse_target(group: str, version: str, rest: str) -> tuple[Any, str, str, str]:
    """(kind, namespace, name, subresource) for the path after /api/v1 or /apis/<g>/<v>."""
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces" and registry.by_resource(group, version, parts[2]):
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3:
        raise errors.NotFound("the server could not find the requested resource")
    kind = registry.by_resource(group, version, parts[0])
    if kind is None or (namespace and not kind.namespaced):
        raise errors.NotFound("the server could not find the requested resource")
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if sub and sub not in kind.subresources:
        raise errors.NotFound("the server could not find the requested resource")
    return kind, namespace, name, sub


def _verb(method: str, name: str, sub: str, query: dict[str, str]) -> str:
    if method == "GET":
        if query.get("watch") in WATCH_VALUES:
            return "watch"
        return "get" if name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())


_SYNC_VERBS: dict[tuple[str, bool, str], Callable[..., HttpResponse]] = {
    ("list", False, ""): verbs.list_, ("create", False, ""): verbs.create,
    ("deletecollection", False, ""): verbs.deletecollection,
    ("get", True, ""): verbs.get, ("update", True, ""): verbs.update, ("patch", True, ""): verbs.patch,
    ("delete", True, ""): verbs.delete,
    ("get", True, "status"): verbs.get,
    ("update", True, "status"): lambda call: verbs.update(call, "status"),
    ("patch", True, "status"): lambda call: verbs.patch(call, "status"),
    ("update", True, "finalize"): lambda call: verbs.update(call, "finalize"),
    ("get", True, "scale"): subresources.get_scale, ("update", True, "scale"): subresources.update_scale,
    ("patch", True, "scale"): subresources.patch_scale,
    ("create", True, "binding"): lambda call: subresources.bind(call, verbs.now()),
}


async def resource(request: HttpRequest, rest: str, group: str = "", version: str = "v1") -> HttpResponse:
    query = {k: request.GET.get(k, "") for k in request.GET}
    actor = client_name(request.headers.get("User-Agent", ""))
    try:
        kind, namespace, name, sub = _parse_target(group, version, rest)
        verb = _verb(request.method or "GET", name, sub, query)
        _tag(request, verb, f"{kind.plural}/{sub}" if sub else kind.plural, namespace, name)
        if not kind.namespaced and namespace:
            raise errors.NotFound("the server could not find the requested resource")
        length = int(request.headers.get("Content-Length") or 0)
        if length > settings.KK_MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {settings.KK_MAX_BODY_BYTES}")
        call = Call(method=request.method or "GET", kind=kind, namespace=namespace, name=name, subresource=sub,
                    query=query, actor=actor, accept=request.headers.get("Accept", ""),
                    content_type=(request.content_type or "").lower(), raw_body=request.body)
        await get_feed()  # starts this process's change feed and log compaction on first use
        if verb in ("create", "update", "patch", "delete", "deletecollection"):
            call.check_options()
        if verb == "watch" and not name and not sub:
            return await watch(call)
        if verb == "get" and sub == "log":
            return await pod_log(call)
        handler = _SYNC_VERBS.get((verb, bool(name), sub))
        if handler is None:
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource",
                                          details={"kind": kind.plural})
        return await _run(handler, call)
    except errors.ApiError as exc:
        return error_response(exc)
    except ValueError as exc:  # e.g. a malformed Content-Length
        return error_response(errors.BadRequest(str(exc)))
    except Exception:
        log.exception("unexpected error serving %s", request.path)
        return error_response(errors.InternalError("an internal error occurred; the server logged it"))

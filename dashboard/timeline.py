"""The page's timeline: the cluster as it was at a past revision, the changes after it, and the
whole retained window as a recording, all read from the hub's version log as view models.

Guarantees:
- `state_at(client, N)` is the hub's snapshot at revision N (`/kubekitchen/snapshot?resourceVersion=N`)
  as the same view models the live page draws (`presenters.snapshot`), with the window the hub
  retains, the time of revision N, and the spokes' desired states at N when the hub can read them.
- `changes_after(client, N, limit)` is one page of the changes after N, each a version-log item
  (`presenters.change_item`) with the time it was written.
- `recording(client)` is the window as one document: `RECORDING_VERSION`, the snapshot at the
  oldest retained revision and every change after it up to the newest revision the hub had when
  the recording started. It never holds more than `MAX_CHANGES` changes.
- The views answer JSON; a refusal of the hub (410 before the window, 400 on a bad revision) is
  passed on as the hub's own Status with its code, never a 500.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable, Callable

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from control import errors
from control.client.http import HubClient
from control.client.resources import CONFIGMAPS
from dashboard import hub, presenters
from dashboard.login import login_required

SNAPSHOT_PATH = "/kubekitchen/snapshot"
CHANGES_PATH = "/kubekitchen/changes"
RECORDING_VERSION = "kube-kitchen-recording/1"
PAGE = 2_000
MAX_CHANGES = 50_000


async def _spokes_at(client: HubClient, revision: int) -> dict[str, str] | None:
    """The supervisor's ConfigMap as it was at `revision` (a list at an exact revision), or None."""
    namespace, name = presenters.SPOKES_CONFIGMAP
    try:
        listed = await client.request("GET", CONFIGMAPS.path(namespace), params={
            "resourceVersion": str(revision), "resourceVersionMatch": "Exact", "fieldSelector": f"metadata.name={name}"})
    except errors.ApiError:
        return None  # the page keeps the states it shows: the objects are what matters
    items = listed.get("items") or []
    return presenters.spokes_vm(items[0])["states"] if items else {}


async def state_at(client: HubClient, revision: int) -> dict[str, Any]:
    # The two reads are independent: ask both at once (a scrub waits for the slower only).
    body, spokes = await asyncio.gather(
        client.request("GET", SNAPSHOT_PATH, params={"resourceVersion": str(revision)}), _spokes_at(client, revision))
    state = {"t": "snapshot", **presenters.snapshot(body), "window": body.get("window") or {},
             "time": body.get("time")}
    if spokes is not None:
        state["spokes"] = spokes
    return state


def _item(change: dict[str, Any]) -> dict[str, Any]:
    return {**presenters.change_item(change), "time": change.get("time")}


async def changes_after(client: HubClient, revision: int, limit: int = PAGE) -> dict[str, Any]:
    page = await client.request("GET", CHANGES_PATH, params={"resourceVersion": str(revision), "limit": str(limit)})
    return {"revision": int(page.get("revision") or revision), "more": bool(page.get("more")),
            "window": page.get("window") or {}, "items": [_item(c) for c in page.get("items") or []]}


async def recording(client: HubClient) -> dict[str, Any]:
    first = await client.request("GET", SNAPSHOT_PATH)
    oldest = int((first.get("window") or {}).get("oldest") or 0)
    until = int(first.get("revision") or 0)
    start = await state_at(client, oldest)
    items: list[dict[str, Any]] = []
    revision = start["revision"]
    while revision < until and len(items) < MAX_CHANGES:
        page = await changes_after(client, revision, min(PAGE, MAX_CHANGES - len(items)))
        items += [item for item in page["items"] if item["rv"] <= until]
        if not page["items"] or not page["more"]:
            break
        revision = page["revision"]
    return {"version": RECORDING_VERSION, "window": {"oldest": start["revision"], "newest": until},
            "snapshot": start, "changes": items, "traffic": []}


def _revision(request: HttpRequest) -> int:
    value = request.GET.get("revision", "")
    try:
        revision = int(value)
    except ValueError:
        raise errors.BadRequest(errors.field_invalid("revision", value, "must be an integer")) from None
    if revision < 0:
        raise errors.BadRequest(errors.field_invalid("revision", value, "must be a non-negative integer"))
    return revision


def answered(view: Callable[[HttpRequest, HubClient], Awaitable[dict[str, Any]]]):
    """A JSON view on the shared hub client; a refusal is the hub's (or our) Status, with its code."""
    @functools.wraps(view)
    async def wrapper(request: HttpRequest) -> JsonResponse:
        try:
            async with hub.client_for(hub.scope_of(request)) as client:
                return JsonResponse(await view(request, client))
        except errors.ApiError as exc:
            return JsonResponse(exc.status(), status=exc.code)
    return require_GET(login_required(wrapper))


@answered
async def at(request: HttpRequest, client: HubClient) -> dict[str, Any]:
    return await state_at(client, _revision(request))


@answered
async def changes(request: HttpRequest, client: HubClient) -> dict[str, Any]:
    limit = request.GET.get("limit", "")
    return await changes_after(client, _revision(request), int(limit) if limit.isdigit() and int(limit) > 0 else PAGE)


@answered
async def record(request: HttpRequest, client: HubClient) -> dict[str, Any]:
    return await recording(client)

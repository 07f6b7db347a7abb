"""The dashboard's HTTP views: the page, the manifest form, the object buttons, the traffic form
and a node's kube-proxy table. Thin: each turns a form into one call of `manifests`, `actions` or
`network` and renders the answer as an htmx partial.

Guarantees: the page and partials render in the language the browser chose (the `django_language`
cookie set by Django's `set_language`, else Accept-Language); a partial always carries the hub's
own message when the hub refused, with the hub's status code (htmx is configured to show it).
The page carries the board of attendees for whoever may list pods in every namespace
(`dashboard.attendees`), and which cluster controls its user may use (`dashboard.access`, asked
once per page), so it draws no control that would answer 403. A drain answers at once and its line polls `drain/<node>/` while it runs; the
line comes in both wordings (Kubernetes and restaurant), the page's mode shows one (CSS on the
body's mode class).
The forms need Django's CSRF token (sent by htmx in a header). The manifest form takes what the API
takes (KK_MAX_BODY_BYTES of YAML, else 413) and reads the YAML as the API does (`manifests.read`:
in a worker process, within a budget, holding the sender's fairness seats), so a big form never
pauses the event loop the API is served on. An object that names no namespace goes where the
viewer's kubectl would put it: an attendee's own namespace, anyone else's `default`.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any, Awaitable, Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.views.decorators.http import require_GET, require_POST

from control import errors, protocol, roster
from control.auth.tokenfile import ADMIN
from dashboard import access, attendees, hub, manifests, network, words
from dashboard.actions import ACTIONS, ActionError, Ongoing, form_of
from dashboard.drain import DRAINS
from dashboard.login import login_required

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
EXAMPLES = ("deployment", "service", "crashing-pod")

View = Callable[..., Awaitable[HttpResponse]]


def localized(view: View) -> View:
    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with translation.override(translation.get_language_from_request(request)):
            return await view(request, *args, **kwargs)
    return wrapper


def page_context() -> dict[str, Any]:
    examples = {name: (EXAMPLES_DIR / f"{name}.yaml").read_text() for name in EXAMPLES}
    return {"words": words.terms(), "examples": examples,
            "initial_manifest": examples["deployment"], "protocol": protocol.page_protocol()}


@require_GET
@localized
@login_required
async def index(request: HttpRequest) -> HttpResponse:
    identity = hub.acting()
    agent = hub.agent_for(identity.user) if identity else hub.AGENT
    # The instructor (the cluster admin, or anyone while authentication is off) shows the join QR code.
    instructor = identity is None or identity.user == ADMIN
    workshop_on = instructor and bool(roster.attendee_codes(settings.DATA_DIR))
    client = hub.client(hub.hub_url(hub.scope_of(request)))
    board = await attendees.board_names(client)
    may = await access.controls(client, identity.user if identity else "")
    return render(request, "dashboard/index.html", {**page_context(), "user": identity.user if identity else "",
                                                    "spoke": agent.split(" ")[0], "show_join": workshop_on,
                                                    "attendees": board, "may": may})


@require_POST
@localized
@login_required
async def apply(request: HttpRequest) -> HttpResponse:
    limit = settings.KK_MAX_BODY_BYTES
    try:
        # Decoding a form of megabytes takes a while too: on the worker thread.
        text = await asyncio.to_thread(lambda: request.POST.get("manifest", ""))
    except RequestDataTooBig:
        return render(request, "dashboard/_apply_result.html",
                      {"error": f"Request entity too large: limit is {limit}"}, status=413)
    identity = hub.acting()
    sender = manifests.flow_of(identity.user if identity else None,
                               str((hub.scope_of(request).get("client") or ("",))[0]))
    try:
        documents = await manifests.read(text, sender)  # in a worker process: /healthz stays quick
    except manifests.ManifestError as exc:
        return render(request, "dashboard/_apply_result.html", {"error": str(exc)}, status=exc.code)
    # An object that names no namespace goes where the viewer's kubectl would put it: an
    # attendee's own namespace (their kubeconfig names it), else `default`.
    namespace = hub.acting_attendee() or "default"
    async with hub.client_for(hub.scope_of(request)) as client:
        stored, outcomes = await manifests.apply_all(client, documents, default_namespace=namespace)
    status = 200 if stored else next(o.code for o in outcomes if not o.ok)
    return render(request, "dashboard/_apply_result.html", {"stored": stored, "outcomes": outcomes}, status=status)


@require_POST
@localized
@login_required
async def action(request: HttpRequest, name: str) -> HttpResponse:
    run = ACTIONS.get(name)
    if run is None:
        raise Http404(name)
    try:
        async with hub.client_for(hub.scope_of(request)) as client:
            message, status = await run(client, form_of(request.POST)), 200
        ok = getattr(message, "ok", True)  # an `Answer` reports a refusal the action provoked
    except ActionError as exc:
        message, status, ok = str(exc), 400, False
    except errors.ApiError as exc:
        message, status, ok = exc.message, exc.code, False
    # An action that goes on in the background (a drain): its line asks again until it ends.
    ongoing = isinstance(message, Ongoing)
    poll = reverse("dashboard:drain", args=[message.node]) if ongoing else ""
    return render(request, "dashboard/_action_result.html",
                  {"message": message, "kitchen": message.kitchen if ongoing else "", "ok": ok, "action": name,
                   "poll": poll}, status=status)


@require_GET
@localized
@login_required
async def drain(request: HttpRequest, node: str) -> HttpResponse:
    """Where the node's drain is now, as the result line; it keeps asking while the drain runs."""
    progress = DRAINS.get(node)
    if progress is None:
        raise Http404(node)
    poll = "" if progress.finished else reverse("dashboard:drain", args=[node])
    return render(request, "dashboard/_action_result.html",
                  {"message": progress.line(), "kitchen": progress.line(kitchen=True), "ok": progress.ok,
                   "action": "drain", "poll": poll})


async def _attempt(call: Awaitable[Any]) -> tuple[Any, str, int]:
    """(what the call returned, "", 200), or (None, why, status) when the form or the hub refused."""
    try:
        return await call, "", 200
    except ActionError as exc:
        return None, str(exc), 400
    except errors.ApiError as exc:
        return None, exc.message, exc.code


def _traffic_form(request: HttpRequest) -> dict[str, str]:
    """The traffic form; it has no namespace field: an attendee's short Service name is one of
    their own namespace (the hub lets them send only there), anyone else's of `default`."""
    form = form_of(request.POST)
    attendee = hub.acting_attendee()
    if not form.get("namespace") and attendee is not None:
        form["namespace"] = attendee
    return form


@require_POST
@localized
@login_required
async def traffic(request: HttpRequest) -> HttpResponse:
    summary, message, status = await _attempt(
        network.send_traffic(hub.hub_url(hub.scope_of(request)), _traffic_form(request)))
    return render(request, "dashboard/_traffic_result.html",
                  {"summary": summary, "message": message, "ok": status < 300}, status=status)


@require_GET
@localized
@login_required
async def proxy_rules(request: HttpRequest, node: str) -> HttpResponse:
    rules, message, status = await _attempt(network.proxy_rules(hub.hub_url(hub.scope_of(request)), node))
    lines = network.rule_lines(rules) if rules is not None else []
    return render(request, "dashboard/_proxy_rules.html", {"lines": lines, "message": message, "node": node},
                  status=status)

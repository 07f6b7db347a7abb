"""The workshop's join page: an attendee claims their name (or types their code) and gets their
kubeconfig and the dashboard logged in as them; the instructor shows its address as a QR code.

Guarantees:
- A name is claimed once (`control.roster.claim`, persisted in the data folder, so it holds after
  a reload, a restart and across hub processes sharing the folder). With `--join names` (the
  default) `/join/` lists the provisioned attendees, the claimed ones as taken and not pickable;
  picking a free name claims it and logs the browser in as that attendee. Picking a taken name is
  refused on the page (409) and gives neither the session nor the kubeconfig: from then on only
  the attendee's code gets in, or the name is free again once the instructor releases it.
  With `--join codes` the page lists no names and only takes a code.
- A code (`roster.redeem`, join codes only, compared in constant time) logs in as its attendee
  whether or not the name is claimed (the code is the secret; it claims the name if free). The
  joined page shows the attendee's code, to come back with on another browser.
- Wrong codes are counted (`dashboard.throttle`) on `POST /join/` and `GET /join/<code>/kubeconfig`:
  past the limit the page says how long to wait (429, `Retry-After`), the download answers a plain
  429. Every refusal is a message next to the form; nothing is stored (a claim whose login the hub
  refuses is given back).
- `/join/<code>/kubeconfig` is that attendee's kubeconfig as a download; an unknown code is a 404.
- `POST /join/release/` (the Attendees board) frees a claimed name; only for a user the hub lets
  list pods in every namespace (the instructor, as the board itself), else 403.
- `/join/qr.svg` is a QR code (the `qrcode` library, SVG, drawn here: no network) of the join page
  at the address attendees can reach (`dashboard.reach`).
"""

from __future__ import annotations

import io

import qrcode
import qrcode.image.svg
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from control import roster
from dashboard import attendees, hub, login, reach, throttle

NAMES, CODES = "names", "codes"


def _codes() -> dict[str, str]:
    return roster.attendee_codes(settings.DATA_DIR)


def join_mode() -> str:
    return CODES if getattr(settings, "KK_JOIN", NAMES) == CODES else NAMES


def _language(request: HttpRequest):
    return translation.override(translation.get_language_from_request(request))


def one_liner(request: HttpRequest, code: str, name: str) -> str:
    url = reach.absolute(request, f"/join/{code}/kubeconfig")
    return (f"curl -fsSo kitchen-{name}.kubeconfig {url} && export KUBECONFIG=$PWD/kitchen-{name}.kubeconfig "
            "&& kubectl get pods")


def choices(codes: dict[str, str]) -> list[dict[str, object]]:
    """The names the page offers (none in codes mode), each with whether it is taken."""
    if join_mode() == CODES:
        return []
    taken = roster.claimed(settings.DATA_DIR)
    return [{"name": name, "taken": name in taken} for name in codes]


def _refuse(request: HttpRequest, codes: dict[str, str], message: str, status: int, at: str = "name") -> HttpResponse:
    """The join page again with `message` next to the control it is about (the names or the code)."""
    context = {"names": choices(codes), "provisioned": bool(codes), "error": message, "error_at": at,
               "mode": join_mode()}
    return render(request, "dashboard/join.html", context, status=status)


async def _pick(request: HttpRequest, codes: dict[str, str], name: str) -> HttpResponse:
    if join_mode() == CODES:
        return _refuse(request, codes, _("Names are not taken here: enter your code."), 400)
    if name not in codes:
        return _refuse(request, codes, _("Unknown name."), 401)
    if not roster.claim(settings.DATA_DIR, name):
        return _refuse(request, codes, _("%(name)s is taken. Enter your code, or ask the instructor to release "
                                         "the name.") % {"name": name}, 409)
    try:
        identity = await login.identify(request, "", codes[name], (roster.JOIN,))
    except ValueError as exc:
        roster.release(settings.DATA_DIR, name)  # nothing stored: the name is free again
        return _refuse(request, codes, str(exc), 401)
    await login.log_in(request, identity)
    return HttpResponseRedirect("/join/")


async def _enter(request: HttpRequest, codes: dict[str, str], code: str) -> HttpResponse:
    client = throttle.client_of(request)
    wait = throttle.FRONT_DOOR.retry_after(client)
    if wait:
        answer = _refuse(request, codes, login.wait_message(wait), 429, "code")
        answer["Retry-After"] = str(wait)
        return answer
    if not code:
        return _refuse(request, codes, _("Enter your code."), 400, "code")
    try:
        identity = await login.identify(request, "", code, (roster.JOIN,))
    except ValueError as exc:
        throttle.FRONT_DOOR.failed(client)
        return _refuse(request, codes, str(exc), 401, "code")
    await login.log_in(request, identity)  # `identify` claimed the name for the code holder
    return HttpResponseRedirect("/join/")


@require_http_methods(["GET", "POST"])
async def join(request: HttpRequest) -> HttpResponse:
    with _language(request):
        codes = _codes()
        if request.method == "POST":
            name = request.POST.get("name", "").strip()
            if name:
                return await _pick(request, codes, name)
            return await _enter(request, codes, request.POST.get("code", "").strip())
        identity = await login.identity_of(request.session)
        mine = codes.get(identity.user) if identity else None
        if identity is None or mine is None:
            return render(request, "dashboard/join.html",
                          {"names": choices(codes), "provisioned": bool(codes), "mode": join_mode()})
        return render(request, "dashboard/join.html", {
            "user": identity.user, "code": mine, "download": f"/join/{mine}/kubeconfig",
            "one_liner": one_liner(request, mine, identity.user)})


@require_GET
async def kubeconfig(request: HttpRequest, code: str) -> HttpResponse:
    client = throttle.client_of(request)
    wait = throttle.FRONT_DOOR.retry_after(client)
    if wait:
        return throttle.refusal(wait, f"Too many wrong codes: try again in {wait} s.\n")
    found = roster.peek(settings.DATA_DIR, code)
    name = found.user if found is not None and found.use == roster.JOIN else None
    text = roster.kubeconfig_of(settings.DATA_DIR, name) if name else None
    if text is None:
        throttle.FRONT_DOOR.failed(client)
        raise Http404("no such join code")
    answer = HttpResponse(text, content_type="application/yaml")
    answer["Content-Disposition"] = f'attachment; filename="kitchen-{name}.kubeconfig"'
    answer["Cache-Control"] = "no-store"
    return answer


@require_POST
@login.login_required
async def release(request: HttpRequest) -> HttpResponse:
    """The instructor frees a claimed name (the Attendees board's control); a short line back."""
    with _language(request):
        name = request.POST.get("name", "").strip()
        if not await attendees.may_list_pods_everywhere(hub.client(hub.hub_url(hub.scope_of(request)))):
            text, status = _("Only the instructor releases names."), 403
        elif name not in _codes():
            text, status = _("Unknown name."), 404
        elif roster.release(settings.DATA_DIR, name):
            text, status = _("%(name)s is free: the next to pick it gets it.") % {"name": name}, 200
        else:
            text, status = _("%(name)s was not claimed.") % {"name": name}, 200
        return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")


def qr_svg(text: str) -> bytes:
    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, box_size=10)
    out = io.BytesIO()
    image.save(out)
    return out.getvalue()


@require_GET
async def qr(request: HttpRequest) -> HttpResponse:
    return HttpResponse(qr_svg(reach.absolute(request, "/join/")), content_type="image/svg+xml")

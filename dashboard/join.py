"""The workshop's join page: an attendee picks their name (or types their code) and gets their
kubeconfig and the dashboard logged in as them; the instructor shows its address as a QR code.

Guarantees:
- `/join/` lists the provisioned attendees (`control.workshop`) and takes a name or a join code;
  either logs the browser in as that attendee (their own token, checked at the hub, as `/login/`)
  and shows their kubeconfig: a download link and a copy-paste one-liner. An unknown name or code
  is refused on the page (401), nothing stored. The instructor's one-time code is not a join code.
- `/join/<code>/kubeconfig` is that attendee's kubeconfig as a download (the code is the secret, as
  for the login); an unknown code is a 404.
- `/join/qr.svg` is a QR code (the `qrcode` library, SVG, drawn here: no network) of this page's
  absolute address, as the browser that asks reached the hub (the instructor's screen, opened on
  the address attendees can reach).
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
from django.views.decorators.http import require_GET, require_http_methods

from control import workshop
from dashboard import login


def _codes() -> dict[str, str]:
    return workshop.attendee_codes(settings.DATA_DIR)


def _language(request: HttpRequest):
    return translation.override(translation.get_language_from_request(request))


def one_liner(request: HttpRequest, code: str, name: str) -> str:
    url = request.build_absolute_uri(f"/join/{code}/kubeconfig")
    return (f"curl -fsSo kitchen-{name}.kubeconfig {url} && export KUBECONFIG=$PWD/kitchen-{name}.kubeconfig "
            "&& kubectl get pods")


@require_http_methods(["GET", "POST"])
async def join(request: HttpRequest) -> HttpResponse:
    with _language(request):
        codes = _codes()
        if request.method == "POST":
            name, code = request.POST.get("name", "").strip(), request.POST.get("code", "").strip()
            wanted = codes.get(name, "") if name else workshop.normalized(code)
            if wanted not in codes.values():
                return render(request, "dashboard/join.html", {"names": list(codes), "error": _("Unknown name or code.")},
                              status=401)
            try:
                identity = await login.identify(request, "", wanted)
            except ValueError as exc:
                return render(request, "dashboard/join.html", {"names": list(codes), "error": str(exc)}, status=401)
            await login.log_in(request, identity)
            return HttpResponseRedirect("/join/")
        identity = await login.identity_of(request.session)
        mine = codes.get(identity.user) if identity else None
        if identity is None or mine is None:
            return render(request, "dashboard/join.html", {"names": list(codes)})
        return render(request, "dashboard/join.html", {
            "user": identity.user, "download": f"/join/{mine}/kubeconfig",
            "one_liner": one_liner(request, mine, identity.user)})


@require_GET
async def kubeconfig(request: HttpRequest, code: str) -> HttpResponse:
    wanted = workshop.normalized(code)
    name = next((user for user, known in _codes().items() if known == wanted), None)
    text = workshop.kubeconfig_of(settings.DATA_DIR, name) if name else None
    if text is None:
        raise Http404("no such join code")
    answer = HttpResponse(text, content_type="application/yaml")
    answer["Content-Disposition"] = f'attachment; filename="kitchen-{name}.kubeconfig"'
    answer["Cache-Control"] = "no-store"
    return answer


def qr_svg(text: str) -> bytes:
    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, box_size=10)
    out = io.BytesIO()
    image.save(out)
    return out.getvalue()


@require_GET
async def qr(request: HttpRequest) -> HttpResponse:
    return HttpResponse(qr_svg(request.build_absolute_uri("/join/")), content_type="image/svg+xml")

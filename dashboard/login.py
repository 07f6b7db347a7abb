"""Dashboard login: a token (or a workshop code) becomes a Django session, server side, and every
view and websocket of a logged-in browser acts as that user at the hub.

Guarantees:
- `/login/` takes a bearer token or a code (`control.roster`: an attendee's join code, or the
  instructor's one-time code) by POST only (CSRF-checked). `GET /login/?code=...` logs nobody in:
  it shows the form with the code filled in and a button to confirm, so another site cannot log a
  visitor into an account of its choosing (login CSRF). The token is checked at the hub (a
  SelfSubjectReview made with it: the hub names the user, as `kubectl auth whoami` asks); a token
  or code the hub does not accept is refused with the reason on the form (401), and nothing is
  stored. On success the session key is cycled, the CSRF token rotated, and the session holds the
  user's name and token (the token never reaches the browser: the cookie holds only the key).
  An attendee's join code accepted here claims that attendee's name, as on the join page
  (`dashboard.join`), so nobody picks it there afterwards.
- Wrong tokens and codes are counted per client address and overall (`dashboard.throttle`); past
  the limit the form answers 429 with `Retry-After` and the wait on the page, and tries nothing.
- The start address: with authentication on, any page opened with `?code=<the instructor's one-time
  code>` logs that browser in and drops the code from the address (as Jupyter's tokenised start
  URL). That code is unguessable and works once, so this GET is not the login-CSRF hole; any other
  code there only leads to the confirm form above. With authentication off `?code=` means nothing.
- `/logout/` (POST, CSRF-checked) forgets the session.
- `login_required` wraps every dashboard view: when authentication is on (`control.auth.enabled`)
  and the browser is not logged in, a page is redirected to `/login/?next=...` and a fragment
  (an htmx request, a POST or any JSON view) answers 401 with a short message; when it is logged in
  the view runs `hub.acting_as` its identity. With authentication off, views run as before (the
  dashboard's own identity), and a browser that logged in anyway acts as its user.
- `/session/token/` hands the logged-in user's own token to the page for the shell's WebSocket only
  (a browser cannot put an Authorization header on one); it is never the dashboard's token.
- `identity_of(session)` reads the identity for the websockets (Channels' session scope).
"""

from __future__ import annotations

import functools
from typing import Any, Awaitable, Callable
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.middleware.csrf import rotate_token
from django.shortcuts import render
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from control import errors, roster
from control.auth import enabled
from dashboard import hub, throttle

SESSION_USER, SESSION_TOKEN = "kk_user", "kk_token"
REVIEW_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}

View = Callable[..., Awaitable[HttpResponse]]


async def identity_of(session: Any) -> hub.Identity | None:
    if session is None:
        return None
    # Read with the session's sync API on its thread, not with `aget`: on a session not read yet,
    # Django's `aget` awaits the database read inside an `except AttributeError` block, and
    # `sync_to_async` re-raises that exception in its thread, whose frames the exception's traceback
    # then holds: a reference cycle holding the whole request, on every page request, for the cycle
    # collector to find (the largest share of the hub's collected garbage with a room of attendees).
    user, token = await sync_to_async(_identity_fields, thread_sensitive=True)(session)
    return hub.Identity(user, token) if user and token else None


def _identity_fields(session: Any) -> tuple[Any, Any]:
    return session.get(SESSION_USER), session.get(SESSION_TOKEN)


async def log_in(request: HttpRequest, identity: hub.Identity) -> None:
    await request.session.acycle_key()  # no session fixation: a new key for the new identity
    await request.session.aset(SESSION_USER, identity.user)
    await request.session.aset(SESSION_TOKEN, identity.token)
    rotate_token(request)


async def who(base_url: str, token: str) -> str:
    """The user the hub says `token` is (raises the hub's error, 401 for a token it refuses)."""
    review = await hub.client(base_url, hub.Identity("login", token)).request("POST", REVIEW_PATH, body=REVIEW)
    return str(((review.get("status") or {}).get("userInfo") or {}).get("username") or "")


def _next(request: HttpRequest, value: str) -> str:
    ok = url_has_allowed_host_and_scheme(value, allowed_hosts={request.get_host()},
                                         require_https=request.is_secure())
    return value if value and ok else "/"


async def identify(request: HttpRequest, token: str, code: str,
                   uses: tuple[str, ...] = (roster.JOIN, roster.ONCE)) -> hub.Identity:
    """The identity a form names, checked at the hub; ValueError with the reason when refused."""
    if code and not token:
        redeemed = roster.redeem(settings.DATA_DIR, code, uses)
        if redeemed is None:
            raise ValueError(_("Unknown or used code."))
        token = redeemed[1]
    if not token:
        raise ValueError(_("Enter a token or a code."))
    try:
        user = await who(hub.hub_url(hub.scope_of(request)), token)
    except errors.ApiError as exc:
        raise ValueError(f"{exc.code} {exc.reason}: {exc.message}") from None
    # An attendee's code, wherever it is entered (the join page or this form), holds its name: no
    # one picks that name on the join page afterwards. (A used instructor's code is gone by now.)
    held = roster.peek(settings.DATA_DIR, code) if code else None
    if held is not None and held.use == roster.JOIN:
        roster.claim(settings.DATA_DIR, held.user)  # the code holder has the name, taken or not
    return hub.Identity(user or "unknown", token)


def wait_message(seconds: int) -> str:
    return _("Too many wrong codes: try again in %(seconds)d s.") % {"seconds": seconds}


@require_http_methods(["GET", "POST"])
async def login_view(request: HttpRequest) -> HttpResponse:
    with translation.override(translation.get_language_from_request(request)):
        source = request.POST if request.method == "POST" else request.GET
        token, code = source.get("token", "").strip(), source.get("code", "").strip()
        target = _next(request, source.get("next", ""))
        page = {"next": target, "required": enabled(), "code": code}
        if request.method == "GET":  # never a login: at most the form filled in, to confirm
            return render(request, "dashboard/login.html", {**page, "confirm": bool(code)})
        client = throttle.client_of(request)
        wait = throttle.FRONT_DOOR.retry_after(client)
        if wait:
            answer = render(request, "dashboard/login.html", {**page, "error": wait_message(wait)}, status=429)
            answer["Retry-After"] = str(wait)
            return answer
        try:
            identity = await identify(request, token, code)
        except ValueError as exc:
            if token or code:  # an empty form is no guess
                throttle.FRONT_DOOR.failed(client)
            return render(request, "dashboard/login.html", {**page, "error": str(exc)}, status=401)
        await log_in(request, identity)
        return HttpResponseRedirect(target)


async def start_address(request: HttpRequest) -> HttpResponse:
    """A page opened with `?code=`: the instructor's one-time code logs in here and now; any other
    code is only filled into the login form, to be confirmed there by POST."""
    code = request.GET.get("code", "")
    rest = request.GET.copy()
    rest.pop("code", None)
    here = request.path + (f"?{rest.urlencode()}" if rest else "")
    client = throttle.client_of(request)
    if throttle.FRONT_DOOR.retry_after(client):  # a guesser waits: the form says how long on confirm
        return HttpResponseRedirect("/login/?" + urlencode({"code": code, "next": here}))
    known = roster.peek(settings.DATA_DIR, code)
    if known is not None and known.use == roster.ONCE:
        try:
            identity = await identify(request, "", code, (roster.ONCE,))
        except ValueError:
            identity = None  # used meanwhile, or the hub refused: the form says why on confirm
        if identity is not None:
            await log_in(request, identity)
            return HttpResponseRedirect(here)
    elif known is None:
        throttle.FRONT_DOOR.failed(client)
    return HttpResponseRedirect("/login/?" + urlencode({"code": code, "next": here}))


@require_POST
async def logout_view(request: HttpRequest) -> HttpResponse:
    await request.session.aflush()
    return HttpResponseRedirect("/login/")


def _is_fragment(request: HttpRequest) -> bool:
    return request.method != "GET" or request.headers.get("HX-Request") == "true" or \
        "text/html" not in request.headers.get("Accept", "")


def login_required(view: View) -> View:
    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if enabled() and request.method == "GET" and request.GET.get("code"):
            return await start_address(request)
        identity = await identity_of(getattr(request, "session", None))
        if identity is None and enabled():
            if _is_fragment(request):
                return HttpResponse(_("Not logged in (or the session ended): log in again at /login/."),
                                    status=401, content_type="text/plain; charset=utf-8")
            return HttpResponseRedirect("/login/?" + urlencode({"next": request.get_full_path()}))
        with hub.acting_as(identity):
            return await view(request, *args, **kwargs)
    return wrapper


@require_GET
@login_required
async def session_token(request: HttpRequest) -> HttpResponse:
    """The logged-in user's token, for the one thing a browser must do itself: open a WebSocket to
    the hub (the shell's exec), which cannot carry an Authorization header; the page offers it as
    upstream's `base64url.bearer.authorization.k8s.io.` subprotocol. Never the dashboard's own token."""
    identity = hub.acting()
    answer = JsonResponse({"user": identity.user if identity else "", "token": identity.token if identity else ""})
    answer["Cache-Control"] = "no-store"
    return answer

"""The Content-Security-Policy of every page the dashboard serves: what a page may load and run.

Guarantees: every Django response (the dashboard's pages, fragments and static files; the
Kubernetes API paths never reach Django) carries `POLICY` unless the view set its own: scripts only
from this origin's files (no inline script, no eval, no other site), connections (fetch,
WebSockets) only to this origin, images from this origin (and the `data:` empty favicon), no
plugins, no <base> elsewhere, forms only to this origin, and no framing by any page.
Styles come from this origin's files too; inline styles are allowed because xterm.js and the
namespace filter write <style> elements at run time (a style cannot run code; scripts stay strict).
"""

from __future__ import annotations

from typing import Any, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
HEADER = "Content-Security-Policy"


class ContentSecurityPolicy:
    """Django middleware (sync and async) that adds `POLICY` to every response."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self._acall(request)
        return with_policy(self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return with_policy(await self.get_response(request))


def with_policy(response: HttpResponse) -> HttpResponse:
    if HEADER not in response:
        response[HEADER] = POLICY
    return response

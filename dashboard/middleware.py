"""Django's own middleware, run on the event loop instead of a thread hop per hook.

Django runs a `MiddlewareMixin` middleware's `process_request` and `process_response` (and the
handler runs a sync `process_view`) through `sync_to_async` on every async request, and Django's
ASGI handler gives each request an executor of its own: each dashboard request paid a thread start
and about seven hops for hooks that only read headers and cookies and set some (in the workshop
room, with the lesson bar polling, 4 % of the hub's busy samples). These subclasses run the very
same hooks, in the same order and with the same arguments, directly on the loop; the one hook that
may touch the database, the session's `process_response` when it saves the session (a login, a
chosen namespace: `modified` and not empty, or `SESSION_SAVE_EVERY_REQUEST`), still goes to the
thread as before.

Guarantees: the answers and their headers are those of Django's middleware (same code, same
settings); in a sync stack (WSGI, Django's sync test client) they behave as the originals. A form
body over `FORM_ON_LOOP_BYTES` is still parsed for its CSRF field on the thread.
"""

from __future__ import annotations

import functools
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.middleware.security import SecurityMiddleware


class _OnLoop:
    """`__acall__` of `MiddlewareMixin`, with the hooks called in place (they do no I/O)."""

    def _response_needs_thread(self, request: HttpRequest, response: HttpResponse) -> bool:
        return False

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        response = None
        if hasattr(self, "process_request"):
            response = self.process_request(request)
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            if self._response_needs_thread(request, response):
                response = await sync_to_async(self.process_response, thread_sensitive=True)(request, response)
            else:
                response = self.process_response(request, response)
        return response


class Security(_OnLoop, SecurityMiddleware):
    pass


class Session(_OnLoop, SessionMiddleware):
    def _response_needs_thread(self, request: HttpRequest, response: HttpResponse) -> bool:
        session = getattr(request, "session", None)
        if session is None:
            return False
        # exactly when Django's process_response saves (the one hook here that writes the database)
        return bool((session.modified or settings.SESSION_SAVE_EVERY_REQUEST) and not session.is_empty())


# A form larger than this is parsed (for its CSRF field) on the thread, as before: a flood of big
# forms must not stall the loop (issue 20's apply-form flood); the lesson bar's posts are tiny.
FORM_ON_LOOP_BYTES = 64 * 1024


class Csrf(_OnLoop, CsrfViewMiddleware):
    async def process_view(self, request: HttpRequest, callback: Any, args: Any, kwargs: Any) -> Any:
        check = functools.partial(CsrfViewMiddleware.process_view, self, request, callback, args, kwargs)
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = FORM_ON_LOOP_BYTES + 1
        if size > FORM_ON_LOOP_BYTES:
            return await sync_to_async(check, thread_sensitive=True)()
        return check()  # the cookie, the header, a small form already in memory


class XFrameOptions(_OnLoop, XFrameOptionsMiddleware):
    pass

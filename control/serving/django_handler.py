"""Django's ASGI handler for the dashboard's pages, on a few long-lived threads.

Django's `ASGIHandler` enters a fresh `ThreadSensitiveContext` per request, so each page request's
thread-sensitive sync work (the session's database read, closing the response, any sync hook)
starts a thread of its own, which opens a database connection of its own (SQLite keeps one per
thread), and stops it at the end. In the workshop room, with every attendee's lesson bar polling,
that was about 3 % of the hub's busy samples (thread starts, new connections).

Guarantees: the requests are handled by Django's own `handle` (same middleware, views, signals,
answers); each request's thread-sensitive calls run, one at a time and in order, on one thread of a
fixed pool of `THREADS` single-thread executors, taken in turn (asgiref's public
`ThreadSensitiveContext(executor=...)`: the executors live as long as the process). Up to `THREADS`
requests run their sync work side by side, as Django's own default (one thread for all) is
widened; no thread and no database connection is made per request. A request leaves no reference
cycle behind for the client's disconnect (`listen_for_disconnect`).
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler

THREADS = 4


class PooledASGIHandler(ASGIHandler):
    def __init__(self, threads: int = THREADS) -> None:
        super().__init__()
        self.executors = [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"dashboard-{i}")
                          for i in range(threads)]
        self._turn = itertools.cycle(self.executors)

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":  # as Django's own
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        async with ThreadSensitiveContext(executor=next(self._turn)):
            await self.handle(scope, receive, send)

    async def listen_for_disconnect(self, receive: Callable) -> None:
        """Django's, but a disconnect ends the task with a value rather than `RequestAborted`.

        `handle` ignores that exception, so it answers alike either way; but the exception, kept by
        its task in `handle`'s list of tasks while its traceback holds `handle`'s frame, made a
        reference cycle holding the whole request (Daphne sends the disconnect as soon as the
        answer is written: on every request) for the cycle collector to find."""
        message = await receive()
        if message["type"] != "http.disconnect":  # as Django's: never happens
            raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")


def pooled_asgi_application() -> PooledASGIHandler:
    """What `django.core.asgi.get_asgi_application` makes, with the pooled handler."""
    import django

    django.setup(set_prefix=False)
    return PooledASGIHandler()

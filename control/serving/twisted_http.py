"""Twisted's HTTP/1.1 server (twisted.web.http, what Daphne serves with), set as a hub needs it.

Guarantees, after `install()` (idempotent: it only sets values):
- a request line and a header block may each be up to 1 MiB (kube-apiserver accepts long request
  lines: big label and field selectors; Twisted's defaults are 16 KiB and 16 KiB);
- 422 and 429 are answered with their reason phrases (Unprocessable Entity for invalid objects, Too
  Many Requests from the fairness limiter and the login throttle), which Twisted's table lacks;
- a Content-Type is parsed down to its lower-cased media type alone: Twisted's private
  `_parseContentType` runs every one through the `email` package for parameters no one here reads;
- no access-log line is formatted for a request when Daphne sends Twisted's log nowhere (its
  verbosity 1 and below, runhub's): Twisted otherwise builds one per request (time, address,
  request line, referrer, user agent) and hands it to a log that drops it. With a higher
  verbosity the lines are written as before.
"""

from __future__ import annotations

from typing import Any

LIMIT = 1 << 20
PHRASES = {422: b"Unprocessable Entity", 429: b"Too Many Requests"}


def media_type(line: bytes) -> bytes:
    """`application/json; charset=utf-8` -> `application/json` (what the hub's routing reads)."""
    return line.split(b";", 1)[0].strip().lower()


def start_factory(factory: Any) -> None:
    """Daphne's HTTP factory starting (Twisted's `startFactory`), without the access log when
    Daphne discards Twisted's log anyway (`daphne.server.Server`: verbosity <= 1)."""
    from twisted.web import http

    http.HTTPFactory.startFactory(factory)
    if getattr(getattr(factory, "server", None), "verbosity", 2) <= 1:
        factory._logFile = None  # HTTPFactory.log writes nothing without it


def install() -> None:
    from daphne import http_protocol
    from twisted.web import http

    http.HTTPChannel.MAX_LENGTH = LIMIT
    http.HTTPChannel.totalHeadersSize = LIMIT
    for status, phrase in PHRASES.items():
        http.RESPONSES.setdefault(status, phrase)
    http._parseContentType = media_type
    http_protocol.HTTPFactory.startFactory = start_factory

"""Twisted's HTTP/1.1 server (twisted.web.http, what Daphne serves with), set as a hub needs it.

Guarantees, after `install()` (idempotent: it only sets values):
- a request line and a header block may each be up to 1 MiB (kube-apiserver accepts long request
  lines: big label and field selectors; Twisted's defaults are 16 KiB and 16 KiB);
- 422 and 429 are answered with their reason phrases (Unprocessable Entity for invalid objects, Too
  Many Requests from the fairness limiter and the login throttle), which Twisted's table lacks;
- a Content-Type is parsed down to its lower-cased media type alone: Twisted's private
  `_parseContentType` runs every one through the `email` package for parameters no one here reads.
"""

from __future__ import annotations

LIMIT = 1 << 20
PHRASES = {422: b"Unprocessable Entity", 429: b"Too Many Requests"}


def media_type(line: bytes) -> bytes:
    """`application/json; charset=utf-8` -> `application/json` (what the hub's routing reads)."""
    return line.split(b";", 1)[0].strip().lower()


def install() -> None:
    from twisted.web import http

    http.HTTPChannel.MAX_LENGTH = LIMIT
    http.HTTPChannel.totalHeadersSize = LIMIT
    for status, phrase in PHRASES.items():
        http.RESPONSES.setdefault(status, phrase)
    http._parseContentType = media_type

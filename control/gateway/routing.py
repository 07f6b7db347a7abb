"""How a Gateway's listener picks the rule and the backend of one HTTP request, as the Gateway API
specifies it. Pure: values in, a decision out, the randomness injected.

Guarantees:
- `host_matches(pattern, host)`: an exact hostname matches itself (case-insensitive, the Host
  header's port ignored); `*.example.com` matches any name with at least one more label on the
  left (`a.example.com`, `a.b.example.com`), never `example.com` itself; an empty pattern matches
  every host.
- `route_hostnames(listener, route)`: the route's hostnames that apply on a listener (both empty:
  every host; a route name inside a listener wildcard, or a route wildcard covering the listener's
  name, narrows to the more specific of the two), or None when they share no hostname (the route
  is then not accepted there: `NoMatchingListenerHostname`).
- `path_matches`: `Exact` is equality; `PathPrefix` matches whole path elements (`/soup` matches
  `/soup` and `/soup/x`, not `/soupy`; `/` matches all; a trailing `/` in the value is ignored);
  `RegularExpression` is a full match (implementation-specific upstream; here Python's re).
  Header matches compare names case-insensitively and values exactly (`Exact`) or by full regular
  expression; query parameters likewise (names case-sensitive); a method must be equal.
- `Router.decide` applies upstream's precedence: the listener with the most specific hostname that
  matches the request; among its routes, the most specific matching hostname (exact before
  wildcard, longer before shorter), then the match: `Exact` path before prefix, longer prefix,
  with a method, more headers, more query parameters, then the oldest route, then namespace/name
  alphabetically, then rule and match order. None when nothing matches (the listener answers 404).
- `choose_backend(backends, rng)` draws one backend with probability weight / sum of weights
  (weight 0 never chosen); None when no backend has a weight (the listener answers 500). A
  backend that is not usable (`problem` set: refused, not found) is still drawn with its weight,
  so its share of the requests fails as the specification asks, and only that share.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence


def bare_host(host: str) -> str:
    """The Host header's name, lowercase, without port or trailing dot."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0].rstrip(".") if ":" in host else host.rstrip(".")


def host_matches(pattern: str, host: str) -> bool:
    pattern, host = pattern.lower(), bare_host(host)
    if not pattern:
        return True
    if pattern.startswith("*."):
        suffix = pattern[1:]  # ".example.com"
        return host.endswith(suffix) and len(host) > len(suffix)
    return host == pattern


def _covers(wide: str, narrow: str) -> bool:
    """Whether every name `narrow` matches is matched by `wide` (both patterns)."""
    if not wide:
        return True
    if wide.startswith("*."):
        return narrow.endswith(wide[1:]) and len(narrow) > len(wide) - 1
    return wide == narrow


def route_hostnames(listener: str, route: Sequence[str]) -> tuple[str, ...] | None:
    listener = (listener or "").lower()
    if not route:
        return (listener,) if listener else ("",)
    if not listener:
        return tuple(h.lower() for h in route)
    out = []
    for name in (h.lower() for h in route):
        if _covers(listener, name):
            out.append(name)
        elif _covers(name, listener):
            out.append(listener)
    return tuple(dict.fromkeys(out)) or None


def host_rank(pattern: str) -> tuple[int, int]:
    """Higher is more specific: exact names first, then wildcards with more labels, then none."""
    if not pattern:
        return (0, 0)
    if pattern.startswith("*."):
        return (1, pattern.count("."))
    return (2, len(pattern))


def path_matches(kind: str, value: str, path: str) -> bool:
    if kind == "Exact":
        return path == value
    if kind == "RegularExpression":
        try:
            return re.fullmatch(value, path) is not None
        except re.error:
            return False
    prefix = value.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def _value_matches(kind: str, wanted: str, got: str | None) -> bool:
    if got is None:
        return False
    if kind == "RegularExpression":
        try:
            return re.fullmatch(wanted, got) is not None
        except re.error:
            return False
    return got == wanted


@dataclass(frozen=True)
class Match:
    path_type: str = "PathPrefix"
    path: str = "/"
    headers: tuple[tuple[str, str, str], ...] = ()  # (lowercase name, type, value)
    query: tuple[tuple[str, str, str], ...] = ()
    method: str = ""

    @classmethod
    def of(cls, spec: Mapping) -> "Match":
        path = spec.get("path") or {}
        return cls(str(path.get("type") or "PathPrefix"), str(path.get("value") or "/"),
                   tuple((str(h.get("name", "")).lower(), str(h.get("type") or "Exact"), str(h.get("value", "")))
                         for h in spec.get("headers") or [] if isinstance(h, dict)),
                   tuple((str(q.get("name", "")), str(q.get("type") or "Exact"), str(q.get("value", "")))
                         for q in spec.get("queryParams") or [] if isinstance(q, dict)),
                   str(spec.get("method") or ""))

    def matches(self, method: str, path: str, headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
        return (path_matches(self.path_type, self.path, path)
                and (not self.method or self.method == method)
                and all(_value_matches(kind, value, headers.get(name)) for name, kind, value in self.headers)
                and all(_value_matches(kind, value, query.get(name)) for name, kind, value in self.query))

    def rank(self) -> tuple:
        return (self.path_type == "Exact", len(self.path) if self.path_type != "RegularExpression" else 0,
                bool(self.method), len(self.headers), len(self.query))


@dataclass(frozen=True)
class Backend:
    namespace: str
    name: str
    port: int | None
    weight: int = 1
    problem: str = ""  # why requests drawn for it fail ("" when usable)


@dataclass(frozen=True)
class Rule:
    """One rule of one route as attached to one listener."""
    route: str  # "namespace/name"
    created: str  # the route's creationTimestamp (RFC 3339 sorts as text)
    index: int
    hostnames: tuple[str, ...]  # ("",) for every host
    matches: tuple[Match, ...]
    backends: tuple[Backend, ...]
    listener: str = ""


@dataclass(frozen=True)
class Decision:
    rule: Rule
    match: Match


@dataclass(frozen=True)
class Router:
    """The rules of one listening port: (listener name, listener hostname) and their attached rules."""
    listeners: tuple[tuple[str, str], ...] = ()
    rules: tuple[Rule, ...] = field(default=())

    def listener_for(self, host: str) -> str | None:
        matching = [(host_rank(h), name) for name, h in self.listeners if host_matches(h, host)]
        return max(matching)[1] if matching else None

    def decide(self, method: str, target_path: str, host: str, headers: Mapping[str, str],
               query: Mapping[str, str]) -> Decision | None:
        listener = self.listener_for(host)
        if listener is None:
            return None
        best: tuple | None = None
        found: Decision | None = None
        for rule in self.rules:
            if rule.listener != listener:
                continue
            ranks = [host_rank(h) for h in rule.hostnames if host_matches(h, host)]
            if not ranks:
                continue
            for position, match in enumerate(rule.matches):
                if not match.matches(method, target_path, headers, query):
                    continue
                # larger is better for the first parts; older, alphabetically first and earlier win ties
                key = (max(ranks), match.rank(), _negated(rule.created), _negated(rule.route), -rule.index,
                       -position)
                if best is None or key > best:
                    best, found = key, Decision(rule, match)
        return found


def _negated(text: str) -> tuple[int, ...]:
    """A key that sorts text in reverse (so that `max` prefers the smallest)."""
    return tuple(-ord(c) for c in text) + (1,)


def choose_backend(backends: Iterable[Backend], rng: random.Random) -> Backend | None:
    weighted = [b for b in backends if b.weight > 0]
    total = sum(b.weight for b in weighted)
    if not total:
        return None
    point = rng.randrange(total)
    for backend in weighted:
        point -= backend.weight
        if point < 0:
            return backend
    return weighted[-1]  # pragma: no cover - the draw is below the total

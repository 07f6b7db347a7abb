"""Route matching and the weighted choice, pure: hostnames (exact, wildcard, listener ∩ route),
path and header matches, upstream's precedence, and a 90/10 split drawn with a seeded RNG."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from control.gateway.routing import (Backend, Match, Router, Rule, choose_backend, host_matches, path_matches,
                                     route_hostnames)


@pytest.mark.parametrize("pattern, host, expected", [
    ("menu.example", "menu.example", True),
    ("menu.example", "MENU.example:8080", True),
    ("menu.example", "soup.menu.example", False),
    ("*.example.com", "a.example.com", True),
    ("*.example.com", "a.b.example.com", True),
    ("*.example.com", "example.com", False),
    ("*.example.com", "aexample.com", False),
    ("", "anything", True),
])
def test_host_matches(pattern, host, expected):
    assert host_matches(pattern, host) is expected


def test_route_hostnames_intersect_with_the_listener():
    assert route_hostnames("", []) == ("",)
    assert route_hostnames("*.example.com", []) == ("*.example.com",)
    assert route_hostnames("", ["a.example"]) == ("a.example",)
    assert route_hostnames("*.example.com", ["test.example.com", "test.example.net"]) == ("test.example.com",)
    assert route_hostnames("foo.example.com", ["*.example.com"]) == ("foo.example.com",)
    assert route_hostnames("foo.example.com", ["bar.example.com"]) is None


@pytest.mark.parametrize("kind, value, path, expected", [
    ("Exact", "/soup", "/soup", True),
    ("Exact", "/soup", "/soup/", False),
    ("PathPrefix", "/", "/anything", True),
    ("PathPrefix", "/soup", "/soup", True),
    ("PathPrefix", "/soup", "/soup/today", True),
    ("PathPrefix", "/soup/", "/soup", True),
    ("PathPrefix", "/soup", "/soupy", False),
    ("RegularExpression", "/v[0-9]+/.*", "/v2/menu", True),
    ("RegularExpression", "/v[0-9]+", "/v2/menu", False),
])
def test_path_matches(kind, value, path, expected):
    assert path_matches(kind, value, path) is expected


def test_header_and_method_matches():
    match = Match.of({"path": {"type": "PathPrefix", "value": "/"}, "method": "GET",
                      "headers": [{"name": "X-Guest", "value": "vip"}]})
    assert match.matches("GET", "/", {"x-guest": "vip"}, {})
    assert not match.matches("GET", "/", {"x-guest": "VIP"}, {})
    assert not match.matches("POST", "/", {"x-guest": "vip"}, {})
    assert not match.matches("GET", "/", {}, {})


def rule(route, *matches, hostnames=("",), created="2026-01-01T00:00:00Z", index=0, listener="http"):
    return Rule(route, created, index, hostnames, tuple(Match.of(m) for m in matches) or (Match(),),
                (Backend("default", route.split("/")[1], 80),), listener)


def decide(router, path="/", host="x", headers=None, method="GET"):
    found = router.decide(method, path, host, headers or {}, {})
    return found.rule.route if found else None


def test_precedence_exact_over_prefix_longest_prefix_headers_and_hostnames():
    router = Router((("http", ""),), (
        rule("default/root", {"path": {"type": "PathPrefix", "value": "/"}}),
        rule("default/soup", {"path": {"type": "PathPrefix", "value": "/soup"}}),
        rule("default/soup-exact", {"path": {"type": "Exact", "value": "/soup/today"}}),
        rule("default/vip", {"path": {"type": "PathPrefix", "value": "/soup"},
                             "headers": [{"name": "x-guest", "value": "vip"}]}),
        rule("default/named", {"path": {"type": "PathPrefix", "value": "/"}}, hostnames=("menu.example",)),
        rule("default/wild", {"path": {"type": "PathPrefix", "value": "/"}}, hostnames=("*.example",)),
    ))
    assert decide(router, "/bread") == "default/root"
    assert decide(router, "/soup/x") == "default/soup"
    assert decide(router, "/soup/today") == "default/soup-exact"
    assert decide(router, "/soup/x", headers={"x-guest": "vip"}) == "default/vip"
    assert decide(router, "/bread", host="menu.example") == "default/named"
    assert decide(router, "/bread", host="other.example") == "default/wild"


def test_ties_go_to_the_oldest_route_then_by_name():
    router = Router((("http", ""),), (
        rule("default/b", created="2026-01-02T00:00:00Z"),
        rule("default/c", created="2026-01-01T00:00:00Z"),
        rule("default/a", created="2026-01-02T00:00:00Z"),
    ))
    assert decide(router) == "default/c"
    assert decide(Router((("http", ""),), (rule("default/b"), rule("default/a")))) == "default/a"


def test_no_match_and_listener_hostnames():
    router = Router((("only", "menu.example"),), (rule("default/r", hostnames=("menu.example",), listener="only"),))
    assert decide(router, host="menu.example") == "default/r"
    assert decide(router, host="other.example") is None
    assert decide(Router((("http", ""),), (rule("default/r", {"path": {"type": "Exact", "value": "/a"}}),)),
                  "/b") is None


def test_a_90_10_split_over_1000_draws():
    backends = (Backend("default", "menu-v1", 80, 90), Backend("default", "menu-v2", 80, 10))
    rng = random.Random(25)
    counts = Counter(choose_backend(backends, rng).name for _ in range(1000))
    assert counts["menu-v1"] + counts["menu-v2"] == 1000
    assert 870 <= counts["menu-v1"] <= 930, counts


def test_weight_zero_is_never_chosen_and_no_weight_is_none():
    rng = random.Random(1)
    backends = (Backend("default", "a", 80, 0), Backend("default", "b", 80, 1))
    assert {choose_backend(backends, rng).name for _ in range(100)} == {"b"}
    assert choose_backend((Backend("default", "a", 80, 0),), rng) is None
    assert choose_backend((), rng) is None

"""Access reviews before a control or a request: one SelfSubjectAccessReview per right the user
has not been answered yet, kept a minute of the (fake) clock per hub and user; a refused review
means no and is asked again; with authentication off nothing is asked; the cluster controls."""

from __future__ import annotations

import asyncio

import pytest

from control import errors
from dashboard import access
from dashboard.access import AccessCache, Right


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ReviewingHub:
    """Answers access reviews from a set of allowed (verb, resource, namespace); records each."""

    def __init__(self, allowed: set[tuple[str, str, str]], server: str = "http://hub-a", refuse: bool = False):
        self.allowed, self.server, self.refuse = allowed, server, refuse
        self.asked: list[dict] = []

    async def request(self, method: str, path: str, body: dict | None = None, **_: object) -> dict:
        assert (method, path) == ("POST", access.REVIEWS)
        attributes = body["spec"]["resourceAttributes"]
        self.asked.append(attributes)
        if self.refuse:
            raise errors.ServiceUnavailable("the hub is busy")
        key = (attributes["verb"], attributes["resource"], attributes.get("namespace", ""))
        return {"kind": "SelfSubjectAccessReview", "status": {"allowed": key in self.allowed}}


@pytest.fixture(autouse=True)
def authentication_on(settings):
    settings.KK_AUTHENTICATION = "on"


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_right_is_asked_once_and_kept_a_minute_then_asked_again():
    clock, hub = Clock(), ReviewingHub({("list", "pods", "alice")})
    cache = AccessCache(clock=clock)
    mine, theirs = Right("list", "pods", namespace="alice"), Right("list", "pods", namespace="bob")
    assert run(access.allowed(hub, "alice", [mine], cache)) is True
    assert run(access.allowed(hub, "alice", [theirs], cache)) is False
    for _ in range(5):  # a page polling its check every 3 s
        assert run(access.allowed(hub, "alice", [mine], cache)) and not run(access.allowed(hub, "alice", [theirs], cache))
    assert len(hub.asked) == 2
    assert hub.asked[0] == {"verb": "list", "resource": "pods", "namespace": "alice"}
    clock.now += access.TTL_S + 1
    run(access.allowed(hub, "alice", [mine], cache))
    assert len(hub.asked) == 3


def test_answers_are_per_user_and_per_hub_and_a_kept_no_stops_the_asking():
    hub, other = ReviewingHub(set()), ReviewingHub({("patch", "nodes", "")}, server="http://hub-b")
    cache = AccessCache(clock=Clock())
    rights = [Right("patch", "nodes"), Right("create", "pods", subresource="eviction")]
    assert run(access.allowed(hub, "admin", rights, cache)) is False
    assert len(hub.asked) == 2  # the unknown rights are asked together
    assert run(access.allowed(hub, "admin", [*rights, Right("delete", "nodes")], cache)) is False
    assert len(hub.asked) == 2  # a kept no: nothing more is asked
    assert run(access.allowed(other, "admin", rights[:1], cache)) is True  # another hub, its own answer
    assert run(access.allowed(hub, "bob", rights[:1], cache)) is False and len(hub.asked) == 3


def test_the_rights_not_known_are_asked_at_once_not_one_after_another():
    class SlowHub(ReviewingHub):
        in_flight = most = 0

        async def request(self, *args, **kwargs):
            SlowHub.in_flight += 1
            SlowHub.most = max(SlowHub.most, SlowHub.in_flight)
            await asyncio.sleep(0.01)
            SlowHub.in_flight -= 1
            return await super().request(*args, **kwargs)

    rights = [Right("get", "pods", namespace=f"n{i}") for i in range(6)]
    hub = SlowHub({("get", "pods", f"n{i}") for i in range(6)})
    assert run(access.allowed(hub, "alice", [*rights, rights[0]], AccessCache(clock=Clock()))) is True
    assert len(hub.asked) == 6 and SlowHub.most == access.IN_FLIGHT


def test_a_review_the_hub_refuses_is_no_and_not_kept():
    hub, cache = ReviewingHub(set(), refuse=True), AccessCache(clock=Clock())
    assert run(access.allowed(hub, "alice", [Right("patch", "nodes")], cache)) is False
    hub.refuse, hub.allowed = False, {("patch", "nodes", "")}
    assert run(access.allowed(hub, "alice", [Right("patch", "nodes")], cache)) is True


def test_the_cache_is_bounded():
    cache = AccessCache(clock=Clock(), max_entries=3)
    for n in range(5):
        cache.put("u", Right("get", f"r{n}"), True)
    assert cache.get("u", Right("get", "r0")) is None and cache.get("u", Right("get", "r4")) is True


def test_with_authentication_off_nothing_is_asked(settings):
    settings.KK_AUTHENTICATION = "off"
    hub = ReviewingHub(set())
    assert run(access.allowed(hub, "", [Right("patch", "nodes")], AccessCache())) is True and hub.asked == []


def test_the_cluster_controls_for_an_attendee_and_for_the_admin():
    attendee = ReviewingHub({("list", "pods", "alice")})
    assert run(access.controls(attendee, "alice", AccessCache(clock=Clock()))) == {
        "cordon": False, "drain": False, "spokes": False}
    admin = ReviewingHub({("patch", "nodes", ""), ("create", "pods", ""), ("patch", "configmaps", "kube-system")})
    assert run(access.controls(admin, "kubernetes-admin", AccessCache(clock=Clock()))) == {
        "cordon": True, "drain": True, "spokes": True}
    spokes = [a for a in admin.asked if a["resource"] == "configmaps"]
    assert spokes == [{"verb": "patch", "resource": "configmaps", "namespace": "kube-system", "name": "kubekitchen-spokes"}]

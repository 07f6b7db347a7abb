"""control.api.fairness: classification as upstream's default FlowSchemas, the per-flow seats with
their queue on an injected clock, and the hub refusing a flooding client while another is served."""

from __future__ import annotations

import asyncio
import json

import pytest

from control import errors
from control.api import fairness
from control.api.app import hub_app
from control.auth.rbac import User
from control.clock import FakeClock, settle

LEVEL = fairness.PriorityLevel("global-default", per_flow=2, queue_length=1, queue_wait=1.0)


def classify(user=None, path="/api/v1/pods", authenticated=True, agent="kubectl/v1.32.0", address="10.0.0.7"):
    return fairness.classify(user, path, authenticated=authenticated, user_agent=agent,
                             actor=agent.split("/")[0], address=address)


def test_classification_follows_the_default_flow_schemas():
    masters = User("admin", groups=("system:masters", "system:authenticated"))
    node = User("system:node:node-1", groups=("system:nodes", "system:authenticated"))
    robot = User("system:serviceaccount:default:robot", groups=("system:serviceaccounts", "system:authenticated"))
    alice = User("alice", groups=("system:authenticated",))
    assert (classify(masters).schema, classify(masters).level.exempt) == ("exempt", True)
    assert (classify(node).schema, classify(node).level.name) == ("system-nodes", "system")
    assert classify(User("system:kube-scheduler")).level.name == "system"
    assert classify(User("kubekitchen:dashboard")).level.name == "system"
    cook = User("system:serviceaccount:kube-system:line-cook",
                groups=("system:serviceaccounts", "system:serviceaccounts:kube-system"))
    assert classify(cook).schema == "kube-system-service-accounts"
    assert classify(User("system:kube-controller-manager")).schema == "kube-controller-manager"
    assert (classify(robot).level.name, classify(robot).flow) == ("workload-low", robot.name)
    assert (classify(alice).level.name, classify(alice).flow) == ("global-default", "alice")
    assert classify(alice, path="/healthz").level.exempt


def test_without_authentication_a_flow_is_a_program_at_an_address():
    attendee = classify(authenticated=False)
    assert (attendee.level.name, attendee.flow) == ("global-default", "kubectl@10.0.0.7")
    assert classify(authenticated=False, address="10.0.0.8").flow != attendee.flow
    spoke = classify(authenticated=False, agent="scheduler (kube-kitchen)")
    assert spoke.level.name == "system" and spoke.level.per_flow > attendee.level.per_flow


def test_headers_name_stable_uids():
    one, two = classify(authenticated=False).headers(), classify(authenticated=False, address="x").headers()
    assert one == two and set(one) == {"X-Kubernetes-PF-FlowSchema-UID", "X-Kubernetes-PF-PriorityLevel-UID"}
    assert one["X-Kubernetes-PF-PriorityLevel-UID"] != classify(authenticated=False, agent="a (kube-kitchen)") \
        .headers()["X-Kubernetes-PF-PriorityLevel-UID"]


@pytest.mark.parametrize("method,path,query,expected", [
    ("GET", "/api/v1/namespaces/default/pods", {"watch": "true"}, True),
    ("GET", "/api/v1/namespaces/default/pods/web/log", {}, True),
    ("POST", "/api/v1/namespaces/default/pods/web/exec", {}, True),
    ("GET", "/kubekitchen/changes", {"watch": "1"}, True),
    ("GET", "/api/v1/namespaces/default/pods", {}, False),
    ("GET", "/api/v1/namespaces/default/pods/log", {}, False),  # a pod named "log"
    ("POST", "/apis/apps/v1/namespaces/default/deployments", {}, False),
])
def test_long_running_requests_are_recognised(method, path, query, expected):
    assert fairness.long_running(method, path, query) is expected


def run(coro):
    return asyncio.run(coro)


def test_seats_then_queue_then_429_with_retry_after():
    async def scenario():
        limiter = fairness.Limiter(FakeClock())
        first, second = await limiter.acquire(LEVEL, "u"), await limiter.acquire(LEVEL, "u")
        queued = asyncio.ensure_future(limiter.acquire(LEVEL, "u"))
        await settle()
        assert not queued.done()
        with pytest.raises(errors.TooManyRequests) as refused:  # the queue (length 1) is full
            await limiter.acquire(LEVEL, "u")
        assert refused.value.message == "Too many requests, please try again later."
        assert refused.value.headers == {"Retry-After": "1"}
        other = await limiter.acquire(LEVEL, "v")  # another flow has its own seats
        first()
        await settle()
        third = queued.result()  # the freed seat went to the waiter
        assert limiter.in_flight("global-default", "u") == 2
        for release in (second, third, other):
            release()
        second()  # releasing twice is harmless
        assert limiter.flows == {}

    run(scenario())


def test_a_waiter_is_refused_when_its_wait_ends_on_the_clock():
    async def scenario():
        clock = FakeClock()
        limiter = fairness.Limiter(clock)
        seats = [await limiter.acquire(LEVEL, "u") for _ in range(2)]
        queued = asyncio.ensure_future(limiter.acquire(LEVEL, "u"))
        await settle()
        await clock.advance(0.9)
        assert not queued.done()
        await clock.advance(0.2)
        with pytest.raises(errors.TooManyRequests):
            queued.result()
        for release in seats:
            release()
        assert limiter.flows == {}

    run(scenario())


def test_a_cancelled_waiter_hands_its_seat_on():
    async def scenario():
        limiter = fairness.Limiter(FakeClock())
        level = fairness.PriorityLevel("l", per_flow=1, queue_length=5, queue_wait=10)
        held = await limiter.acquire(level, "u")
        gone, after = (asyncio.ensure_future(limiter.acquire(level, "u")) for _ in range(2))
        await settle()
        gone.cancel()
        held()
        await settle()
        after.result()()
        assert limiter.flows == {}

    run(scenario())


def test_exempt_requests_are_never_counted():
    async def scenario():
        limiter = fairness.Limiter(FakeClock())
        for _ in range(100):
            await limiter.acquire(fairness.PriorityLevel("exempt"), "admin")
        assert limiter.flows == {}

    run(scenario())


# --- the hub: one client floods, another is still served -------------------------------------------

def scope(address: str, path: str = "/version", query: str = "") -> dict:
    return {"type": "http", "method": "GET", "path": path, "query_string": query.encode(), "client": (address, 5000),
            "headers": [(b"user-agent", b"kubectl/v1.32.0"), (b"host", b"testserver")]}


async def call(scope_: dict, stuck: asyncio.Event | None = None) -> tuple[int, dict, bytes]:
    """One request; with `stuck`, its client reads nothing until the event is set (it holds its seat)."""
    sent: list[dict] = []

    async def receive():
        if not sent:
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()

    async def send(message):
        sent.append(message)
        if stuck is not None and sent[0]["status"] == 200:
            await stuck.wait()

    await hub_app(scope_, receive, send)
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.django_db(transaction=True)
def test_a_flooding_client_gets_429_while_another_is_served(settings):
    from control.api.app import shutdown, startup

    settings.KK_AUTHENTICATION = "off"
    settings.KK_FAIR_INFLIGHT_PER_USER, settings.KK_FAIR_QUEUE_LENGTH = 3, 2

    async def scenario():
        await startup()
        try:
            stuck = asyncio.Event()
            flood = [asyncio.ensure_future(call(scope("10.0.0.7"), stuck)) for _ in range(20)]
            await settle(200)
            refused = [f.result() for f in flood if f.done()]
            assert len(refused) == 20 - 3 - 2  # three seats, two waiting
            status, headers, body = refused[0]
            assert (status, headers["retry-after"]) == (429, "1")
            assert json.loads(body)["reason"] == "TooManyRequests"
            assert json.loads(body)["message"] == "Too many requests, please try again later."
            # a watch of the flooding client is long-running: it takes no seat and is served
            watching = asyncio.ensure_future(call(scope("10.0.0.7", path="/api/v1/namespaces", query="watch=1&timeoutSeconds=1")))
            for _ in range(5):  # another attendee is served throughout
                status, headers, _ = await call(scope("10.0.0.8"))
                assert status == 200 and "x-kubernetes-pf-flowschema-uid" in headers
            stuck.set()
            results = await asyncio.gather(*flood)
            assert sum(1 for r in results if r[0] == 200) == 5
            assert fairness.LIMITER.flows == {}
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        finally:
            await shutdown()

    run(scenario())

"""Every request through the hub leaves one traffic record naming its client."""

from __future__ import annotations

import json

import pytest

from control.api import traffic
from control.api.request import client_name
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("agent, name", [
    ("kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl"),
    ("kubectl-dispatcher/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl"),
    ("kube-scheduler/v1.32.0 (linux/amd64) kubernetes/abc/scheduler", "kube-scheduler"),
    ("kubelet/node-1 (kube-kitchen)", "kubelet/node-1"),
    ("OpenAPI-Generator/32.0.0/python", "python-client"),
    ("dashboard", "dashboard"),
    ("", "unknown"),
])
def test_client_names_from_user_agents(agent, name):
    assert client_name(agent) == name


def test_requests_are_recorded_with_verb_resource_code_and_latency():
    cluster_bootstrap()
    heard = []
    stop = traffic.listen(heard.append)
    try:
        api = ApiClient("kubelet/node-2 (kube-kitchen)")
        api.get("/api/v1/namespaces/default/pods")
        api.get("/api/v1/namespaces/default/pods/missing")
        api.get("/api/v1/nowhere")
    finally:
        stop()
        api.close()
    assert [(r["who"], r["verb"], r["resource"], r["code"]) for r in heard] == [
        ("kubelet/node-2", "list", "pods", 200),
        ("kubelet/node-2", "get", "pods", 404),
        ("kubelet/node-2", "get", "/api/v1/nowhere", 404),
    ]
    assert all(r["latency_ms"] >= 0 and r["type"] == "request" for r in heard)
    assert heard[1]["name"] == "missing" and heard[1]["namespace"] == "default"
    # a failed request carries what the dashboard names it by: path, Status reason and message
    assert (heard[1]["path"], heard[1]["reason"], heard[1]["dryRun"]) == ("/api/v1/namespaces/default/pods/missing", "NotFound", "")
    assert heard[1]["message"] == 'pods "missing" not found'
    assert "reason" not in heard[0] and "path" not in heard[0]  # a success stays small


def test_a_record_names_the_authenticated_user():
    from django.conf import settings

    from control.auth import tokenfile
    from control.auth.tokenfile import ADMIN

    cluster_bootstrap()
    heard = []
    stop = traffic.listen(heard.append)
    try:
        api, anonymous = ApiClient("kubectl/v1.32.4"), ApiClient("kubectl/v1.32.4", token="")
        alice = ApiClient("kubectl/v1.32.4", token=tokenfile.token_of(settings.DATA_DIR, "alice", ()))
        unknown = ApiClient("kubectl/v1.32.4", token="no-such-token")
        api.get("/api/v1/namespaces/default/pods")
        anonymous.get("/api/v1/namespaces/default/pods")
        alice.get("/api/v1/namespaces/default/pods")
        unknown.get("/api/v1/namespaces/default/pods")
    finally:
        stop()
        for client in (api, anonymous, alice, unknown):
            client.close()
    assert [(r["who"], r["code"], r["user"]) for r in heard] == [
        ("kubectl", 200, ADMIN),
        ("kubectl", 403, "system:anonymous"),  # refused, but authenticated (as anonymous, as upstream)
        ("kubectl · alice", 403, "alice"),  # RBAC refused her: her error is hers on the instructor's board
        ("kubectl", 401, ""),  # no one was authenticated
    ]


def test_a_failed_dry_run_is_marked_as_one():
    cluster_bootstrap()
    heard = []
    stop = traffic.listen(heard.append)
    try:
        api = ApiClient("kubectl/v1.32.4 (linux/amd64) kubernetes/abc")
        api.post("/api/v1/namespaces/default/configmaps?dryRun=All", '{"metadata": {"name": "Bad_Name"}}')
    finally:
        stop()
        api.close()
    [record] = heard
    assert (record["code"], record["reason"], record["dryRun"], record["verb"]) == (422, "Invalid", "All", "create")


@pytest.mark.parametrize("actor, user, groups, who", [
    ("kubectl", "alice", ("system:authenticated",), "kubectl · alice"),
    ("python-client", "alice", (), "python-client · alice"),
    ("kubectl", "kubernetes-admin", ("system:masters",), "kubectl"),  # the instructor's own
    ("kube-scheduler", "system:kube-scheduler", (), "kube-scheduler"),
    ("kubelet/node-1", "system:node:node-1", ("system:nodes",), "kubelet/node-1"),
    ("line-cook", "system:serviceaccount:kube-system:line-cook", (), "line-cook"),
    ("dashboard/alice", "alice", (), "dashboard/alice"),
    ("kubectl", "", (), "kubectl"),  # never authenticated
    ("kubectl · alice", "alice", (), "kubectl · alice"),  # already named
])
def test_a_persons_client_is_their_own_spoke(actor, user, groups, who):
    assert traffic.spoke_name(actor, user, groups) == who


def _recorded(settings, requests) -> list[dict]:
    from django.conf import settings as conf

    from control.auth import policystore, tokenfile

    settings.KK_AUTHENTICATION = "on"
    policystore.forget()
    cluster_bootstrap()
    heard: list[dict] = []
    stop = traffic.listen(heard.append)
    clients = {name: ApiClient("kubectl/v1.32.4 (linux/amd64) kubernetes/abc",
                               token=tokenfile.token_of(conf.DATA_DIR, name, groups))
               for name, groups in (("alice", ()), ("kubernetes-admin", ("system:masters",)))}
    try:
        requests(clients)
    finally:
        stop()
        for api in clients.values():
            api.close()
    return heard


def test_records_name_the_user_and_what_the_request_touches(settings):
    heard = _recorded(settings, lambda c: (c["alice"].get("/api/v1/namespaces/bob/pods/web"),
                                           c["alice"].get("/apis/apps/v1/deployments"),
                                           c["alice"].get("/version")))
    assert [(r["who"], r["user"], r["code"], r.get("scope")) for r in heard] == [
        # refused (403): still named by its user, and by the namespace it asked about
        ("kubectl · alice", "alice", 403, {"namespace": "bob", "group": "", "resource": "pods"}),
        ("kubectl · alice", "alice", 403, {"namespace": "", "group": "apps", "resource": "deployments"}),
        ("kubectl · alice", "alice", 200, None),  # not a Kubernetes resource: no scope
    ]


def test_an_impersonated_request_is_recorded_as_the_user_acted_as(settings):
    heard = _recorded(settings, lambda c: (
        c["kubernetes-admin"].get("/api/v1/namespaces/default/pods", HTTP_IMPERSONATE_USER="alice"),
        c["alice"].get("/api/v1/namespaces/default/pods", HTTP_IMPERSONATE_USER="kubernetes-admin")))
    assert [(r["who"], r["user"], r["code"]) for r in heard] == [
        ("kubectl · alice", "alice", 403),  # the admin acting as alice: alice's request, alice's refusal
        ("kubectl · alice", "alice", 403),  # alice may not impersonate: the refusal is hers
    ]


def test_watch_deliveries_are_summed_per_user_and_namespace(monkeypatch):
    from types import SimpleNamespace

    from control.auth.rbac import User

    published: list[dict] = []
    monkeypatch.setattr(traffic, "publish", published.append)
    monkeypatch.setattr(traffic, "_ensure_flusher", lambda: None)
    monkeypatch.setattr(traffic, "_deliveries", {})  # none left over from an earlier test's watches
    pods = SimpleNamespace(plural="pods", group="")
    alice = User("alice", groups=("system:authenticated",))
    traffic.delivered("kubectl", pods, 2, 10, alice, "alice")
    traffic.delivered("kubectl", pods, 3, 12, alice, "alice")
    traffic.delivered("kube-scheduler", pods, 1, 12, User("system:kube-scheduler"), "")
    traffic.delivered("dashboard/alice", SimpleNamespace(plural="changes", group="kubekitchen"), 4, 12, alice)
    traffic._drain_deliveries()
    assert [(r["who"], r["user"], r["count"], r["revision"], r.get("scope")) for r in published] == [
        ("kubectl · alice", "alice", 5, 12, {"namespace": "alice", "group": "", "resource": "pods"}),
        ("kube-scheduler", "system:kube-scheduler", 1, 12, {"namespace": "", "group": "", "resource": "pods"}),
        ("dashboard/alice", "alice", 4, 12, None),
    ]


def test_changes_are_by_the_persons_spoke_and_managed_by_the_client(settings):
    import json

    from control.storage import store

    def create(clients):
        admin, alice = clients["kubernetes-admin"], clients["alice"]
        assert admin.post("/api/v1/namespaces", json.dumps({"metadata": {"name": "alice"}})).status_code == 201
        binding = {"metadata": {"name": "alice-edit"}, "subjects": [{"kind": "User", "name": "alice"}],
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}}
        assert admin.post("/apis/rbac.authorization.k8s.io/v1/namespaces/alice/rolebindings",
                          json.dumps(binding)).status_code == 201
        made = alice.post("/api/v1/namespaces/alice/configmaps", json.dumps({"metadata": {"name": "menu"}}))
        assert made.status_code == 201, made.content
        patched = alice.patch("/api/v1/namespaces/alice/configmaps/menu", json.dumps({"data": {"soup": "1"}}),
                              "application/merge-patch+json")
        managers = [f["manager"] for f in json.loads(patched.content)["metadata"]["managedFields"]]
        assert managers == ["kubectl"]

    _recorded(settings, create)
    changes = [c for c in store.events_since(0) if c.resource == "/configmaps" and c.name == "menu"]
    assert [c.actor for c in changes] == ["kubectl · alice", "kubectl · alice"]  # created, then patched


def _stale_update(user_agent: str) -> dict:
    """A ConfigMap updated twice from the same read: the second write is answered 409 Conflict;
    returns its traffic record."""
    heard = []
    api = ApiClient(user_agent)
    try:
        created = api.post("/api/v1/namespaces/default/configmaps", '{"metadata": {"name": "slip"}, "data": {"a": "1"}}')
        body = json.loads(created.content)
        assert api.put("/api/v1/namespaces/default/configmaps/slip", json.dumps({**body, "data": {"a": "2"}})).status_code == 200
        stop = traffic.listen(heard.append)
        try:
            api.put("/api/v1/namespaces/default/configmaps/slip", json.dumps({**body, "data": {"a": "3"}}))
        finally:
            stop()
        api.delete("/api/v1/namespaces/default/configmaps/slip")
    finally:
        api.close()
    [record] = heard
    assert (record["code"], record["reason"]) == (409, "Conflict")
    return record


@pytest.mark.parametrize("agent", ["kube-controller-manager (kube-kitchen)", "kube-scheduler (kube-kitchen)",
                                   "kubelet/node-1 (kube-kitchen)", "line-cook (kube-kitchen)"])
def test_a_components_conflict_is_marked_retried(agent):
    cluster_bootstrap()
    assert _stale_update(agent)["retried"] is True


@pytest.mark.parametrize("agent", ["kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "dashboard", "python-client"])
def test_a_persons_conflict_is_a_failure_not_marked_retried(agent):
    cluster_bootstrap()
    assert "retried" not in _stale_update(agent)


def test_only_a_conflict_is_retried_not_another_409():
    assert traffic.retried_conflict("kube-scheduler", 409, {"reason": "Conflict"})
    assert not traffic.retried_conflict("kube-scheduler", 409, {"reason": "AlreadyExists"})
    assert not traffic.retried_conflict("kube-scheduler", 422, {"reason": "Conflict"})
    assert not traffic.retried_conflict("kubectl", 409, {"reason": "Conflict"})


def test_a_watch_answered_410_inside_its_stream_is_recorded_as_that_answer():
    from control import kinds as registry
    from control.api.request import Call
    from control.api.watch import watch
    from control.storage import store
    from control.storage.feed import get_feed

    cluster_bootstrap()
    api = ApiClient("kubectl/v1.32.4")
    for i in range(6):
        api.post("/api/v1/namespaces/default/configmaps", f'{{"metadata": {{"name": "c{i}"}}}}')
    through = store.log_compact(max_entries=2, max_age=10_000)
    kind = registry.by_resource("", "v1", "configmaps")
    heard = []

    async def read(query):
        (await get_feed()).drop_through(through)
        call = Call(method="GET", kind=kind, namespace="default", name="", subresource="", actor="kubectl",
                    query={"watch": "1", "resourceVersion": "1", "timeoutSeconds": "5", **query})
        stream = await watch(call)
        return b"".join([chunk async for chunk in stream.chunks])

    stop = traffic.listen(heard.append)
    try:
        api.runner.run(read({}))
        api.runner.run(read({"labelSelector": "app=web"}))
    finally:
        stop()
        api.close()
    expired = [r for r in heard if r.get("inStream")]
    assert len(expired) == 2
    for record in expired:
        assert (record["who"], record["verb"], record["resource"], record["namespace"]) == ("kubectl", "watch", "configmaps", "default")
        assert (record["code"], record["reason"]) == (410, "Expired")
        assert "too old" in record["message"]


def test_the_flusher_sleeps_only_while_records_wait(monkeypatch):
    """An idle hub is not woken 20 times a second: the flusher ends once nothing waits, and the
    next record starts it again."""
    import asyncio

    import channels.layers

    from control.clock import FakeClock

    sent: list[dict] = []

    class Layer:
        async def group_send(self, group, message):
            sent.append(message)

    fake = FakeClock()
    monkeypatch.setattr(traffic, "clock", fake)
    monkeypatch.setattr(channels.layers, "get_channel_layer", lambda: Layer())
    monkeypatch.setattr(traffic, "_pending", [])
    monkeypatch.setattr(traffic, "_deliveries", {})
    monkeypatch.setattr(traffic, "_flusher", None)

    async def scenario():
        traffic.publish({"type": "request", "who": "kubelet/node-1"})
        first = traffic._flusher
        await asyncio.sleep(0)  # the flusher starts and sleeps on the fake clock
        await fake.advance(0.05)
        assert [len(m["records"]) for m in sent] == [1]
        await fake.advance(0.05)
        assert first.done() and fake.pending() == 0  # no timer left while idle
        traffic.publish({"type": "request", "who": "kubelet/node-2"})
        assert traffic._flusher is not first and not traffic._flusher.done()
        await asyncio.sleep(0)
        await fake.advance(0.1)
        assert [len(m["records"]) for m in sent] == [1, 1] and traffic._flusher.done()
        # each batch names this process, and its records follow one another in `seq`
        assert {m["source"] for m in sent} == {traffic.SOURCE}
        assert sent[1]["records"][0]["seq"] == sent[0]["records"][0]["seq"] + 1

    asyncio.run(scenario())

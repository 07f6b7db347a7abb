"""Every request through the hub leaves one traffic record naming its client."""

from __future__ import annotations

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
        ("kubectl", 403, "alice"),  # RBAC refused her: her error is hers on the instructor's board
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

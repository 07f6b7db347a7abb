"""Workshop provisioning against a recording stand-in for the hub (httpx's MockTransport): each
attendee gets a namespace, a token, a RoleBinding to admin, the nodes view, a kubeconfig in their
namespace and a join code, and running it again changes nothing (the codes themselves:
tests/test_roster.py)."""

from __future__ import annotations

import json
import stat

import httpx
import pytest
import yaml

from control import roster, workshop
from control.auth import tokenfile


class Stored:
    def __init__(self):
        self.objects: dict[str, dict] = {}
        self.posts: list[str] = []
        self.refuse: str = ""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        key = f"{request.url.path}/{body['metadata']['name']}"
        self.posts.append(key)
        if self.refuse and self.refuse in key:
            return httpx.Response(403, json={"kind": "Status", "reason": "Forbidden", "message": "no", "code": 403})
        if key in self.objects:
            return httpx.Response(409, json={"kind": "Status", "reason": "AlreadyExists", "code": 409,
                                             "message": "already exists"})
        assert request.headers["authorization"] == "Bearer admin-token"
        self.objects[key] = body
        return httpx.Response(201, json=body)


@pytest.fixture
def hub():
    return Stored()


def provision(hub: Stored, data, names):
    return workshop.provision("http://127.0.0.1:9", data, names, admin="admin-token",
                              transport=httpx.MockTransport(hub))


def test_each_attendee_gets_a_namespace_an_admin_binding_a_kubeconfig_and_a_code(hub, tmp_path):
    codes = provision(hub, tmp_path, ["alice", "bob"])
    assert set(codes) == {"alice", "bob"} and len(set(codes.values())) == 2
    assert "/api/v1/namespaces/alice" in hub.objects
    binding = hub.objects["/apis/rbac.authorization.k8s.io/v1/namespaces/alice/rolebindings/workshop-admin"]
    assert binding["roleRef"]["name"] == "admin" and binding["subjects"][0]["name"] == "alice"
    nodes = hub.objects[f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{workshop.NODES_VIEW}"]
    assert nodes["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    crb = hub.objects[f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{workshop.NODES_VIEW}"]
    assert crb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": workshop.ATTENDEES}]
    entries = {e.user: e for e in tokenfile.ensure(tmp_path).values()}
    assert entries["alice"].groups == (workshop.ATTENDEES,)
    target = tmp_path / "workshop" / "alice.kubeconfig"
    config = yaml.safe_load(target.read_text())
    assert config["contexts"][0]["context"]["namespace"] == "alice"
    assert config["users"][0]["user"]["token"] == entries["alice"].token
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert roster.kubeconfig_of(tmp_path, "alice") == target.read_text()
    assert roster.kubeconfig_of(tmp_path, "../tokens") is None


def test_provisioning_again_changes_nothing(hub, tmp_path):
    first = provision(hub, tmp_path, ["alice"])
    tokens = (tmp_path / "tokens.csv").read_text()
    stored = dict(hub.objects)
    assert provision(hub, tmp_path, ["alice"]) == first
    assert (tmp_path / "tokens.csv").read_text() == tokens and hub.objects == stored


def test_a_refusal_names_the_object_and_the_hubs_message(hub, tmp_path):
    hub.refuse = "alice/rolebindings"
    with pytest.raises(workshop.WorkshopError, match="RoleBinding workshop-admin: 403 no"):
        provision(hub, tmp_path, ["alice"])


def test_each_namespace_gets_a_laptop_sized_quota_and_limits(hub, tmp_path):
    provision(hub, tmp_path, ["alice"])
    quota = hub.objects["/api/v1/namespaces/alice/resourcequotas/workshop"]
    assert quota["spec"]["hard"]["pods"] == "10"
    limits = hub.objects["/api/v1/namespaces/alice/limitranges/workshop"]
    assert limits["spec"]["limits"][0]["defaultRequest"] == {"cpu": "100m", "memory": "64Mi"}


def test_names_from_a_count_or_a_file():
    assert workshop.attendee_names(2) == ["attendee-1", "attendee-2"]
    assert workshop.read_names("alice\n# a comment\n\nbob  # late\nalice\n") == ["alice", "bob"]
    with pytest.raises(workshop.WorkshopError, match="Bad_Name, kube-x"):
        workshop.read_names("Bad_Name\nkube-x\nok\n")
    with pytest.raises(workshop.WorkshopError):
        workshop.attendee_names(0)


def test_a_hub_on_every_address_gives_attendees_the_machines_address(tmp_path, monkeypatch):
    from control.serving import hosts
    from control.auth import serving

    monkeypatch.setattr(hosts, "machine_names", lambda: ["kitchen-laptop", "192.168.1.20"])
    serving.advertise(tmp_path, "http://0.0.0.0:8000", "https://0.0.0.0:8001")
    assert workshop.kubectl_server(tmp_path, "http://0.0.0.0:8000")[0] == "https://192.168.1.20:8001"
    assert workshop.kubectl_server(tmp_path, "http://127.0.0.1:9")[0] == "http://127.0.0.1:9"
    assert {"192.168.1.20", "kitchen-laptop"} <= set(serving._names(["0.0.0.0"]))
    assert "192.168.1.20" not in serving._names(["127.0.0.1"])

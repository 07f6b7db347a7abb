"""The bootstrap: system namespaces after migrate, and the `default/kubernetes` Service with its
Endpoints as kube-apiserver's kubernetesservice controller keeps them."""

from __future__ import annotations

import json
from concurrent.futures import Future

import pytest
from django.db import connections

from control import bootstrap
from control.kinds import service_addresses
from control.kinds.network import service_cidr
from control.clock import FakeClock
from control.client.resources import ENDPOINTS, PODS, SERVICES
from control.controllers.endpoints import EndpointsController
from control.storage import store
from control.storage.db import submit
from tests.api.client import ApiClient
from tests.controllers.fakes import START, FakeClient, fill, informers, pod, run

pytestmark = pytest.mark.django_db(transaction=True)

SVC = "/api/v1/namespaces/default/services/kubernetes"
EPS = "/api/v1/namespaces/default/endpoints/kubernetes"
NOW = 1_800_000_000.0


@pytest.fixture
def api():
    bootstrap.cluster_bootstrap()
    client = ApiClient()
    yield client
    client.close()
    submit(connections.close_all).result()  # the hub's database thread keeps a connection


def at_once(fn, *args) -> Future:
    """A `submit` that runs the call in the caller's thread (the tests' database connection)."""
    future: Future = Future()
    try:
        future.set_result(fn(*args))
    except Exception as exc:
        future.set_exception(exc)
    return future


def stored(resource: str) -> dict:
    return store.object_get(resource=resource, namespace="default", name="kubernetes")


def test_the_system_namespaces_exist_and_a_second_bootstrap_changes_nothing(api):
    before = store.current_revision()
    bootstrap.cluster_bootstrap()
    assert store.current_revision() == before
    names = {json.loads(b)["metadata"]["name"] for b in store.object_list(resource="/namespaces")[0]}
    assert set(bootstrap.SYSTEM_NAMESPACES) <= names


def test_the_kubernetes_service_is_the_first_address_of_the_range_on_443_to_the_hub(api):
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW)
    answer = api.get(SVC)
    assert answer.status_code == 200
    svc = json.loads(answer.content)
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    spec = svc["spec"]
    assert spec["clusterIP"] == "10.96.0.1" == str(service_cidr().network_address + 1)
    assert spec["clusterIPs"] == ["10.96.0.1"] and spec["type"] == "ClusterIP" and "selector" not in spec
    assert spec["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 8123}]
    assert (spec["sessionAffinity"], spec["ipFamilyPolicy"]) == ("None", "SingleStack")
    eps = json.loads(api.get(EPS).content)
    assert eps["subsets"] == [{"addresses": [{"ip": "192.0.2.10"}],
                               "ports": [{"name": "https", "port": 8123, "protocol": "TCP"}]}]
    assert eps["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}


def test_its_address_is_reserved_so_no_user_service_can_take_it(api):
    """The reservation in kinds.service_addresses is for exactly this Service: the bootstrap writes it
    through the store (as it writes the namespaces), so the reservation never stands in its way,
    and a user asking for the address is refused either way."""
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW)
    assert "10.96.0.1" in service_addresses.reserved_ips(service_cidr())
    assert stored("/services")["spec"]["clusterIP"] == "10.96.0.1"
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "thief"},
            "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}
    answer = api.post("/api/v1/namespaces/default/services", data=json.dumps(body))
    assert answer.status_code == 422
    assert "provided IP is already allocated" in json.loads(answer.content)["message"]


def test_a_pass_that_finds_everything_in_place_writes_nothing(api):
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW)
    before = store.current_revision()
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW + 10)
    assert store.current_revision() == before


def test_deleted_service_and_endpoints_come_back_at_the_next_pass(api):
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW)
    assert api.delete(SVC).status_code == 200
    assert api.delete(EPS).status_code == 200
    assert api.get(SVC).status_code == 404
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW + 10)
    assert json.loads(api.get(SVC).content)["spec"]["clusterIP"] == "10.96.0.1"
    assert json.loads(api.get(EPS).content)["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]


def test_an_edited_service_is_not_reset_but_the_endpoints_are(api):
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW)
    store.object_update(resource="/services", namespace="default", name="kubernetes", actor="kubectl",
                        mutate=lambda svc: {**svc, "metadata": {**svc["metadata"], "labels": {"mine": "yes"}}})
    store.object_update(resource="/endpoints", namespace="default", name="kubernetes", actor="kubectl",
                        mutate=lambda eps: {**eps, "subsets": []})
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8123, NOW + 10)
    assert stored("/services")["metadata"]["labels"] == {"mine": "yes"}, "upstream creates, never resets, since 1.17"
    assert stored("/endpoints")["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]


def test_several_hubs_share_the_endpoints_and_a_stopping_one_leaves_the_others():
    store.ensure_counter()
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8001, NOW)
    bootstrap.ensure_kubernetes_service("192.0.2.9", 8001, NOW)
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8002, NOW)
    assert stored("/endpoints")["subsets"] == [
        {"addresses": [{"ip": "192.0.2.9"}, {"ip": "192.0.2.10"}], "ports": [{"name": "https", "port": 8001, "protocol": "TCP"}]},
        {"addresses": [{"ip": "192.0.2.10"}], "ports": [{"name": "https", "port": 8002, "protocol": "TCP"}]}]
    assert stored("/services")["spec"]["ports"][0]["targetPort"] == 8001, "the first hub's port"
    bootstrap.forget_hub("192.0.2.10", 8001)
    bootstrap.forget_hub("192.0.2.10", 8002)
    assert stored("/endpoints")["subsets"] == [
        {"addresses": [{"ip": "192.0.2.9"}], "ports": [{"name": "https", "port": 8001, "protocol": "TCP"}]}]


def test_endpoints_another_hub_created_meanwhile_get_this_hubs_address_too(monkeypatch):
    store.ensure_counter()
    bootstrap.ensure_kubernetes_service("192.0.2.9", 8001, NOW)
    real_update, misses = store.object_update, []

    def update_missing_once(**kwargs):
        if not misses:  # as if the other hub's create had not committed yet when this pass looked
            misses.append(kwargs["name"])
            raise bootstrap.errors.not_found(kwargs["resource"], kwargs["name"])
        return real_update(**kwargs)

    monkeypatch.setattr(store, "object_update", update_missing_once)
    bootstrap.ensure_kubernetes_service("192.0.2.10", 8001, NOW)
    assert misses == ["kubernetes"]
    assert stored("/endpoints")["subsets"][0]["addresses"] == [{"ip": "192.0.2.9"}, {"ip": "192.0.2.10"}]


def test_the_keeper_makes_a_pass_at_start_and_removes_its_hub_when_stopped():
    store.ensure_counter()
    keeper = bootstrap.KubernetesServiceKeeper("192.0.2.10", 8123, submit=at_once, interval=3600,
                                               clock=FakeClock(NOW))
    keeper.start()
    keeper.stop()
    assert stored("/services")["spec"]["clusterIP"] == "10.96.0.1"
    assert stored("/endpoints")["subsets"] == [], "the stopped hub took its address away"


def test_a_failing_pass_is_logged_and_does_not_end_the_keeper(caplog):
    def broken(fn, *args) -> Future:
        future: Future = Future()
        future.set_exception(RuntimeError("database gone"))
        return future

    keeper = bootstrap.KubernetesServiceKeeper("192.0.2.10", 8123, submit=broken, interval=3600)
    keeper.pass_once()
    keeper.stop()
    assert "database gone" in caplog.text


def test_the_endpoints_controller_leaves_the_kubernetes_endpoints_alone():
    svc = bootstrap.kubernetes_service(8123, NOW)
    eps = bootstrap.kubernetes_endpoints("192.0.2.10", 8123, NOW)
    client, shared = FakeClient(), informers()
    controller = EndpointsController(client, shared.get(SERVICES), shared.get(PODS), shared.get(ENDPOINTS),
                                     clock=FakeClock(START))
    fill(shared.get(SERVICES), svc)
    fill(shared.get(ENDPOINTS), eps)
    fill(shared.get(PODS), pod("stray", ready=True, ip="10.0.0.2"))
    run(controller.reconcile("default/kubernetes"))
    assert client.summary() == [], "a Service without selector: its Endpoints are not the controller's"


def test_the_advertised_address_is_the_bind_address_or_a_real_one_for_all_interfaces():
    assert bootstrap.advertise_address("127.0.0.1") == "127.0.0.1"
    assert bootstrap.advertise_address("192.0.2.7") == "192.0.2.7"
    assert bootstrap.advertise_address("localhost") == "127.0.0.1"
    chosen = bootstrap.advertise_address("0.0.0.0")
    assert chosen != "0.0.0.0" and chosen.count(".") == 3

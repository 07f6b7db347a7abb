"""The restaurant on a real hub: the kinds installed over HTTP, both cooks as separate spokes.

An order of 2 becomes 2 garnished dishes; a dropped dish is cooked again (the slip goes back to
cooked 1, then 2, then Garnished); 2→3 and 3→1 are followed; a deleted order takes its dishes.
"""

from __future__ import annotations

import json

import httpx
import pytest

from control.restaurant.install import install_crds
from control.restaurant.manifests import DISHES, ORDER_LABEL, ORDERS, order
from tests.conftest import Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def kitchen():
    hub = Hub({"KK_PACE": "workshop"}).start()
    cooks = []
    try:
        install_crds(hub.url, token=hub.token)
        # The controller-manager's garbage collector takes a deleted order's dishes away.
        cooks = [Spoke(hub, "line-cook").start(), Spoke(hub, "garnish-cook").start(),
                 Spoke(hub, "controller-manager").start()]
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            yield hub, client
    finally:
        for cook in cooks:
            cook.stop()
        hub.stop()


def get_order(client: httpx.Client, name: str) -> dict:
    return client.get(ORDERS.path("default", name)).json()


def dishes_of(client: httpx.Client, name: str) -> list[dict]:
    return client.get(DISHES.path("default"), params={"labelSelector": f"{ORDER_LABEL}={name}"}).json()["items"]


def served(client: httpx.Client, name: str, count: int):
    """The slip says Garnished with `count` cooked and garnished, and exactly that many garnished dishes exist."""
    status = get_order(client, name).get("status") or {}
    dishes = dishes_of(client, name)
    ok = (status.get("phase") == "Garnished" and status.get("cooked") == count and status.get("garnished") == count
          and len(dishes) == count and all((d.get("status") or {}).get("garnished") for d in dishes))
    return dishes if ok else None


def place(client: httpx.Client, name: str, count: int) -> dict:
    response = client.post(ORDERS.path("default"), json=order(name, count=count))
    assert response.status_code == 201, response.text
    return response.json()


def test_an_order_of_two_pastas_is_cooked_and_garnished(kitchen):
    hub, client = kitchen
    slip = place(client, "table-1", 2)
    dishes = wait_for(lambda: served(client, "table-1", 2), timeout=20, what="two garnished pastas")
    for dish in dishes:
        assert dish["metadata"]["name"].startswith("table-1-")
        assert dish["spec"] == {"menu": "pasta", "order": "table-1"}
        (owner,) = dish["metadata"]["ownerReferences"]
        assert owner["uid"] == slip["metadata"]["uid"] and owner["controller"] is True
    assert get_order(client, "table-1")["status"]["observedGeneration"] == 1


def test_a_dropped_dish_is_cooked_again_and_the_slip_shows_it(kitchen):
    hub, client = kitchen
    place(client, "table-2", 2)
    before = wait_for(lambda: served(client, "table-2", 2), timeout=20, what="table-2 served")
    since = get_order(client, "table-2")["metadata"]["resourceVersion"]
    dropped = before[0]["metadata"]["name"]
    assert client.delete(DISHES.path("default", dropped)).status_code == 200
    after = wait_for(lambda: served(client, "table-2", 2), timeout=20, what="table-2 served again")
    assert dropped not in {d["metadata"]["name"] for d in after}
    # The slip's history since the drop, from a watch: cooked went down to 1 and came back.
    params = {"watch": "1", "resourceVersion": since, "timeoutSeconds": "1", "fieldSelector": "metadata.name=table-2"}
    history = []
    with client.stream("GET", ORDERS.path("default"), params=params) as stream:
        for line in stream.iter_lines():
            if line.strip():
                event = json.loads(line)
                if event["type"] == "MODIFIED":
                    status = event["object"].get("status") or {}
                    history.append((status.get("cooked"), status.get("garnished"), status.get("phase")))
    # The line cook writes what it sees before it cooks again, so "cooked 1" is always on the slip.
    assert any(cooked == 1 and phase == "Cooking" for cooked, _, phase in history), history
    assert history[-1] == (2, 2, "Garnished"), history


def test_more_and_fewer_on_the_slip(kitchen):
    hub, client = kitchen
    place(client, "table-3", 2)
    wait_for(lambda: served(client, "table-3", 2), timeout=20, what="table-3 served 2")
    merge = {"Content-Type": "application/merge-patch+json"}
    client.patch(ORDERS.path("default", "table-3"), content=json.dumps({"spec": {"count": 3}}), headers=merge)
    wait_for(lambda: served(client, "table-3", 3), timeout=20, what="table-3 served 3")
    client.patch(ORDERS.path("default", "table-3"), content=json.dumps({"spec": {"count": 1}}), headers=merge)
    wait_for(lambda: served(client, "table-3", 1), timeout=20, what="table-3 served 1")
    assert get_order(client, "table-3")["status"]["observedGeneration"] == 3


def test_a_deleted_order_takes_its_dishes(kitchen):
    hub, client = kitchen
    place(client, "table-4", 2)
    wait_for(lambda: served(client, "table-4", 2), timeout=20, what="table-4 served")
    assert client.delete(ORDERS.path("default", "table-4")).status_code == 200
    wait_for(lambda: dishes_of(client, "table-4") == [], timeout=20, what="table-4's dishes gone")
    # Foreground: the slip stays (with a deletionTimestamp) until its dishes are gone, then goes.
    place(client, "table-8", 2)
    wait_for(lambda: served(client, "table-8", 2), timeout=20, what="table-8 served")
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}
    assert client.request("DELETE", ORDERS.path("default", "table-8"), json=options).status_code in (200, 202)
    wait_for(lambda: client.get(ORDERS.path("default", "table-8")).status_code == 404, timeout=20,
             what="table-8 gone after its dishes")
    assert dishes_of(client, "table-8") == []


def test_kubectl_shows_the_slip_and_the_hub_refuses_a_bad_one(kitchen):
    hub, client = kitchen
    place(client, "table-5", 1)
    wait_for(lambda: served(client, "table-5", 1), timeout=20, what="table-5 served")
    table = hub.kubectl("get", "ord", "table-5").stdout.split("\n")
    assert table[0].split() == ["NAME", "MENU", "COUNT", "COOKED", "GARNISHED", "AGE"]
    assert table[1].split()[:5] == ["table-5", "pasta", "1", "1", "1"]
    dishes = hub.kubectl("get", "dishes", "-l", f"{ORDER_LABEL}=table-5").stdout.split("\n")
    assert dishes[0].split() == ["NAME", "MENU", "ORDER", "GARNISHED", "AGE"]
    assert dishes[1].split()[1:4] == ["pasta", "table-5", "true"]
    assert "table-5" in hub.kubectl("get", "kitchen").stdout
    too_many = json.dumps(order("table-6", count=11))
    refused = hub.kubectl("create", "-f", "-", input=too_many, check=False)
    assert refused.returncode != 0 and "spec.count" in refused.stderr
    sushi = json.dumps(order("table-7", menu="sushi"))
    refused = hub.kubectl("create", "-f", "-", input=sushi, check=False)
    assert refused.returncode != 0 and "spec.menu" in refused.stderr

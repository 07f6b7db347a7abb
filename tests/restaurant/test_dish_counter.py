"""examples/dish_counter.py, run with one command against a real hub with both cooks: it keeps
`served: N/count` on every Order, follows a change of the slip, and the hub knows it by its name."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from control.restaurant.install import install_crds
from control.restaurant.manifests import DISHES, ORDER_LABEL, ORDERS, order
from tests.conftest import ROOT, Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e
SERVED = "kitchen.kubekitchen.dev/served"


def served(client: httpx.Client, name: str) -> str | None:
    return (client.get(ORDERS.path("default", name)).json()["metadata"].get("annotations") or {}).get(SERVED)


def test_the_dish_counter_joins_as_its_own_spoke_and_keeps_count():
    hub = Hub({"KK_PACE": "workshop"}).start()
    processes: list = []
    try:
        install_crds(hub.url, token=hub.token)
        processes += [Spoke(hub, "line-cook").start(), Spoke(hub, "garnish-cook").start()]
        counter = subprocess.Popen([sys.executable, "examples/dish_counter.py", "--server", hub.url], cwd=ROOT,
                                   env={**hub.env, "PYTHONPATH": str(ROOT)},  # this tree's control, not an installed one
                                   stdout=(hub.dir / "dish-counter.log").open("wb"), stderr=subprocess.STDOUT)
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            assert client.post(ORDERS.path("default"), json=order("table-9", count=2)).status_code == 201
            wait_for(lambda: served(client, "table-9") == "2/2", timeout=20, what="served 2/2")
            client.patch(ORDERS.path("default", "table-9"), content=b'{"spec": {"count": 3}}',
                         headers={"Content-Type": "application/merge-patch+json"})
            wait_for(lambda: served(client, "table-9") == "3/3", timeout=20, what="served 3/3")
            dishes = client.get(DISHES.path("default"), params={"labelSelector": f"{ORDER_LABEL}=table-9"}).json()
            assert len(dishes["items"]) == 3
            managers = {f["manager"] for f in client.get(ORDERS.path("default", "table-9")).json()["metadata"]["managedFields"]}
            assert "dish-counter" in managers  # the hub knows the new spoke by its User-Agent
        assert counter.poll() is None, (hub.dir / "dish-counter.log").read_text()
    finally:
        for process in processes:
            process.stop()
        if "counter" in locals():
            counter.terminate()
            counter.wait(timeout=10)
        hub.stop()
    assert "Traceback" not in (hub.dir / "dish-counter.log").read_text()

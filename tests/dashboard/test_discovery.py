"""Discovery as kubectl's RESTMapper reads it: the main resource of a kind (never a subresource),
its scope as listed, a cache per hub that is read again on a miss and forgets a group-version the
hub stopped serving, and no request for a group-version the hub does not list."""

from __future__ import annotations

import asyncio

from control.client.http import HubClient
from control.client.resources import Resource
from dashboard import discovery
from tests.dashboard.fakehub import FakeHub, running

MENUS = Resource("kitchen.kubekitchen.dev", "v1", "menus", "Menu", namespaced=False)


def test_kinds_come_from_discovery_with_their_scope_and_are_cached_per_hub():
    fake = FakeHub()
    fake.served.append(MENUS)

    async def scenario(url: str):
        client = HubClient(url, agent="dashboard (test)")
        try:
            found = await discovery.resource_for(client, "kitchen.kubekitchen.dev/v1", "Menu")
            assert found == MENUS and not found.namespaced
            deployments = await discovery.resource_for(client, "apps/v1", "Deployment")
            assert (deployments.plural, deployments.namespaced) == ("deployments", True)
            asked = len(fake.requests)
            assert await discovery.resource_for(client, "apps/v1", "Deployment") == deployments
            assert len(fake.requests) == asked  # cached

            fake.served.remove(MENUS)  # the CRD is deleted: a miss reads that group-version again
            assert await discovery.resource_for(client, "kitchen.kubekitchen.dev/v1", "Dish") is None
            assert discovery.for_hub(client).cached("kitchen.kubekitchen.dev/v1", "Menu") is None
            assert "/apis/kitchen.kubekitchen.dev/v1" not in [r.path for r in fake.requests[asked:]]
        finally:
            await client.close()

    with running(fake) as url:
        asyncio.run(scenario(url))


def test_subresources_are_never_mapped():
    body = {"resources": [{"name": "deployments/scale", "kind": "Scale", "namespaced": True},
                          {"name": "deployments/status", "kind": "Deployment", "namespaced": True},
                          {"name": "deployments", "kind": "Deployment", "namespaced": True}]}
    assert discovery._resources("apps", "v1", body) == {
        "Deployment": Resource("apps", "v1", "deployments", "Deployment", namespaced=True)}


def test_callers_missing_one_group_version_at_once_share_one_reading():
    fake = FakeHub()

    async def scenario(url: str):
        client = HubClient(url, agent="dashboard (test)")
        try:
            found = await asyncio.gather(*(discovery.resource_for(client, "v1", kind)
                                           for kind in ("ConfigMap", "Secret", "Pod", "ConfigMap")))
            assert [r.plural for r in found] == ["configmaps", "secrets", "pods", "configmaps"]
        finally:
            await client.close()

    with running(fake) as url:
        asyncio.run(scenario(url))
    assert [r.path for r in fake.requests] == ["/api", "/api/v1"]

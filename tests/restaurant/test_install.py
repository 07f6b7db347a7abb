"""The installer against a scripted hub: creates what is missing, leaves what exists, waits for
Established, reports a refusal with the hub's message. The manifests are complete CRDs."""

import json

import httpx
import pytest

from control.restaurant.install import CRD_PATH, InstallError, install_crds
from control.restaurant.manifests import CRDS, DISH_CRD, ORDER_CRD


class ScriptedHub:
    def __init__(self, existing=(), establish_after=1, refuse=None):
        self.crds = {name: {"metadata": {"name": name}, "status": {}} for name in existing}
        self.gets = {}
        self.establish_after, self.refuse = establish_after, refuse
        self.posted = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            body = json.loads(request.content)
            name = body["metadata"]["name"]
            self.posted.append(name)
            if self.refuse:
                return httpx.Response(422, json={"kind": "Status", "message": self.refuse, "reason": "Invalid"})
            if name in self.crds:
                return httpx.Response(409, json={"kind": "Status", "reason": "AlreadyExists"})
            self.crds[name] = {**body, "status": {}}
            return httpx.Response(201, json=body)
        name = request.url.path.rsplit("/", 1)[-1]
        self.gets[name] = self.gets.get(name, 0) + 1
        crd = self.crds[name]
        if self.gets[name] >= self.establish_after:
            crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
        return httpx.Response(200, json=crd)


def test_missing_definitions_are_created_and_waited_for():
    hub = ScriptedHub(establish_after=3)
    names = install_crds("http://hub", transport=httpx.MockTransport(hub))
    assert names == ["orders.kitchen.kubekitchen.dev", "dishes.kitchen.kubekitchen.dev"]
    assert hub.crds["orders.kitchen.kubekitchen.dev"]["spec"]["group"] == "kitchen.kubekitchen.dev"
    assert hub.gets == {name: 3 for name in names}


def test_an_existing_definition_is_left_as_it_is():
    hub = ScriptedHub(existing=["orders.kitchen.kubekitchen.dev"])
    install_crds("http://hub", transport=httpx.MockTransport(hub))
    assert "spec" not in hub.crds["orders.kitchen.kubekitchen.dev"]  # not replaced


def test_a_refusal_names_the_definition_and_the_hubs_reason():
    hub = ScriptedHub(refuse="spec.versions: Required value")
    with pytest.raises(InstallError, match="orders.kitchen.kubekitchen.dev.*Required value"):
        install_crds("http://hub", transport=httpx.MockTransport(hub))


def test_never_established_is_an_error_after_the_timeout():
    hub = ScriptedHub(establish_after=10**9)
    with pytest.raises(InstallError, match="not Established"):
        install_crds("http://hub", timeout=0.2, transport=httpx.MockTransport(hub))


def test_an_unreachable_hub_is_an_install_error():
    def refuse(request):
        raise httpx.ConnectError("connection refused")
    with pytest.raises(InstallError, match="cannot reach"):
        install_crds("http://hub", transport=httpx.MockTransport(refuse))


def test_the_manifests_are_structural_and_carry_columns_names_and_status():
    assert CRD_PATH.endswith("/customresourcedefinitions")
    for crd, short, columns in ((ORDER_CRD, "ord", ["Menu", "Count", "Cooked", "Garnished", "Phase", "Age"]),
                                (DISH_CRD, "dsh", ["Menu", "Order", "Garnished", "Age"])):
        spec = crd["spec"]
        assert spec["scope"] == "Namespaced" and spec["names"]["shortNames"] == [short]
        assert spec["names"]["categories"] == ["kitchen"]
        (version,) = spec["versions"]
        assert version["subresources"] == {"status": {}}
        assert [c["name"] for c in version["additionalPrinterColumns"]] == columns
        schema = version["schema"]["openAPIV3Schema"]
        assert schema["type"] == "object" and schema["properties"]["spec"]["type"] == "object"
    count = ORDER_CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["count"]
    assert (count["minimum"], count["maximum"]) == (1, 10)
    assert len(CRDS) == 2


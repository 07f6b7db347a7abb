"""The CustomResourceDefinition kind itself: Kubernetes' validation of definitions, names already in
use, several versions over one store, cluster scope, defaults on read, and serving in a hub
process that did not make the change (it follows the change feed)."""

from __future__ import annotations

import copy
import time

import pytest

from control import kinds as registry
from control.storage import store
from control.api import crds
from tests.api.test_crd import CRDS, ORDERS, order, order_crd, send

pytestmark = pytest.mark.django_db(transaction=True)


def causes_of(answer: dict) -> dict[str, str]:
    return {c["field"]: c["message"] for c in answer["details"]["causes"]}


@pytest.mark.parametrize("change, field, message", [
    (lambda c: c["metadata"].update(name="dishes.kitchen.example.com"), "metadata.name",
     'Invalid value: "dishes.kitchen.example.com": must be spec.names.plural+"."+spec.group'),
    (lambda c: c["spec"].update(scope="Global"), "spec.scope",
     'Unsupported value: "Global": supported values: "Cluster", "Namespaced"'),
    (lambda c: c["spec"]["versions"].append({**copy.deepcopy(c["spec"]["versions"][0]), "name": "v2"}),
     "spec.versions", "Invalid value: []apiextensions.CustomResourceDefinitionVersion{v1, v2}: must have exactly "
     "one version marked as storage version"),
    (lambda c: c["spec"]["versions"][0].pop("schema"), "spec.versions[0].schema.openAPIV3Schema",
     "Required value: schemas are required"),
    (lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(type="string"),
     "spec.versions[0].schema.openAPIV3Schema.type", 'Invalid value: "string": must be object at the root'),
    (lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].update(
        loose={"description": "no type"}),
     "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[loose].type",
     "Required value: must not be empty for specified object fields"),
    (lambda c: c["spec"]["names"].pop("kind"), "spec.names.kind", "Required value"),
    (lambda c: c["spec"]["versions"][0]["additionalPrinterColumns"][0].update(type="color"),
     "spec.versions[0].additionalPrinterColumns[0].type",
     'Unsupported value: "color": supported values: "boolean", "date", "integer", "number", "string"'),
    (lambda c: c["spec"]["versions"][0]["subresources"]["scale"].update(specReplicasPath=".status.x"),
     "spec.versions[0].subresources.scale.specReplicasPath", 'Invalid value: ".status.x": should be a json path under .spec'),
    (lambda c: c["spec"].update(group="example"), "spec.group", 'Invalid value: "example": should be a domain with at least one dot'),
])
def test_broken_definitions_are_refused_with_causes(api, change, field, message):
    crd = order_crd()
    change(crd)
    code, answer = send(api, "POST", CRDS, crd)
    assert code == 422, answer
    assert causes_of(answer)[field] == message
    assert send(api, "GET", CRDS)[1]["items"] == []


def test_definition_with_a_wrong_type_is_400_and_unknown_fields_strict(api):
    crd = order_crd()
    crd["spec"]["versions"][0]["served"] = "yes"
    code, answer = send(api, "POST", CRDS, crd)
    assert code == 400 and "cannot unmarshal string" in answer["message"]
    crd = order_crd()
    crd["spec"]["names"]["colour"] = "red"
    code, answer = send(api, "POST", CRDS, crd)
    assert code == 400 and 'unknown field "spec.names.colour"' in answer["message"]


def test_a_name_in_use_is_not_accepted_and_not_served(api):
    assert send(api, "POST", CRDS, order_crd())[0] == 201
    rival = order_crd()
    rival["metadata"]["name"] = "tickets.kitchen.example.com"
    rival["spec"]["names"] = {"plural": "tickets", "kind": "Ticket", "shortNames": ["ord"]}
    code, created = send(api, "POST", CRDS, rival)
    assert code == 201
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in created["status"]["conditions"]}
    assert conditions["NamesAccepted"] == ("False", "NameConflict", '"ord" is already in use')
    assert conditions["Established"][0] == "False"
    assert send(api, "GET", "/apis/kitchen.example.com/v1/namespaces/default/tickets")[0] == 404
    rival = created
    rival["spec"]["names"]["shortNames"] = ["tk"]
    code, updated = send(api, "PUT", f"{CRDS}/tickets.kitchen.example.com", rival)
    assert code == 200 and {c["type"]: c["status"] for c in updated["status"]["conditions"]}["Established"] == "True"
    assert send(api, "GET", "/apis/kitchen.example.com/v1/namespaces/default/tickets")[0] == 200


def test_a_built_in_group_cannot_be_taken(api):
    crd = order_crd(group="apps")
    crd["metadata"]["name"] = "deployments.apps"
    crd["spec"]["names"] = {"plural": "deployments", "kind": "Deployment"}
    code, answer = send(api, "POST", CRDS, crd)
    assert code == 422 and "spec.group" in causes_of(answer)


def test_group_and_scope_are_immutable_and_unknown_versions_are_404(api):
    code, crd = send(api, "POST", CRDS, order_crd())
    crd["spec"]["scope"] = "Cluster"
    code, answer = send(api, "PUT", f"{CRDS}/orders.kitchen.example.com", crd)
    assert code == 422 and causes_of(answer)["spec.scope"] == 'Invalid value: "Cluster": field is immutable'
    assert send(api, "GET", "/apis/kitchen.example.com/v9/namespaces/default/orders")[0] == 404
    assert send(api, "GET", "/apis/kitchen.example.com/v1/orders/o1/nope")[0] == 404


def test_two_versions_share_one_store_and_answer_in_their_own_version(api):
    crd = order_crd()
    v2 = copy.deepcopy(crd["spec"]["versions"][0])
    v2.update(name="v2", storage=False)
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["count"]["default"] = 2
    crd["spec"]["versions"].append(v2)
    assert send(api, "POST", CRDS, crd)[0] == 201
    code, created = send(api, "POST", "/apis/kitchen.example.com/v2/namespaces/default/orders",
                         {**order(), "apiVersion": "kitchen.example.com/v2"})
    assert code == 201 and created["apiVersion"] == "kitchen.example.com/v2" and created["spec"]["count"] == 2
    code, as_v1 = send(api, "GET", f"{ORDERS}/o1")
    assert code == 200 and as_v1["apiVersion"] == "kitchen.example.com/v1"
    code, listed = send(api, "GET", "/apis/kitchen.example.com/v2/namespaces/default/orders")
    assert listed["apiVersion"] == "kitchen.example.com/v2" and listed["items"][0]["apiVersion"] == "kitchen.example.com/v2"
    code, groups = send(api, "GET", "/apis/kitchen.example.com")
    assert [v["version"] for v in groups["versions"]] == ["v2", "v1"] and groups["preferredVersion"]["version"] == "v2"


def test_cluster_scoped_kind(api):
    crd = order_crd(scope="Cluster")
    assert send(api, "POST", CRDS, crd)[0] == 201
    code, created = send(api, "POST", "/apis/kitchen.example.com/v1/orders", order())
    assert code == 201 and "namespace" not in created["metadata"]
    assert send(api, "GET", ORDERS)[0] == 404  # not served under a namespace
    assert send(api, "GET", "/apis/kitchen.example.com/v1/orders/o1")[0] == 200


def test_defaults_added_to_the_schema_later_show_on_read(api):
    code, crd = send(api, "POST", CRDS, order_crd())
    send(api, "POST", ORDERS, order())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["table"]["default"] = "t0"
    assert send(api, "PUT", f"{CRDS}/orders.kitchen.example.com", crd)[0] == 200
    code, got = send(api, "GET", f"{ORDERS}/o1")
    assert got["spec"]["table"] == "t0"


def test_a_change_committed_by_another_process_is_served_from_the_feed(api):
    send(api, "GET", "/api/v1/namespaces")  # this loop's feed and follower start
    store._listeners.remove(crds._committed)  # now only the change feed tells this process
    try:
        code, _ = send(api, "POST", CRDS, order_crd())
        assert code == 201
        deadline = time.monotonic() + 5
        while registry.by_resource("kitchen.example.com", "v1", "orders") is None and time.monotonic() < deadline:
            api.runner.run(_pause())
        assert send(api, "GET", ORDERS)[0] == 200
    finally:
        store.subscribe(crds._committed)


async def _pause() -> None:
    import asyncio

    await asyncio.sleep(0.02)


def test_a_custom_kind_named_like_a_built_in_one_gets_no_built_in_rules(api):
    crd = order_crd()
    crd["metadata"]["name"] = "pods.kitchen.example.com"
    crd["spec"]["names"] = {"plural": "pods", "kind": "Pod"}
    assert send(api, "POST", CRDS, crd)[0] == 201
    pods = "/apis/kitchen.example.com/v1/namespaces/default/pods"
    code, created = send(api, "POST", pods, {**order(), "apiVersion": "kitchen.example.com/v1", "kind": "Pod"})
    assert code == 201 and "status" not in created  # no phase: Pending
    code, gone = send(api, "DELETE", f"{pods}/o1")
    assert code == 200 and gone["kind"] == "Status"  # deleted at once, no grace period
    assert send(api, "PUT", f"{pods}/o2", {**order("o2"), "apiVersion": "kitchen.example.com/v1", "kind": "Pod"})[0] == 404


def test_definition_patched_strategically_like_kubectl_apply_does(api):
    assert send(api, "POST", CRDS, order_crd())[0] == 201
    patch = {"spec": {"names": {"shortNames": ["ord", "o"]}}}
    code, patched = send(api, "PATCH", f"{CRDS}/orders.kitchen.example.com", patch,
                         "application/strategic-merge-patch+json")
    assert code == 200 and patched["status"]["acceptedNames"]["shortNames"] == ["ord", "o"]
    code, resources = send(api, "GET", "/apis/kitchen.example.com/v1")
    assert resources["resources"][0]["shortNames"] == ["ord", "o"]
    assert patched["metadata"]["generation"] == 2

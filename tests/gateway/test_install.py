"""The Gateway API's objects at start against a scripted hub: each created when missing, an
existing one left as it is, a refusal reported with the hub's message, an unreachable hub too."""

from __future__ import annotations

import json

import httpx

from control.gateway.install import install_objects
from control.gateway.manifests import AGGREGATION_ROLES, CLASS_NAME, CONTROLLER, GATEWAY_CLASS


def test_missing_objects_are_created_existing_ones_left():
    posted = []

    def hub(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        posted.append((request.url.path, body["metadata"]["name"]))
        assert request.headers["authorization"] == "Bearer t"
        if body["kind"] == "GatewayClass":
            return httpx.Response(409, json={"kind": "Status", "reason": "AlreadyExists", "code": 409})
        return httpx.Response(201, json=body)

    assert install_objects("http://hub", "t", transport=httpx.MockTransport(hub)) == []
    assert posted == [("/apis/rbac.authorization.k8s.io/v1/clusterroles", "gateway.networking.k8s.io:aggregate-to-view"),
                      ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "gateway.networking.k8s.io:aggregate-to-edit"),
                      ("/apis/gateway.networking.k8s.io/v1/gatewayclasses", CLASS_NAME)]
    assert GATEWAY_CLASS["spec"]["controllerName"] == CONTROLLER
    assert AGGREGATION_ROLES[0]["metadata"]["labels"] == {f"rbac.authorization.k8s.io/aggregate-to-{r}": "true"
                                                         for r in ("view", "edit", "admin")}


def test_refusals_and_an_unreachable_hub_are_reported():
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"kind": "Status", "reason": "Forbidden", "code": 403, "message": "no"})

    problems = install_objects("http://hub", "t", transport=httpx.MockTransport(refuse))
    assert len(problems) == 3 and problems[-1] == f"GatewayClass {CLASS_NAME}: 403 no"

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    assert install_objects("http://hub", "t", transport=httpx.MockTransport(down))[0].startswith("cannot reach")

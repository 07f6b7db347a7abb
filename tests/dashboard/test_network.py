"""The traffic form and a node's kube-proxy table, through Django's test client against a fake hub:
one POST of the hub's traffic stream per form, summed up per pod; the table as coloured lines;
bad forms refused before any request; the hub's refusals shown with their code."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.dashboard.fakehub import status

TRAFFIC = ("POST", "/kubekitchen/traffic")
RULES = ("GET", "/kubekitchen/proxyrules")
NDJSON = "application/x-ndjson"


def answer(seq: int, pod: str | None, code: int = 200) -> dict:
    line = {"seq": seq, "from": "node-1", "target": "pasta", "service": "default/pasta", "clusterIP": "10.96.0.12",
            "endpoint": "10.244.2.3:80" if pod else "", "pod": pod or "", "podNode": "node-2", "code": code}
    return line if pod else {**line, "error": "no endpoints"}


@pytest.fixture
def client():
    return Client()


def test_traffic_is_one_post_to_the_hub_and_the_answers_are_summed_per_pod(fake, client):
    lines = [answer(0, "pasta-a"), answer(1, "pasta-b"), answer(2, "pasta-a"), answer(3, None, 503),
             {"done": True, "sent": 4, "answered": {"pasta-a": 2, "pasta-b": 1}, "failed": 1}]
    fake.raw[TRAFFIC] = (200, "".join(json.dumps(line) + "\n" for line in lines).encode(), NDJSON)
    response = client.post("/traffic/", {"target": "pasta", "node": "node-1", "count": "4"})
    assert response.status_code == 200, response.content
    text = response.content.decode()
    assert "4 sent, 1 failed" in text and "<code>pasta-a</code> 2" in text and "<code>pasta-b</code> 1" in text
    [request] = fake.requests
    assert (request.method, request.path) == TRAFFIC
    assert request.query == {"node": "node-1", "target": "pasta", "namespace": "default", "count": "4"}
    assert request.agent.startswith("dashboard ")


@pytest.mark.parametrize("form", [
    {"target": "pasta", "node": "node-1", "count": "0"},
    {"target": "pasta", "node": "node-1", "count": "1001"},
    {"target": "pasta", "node": "node-1", "count": "lots"},
    {"target": "Pasta Place", "node": "node-1", "count": "3"},
    {"target": "pasta", "node": "../x", "count": "3"},
    {"target": "pasta", "node": "node-1", "namespace": "a/b", "count": "3"},
])
def test_a_bad_traffic_form_is_refused_before_any_request(fake, client, form):
    response = client.post("/traffic/", form)
    assert response.status_code == 400
    assert fake.requests == []


def test_the_hubs_refusal_of_traffic_is_shown_with_its_code(fake, client):
    fake.raw[TRAFFIC] = (404, json.dumps(status(404, "NotFound", 'nodes "node-9" not found')).encode(),
                         "application/json")
    response = client.post("/traffic/", {"target": "pasta", "node": "node-9", "count": "3"})
    assert response.status_code == 404
    assert "nodes &quot;node-9&quot; not found" in response.content.decode()


RULES_TEXT = """*nat
:KUBE-SERVICES - [0:0]
-A KUBE-SERVICES -d 10.96.0.12/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-ABCD
-A KUBE-NODEPORTS -p tcp -m tcp --dport 31234 -j KUBE-SVC-ABCD
-A KUBE-SVC-ABCD -m statistic --mode random --probability 0.5 -j KUBE-SEP-1111
-A KUBE-SEP-1111 -p tcp -m tcp -j DNAT --to-destination 10.244.2.3:80
COMMIT
"""


def test_a_nodes_kube_proxy_table_is_shown_line_by_line_as_the_hub_serves_it(fake, client):
    fake.raw[RULES] = (200, RULES_TEXT.encode(), "text/plain")
    response = client.get("/proxyrules/node-2/")
    assert response.status_code == 200
    text = response.content.decode()
    assert '<pre class="rules" data-node="node-2">' in text
    assert '<span class="rule rule-dnat">-A KUBE-SEP-1111 -p tcp -m tcp -j DNAT --to-destination 10.244.2.3:80</span>' in text
    assert '<span class="rule rule-nodeport">-A KUBE-NODEPORTS' in text and '<span class="rule rule-balance">-A KUBE-SVC-ABCD' in text
    assert '<span class="rule rule-service">-A KUBE-SERVICES' in text and '<span class="rule rule-declaration">*nat</span>' in text
    assert '<span class="rule rule-chain">:KUBE-SERVICES - [0:0]</span>' in text
    [request] = fake.requests
    assert (request.method, request.path, request.query) == (*RULES, {"node": "node-2", "format": "text"})


def test_an_unreachable_kube_proxy_is_the_hubs_503_on_the_card(fake, client):
    fake.raw[RULES] = (503, json.dumps(status(503, "ServiceUnavailable", "kube-proxy on node-2 does not answer")).encode(),
                       "application/json")
    response = client.get("/proxyrules/node-2/")
    assert response.status_code == 503 and "kube-proxy on node-2 does not answer" in response.content.decode()


def test_a_bad_node_name_for_the_rules_is_refused_before_any_request(fake, client):
    assert client.get("/proxyrules/Node_2/").status_code == 400
    assert fake.requests == []


# --- NetworkPolicy's drops ---------------------------------------------------------------------------


def dropped(seq: int) -> dict:
    return {"seq": seq, "from": "node-2", "target": "kitchen", "service": "default/kitchen", "code": 0, "pod": "",
            "error": "connection timed out (dropped by NetworkPolicy)",
            "dropped": {"direction": "ingress", "policies": ["default/kitchen-staff-only"], "from": "10.0.0.12",
                        "to": "default/kitchen-1", "port": 80, "protocol": "TCP"}}


def ndjson(lines: list[dict]) -> tuple[int, bytes, str]:
    return 200, "".join(json.dumps(line) + "\n" for line in lines).encode(), NDJSON


def test_the_form_says_how_many_a_networkpolicy_dropped_and_which(fake, client):
    fake.raw[TRAFFIC] = ndjson([dropped(0), dropped(1), {"done": True, "sent": 2, "answered": {}, "failed": 2}])
    response = client.post("/traffic/", {"target": "kitchen", "node": "node-2", "count": "2"})
    assert response.status_code == 200, response.content
    text = response.content.decode()
    assert "2 sent, 2 failed" in text and "2 blocked by NetworkPolicy default/kitchen-staff-only" in text


def _button(form: dict[str, str]) -> str:
    import asyncio

    from dashboard import hub, lesson_buttons

    async def press() -> str:
        try:
            return await lesson_buttons.traffic(hub.client(hub.configured_url()), form)
        finally:
            await hub.close_clients()

    return asyncio.run(press())


def test_the_lesson_button_answers_504_when_a_policy_dropped_every_request(fake):
    form = {"target": "kitchen", "node": "node-2", "namespace": "default", "count": "2"}
    fake.raw[TRAFFIC] = ndjson([dropped(0), dropped(1), {"done": True, "sent": 2}])
    timed_out = _button(form)
    assert timed_out.code == 504 and not timed_out.ok
    assert timed_out == "2 request(s) to kitchen: nobody; 2 timed out, dropped by NetworkPolicy default/kitchen-staff-only"
    allowed = {**answer(1, "kitchen-1"), "target": "kitchen", "service": "default/kitchen", "allowedBy": ["default/w"]}
    fake.raw[TRAFFIC] = ndjson([dropped(0), allowed])  # one answered: a plain answer, the drop named
    assert _button(form) == \
        "2 request(s) to kitchen: kitchen-1 1; 1 timed out, dropped by NetworkPolicy default/kitchen-staff-only"
    fake.raw[TRAFFIC] = ndjson([dropped(0), answer(1, None, 503)])  # another failure too: not a timeout
    assert _button(form).code == 503

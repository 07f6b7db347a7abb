"""A list's options through the hub (in-process): every page of a paginated list and an Exact list
are one snapshot; 410 with etcd3's messages past compaction; kube-apiserver's refusals."""

from __future__ import annotations

import base64
import json

import pytest

from control.storage import store
from tests.api.test_verbs import PODS, pod, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_page_of_a_list_is_served_from_the_revision_of_the_first(api):
    for i in range(6):
        send(api, "post", PODS, pod(f"p{i}", tier="old"))
    _, page1 = send(api, "get", PODS, None, **{"QUERY_STRING": "limit=2"})
    revision = page1["metadata"]["resourceVersion"]
    # While the client pages: one object created, one deleted, one changed after the first page.
    send(api, "post", PODS, pod("p2a"))
    send(api, "delete", f"{PODS}/p3", None, **{"QUERY_STRING": "gracePeriodSeconds=0"})
    send(api, "patch", f"{PODS}/p4", {"metadata": {"labels": {"tier": "new"}}},
         content_type="application/merge-patch+json")
    _, page2 = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=2&continue={page1['metadata']['continue']}"})
    _, page3 = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=2&continue={page2['metadata']['continue']}"})
    assert [p["metadata"]["name"] for p in page2["items"] + page3["items"]] == ["p2", "p3", "p4", "p5"]
    assert int(page2["items"][1]["metadata"]["resourceVersion"]) <= int(revision)
    assert page3["items"][0]["metadata"]["labels"] == {"tier": "old"}
    assert page2["metadata"]["resourceVersion"] == page3["metadata"]["resourceVersion"] == revision
    assert "continue" not in page3["metadata"]
    # The same revision asked for exactly, and a fresh list, which sees the writes.
    exactly = f"resourceVersion={revision}&resourceVersionMatch=Exact"
    _, exact = send(api, "get", PODS, None, QUERY_STRING=exactly)
    assert [p["metadata"]["name"] for p in exact["items"]] == ["p0", "p1", "p2", "p3", "p4", "p5"]
    assert exact["metadata"]["resourceVersion"] == revision
    _, fresh = send(api, "get", PODS)
    assert [p["metadata"]["name"] for p in fresh["items"]] == ["p0", "p1", "p2", "p2a", "p4", "p5"]


def test_a_continue_token_past_compaction_is_expired_with_a_token_for_the_newest_state(api):
    for i in range(4):
        send(api, "post", PODS, pod(f"p{i}"))
    _, page1 = send(api, "get", PODS, None, **{"QUERY_STRING": "limit=2"})
    revision = page1["metadata"]["resourceVersion"]
    send(api, "post", PODS, pod("p9"))
    # A list with a resourceVersion and a limit is read at that revision (etcd3's legacy exact case).
    _, legacy = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=10&resourceVersion={revision}"})
    assert [p["metadata"]["name"] for p in legacy["items"]] == ["p0", "p1", "p2", "p3"]
    store.log_compact(max_entries=0, max_age=1e9)
    code, status = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=2&continue={page1['metadata']['continue']}"})
    assert (code, status["reason"]) == (410, "Expired")
    assert status["message"].startswith("The provided continue parameter is too old to display a consistent list "
                                        "result. You can start a new list without the continue parameter, or use the "
                                        "continue token in this response to retrieve the remainder of the results.")
    _, rest = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=10&continue={status['metadata']['continue']}"})
    assert [p["metadata"]["name"] for p in rest["items"]] == ["p2", "p3", "p9"]
    assert int(rest["metadata"]["resourceVersion"]) > int(revision)
    code, status = send(api, "get", PODS, None, QUERY_STRING=f"resourceVersion={revision}&resourceVersionMatch=Exact")
    assert (code, status["reason"]) == (410, "Expired")
    assert status["message"] == "The resourceVersion for the provided list is too old."
    for forged in ({"rv": 0}, {"rv": 10**30}):  # a token no list handed out
        token = base64.urlsafe_b64encode(json.dumps({"v": "kk.1", "ns": "default", "name": "p0", **forged}).encode())
        code, status = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=1&continue={token.decode()}"})
        assert (code, status["reason"]) == (400, "BadRequest")
    not_older = f"limit=1&resourceVersion={revision}&resourceVersionMatch=NotOlderThan"
    code, _ = send(api, "get", PODS, None, QUERY_STRING=not_older)
    assert code == 200


@pytest.mark.parametrize("query, message", [
    ("resourceVersionMatch=Exact", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                                   "resourceVersion is provided"),
    ("resourceVersion=0&resourceVersionMatch=Exact",
     'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ("resourceVersion=1&resourceVersionMatch=Newest",
     'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'),
])
def test_list_options_are_validated_as_kube_apiserver_does(api, query, message):
    code, status = send(api, "get", PODS, None, QUERY_STRING=query)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'


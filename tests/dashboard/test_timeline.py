"""The timeline's views against a fake hub: the state at a revision as view models (with the
window, its time and the spokes then), a page of the changes after it, the recording of the whole
window, and the hub's refusals (410 before the window, 400) passed on with their Status."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from dashboard import timeline
from tests.dashboard.fakehub import pod


@pytest.fixture
def client():
    return Client()


def test_the_state_at_a_revision_is_the_hubs_snapshot_then_as_view_models(client, fake):
    fake.revision, fake.objects = 20, {"pods": []}
    fake.at[12] = {"pods": [pod("pasta-1")]}
    spokes = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kubekitchen-spokes", "namespace": "kube-system"},
              "data": {"kubelet.node-1": "stopped"}}
    fake.answers[("GET", "/api/v1/namespaces/kube-system/configmaps")] = (200, {"items": [spokes]})
    answer = client.get("/timeline/at/?revision=12")
    assert answer.status_code == 200, answer.content
    state = answer.json()
    assert state["t"] == "snapshot" and state["revision"] == 12 and state["time"] == 1012.0
    assert [vm["name"] for vm in state["objects"]["pods"]] == ["pasta-1"]
    assert state["objects"]["pods"][0]["node"] == "node-1"  # a view model, not the object
    assert state["window"] == {"oldest": 0, "newest": 20}
    assert state["spokes"] == presenters_states(spokes)
    asked = [r for r in fake.requests if r.path == "/kubekitchen/snapshot"][-1]
    assert asked.query == {"resourceVersion": "12"} and asked.agent.startswith("dashboard")
    listed = [r for r in fake.requests if r.path.endswith("/configmaps")][-1]
    assert listed.query["resourceVersionMatch"] == "Exact" and listed.query["resourceVersion"] == "12"


def presenters_states(configmap):
    from dashboard import presenters

    return presenters.spokes_vm(configmap)["states"]


def test_a_revision_before_the_window_is_the_hubs_410(client, fake):
    fake.compacted_through = 7
    answer = client.get("/timeline/at/?revision=3")
    assert answer.status_code == 410
    assert answer.json()["reason"] == "Expired" and answer.json()["message"] == "too old resource version: 3 (7)"
    assert client.get("/timeline/changes/?revision=3").status_code == 410


@pytest.mark.parametrize("value", ["", "x", "-2"])
def test_a_bad_revision_is_400_and_never_reaches_the_hub(client, fake, value):
    answer = client.get(f"/timeline/at/?revision={value}")
    assert answer.status_code == 400 and answer.json()["reason"] == "BadRequest"
    assert not [r for r in fake.requests if r.path.startswith("/kubekitchen")]


def test_the_changes_after_a_revision_as_version_log_items_with_their_time(client, fake):
    for rv in (11, 12, 13):
        fake.change("pods", pod(f"p{rv}"), rv, actor="controller-manager")
    page = client.get("/timeline/changes/?revision=11&limit=1").json()
    assert [(x["rv"], x["name"], x["actor"], x["time"]) for x in page["items"]] == [
        (12, "p12", "controller-manager", 1012.0)]
    assert page["more"] is True and page["revision"] == 12 and page["items"][0]["vm"]["name"] == "p12"
    assert client.get("/timeline/changes/?revision=12").json()["more"] is False


def test_the_recording_is_the_snapshot_at_the_oldest_revision_and_every_change_after_it(client, fake, monkeypatch):
    monkeypatch.setattr(timeline, "PAGE", 2)  # several pages
    fake.compacted_through, fake.revision = 10, 15
    fake.at[10] = {"pods": [pod("p10")]}
    for rv in range(11, 16):
        fake.change("pods", pod(f"p{rv}"), rv)
    recording = client.get("/timeline/recording/").json()
    assert recording["version"] == timeline.RECORDING_VERSION == "kube-kitchen-recording/1"
    assert recording["window"] == {"oldest": 10, "newest": 15}
    assert recording["snapshot"]["revision"] == 10
    assert [vm["name"] for vm in recording["snapshot"]["objects"]["pods"]] == ["p10"]
    assert [x["rv"] for x in recording["changes"]] == [11, 12, 13, 14, 15]
    assert recording["traffic"] == []
    json.dumps(recording)  # one document


def test_the_timeline_is_read_only(client, fake):
    assert client.post("/timeline/at/?revision=1").status_code == 405

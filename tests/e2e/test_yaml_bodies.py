"""YAML bodies against the real server (Daphne, the decoding worker process, kubectl): normal YAML
is stored, budget-breaking YAML is a Status that names the budget, nothing is stored by a refusal,
and /healthz and other reads are answered while a ~2.9 MB YAML body is being decoded."""

from __future__ import annotations

import threading
import time
import uuid

import httpx
import pytest

YAML = {"Content-Type": "application/yaml"}


@pytest.fixture(scope="module")
def http(hub):
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http) -> str:
    name = f"yaml-{uuid.uuid4().hex[:8]}"
    assert http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": name}}).status_code == 201
    return name


def names(http: httpx.Client, ns: str) -> list[str]:
    return sorted(i["metadata"]["name"] for i in http.get(f"/api/v1/namespaces/{ns}/configmaps").json()["items"])


def laughs(levels: int) -> str:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\n"
    text += "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in range(levels):
        this, previous = chr(98 + i), chr(97 + i)
        text += f"{this}: &{this} [{', '.join(['*' + previous] * 9)}]\n"
    return text


def test_yaml_is_stored_and_kubectl_reads_it(hub, http, ns):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: menu\ndata:\n  soup: tomato\n  since: 2024-01-01\n"
    answer = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=text, headers=YAML)
    assert answer.status_code == 201, answer.text
    assert hub.kubectl("get", "configmap", "menu", "-n", ns, "-o", "jsonpath={.data.since}").stdout == "2024-01-01"


@pytest.mark.parametrize("body, words", [
    (laughs(9), "yaml: document contains excessive aliasing"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: " + "[" * 300 + "]" * 300,
     "yaml: exceeded max depth of 100"),
])
def test_yaml_over_its_budget_is_a_400_status_and_nothing_is_stored(http, ns, body, words):
    before = names(http, ns)
    started = time.perf_counter()
    answer = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=body, headers=YAML)
    assert answer.status_code == 400 and answer.json()["reason"] == "BadRequest"
    assert words in answer.json()["message"]
    assert time.perf_counter() - started < 10
    assert names(http, ns) == before and http.get("/healthz").status_code == 200


def test_reads_are_answered_while_a_big_yaml_is_decoded(http, ns, hub):
    before = names(http, ns)
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flood}\ndata:\n" + "".join(
        f"  key-{i:05d}: \"{'v' * 56}\"\n" for i in range(40_000))
    assert 2_500_000 < len(big) < 3 * 1024 * 1024
    done: dict[str, float] = {}

    def send() -> None:
        with httpx.Client(base_url=hub.url, headers={**hub.auth, **YAML}, timeout=120) as sender:
            done["code"] = sender.post(f"/api/v1/namespaces/{ns}/configmaps", content=big).status_code
        done["at"] = time.perf_counter()

    thread = threading.Thread(target=send)
    thread.start()
    answered: list[float] = []
    while thread.is_alive() and len(answered) < 50:
        assert http.get("/healthz").status_code == 200
        assert http.get(f"/api/v1/namespaces/{ns}/configmaps").status_code == 200
        answered.append(time.perf_counter())
    thread.join()
    assert done["code"] == 413  # too big for the store: refused with its words, before any handler work
    # While the body was decoded (seconds of CPU) the hub went on answering: a decode on its loop or
    # its database thread let one read through at most, before the body arrived.
    assert sum(1 for at in answered if at < done["at"]) >= 3
    assert names(http, ns) == before

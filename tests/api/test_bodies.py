"""control.api.bodies through the hub's ASGI app: a body over the limit is refused before any
decoding; YAML is decoded in the worker, only after RBAC let the request in and while the sender
holds its fairness seats; budget refusals are Statuses; nothing is stored by a refusal and the hub
goes on serving."""

import json

import pytest
from django.conf import settings

from control import offloop
from control.api import bodies, decoding, fairness
from control.auth import tokenfile
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
BOMB = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)))
GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\ndata:\n  when: 2024-01-01\n  n: '3'\n"


@pytest.fixture
def decodes(monkeypatch):
    """Every decoding of a body, in the worker (offloop.run) or inline (decode_text): recorded and done."""
    seen: list[str] = []
    real_run, real_inline = offloop.run, decoding.decode_text

    async def in_worker(fn, *args):
        seen.append("worker")
        return await real_run(fn, *args)

    def inline(*args, **kwargs):
        seen.append("inline")
        return real_inline(*args, **kwargs)

    monkeypatch.setattr(offloop, "run", in_worker)
    monkeypatch.setattr(decoding, "decode_text", inline)
    return seen


def status(answer) -> dict:
    assert answer["Content-Type"] == "application/json"
    return json.loads(answer.content)


def stored_configmaps(api) -> list[str]:
    return sorted(item["metadata"]["name"] for item in json.loads(api.get(CONFIGMAPS).content)["items"])


def test_a_body_over_the_limit_is_413_and_never_decoded(api, decodes):
    before = stored_configmaps(api)
    big = GOOD + "  blob: " + "x" * settings.KK_MAX_BODY_BYTES + "\n"
    for media in ("application/yaml", "application/json"):
        answer = api.post(CONFIGMAPS, big, content_type=media)
        assert answer.status_code == 413 and status(answer)["reason"] == "RequestEntityTooLarge"
        assert status(answer)["message"] == f"Request entity too large: limit is {settings.KK_MAX_BODY_BYTES}"
    assert decodes == []
    assert stored_configmaps(api) == before and api.get("/healthz").status_code == 200


def test_yaml_is_decoded_in_the_worker_and_stored_as_plain_json(api, decodes):
    answer = api.post(CONFIGMAPS, GOOD, content_type="application/yaml")
    assert answer.status_code == 201, answer.content
    assert json.loads(answer.content)["data"] == {"when": "2024-01-01", "n": "3"}  # no timestamp, no number
    assert decodes == ["worker"]  # once: the handler unpacks what the worker decoded


def test_small_json_is_decoded_by_the_handler_and_large_json_in_the_worker(api, decodes):
    small = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "small"}, "data": {"a": "b"}}
    assert api.post(CONFIGMAPS, json.dumps(small)).status_code == 201
    assert decodes == ["inline"]
    large = {**small, "metadata": {"name": "large"}, "data": {"a": "b" * (settings.KK_INLINE_JSON_BYTES + 1)}}
    assert api.post(CONFIGMAPS, json.dumps(large)).status_code == 201
    assert decodes == ["inline", "worker"]


def test_an_apply_whose_yaml_is_json_text_is_read_here_and_other_yaml_in_the_worker(api, decodes):
    """kubectl's and the dashboard's server-side apply send JSON as application/apply-patch+yaml:
    read as the JSON it is, with no trip to the worker; YAML that only opens like JSON goes there."""
    apply = "application/apply-patch+yaml"
    as_json = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"when": "2024-01-01"}}
    answer = api.patch(f"{CONFIGMAPS}/applied?fieldManager=kubectl", json.dumps(as_json), content_type=apply)
    assert answer.status_code == 201, answer.content
    assert decodes == []  # neither the worker nor the handler's decode_text
    flow = "{apiVersion: v1, kind: ConfigMap, metadata: {name: flowing}, data: {when: 2024-01-01}}"
    answer = api.patch(f"{CONFIGMAPS}/flowing?fieldManager=kubectl", flow, content_type=apply)
    assert answer.status_code == 201, answer.content
    assert json.loads(answer.content)["data"] == {"when": "2024-01-01"}
    assert decodes == ["worker"]
    big = {**as_json, "metadata": {"name": "big"}, "data": {"a": "b" * settings.KK_INLINE_JSON_BYTES}}
    assert api.patch(f"{CONFIGMAPS}/big?fieldManager=kubectl", json.dumps(big), content_type=apply).status_code == 201
    assert decodes == ["worker", "worker"]  # over the inline bound: YAML's way, whatever it looks like



def test_the_size_refused_early_is_the_size_the_store_counts():
    """In UTF-8 bytes, as the store writes the text (characters beyond ASCII as themselves)."""
    decoded = bodies.json_yaml(' {"a": "한글", "b": [1]}'.encode(), "application/apply-patch+yaml")
    assert decoded is not None and decoded.compact_bytes == len('{"a":"한글","b":[1]}'.encode())

def test_a_json_yaml_body_gives_a_fresh_single_document_each_time():
    decoded = bodies.json_yaml(b' {"a": [1]}', "application/apply-patch+yaml")
    assert decoded is not None and decoded.compact_bytes == len('{"a":[1]}')
    first = decoded.take()
    first[0]["a"].append(2)
    assert decoded.take() == [{"a": [1]}]
    for not_here in ((b'{"a": NaN}', "application/apply-patch+yaml"), (b"{a: 1}", "application/yaml"),
                     (b'[{"a": 1}]', "application/yaml"), (b'{"a": 1}', "application/json"),
                     (b'{"a": "\xff"}', "application/yaml")):
        assert bodies.json_yaml(*not_here) is None, not_here


@pytest.mark.parametrize("body, code, reason, words", [
    (BOMB, 400, "BadRequest", "error converting YAML to JSON: yaml: document contains excessive aliasing"),
    ("a: " + "[" * 150 + "]" * 150, 400, "BadRequest",
     "error converting YAML to JSON: yaml: exceeded max depth of 100"),
    ("a: &x [1, *x]\n", 400, "BadRequest", "yaml: anchor 'x' value contains itself"),
])
def test_a_yaml_over_its_budget_is_refused_with_a_status_naming_the_budget(api, body, code, reason, words):
    before = stored_configmaps(api)
    answer = api.post(CONFIGMAPS, body, content_type="application/yaml")
    refusal = status(answer)
    assert answer.status_code == code and refusal["reason"] == reason
    assert refusal["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): ")
    assert words in refusal["message"]
    assert stored_configmaps(api) == before and api.get(CONFIGMAPS).status_code == 200


def test_too_many_nodes_is_413(api, settings):
    settings.KK_YAML_MAX_NODES = 50
    before = stored_configmaps(api)
    many = GOOD + "".join(f"  k{i}: v\n" for i in range(40))
    answer = api.post(CONFIGMAPS, many, content_type="application/yaml")
    assert answer.status_code == 413 and status(answer)["reason"] == "RequestEntityTooLarge"
    assert "more than 50 nodes" in status(answer)["message"]
    assert stored_configmaps(api) == before and api.get("/healthz").status_code == 200


def test_a_request_rbac_refuses_is_403_without_its_body_being_decoded(api, decodes):
    nobody = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "nobody", ()))
    try:
        binding = GOOD.replace("apiVersion: v1\nkind: ConfigMap", "apiVersion: rbac.authorization.k8s.io/v1\n"
                               "kind: RoleBinding")
        answer = nobody.post(f"{RBAC}/rolebindings", binding, content_type="application/yaml")
        assert answer.status_code == 403 and status(answer)["reason"] == "Forbidden"
    finally:
        nobody.close()
    assert decodes == []


def test_the_body_decodes_while_the_sender_holds_its_seats(api, monkeypatch):
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-writer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "list"]}]}
    bind = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "cm-writer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "writer"}]}
    assert api.post(f"{RBAC}/roles", json.dumps(role)).status_code == 201
    assert api.post(f"{RBAC}/rolebindings", json.dumps(bind)).status_code == 201
    held: list[int] = []
    real_run = offloop.run

    async def watching(fn, *args):
        held.append(fairness.LIMITER.in_flight("global-default", "writer"))
        return await real_run(fn, *args)

    monkeypatch.setattr(offloop, "run", watching)
    writer = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "writer", ()))
    try:
        body = GOOD + "  blob: " + "x" * (2 * settings.KK_BYTES_PER_SEAT) + "\n"
        assert writer.post(CONFIGMAPS, body, content_type="application/yaml").status_code == 201
    finally:
        writer.close()
    level = fairness.levels()["global-default"]
    assert held == [fairness.body_seats(level, len(body.encode()))] and held[0] == 3
    assert fairness.LIMITER.in_flight("global-default", "writer") == 0  # all given back


def test_a_worker_that_dies_is_a_413_and_the_next_body_decodes(api, monkeypatch):
    async def lost(fn, *args):
        raise offloop.WorkerLost("decode_text")

    monkeypatch.setattr(offloop, "run", lost)
    answer = api.post(CONFIGMAPS, GOOD, content_type="application/yaml")
    assert answer.status_code == 413 and "within the server's resources" in status(answer)["message"]
    monkeypatch.undo()
    assert api.post(CONFIGMAPS, GOOD, content_type="application/yaml").status_code == 201


def test_a_handler_run_twice_gets_a_fresh_value():
    packed, size = decoding.decode_packed(b'{"a": [1]}', "application/json").value
    assert size == len('{"a":[1]}')
    decoded = bodies.Decoded("application/json", packed=packed, compact_bytes=size)
    first = decoded.take()
    first["a"].append(2)
    assert decoded.take() == {"a": [1]}


@pytest.mark.parametrize("query, handled", [("", False), ("?dryRun=All", False), ("?fieldValidation=Ignore", True)])
def test_an_object_too_big_for_the_store_is_refused_before_the_handler_runs(api, monkeypatch, query, handled):
    from control.api import app, verbs

    ran: list[str] = []
    monkeypatch.setitem(app.SYNC_VERBS, ("create", False, ""), lambda call: ran.append("create") or verbs.create(call))
    before = stored_configmaps(api)
    many = GOOD + "".join(f"  key-{i:05d}: '{'v' * 56}'\n" for i in range(30_000))  # 2 MB as compact JSON
    answer = api.post(CONFIGMAPS + query, many, content_type="application/yaml")
    assert answer.status_code == 413 and status(answer)["message"] == "etcdserver: request is too large"
    assert ran == (["create"] if handled else [])  # Ignore may drop fields: the store decides then
    assert stored_configmaps(api) == before and api.get("/healthz").status_code == 200


def test_an_undecodable_binding_is_the_handlers_400_not_an_escalation_403(api):
    writer = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "binder", ()))
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "binder"},
            "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["create"]}]}
    bind = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "binder"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "binder"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "binder"}]}
    assert api.post(f"{RBAC}/roles", json.dumps(role)).status_code == 201
    assert api.post(f"{RBAC}/rolebindings", json.dumps(bind)).status_code == 201
    try:
        answer = writer.post(f"{RBAC}/rolebindings", BOMB, content_type="application/yaml")
        assert answer.status_code == 400 and "excessive aliasing" in status(answer)["message"]
        no_role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b}\n"
        assert writer.post(f"{RBAC}/rolebindings", no_role, content_type="application/yaml").status_code == 403
    finally:
        writer.close()

"""Hostile and broken requests against a real hub: the right 4xx with a Status, nothing stored,
and the server still answering afterwards. A hypothesis fuzz run checks that no input yields a 5xx.
"""

from __future__ import annotations

import json
import string
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def http(hub):
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=20) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http) -> str:
    name = f"bad-{uuid.uuid4().hex[:8]}"
    assert http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": name}}).status_code == 201
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "existing", "labels": {"a": "b"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert http.post(f"/api/v1/namespaces/{name}/pods", json=pod).status_code == 201
    return name


def pod_body(name: str = "fresh", **extra) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    body.update(extra)
    return body


def snapshot(http: httpx.Client, ns: str) -> tuple[str, list[tuple[str, str]]]:
    """The store's revision and what the namespace holds (pods and deployments)."""
    pods = http.get(f"/api/v1/namespaces/{ns}/pods").json()
    deployments = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments").json()
    names = [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in pods["items"] + deployments["items"]]
    return pods["metadata"]["resourceVersion"], names


def assert_status(response: httpx.Response, code: int, reason: str, *fragments: str) -> dict:
    assert response.status_code == code, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    status = response.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1"
    assert status["status"] == "Failure" and status["code"] == code
    assert status["reason"] == reason, status
    assert isinstance(status["message"], str) and status["message"]
    for fragment in fragments:
        assert fragment in status["message"], status["message"]
    return status


def assert_alive(http: httpx.Client, ns: str) -> None:
    assert http.get("/version").status_code == 200
    assert http.get(f"/api/v1/namespaces/{ns}/pods/existing").status_code == 200


# (description, method, path template, kwargs, expected code, reason, message fragments)
CASES = [
    ("malformed JSON", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b'{"apiVersion": "v1", "kind": "Pod", ', "headers": JSON}, 400, "BadRequest", ()),
    ("trailing garbage after JSON", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": json.dumps(pod_body()).encode() + b"}}", "headers": JSON}, 400, "BadRequest", ()),
    ("not UTF-8", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b'{"metadata": {"name": "\xff\xfe"}}', "headers": JSON}, 400, "BadRequest", ()),
    ("NaN", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"fresh"},"spec":{"priority":NaN}}',
      "headers": JSON}, 400, "BadRequest", ()),
    ("malformed YAML", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b"apiVersion: v1\nkind: Pod\nmetadata: {name: [fresh\n", "headers": {"Content-Type": "application/yaml"}},
     400, "BadRequest", ()),
    ("YAML with tabs", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b"apiVersion: v1\nkind: Pod\nmetadata:\n\tname: fresh\n", "headers": {"Content-Type": "application/yaml"}},
     400, "BadRequest", ()),
    ("YAML alias bomb", "POST", "/api/v1/namespaces/{ns}/configmaps",
     {"content": b"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n", "headers": {"Content-Type": "application/yaml"}},
     400, "BadRequest", ()),
    ("JSON array body", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": [pod_body()]}, 400, "BadRequest", ()),
    ("JSON string body", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": "a pod"}, 400, "BadRequest", ()),
    ("empty body", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": b"", "headers": JSON}, 400, "BadRequest", ()),
    ("wrong apiVersion for the endpoint", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(apiVersion="apps/v1")}, 400, "BadRequest", ("apps/v1",)),
    ("wrong kind for the endpoint", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(kind="Service")}, 400, "BadRequest", ("Service",)),
    ("Deployment sent to the pods endpoint", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(apiVersion="apps/v1", kind="Deployment")}, 400, "BadRequest", ()),
    ("namespace in the body differs from the URL", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(metadata={"name": "fresh", "namespace": "elsewhere"})}, 400, "BadRequest", ("namespace",)),
    ("metadata is not an object", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(metadata="fresh")}, 400, "BadRequest", ()),
    ("unknown kind path (get)", "GET", "/api/v1/namespaces/{ns}/widgets", {}, 404, "NotFound",
     ("the server could not find the requested resource",)),
    ("unknown kind path (create)", "POST", "/api/v1/namespaces/{ns}/widgets", {"json": pod_body()}, 404, "NotFound", ()),
    ("unknown group", "POST", "/apis/example.com/v1/namespaces/{ns}/things", {"json": pod_body()}, 404, "NotFound", ()),
    ("unknown version", "GET", "/apis/apps/v2/namespaces/{ns}/deployments", {}, 404, "NotFound", ()),
    ("cluster-scoped kind under a namespace", "GET", "/api/v1/namespaces/{ns}/nodes", {}, 404, "NotFound", ()),
    ("unknown subresource", "GET", "/api/v1/namespaces/{ns}/pods/existing/frobnicate", {}, 404, "NotFound", ()),
    ("unknown field (strict by default)", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(spec={"containers": [{"name": "c", "image": "busybox"}], "bogus": True})}, 400, "BadRequest",
     ('unknown field "spec.bogus"',)),
    ("unknown top-level field", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(extra=1)}, 400, "BadRequest", ('unknown field "extra"',)),
    ("wrong field type", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(spec={"containers": "busybox"})}, 400, "BadRequest", ()),
    # CreateOptions are validated first (ValidateCreateOptions): 422 Invalid, kind CreateOptions.
    ("invalid fieldValidation value", "POST", "/api/v1/namespaces/{ns}/pods?fieldValidation=Loose",
     {"json": pod_body()}, 422, "Invalid", ('fieldValidation: Unsupported value: "Loose"',)),
    ("invalid dryRun value", "POST", "/api/v1/namespaces/{ns}/pods?dryRun=Yes",
     {"json": pod_body()}, 422, "Invalid", ("dryRun: Unsupported value",)),
    ("uppercase name", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body("Fresh")}, 422, "Invalid", ('Pod "Fresh" is invalid', "metadata.name")),
    ("name with a slash-free but illegal character", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body("fresh_pod")}, 422, "Invalid", ("metadata.name",)),
    ("name too long (254 > 253)", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body("a" * 254)}, 422, "Invalid", ("metadata.name",)),
    ("namespace name too long (64 > 63)", "POST", "/api/v1/namespaces",
     {"json": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}}}, 422, "Invalid",
     ("metadata.name",)),
    ("no name at all", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(metadata={})}, 422, "Invalid", ("metadata.name",)),
    ("invalid label value", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(metadata={"name": "fresh", "labels": {"app": "no spaces allowed"}})}, 422, "Invalid",
     ("metadata.labels",)),
    ("no containers", "POST", "/api/v1/namespaces/{ns}/pods",
     {"json": pod_body(spec={"containers": []})}, 422, "Invalid", ("spec.containers",)),
    ("deployment selector does not match its template", "POST", "/apis/apps/v1/namespaces/{ns}/deployments",
     {"json": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fresh"},
               "spec": {"selector": {"matchLabels": {"app": "a"}},
                        "template": {"metadata": {"labels": {"app": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}}}}},
     422, "Invalid", ("`selector` does not match template `labels`",)),
    ("bad label selector", "GET", "/api/v1/namespaces/{ns}/pods?labelSelector=a%20in%20(b", {}, 400, "BadRequest", ()),
    ("bad label selector operator", "GET", "/api/v1/namespaces/{ns}/pods?labelSelector=a%3D%3D%3Db", {}, 400,
     "BadRequest", ()),
    ("bad label selector in a watch", "GET", "/api/v1/namespaces/{ns}/pods?watch=1&labelSelector=!!", {}, 400,
     "BadRequest", ()),
    ("unknown field selector", "GET", "/api/v1/namespaces/{ns}/pods?fieldSelector=spec.bogus%3D1", {}, 400,
     "BadRequest", ("field label not supported: spec.bogus",)),
    ("unknown field selector on a watch", "GET", "/api/v1/namespaces/{ns}/pods?watch=true&fieldSelector=foo%3Dbar",
     {}, 400, "BadRequest", ("field label not supported: foo",)),
    ("field selector of another kind", "GET", "/apis/apps/v1/namespaces/{ns}/deployments?fieldSelector=spec.nodeName%3Dn",
     {}, 400, "BadRequest", ("field label not supported: spec.nodeName",)),
    ("malformed field selector", "GET", "/api/v1/namespaces/{ns}/pods?fieldSelector=metadata.name", {}, 400,
     "BadRequest", ()),
    ("limit not a number", "GET", "/api/v1/namespaces/{ns}/pods?limit=ten", {}, 400, "BadRequest", ()),
    ("resourceVersion not a number", "GET", "/api/v1/namespaces/{ns}/pods?resourceVersion=latest", {}, 400,
     "BadRequest", ()),
    ("garbage continue token", "GET", "/api/v1/namespaces/{ns}/pods?limit=1&continue=%%%garbage", {}, 400,
     "BadRequest", ()),
    ("unsupported patch content type", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'{"metadata":{"labels":{"x":"y"}}}', "headers": {"Content-Type": "text/plain"}}, 415,
     "UnsupportedMediaType", ()),
    ("patch sent as plain JSON", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'{"metadata":{"labels":{"x":"y"}}}', "headers": JSON}, 415, "UnsupportedMediaType", ()),
    ("create with an unsupported content type", "POST", "/api/v1/namespaces/{ns}/pods",
     {"content": json.dumps(pod_body()).encode(), "headers": {"Content-Type": "text/html"}}, 415,
     "UnsupportedMediaType", ()),
    ("JSON patch that is not a list", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'{"op":"replace","path":"/metadata/labels","value":{}}',
      "headers": {"Content-Type": "application/json-patch+json"}}, 400, "BadRequest", ()),
    ("JSON patch with a malformed body", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'[{"op":"replace",', "headers": {"Content-Type": "application/json-patch+json"}}, 400, "BadRequest", ()),
    ("merge patch that is not an object", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'[1, 2]', "headers": {"Content-Type": "application/merge-patch+json"}}, 400, "BadRequest", ()),
    ("strategic patch that is not an object", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b'"text"', "headers": {"Content-Type": "application/strategic-merge-patch+json"}}, 400, "BadRequest", ()),
    ("server-side apply without fieldManager", "PATCH", "/api/v1/namespaces/{ns}/pods/existing",
     {"content": b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: existing\n  labels: {x: y}\n",
      "headers": {"Content-Type": "application/apply-patch+yaml"}}, 422, "Invalid", ()),
    ("patch a missing object", "PATCH", "/api/v1/namespaces/{ns}/pods/nothere",
     {"content": b'{"metadata":{"labels":{"x":"y"}}}', "headers": {"Content-Type": "application/merge-patch+json"}},
     404, "NotFound", ('pods "nothere" not found',)),
    ("PUT on a collection", "PUT", "/api/v1/namespaces/{ns}/pods", {"json": pod_body()}, 405, "MethodNotAllowed", ()),
    ("PUT with a different name than the URL", "PUT", "/api/v1/namespaces/{ns}/pods/existing",
     {"json": pod_body("other")}, 400, "BadRequest", ()),
    ("stale resourceVersion on PUT", "PUT", "/api/v1/namespaces/{ns}/pods/existing",
     {"json": pod_body("existing", metadata={"name": "existing", "resourceVersion": "1"})}, 409, "Conflict",
     ('Operation cannot be fulfilled on pods "existing"',)),
    ("delete with a bad propagationPolicy", "DELETE", "/api/v1/namespaces/{ns}/pods/existing?propagationPolicy=Now",
     {}, 400, "BadRequest", ()),
    ("delete with a failing precondition", "DELETE", "/api/v1/namespaces/{ns}/pods/existing",
     {"json": {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "not-the-uid"}}}, 409, "Conflict",
     ("Precondition failed",)),
    ("delete with gracePeriodSeconds not a number", "DELETE",
     "/api/v1/namespaces/{ns}/pods/existing?gracePeriodSeconds=soon", {}, 400, "BadRequest", ()),
    ("binding to no node", "POST", "/api/v1/namespaces/{ns}/pods/existing/binding",
     {"json": {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "existing"}, "target": {}}}, 422, "Invalid",
     ("target.name",)),
    ("create in a namespace that does not exist", "POST", "/api/v1/namespaces/no-such-namespace-xyz/pods",
     {"json": pod_body()}, 404, "NotFound", ('namespaces "no-such-namespace-xyz" not found',)),
]


@pytest.mark.parametrize("description, method, path, kwargs, code, reason, fragments", CASES,
                         ids=[case[0] for case in CASES])
def test_bad_request_is_refused_cleanly(http, ns, description, method, path, kwargs, code, reason, fragments):
    before = snapshot(http, ns)
    try:
        response = http.request(method, path.format(ns=ns), **kwargs)
        assert_status(response, code, reason, *fragments)
        assert snapshot(http, ns) == before, "a refused request must not change anything"
        assert http.get(f"/api/v1/namespaces/{ns}/pods/fresh").status_code == 404
        assert_alive(http, ns)
    finally:  # whatever a wrongly accepted request stored must not spoil the next case
        http.delete(f"/api/v1/namespaces/{ns}/pods/fresh", params={"gracePeriodSeconds": "0"})
        http.delete(f"/apis/apps/v1/namespaces/{ns}/deployments/fresh")


def test_body_over_3_mib_is_413(http, ns):
    before = snapshot(http, ns)
    big = pod_body(metadata={"name": "fresh", "annotations": {"blob": "x" * (3 * MIB)}})
    response = http.post(f"/api/v1/namespaces/{ns}/pods", content=json.dumps(big).encode(), headers=JSON)
    assert_status(response, 413, "RequestEntityTooLarge")
    # The same without a Content-Length (chunked upload).
    def chunks():
        data = json.dumps(big).encode()
        for start in range(0, len(data), 256 * 1024):
            yield data[start:start + 256 * 1024]
    response = http.post(f"/api/v1/namespaces/{ns}/pods", content=chunks(), headers=JSON)
    assert_status(response, 413, "RequestEntityTooLarge")
    response = http.patch(f"/api/v1/namespaces/{ns}/pods/existing", content=json.dumps(
        {"metadata": {"annotations": {"blob": "y" * (3 * MIB + 10)}}}).encode(),
        headers={"Content-Type": "application/merge-patch+json"})
    assert_status(response, 413, "RequestEntityTooLarge")
    assert snapshot(http, ns) == before
    assert_alive(http, ns)

    # Just under the limit is not refused for its size.
    fits = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"blob": "z" * (MIB)}}
    assert http.post(f"/api/v1/namespaces/{ns}/configmaps", json=fits).status_code == 201


def test_invalid_json_patch_operations(http, ns):
    path = f"/api/v1/namespaces/{ns}/pods/existing"
    headers = {"Content-Type": "application/json-patch+json"}
    before = snapshot(http, ns)
    for patch in (
        [{"op": "frobnicate", "path": "/metadata/labels/x", "value": "y"}],
        [{"op": "replace", "path": "/metadata/nothere/x", "value": 1}],
        [{"op": "remove", "path": "/spec/containers/7"}],
        [{"op": "test", "path": "/metadata/name", "value": "someone-else"}],
        [{"op": "add", "path": "no-leading-slash", "value": 1}],
        [{"op": "replace"}],
        ["not an operation"],
    ):
        response = http.patch(path, content=json.dumps(patch).encode(), headers=headers)
        assert response.status_code in (400, 422), (patch, response.status_code, response.text)
        status = response.json()
        assert status["kind"] == "Status" and status["reason"] in ("BadRequest", "Invalid") and status["message"]
    # A patch that applies but leaves an invalid object is refused by validation.
    response = http.patch(path, content=json.dumps([{"op": "replace", "path": "/spec/containers", "value": []}]).encode(),
                          headers=headers)
    assert_status(response, 422, "Invalid", "spec.containers")
    assert snapshot(http, ns) == before
    assert_alive(http, ns)


def assert_not_5xx(response: httpx.Response) -> None:
    assert response.status_code < 500, f"{response.request.method} {response.request.url} -> {response.status_code}: {response.text[:300]}"
    if response.status_code >= 400:
        status = response.json()
        assert status["kind"] == "Status" and status["code"] == response.status_code and status["reason"]


def bound_pod(http: httpx.Client, ns: str, name: str, **spec) -> str:
    body = pod_body(name)
    body["spec"].update(spec)
    assert http.post(f"/api/v1/namespaces/{ns}/pods", json=body).status_code == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": "n1"}}
    assert http.post(f"/api/v1/namespaces/{ns}/pods/{name}/binding", json=binding).status_code == 201
    return f"/api/v1/namespaces/{ns}/pods/{name}"


@pytest.mark.parametrize("where", ["query", "body", "pod spec"])
def test_absurd_grace_periods_are_not_5xx(http, ns, where):
    # gracePeriodSeconds is an int64: a huge one is a legal request, never an internal error.
    name = f"grace-{where.replace(' ', '-')}"
    huge = 10 ** 14
    try:
        if where == "pod spec":
            path = bound_pod(http, ns, name, terminationGracePeriodSeconds=huge)
            response = http.delete(path)
        elif where == "query":
            response = http.delete(bound_pod(http, ns, name), params={"gracePeriodSeconds": str(huge)})
        else:
            response = http.request("DELETE", bound_pod(http, ns, name),
                                    json={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": huge})
        assert_not_5xx(response)
        assert_alive(http, ns)
    finally:
        http.delete(f"/api/v1/namespaces/{ns}/pods/{name}", params={"gracePeriodSeconds": "0"})


DEPTH = 500
DEEP_OBJECT = '{"a":' * DEPTH + "{}" + "}" * DEPTH
DEEP_LIST = "[" * DEPTH + "]" * DEPTH
DEEP_CASES = [
    ("strategic merge patch", "PATCH", "pods/existing", "application/strategic-merge-patch+json",
     '{"spec":{"containers":[{"name":"c","x":' + DEEP_OBJECT + "}]}}"),
    ("merge patch", "PATCH", "pods/existing", "application/merge-patch+json", '{"metadata":{"labels":' + DEEP_OBJECT + "}}"),
    ("json patch value", "PATCH", "pods/existing", "application/json-patch+json",
     '[{"op":"add","path":"/metadata/annotations","value":' + DEEP_LIST + "}]"),
    ("create", "POST", "pods", "application/json", '{"metadata":{"name":"fresh"},"spec":' + DEEP_OBJECT + "}"),
    ("create, 100000 deep", "POST", "pods", "application/json", "[" * 100000 + "]" * 100000),
]


@pytest.mark.parametrize("method, where, content_type, body", [c[1:] for c in DEEP_CASES], ids=[c[0] for c in DEEP_CASES])
def test_deeply_nested_bodies_are_not_5xx(http, ns, method, where, content_type, body):
    before = snapshot(http, ns)
    response = http.request(method, f"/api/v1/namespaces/{ns}/{where}", content=body.encode(),
                            headers={"Content-Type": content_type})
    assert_not_5xx(response)
    assert snapshot(http, ns) == before
    assert_alive(http, ns)


def test_long_query_string_is_answered(http, ns):
    # Real API servers accept request lines up to 1 MiB (Go's default header limit): a long
    # label selector gets an answer, not a dropped connection.
    selector = "app in (" + ",".join(f"v{i}" for i in range(3000)) + ")"
    try:
        response = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector})
    except httpx.RemoteProtocolError as exc:
        pytest.fail(f"the server dropped the connection for a {len(selector)}-character label selector: {exc}")
    assert response.status_code == 200 and response.json()["items"] == []
    assert_alive(http, ns)


# --- fuzz ---------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
NAMEISH = st.one_of(st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True), TEXT, st.integers(), st.none(),
                    st.just(""), st.text(alphabet="aB-.", max_size=300))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                   st.floats(allow_nan=False, allow_infinity=False), TEXT)
JSONISH = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(TEXT, inner, max_size=4)), max_leaves=15)
KNOWN_KEYS = ["containers", "name", "image", "replicas", "selector", "matchLabels", "template", "metadata", "labels",
              "spec", "nodeName", "ports", "containerPort", "env", "value", "type", "data", "finalizers", "$patch",
              "matchExpressions", "operator", "values", "holderIdentity", "target", "kind", "apiVersion"]
KEYISH = st.one_of(st.sampled_from(KNOWN_KEYS), TEXT)
SPECISH = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(KEYISH, inner, max_size=5)), max_leaves=25)
API_VERSIONS = st.one_of(st.sampled_from(["v1", "apps/v1", "coordination.k8s.io/v1", "autoscaling/v1", "", "v2"]), JSONISH)
KINDS = st.one_of(st.sampled_from(["Pod", "Deployment", "ReplicaSet", "Namespace", "Node", "Service", "ConfigMap",
                                   "Endpoints", "Event", "Lease", "Scale", "Binding", "DeleteOptions",
                                   "ReplicationController", ""]), JSONISH)
METADATA = st.one_of(
    st.fixed_dictionaries({}, optional={
        "name": NAMEISH, "generateName": NAMEISH, "namespace": NAMEISH,
        "labels": st.one_of(st.dictionaries(NAMEISH.filter(lambda v: isinstance(v, str)), NAMEISH, max_size=3), JSONISH),
        "annotations": st.one_of(st.dictionaries(TEXT, TEXT, max_size=3), JSONISH),
        "resourceVersion": st.one_of(st.integers(), TEXT, st.just("1")),
        "finalizers": st.one_of(st.lists(TEXT, max_size=3), JSONISH),
        "ownerReferences": JSONISH, "uid": JSONISH, "deletionTimestamp": JSONISH,
        "creationTimestamp": JSONISH, "generation": JSONISH, "managedFields": JSONISH,
    }),
    JSONISH,
)
BODY = st.fixed_dictionaries({}, optional={
    "apiVersion": API_VERSIONS, "kind": KINDS, "metadata": METADATA, "spec": SPECISH, "status": SPECISH,
    "data": JSONISH, "target": JSONISH, "subsets": JSONISH, "involvedObject": JSONISH,
})
RAW_BODY = st.one_of(
    BODY.map(lambda d: json.dumps(d).encode()),
    st.lists(SPECISH, max_size=3).map(lambda v: json.dumps(v).encode()),  # JSON patches and arrays
    JSONISH.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=64),
    st.text(max_size=64).map(str.encode),
)

QUERY_KEYS = ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersionMatch", "timeoutSeconds",
              "dryRun", "fieldValidation", "fieldManager", "gracePeriodSeconds", "propagationPolicy",
              "allowWatchBookmarks", "pretty", "force", "orphanDependents", "includeObject", "sendInitialEvents",
              "container", "tailLines", "follow"]
# A resourceVersion far in the future makes the server wait 3 s and answer 504 Timeout, as Kubernetes
# does; keep generated values out of that range so the run stays fast and 5xx-free for a good reason.
RESOURCE_VERSIONS = st.one_of(st.sampled_from(["", "0", "1", "2"]),
                              st.text(alphabet=string.ascii_letters + "-.,", max_size=8))
QUERY = st.dictionaries(
    st.one_of(st.sampled_from(QUERY_KEYS), TEXT.filter(lambda k: k not in ("resourceVersion", "watch"))),
    st.one_of(TEXT, st.sampled_from(["", "0", "1", "-1", "true", "All", "Strict", "Orphan", "app=web", "a in (b)",
                                     "metadata.name=existing", "99999999999999999999"])),
    max_size=4,
).flatmap(lambda q: st.fixed_dictionaries(
    {}, optional={"resourceVersion": RESOURCE_VERSIONS, "watch": st.sampled_from(["true", "1", "false", "True"])}
).map(lambda extra: {**q, **extra}))

CONTENT_TYPES = st.sampled_from([
    "application/json", "application/yaml", "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", "",
    "application/vnd.kubernetes.protobuf", "application/json; charset=utf-8",
])
TARGETS = st.sampled_from([
    ("POST", "/api/v1/namespaces/{ns}/pods"),
    ("POST", "/api/v1/namespaces/{ns}/configmaps"),
    ("POST", "/api/v1/namespaces/{ns}/services"),
    ("POST", "/api/v1/namespaces/{ns}/events"),
    ("POST", "/api/v1/namespaces/{ns}/endpoints"),
    ("POST", "/apis/apps/v1/namespaces/{ns}/deployments"),
    ("POST", "/apis/apps/v1/namespaces/{ns}/replicasets"),
    ("POST", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"),
    ("POST", "/api/v1/namespaces/{ns}/replicationcontrollers"),
    ("PATCH", "/api/v1/namespaces/{ns}/replicationcontrollers/fuzz-rc"),
    ("PATCH", "/api/v1/namespaces/{ns}/replicationcontrollers/fuzz-rc/scale"),
    ("POST", "/api/v1/nodes"),
    ("POST", "/api/v1/namespaces"),
    ("PUT", "/api/v1/namespaces/{ns}/pods/existing"),
    ("PUT", "/api/v1/namespaces/{ns}/pods/existing/status"),
    ("PUT", "/apis/apps/v1/namespaces/{ns}/deployments/fuzz-deploy"),
    ("PUT", "/apis/apps/v1/namespaces/{ns}/deployments/fuzz-deploy/scale"),
    ("PUT", "/api/v1/namespaces/{ns}/configmaps/fuzz-cm"),
    ("PATCH", "/api/v1/namespaces/{ns}/pods/existing"),
    ("PATCH", "/api/v1/namespaces/{ns}/pods/existing/status"),
    ("PATCH", "/apis/apps/v1/namespaces/{ns}/deployments/fuzz-deploy"),
    ("PATCH", "/apis/apps/v1/namespaces/{ns}/deployments/fuzz-deploy/scale"),
    ("PATCH", "/api/v1/namespaces/{ns}/configmaps/fuzz-cm"),
    ("POST", "/api/v1/namespaces/{ns}/pods/existing/binding"),
    ("DELETE", "/api/v1/namespaces/{ns}/configmaps/fuzz-cm"),
    ("DELETE", "/api/v1/namespaces/{ns}/pods"),
    ("GET", "/api/v1/namespaces/{ns}/pods"),
    ("GET", "/api/v1/pods"),
    ("GET", "/apis/apps/v1/namespaces/{ns}/deployments"),
    ("GET", "/api/v1/namespaces/{ns}/pods/existing"),
    ("GET", "/api/v1/namespaces/{ns}/pods/existing/log"),
    ("GET", "/api/v1/namespaces"),
])


@pytest.fixture(scope="module")
def fuzz_ns(http) -> str:
    name = f"fuzz-{uuid.uuid4().hex[:8]}"
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    pod = {"metadata": {"name": "existing", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert http.post(f"/api/v1/namespaces/{name}/pods", json=pod).status_code == 201
    deploy = {"metadata": {"name": "fuzz-deploy"},
              "spec": {"selector": {"matchLabels": {"app": "f"}},
                       "template": {"metadata": {"labels": {"app": "f"}},
                                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    assert http.post(f"/apis/apps/v1/namespaces/{name}/deployments", json=deploy).status_code == 201
    assert http.post(f"/api/v1/namespaces/{name}/configmaps", json={"metadata": {"name": "fuzz-cm"}}).status_code == 201
    rc = {"metadata": {"name": "fuzz-rc"}, "spec": {"replicas": 0, "template": deploy["spec"]["template"]}}
    assert http.post(f"/api/v1/namespaces/{name}/replicationcontrollers", json=rc).status_code == 201
    return name


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow,
                                                                              HealthCheck.function_scoped_fixture])
@given(target=TARGETS, body=RAW_BODY, query=QUERY, content_type=CONTENT_TYPES)
def test_fuzz_never_5xx(http, fuzz_ns, target, body, query, content_type):
    method, path = target
    if http.get(f"/api/v1/namespaces/{fuzz_ns}/pods/existing").status_code == 404:  # a fuzzed delete took it
        http.post(f"/api/v1/namespaces/{fuzz_ns}/pods", json={
            "metadata": {"name": "existing"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    if query.get("watch") in ("true", "1", "True"):
        query = {**query, "timeoutSeconds": "1"}  # a quiet watch then ends within a second
    headers = {"Content-Type": content_type} if content_type else {}
    request = http.build_request(method, path.format(ns=fuzz_ns), params=query,
                                 content=body if method != "GET" else None, headers=headers)
    response = http.send(request, stream=True)  # a watch streams: read the status line only
    try:
        status = response.status_code
        if status >= 500 or response.headers.get("content-type", "").split(";")[0] not in ("application/json", "text/plain"):
            response.read()
            pytest.fail(f"{method} {request.url} ({content_type}) body={body[:300]!r} -> {status}: {response.text[:500]}")
        if status >= 400:
            response.read()
            problem = response.json()
            assert problem["kind"] == "Status" and problem["code"] == status and problem["reason"], problem
    finally:
        response.close()
    assert http.get("/version").status_code == 200

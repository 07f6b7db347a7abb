"""The official `kubernetes` Python client against a real hub, and the watch wire format it relies on."""

from __future__ import annotations

import json
import threading
import time
import uuid

import httpx
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def api_client(url: str, token: str) -> client.ApiClient:
    configuration = client.Configuration(host=url)
    configuration.api_key = {"authorization": token}  # as the admin (tests.conftest.Hub.token)
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)


@pytest.fixture(scope="module")
def api(hub):
    with api_client(hub.url, hub.token) as c:
        yield c


@pytest.fixture
def v1(api) -> client.CoreV1Api:
    return client.CoreV1Api(api)


@pytest.fixture
def apps(api) -> client.AppsV1Api:
    return client.AppsV1Api(api)


@pytest.fixture
def ns(v1) -> str:
    name = unique("py")
    created = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert created.status.phase == "Active"
    return name


def new_pod(name: str, labels: dict | None = None, image: str = "nginx:1.25") -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {"app": "py"}),
        spec=client.V1PodSpec(containers=[
            client.V1Container(name="web", image=image),
            client.V1Container(name="side", image="envoy:1"),
        ]),
    )


def bind(v1: client.CoreV1Api, ns: str, name: str, node: str = "node-1") -> None:
    body = client.V1Binding(metadata=client.V1ObjectMeta(name=name),
                            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node))
    # The answer is a Status, which the client cannot turn into a V1Binding: read it raw.
    response = v1.create_namespaced_pod_binding(name, ns, body, _preload_content=False)
    assert response.status == 201


# --- CRUD ---------------------------------------------------------------------------------------

def test_list_create_read(v1, ns):
    listed = v1.list_namespaced_pod(ns)
    assert listed.items == [] and int(listed.metadata.resource_version) > 0

    created = v1.create_namespaced_pod(ns, new_pod("a"))
    assert isinstance(created, client.V1Pod)
    assert created.metadata.namespace == ns and created.metadata.uid
    assert created.status.phase == "Pending"
    assert created.metadata.creation_timestamp is not None
    assert int(created.metadata.resource_version) > int(listed.metadata.resource_version)

    read = v1.read_namespaced_pod("a", ns)
    assert read.metadata.uid == created.metadata.uid
    assert [c.name for c in read.spec.containers] == ["web", "side"]

    listed = v1.list_namespaced_pod(ns)
    assert [p.metadata.name for p in listed.items] == ["a"]
    everywhere = v1.list_pod_for_all_namespaces(label_selector="app=py", field_selector=f"metadata.namespace={ns}")
    assert [(p.metadata.namespace, p.metadata.name) for p in everywhere.items] == [(ns, "a")]
    assert v1.list_namespaced_pod(ns, label_selector="app=other").items == []

    with pytest.raises(ApiException) as missing:
        v1.read_namespaced_pod("nope", ns)
    assert missing.value.status == 404
    assert json.loads(missing.value.body)["reason"] == "NotFound"

    with pytest.raises(ApiException) as duplicate:
        v1.create_namespaced_pod(ns, new_pod("a"))
    assert duplicate.value.status == 409
    status = json.loads(duplicate.value.body)
    assert (status["reason"], status["message"]) == ("AlreadyExists", 'pods "a" already exists')


TEMPLATE = {"metadata": {"labels": {"app": "py"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
SELECTOR = {"matchLabels": {"app": "py"}}
BEFORE_ANY_CONTROLLER = [  # (create method, list method, body): no controller runs beside this hub
    ("AppsV1Api", "replica_set", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                                  "spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    ("AppsV1Api", "stateful_set", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "sts"},
                                   "spec": {"serviceName": "sts", "selector": SELECTOR, "template": TEMPLATE}}),
    ("AppsV1Api", "daemon_set", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                                 "spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    ("CoreV1Api", "replication_controller", {"apiVersion": "v1", "kind": "ReplicationController",
                                             "metadata": {"name": "rc"}, "spec": {"template": TEMPLATE}}),
    ("PolicyV1Api", "pod_disruption_budget", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                              "metadata": {"name": "pdb"},
                                              "spec": {"minAvailable": 1, "selector": SELECTOR}}),
]


@pytest.mark.parametrize("group, kind, body", BEFORE_ANY_CONTROLLER, ids=[k for _, k, _ in BEFORE_ANY_CONTROLLER])
def test_a_new_workload_reads_before_its_controller_writes_a_status(api, ns, group, kind, body):
    """Go renders status fields without omitempty at zero; the client's models require them."""
    methods = getattr(client, group)(api)
    created = getattr(methods, f"create_namespaced_{kind}")(ns, body)
    assert created.metadata.name == body["metadata"]["name"]
    listed = getattr(methods, f"list_namespaced_{kind}")(ns)
    assert [item.metadata.name for item in listed.items] == [body["metadata"]["name"]]


def test_replace_then_stale_replace_conflicts(v1, ns):
    v1.create_namespaced_pod(ns, new_pod("r"))
    current = v1.read_namespaced_pod("r", ns)
    stale_rv = current.metadata.resource_version
    current.metadata.labels["stage"] = "one"
    replaced = v1.replace_namespaced_pod("r", ns, current)
    assert replaced.metadata.labels == {"app": "py", "stage": "one"}
    assert int(replaced.metadata.resource_version) > int(stale_rv)

    current.metadata.resource_version = stale_rv
    current.metadata.labels["stage"] = "two"
    with pytest.raises(ApiException) as conflict:
        v1.replace_namespaced_pod("r", ns, current)
    assert conflict.value.status == 409
    status = json.loads(conflict.value.body)
    assert status["reason"] == "Conflict"
    assert status["message"] == ('Operation cannot be fulfilled on pods "r": the object has been modified; '
                                 'please apply your changes to the latest version and try again')
    assert v1.read_namespaced_pod("r", ns).metadata.labels["stage"] == "one"


def test_patch_dict_is_strategic_merge(v1, apps, ns):
    v1.create_namespaced_pod(ns, new_pod("p"))
    patched = v1.patch_namespaced_pod("p", ns, {
        "metadata": {"labels": {"extra": "yes"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    })
    assert patched.metadata.labels == {"app": "py", "extra": "yes"}
    # Strategic: containers merge by name, the other container stays.
    assert [(c.name, c.image) for c in patched.spec.containers] == [("web", "nginx:1.27"), ("side", "envoy:1")]

    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="d"),
        spec=client.V1DeploymentSpec(
            replicas=1, selector=client.V1LabelSelector(match_labels={"app": "d"}),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "d"}),
                                              spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]))))
    created = apps.create_namespaced_deployment(ns, deployment)
    assert created.spec.strategy.type == "RollingUpdate" and created.metadata.generation == 1
    patched = apps.patch_namespaced_deployment("d", ns, {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3 and patched.metadata.generation == 2
    scale = apps.read_namespaced_deployment_scale("d", ns)
    assert (scale.spec.replicas, scale.status.selector) == (3, "app=d")
    scale = apps.patch_namespaced_deployment_scale("d", ns, {"spec": {"replicas": 5}})
    assert scale.spec.replicas == 5
    assert apps.read_namespaced_deployment("d", ns).spec.replicas == 5


def test_delete(v1, apps, ns):
    v1.create_namespaced_pod(ns, new_pod("gone"))
    last = v1.delete_namespaced_pod("gone", ns)
    assert isinstance(last, client.V1Pod) and last.metadata.name == "gone"
    with pytest.raises(ApiException) as missing:
        v1.read_namespaced_pod("gone", ns)
    assert missing.value.status == 404

    # A pod bound to a node goes gracefully: marked first, removed by a delete with grace 0.
    v1.create_namespaced_pod(ns, new_pod("bound"))
    bind(v1, ns, "bound")
    marked = v1.delete_namespaced_pod("bound", ns)
    assert marked.metadata.deletion_timestamp is not None
    assert marked.metadata.deletion_grace_period_seconds == 30
    assert v1.read_namespaced_pod("bound", ns).metadata.deletion_timestamp is not None
    v1.delete_namespaced_pod("bound", ns, body=client.V1DeleteOptions(grace_period_seconds=0))
    with pytest.raises(ApiException) as missing:
        v1.read_namespaced_pod("bound", ns)
    assert missing.value.status == 404

    apps.create_namespaced_deployment(ns, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    status = apps.delete_namespaced_deployment("dep", ns)  # typed `object` in the client: a plain dict
    assert (status["kind"], status["status"]) == ("Status", "Success")
    assert (status["details"]["name"], status["details"]["kind"], status["details"]["group"]) == ("dep", "deployments", "apps")
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("dep", ns)
    assert missing.value.status == 404


# --- watch --------------------------------------------------------------------------------------

def events_of(stream) -> list[tuple[str, str, object]]:
    return [(e["type"], e["object"].metadata.name, e["object"]) for e in stream]


def test_watch_resumes_from_resource_version(v1, ns):
    start_rv = v1.list_namespaced_pod(ns).metadata.resource_version
    v1.create_namespaced_pod(ns, new_pod("a"))
    v1.create_namespaced_pod(ns, new_pod("b"))
    v1.patch_namespaced_pod("a", ns, {"metadata": {"labels": {"step": "2"}}})
    v1.create_namespaced_pod(ns, new_pod("c"))
    bind(v1, ns, "c")
    v1.delete_namespaced_pod("a", ns)
    v1.delete_namespaced_pod("c", ns)  # graceful: only marked
    v1.delete_namespaced_pod("c", ns, grace_period_seconds=0)
    v1.delete_namespaced_pod("b", ns)

    w = watch.Watch()
    events = events_of(w.stream(v1.list_namespaced_pod, ns, resource_version=start_rv, timeout_seconds=1))
    assert [(t, n) for t, n, _ in events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("ADDED", "c"), ("MODIFIED", "c"),
        ("DELETED", "a"), ("MODIFIED", "c"), ("DELETED", "c"), ("DELETED", "b"),
    ]
    assert all(isinstance(obj, client.V1Pod) and obj.metadata.namespace == ns for _, _, obj in events)
    versions = [int(obj.metadata.resource_version) for _, _, obj in events]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert versions[0] > int(start_rv)
    assert w.resource_version == str(versions[-1])

    added_a, _, modified_a = events[0][2], events[1][2], events[2][2]
    assert "step" not in added_a.metadata.labels and modified_a.metadata.labels["step"] == "2"
    assert events[4][2].spec.node_name == "node-1"
    assert events[6][2].metadata.deletion_timestamp is not None
    assert events[6][2].metadata.deletion_grace_period_seconds == 30
    assert events[5][2].metadata.labels["step"] == "2"  # DELETED carries the last state

    # Resuming from the middle sends only what came after.
    middle = events[2][2].metadata.resource_version
    later = events_of(watch.Watch().stream(v1.list_namespaced_pod, ns, resource_version=middle, timeout_seconds=1))
    assert [(t, n) for t, n, _ in later] == [(t, n) for t, n, _ in events[3:]]

    # Without a resourceVersion the stream opens with the current objects as ADDED.
    v1.create_namespaced_pod(ns, new_pod("d"))
    fresh = events_of(watch.Watch().stream(v1.list_namespaced_pod, ns, timeout_seconds=1))
    assert [(t, n) for t, n, _ in fresh] == [("ADDED", "d")]


def test_watch_delivers_live_changes(v1, ns):
    rv = v1.list_namespaced_pod(ns).metadata.resource_version

    def writer():
        time.sleep(0.3)
        v1.create_namespaced_pod(ns, new_pod("live", labels={"app": "live"}))
        v1.patch_namespaced_pod("live", ns, {"metadata": {"labels": {"seen": "yes"}}})
        v1.delete_namespaced_pod("live", ns)

    thread = threading.Thread(target=writer)
    w = watch.Watch()
    seen = []
    started = time.monotonic()
    thread.start()
    for event in w.stream(v1.list_namespaced_pod, ns, resource_version=rv, label_selector="app=live", timeout_seconds=10):
        seen.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            w.stop()
            break
    thread.join()
    assert seen == [("ADDED", "live"), ("MODIFIED", "live"), ("DELETED", "live")]
    assert time.monotonic() - started < 5, "events must be flushed as they happen, not at the end of the watch"


def test_watch_wire_format(hub, v1, ns):
    rv = v1.list_namespaced_config_map(ns).metadata.resource_version
    for i in range(3):
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"w{i}"),
                                                               data={"text": "line one\nline two ✓"}))
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as http:
        path = f"/api/v1/namespaces/{ns}/configmaps"
        with http.stream("GET", path, params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.headers.get("transfer-encoding") == "chunked"
            assert "content-length" not in response.headers
            raw = b"".join(response.iter_raw())
        assert raw.endswith(b"\n")
        lines = raw.split(b"\n")[:-1]
        assert len(lines) == 3
        events = [json.loads(line) for line in lines]
        assert all(set(e) == {"type", "object"} for e in events)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", f"w{i}") for i in range(3)]
        assert events[0]["object"]["kind"] == "ConfigMap" and events[0]["object"]["apiVersion"] == "v1"
        assert events[0]["object"]["data"]["text"] == "line one\nline two ✓"

        # Each event is flushed at once: the first line arrives long before the watch times out.
        rv = events[-1]["object"]["metadata"]["resourceVersion"]
        timer = threading.Timer(0.5, lambda: v1.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="late"))))
        started = time.monotonic()
        timer.start()
        with http.stream("GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "8"}) as response:
            first = next(response.iter_lines())
            elapsed = time.monotonic() - started
        timer.join()
        assert json.loads(first)["object"]["metadata"]["name"] == "late"
        assert elapsed < 6, "the event came only when the 8 s watch ended: it was not flushed"


def test_watch_headers_are_sent_before_any_event(hub, ns):
    # The real server writes the status line and headers as soon as the watch starts; a client
    # blocks in its request call until they come (the Python client, client-go's Watch()).
    path = f"/api/v1/namespaces/{ns}/pods"
    timeout = httpx.Timeout(10, read=2)
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=timeout) as http:
        rv = http.get(path).json()["metadata"]["resourceVersion"]
        started = time.monotonic()
        try:
            with http.stream("GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "6"}) as response:
                waited = time.monotonic() - started
                assert response.status_code == 200
                assert response.headers["content-type"] == "application/json"
        except httpx.ReadTimeout:
            pytest.fail("no response headers within 2 s of opening an idle watch (timeoutSeconds=6)")
        assert waited < 1.5


# --- compaction ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compacting_hub(hub):
    server = type(hub)(env={"KK_LOG_MAX_ENTRIES": "5", "KK_COMPACT_INTERVAL": "0.2"}).start()
    yield server
    server.stop()


def wait_until_compacted(http: httpx.Client, ns: str, rv: str, timeout: float = 5) -> bool:
    """A list with limit and an exact old resourceVersion answers 410 once the log is compacted."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = http.get(f"/api/v1/namespaces/{ns}/configmaps", params={"limit": "1", "resourceVersion": rv})
        if response.status_code == 410:
            return True
        time.sleep(0.1)
    return False


def fill(v1: client.CoreV1Api, ns: str, count: int = 12) -> str:
    """Create `ns`, note its list revision, then write `count` objects past it."""
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    rv = v1.list_namespaced_config_map(ns).metadata.resource_version
    for i in range(count):
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"cm{i}")))
    return rv


# Keep this test first among the compaction tests: it needs a hub nobody has watched yet.
def test_log_is_compacted_without_any_watcher(compacting_hub):
    with api_client(compacting_hub.url, compacting_hub.token) as c, httpx.Client(base_url=compacting_hub.url, headers=compacting_hub.auth, timeout=10) as http:
        ns = unique("cmp")
        rv = fill(client.CoreV1Api(c), ns)
        assert wait_until_compacted(http, ns, rv), "the change log was never compacted (KK_COMPACT_INTERVAL=0.2)"


def test_watch_from_compacted_resource_version(compacting_hub):
    with api_client(compacting_hub.url, compacting_hub.token) as c, httpx.Client(base_url=compacting_hub.url, headers=compacting_hub.auth, timeout=10) as http:
        v1 = client.CoreV1Api(c)
        # A client is already watching, as on any real cluster.
        list(watch.Watch().stream(v1.list_namespace, resource_version=v1.list_namespace().metadata.resource_version,
                                  timeout_seconds=1))
        ns = unique("cmp")
        rv = fill(v1, ns)
        assert wait_until_compacted(http, ns, rv)

        # On the wire: HTTP 200, one ERROR event carrying a 410 Expired Status, then the stream ends.
        started = time.monotonic()
        with http.stream("GET", f"/api/v1/namespaces/{ns}/configmaps",
                         params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "30"}) as response:
            assert response.status_code == 200
            lines = [line for line in response.iter_lines()]
        assert time.monotonic() - started < 5
        assert len(lines) == 1
        event = json.loads(lines[0])
        assert event["type"] == "ERROR"
        status = event["object"]
        assert (status["kind"], status["status"], status["code"], status["reason"]) == ("Status", "Failure", 410, "Expired")
        assert status["message"].startswith(f"too old resource version: {rv} (")

        # The client with timeout_seconds does not retry: it raises at once.
        started = time.monotonic()
        with pytest.raises(ApiException) as expired:
            list(watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10))
        assert time.monotonic() - started < 5
        assert expired.value.status == 410
        assert expired.value.reason.startswith(f"Expired: too old resource version: {rv} (")

        # Without timeout_seconds it retries once from the same resourceVersion, then raises.
        with pytest.raises(ApiException) as expired:
            list(watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=rv))
        assert expired.value.status == 410

        # A list with an exact compacted resourceVersion is an HTTP 410 that the client raises.
        with pytest.raises(ApiException) as gone:
            v1.list_namespaced_config_map(ns, limit=2, resource_version=rv, resource_version_match="Exact")
        assert gone.value.status == 410 and json.loads(gone.value.body)["reason"] == "Expired"

        # A fresh watch from the current revision works.
        current = v1.list_namespaced_config_map(ns)
        assert len(current.items) == 12
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="after")))
        events = list(watch.Watch().stream(v1.list_namespaced_config_map, ns,
                                           resource_version=current.metadata.resource_version, timeout_seconds=1))
        assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "after")]

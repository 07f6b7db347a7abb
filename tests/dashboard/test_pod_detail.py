"""The pod detail partial: containers with image, state, restarts, env NAMES (never a value, not
even a literal one), mounts with their volume's source, the pod's Events newest first, and the
shell button for a running pod; read through the hub as the dashboard, a missing pod a 404."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.pod_detail import describe, state_text
from tests.dashboard.fakehub import status

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"nodeName": "node-1",
                "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}, {"name": "tls", "secret": {"secretName": "certs"}},
                            {"name": "sa", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}},
                                                                     {"configMap": {"name": "kube-root-ca.crt"}}]}}],
                "initContainers": [{"name": "setup", "image": "busybox"}],
                "containers": [{"name": "app", "image": "nginx:1.25",
                                "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                                        {"name": "GREETING", "value": "literal-value-not-shown"},
                                        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                                "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}],
                                "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"},
                                                 {"name": "tls", "mountPath": "/tls", "readOnly": True},
                                                 {"name": "sa", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}]},
       "status": {"phase": "Running", "podIP": "10.244.1.5",
                  "initContainerStatuses": [{"name": "setup", "restartCount": 0,
                                             "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}],
                  "containerStatuses": [{"name": "app", "restartCount": 2, "ready": True, "state": {"running": {}}}]}}
EVENTS = [{"metadata": {"name": "e1", "resourceVersion": "5"}, "type": "Normal", "reason": "Scheduled", "message": "assigned",
           "lastTimestamp": "2026-01-01T00:00:01Z"},
          {"metadata": {"name": "e2", "resourceVersion": "9"}, "type": "Warning", "reason": "BackOff", "count": 3,
           "message": "Back-off restarting", "lastTimestamp": "2026-01-01T00:00:09Z"}]


def test_the_detail_names_env_variables_and_never_a_value():
    detail = describe(POD, EVENTS)
    app = detail["containers"][1]
    assert [(e["name"], e["source"]) for e in app["env"]] == [
        ("PASSWORD", "Secret db/password"), ("GREETING", ""), ("NODE", "field spec.nodeName")]
    assert app["envFrom"] == ["ConfigMap settings (CFG_…)"]
    assert "literal-value-not-shown" not in repr(detail)


def test_containers_show_image_state_restarts_and_mounts_with_their_source():
    detail = describe(POD, EVENTS)
    setup, app = detail["containers"]
    assert (setup["name"], setup["init"], setup["state"], setup["reason"], setup["succeeded"]) == (
        "setup", True, "Terminated", "Completed (exit code 0)", True)
    assert app["succeeded"] is False
    assert (app["image"], app["state"], app["ready"], app["restarts"]) == ("nginx:1.25", "Running", True, 2)
    assert [(m["path"], m["kind"], m["source"], m["readOnly"]) for m in app["mounts"]] == [
        ("/etc/app", "ConfigMap", "settings", False), ("/tls", "Secret", "certs", True),
        ("/var/run/secrets/kubernetes.io/serviceaccount", "projected", "serviceAccountToken, ConfigMap/kube-root-ca.crt", False)]
    assert (detail["status"], detail["restarts"], detail["running"], detail["shellContainer"]) == ("Running", 2, True, "app")
    assert [e["reason"] for e in detail["events"]] == ["BackOff", "Scheduled"]


@pytest.mark.parametrize("container, expected", [
    ({"state": {"waiting": {"reason": "ImagePullBackOff"}}}, ("Waiting", "ImagePullBackOff")),
    ({"state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}, ("Terminated", "OOMKilled (exit code 137)")),
    (None, ("Waiting", "")),
])
def test_a_containers_state_reads_as_describe_prints_it(container, expected):
    assert state_text(container) == expected


def test_the_partial_reads_the_pod_and_its_events_through_the_hub(fake):
    fake.answers[("GET", "/api/v1/namespaces/default/pods/web")] = (200, POD)
    fake.answers[("GET", "/api/v1/namespaces/default/events")] = (200, {"items": EVENTS})
    answer = Client().get("/pods/default/web/")
    text = answer.content.decode()
    assert answer.status_code == 200
    assert "PASSWORD" in text and "Secret db/password" in text and "literal-value-not-shown" not in text
    assert 'data-shell-name="web"' in text and 'data-shell-container="app"' in text and "BackOff" in text
    listed = [r for r in fake.requests if r.path.endswith("/events")][-1]
    assert listed.query["fieldSelector"] == "involvedObject.kind=Pod,involvedObject.name=web,involvedObject.namespace=default"
    assert listed.agent.startswith("dashboard")


def test_a_pod_the_hub_does_not_have_is_its_404_message(fake):
    fake.answers[("GET", "/api/v1/namespaces/default/pods/gone")] = (404, status(404, "NotFound", 'pods "gone" not found'))
    answer = Client().get("/pods/default/gone/")
    assert answer.status_code == 404 and 'pods &quot;gone&quot; not found' in answer.content.decode()


def test_the_partial_speaks_korean(fake):
    fake.answers[("GET", "/api/v1/namespaces/default/pods/web")] = (200, POD)
    fake.answers[("GET", "/api/v1/namespaces/default/events")] = (200, {"items": []})
    text = Client(headers={"accept-language": "ko"}).get("/pods/default/web/").content.decode()
    assert "컨테이너" in text and "환경 변수 (이름만)" in text and "이 파드에 관한 이벤트가 없습니다." in text

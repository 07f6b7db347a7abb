"""Pod and pod-template defaults as upstream's pkg/apis/core/v1/defaults.go fills them."""

from __future__ import annotations

import copy

from control.kinds.pod_defaults import image_tag, pod_defaults, pod_spec_defaults


def pod(**spec) -> dict:
    body = {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": body}


def test_a_volume_with_only_a_name_is_an_empty_dir_and_sources_get_their_modes():
    obj = pod(volumes=[{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "c"}},
                       {"name": "sec", "secret": {"secretName": "s", "defaultMode": 0o400}},
                       {"name": "host", "hostPath": {"path": "/tmp"}},
                       {"name": "info", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                       {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}])
    pod_defaults(obj)
    scratch, cfg, sec, host, info, token = obj["spec"]["volumes"]
    assert scratch == {"name": "scratch", "emptyDir": {}}
    assert cfg["configMap"]["defaultMode"] == 420 and sec["secret"]["defaultMode"] == 0o400
    assert host["hostPath"] == {"path": "/tmp", "type": ""}
    assert info["downwardAPI"]["defaultMode"] == 420
    assert info["downwardAPI"]["items"][0]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert token["projected"]["defaultMode"] == 420
    assert token["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3600
    assert "emptyDir" not in cfg, "a volume with a source keeps only that source"


def test_spec_and_container_defaults():
    obj = pod()
    obj["spec"]["containers"][0].update({
        "ports": [{"containerPort": 80}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "resources": {"limits": {"cpu": "1", "memory": "64Mi"}, "requests": {"cpu": "500m"}},
    })
    pod_defaults(obj)
    spec, container = obj["spec"], obj["spec"]["containers"][0]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["schedulerName"]) == ("Always", "ClusterFirst", "default-scheduler")
    assert (spec["terminationGracePeriodSeconds"], spec["securityContext"], spec["enableServiceLinks"]) == (30, {}, True)
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert (container["terminationMessagePath"], container["terminationMessagePolicy"]) == ("/dev/termination-log", "File")
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                          "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert container["readinessProbe"]["periodSeconds"] == 5
    assert container["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/stop", "scheme": "HTTP"}
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "64Mi"}, "requests default to limits"
    again = copy.deepcopy(obj)
    pod_defaults(again)
    assert again == obj, "defaults are idempotent"


def test_host_network_pods_publish_their_ports_on_the_host():
    obj = pod(hostNetwork=True)
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9091}]
    pod_defaults(obj)
    assert [p["hostPort"] for p in obj["spec"]["containers"][0]["ports"]] == [8080, 9091]


def test_pod_only_defaults_stay_out_of_pod_templates():
    spec = pod()["spec"]
    spec["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    pod_spec_defaults(spec)
    assert "enableServiceLinks" not in spec and "tolerations" not in spec
    assert "requests" not in spec["containers"][0]["resources"]
    assert spec["restartPolicy"] == "Always"


def test_pull_policy_follows_the_tag():
    assert [image_tag(i) for i in ("nginx", "nginx:latest", "nginx:1.25", "reg:5000/app", "reg:5000/app:v1",
                                   "app@sha256:abc", "app:latest@sha256:abc")] == \
        ["latest", "latest", "1.25", "latest", "v1", "", "latest"]
    for image, policy in (("nginx", "Always"), ("nginx:1.25", "IfNotPresent"), ("app@sha256:abc", "IfNotPresent")):
        spec = {"containers": [{"name": "c", "image": image}]}
        pod_spec_defaults(spec)
        assert spec["containers"][0]["imagePullPolicy"] == policy, image

"""The simulated registry and the image manager on a FakeClock: references, the catalogue, pull
policies, pull secrets, the ErrImagePull/ImagePullBackOff back-off and what the pod worker shows."""

from __future__ import annotations

import base64
import copy
import json

import pytest
import yaml

from control.client.resources import PODS
from control.clock import FakeClock
from control.kubelet.images import DATA_FILE, InvalidImage, builtin, container_ports, parse_reference
from control.kubelet.pulls import ImageManager, secret_registries
from control.kubelet.runtime import CacheSources
from control.client.informer import Cache
from tests.kubelet.test_pods import KEY, Node, manifest, run

NOT_FOUND = ('rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/ngnix:latestt": '
             'failed to resolve reference "docker.io/library/ngnix:latestt": docker.io/library/ngnix:latestt: not found')


def pod(image, uid="u1", secrets=(), policy=None, namespace="default"):
    container = {"name": "c", "image": image, **({"imagePullPolicy": policy} if policy else {})}
    return {"metadata": {"name": "p", "namespace": namespace, "uid": uid},
            "spec": {"containers": [container], "imagePullSecrets": [{"name": s} for s in secrets]}}


def ensure(manager, p, now, first=True):
    return manager.ensure(p, p["spec"]["containers"][0], first, now)


def caches(*objects):
    configmaps, secrets = Cache(), Cache()
    for obj in objects:
        (secrets if obj["kind"] == "Secret" else configmaps).put(obj)
    return CacheSources(configmaps, secrets)


def docker_secret(name, server):
    config = {"auths": {server: {"username": "u", "password": "p", "auth": base64.b64encode(b"u:p").decode()}}}
    return {"kind": "Secret", "metadata": {"name": name, "namespace": "default"}, "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()}}


def test_references_normalise_as_containerd_does():
    assert str(parse_reference("nginx")) == "docker.io/library/nginx:latest"
    assert str(parse_reference("bitnami/redis:7")) == "docker.io/bitnami/redis:7"
    assert str(parse_reference("index.docker.io/library/nginx:1.27")) == "docker.io/library/nginx:1.27"
    assert str(parse_reference("localhost:5000/app")) == "localhost:5000/app:latest"
    assert parse_reference("registry.k8s.io/e2e-test-images/agnhost:2.53").path == "e2e-test-images/agnhost"
    with pytest.raises(InvalidImage, match="repository name must be lowercase"):
        parse_reference("Nginx")
    with pytest.raises(InvalidImage, match="invalid reference format"):
        parse_reference("nginx:bad tag")


def test_the_catalogue_knows_tags_variants_and_digests():
    catalogue = builtin()
    assert catalogue.find(parse_reference("nginx:1.27")) and catalogue.find(parse_reference("nginx:1.27-alpine"))
    assert catalogue.find(parse_reference("nginx")) and catalogue.find(parse_reference("busybox:1.36"))
    assert catalogue.find(parse_reference("nginx@sha256:" + "a" * 64))
    assert catalogue.find(parse_reference("nginx:latestt")) is None and catalogue.find(parse_reference("ngnix")) is None
    assert catalogue.find(parse_reference("registry.k8s.io/pause:3.10")).server
    assert not catalogue.find(parse_reference("python:3.12")).server
    assert container_ports({"image": "redis:7"}) == (6379,)
    assert container_ports({"image": "redis:7", "ports": [{"containerPort": 7000}]}) == (7000,)


def test_the_data_file_reads_the_same_with_libyaml_as_with_pure_python():
    text = DATA_FILE.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == yaml.safe_load(text)


def test_an_unknown_tag_is_err_image_pull_then_back_off_doubling_to_the_cap():
    manager = ImageManager(FakeClock(), caches())
    p = pod("ngnix:latestt")
    first = ensure(manager, p, 0.0)
    assert first.hold == ("ErrImagePull", NOT_FOUND)
    assert first.events == [("Normal", "Pulling", 'Pulling image "ngnix:latestt"'),
                            ("Warning", "Failed", f'Failed to pull image "ngnix:latestt": {NOT_FOUND}'),
                            ("Warning", "Failed", "Error: ErrImagePull")]
    assert first.wake == 5.0
    assert ensure(manager, p, 4.0).hold == ("ErrImagePull", NOT_FOUND), "ErrImagePull is seen first"
    backing = ensure(manager, p, 5.0)
    assert backing.hold == ("ImagePullBackOff", f'Back-off pulling image "ngnix:latestt": ErrImagePull: {NOT_FOUND}')
    assert ("Normal", "BackOff", 'Back-off pulling image "ngnix:latestt"') in backing.events and backing.wake == 10.0
    now, delays = 10.0, []
    for _ in range(7):
        again = ensure(manager, p, now)
        assert again.hold[0] == "ErrImagePull"
        delay = manager.failures[("u1", "ngnix:latestt")].delay
        delays.append(delay)
        now += delay
    assert delays == [20, 40, 80, 160, 300, 300, 300]


def test_set_image_to_a_good_tag_pulls_at_once_and_if_not_present_pulls_once_per_node():
    manager = ImageManager(FakeClock(), caches())
    assert ensure(manager, pod("ngnix:latestt"), 0.0).hold[0] == "ErrImagePull"
    fixed = pod("nginx:1.27")
    assert ensure(manager, fixed, 1.0).hold is None
    told = manager.started_events("u1", "c", "nginx:1.27")
    assert [reason for _, reason, _ in told] == ["Pulling", "Pulled"]
    assert told[1][2] == 'Successfully pulled image "nginx:1.27" in 0s (0s including waiting). Image size: 72953212 bytes.'
    assert ensure(manager, pod("nginx:1.27", uid="u2"), 2.0).hold is None
    assert manager.started_events("u2", "c", "nginx:1.27") == [
        ("Normal", "Pulled", 'Container image "nginx:1.27" already present on machine')]


def test_always_pulls_each_time_and_never_needs_the_image_on_the_node():
    manager = ImageManager(FakeClock(), caches())
    never = ensure(manager, pod("redis:7", policy="Never"), 0.0)
    assert never.hold == ("ErrImageNeverPull", 'Container image "redis:7" is not present with pull policy of Never')
    assert ensure(manager, pod("redis:7", uid="u2"), 0.0).hold is None
    assert ensure(manager, pod("redis:7", uid="u3", policy="Never"), 0.0).hold is None
    assert ensure(manager, pod("redis:7", uid="u4", policy="Always"), 0.0).hold is None
    assert [r for _, r, _ in manager.started_events("u4", "c", "redis:7")] == ["Pulling", "Pulled"]


def test_a_pull_takes_its_time_in_container_creating():
    manager = ImageManager(FakeClock(), caches(), pull_seconds=2.0)
    started = ensure(manager, pod("httpd:2.4"), 0.0)
    assert started.hold == ("ContainerCreating", "") and started.wake == 2.0
    assert started.events == [("Normal", "Pulling", 'Pulling image "httpd:2.4"')]
    assert ensure(manager, pod("httpd:2.4"), 1.0).hold == ("ContainerCreating", "")
    assert ensure(manager, pod("httpd:2.4"), 2.0).hold is None
    assert manager.started_events("u1", "c", "httpd:2.4")[0][2].startswith('Successfully pulled image "httpd:2.4" in 2s')


def test_private_images_need_a_pull_secret_naming_their_registry():
    image = "registry.kitchen.local/secret-recipes/sauce:1.0"
    denied = ensure(ImageManager(FakeClock(), caches()), pod(image, secrets=["regcred"]), 0.0)
    assert denied.hold[0] == "ErrImagePull" and "pull access denied" in denied.hold[1]
    assert denied.hold[1].endswith("insufficient_scope: authorization failed")
    assert ("Warning", "FailedToRetrieveImagePullSecret", "Unable to retrieve some image pull secrets (regcred); "
            "attempting to pull the image may not succeed.") in denied.events
    wrong = caches(docker_secret("regcred", "https://index.docker.io/v1/"))
    assert ensure(ImageManager(FakeClock(), wrong), pod(image, secrets=["regcred"]), 0.0).hold[0] == "ErrImagePull"
    right = caches(docker_secret("regcred", "registry.kitchen.local"))
    assert ensure(ImageManager(FakeClock(), right), pod(image, secrets=["regcred"]), 0.0).hold is None
    hub = caches(docker_secret("regcred", "https://index.docker.io/v1/"))
    assert ensure(ImageManager(FakeClock(), hub), pod("kubekitchen/private-pasta:1.0", secrets=["regcred"]), 0).hold is None
    assert secret_registries({"data": {".dockerconfigjson": "not base64!"}}) == set()


def test_unknown_registries_and_bad_names():
    manager = ImageManager(FakeClock(), caches())
    nohost = ensure(manager, pod("myregistry.example.com/app:1"), 0.0)
    assert "dial tcp: lookup myregistry.example.com: no such host" in nohost.hold[1]
    bad = ensure(manager, pod("Nginx"), 0.0)
    assert bad.hold == ("InvalidImageName", 'Failed to apply default image tag "Nginx": couldn\'t parse image name '
                        '"Nginx": invalid reference format: repository name must be lowercase')


def test_images_added_through_the_configmap():
    configmap = {"kind": "ConfigMap", "metadata": {"name": "kubekitchen-images", "namespace": "kube-system"},
                 "data": {"myapp": "image: registry.example.com/team/myapp\ntags: ['1.0']\nports: [8080]\n",
                          "nginx-extra": "image: nginx\ntags: ['9.9']\n", "broken": "- not a mapping"}}
    manager = ImageManager(FakeClock(), caches(configmap))
    assert ensure(manager, pod("registry.example.com/team/myapp:1.0"), 0.0).hold is None
    assert ensure(manager, pod("nginx:9.9", uid="u2"), 0.0).hold is None
    assert ensure(manager, pod("nginx:1.27", uid="u3"), 0.0).hold is None, "the built-in tags stay"
    assert ensure(manager, pod("registry.example.com/team/myapp:2.0", uid="u4"), 0.0).hold[0] == "ErrImagePull"


def test_the_pod_worker_shows_err_image_pull_then_back_off_and_set_image_fixes_it():
    node = Node()

    async def scenario():
        bad = manifest()
        bad["spec"]["containers"][0]["image"] = "ngnix:latestt"
        node.submit(bad)
        await node.reconcile()
        assert node.state() == {"waiting": {"reason": "ErrImagePull", "message": NOT_FOUND}}
        assert node.pod()["status"]["phase"] == "Pending"
        assert node.events.reasons() == ["Pulling", "Failed", "Failed"]
        await node.clock.advance(5)
        await node.reconcile()
        assert node.state()["waiting"]["reason"] == "ImagePullBackOff"
        assert node.events.reasons()[-2:] == ["BackOff", "Failed"]
        fixed = copy.deepcopy(node.pod())
        fixed["spec"]["containers"][0]["image"] = "nginx:1.27"
        node.hub.put(PODS, fixed)
        node.sync()
        await node.reconcile(KEY)
        assert "running" in node.state() and node.pod()["status"]["phase"] == "Running"
        assert node.events.reasons()[-4:] == ["Pulling", "Pulled", "Created", "Started"]

    run(scenario)


def test_set_image_on_a_running_container_restarts_it_at_once_with_the_new_image():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        assert "running" in node.state()
        await node.clock.advance(30)
        changed = copy.deepcopy(node.pod())
        changed["spec"]["containers"][0]["image"] = "nginx:1.28"
        node.hub.put(PODS, changed)
        node.sync()
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert "running" in status["state"] and status["restartCount"] == 1 and status["image"] == "nginx:1.28"
        assert (status["lastState"]["terminated"]["reason"], status["lastState"]["terminated"]["exitCode"]) == \
            ("Completed", 0)
        assert node.events.told[-5][2:] == ("Killing", "Container app definition changed, will be restarted")
        assert node.events.reasons()[-4:] == ["Pulling", "Pulled", "Created", "Started"]
        await node.reconcile()
        assert node.pod()["status"]["containerStatuses"][0]["restartCount"] == 1, "once, not at every look"
        broken = copy.deepcopy(node.pod())
        broken["spec"]["containers"][0]["image"] = "nginx:9.99"
        node.hub.put(PODS, broken)
        node.sync()
        await node.reconcile()
        assert node.state()["waiting"]["reason"] == "ErrImagePull"

    run(scenario)


def test_an_app_image_is_judged_when_its_turn_comes_after_the_init_containers():
    node = Node()

    async def scenario():
        pod = manifest(initContainers=[{"name": "wait", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 5"]}])
        pod["spec"]["containers"][0]["image"] = "ngnix:latestt"
        node.submit(pod)
        await node.reconcile()
        assert "Failed" not in node.events.reasons(), "nothing is told of the app container while init runs"
        assert node.state()["waiting"]["reason"] == "PodInitializing"
        await node.clock.advance(5)
        await node.reconcile()
        await node.reconcile()
        assert node.state()["waiting"]["reason"] in ("ErrImagePull", "ImagePullBackOff")
        assert "running" not in node.state()
        assert ("web", "Warning", "Failed", f'Failed to pull image "ngnix:latestt": {NOT_FOUND}') in node.events.told

    run(scenario)

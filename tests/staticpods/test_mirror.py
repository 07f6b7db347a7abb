"""Mirror pods as upstream's kubelet makes them, and their status from what the runtime saw."""

from __future__ import annotations

from pathlib import Path

from control.staticpods import manifests as files
from control.staticpods.mirror import (HASH, MIRROR, SEEN, SOURCE, ContainerView, config_hash, mirror_pod,
                                       pod_status, same_status)


def manifest(tmp_path: Path, component: str = "kube-scheduler") -> files.Manifest:
    files.write_defaults(tmp_path)
    path = files.folder_of(tmp_path) / f"{component}.yaml"
    return files.parse(path, path.read_text())


def test_a_mirror_pod_carries_the_kubelets_annotations_and_its_node_as_owner(tmp_path):
    pod = mirror_pod(manifest(tmp_path), "node-1", "uid-of-node-1", 1_700_000_000.5)
    meta = pod["metadata"]
    assert meta["name"] == "kube-scheduler-node-1" and meta["namespace"] == "kube-system"
    assert meta["annotations"][SOURCE] == "file"
    assert meta["annotations"][MIRROR] == meta["annotations"][HASH] == config_hash(manifest(tmp_path), "node-1")
    assert meta["annotations"][SEEN].startswith("2023-11-14T22:13:20.5")
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "node-1",
                                        "uid": "uid-of-node-1", "controller": True}]
    assert pod["spec"]["nodeName"] == "node-1"
    assert {"operator": "Exists", "effect": "NoExecute"} in pod["spec"]["tolerations"]
    assert "status" not in pod and "uid" not in meta


def test_the_hash_follows_the_file_and_the_node(tmp_path):
    first = manifest(tmp_path)
    changed = files.parse(first.path, first.text.replace("--leader-elect=true", "--leader-elect=false"))
    assert config_hash(first, "node-1") != config_hash(changed, "node-1")
    assert config_hash(first, "node-1") != config_hash(first, "node-2")
    assert config_hash(first, "node-1") == config_hash(files.parse(first.path, first.text), "node-1")


def test_a_file_without_a_namespace_makes_a_pod_in_default(tmp_path):
    path = tmp_path / "web.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: nginx}]}\n")
    assert mirror_pod(files.parse(path, path.read_text()), "node-1", "u", 0)["metadata"]["namespace"] == "default"


def test_status_running_ready_with_restarts_counted(tmp_path):
    pod = mirror_pod(manifest(tmp_path), "node-1", "u", 100)
    status = pod_status(pod, ContainerView("running", 2, started_at=150, last_exit_code=1, last_reason="Error",
                                           last_started_at=120, last_finished_at=140), 100, "127.0.1.1", 160)
    container = status["containerStatuses"][0]
    assert status["phase"] == "Running" and status["podIP"] == status["hostIP"] == "127.0.1.1"
    assert container["ready"] and container["restartCount"] == 2 and "running" in container["state"]
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert container["containerID"].startswith("containerd://")
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    assert ready["Ready"] == ready["ContainersReady"] == "True"


def test_status_crash_loop_and_pull_back_off_and_a_stop_on_purpose(tmp_path):
    pod = mirror_pod(manifest(tmp_path), "node-1", "u", 100)
    crash = pod_status(pod, ContainerView("waiting", 3, reason="CrashLoopBackOff", message="back-off 8s",
                                          last_exit_code=128, last_reason="StartError", last_message="exec: no"),
                       100, "127.0.1.1", 160)
    container = crash["containerStatuses"][0]
    assert container["state"] == {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 8s"}}
    assert container["lastState"]["terminated"]["reason"] == "StartError" and not container["ready"]
    assert {c["type"]: c.get("reason") for c in crash["conditions"]}["Ready"] == "ContainersNotReady"
    stopped = pod_status(pod, ContainerView("stopped", 0, last_started_at=110, last_finished_at=150), 100, "h", 160)
    assert stopped["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert stopped["containerStatuses"][0]["lastState"] == {}


def test_a_status_differing_only_in_transition_times_is_the_same(tmp_path):
    pod = mirror_pod(manifest(tmp_path), "node-1", "u", 100)
    view = ContainerView("running", 0, started_at=100)
    assert same_status(pod_status(pod, view, 100, "h", 110), pod_status(pod, view, 100, "h", 190))
    assert not same_status(pod_status(pod, view, 100, "h", 110),
                           pod_status(pod, ContainerView("running", 1, started_at=100), 100, "h", 110))

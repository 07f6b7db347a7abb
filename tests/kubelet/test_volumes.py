"""The volume manager and the container's mounted filesystem: projected volumes refreshed in place
(read-only), subPath copies that never change, an emptyDir shared by the pod's containers, a
claim's directory on disk that outlives the pod, and disk access that cannot leave its root."""

from __future__ import annotations

import os

import pytest

from control.kubelet.envvars import NodeFacts
from control.kubelet.filesystem import FsError
from control.kubelet.projection import MountError
from control.kubelet.storage import DiskTree, MemoryTree
from control.kubelet.volumes import VolumeManager
from tests.kubelet.test_envvars import Sources

FACTS = NodeFacts(pod_ip="10.244.1.5")


def no_tokens(audience, seconds):
    raise MountError("no tokens here")


def pod(uid="u-1", claim="data"):
    mounts = [{"name": "config", "mountPath": "/etc/config"},
              {"name": "config", "mountPath": "/etc/app.conf", "subPath": "app.conf"},
              {"name": "scratch", "mountPath": "/cache"},
              {"name": "data", "mountPath": "/data"},
              {"name": "data", "mountPath": "/srv/html", "subPath": "html", "readOnly": True}]
    return {"metadata": {"name": "web", "namespace": "default", "uid": uid},
            "spec": {"containers": [{"name": "app", "volumeMounts": mounts},
                                    {"name": "side", "volumeMounts": [{"name": "scratch", "mountPath": "/shared"}]}],
                     "volumes": [{"name": "config", "configMap": {"name": "app", "defaultMode": 0o440}},
                                 {"name": "scratch", "emptyDir": {}},
                                 {"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}}


def sources(app_conf="v1"):
    return Sources(configmaps={("default", "app"): {"data": {"app.conf": app_conf, "mode": "fast"}}})


def test_mounted_volumes_are_seen_and_refreshed_except_sub_path_copies(tmp_path):
    volumes, p = VolumeManager(tmp_path), pod()
    assert volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"}) == []
    app = volumes.filesystem(p, p["spec"]["containers"][0], "10.244.1.5")
    assert app.read("/etc/config/app.conf") == b"v1" and app.list_dir("/etc/config") == ["app.conf", "mode"]
    assert app.read("/etc/app.conf") == b"v1" and app.mode("/etc/config/mode") == 0o440
    assert b"10.244.1.5\tweb" in app.read("/etc/hosts")
    volumes.sync(p, sources("v2"), FACTS, no_tokens, {})
    assert app.read("/etc/config/app.conf") == b"v2", "a mounted ConfigMap follows its changes"
    assert app.read("/etc/app.conf") == b"v1", "a subPath mount keeps what it had at the start"
    for path in ("/etc/config/new", "/etc/config/mode", "/etc/app.conf"):
        with pytest.raises(FsError, match="Read-only file system"):
            app.write(path, b"x")


def test_a_volume_that_was_set_up_keeps_its_content_when_its_source_goes(tmp_path):
    volumes, p = VolumeManager(tmp_path), pod()
    volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"})
    assert volumes.sync(p, Sources(), FACTS, no_tokens, {}) == []
    app = volumes.filesystem(p, p["spec"]["containers"][0], "")
    assert app.read("/etc/config/app.conf") == b"v1"


def test_failed_mounts_have_kubernetes_messages(tmp_path):
    volumes, p = VolumeManager(tmp_path), pod()
    not_bound = MountError("error processing PVC default/data: PVC is not bound")
    assert volumes.sync(p, Sources(), FACTS, no_tokens, {"data": not_bound}) == [
        'MountVolume.SetUp failed for volume "config" : configmap "app" not found',
        "Unable to attach or mount volumes: unmounted volumes=[data]: error processing PVC default/data: PVC is not bound"]
    assert volumes.sync(p, sources(), FACTS, no_tokens, {"data": "../../etc"}) == [
        'Unable to attach or mount volumes: unmounted volumes=[data]: MountVolume.SetUp failed for volume "../../etc" : '
        'invalid volume name']
    assert not (tmp_path.parent / "etc").exists()


def test_an_empty_dir_is_shared_by_the_pods_containers_and_goes_with_the_pod(tmp_path):
    volumes, p = VolumeManager(tmp_path), pod()
    volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"})
    app = volumes.filesystem(p, p["spec"]["containers"][0], "")
    side = volumes.filesystem(p, p["spec"]["containers"][1], "")
    app.write("/cache/note", b"from app")
    assert side.read("/shared/note") == b"from app" and side.list_dir("/shared") == ["note"]
    restarted = volumes.filesystem(p, p["spec"]["containers"][0], "")
    assert restarted.read("/cache/note") == b"from app", "an emptyDir survives a container restart"
    volumes.forget("u-1")
    again = pod(uid="u-2")
    volumes.sync(again, sources(), FACTS, no_tokens, {"data": "pv-1"})
    assert not volumes.filesystem(again, again["spec"]["containers"][0], "").exists("/cache/note")


def test_a_claim_is_a_directory_on_disk_that_outlives_the_pod(tmp_path):
    volumes, p = VolumeManager(tmp_path), pod()
    volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"})
    app = volumes.filesystem(p, p["spec"]["containers"][0], "")
    assert app.is_dir("/data/html"), "the kubelet makes a missing subPath directory"
    app.write("/data/html/index.html", b"<h1>hi</h1>")
    app.write("/data/log", b"one\n")
    app.write("/data/log", b"two\n", append=True)
    assert (tmp_path / "volumes" / "pv-1" / "log").read_bytes() == b"one\ntwo\n"
    assert app.read("/srv/html/index.html") == b"<h1>hi</h1>"
    with pytest.raises(FsError, match="Read-only file system"):
        app.write("/srv/html/x", b"")
    volumes.forget("u-1")
    later = pod(uid="u-9")
    volumes.sync(later, sources(), FACTS, no_tokens, {"data": "pv-1"})
    seen = volumes.filesystem(later, later["spec"]["containers"][0], "")
    assert seen.read("/data/log") == b"one\ntwo\n" and seen.list_dir("/data") == ["html", "log"]
    app.remove("/data/html", recursive=True)
    assert not (tmp_path / "volumes" / "pv-1" / "html").exists()


def test_disk_access_never_leaves_the_volume(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("keep out")
    tree = DiskTree(tmp_path / "volumes" / "pv-1")
    os.symlink(outside, tmp_path / "volumes" / "pv-1" / "link")
    for path in ("/../secret.txt", "/a/../../secret.txt", "/link"):
        with pytest.raises(FsError):
            tree.read(path)
        with pytest.raises(FsError):
            tree.write(path, b"x")
    assert outside.read_text() == "keep out"


def test_files_are_bounded_in_size(tmp_path):
    for tree in (MemoryTree(), DiskTree(tmp_path / "v")):
        tree.write("/big", b"x" * (8 * 1024 * 1024))
        with pytest.raises(FsError, match="File too large"):
            tree.write("/big", b"x", append=True)


def test_sub_path_expr_expands_the_runs_env(tmp_path):
    volumes = VolumeManager(tmp_path)
    p = pod()
    p["spec"]["containers"][1]["volumeMounts"] = [{"name": "scratch", "mountPath": "/logs", "subPathExpr": "$(POD_NAME)"}]
    volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"})
    side = volumes.filesystem(p, p["spec"]["containers"][1], "", {"POD_NAME": "web-0"})
    side.write("/logs/out", b"x")
    app = volumes.filesystem(p, p["spec"]["containers"][0], "")
    assert app.read("/cache/web-0/out") == b"x"


def test_hostname_subdomain_and_host_aliases_shape_etc_hosts(tmp_path):
    volumes = VolumeManager(tmp_path)
    p = pod()
    p["metadata"]["name"] = "web-0"
    p["spec"].update(subdomain="nginx", hostAliases=[{"ip": "10.1.2.3", "hostnames": ["foo.local", "bar.local"]}])
    volumes.sync(p, sources(), FACTS, no_tokens, {"data": "pv-1"})
    fs = volumes.filesystem(p, p["spec"]["containers"][1], "10.244.1.5")
    assert fs.read("/etc/hostname") == b"web-0\n"
    assert fs.read("/etc/hosts").decode().endswith(
        "fe00::2\tip6-allrouters\n10.244.1.5\tweb-0.nginx.default.svc.cluster.local\tweb-0\n\n"
        "# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n")
    p["spec"]["hostname"] = "db"
    assert volumes.filesystem(p, p["spec"]["containers"][1], "10.244.1.5").read("/etc/hostname") == b"db\n"

"""The static pod manifests: kubeadm's defaults written once, every file read without raising,
and the container runtime's verdict on a component's file."""

from __future__ import annotations

from pathlib import Path

import yaml

from control.staticpods import manifests as files


def scheduler(tmp_path: Path) -> Path:
    files.write_defaults(tmp_path)
    return files.folder_of(tmp_path) / "kube-scheduler.yaml"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_kubeadms_four_manifests_are_written_once_and_an_edited_one_is_kept(tmp_path):
    written = files.write_defaults(tmp_path)
    assert sorted(p.name for p in written) == ["etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml",
                                               "kube-scheduler.yaml"]
    path = files.folder_of(tmp_path) / "kube-scheduler.yaml"
    pod = yaml.safe_load(path.read_text())
    assert pod["metadata"]["labels"] == {"component": "kube-scheduler", "tier": "control-plane"}
    assert pod["spec"]["containers"][0]["command"][0] == "kube-scheduler"
    assert pod["spec"]["priorityClassName"] == "system-node-critical"
    edit(path, "--leader-elect=true", "--leader-elect=false")
    assert files.write_defaults(tmp_path) == []
    assert "--leader-elect=false" in path.read_text()


def test_every_default_manifest_starts(tmp_path):
    files.write_defaults(tmp_path)
    found = files.read_folder(files.folder_of(tmp_path))
    assert [f.component for f in found] == ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]
    for manifest in found:
        assert isinstance(files.judge(manifest), files.Start), manifest.name
    scheduler_verdict = files.judge(found[3])
    assert "--kubeconfig=/etc/kubernetes/scheduler.conf" in scheduler_verdict.flags


def test_a_file_that_is_not_yaml_or_not_a_pod_is_unreadable_never_raised(tmp_path):
    folder = files.folder_of(tmp_path)
    folder.mkdir()
    (folder / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")
    (folder / "service.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    (folder / "nameless.yaml").write_text("apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]}\n")
    (folder / "empty-pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n")
    (folder / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    (folder / ".swap.yaml").write_text("not: read")
    (folder / "notes.txt").write_text("not a manifest")
    found = {f.path.name: f for f in files.read_folder(folder)}
    assert set(found) == {"broken.yaml", "service.yaml", "nameless.yaml", "empty-pod.yaml", "binary.yaml"}
    assert all(isinstance(f, files.Unreadable) for f in found.values())
    assert found["broken.yaml"].message.startswith("invalid pod:")
    assert "want v1 Pod" in found["service.yaml"].message
    assert "name or generateName is required" in found["nameless.yaml"].message
    assert "spec.containers: Required value" in found["empty-pod.yaml"].message


def test_a_missing_folder_holds_nothing(tmp_path):
    assert files.read_folder(tmp_path / "nowhere") == []


def test_a_misspelt_command_cannot_start_and_a_misspelt_image_cannot_pull(tmp_path):
    path = scheduler(tmp_path)
    edit(path, "- kube-scheduler\n", "- kube-schedulerr\n")
    verdict = files.judge(files.parse(path, path.read_text()))
    assert isinstance(verdict, files.StartFailure)
    assert 'exec: "kube-schedulerr": executable file not found in $PATH' in verdict.message
    edit(path, "- kube-schedulerr\n", "- kube-scheduler\n")
    edit(path, "registry.k8s.io/kube-scheduler:v1.32.0", "registry.k8s.io/kube-schedular:v1.32.0")
    verdict = files.judge(files.parse(path, path.read_text()))
    assert isinstance(verdict, files.ImagePullFailure) and verdict.image == "registry.k8s.io/kube-schedular:v1.32.0"
    assert "not found" in verdict.message


def test_a_flag_the_binary_does_not_know_or_a_missing_kubeconfig_ends_it_with_cobras_words(tmp_path):
    path = scheduler(tmp_path)
    edit(path, "--leader-elect=true", "--leader-elect=true\n    - --schedule-everything")
    verdict = files.judge(files.parse(path, path.read_text()))
    assert verdict == files.ExitFailure(1, "Error: unknown flag: --schedule-everything")
    path.unlink()
    path = scheduler(tmp_path)
    edit(path, "--kubeconfig=/etc/kubernetes/scheduler.conf", "--kubeconfig=/etc/kubernetes/scheduler.cfg")
    verdict = files.judge(files.parse(path, path.read_text()))
    assert verdict == files.ExitFailure(1, "Error: stat /etc/kubernetes/scheduler.cfg: no such file or directory")
    assert files.refused_flag("scheduler", ["--v=2", "--leader-elect=false"]) == ""
    assert files.refused_flag("controller-manager", ["--leader-elect=true", "--controllers=*"]) == ""


def test_a_static_pods_log_has_its_own_file_under_the_kubelets_folder(tmp_path):
    path = files.log_path(tmp_path / "kubelet", "kube-system", "kube-scheduler-node-1", "kube-scheduler")
    assert path == tmp_path / "kubelet" / "pod-logs" / "kube-system_kube-scheduler-node-1" / "kube-scheduler.log"

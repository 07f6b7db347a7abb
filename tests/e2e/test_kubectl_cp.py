"""`kubectl cp` end to end: the real kubectl (1.32, WebSocket v5) runs `tar` in a simulated
container through the hub's exec relay and the kubelet; bytes must survive both ways."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5"}
eventually = partial(wait_for, timeout=20)
BINARY = os.urandom(300_000) + bytes(range(256)) + b"\r\n\x00"  # larger than one frame's chunk


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV) as server:
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "1"}}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
               "spec": {"nodeName": NODE, "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}],
                        "containers": [{"name": "app", "image": "busybox:1.36",
                                        "volumeMounts": [{"name": "cfg", "mountPath": "/config"}]}]}}
        server.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                            "items": [config, pod]}))
        eventually(lambda: " Running " in server.kubectl("get", "pod", "box").stdout, what="box Running")
        yield server


def test_a_file_goes_in_and_comes_back_byte_for_byte(hub, tmp_path: Path):
    source = tmp_path / "data.bin"
    source.write_bytes(BINARY)
    hub.kubectl("cp", str(source), "box:/tmp/data.bin")
    assert hub.kubectl("exec", "box", "--", "ls", "/tmp").stdout.split() == ["data.bin"]
    back = tmp_path / "back.bin"
    copied = hub.kubectl("cp", "box:/tmp/data.bin", str(back))
    assert back.read_bytes() == BINARY
    # kubectl prints the remote tar's stderr on its stdout, as with a real busybox
    assert "tar: removing leading '/' from member names" in copied.stdout


def test_into_an_existing_directory_keeps_the_name(hub, tmp_path: Path):
    source = tmp_path / "notes.txt"
    source.write_bytes(b"remember\n")
    hub.kubectl("exec", "box", "--", "mkdir", "-p", "/work")
    hub.kubectl("cp", str(source), "box:/work")
    assert hub.kubectl("exec", "box", "--", "cat", "/work/notes.txt").stdout == "remember\n"


def test_a_directory_tree_both_ways(hub, tmp_path: Path):
    site = tmp_path / "site"
    (site / "css").mkdir(parents=True)
    (site / "empty").mkdir()
    (site / "index.html").write_bytes(b"<h1>hello</h1>\n")
    (site / "css" / "a.css").write_bytes(b"body { color: red }\n")
    hub.kubectl("cp", str(site), "box:/tmp/site")
    assert hub.kubectl("exec", "box", "--", "ls", "/tmp/site").stdout.split() == ["css", "empty", "index.html"]
    assert hub.kubectl("exec", "box", "--", "cat", "/tmp/site/css/a.css").stdout == "body { color: red }\n"
    out = tmp_path / "out"
    hub.kubectl("cp", "box:/tmp/site", str(out))
    assert (out / "index.html").read_bytes() == b"<h1>hello</h1>\n"
    assert (out / "css" / "a.css").read_bytes() == b"body { color: red }\n"
    assert (out / "empty").is_dir()


def test_a_read_only_mount_refuses_the_copy(hub, tmp_path: Path):
    source = tmp_path / "x"
    source.write_bytes(b"x")
    refused = hub.kubectl("cp", str(source), "box:/config/x", check=False)
    assert refused.returncode != 0
    assert "tar: can't open 'x': Read-only file system" in refused.stdout + refused.stderr
    assert "command terminated with exit code 1" in refused.stderr


def test_copying_out_a_missing_file_says_so(hub, tmp_path: Path):
    missing = hub.kubectl("cp", "box:/nope", str(tmp_path / "n"), check=False)
    assert "tar: /nope: No such file or directory" in missing.stdout + missing.stderr
    assert not (tmp_path / "n").exists()

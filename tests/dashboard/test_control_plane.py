"""The lesson button that edits a static pod manifest: the command word only, the rest kept, bad
input refused with nothing written."""

from __future__ import annotations

import pytest

from control.staticpods import manifests as files
from dashboard.actions import ActionError
from dashboard.control_plane import set_command


def test_the_command_word_is_set_and_the_rest_of_the_file_is_kept(tmp_path):
    files.write_defaults(tmp_path)
    folder = files.folder_of(tmp_path)
    before = files.parse(folder / "kube-scheduler.yaml", (folder / "kube-scheduler.yaml").read_text())
    assert set_command(folder, "kube-scheduler", "kube-schedulerr") == "kube-scheduler.yaml: command kube-schedulerr"
    after = files.parse(folder / "kube-scheduler.yaml", (folder / "kube-scheduler.yaml").read_text())
    assert after.container["command"] == ["kube-schedulerr", *before.container["command"][1:]]
    assert {**after.pod, "spec": None} == {**before.pod, "spec": None}
    assert isinstance(files.judge(after), files.StartFailure)
    set_command(folder, "kube-scheduler", "kube-scheduler")
    assert files.judge(files.parse(folder / "kube-scheduler.yaml", (folder / "kube-scheduler.yaml").read_text())) \
        == files.judge(before)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{c}.yaml" for c in files.SPOKE_OF), "no leftovers"


@pytest.mark.parametrize("component, command, why", [
    ("kube-dns", "x", "is not one of"), ("kube-scheduler", "rm -rf /", "is not one word"),
    ("kube-scheduler", "", "is not one word")])
def test_bad_input_is_refused_and_nothing_written(tmp_path, component, command, why):
    files.write_defaults(tmp_path)
    folder = files.folder_of(tmp_path)
    text = (folder / "kube-scheduler.yaml").read_text()
    with pytest.raises(ActionError, match=why):
        set_command(folder, component, command)
    assert (folder / "kube-scheduler.yaml").read_text() == text


def test_a_missing_or_broken_file_is_named(tmp_path):
    folder = files.folder_of(tmp_path)
    folder.mkdir()
    with pytest.raises(ActionError, match="kube-scheduler.yaml"):
        set_command(folder, "kube-scheduler", "kube-scheduler")
    (folder / "kube-scheduler.yaml").write_text("{not yaml")
    with pytest.raises(ActionError, match="invalid pod"):
        set_command(folder, "kube-scheduler", "kube-scheduler")

"""The manifest's remote control: annotations first, then image and command conventions."""

from control.kubelet.behaviour import Script, image_name, script_for


def pod(annotations=None, **container):
    container.setdefault("name", "app")
    container.setdefault("image", "nginx")
    return {"metadata": {"name": "p", "annotations": annotations or {}}, "spec": {"containers": [container]}}


def script(annotations=None, **container) -> Script:
    p = pod(annotations, **container)
    return script_for(p, p["spec"]["containers"][0])


def test_a_plain_container_runs_forever_and_is_ready_at_once():
    assert script() == Script()
    assert not script().exits


def test_crash_after_exits_with_code_1_and_exit_code_changes_the_code():
    assert (script({"kubekitchen.dev/crash-after": "5"}).exit_after, script({"kubekitchen.dev/crash-after": "5"}).exit_code) == (5.0, 1)
    both = script({"kubekitchen.dev/crash-after": "2", "kubekitchen.dev/exit-code": "0"})
    assert (both.exit_after, both.exit_code) == (2.0, 0)


def test_exit_code_alone_does_not_make_the_container_exit():
    alone = script({"kubekitchen.dev/exit-code": "3"})
    assert not alone.exits and alone.exit_code == 3


def test_a_container_specific_annotation_wins_over_the_pod_wide_one():
    annotations = {"kubekitchen.dev/crash-after": "5", "kubekitchen.dev/crash-after.app": "2",
                   "kubekitchen.dev/ready-after.other": "9"}
    s = script(annotations)
    assert s.exit_after == 2.0 and s.ready_after == 0.0


def test_readiness_annotations_and_probe_delay():
    assert script({"kubekitchen.dev/ready-after": "3"}).ready_after == 3.0
    assert script({"kubekitchen.dev/never-ready": "true"}).never_ready
    assert script(readinessProbe={"initialDelaySeconds": 4}).ready_after == 4.0
    assert script({"kubekitchen.dev/ready-after": "1"}, readinessProbe={"initialDelaySeconds": 4}).ready_after == 1.0


def test_start_delay_annotation():
    assert script({"kubekitchen.dev/start-delay": "2.5"}).start_delay == 2.5
    assert script().start_delay is None


def test_unreadable_values_are_ignored():
    s = script({"kubekitchen.dev/crash-after": "soon", "kubekitchen.dev/exit-code": "x",
                "kubekitchen.dev/ready-after": "-1"})
    assert s == Script()


def test_image_named_crash_crashes_after_three_seconds():
    s = script(image="registry.local:5000/team/crashy:1.0")
    assert (s.exit_after, s.exit_code) == (3.0, 1)
    assert script({"kubekitchen.dev/crash-after": "7"}, image="crashy").exit_after == 7.0


def test_exit_in_the_command_exits_after_its_sleeps():
    s = script(image="busybox", command=["sh", "-c", "echo hello; sleep 5; exit 1"])
    assert (s.exit_after, s.exit_code, s.narrate) == (5.0, 1, False)
    assert script(image="python", args=["exit 3"]).exit_after == 1.0


def test_shell_images_run_their_command_then_complete_unless_it_loops():
    done = script(image="busybox:1.36", command=["sh", "-c", "echo 'hi there'"])
    assert (done.exit_after, done.exit_code) == (1.0, 0)
    assert script({"kubekitchen.dev/narrate": "true"}, image="busybox").narrate, "narration is opt-in"
    assert not script(image="busybox", command=["sh", "-c", "while true; do sleep 1; done"]).exits
    assert not script(image="alpine", command=["sleep", "infinity"]).exits
    assert script(image="alpine", command=["sleep", "3600"]).exit_after == 3600.0
    assert not script(image="busybox").exits, "without a command a shell image runs forever"
    assert not script(image="nginx", command=["nginx", "-g", "daemon off;"]).exits


def test_a_bare_shell_with_stdin_waits_on_its_terminal():
    assert not script(image="busybox", args=["sh"], stdin=True, tty=True).exits, "kubectl run -it ... -- sh"
    assert not script(image="ubuntu", command=["/bin/bash"], stdin=True).exits
    assert script(image="busybox", args=["sh"]).exit_after == 1.0, "without stdin the shell ends at once"
    assert script(image="busybox", args=["sh", "-c", "echo hi"], stdin=True).exit_after == 1.0


def test_image_name():
    assert image_name("nginx") == "nginx"
    assert image_name("docker.io/library/nginx:1.25@sha256:abc") == "nginx"
    assert image_name("localhost:5000/crash") == "crash"


def test_the_unready_knob():
    assert script({"kubekitchen.dev/unready": "true"}).unready
    assert not script({"kubekitchen.dev/unready": "false"}).unready and not script().unready
    assert script({"kubekitchen.dev/unready": "false", "kubekitchen.dev/unready.app": "true"}).unready


def test_the_image_catalogue_decides_tools_shells_and_servers():
    assert script(image="python:3.12").exit_after == 1.0, "a tool image without a command ends at once"
    assert script(image="perl", command=["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]).exit_after == 1.0
    assert not script(image="python:3.12", command=["python", "-c", "while True: pass"]).exits
    assert not script(image="redis:7").exits and not script(image="nginx").exits
    assert not script(image="registry.k8s.io/e2e-test-images/busybox:1.36.1-1").exits, "a shell image waits"
    assert not script(image="nicolaka/netshoot", command=["zsh"], stdin=True).exits
    assert not script(image="my.registry/unknown:1").exits, "an image the catalogue does not know runs on"


def test_a_command_that_kills_its_own_pid_1_ends_as_an_exec_kill_1_does():
    def ends(command):
        s = script(image="busybox", command=["sh", "-c", command])
        return s.exit_after, s.exit_code

    assert ends("sleep 5; kill 1") == (5.0, 143), "TERM: 128 + 15, after the sleeps before it"
    assert ends("sleep 5; kill -9 1; sleep 100") == (5.0, 137)
    assert ends("kill -s KILL 1") == (1.0, 137) and ends("kill -SIGHUP 1") == (1.0, 129) and ends("kill -- 1")[1] == 143
    assert ends("while true; do sleep 4; kill 1; done") == (4.0, 143), "the loop's first kill ends it"
    assert ends("sleep 2; exit 3; kill 1") == (2.0, 3), "the exit comes first"
    assert ends("sleep 2; kill -STOP 1; sleep 3") == (5.0, 0), "STOP only pauses"
    assert ends("sleep 1; kill 10") == (1.0, 0) and ends("kill -BOGUS 1") == (1.0, 0), "not PID 1, not a signal"


def stored(version: str, annotations=None, **container):
    p = pod(annotations, **container)
    p["metadata"].update(uid="uid-1", resourceVersion=version)
    return p


def test_a_stored_pod_is_read_once_per_version_and_a_new_version_is_read_again(monkeypatch):
    from control.kubelet import behaviour

    reads = []
    real = behaviour._read_script
    monkeypatch.setattr(behaviour, "_read_script", lambda p, c: reads.append(c["name"]) or real(p, c))
    monkeypatch.setattr(behaviour, "_SCRIPTS", {})
    v1 = stored("7", {"kubekitchen.dev/crash-after": "5"})
    assert script_for(v1, v1["spec"]["containers"][0]).exit_after == 5.0
    assert script_for(v1, v1["spec"]["containers"][0]).exit_after == 5.0
    assert reads == ["app"]
    v2 = stored("8", {"kubekitchen.dev/crash-after": "9"})  # the annotation changed: a new version
    assert script_for(v2, v2["spec"]["containers"][0]).exit_after == 9.0
    assert reads == ["app", "app"]


def test_a_manifest_without_a_version_is_read_every_time():
    p = pod({"kubekitchen.dev/crash-after": "5"})
    p["metadata"]["uid"] = "uid-2"
    assert script_for(p, p["spec"]["containers"][0]).exit_after == 5.0
    p["metadata"]["annotations"]["kubekitchen.dev/crash-after"] = "2"  # a dry run's manifest, changed
    assert script_for(p, p["spec"]["containers"][0]).exit_after == 2.0


def test_the_kept_scripts_are_bounded(monkeypatch):
    from control.kubelet import behaviour

    monkeypatch.setattr(behaviour, "_SCRIPTS", {})
    monkeypatch.setattr(behaviour, "_SCRIPTS_MAX", 3)
    for version in range(10):
        p = stored(str(version))
        script_for(p, p["spec"]["containers"][0])
        assert len(behaviour._SCRIPTS) <= 3

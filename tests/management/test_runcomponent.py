"""A spoke never outlives the process that started it: the kernel's parent-death signal, a
watchdog on the parent's pid, and an immediate exit when the parent is already gone."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from control.management.commands import runcomponent


def test_the_watchdog_cancels_the_spoke_once_the_parent_is_gone(monkeypatch):
    parents = iter([100, 100, 1])
    monkeypatch.setattr(runcomponent.os, "getppid", lambda: next(parents))

    async def scenario():
        spoke = asyncio.ensure_future(asyncio.Event().wait())
        await runcomponent.stop_when_orphaned(100, spoke, every=0)
        await asyncio.sleep(0)
        return spoke.cancelled()

    assert asyncio.run(scenario())


def test_a_parent_gone_before_the_spoke_started_is_noticed(monkeypatch):
    monkeypatch.setattr(runcomponent.os, "getppid", lambda: 1)
    assert runcomponent.parent_is_gone("4242", 1), "re-parented to init: the named parent is gone"
    assert not runcomponent.parent_is_gone(None, 1)
    assert not runcomponent.parent_is_gone("1", 1)


def test_the_kernel_ends_a_child_whose_parent_dies():
    """A real parent that asks for the signal in its child and then dies at once."""
    script = ("import subprocess, sys\n"
              "from control.management.commands.runcomponent import die_with_parent\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], preexec_fn=die_with_parent)\n"
              "print(child.pid, flush=True)\n")
    parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                            cwd=os.getcwd(), check=True)
    child = int(parent.stdout.split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child), "the child outlived its parent"


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_parent_watch_thread_calls_back_once_the_parent_is_gone(monkeypatch):
    """Where no kernel signal comes (macOS): a thread looks at the parent's pid (the hub uses it)."""
    import threading

    parents = iter([100, 100, 1, 1, 1])
    monkeypatch.setattr(runcomponent.os, "getppid", lambda: next(parents))
    gone = threading.Event()
    runcomponent.watch_parent_in_thread(100, gone.set, every=0).join(timeout=5)
    assert gone.is_set()
    stopped = threading.Event()
    stopped.set()
    called = []
    runcomponent.watch_parent_in_thread(100, lambda: called.append(1), every=0, stopped=stopped).join(timeout=5)
    assert called == [], "a stopped watch calls nothing"


def test_without_the_kernels_signal_the_parent_watch_ends_a_child_whose_parent_was_killed(tmp_path):
    """The macOS path on Linux: die_with_parent turned off, the parent SIGKILLed; the watch ends both."""
    import signal

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "from control.management.commands import runcomponent\n"
        "env = {**os.environ, 'KK_PARENT_PID': str(os.getpid())}\n"
        "code = ('import os, signal, threading\\n'\n"
        "        'from control.management.commands.runcomponent import watch_parent_in_thread\\n'\n"
        "        'done = threading.Event()\\n'\n"
        "        'watch_parent_in_thread(int(os.environ[\"KK_PARENT_PID\"]), done.set, every=0.05)\\n'\n"
        "        'done.wait(60)\\n')\n"
        "child = subprocess.Popen([sys.executable, '-c', code], env=env, stdout=subprocess.DEVNULL)\n"
        "print(child.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n")
    parent = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30,
                            cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert parent.returncode == -signal.SIGKILL
    child = int(parent.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child), "the child outlived its parent without the kernel's signal"

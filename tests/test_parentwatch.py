"""A child never outlives its parent where no kernel signal comes (macOS): a thread watches the
parent's pid and calls back once it is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from control import parentwatch


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_parent_watch_thread_calls_back_once_the_parent_is_gone(monkeypatch):
    """Where no kernel signal comes (macOS): a thread looks at the parent's pid (the hub uses it)."""
    import threading

    parents = iter([100, 100, 1, 1, 1])
    monkeypatch.setattr(parentwatch.os, "getppid", lambda: next(parents))
    gone = threading.Event()
    parentwatch.watch_parent_in_thread(100, gone.set, every=0).join(timeout=5)
    assert gone.is_set()
    stopped = threading.Event()
    stopped.set()
    called = []
    parentwatch.watch_parent_in_thread(100, lambda: called.append(1), every=0, stopped=stopped).join(timeout=5)
    assert called == [], "a stopped watch calls nothing"


def test_without_the_kernels_signal_the_parent_watch_ends_a_child_whose_parent_was_killed(tmp_path):
    """The macOS path on Linux: die_with_parent turned off, the parent SIGKILLed; the watch ends both."""
    import signal

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "env = {**os.environ, 'KK_PARENT_PID': str(os.getpid())}\n"
        "code = ('import os, signal, threading\\n'\n"
        "        'from control.parentwatch import watch_parent_in_thread\\n'\n"
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

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


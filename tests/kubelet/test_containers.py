"""The container state machine, on plain numbers for time: starts, exits, restart policies,
back-off doubling to its cap and resetting, stops, readiness and wake-ups."""

from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import advance, go_duration, is_ready, new_container, next_wake, stop

T0 = 1000.0
BACKOFF = BackoffPolicy(base=10, cap=300, reset_after=600)


def fresh(delay: float = 0.5):
    return new_container("app", "nginx", "uid-1", T0, delay)


def test_creating_until_the_start_delay_then_running_from_the_moment_it_was_due():
    c, happened = advance(fresh(), Script(), "Always", T0 + 0.2, BACKOFF)
    assert c.state == "creating" and happened == []
    assert next_wake(c, Script(), T0 + 0.2) == T0 + 0.5
    c, happened = advance(c, Script(), "Always", T0 + 3, BACKOFF)
    assert c.state == "running" and c.current.started_at == T0 + 0.5
    assert [h.kind for h in happened] == ["started"]
    assert next_wake(c, Script(), T0 + 3) is None, "a healthy container needs no more looks"


def test_advance_is_idempotent():
    script = Script(exit_after=2, exit_code=1)
    once, _ = advance(fresh(), script, "Always", T0 + 30, BACKOFF)
    twice, again = advance(once, script, "Always", T0 + 30, BACKOFF)
    assert once == twice and again == []


def test_crash_loop_backoff_doubles_up_to_the_cap():
    script = Script(exit_after=1, exit_code=1)
    c = fresh(0)
    delays, now = [], T0
    for _ in range(8):
        c, _ = advance(c, script, "Always", now, BACKOFF)  # start (or restart)
        assert c.state == "running"
        now = c.current.started_at + 1
        c, happened = advance(c, script, "Always", now, BACKOFF)
        assert c.state == "backoff"
        assert [h.kind for h in happened] == ["exited", "backoff"]
        delays.append(c.backoff)
        assert c.previous.exit_code == 1 and c.previous.reason == "Error"
        now = c.restart_at
    assert delays == [10, 20, 40, 80, 160, 300, 300, 300]
    assert c.restart_count == 7


def test_a_long_run_resets_the_backoff():
    script = Script(exit_after=1, exit_code=1)
    c, _ = advance(fresh(0), script, "Always", T0 + 1, BACKOFF)
    c, _ = advance(c, script, "Always", c.restart_at + 1, BACKOFF)
    assert c.backoff == 20
    long_runner = Script(exit_after=700, exit_code=1)
    c, _ = advance(c, long_runner, "Always", c.restart_at, BACKOFF)
    c, _ = advance(c, long_runner, "Always", c.current.started_at + 700, BACKOFF)
    assert c.backoff == 10, "after 10 min of running the back-off starts over"


def test_fast_forward_goes_through_every_restart():
    c, happened = advance(fresh(0), Script(exit_after=1, exit_code=1), "Always", T0 + 100, BACKOFF)
    # starts at 0, exits 1, restarts 11, exits 12, restarts 32, exits 33, restarts 73, exits 74, backoff to 154
    assert c.state == "backoff" and c.restart_count == 3 and c.restart_at == T0 + 154
    assert [h.kind for h in happened].count("started") == 4


def test_restart_policies():
    ok, failing = Script(exit_after=1, exit_code=0), Script(exit_after=1, exit_code=2)
    assert advance(fresh(0), ok, "Always", T0 + 2, BACKOFF)[0].state == "backoff"
    assert advance(fresh(0), ok, "OnFailure", T0 + 2, BACKOFF)[0].state == "terminated"
    assert advance(fresh(0), failing, "OnFailure", T0 + 2, BACKOFF)[0].state == "backoff"
    done, _ = advance(fresh(0), failing, "Never", T0 + 2, BACKOFF)
    assert done.state == "terminated" and done.finished and done.current.exit_code == 2
    assert next_wake(done, failing, T0 + 2) is None


def test_stop_ends_the_run_with_exit_0_and_nothing_starts_again():
    c, _ = advance(fresh(0), Script(), "Always", T0 + 5, BACKOFF)
    stopped, happened = stop(c, T0 + 6)
    assert stopped.state == "terminated" and stopped.current.exit_code == 0 and stopped.current.stopped
    assert [h.kind for h in happened] == ["stopped"]
    assert advance(stopped, Script(exit_after=1), "Always", T0 + 100, BACKOFF)[0] == stopped
    assert stop(stopped, T0 + 7) == (stopped, [])
    creating, _ = stop(fresh(5), T0 + 1)
    assert creating.state == "stopped" and advance(creating, Script(), "Always", T0 + 50, BACKOFF)[0] == creating


def test_readiness_follows_the_script():
    c, _ = advance(fresh(0), Script(ready_after=3), "Always", T0 + 1, BACKOFF)
    assert not is_ready(c, Script(ready_after=3), T0 + 1)
    assert next_wake(c, Script(ready_after=3), T0 + 1) == T0 + 3
    assert is_ready(c, Script(ready_after=3), T0 + 3)
    assert not is_ready(c, Script(never_ready=True), T0 + 1000)
    c, happened = advance(fresh(0), Script(never_ready=True), "Always", T0, BACKOFF)
    assert [h.kind for h in happened] == ["started", "unready"]


def test_container_ids_are_stable_per_run():
    a, _ = advance(fresh(0), Script(), "Always", T0, BACKOFF)
    b, _ = advance(fresh(0), Script(), "Always", T0 + 9, BACKOFF)
    assert a.current.container_id == b.current.container_id and len(a.current.container_id) == 64


def test_go_duration():
    assert [go_duration(s) for s in (2, 10, 80, 300, 3725)] == ["2s", "10s", "1m20s", "5m0s", "1h2m5s"]

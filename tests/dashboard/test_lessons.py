"""Lesson files: the shipped ones load, in both languages, with real manifests; a broken file is
refused with its file and line, and the others still load; checks are evaluated level-triggered
from the listed objects (field paths, operators, bounds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import lesson_checks, lessons
from dashboard.lesson_checks import evaluate, field
from dashboard.lessons import LessonError, parse_lesson
from tests.dashboard.fakehub import pod

SCENARIOS = {"declarative", "self-healing", "backoff", "eviction", "rollout", "watch", "conflict", "gone",
             "scheduling", "service-discovery", "autoscaling"}


def test_every_shipped_lesson_loads_in_english_and_korean_and_the_eleven_scenarios_are_there():
    catalogue = lessons.load_all()
    assert catalogue.errors == []
    assert SCENARIOS <= {lesson.idea for lesson in catalogue.lessons}
    for lesson in catalogue.lessons:
        assert {"en", "ko"} <= set(lesson.title), lesson.id
        for step in lesson.steps:
            assert {"en", "ko"} <= set(step.title) and {"en", "ko"} <= set(step.explain), (lesson.id, step.title)
            if step.action is not None and step.action.apply:
                assert lessons.manifest_text(step.action).strip()
        # playable in three clicks: open it, then its first step has a button or a check to watch
        assert lesson.steps[0].action is not None or lesson.steps[0].kubectl


def test_the_lessons_are_listed_in_their_order():
    ids = [lesson.id for lesson in lessons.load_all().lessons]
    assert ids[:2] == ["01-declarative", "02-self-healing"]


GOOD = """
idea: self-healing
title: {en: Heal, ko: 치유}
steps:
  - title: Drop one
    explain: Delete a pod.
    action: {delete: {apiVersion: v1, kind: Pod, labelSelector: app=pasta}}
    check: {apiVersion: v1, kind: Pod, labelSelector: app=pasta, where: {status.phase: Running}, count: 3}
"""


def test_a_good_lesson_parses_into_steps_with_an_action_and_a_check(tmp_path):
    lesson = parse_lesson(GOOD, "lessons/heal.yaml", tmp_path)
    step = lesson.steps[0]
    assert lesson.id == "heal" and step.title == {"en": "Drop one"}
    assert step.action.delete == ("Pod", "v1", "app=pasta")
    assert step.check.where == (("status.phase", ("eq", "Running")),) and step.check.count == 3
    assert lessons.text(step.title, "ko") == "Drop one"  # English when the lesson has no Korean


@pytest.mark.parametrize("source, line, words", [
    ("idea: self-healing\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    action: {do: explode}\n", 6, "unknown button 'explode'"),
    ("idea: self-healing\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    colour: red\n", 6, "unknown field 'colour'"),
    ("idea: self-healing\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    action: {apply: nothere.yaml}\n", 6, "no manifest 'nothere.yaml'"),
    ("idea: self-healing\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    action: {apply: ../secret.yaml}\n", 6, "no manifest"),
    ("idea: cooking\ntitle: T\nsteps: []\n", 1, "idea 'cooking'"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    check: {apiVersion: v1, kind: Pod, count: 2, atLeast: 1}\n", 6, "count excludes"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    check: {apiVersion: v1, kind: Pod, where: {'a..b': 1}}\n", 6, "not a field path"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    check: {apiVersion: v1, kind: Pod, where: {a: {more: 1}}}\n", 6, "unknown field 'more'"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    check: {apiVersion: v1, kind: Pod}\n", 4, "needs a title and an explain"),
    ("idea: watch\ntitle: {ko: 제목}\nsteps:\n  - title: A\n    explain: B\n", 2, "needs an English text"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n  bad: [\n", 6, "not valid YAML"),
    ("a: &x 1\nb: *x\n", None, "aliases are not allowed"),
    ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    panel: kitchen\n", 6, "panel 'kitchen' is not one of"),
])
def test_a_broken_lesson_is_refused_naming_the_file_and_the_line(tmp_path, source, line, words):
    with pytest.raises(LessonError) as refused:
        parse_lesson(source, "lessons/broken.yaml", tmp_path)
    message = str(refused.value)
    assert message.startswith("lessons/broken.yaml")
    if line is not None:
        assert f"line {line}:" in message, message
    assert words in message, message


def test_a_step_may_name_the_panel_it_brings_onto_the_stage(tmp_path):
    lesson = parse_lesson(GOOD.replace("    explain: Delete a pod.\n", "    explain: Delete a pod.\n    panel: events\n"),
                          "lessons/heal.yaml", tmp_path)
    assert lesson.steps[0].panel == "events"
    assert parse_lesson(GOOD, "lessons/heal.yaml", tmp_path).steps[0].panel == "", "no panel: the stage's default"


def test_the_panels_a_step_may_name_are_the_ones_the_page_can_bring_onto_the_stage():
    layout = (Path(__file__).resolve().parents[2] / "static" / "dashboard" / "layout.js").read_text()
    focusable = layout.split("export const FOCUSABLE = [", 1)[1].split("]", 1)[0]
    assert sorted(name.strip().strip('"') for name in focusable.split(",")) == sorted(lessons.PANELS)
    named = {step.panel for lesson in lessons.load_all().lessons for step in lesson.steps} - {""}
    assert {"events", "wire", "traffic"} <= named <= set(lessons.PANELS)


def test_one_broken_file_does_not_hide_the_others(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text("idea: watch\ntitle: T\nsteps: 3\n")
    catalogue = lessons.load_all(tmp_path)
    assert [lesson.id for lesson in catalogue.lessons] == ["good"]
    assert catalogue.errors == ["lessons/bad.yaml line 3: steps must be a non-empty list"]


def test_an_unchanged_file_is_not_parsed_again_and_an_edited_one_shows_at_once(tmp_path, monkeypatch):
    (tmp_path / "good.yaml").write_text(GOOD)
    first = lessons.load_all(tmp_path).get("good")
    parsed = []
    monkeypatch.setattr(lessons, "parse_lesson", lambda *a: parsed.append(a) or first)
    assert lessons.load_all(tmp_path).get("good") is first and parsed == [], "the same text: the same lesson, no parse"
    monkeypatch.undo()
    (tmp_path / "good.yaml").write_text(GOOD.replace("Drop one", "Drop two"))  # same size, same instant
    assert lessons.load_all(tmp_path).get("good").steps[0].title["en"] == "Drop two"
    (tmp_path / "good.yaml").unlink()
    assert lessons.load_all(tmp_path).lessons == []


def test_one_lesson_is_read_alone_and_answers_as_the_catalogue_does(tmp_path, monkeypatch):
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text("idea: watch\ntitle: T\nsteps: 3\n")
    (tmp_path / "Upper.yaml").write_text(GOOD)  # not a lesson name: an error in the catalogue
    catalogue = lessons.load_all(tmp_path)
    for lesson_id in ("good", "bad", "Upper", "missing", "../good", "good.yaml", ""):
        assert lessons.load_one(lesson_id, tmp_path) == catalogue.get(lesson_id), lesson_id
    read = []
    real_read = lessons.Path.read_text
    monkeypatch.setattr(lessons.Path, "read_text", lambda self, *a, **k: read.append(self.name) or real_read(self, *a, **k))
    assert lessons.load_one("good", tmp_path) is catalogue.get("good")  # the same text: the same lesson
    assert read == ["good.yaml"], "only its own file is read"
    monkeypatch.undo()
    (tmp_path / "good.yaml").write_text(GOOD.replace("Drop one", "Drop two"))
    assert lessons.load_one("good", tmp_path).steps[0].title["en"] == "Drop two"
    (tmp_path / "good.yaml").unlink()
    assert lessons.load_one("good", tmp_path) is None


def test_a_lesson_is_checked_again_when_its_manifest_disappears(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "pasta.yaml").write_text("kind: Deployment\n")
    (tmp_path / "apply.yaml").write_text(GOOD.replace("action: {delete: {apiVersion: v1, kind: Pod, labelSelector: app=pasta}}",
                                                      "action: {apply: pasta.yaml}"))
    assert [lesson.id for lesson in lessons.load_all(tmp_path).lessons] == ["apply"]
    (tmp_path / "manifests" / "pasta.yaml").unlink()
    catalogue = lessons.load_all(tmp_path)
    assert catalogue.lessons == [] and "no manifest 'pasta.yaml'" in catalogue.errors[0]


def test_field_paths_reach_into_maps_list_indexes_and_list_items_by_key():
    obj = pod("p")
    assert field(obj, "status.phase") == "Running"
    assert field(obj, "status.conditions[type=Ready].status") == "True"
    assert field(obj, "spec.containers[0].image") == "nginx"
    assert field(obj, "spec.containers[3].image") is None
    assert field(obj, "status.conditions[type=Nope].status") is None
    assert field(obj, "metadata.name.deeper") is None
    obj["metadata"]["annotations"] = {"kubekitchen.dev/second-writer": "changed"}
    assert field(obj, "metadata.annotations[kubekitchen.dev/second-writer]") == "changed"
    assert field(obj, "metadata.annotations[kubekitchen.dev/other]") is None


def _check(where=(), **bounds):
    return lessons.Check(api_version="v1", kind="Pod", where=tuple(where), **bounds)


def test_a_check_counts_the_objects_that_match_every_condition_against_its_bounds():
    pods = [pod("a"), pod("b"), pod("c", phase="Pending", ready=False)]
    running = [("status.phase", ("eq", "Running"))]
    assert evaluate(_check(running, count=2), pods).ok
    assert not evaluate(_check(running, count=3), pods).ok
    assert evaluate(_check(running, count=3), pods).matched == 2
    assert evaluate(_check([("status.phase", ("eq", "Pending"))], count=0), pods[:2]).ok
    assert evaluate(_check([("spec.nodeName", ("not", "node-2"))], at_least=3), pods).ok
    assert not evaluate(_check([("spec.nodeName", ("exists", False))], at_least=1), pods).ok
    restarts = [("status.containerStatuses[0].restartCount", ("atLeast", 1))]
    assert not evaluate(_check(restarts, at_least=1), pods).ok
    pods[0]["status"]["containerStatuses"][0]["restartCount"] = 4
    assert evaluate(_check(restarts, count=1), pods).ok


def test_a_check_is_level_triggered_it_turns_back_when_the_state_no_longer_holds():
    check = _check([("status.phase", ("eq", "Running"))], count=2)
    pods = [pod("a"), pod("b")]
    assert evaluate(check, pods).ok
    pods[1]["status"]["phase"] = "Failed"
    assert not evaluate(check, pods).ok


def test_values_compare_as_kubernetes_prints_them():
    assert lesson_checks.holds(3, ("eq", 3)) and lesson_checks.holds("3", ("eq", 3))
    assert not lesson_checks.holds(True, ("eq", "True")) and lesson_checks.holds("True", ("eq", "True"))
    assert not lesson_checks.holds(None, ("eq", "None"))
    assert not lesson_checks.holds("5", ("atLeast", 2))


def test_lesson_files_stay_inside_lessons(tmp_path: Path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "outside.yaml").write_text("kind: Secret\n")
    source = "idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n    action: {apply: ../outside.yaml}\n"
    with pytest.raises(LessonError, match="no manifest"):
        parse_lesson(source, "lessons/escape.yaml", tmp_path)


class ListingHub:
    """Records the LISTs a check makes."""

    def __init__(self):
        self.listed: list[tuple[str, str | None]] = []

    async def list(self, resource, namespace, **selectors):
        self.listed.append((resource.plural, namespace))
        return {"items": [pod("a")]}


def test_a_check_the_viewer_may_not_list_makes_no_request_and_says_so():
    import asyncio

    from control.client.resources import NODES, PODS

    async def resolve(client, api_version, kind):
        return {"Pod": PODS, "Node": NODES}[kind]

    asked: list[tuple[str, str]] = []

    async def only_pods_in_alice(resource, namespace):
        asked.append((resource.plural, namespace))
        return (resource.plural, namespace) == ("pods", "alice")

    hub = ListingHub()
    theirs = lessons.Check(api_version="v1", kind="Pod", namespace="bob")
    verdict = asyncio.run(lesson_checks.run_check(hub, theirs, resolve, only_pods_in_alice))
    assert verdict.forbidden and not verdict.ok and 'you may not list pods in the namespace "bob"' in verdict.problem
    assert hub.listed == []
    nodes = lessons.Check(api_version="v1", kind="Node", namespace="alice")  # a cluster kind: asked at the cluster
    asyncio.run(lesson_checks.run_check(hub, nodes, resolve, only_pods_in_alice))
    assert asked[-1] == ("nodes", "") and hub.listed == []
    mine = lessons.Check(api_version="v1", kind="Pod", namespace="alice", at_least=1)
    assert asyncio.run(lesson_checks.run_check(hub, mine, resolve, only_pods_in_alice)).ok
    assert hub.listed == [("pods", "alice")]


def _written_at(obj: dict, revision: int) -> dict:
    obj["metadata"]["resourceVersion"] = str(revision)
    return obj


def test_a_changed_check_needs_one_matching_object_written_after_the_step_began():
    check = lessons.Check(api_version="v1", kind="Pod", where=(("status.phase", ("eq", "Running")),), count=3, changed=True)
    before = [_written_at(pod(name), revision) for name, revision in (("a", 10), ("b", 11), ("c", 12))]
    assert not evaluate(check, before, since=20).ok  # three Running, but all from before the step: not its doing
    healed = before[:2] + [_written_at(pod("d"), 25)]
    assert evaluate(check, healed, since=20).ok
    pending = before[:2] + [_written_at(pod("d", phase="Pending", ready=False), 25)]
    assert not evaluate(check, pending, since=20).ok  # the new one must match too
    assert evaluate(lessons.Check(api_version="v1", kind="Pod", count=3), before).ok  # without `changed`, as before


def test_changed_and_answer_parse_and_are_refused_when_misused(tmp_path):
    source = ("idea: watch\ntitle: T\nsteps:\n  - title: A\n    explain: B\n"
              "    action: {do: old-watch}\n    answer: 410\n"
              "  - title: C\n    explain: D\n    action: {delete: {apiVersion: v1, kind: Pod, labelSelector: app=x}}\n"
              "    check: {apiVersion: v1, kind: Pod, count: 1, changed: true}\n")
    lesson = parse_lesson(source, "lessons/ok.yaml", tmp_path)
    assert lesson.steps[0].answer == 410 and lesson.steps[0].check is None
    assert lesson.steps[1].check.changed is True
    for broken, words in [
        (source.replace("changed: true", "changed: yes please"), "changed must be true or false"),
        (source.replace("answer: 410", "answer: 42"), "answer must be an HTTP status code"),
        (source.replace("    action: {do: old-watch}\n", ""), "answer goes with an action"),
    ]:
        with pytest.raises(LessonError, match=words):
            parse_lesson(broken, "lessons/broken.yaml", tmp_path)


def test_a_buttons_answer_is_remembered_per_viewer_and_step():
    from dashboard import lesson_answers

    lesson_answers.forget_all()
    assert lesson_answers.answered("alice", "18-rbac", 2) is None
    lesson_answers.remember("alice", "18-rbac", 2, 403)
    assert lesson_answers.answered("alice", "18-rbac", 2) == 403
    assert lesson_answers.answered("bob", "18-rbac", 2) is None and lesson_answers.answered("alice", "18-rbac", 4) is None
    for number in range(lesson_answers.LIMIT + 5):
        lesson_answers.remember("crowd", "08-gone", number, 410)
    assert lesson_answers.answered("alice", "18-rbac", 2) is None  # the oldest went first
    assert len(lesson_answers._answers) == lesson_answers.LIMIT
    lesson_answers.forget_all()

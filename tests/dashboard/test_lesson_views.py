"""The lesson bar through Django's test client against the fake hub: the list, a step in English and
Korean with its kubectl command, the check as one LIST with the step's selectors (waiting, then
done, polled less once done), the button's request, and the refusals (unknown lesson, a kind the
hub does not serve, the hub's own 4xx); the instructor's choice of namespace moves the command,
check and button there; the room's progress as JSON."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.dashboard.fakehub import pod, status

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def client():
    return Client()


def test_the_page_has_the_lesson_bar_and_the_list_names_every_lesson(client):
    assert 'id="lesson"' in client.get("/").content.decode()
    listed = client.get("/lessons/").content.decode()
    assert "Say what you want" in listed and "/lessons/02-self-healing/1/" in listed


def test_a_step_shows_its_words_command_button_and_check_in_the_chosen_language(fake, client):
    step = client.get("/lessons/02-self-healing/2/").content.decode()
    assert "Drop one" in step and "kubectl delete $(kubectl get pods -l app=pasta" in step
    assert "/lessons/02-self-healing/2/do/" in step and "/lessons/02-self-healing/2/check/" in step
    assert "step 2 of 2" in step and "/lessons/02-self-healing/1/" in step
    client.post("/i18n/setlang/", {"language": "ko", "next": "/"})
    korean = client.get("/lessons/02-self-healing/2/").content.decode()
    assert "하나를 떨어뜨리기" in korean


def test_the_check_lists_with_the_steps_selectors_and_turns_green_when_the_state_holds(fake, client):
    fake.answers[("GET", PODS)] = (200, {"kind": "PodList", "items": [pod("a"), pod("b", phase="Pending")]})
    waiting = client.get("/lessons/02-self-healing/1/check/").content.decode()
    assert "waiting" in waiting and "1 / 3" in waiting and "every 3s" in waiting
    lists = [r for r in fake.requests if r.path == PODS]
    assert lists[-1].query == {"labelSelector": "app=pasta"}
    fake.answers[("GET", PODS)] = (200, {"kind": "PodList", "items": [pod("a"), pod("b"), pod("c")]})
    done = client.get("/lessons/02-self-healing/1/check/").content.decode()
    assert "done" in done and "every 10s" in done


def test_a_check_by_name_uses_a_field_selector_and_an_unserved_kind_says_so(fake, client, tmp_path, settings):
    fake.answers[("GET", "/apis/apps/v1/namespaces/default/deployments")] = (200, {"items": []})
    client.get("/lessons/01-declarative/2/check/")
    listed = [r for r in fake.requests if r.path.endswith("/deployments")][-1]
    assert listed.query == {"fieldSelector": "metadata.name=pasta"}
    fake.served = [r for r in fake.served if r.kind != "Job"]
    problem = client.get("/lessons/12-job-retry/1/check/").content.decode()
    assert 'no matches for kind &quot;Job&quot; in version &quot;batch/v1&quot;' in problem


def test_the_button_deletes_the_newest_matching_pod_as_the_dashboards_own_client(fake, client):
    older, newer = pod("old"), pod("new")
    older["metadata"]["creationTimestamp"], newer["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
    fake.answers[("GET", PODS)] = (200, {"items": [older, newer]})
    fake.answers[("DELETE", f"{PODS}/new")] = (200, newer)
    response = client.post("/lessons/02-self-healing/2/do/")
    assert response.status_code == 200 and "pod/new deleted" in response.content.decode()
    assert [(r.method, r.path) for r in fake.writes()] == [("DELETE", f"{PODS}/new")]
    assert response["HX-Trigger"] == "lesson-acted"  # the step's check looks again at once
    step = client.get("/lessons/02-self-healing/2/").content.decode()
    assert 'hx-trigger="load, lesson-acted from:body"' in step


def test_a_refused_button_shows_the_hubs_message_and_code(fake, client):
    scale = "/apis/apps/v1/namespaces/default/deployments/pasta/scale"
    fake.answers[("PATCH", scale)] = (404, status(404, "NotFound", 'deployments.apps "pasta" not found'))
    response = client.post("/lessons/05-scale-and-roll/2/do/")
    assert response.status_code == 404 and "not found" in response.content.decode()
    assert [(r.method, r.path) for r in fake.writes()] == [("PATCH", scale)]  # the refused one, nothing else
    assert response["HX-Trigger"] == "lesson-acted"  # a refusal is an answer too: the check looks again


def test_unknown_lessons_and_steps_are_404(client):
    assert client.get("/lessons/no-such-lesson/1/").status_code == 404
    assert client.get("/lessons/02-self-healing/9/").status_code == 404
    assert client.post("/lessons/06-watch-wire/3/do/").status_code == 404


def test_the_conflict_lessons_button_plays_the_stale_write_and_shows_the_409_as_a_refusal(fake, client):
    path = "/apis/apps/v1/namespaces/default/deployments/pasta"
    read = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pasta", "namespace": "default",
                                                                         "resourceVersion": "7"}}
    fake.answers[("GET", path)] = (200, read)
    fake.answers[("PATCH", path)] = (200, {**read, "metadata": {**read["metadata"], "resourceVersion": "9"}})
    fake.answers[("PUT", path)] = (409, status(409, "Conflict", 'Operation cannot be fulfilled on deployments.apps "pasta"'))
    answer = client.post("/lessons/07-conflict/2/do/").content.decode()
    assert [r.method for r in fake.requests] == ["GET", "PATCH", "PUT"]
    assert 'class="result error"' in answer and "409 Conflict" in answer and "resourceVersion 7" in answer


@pytest.mark.django_db(transaction=True)  # the choice is kept in the session
def test_the_instructor_picks_the_namespace_lessons_run_in_and_a_bad_name_is_refused_on_the_page(fake, client):
    listed = client.get("/lessons/").content.decode()
    assert 'name="namespace" value="default"' in listed
    refused = client.post("/lessons/namespace/", {"namespace": "Not_A_Name"})
    assert refused.status_code == 400 and "is not a namespace name" in refused.content.decode()
    fake.answers[("POST", "/api/v1/namespaces")] = (201, {"kind": "Namespace", "metadata": {"name": "team-b"}})
    chosen = client.post("/lessons/namespace/", {"namespace": "team-b"})
    assert chosen.status_code == 200 and "it was created for the lessons" in chosen.content.decode()
    assert [(r.method, r.path) for r in fake.writes()] == [("POST", "/api/v1/namespaces")]
    assert fake.writes()[0].body["metadata"]["name"] == "team-b"
    fake.requests.clear()
    step = client.get("/lessons/02-self-healing/2/").content.decode()
    assert "kubectl -n team-b delete $(kubectl -n team-b get pods -l app=pasta" in step and 'data-namespace="team-b"' in step
    pods = "/api/v1/namespaces/team-b/pods"
    fake.answers[("GET", pods)] = (200, {"kind": "PodList", "items": [pod("a")]})
    client.get("/lessons/02-self-healing/2/check/")
    assert [r for r in fake.requests if r.path == pods], "the check lists in the chosen namespace"
    fake.answers[("DELETE", f"{pods}/a")] = (200, pod("a"))
    assert client.post("/lessons/02-self-healing/2/do/").status_code == 200
    assert [(r.method, r.path) for r in fake.writes()] == [("DELETE", f"{pods}/a")]


@pytest.mark.django_db(transaction=True)
def test_choosing_an_existing_namespace_creates_nothing_and_a_refused_creation_is_said(fake, client):
    fake.answers[("GET", "/api/v1/namespaces/team-c")] = (200, {"kind": "Namespace", "metadata": {"name": "team-c"}})
    assert client.post("/lessons/namespace/", {"namespace": "team-c"}).status_code == 200
    assert fake.writes() == []
    fake.answers[("POST", "/api/v1/namespaces")] = (403, status(403, "Forbidden", 'namespaces is forbidden'))
    answer = client.post("/lessons/namespace/", {"namespace": "team-d"}).content.decode()
    assert "does not exist and could not be created" in answer and "forbidden" in answer


def test_the_rooms_progress_is_json_for_the_board(client, settings, tmp_path):
    from control import roster

    settings.DATA_DIR = tmp_path
    roster.join_code(tmp_path, "alice")
    answer = client.get("/lessons/progress/")
    assert answer.status_code == 200 and answer.json() == {"progress": {"alice": None}}


def _pods_at(revisions: dict[str, int]) -> list[dict]:
    pods = [pod(name) for name in revisions]
    for item in pods:
        item["metadata"]["resourceVersion"] = str(revisions[item["metadata"]["name"]])
    return pods


def test_a_changed_check_carries_the_revision_its_step_began_at(fake, client):
    fake.answers[("GET", PODS)] = (200, {"kind": "PodList", "metadata": {"resourceVersion": "40"},
                                             "items": _pods_at({"a": 10, "b": 11, "c": 12})})
    step = client.get("/lessons/02-self-healing/2/").content.decode()
    assert "/lessons/02-self-healing/2/check/?since=40" in step
    before = client.get("/lessons/02-self-healing/2/check/?since=40").content.decode()
    assert "waiting" in before and "?since=40" in before  # three Running, none of them new: not yet
    fake.answers[("GET", PODS)] = (200, {"kind": "PodList", "items": _pods_at({"a": 10, "b": 11, "d": 44})})
    assert "done" in client.get("/lessons/02-self-healing/2/check/?since=40").content.decode()


def test_a_step_that_only_reads_turns_green_when_its_button_got_the_expected_answer(fake, client):
    from dashboard import lesson_answers

    lesson_answers.forget_all()
    assert "waiting" in client.get("/lessons/08-gone/1/check/").content.decode()
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                        "message": "too old resource version: 1 (300)"}}
    # the fake answers by path only: the watch and the relist after it both get this line
    fake.raw[("GET", PODS)] = (200, (json.dumps(gone) + "\n").encode(), "application/json")
    answer = client.post("/lessons/08-gone/1/do/")
    text = answer.content.decode()
    assert answer.status_code == 410 and "ERROR 410 Expired: too old resource version" in text
    assert [(r.method, r.query.get("watch")) for r in fake.requests if r.path == PODS] == [("GET", "1"), ("GET", None)]
    assert "done" in client.get("/lessons/08-gone/1/check/").content.decode()
    lesson_answers.forget_all()


def test_the_drain_steps_line_asks_after_the_drain_until_it_ends(fake, client, monkeypatch):
    """Lesson 15's "Do it" starts a drain in the background: its result line polls the drain's
    progress (as the node card's does) instead of keeping its first words."""
    from dashboard import actions
    from dashboard.drain import Progress

    async def drain(client, form):
        return actions.Ongoing(Progress(form["name"], state="cordoning"))

    monkeypatch.setitem(actions.ACTIONS, "drain", drain)
    answer = client.post("/lessons/15-drain/2/do/").content.decode()
    assert "Draining node-1: cordoning it" in answer
    assert 'hx-get="/drain/node-1/"' in answer and 'hx-trigger="every 1s"' in answer
    assert '<span class="words-kitchen"' in answer  # both wordings, as the node card's line
    other = client.post("/lessons/02-self-healing/2/do/").content.decode()
    assert "hx-get" not in other


def test_a_hub_that_does_not_answer_is_said_next_to_the_step_never_a_500(fake, client, monkeypatch):
    """Under a room's load the hub may not answer the dashboard's questions in time: the step, its
    button and its check each say so (503 and the hub client's words), and the step is still shown."""
    from control import errors
    from dashboard import lesson_checks, lesson_views

    async def unreachable(*args, **kwargs):
        raise errors.ServiceUnavailable("cannot reach the hub at http://127.0.0.1:1: no answer in time")

    monkeypatch.setattr(lesson_views, "_may_do", unreachable)
    step = client.get("/lessons/02-self-healing/2/")
    assert step.status_code == 503
    page = step.content.decode()
    assert "Drop one" in page and "no answer in time" in page and "/lessons/02-self-healing/2/do/" in page
    done = client.post("/lessons/02-self-healing/2/do/")
    assert done.status_code == 503 and "no answer in time" in done.content.decode()
    monkeypatch.setattr(lesson_checks, "run_check", unreachable)
    check = client.get("/lessons/02-self-healing/2/check/")
    assert check.status_code == 200 and "no answer in time" in check.content.decode()

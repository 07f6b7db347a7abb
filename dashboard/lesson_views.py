"""The lessons panel's views: the list of lessons, one step, its check, its button. Thin, as the
other views: each renders an htmx partial from `lessons` and `lesson_checks`.

Guarantees: lessons are read from `lessons/` on every list request (an instructor's new or
edited file shows without a restart), and a broken file is listed with its error (file and line)
instead of hiding the rest; a step's check is one LIST through the hub as the dashboard's own
client and re-polled by the page only while it is not yet satisfied (then every 10 s, so an idle
stage stays quiet); unknown lessons or steps are 404; a refused button shows the hub's message
with its status code, and nothing else changes.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.http import require_GET, require_POST

from dashboard import discovery, hub, lesson_checks, lessons
from dashboard.login import login_required
from dashboard.views import localized

POLL_WAITING, POLL_DONE = "3s", "10s"


def _step(lesson_id: str, number: int) -> tuple[lessons.Lesson, lessons.Step]:
    catalogue = lessons.load_all()
    lesson = catalogue.get(lesson_id)
    if lesson is None or not 1 <= number <= len(lesson.steps):
        raise Http404(f"no step {number} in lesson {lesson_id}")
    return lesson, lesson.steps[number - 1]


def _language() -> str:
    language = (translation.get_language() or "en")[:2]
    return language if language in lessons.LANGUAGES else "en"


@require_GET
@localized
@login_required
async def lesson_list(request: HttpRequest) -> HttpResponse:
    catalogue = lessons.load_all()
    language = _language()
    rows = [{"id": lesson.id, "title": lessons.text(lesson.title, language), "steps": len(lesson.steps),
             "idea": lesson.idea} for lesson in catalogue.lessons]
    return render(request, "dashboard/_lessons.html", {"lessons": rows, "errors": catalogue.errors})


@require_GET
@localized
@login_required
async def lesson_step(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    lesson, step = _step(lesson_id, number)
    language = _language()
    return render(request, "dashboard/_lesson_step.html", {
        "lesson": lesson, "lesson_title": lessons.text(lesson.title, language), "number": number,
        "count": len(lesson.steps), "title": lessons.text(step.title, language),
        "explain": lessons.text(step.explain, language), "kubectl": step.kubectl, "has_action": step.action is not None,
        "has_check": step.check is not None, "panel": step.panel, "previous": number - 1 if number > 1 else None,
        "next": number + 1 if number < len(lesson.steps) else None})


@require_GET
@localized
@login_required
async def lesson_check(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    lesson, step = _step(lesson_id, number)
    if step.check is None:
        raise Http404(f"step {number} of lesson {lesson_id} has no check")
    async with hub.client_for(hub.scope_of(request)) as client:
        verdict = await lesson_checks.run_check(client, step.check, discovery.resource_for)
    return render(request, "dashboard/_lesson_check.html", {
        "lesson": lesson, "number": number, "verdict": verdict, "goal": lesson_checks.goal(step.check),
        "poll": POLL_DONE if verdict.ok else POLL_WAITING})


@require_POST
@localized
@login_required
async def lesson_act(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    _, step = _step(lesson_id, number)
    if step.action is None:
        raise Http404(f"step {number} of lesson {lesson_id} has no button")
    async with hub.client_for(hub.scope_of(request)) as client:
        done = await lesson_checks.run_action(client, step.action, discovery.resource_for)
    return render(request, "dashboard/_action_result.html",
                  {"message": done.message, "ok": done.ok, "action": f"lesson-{lesson_id}-{number}"},
                  status=done.code)

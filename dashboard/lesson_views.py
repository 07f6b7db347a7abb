"""The lessons panel's views: the list of lessons, one step, its check, its button, the instructor's
choice of namespace and the room's progress. Thin, as the other views: each renders an htmx
partial (or JSON) from `lessons`, `lesson_scope`, `lesson_rights`, `lesson_checks` and
`lesson_progress`.

Guarantees: lessons are read from `lessons/` on every list request (an instructor's new or
edited file shows without a restart), and a broken file is listed with its error (file and line)
instead of hiding the rest. A lesson runs in the viewer's namespace (`viewer_scope`): an
attendee's own (their kubeconfig's, so their kubectl needs no `-n`), else the one chosen on the
page (`default` until then; a chosen namespace that does not exist is created, as the viewer); its manifests, button, kubectl command and check are rewritten into
it. A step whose button or command needs rights the viewer lacks (asked of the hub as access
reviews, kept a minute) has no button: it says "watch the instructor do it", and a button posted
anyway is refused with 403 without any request to the hub. A check is one LIST as the viewer,
made only when they may list it, re-polled while not satisfied (then every 10 s, so an idle stage
stays quiet). Each shown step and each check's verdict is recorded for the instructor's board;
`lesson_progress_json` serves it only to a user who may list pods everywhere. Unknown lessons or
steps are 404; a refused button shows the hub's message with its status code, nothing else changes.
A button's answer also tells the page (`HX-Trigger: lesson-acted`) to re-check the step at once, so
a check its button satisfied turns green with the answer instead of at the next poll.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from control import errors, roster
from control.client.http import HubClient
from control.client.resources import NAMESPACES, Resource
from control.kinds.base import name_causes
from dashboard.actions import Ongoing
from dashboard import access, discovery, hub, lesson_answers, lesson_checks, lesson_rights, lessons
from dashboard.lesson_progress import PROGRESS, Position
from dashboard.lesson_scope import DEFAULT, Scope, scoped_action, scoped_check, scoped_command
from dashboard.login import login_required
from dashboard.views import localized

POLL_WAITING, POLL_DONE = "3s", "10s"
ACTED = "lesson-acted"  # the event a step's button raises on the page; its check listens for it
SESSION_NAMESPACE = "kk_lesson_namespace"


def _step(lesson_id: str, number: int) -> tuple[lessons.Lesson, lessons.Step]:
    lesson = lessons.load_one(lesson_id)
    if lesson is None or not 1 <= number <= len(lesson.steps):
        raise Http404(f"no step {number} in lesson {lesson_id}")
    return lesson, lesson.steps[number - 1]


def _viewer(request: HttpRequest) -> str:
    """Whose answers these are: the browser's session (its cookie; no session read needed)."""
    return request.COOKIES.get(settings.SESSION_COOKIE_NAME, "") or request.META.get("REMOTE_ADDR", "")


def _language() -> str:
    language = (translation.get_language() or "en")[:2]
    return language if language in lessons.LANGUAGES else "en"


def _user() -> str:
    identity = hub.acting()
    return identity.user if identity else ""


async def viewer_scope(request: HttpRequest) -> Scope:
    """An attendee's own namespace; anyone else's chosen one (default: `default`)."""
    attendee = hub.acting_attendee()
    if attendee is not None:
        return Scope(namespace=attendee, own_namespaces=False, kubeconfig_namespace=attendee)
    chosen = await request.session.aget(SESSION_NAMESPACE) or DEFAULT
    return Scope(namespace=chosen, own_namespaces=True, kubeconfig_namespace=DEFAULT)


def _list_context(scope: Scope) -> dict[str, Any]:
    catalogue = lessons.load_all()
    rows = [{"id": lesson.id, "title": lessons.text(lesson.title, _language()), "steps": len(lesson.steps),
             "idea": lesson.idea} for lesson in catalogue.lessons]
    return {"lessons": rows, "errors": catalogue.errors, "scope": scope, "may_choose": scope.own_namespaces}


async def _may_do(client: HubClient, step: lessons.Step, scope: Scope) -> bool:
    if not access.enforced():
        return True  # no need to work out the rights: the hub allows everything
    rights = lesson_rights.command_rights(step.kubectl)
    if step.action is not None:
        rights += await lesson_rights.action_rights(client, scoped_action(step.action, scope), scope,
                                                    discovery.resource_for)
    return await access.allowed(client, _user(), rights)


@require_GET
@localized
@login_required
async def lesson_list(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/_lessons.html", _list_context(await viewer_scope(request)))


@require_POST
@localized
@login_required
async def lesson_namespace(request: HttpRequest) -> HttpResponse:
    """The namespace the viewer's lessons run in (not an attendee's: theirs is fixed)."""
    scope = await viewer_scope(request)
    chosen = (request.POST.get("namespace") or "").strip()
    message = ""
    if not scope.own_namespaces:
        message, status = gettext("Your lessons run in your own namespace."), 403
    elif name_causes(chosen, label=True):  # the hub's own rule for a Namespace's name
        message, status = gettext("%(name)r is not a namespace name (lowercase letters, digits and dashes).") % {"name": chosen}, 400
    else:
        await request.session.aset(SESSION_NAMESPACE, chosen)
        scope, status = Scope(namespace=chosen), 200
        async with hub.client_for(hub.scope_of(request)) as client:
            message = await _namespace_ready(client, chosen)
    return render(request, "dashboard/_lessons.html", {**_list_context(scope), "message": message}, status=status)


async def _namespace_ready(client: HubClient, name: str) -> str:
    """Make sure the chosen namespace exists (every lesson's first apply would otherwise answer
    `namespaces "x" not found`): created as the viewer when missing; what happened, for the page."""
    try:
        await client.get(NAMESPACES, name)
        return ""
    except errors.NotFound:
        pass
    except errors.ApiError as exc:
        return gettext("Could not check namespace %(name)s: %(reason)s") % {"name": name, "reason": exc}
    try:
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except errors.AlreadyExists:
        return ""
    except errors.ApiError as exc:
        return gettext("Namespace %(name)s does not exist and could not be created: %(reason)s") % {
            "name": name, "reason": exc}
    return gettext("Namespace %(name)s did not exist: it was created for the lessons.") % {"name": name}


@require_GET
@localized
@login_required
async def lesson_step(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    lesson, step = _step(lesson_id, number)
    language = _language()
    scope = await viewer_scope(request)
    since, problem, may_do = None, "", True
    try:
        async with hub.client_for(hub.scope_of(request)) as client:
            may_do = await _may_do(client, step, scope)
            if step.check is not None and step.check.changed:  # the revision this step begins at
                since = await lesson_checks.revision_now(client, scoped_check(step.check, scope),
                                                         discovery.resource_for)
    except errors.ApiError as exc:
        # A hub that is down or too busy to answer in time: the step is still shown, with why next to
        # its button (which the hub decides itself when pressed), never a 500 page.
        problem = exc.message
    title = lessons.text(step.title, language)
    if _user():
        PROGRESS.showing(_user(), Position(lesson=lesson.id, title=lessons.text(lesson.title, language), step=number,
                                           steps=len(lesson.steps), step_title=title, check=None, watching=not may_do))
    return render(request, "dashboard/_lesson_step.html", {
        "since": since,
        "lesson": lesson, "lesson_title": lessons.text(lesson.title, language), "number": number,
        "count": len(lesson.steps), "title": title, "namespace": scope.namespace,
        "explain": lessons.text(step.explain, language), "kubectl": scoped_command(step.kubectl, scope),
        "has_action": step.action is not None and may_do, "watch": not may_do,
        "has_check": step.check is not None or step.answer is not None, "panel": step.panel, "previous": number - 1 if number > 1 else None,
        "next": number + 1 if number < len(lesson.steps) else None, "problem": problem},
        status=503 if problem else 200)


@require_GET
@localized
@login_required
async def lesson_check(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    lesson, step = _step(lesson_id, number)
    if step.answer is not None:  # a button that only reads: green once it answered what the step expects
        answered = lesson_answers.answered(_viewer(request), lesson_id, number) == step.answer
        return render(request, "dashboard/_lesson_check.html", {
            "lesson": lesson, "number": number, "verdict": lesson_checks.Verdict(ok=answered, matched=int(answered)),
            "goal": 1, "poll": POLL_DONE if answered else POLL_WAITING})
    if step.check is None:
        raise Http404(f"step {number} of lesson {lesson_id} has no check")
    check = scoped_check(step.check, await viewer_scope(request))
    since = request.GET.get("since", "")
    since_revision = int(since) if since.isdigit() else None
    try:
        async with hub.client_for(hub.scope_of(request)) as client:
            async def may_list(resource: Resource, namespace: str) -> bool:
                return await access.allowed(client, _user(), [access.Right("list", resource.plural, resource.group,
                                                                           namespace)])

            verdict = await lesson_checks.run_check(client, check, discovery.resource_for, may_list,
                                                    since=since_revision)
    except errors.ApiError as exc:  # the hub did not answer (down, or too busy): the check says so and asks again
        verdict = lesson_checks.Verdict(ok=False, problem=exc.message)
    if _user():
        PROGRESS.checked(_user(), lesson.id, number, verdict.ok)
    return render(request, "dashboard/_lesson_check.html", {
        "lesson": lesson, "number": number, "since": since_revision, "verdict": verdict,
        "goal": lesson_checks.goal(check), "poll": POLL_DONE if verdict.ok or verdict.forbidden else POLL_WAITING})


@require_POST
@localized
@login_required
async def lesson_act(request: HttpRequest, lesson_id: str, number: int) -> HttpResponse:
    _, step = _step(lesson_id, number)
    if step.action is None:
        raise Http404(f"step {number} of lesson {lesson_id} has no button")
    scope = await viewer_scope(request)
    try:
        async with hub.client_for(hub.scope_of(request)) as client:
            if not await _may_do(client, step, scope):
                done = lesson_checks.Done(False, gettext("This step needs the instructor's rights: watch the instructor "
                                                         "do it."), 403)
            else:
                done = await lesson_checks.run_action(client, scoped_action(step.action, scope), discovery.resource_for,
                                                      scope)
    except errors.ApiError as exc:  # the hub did not answer the rights question: its words, next to the button
        done = lesson_checks.Done(False, exc.message, exc.code)
    lesson_answers.remember(_viewer(request), lesson_id, number, done.code)
    # A button that goes on in the background (the drain): its line asks after it until it ends,
    # as the node card's does, instead of staying at its first words ("cordoning it…").
    ongoing = isinstance(done.message, Ongoing)
    response = render(request, "dashboard/_action_result.html",
                      {"message": done.message, "ok": done.ok, "action": f"lesson-{lesson_id}-{number}",
                       "kitchen": done.message.kitchen if ongoing else "",
                       "poll": reverse("dashboard:drain", args=[done.message.node]) if ongoing else ""},
                      status=done.code)
    response["HX-Trigger"] = ACTED  # the step's check looks again now, not at its next poll
    return response


@require_GET
@login_required
async def lesson_progress_json(request: HttpRequest) -> JsonResponse:
    """{"progress": {attendee: position or null}} for the instructor's board."""
    names = list(roster.attendee_codes(settings.DATA_DIR))
    async with hub.client_for(hub.scope_of(request)) as client:
        board = await access.allowed(client, _user(), [access.Right("list", "pods")])
    if not board:
        return JsonResponse({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                             "message": "the room's progress is for who may list pods in every namespace",
                             "code": 403}, status=403)
    return JsonResponse({"progress": PROGRESS.snapshot(names)})

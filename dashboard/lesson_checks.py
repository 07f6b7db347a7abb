"""A lesson step's check, evaluated level-triggered against the live cluster, and its action.

Guarantees:
- `evaluate` is pure: the same items give the same verdict, whatever happened before (a check
  that was green and no longer holds turns back, as a controller's reconcile would see it).
- `run_check` asks the hub exactly one LIST (with the check's selectors) as the page's user; the
  kind is found through the hub's discovery (`resolve`), so a lesson may check any kind the hub
  serves, custom resources included. Given `may_list`, it first asks whether the user may list
  that resource there, and when not, makes no LIST (a request bound to be refused would count as
  the user's error) and answers a verdict that says so (`forbidden`). A kind the hub does not
  serve, or a refused request, is a verdict with the hub's message, never an exception.
- A check with `changed` is green only when, besides its bounds, one matching object was written
  after the revision the step began at (`since`, from `revision_now`): a step's check turns green
  because of that step's action, not because an earlier step already left the cluster so.
- `run_action` does one step's button through the same client, with the manifests of an `apply`
  moved into the viewer's `Scope` (`lesson_scope`); every request it makes shows on the stage as
  the page's spoke.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from control import errors
from control.client.http import HubClient, HubUnreachable
from control.client.resources import Resource
from dashboard import lesson_badges, lesson_buttons, manifests
from dashboard.actions import ACTIONS, ActionError
from dashboard.lesson_scope import Scope, scoped_documents
from dashboard.lessons import Action, Check, manifest_text

Resolve = Callable[[HubClient, str, str], Awaitable[Resource | None]]
MayList = Callable[[Resource, str], Awaitable[bool]]  # (resource, namespace or "") -> allowed
_SEGMENT = re.compile(r"^([^\[]+)(?:\[([^\]=]+)(?:=([^\]]*))?\])?$")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    matched: int = 0
    total: int = 0
    problem: str = ""  # the hub's refusal or an unknown kind; empty when the check could run
    forbidden: bool = False  # the user may not list what the check reads: it was not asked


def field(obj: Any, path: str) -> Any:
    """The value at `path` (`status.phase`, `spec.containers[0].image`,
    `status.conditions[type=Ready].status`, `metadata.annotations[example.com/key]`), or None when
    any step is missing."""
    node = obj
    for segment in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path):
        match = _SEGMENT.match(segment)
        if match is None or not isinstance(node, dict):
            return None
        name, selector, wanted = match.groups()
        node = node.get(name)
        if selector is None:
            continue
        if isinstance(node, dict) and wanted is None:  # [key]: a map key that holds dots (an annotation's)
            node = node.get(selector)
            continue
        if not isinstance(node, list):
            return None
        if wanted is None:  # [N]
            node = node[int(selector)] if selector.isdigit() and int(selector) < len(node) else None
        else:  # [key=value]: the first element whose key has that value
            node = next((item for item in node if isinstance(item, dict) and str(item.get(selector)) == wanted), None)
    return node


def holds(actual: Any, expectation: tuple[str, Any]) -> bool:
    op, want = expectation
    if op == "exists":
        return (actual is not None) == want
    if op == "not":
        return not _same(actual, want)
    if op in ("atLeast", "atMost"):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return False
        return actual >= want if op == "atLeast" else actual <= want
    return _same(actual, want)


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual == expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return actual == expected
    return actual is not None and str(actual) == str(expected)


def evaluate(check: Check, items: list[dict[str, Any]], since: int | None = None) -> Verdict:
    """Whether the listed objects satisfy the check: how many match every `where`, against the bounds;
    with `check.changed`, one of the matching ones must also be newer than revision `since`."""
    matching = [item for item in items if all(holds(field(item, path), want) for path, want in check.where)]
    matched = len(matching)
    ok = ((check.count is None or matched == check.count)
          and (check.at_least is None or matched >= check.at_least)
          and (check.at_most is None or matched <= check.at_most))
    if check.changed:
        ok = ok and any(_revision(item.get("metadata") or {}) > (since or 0) for item in matching)
    return Verdict(ok=ok, matched=matched, total=len(items))


def _revision(meta: dict[str, Any]) -> int:
    value = str(meta.get("resourceVersion") or "")
    return int(value) if value.isdigit() else 0


def goal(check: Check) -> int:
    """The number a progress display aims at."""
    if check.count is not None:
        return check.count
    return check.at_least if check.at_least is not None else 0


async def run_check(client: HubClient, check: Check, resolve: Resolve, may_list: MayList | None = None, *,
                    since: int | None = None) -> Verdict:
    resource = await resolve(client, check.api_version, check.kind)
    if resource is None:
        return Verdict(ok=False, problem=f'no matches for kind "{check.kind}" in version "{check.api_version}"')
    namespace = check.namespace if resource.namespaced else ""
    if may_list is not None and not await may_list(resource, namespace):
        where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        return Verdict(ok=False, forbidden=True,
                       problem=f'you may not list {resource.plural} {where}: watch the instructor\'s screen')
    try:
        listed = await _list(client, resource, check)
    except errors.ApiError as exc:
        return Verdict(ok=False, problem=exc.message)
    return evaluate(check, listed.get("items") or [], since)


async def revision_now(client: HubClient, check: Check, resolve: Resolve) -> int:
    """The store's revision as the step begins (the resourceVersion of the check's own LIST), the
    `since` a `changed` check compares with; 0 when the hub cannot say."""
    try:
        resource = await resolve(client, check.api_version, check.kind)
    except (errors.ApiError, HubUnreachable):
        return 0
    if resource is None:
        return 0
    try:
        listed = await _list(client, resource, check)
    except (errors.ApiError, HubUnreachable):
        return 0
    return _revision(listed.get("metadata") or {})


async def _list(client: HubClient, resource: Resource, check: Check) -> dict[str, Any]:
    field_selector = check.field_selector
    if check.name:
        field_selector = ",".join(s for s in (f"metadata.name={check.name}", field_selector) if s)
    return await client.list(resource, check.namespace or None, label_selector=check.label_selector,
                             field_selector=field_selector)


@dataclass(frozen=True)
class Done:
    """What a step's button did: kubectl's words, or the refusal (the hub's message and code)."""

    ok: bool
    message: str
    code: int = 200


async def run_action(client: HubClient, action: Action, resolve: Resolve, scope: Scope = Scope()) -> Done:
    """Do the step's (scoped) button. Never raises for a refusal: the hub's, the form's or the
    manifest's reason comes back in `Done`."""
    try:
        message = await _act(client, action, resolve, scope)
        # a provoked refusal (`actions.Answer`) shows as one, with the hub's code when it carries it
        return Done(getattr(message, "ok", True), message, getattr(message, "code", 200))
    except errors.ApiError as exc:
        return Done(False, exc.message, exc.code)
    except (ActionError, manifests.ManifestError) as exc:
        return Done(False, str(exc), 400)


async def _act(client: HubClient, action: Action, resolve: Resolve, scope: Scope) -> str:
    if action.apply:
        documents = scoped_documents(manifests.parse(manifest_text(action)), scope)
        stored, outcomes = await manifests.apply_all(client, documents, default_namespace=action.namespace)
        if not stored:
            refused = next(o for o in outcomes if not o.ok)
            raise ActionError(f"{refused.ref}: {refused.message}")
        return "\n".join(f"{o.ref} {o.verdict}" for o in outcomes)
    if action.delete is not None:
        kind, api_version, selector = action.delete
        resource = await resolve(client, api_version, kind)
        if resource is None:
            raise ActionError(f'no matches for kind "{kind}" in version "{api_version}"')
        listed = await client.list(resource, action.namespace, label_selector=selector)
        live = [i for i in listed.get("items") or [] if not i["metadata"].get("deletionTimestamp")]
        if not live:
            raise ActionError(f"no {resource.plural} match {selector} in namespace {action.namespace}")
        newest = max(live, key=lambda i: (i["metadata"].get("creationTimestamp") or "", i["metadata"]["name"]))
        await client.delete(resource, newest["metadata"]["name"], action.namespace)
        return f'{resource.kind.lower()}/{newest["metadata"]["name"]} deleted'
    button = ACTIONS.get(action.do) or lesson_buttons.BUTTONS.get(action.do) or lesson_badges.BUTTONS[action.do]
    return await button(client, dict(action.form))

"""Lessons: guided scenarios an instructor writes as YAML files under `lessons/`, no code needed.

A lesson file:

    title: {en: "Kill a pod: the kitchen cooks it again", ko: "..."}
    idea: self-healing             # the seed idea it teaches (one of IDEAS)
    steps:
      - title: {en: ..., ko: ...}
        explain: {en: ..., ko: ...}
        kubectl: kubectl apply -f pasta.yaml      # the command to copy (optional)
        panel: events                             # the panel the step brings into view (optional, PANELS)
        action: {apply: pasta.yaml}               # the button (optional), see ACTION_KEYS
        answer: 403        # instead of a check, for a button that only reads: green once it answered this code
        check:                                    # turns the step green (optional)
          apiVersion: v1
          kind: Pod
          namespace: default
          labelSelector: app=pasta
          where: {status.phase: Running, "status.conditions[type=Ready].status": "True",
                  "metadata.annotations[example.com/key]": {exists: true},  # a map key with dots
                  "status.containerStatuses[0].restartCount": {atLeast: 2}}   # also atMost, not, exists
          count: 3                                # or atLeast / atMost (default: atLeast 1)
          changed: true                           # and one of them written since the step began

Guarantees: `load_lesson` returns a fully checked `Lesson` or raises `LessonError` whose message
names the file and the line of the offending entry; nothing about a lesson is read at run time
except the manifests its `apply` actions name (also checked at load: they must exist under
`lessons/manifests/`, with no path outside it). Every text exists in English; Korean falls back
to English where a lesson has none. `load_all` never raises: broken files come back as errors
beside the good lessons, so one bad file does not hide the others. `load_all` parses a file again
only when its text or the manifests folder's list of names changed: an edited or new file shows on
the next request, and an unchanged one costs a read, not a parse. `load_one` answers as `load_all`
does for one lesson, reading only its file (the lesson bar asks for a lesson on every step, check
and button).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from control.installation import shipped
from dashboard.manifests import _Loader

LESSONS_DIR = shipped("lessons")  # the checkout's, or the installed package's copy
MANIFESTS = "manifests"
LANGUAGES = ("en", "ko")
IDEAS = ("declarative", "hub-and-spoke", "watch", "self-healing", "conflict", "gone", "scheduling",
         "service-discovery", "autoscaling", "rollout", "backoff", "eviction", "config", "jobs", "storage",
         "disruption", "rbac", "admission", "network-policy")
ACTION_KEYS = {
    "apply": "a manifest file under lessons/manifests/",
    "delete": "{kind: Pod, labelSelector: ...}: delete one matching object (the newest)",
    "do": "one of the dashboard's buttons (BUTTONS, the lesson-only ones in dashboard.lesson_buttons and "
          "dashboard.lesson_badges), with `form`",
}
CHECK_KEYS = {"apiVersion", "kind", "namespace", "name", "labelSelector", "fieldSelector", "where",
              "count", "atLeast", "atMost", "changed"}
STEP_KEYS = {"title", "explain", "kubectl", "action", "check", "answer", "panel"}
# The dashboard panels a step may bring onto the stage (static/dashboard/layout.js, FOCUSABLE).
PANELS = ("workloads", "events", "failures", "traffic", "wire", "services", "jobs", "sets", "hpa", "custom",
          "configs", "log", "manifest")
LESSON_KEYS = {"title", "idea", "steps", "order"}
BUTTONS = ("delete-pod", "crash", "cordon", "uncordon", "scale", "stale-write", "spoke", "drain",
           "rollout-undo", "as-user", "old-watch", "traffic", "static-pod", "approve-csr", "fetch-badge", "as-badge",
           "front-door", "gateway-traffic", "exec")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_SAFE_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$")
_PATH = re.compile(r"^[A-Za-z0-9_.\-]+(\[[A-Za-z0-9_./\-]+(=[^\]]*)?\])?$")  # one segment of a `where` path


class LessonError(ValueError):
    """A lesson file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Check:
    api_version: str
    kind: str
    namespace: str = ""
    name: str = ""
    label_selector: str = ""
    field_selector: str = ""
    where: tuple[tuple[str, Any], ...] = ()
    count: int | None = None
    at_least: int | None = None
    at_most: int | None = None
    changed: bool = False  # also: one matching object was written after the step began (its own action's doing)


@dataclass(frozen=True)
class Action:
    apply: str = ""                       # manifest file name
    delete: tuple[str, str, str] | None = None  # (kind, apiVersion, labelSelector)
    namespace: str = "default"
    do: str = ""                          # a dashboard button
    form: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Step:
    title: dict[str, str]
    explain: dict[str, str]
    kubectl: str = ""
    action: Action | None = None
    check: Check | None = None
    answer: int | None = None  # the status code the step's button must answer (a step that changes nothing)
    panel: str = ""


@dataclass(frozen=True)
class Lesson:
    id: str
    file: str
    title: dict[str, str]
    idea: str
    steps: tuple[Step, ...]
    order: int = 100


@dataclass
class Catalogue:
    lessons: list[Lesson] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def get(self, lesson_id: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)


def text(texts: dict[str, str], language: str) -> str:
    """The text in `language`, else English."""
    return texts.get(language) or texts.get("en", "")


# --- reading YAML with line numbers -----------------------------------------------------------

class _Where:
    """Turns a composed YAML node tree into plain data, remembering each node's line."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, node: yaml.Node | None, message: str) -> LessonError:
        line = f" line {node.start_mark.line + 1}" if node is not None else ""
        return LessonError(f"{self.file}{line}: {message}")

    def mapping(self, node: yaml.Node, what: str, allowed: set[str] | None = None) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if not isinstance(name, str):
                raise self.fail(key, f"{what}: keys must be strings")
            if allowed is not None and name not in allowed:
                raise self.fail(key, f"{what}: unknown field {name!r} (known: {', '.join(sorted(allowed))})")
            if name in out:
                raise self.fail(key, f"{what}: {name!r} given twice")
            out[name] = value
        return out

    def scalar(self, node: yaml.Node, what: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{what} must be a single value")
        return yaml.constructor.SafeConstructor().construct_object(node)  # the tag the loader resolved

    def string(self, node: yaml.Node, what: str) -> str:
        value = self.scalar(node, what)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, f"{what} must be a non-empty string")
        return value.strip()

    def integer(self, node: yaml.Node, what: str) -> int:
        value = self.scalar(node, what)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(node, f"{what} must be a whole number >= 0")
        return value

    def texts(self, node: yaml.Node, what: str) -> dict[str, str]:
        """{en: ..., ko: ...}, or a plain string (English)."""
        if isinstance(node, yaml.ScalarNode):
            return {"en": self.string(node, what)}
        entries = self.mapping(node, what, set(LANGUAGES))
        out = {language: self.string(value, f"{what}.{language}") for language, value in entries.items()}
        if "en" not in out:
            raise self.fail(node, f"{what} needs an English text (en)")
        return out


# --- the lesson format ------------------------------------------------------------------------

def _check(r: _Where, node: yaml.Node, what: str) -> Check:
    entries = r.mapping(node, what, CHECK_KEYS)
    for required in ("apiVersion", "kind"):
        if required not in entries:
            raise r.fail(node, f"{what} needs {required}")
    where: list[tuple[str, Any]] = []
    if "where" in entries:
        for path, value in r.mapping(entries["where"], f"{what}.where").items():
            if not all(_PATH.match(segment) for segment in _split_path(path)):
                raise r.fail(entries["where"], f"{what}.where: {path!r} is not a field path "
                                               "(e.g. status.phase or status.conditions[type=Ready].status)")
            where.append((path, _expectation(r, value, f"{what}.where.{path}")))
    bounds = {key: r.integer(entries[key], f"{what}.{key}") for key in ("count", "atLeast", "atMost") if key in entries}
    if "count" in bounds and len(bounds) > 1:
        raise r.fail(node, f"{what}: count excludes atLeast/atMost")
    if not bounds:
        bounds["atLeast"] = 1
    optional = {key: r.string(entries[key], f"{what}.{key}") for key in ("namespace", "name", "labelSelector", "fieldSelector")
                if key in entries}
    changed = r.scalar(entries["changed"], f"{what}.changed") if "changed" in entries else False
    if not isinstance(changed, bool):
        raise r.fail(entries["changed"], f"{what}.changed must be true or false")
    return Check(api_version=r.string(entries["apiVersion"], f"{what}.apiVersion"), kind=r.string(entries["kind"], f"{what}.kind"),
                 namespace=optional.get("namespace", ""), name=optional.get("name", ""),
                 label_selector=optional.get("labelSelector", ""), field_selector=optional.get("fieldSelector", ""),
                 where=tuple(where), count=bounds.get("count"), at_least=bounds.get("atLeast"), at_most=bounds.get("atMost"),
                 changed=changed)


OPERATORS = ("atLeast", "atMost", "not", "exists")


def _expectation(r: _Where, node: yaml.Node, what: str) -> tuple[str, Any]:
    """("eq", value) for a plain value; ("atLeast"|"atMost", number), ("not", value) or
    ("exists", bool) for a one-entry mapping such as {atLeast: 2}."""
    if isinstance(node, yaml.ScalarNode):
        return ("eq", r.scalar(node, what))
    entries = r.mapping(node, what, set(OPERATORS))
    if len(entries) != 1:
        raise r.fail(node, f"{what}: one of {', '.join(OPERATORS)}")
    (op, value), = entries.items()
    if op in ("atLeast", "atMost"):
        number = r.scalar(value, f"{what}.{op}")
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise r.fail(value, f"{what}.{op} must be a number")
        return (op, number)
    if op == "exists":
        flag = r.scalar(value, f"{what}.exists")
        if not isinstance(flag, bool):
            raise r.fail(value, f"{what}.exists must be true or false")
        return (op, flag)
    return (op, r.scalar(value, f"{what}.not"))


def _split_path(path: str) -> list[str]:
    """`a.b[type=Ready].c` -> ["a", "b[type=Ready]", "c"] (dots inside brackets do not split)."""
    return re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path) if path and ".." not in path else [""]


def _action(r: _Where, node: yaml.Node, what: str, root: Path) -> Action:
    entries = r.mapping(node, what, {*ACTION_KEYS, "form", "namespace"})
    chosen = [key for key in ACTION_KEYS if key in entries]
    if len(chosen) != 1:
        raise r.fail(node, f"{what} needs exactly one of {', '.join(ACTION_KEYS)}")
    namespace = r.string(entries["namespace"], f"{what}.namespace") if "namespace" in entries else "default"
    if "form" in entries and chosen[0] != "do":
        raise r.fail(entries["form"], f"{what}.form goes with `do` only")
    if chosen[0] == "apply":
        name = r.string(entries["apply"], f"{what}.apply")
        if not _SAFE_FILE.match(name) or not (root / MANIFESTS / name).is_file():
            raise r.fail(entries["apply"], f"{what}.apply: no manifest {name!r} in lessons/{MANIFESTS}/")
        return Action(apply=name, namespace=namespace)
    if chosen[0] == "delete":
        spec = r.mapping(entries["delete"], f"{what}.delete", {"apiVersion", "kind", "labelSelector"})
        if set(spec) != {"apiVersion", "kind", "labelSelector"}:
            raise r.fail(entries["delete"], f"{what}.delete needs apiVersion, kind and labelSelector")
        return Action(delete=(r.string(spec["kind"], "kind"), r.string(spec["apiVersion"], "apiVersion"),
                              r.string(spec["labelSelector"], "labelSelector")), namespace=namespace)
    button = r.string(entries["do"], f"{what}.do")
    if button not in BUTTONS:
        raise r.fail(entries["do"], f"{what}.do: unknown button {button!r} (known: {', '.join(BUTTONS)})")
    form = {}
    if "form" in entries:
        form = {key: str(r.scalar(value, f"{what}.form.{key}")) for key, value in r.mapping(entries["form"], f"{what}.form").items()}
    form.setdefault("namespace", namespace)
    return Action(do=button, form=tuple(sorted(form.items())), namespace=namespace)


def _answer(r: _Where, step: dict[str, yaml.Node], what: str) -> int | None:
    if "answer" not in step:
        return None
    code = r.integer(step["answer"], f"{what}.answer")
    if not 200 <= code <= 599:
        raise r.fail(step["answer"], f"{what}.answer must be an HTTP status code (200-599)")
    if "action" not in step or "check" in step:
        raise r.fail(step["answer"], f"{what}.answer goes with an action and instead of a check")
    return code


def _panel(r: _Where, node: yaml.Node, what: str) -> str:
    panel = r.string(node, what)
    if panel not in PANELS:
        raise r.fail(node, f"{what} {panel!r} is not one of {', '.join(PANELS)}")
    return panel


def parse_lesson(source: str, file: str, root: Path = LESSONS_DIR) -> Lesson:
    """The lesson in `source` (the text of `file`), fully checked; raises LessonError."""
    r = _Where(file)
    lesson_id = Path(file).stem
    if not _ID.match(lesson_id):
        raise r.fail(None, "a lesson file name is lowercase letters, digits and dashes, ending in .yaml")
    try:
        node = yaml.compose(source, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise LessonError(f"{file}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except ValueError as exc:  # the loader's own refusals (aliases)
        raise LessonError(f"{file}: {exc}") from None
    if node is None:
        raise LessonError(f"{file}: the file is empty")
    entries = r.mapping(node, "the lesson", LESSON_KEYS)
    for required in ("title", "idea", "steps"):
        if required not in entries:
            raise r.fail(node, f"the lesson needs {required}")
    idea = r.string(entries["idea"], "idea")
    if idea not in IDEAS:
        raise r.fail(entries["idea"], f"idea {idea!r} is not one of {', '.join(IDEAS)}")
    if not isinstance(entries["steps"], yaml.SequenceNode) or not entries["steps"].value:
        raise r.fail(entries["steps"], "steps must be a non-empty list")
    steps = []
    for number, step_node in enumerate(entries["steps"].value, start=1):
        what = f"step {number}"
        step = r.mapping(step_node, what, STEP_KEYS)
        if "title" not in step or "explain" not in step:
            raise r.fail(step_node, f"{what} needs a title and an explain")
        steps.append(Step(title=r.texts(step["title"], f"{what}.title"), explain=r.texts(step["explain"], f"{what}.explain"),
                          kubectl=r.string(step["kubectl"], f"{what}.kubectl") if "kubectl" in step else "",
                          action=_action(r, step["action"], f"{what}.action", root) if "action" in step else None,
                          check=_check(r, step["check"], f"{what}.check") if "check" in step else None,
                          answer=_answer(r, step, what),
                          panel=_panel(r, step["panel"], f"{what}.panel") if "panel" in step else ""))
    order = r.integer(entries["order"], "order") if "order" in entries else 100
    return Lesson(id=lesson_id, file=file, title=r.texts(entries["title"], "title"), idea=idea,
                  steps=tuple(steps), order=order)


# path -> (its signature when parsed, the lesson or the error); at most one entry per file seen
_parsed: dict[Path, tuple[tuple[str, frozenset[str]], Lesson | str]] = {}


def _manifest_names(root: Path) -> frozenset[str]:
    # a lesson's `apply` is checked against these: adding or removing one re-parses the lessons
    folder = root / MANIFESTS
    return frozenset(p.name for p in folder.iterdir()) if folder.is_dir() else frozenset()


def _load(path: Path, root: Path, manifests: frozenset[str]) -> Lesson | str:
    """One file's lesson, or its error; parsed again only when its text or the manifests changed
    (the text itself is the key: a file's modification time is too coarse to tell two quick edits apart)."""
    file = f"lessons/{path.name}"
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return f"{file}: not UTF-8 text"
    known = _parsed.get(path)
    if known is not None and known[0] == (source, manifests):
        return known[1]
    try:
        outcome: Lesson | str = parse_lesson(source, file, root)
    except LessonError as exc:
        outcome = str(exc)
    _parsed[path] = ((source, manifests), outcome)
    return outcome


def load_all(root: Path = LESSONS_DIR) -> Catalogue:
    """Every lesson under `root`, in their `order`; a broken file is an error beside the rest."""
    catalogue = Catalogue()
    paths = sorted(root.glob("*.yaml")) if root.is_dir() else []
    manifests = _manifest_names(root) if paths else frozenset()
    for path in paths:
        outcome = _load(path, root, manifests)
        if isinstance(outcome, Lesson):
            catalogue.lessons.append(outcome)
        else:
            catalogue.errors.append(outcome)
    for gone in [p for p in _parsed if p.parent == root and p not in set(paths)]:
        del _parsed[gone]  # a removed file is not kept
    catalogue.lessons.sort(key=lambda lesson: (lesson.order, lesson.id))
    return catalogue


def load_one(lesson_id: str, root: Path = LESSONS_DIR) -> Lesson | None:
    """The lesson `lesson_id`, as `load_all(root).get(lesson_id)` gives it (None when it is missing
    or broken), reading only its own file: a lesson's step, check and button need no other."""
    path = root / f"{lesson_id}.yaml"
    if not _ID.match(lesson_id) or not path.is_file():
        return None
    outcome = _load(path, root, _manifest_names(root))
    return outcome if isinstance(outcome, Lesson) else None


def manifest_text(action: Action, root: Path = LESSONS_DIR) -> str:
    return (root / MANIFESTS / action.apply).read_text(encoding="utf-8")

"""Every lesson walked through in the browser, as an instructor on a projector does it: Debian's
Chromium at 1280×720 against a fresh `runcluster --pace workshop` (the supervisor, kube-proxies,
metrics and the two cooks included, so the lessons that stop a kubelet or the scheduler, send traffic
or autoscale are walked too).

At every step of every lesson in `lessons/`: the step's check is red when the step is shown; its
"Do it" button and its check are on the screen (inside the viewport, the page not scrolled), and so
is the panel the step names (`panel:`, its heading); "Do it" answers (its result also on the
screen, a refusal only where the step provokes one: `answer: 4xx` or the stale write's 409); then
the check turns green. A failure names the lesson and the step, and leaves a screenshot in
test-artifacts/.

Time on a 2-core machine: the lessons share one cluster. Each runs in its own namespace (the lesson
bar's namespace choice, each page its own session), several at once on their own pages; a lesson
with a cluster-wide button (a kubelet or the scheduler stopped, a node cordoned or drained) runs
after them, alone, and leaves the cluster as it found it (its own last steps start, uncordon). Its
namespace is deleted when a lesson ends, so what it left running (a crash loop, a rush of traffic)
does not load the next. The hub keeps a log window of LOG_WINDOW seconds (Kubernetes: 5 minutes)
so that lesson 8's watch from revision 1 meets its 410 Gone.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from control import config
from control.auth.tokenfile import admin_token
from dashboard import lessons
from tests.conftest import KUBECTL, ROOT, start_runcluster, wait_for
from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1280, "height": 720}
ARTIFACTS = ROOT / "test-artifacts"
PAGES = 4  # lessons walked at once, each on its own page
GREEN_WITHIN = 120_000  # ms; the slowest check (the Job's back-off) takes under a minute at the workshop's pace
ANSWER_WITHIN = 30_000  # ms for "Do it" to answer
LOG_WINDOW = 20  # seconds of the hub's log; lesson 8 starts after it
CLUSTER_WIDE = {"spoke", "cordon", "uncordon", "drain", "static-pod"}  # buttons that change what every lesson runs on
# Where an element must be to count as on the screen: wholly inside the viewport, the page not scrolled.
PLACE = """(sel) => { const e = document.querySelector(sel); if (!e) return null;
  const r = e.getBoundingClientRect();
  return {top: r.top, left: r.left, bottom: r.bottom, right: r.right, width: r.width, height: r.height,
          scrollX: window.scrollX, scrollY: window.scrollY, innerWidth, innerHeight}; }"""


def walked() -> list[lessons.Lesson]:
    """Every lesson, or only those named in KK_WALK_LESSONS (ids, comma-separated: one lesson's walk
    takes a minute, all of them many)."""
    catalogue = lessons.load_all()
    assert catalogue.errors == [], catalogue.errors
    only = {name.strip() for name in config.given("KK_WALK_LESSONS").split(",") if name.strip()}
    return [lesson for lesson in catalogue.lessons if not only or lesson.id in only]


def cluster_wide(lesson: lessons.Lesson) -> bool:
    return any(step.action is not None and step.action.do in CLUSTER_WIDE for step in lesson.steps)


def namespace_of(lesson: lessons.Lesson) -> str:
    return f"walk-{lesson.id.split('-', 1)[0]}"


# --- the cluster: runcluster, as `make run PACE=workshop` starts it ------------------------------

@dataclass
class RunCluster:
    url: str
    data: Path
    process: subprocess.Popen
    kubeconfig: Path = field(init=False)

    def __post_init__(self) -> None:
        self.kubeconfig = self.data / "kubeconfig.yaml"

    @property
    def token(self) -> str:
        return admin_token(self.data)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        result = subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                                 str(self.data / "kube-cache"), *args], input=input, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def ready_nodes(self) -> int:
        out = self.kubectl("get", "nodes", "--no-headers", check=False).stdout
        return sum(1 for line in out.splitlines() if line.split()[1:2] == ["Ready"])


@pytest.fixture(scope="module")
def cluster():
    data = Path(tempfile.mkdtemp(prefix="kk-walk-"))
    env = {**os.environ, "KK_LOG_MAX_AGE": str(LOG_WINDOW), "KK_COMPACT_INTERVAL": "1"}
    env.pop("KK_DATA_DIR", None)
    port, process = start_runcluster(["--nodes", "3", "--data", str(data), "--pace", "workshop"],
                                     data / "runcluster.log", env=env)
    running = RunCluster(f"http://127.0.0.1:{port}", data, process)
    try:
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server", running.url],
                             cwd=ROOT, env={**env, "KK_DATA_DIR": str(data)}, check=True, capture_output=True, text=True)
        running.kubeconfig.write_text(out.stdout)
        wait_for(lambda: running.ready_nodes() == 3, timeout=120, interval=1, what="3 Ready nodes")
        running.kubectl("apply", "-f", "-", input="".join(
            f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace_of(lesson)}}}\n" for lesson in walked()))
        yield running
    finally:
        process.send_signal(signal.SIGINT)  # as Ctrl-C: runcluster stops the hub and every spoke
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(data, ignore_errors=True)


# --- one lesson on one page ------------------------------------------------------------------------

class StepFailed(AssertionError):
    pass


async def on_screen(page, where: str, what: str, selector: str) -> None:
    """The element is drawn wholly inside the viewport of a page that is not scrolled."""
    place = await page.evaluate(PLACE, selector)
    if place is None:
        raise StepFailed(f"{where}: {what} ({selector}) is not on the page")
    inside = (place["width"] > 0 and place["left"] >= 0 and place["top"] >= 0
              and place["right"] <= place["innerWidth"] + 0.5 and place["bottom"] <= place["innerHeight"] + 0.5)
    if not inside or place["scrollX"] or place["scrollY"]:
        raise StepFailed(f"{where}: {what} ({selector}) is not inside the 1280×720 screen: {place}")


async def text_of(page, selector: str) -> str:
    element = await page.query_selector(selector)
    return " ".join((await element.inner_text()).split()) if element else ""


@dataclass
class Viewer:
    """One page with its own session, logged in as the cluster admin with the admin token; it walks
    one lesson after another, each in its own namespace."""

    context: object
    page: object
    errors: list[str]

    @classmethod
    async def open(cls, browser, cluster: RunCluster) -> "Viewer":
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{cluster.url}/login/?next=/")
        await page.fill("#token", cluster.token)
        await page.click("main.login button.primary")
        await page.wait_for_selector("#connection[data-state=connected]")
        await page.wait_for_function("() => window.kubeKitchen.model.revision !== null")
        return cls(context, page, errors)

    async def pick(self, lesson: lessons.Lesson, namespace: str) -> None:
        """The lesson menu, the namespace chosen beside it, then the lesson's first step."""
        page = self.page
        if await page.query_selector("#lesson .lesson-step"):
            await page.click("#lesson .lesson-back")  # the menu again
        chooser = page.locator("#lesson .lesson-ns input[name=namespace]")
        await chooser.fill(namespace)
        await chooser.dispatch_event("change")
        await page.wait_for_selector(f"#lesson .lesson-ns input[value='{namespace}']")
        if not await page.query_selector("#lesson .lesson-menu[open]"):
            await page.click("#lesson summary.lesson-label")
        await page.click(f"#lesson .lesson-pick[data-lesson='{lesson.id}']")

    async def close(self) -> None:
        await self.context.close()


async def walk_step(page, lesson: lessons.Lesson, number: int, namespace: str) -> str:
    step = lesson.steps[number - 1]
    where = f"{lesson.id} step {number} ({lessons.text(step.title, 'en')})"
    await page.wait_for_selector(f"#lesson .lesson-step[data-lesson='{lesson.id}'][data-step='{number}']"
                                 f"[data-namespace='{namespace}']")
    check = page.locator("#lesson .lesson-check[data-ok]")  # its first verdict is in
    await check.wait_for(timeout=ANSWER_WITHIN)
    if await check.get_attribute("data-ok") == "true":
        raise StepFailed(f"{where}: the check is green before its Do it: {await text_of(page, '#lesson .lesson-check')}")
    if step.action is None:
        raise StepFailed(f"{where}: the step has no Do it")
    await on_screen(page, where, "the step's title", "#lesson .lesson-step-title")
    await on_screen(page, where, "Do it", "#lesson .lesson-act")
    await on_screen(page, where, "the check", "#lesson .lesson-check")
    if step.panel:
        # The panel is focused as the step is drawn; a page busy drawing three other lessons' traffic
        # may take seconds to report it (seen: 5 s passed with the panel already focused).
        await page.wait_for_selector(f"#{step.panel}.in-focus", timeout=15_000)
        await on_screen(page, where, f"the {step.panel} panel's heading", f"#{step.panel} h2")
    await page.click("#lesson .lesson-act")
    result = page.locator("#lesson-result .result")
    try:
        await result.wait_for(timeout=ANSWER_WITHIN)
    except Exception:
        raise StepFailed(f"{where}: Do it did not answer within {ANSWER_WITHIN // 1000} s") from None
    answer = await text_of(page, "#lesson-result")
    await on_screen(page, where, "Do it's answer", "#lesson-result .result")
    provoked = (step.answer is not None and step.answer >= 400) or step.action.do == "stale-write"
    if "error" in (await result.get_attribute("class") or "") and not provoked:
        raise StepFailed(f"{where}: Do it failed: {answer}")
    try:
        await page.wait_for_selector("#lesson .lesson-check.done", timeout=GREEN_WITHIN)
    except Exception:
        raise StepFailed(f"{where}: not green {GREEN_WITHIN // 1000} s after Do it ({answer}); the check says "
                         f"{await text_of(page, '#lesson .lesson-check')!r}, Do it now says "
                         f"{await text_of(page, '#lesson-result')!r}") from None
    await on_screen(page, where, "the green check", "#lesson .lesson-check")
    if step.panel:
        await on_screen(page, where, f"the {step.panel} panel's heading", f"#{step.panel} h2")
    return f"{where}: {answer}"


async def walk_lesson(viewer: Viewer, lesson: lessons.Lesson) -> list[str]:
    """Every step of the lesson on the viewer's page, in the lesson's namespace; on a failure the
    screen is kept in test-artifacts/."""
    namespace, page = namespace_of(lesson), viewer.page
    transcript, number = [], 0
    try:
        await viewer.pick(lesson, namespace)
        for number in range(1, len(lesson.steps) + 1):
            if number > 1:
                await page.click("#lesson .lesson-next")
            transcript.append(await walk_step(page, lesson, number, namespace))
        if viewer.errors:
            raise StepFailed(f"{lesson.id}: the page's script failed: {viewer.errors}")
        return transcript
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"walk-{lesson.id}-step-{number}.png"))
        raise


async def walk_all(cluster: RunCluster) -> dict[str, BaseException | list[str]]:
    """The shared lessons PAGES at a time (the longest first), then the cluster-wide ones alone;
    each lesson's transcript, or what stopped it."""
    from playwright.async_api import async_playwright

    loop = asyncio.get_running_loop()
    started = loop.time()
    outcomes: dict[str, BaseException | list[str]] = {}
    every = walked()
    shared = sorted((lesson for lesson in every if not cluster_wide(lesson)),
                    key=lambda lesson: (lesson.id.startswith("08-"), -expected_seconds(lesson)))
    alone = [lesson for lesson in every if cluster_wide(lesson)]
    queue: asyncio.Queue[lessons.Lesson] = asyncio.Queue()
    for lesson in shared:
        queue.put_nowait(lesson)

    async def walk(viewer: Viewer, lesson: lessons.Lesson) -> Viewer | None:
        if lesson.id.startswith("08-"):  # its watch from revision 1 must find it compacted
            await asyncio.sleep(max(0.0, started + LOG_WINDOW + 2 - loop.time()))
        begun = loop.time()
        try:
            outcomes[lesson.id] = await walk_lesson(viewer, lesson)
        except Exception as exc:  # noqa: BLE001 - kept for the lesson's own test to report
            outcomes[lesson.id] = exc
            await viewer.close()  # a page left half-way is not the next lesson's start
            viewer = None
        finally:
            await asyncio.to_thread(cluster.kubectl, "delete", "namespace", namespace_of(lesson), "--wait=false",
                                    check=False)  # what it left running (a crash loop, a rush) stops loading the rest
        print(f"walked {lesson.id} from {begun - started:.0f} s to {loop.time() - started:.0f} s", flush=True)
        return viewer

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        async def worker() -> None:
            viewer = None
            while not queue.empty():
                lesson = queue.get_nowait()
                viewer = await walk(viewer or await Viewer.open(browser, cluster), lesson)
            if viewer is not None:
                await viewer.close()

        await asyncio.gather(*(worker() for _ in range(PAGES)))
        viewer = None
        for lesson in alone:
            viewer = await walk(viewer or await Viewer.open(browser, cluster), lesson)
        await browser.close()
    return outcomes


def expected_seconds(lesson: lessons.Lesson) -> int:
    """A rough duration, to start the long lessons first: a liveness probe, a Job's back-off or an
    autoscaler take most of a minute; other steps a few seconds."""
    slow = {"14-probe": 60, "12-job-retry": 60, "11-autoscaling": 50, "03-crash-loop": 30, "16-statefulset": 30}
    return slow.get(lesson.id, 5 * len(lesson.steps))


@pytest.fixture(scope="module")
def walks(cluster):
    return asyncio.run(walk_all(cluster))


@pytest.mark.parametrize("lesson_id", [lesson.id for lesson in walked()])
def test_every_step_is_red_before_do_it_on_screen_and_green_after(walks, lesson_id):
    outcome = walks.get(lesson_id)
    if isinstance(outcome, BaseException):
        raise outcome
    assert outcome, f"{lesson_id} was not walked"
    assert len(outcome) == len(lessons.load_all().get(lesson_id).steps)

// The stage: the picture, every node and one more panel share the first screen, whatever is above
// them. Guarantees: the board's first row is exactly as tall as what the viewport leaves below
// the header, the lesson bar, the timeline and the "what just happened" row (never less than
// MIN_STAGE_PX), measured again whenever one of them changes size; the third column shows the
// panel the current lesson step names (data-panel on the step), the workloads when it names none;
// a folded lesson bar stays folded from step to step.
const MIN_STAGE_PX = 360;
const DEFAULT_FOCUS = "workloads";
// The panels a lesson step may bring into view; the same names dashboard/lessons.py accepts.
export const FOCUSABLE = ["workloads", "events", "failures", "traffic", "wire", "services", "jobs", "sets",
  "hpa", "custom", "configs", "log", "manifest"];

const board = document.querySelector("main.board");
const lesson = document.getElementById("lesson");

// The room left for the stage: the viewport below the board's top edge, less the board's padding.
export function stageHeight(viewportHeight, boardTop, paddingPx) {
  return Math.max(MIN_STAGE_PX, Math.floor(viewportHeight - boardTop - 2 * paddingPx));
}

function measure() {
  if (!board) return;
  const top = board.getBoundingClientRect().top + window.scrollY;
  const padding = parseFloat(getComputedStyle(board).paddingTop) || 0;
  board.style.setProperty("--stage-height", `${stageHeight(window.innerHeight, top, padding)}px`);
}

// Bring the named panel into the stage's third column (one panel at a time).
export function focusPanel(name) {
  const wanted = FOCUSABLE.includes(name) ? name : DEFAULT_FOCUS;
  for (const id of FOCUSABLE) document.getElementById(id)?.classList.toggle("in-focus", id === wanted);
  if (board) board.dataset.focus = wanted;
}

function foldedNow() {
  return lesson?.classList.contains("folded") || false;
}

// After every swap of the lesson bar: the step's panel in focus, its fold button telling the truth.
function afterLessonSwap() {
  const step = lesson.querySelector(".lesson-step");
  focusPanel(step ? step.dataset.panel || DEFAULT_FOCUS : DEFAULT_FOCUS);
  const fold = lesson.querySelector(".lesson-fold");
  if (fold) {
    fold.setAttribute("aria-pressed", String(foldedNow()));
    fold.textContent = foldedNow() ? "▾" : "▴";
  }
  lesson.classList.toggle("has-step", Boolean(step));
}

if (lesson) {
  lesson.addEventListener("htmx:afterSettle", afterLessonSwap);
  lesson.addEventListener("click", (event) => {
    if (!event.target.closest(".lesson-fold")) return;
    lesson.classList.toggle("folded");
    afterLessonSwap();
  });
  // An open lesson menu closes on Escape or a click elsewhere, as a menu does.
  document.addEventListener("click", (event) => {
    const menu = lesson.querySelector(".lesson-menu[open]");
    if (menu && !menu.contains(event.target)) menu.open = false;
  });
  document.addEventListener("keydown", (event) => {
    const menu = lesson.querySelector(".lesson-menu[open]");
    if (menu && event.key === "Escape") menu.open = false;
  });
}

if (board) {
  const observer = new ResizeObserver(measure);
  for (const element of [document.querySelector("header.top"), lesson, document.getElementById("timeline"),
    document.querySelector(".narration-row")]) {
    if (element) observer.observe(element);
  }
  window.addEventListener("resize", measure);
  measure();
  focusPanel(DEFAULT_FOCUS);
}

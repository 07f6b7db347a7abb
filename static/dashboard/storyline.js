// The "what just happened" line right above the picture: the newest story of the narration
// (narration.js) in the page's language and mode, and the one before it when there is room.
//
// Guarantees:
// - It is fed by app.js's `receive`, after the stage bar: paused, nothing is told; stepped, one
//   change at a time; slowed, at that pace; a story told from a replay of the timeline (or of
//   held changes) carries the badge's word ("replay", "slow motion ×1/4", "paused") in front.
// - Going from the live state to the timeline's past or back forgets every story (a past state's
//   story never goes on as a live one); a snapshot (a relist) does too.
// - Its box is always two lines high: text appearing or going never moves anything. When the
//   newest story is longer than two lines, the steps after its cause give way, oldest first, to
//   one "… N more …" until it fits (narration.js `text(hide)`): the cause and the newest steps
//   stay readable at 1280 wide. Every line's tooltip tells its whole story as kept.
// - With nothing deployed and nothing told, it says what to do first: the first lesson of the
//   lesson bar, with a button that opens it.
// - Its button hides it and shows it again (remembered by the browser); the row keeps its height.
import { Narrator, nothingDeployed } from "./narration.js";
import { clientName, statusWord, term, ui } from "./words.js";
import { h } from "./dom.js";

const KIND_TERMS = { Pod: "pod", Node: "node", Deployment: "deployment", ReplicaSet: "replicaset", Service: "service",
  Job: "job", CronJob: "cronjob" };
const HIDDEN_KEY = "kk-narration-hidden";

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));
}

export class StoryLine {
  constructor(model, { box, toggle, stage }) {
    this.model = model;
    this.box = box;
    this.stage = stage; // () => {history: showing the timeline's past, state, text: the badge}
    this.narrator = new Narrator({
      say: (key, values) => fill(ui(key), values),
      name: clientName,
      kindWord: (kind) => (KIND_TERMS[kind] ? term(KIND_TERMS[kind]) : kind),
      statusWord,
    });
    this.history = false;
    this.dirty = true;
    this.shown = "";
    const show = (shown) => {
      box.hidden = !shown;
      toggle.setAttribute("aria-pressed", String(shown));
    };
    show(localStorage.getItem(HIDDEN_KEY) !== "true");
    toggle.addEventListener("click", () => {
      show(box.hidden);
      localStorage.setItem(HIDDEN_KEY, String(box.hidden));
      this.dirty = true;
      this.render();
    });
    box.addEventListener("click", (event) => {
      if (event.target.closest("[data-first-lesson]")) document.querySelector("#lesson .lesson-pick")?.click();
    });
    // The lesson bar arrives (and changes) by htmx: the first-screen hint names its first lesson.
    document.getElementById("lesson")?.addEventListener("htmx:afterSettle", () => {
      this.dirty = true;
      this.render();
    });
  }

  // A message from the stage bar, before the model applies it (the narration compares each change
  // with the state before it).
  receive(message) {
    const stage = this.stage();
    this.follow(stage);
    if (message.t === "snapshot") {
      this.narrator.clear();
      this.dirty = true;
    } else if (message.t === "changes" && message.items.length) {
      const objects = this.model.objects;
      const state = { revision: this.model.revision, get: (resource, key) => objects[resource]?.get(key),
        each: (resource) => objects[resource]?.values() || [] };
      // Catching up is the live stream handed on within a second: told as live (no label that
      // would outlast it).
      const label = stage.state === "live" || stage.state === "catching-up" ? null : { state: stage.state, text: stage.text };
      if (this.narrator.changes(message.items, state, { replay: stage.history, label })) this.dirty = true;
    }
  }

  // Forget the stories when the page goes from live to the timeline's past, or back.
  follow(stage) {
    if (stage.history === this.history) return;
    this.history = stage.history;
    this.narrator.clear();
    this.dirty = true;
  }

  // Draw, when something changed (once a frame at most; `full` after a snapshot or a mode switch).
  render(full = false) {
    this.follow(this.stage());
    if (!this.dirty && !full) return;
    this.dirty = false;
    if (this.box.hidden) return;
    const lines = this.narrator.lines(2);
    if (!lines.length) {
      this.say(this.idle());
      return;
    }
    const [newest, older] = lines;
    const first = this.story(newest, "newest");
    this.box.replaceChildren(first);
    // The newest story's middle steps give way until it fits its two lines.
    for (let hide = 1; hide < newest.steps && first.scrollHeight > first.clientHeight + 1; hide += 1) {
      first.lastChild.textContent = newest.text(hide);
    }
    const lineHeight = parseFloat(getComputedStyle(first).lineHeight) || 20;
    if (older && first.scrollHeight < lineHeight * 1.5) this.box.append(this.story(older, "older"));
  }

  story(line, className) {
    const p = h("p", `narr-line ${className}`);
    p.dataset.root = line.root;
    if (line.label) p.append(this.label(line.label));
    const text = line.text();
    p.append(h("span", "narr-text", text));
    p.title = text; // the whole story, however much of it the line has room for
    return p;
  }

  // How the story was played, as the stage bar's badge said it then (coloured as the badge is).
  label({ state, text }) {
    const span = h("span", "narr-label", text);
    span.dataset.state = state;
    return span;
  }

  say(node) {
    this.box.replaceChildren(node);
  }

  // What the line says before anything happened: the first step (nothing deployed), the state
  // of the past shown, or that changes will be told here.
  idle() {
    const p = h("p", "narr-line idle");
    if (this.history) {
      p.append(this.label(this.stage()), h("span", "narr-text", ui("n-history")));
      return p;
    }
    if (!nothingDeployed(this.model.objects)) {
      p.textContent = ui("n-quiet");
      return p;
    }
    p.classList.add("first");
    const lesson = document.querySelector("#lesson .lesson-pick");
    if (lesson) {
      p.append(fill(ui("n-first"), { lesson: lesson.textContent.trim() }), " ");
      const button = h("button", "primary", ui("n-first-button"));
      button.type = "button";
      button.dataset.firstLesson = "";
      p.append(button);
    } else {
      p.textContent = ui(document.querySelector("#lesson .lesson-step, #lesson [data-step]") ? "n-first-open" : "n-first-none");
    }
    return p;
  }
}

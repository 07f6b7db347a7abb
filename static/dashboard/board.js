// The instructor's board of attendees (the "Attendees" toggle at the end of the "what just happened"
// row, right above the picture; only on the page of a user
// who may list pods in every namespace: the server renders the names as #kk-attendees, else there
// is no board). One row per attendee: pods running / pending / failing, the last request, the
// errors of the last minutes and the last error's message (attendance.js keeps the tally). Closed,
// the toggle still shows how many attendees have failing pods or recent errors, so the instructor
// knows when to open it; open, it hangs over the page and moves nothing. The "lesson" column is
// where each attendee is in the lessons and whether that step's check is green, as their own page
// reported it to the server (asked of /lessons/progress/ every PROGRESS_MS while the board is open).
import { Attendance } from "./attendance.js";
import { isError } from "./failures.js";
import { brokenStatus } from "./panels.js";
import { clockTime, ui } from "./words.js";
import { h } from "./dom.js";

const REFRESH_MS = 1000; // the "s ago" and the counts: at most once a second
const PROGRESS_MS = 3000; // the lessons' polling is 3 s too: a green check shows within one round

function number(n, className) {
  return h("td", `num ${className}${n ? "" : " zero"}`, String(n));
}

export class AttendeeBoard {
  constructor(model, root = document.getElementById("attendee-board")) {
    const names = document.getElementById("kk-attendees");
    this.model = model;
    this.root = root;
    this.tally = root && names ? new Attendance(JSON.parse(names.textContent), { isError, failing: brokenStatus }) : null;
    this.rows = document.getElementById("attendee-rows");
    this.alert = document.getElementById("attendee-alert");
    this.drawn = -Infinity;
    this.later = null;
    this.dirty = true;
    this.progressUrl = root?.dataset.progressUrl || "";
    this.asking = null;
    root?.addEventListener("toggle", () => { this.dirty = true; this.askProgress(); this.render(); });
  }

  // While the board is open: the room's lesson progress now, then again every PROGRESS_MS.
  askProgress() {
    if (!this.tally || !this.progressUrl || !this.root.open || this.asking) return;
    this.asking = fetch(this.progressUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((answer) => (answer.ok ? answer.json() : null))
      .then((body) => { if (body && this.tally.setProgress(body.progress)) { this.dirty = true; this.render(); } })
      .catch(() => {}) // the next round asks again
      .finally(() => { this.asking = null; if (this.root.open) setTimeout(() => this.askProgress(), PROGRESS_MS); });
  }

  add(records) {
    if (this.tally && this.tally.add(records)) this.dirty = true;
  }

  touch() {
    this.dirty = true;
  }

  render() {
    if (!this.tally || !this.dirty) return;
    const now = performance.now();
    if (now - this.drawn < REFRESH_MS) { // drawn a moment ago: once more when the second is up
      this.later ??= setTimeout(() => { this.later = null; this.render(); }, REFRESH_MS - (now - this.drawn));
      return;
    }
    this.drawn = now;
    this.dirty = false;
    const rows = this.tally.rows(this.model.objects.pods.values());
    const troubled = rows.filter((row) => row.failing || row.errors).length;
    this.alert.textContent = troubled ? `⚠ ${troubled}` : `${rows.length}`;
    this.alert.classList.toggle("troubled", troubled > 0);
    if (!this.root.open) return;
    this.rows.replaceChildren(...rows.map((row) => this.row(row)));
  }

  row(row) {
    const tr = h("tr", row.failing || row.errors ? "troubled" : "");
    tr.dataset.attendee = row.name;
    const name = h("td", "name");
    const pick = h("button", "act", row.name);
    pick.type = "button";
    pick.title = ui("att-show-namespace");
    pick.addEventListener("click", () => {
      const select = document.getElementById("ns-filter");
      if (!select) return;
      if (![...select.options].some((o) => o.value === row.name)) select.append(new Option(row.name, row.name));
      select.value = row.name;
      select.dispatchEvent(new Event("change"));
    });
    name.append(pick);
    const ago = row.last === null ? ui("att-none-seen")
      : `${clockTime(new Date(row.last * 1000))} (${ui("att-ago").replace("{n}", Math.max(0, Math.round(this.tally.now - row.last)))})`;
    const error = h("td", "last-error");
    if (row.lastError) {
      error.append(h("b", "", String(row.lastError.code)), " ", row.lastError.message);
      error.title = [clockTime(new Date(row.lastError.ts * 1000)), row.lastError.verb, row.lastError.path,
        row.lastError.message].filter(Boolean).join(" · ");
    }
    tr.append(name, this.lessonCell(row.lesson), number(row.running, "running"), number(row.pending, "pending"),
      number(row.failing, "failing"), h("td", `last${row.last === null ? " never" : ""}`, ago), number(row.errors, "errors"), error);
    return tr;
  }

  lessonCell(at) {
    if (!at) return h("td", "lesson none", ui("att-no-lesson"));
    const state = at.watching ? "watching" : at.check === true ? "green" : at.check === false ? "waiting" : "nocheck";
    const cell = h("td", `lesson ${state}`);
    cell.dataset.lesson = at.lesson;
    cell.dataset.step = String(at.step);
    cell.dataset.check = state;
    const mark = { green: "✓", waiting: "…", watching: "👁", nocheck: "·" }[state];
    cell.append(h("b", "", at.lesson.split("-")[0]), ` ${ui("att-step").replace("{step}", at.step).replace("{steps}", at.steps)} `,
      h("span", "mark", mark));
    const why = { green: ui("att-check-ok"), watching: ui("att-watching"),
      waiting: ui("att-check-waiting").replace("{n}", Math.floor((at.on_step || 0) / 60)), nocheck: "" }[state];
    cell.title = [at.title, at.step_title, why].filter(Boolean).join(" · ");
    return cell;
  }
}

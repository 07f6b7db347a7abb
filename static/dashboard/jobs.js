// The Jobs and CronJobs panel, compact: each Job as a row of slots, one per completion wanted
// (filled when a pod succeeded, outlined while one runs), its failed pods as red marks after them,
// its outcome and duration (completion − start, as `kubectl get jobs` prints it; "running" while
// it runs, since the page counts no time of its own); each CronJob with its schedule, suspend,
// active jobs, last schedule time and next run (computed by the server from the schedule and the last
// run), and a "run now" button (a Job made from its template, as `kubectl create job --from=cronjob/X`).
// A Job's newest Warning event is shown on its row.
import { warningKey } from "./model.js";
import { clockTime, term, ui } from "./words.js";
import { h } from "./dom.js";

const MAX_SLOTS = 12;
const MAX_FAILED = 8;

// "65s" → "1m5s", as kubectl's duration printer shortens it.
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 ? `${seconds % 60}s` : ""}`;
  return `${Math.floor(minutes / 60)}h${minutes % 60 ? `${minutes % 60}m` : ""}`;
}

function clock(stamp) {
  return (stamp && clockTime(new Date(stamp))) || ui("never");
}

// The slots of a Job: succeeded (filled), running (outlined), still to do (empty), then failures.
export function slots(vm) {
  const wanted = Math.min(vm.completions, MAX_SLOTS);
  const done = Math.min(vm.succeeded, wanted);
  const running = Math.min(vm.active, wanted - done);
  const out = [];
  for (let i = 0; i < wanted; i += 1) out.push(i < done ? "done" : i < done + running ? "active" : "todo");
  for (let i = 0; i < Math.min(vm.failed, MAX_FAILED); i += 1) out.push("failed");
  return out;
}

export class JobsPanel {
  constructor(model) {
    this.model = model;
    this.jobList = document.getElementById("job-list");
    this.cronList = document.getElementById("cronjob-list");
    this.rows = new Map();
    this.crons = new Map();
  }

  renderAll() {
    this.jobList.replaceChildren();
    this.cronList.replaceChildren();
    this.rows.clear();
    this.crons.clear();
    this.model.take("jobs");
    this.model.take("cronjobs");
    for (const key of this.model.objects.cronjobs.keys()) this.cronjob(key);
    for (const key of this.model.objects.jobs.keys()) this.job(key);
    this.empty();
  }

  render() {
    const crons = this.model.take("cronjobs");
    const jobs = this.model.take("jobs");
    for (const key of crons) this.cronjob(key);
    for (const key of jobs) this.job(key);
    if (crons.size || jobs.size) this.empty();
  }

  empty() {
    const none = this.jobList.querySelector(":scope > .none");
    if (!this.rows.size && !this.crons.size && !none) this.jobList.append(h("li", "none", ui("no-jobs")));
    if ((this.rows.size || this.crons.size) && none) none.remove();
  }

  job(key) {
    const vm = this.model.objects.jobs.get(key);
    let row = this.rows.get(key);
    if (!vm) {
      if (row) row.remove();
      this.rows.delete(key);
      return;
    }
    if (!row) {
      row = h("li", "job");
      row.dataset.key = key;
      this.rows.set(key, row);
      this.jobList.append(row);
    }
    row.dataset.outcome = vm.outcome;
    row.dataset.ns = vm.ns; // for the namespace filter (namespaces.js)
    const name = h("span", "job-name", vm.owner && vm.name.startsWith(`${vm.owner}-`) ? `↳ ${vm.name}` : vm.name);
    name.title = `${term("job")} ${vm.ns}/${vm.name}`;
    const marks = h("span", "slots");
    for (const state of slots(vm)) marks.append(h("i", `slot ${state}`));
    if (vm.failed > MAX_FAILED) marks.append(h("span", "more-failed", `+${vm.failed - MAX_FAILED}`));
    marks.title = `${vm.succeeded}/${vm.completions} · ${ui("failed")} ${vm.failed}`;
    const count = h("span", "completions", `${vm.succeeded}/${vm.completions}`);
    const failed = h("span", "failed", vm.failed ? `✕${vm.failed}` : "");
    const outcome = h("span", `outcome ${vm.outcome.toLowerCase()}`, ui(`job-${vm.outcome.toLowerCase()}`));
    const took = h("span", "duration", vm.duration === null ? "" : duration(vm.duration));
    const parts = [name, marks, count, failed, outcome, took];
    const warning = this.model.warnings.get(warningKey("Job", vm.ns, vm.name));
    if (warning && vm.outcome !== "Complete") {
      const mark = h("span", "warning", `⚠ ${warning.reason}`);
      mark.title = warning.message;
      parts.push(mark);
    }
    row.replaceChildren(...parts);
  }

  cronjob(key) {
    const vm = this.model.objects.cronjobs.get(key);
    let row = this.crons.get(key);
    if (!vm) {
      if (row) row.remove();
      this.crons.delete(key);
      return;
    }
    if (!row) {
      row = h("li", "cronjob");
      row.dataset.key = key;
      this.crons.set(key, row);
      this.cronList.append(row);
    }
    row.classList.toggle("suspended", vm.suspend);
    row.dataset.ns = vm.ns; // for the namespace filter (namespaces.js)
    const name = h("span", "job-name", vm.name);
    name.title = `${term("cronjob")} ${vm.ns}/${vm.name}`;
    const schedule = h("code", "schedule", vm.schedule + (vm.timeZone ? ` (${vm.timeZone})` : ""));
    const state = h("span", `suspend ${vm.suspend ? "on" : "off"}`, vm.suspend ? ui("suspended") : "");
    const active = h("span", "active", vm.active ? `${ui("active")} ${vm.active}` : "");
    const last = h("span", "last", `${ui("last-schedule")} ${clock(vm.lastSchedule)}`);
    const next = h("span", "last next", vm.next ? `${ui("next-run")} ${clock(vm.next)}` : "");
    const run = h("button", "act run-now", term("run-now"));
    run.type = "button";
    Object.assign(run.dataset, { action: "run-now", name: vm.name, namespace: vm.ns });
    row.replaceChildren(name, schedule, state, active, last, next, run);
  }
}

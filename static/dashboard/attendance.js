// The instructor's board of attendees, as data: for each provisioned attendee, their pods (running,
// pending, failing) and their requests (the last one's time, the errors of the last WINDOW_S
// seconds, the last error's message), from what the page already receives — the model's pods and
// the hub's traffic records, which name the authenticated `user` of every request.
//
// Guarantees:
// - Pure: no DOM, no timer, no imports. What counts as an error (`isError(record)`, the failed
//   requests panel's rule: a 404 to a lookup is not one) and what status is failing
//   (`failing(status)`, the pod chips' rule on kubectl's STATUS words) are given to it, so the board
//   agrees with the rest of the page.
// - Time is the hub's: `now` is the newest record's `ts` seen (records arrive several times a
//   second from the spokes), so a projector's clock that is off does not age errors wrongly.
// - Memory is bounded: per attendee the error times of the window only (at most MAX_ERRORS).
// - A request by anyone not on the board is ignored; a pod counts for the attendee whose
//   namespace it is in (each attendee's namespace is their name).
// - Lesson progress is the server's (`setProgress`, from /lessons/progress/: what each attendee's
//   own page last reported); a name the server does not mention keeps no stale position.
// - It knows what it saw since the page opened: an attendee with no request since then has
//   `last` null (the board says so), never a guess.
export const WINDOW_S = 300;
export const MAX_ERRORS = 1000;

export class Attendance {
  constructor(names, { isError, failing, window = WINDOW_S }) {
    this.names = [...names];
    this.isError = isError;
    this.failing = failing;
    this.window = window;
    this.now = 0;
    this.seen = new Map(this.names.map((name) => [name, { last: null, errors: [], lastError: null }]));
    this.progress = new Map();
  }

  // {name: {lesson, title, step, steps, step_title, check, watching, age, on_step} | null}. True
  // when a row's lesson, step or verdict changed.
  setProgress(progress) {
    let changed = false;
    const next = new Map();
    for (const name of this.names) {
      const position = progress?.[name] || null;
      const before = this.progress.get(name) || null;
      const key = (p) => (p ? `${p.lesson}|${p.step}|${p.check}|${p.watching}|${Math.floor(p.on_step / 60)}` : "");
      if (key(position) !== key(before)) changed = true;
      if (position) next.set(name, position);
    }
    this.progress = next;
    return changed;
  }

  // Records from the hub (any type; requests of attendees count). True when the board changed.
  add(records) {
    let changed = false;
    for (const record of records) {
      if (typeof record.ts === "number" && record.ts > this.now) this.now = record.ts;
      if (record.type !== "request") continue;
      const entry = this.seen.get(record.user);
      if (!entry) continue;
      changed = true;
      if (entry.last === null || record.ts > entry.last) entry.last = record.ts;
      if (this.isError(record)) {
        entry.errors.push(record.ts);
        if (entry.errors.length > MAX_ERRORS) entry.errors.splice(0, entry.errors.length - MAX_ERRORS);
        entry.lastError = { ts: record.ts, code: record.code, reason: record.reason || "",
          message: record.message || record.reason || "", verb: record.verb || "", path: record.path || "" };
      }
    }
    return changed;
  }

  // One row per attendee, in the board's order. `pods` is the model's pods (view-models with ns,
  // phase and status).
  rows(pods) {
    const counts = new Map(this.names.map((name) => [name, { running: 0, pending: 0, failing: 0 }]));
    for (const vm of pods) {
      const count = counts.get(vm.ns);
      if (!count) continue;
      if (this.failing(vm.status || "")) count.failing += 1;
      else if (vm.phase === "Running") count.running += 1;
      else if (vm.phase === "Pending") count.pending += 1;
    }
    const since = this.now - this.window;
    return this.names.map((name) => {
      const entry = this.seen.get(name);
      // filtered, not shifted: records of several hubs may arrive a little out of order
      entry.errors = entry.errors.filter((ts) => ts >= since);
      return { name, ...counts.get(name), last: entry.last, errors: entry.errors.length,
        lastError: entry.lastError, lesson: this.progress.get(name) || null };
    });
  }
}

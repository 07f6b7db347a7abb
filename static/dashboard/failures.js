// The failed requests: every request the hub answered 4xx/5xx (from the traffic records the page
// already receives), named with its time, code, reason, verb, path and client, newest first, at
// most KEEP of them. A 404 to a GET of one named object is a question ("is it there?") answered
// "no", not a failure: it is listed, but labelled, drawn as the get it is and not counted red on
// its spoke; once the same client creates or applies that object it is labelled "expected (not
// found before create)" — kubectl's apply asks before it creates, and so does the dashboard's form.
// A 409 Conflict the hub marked `retried` (a controller's, the scheduler's or a kubelet's write on a
// stale resourceVersion, which it requeues by design) did not fail for good: it is drawn as
// "conflict, retried", neither counted as an error nor listed here. A person's 409 (kubectl, the
// dashboard's buttons) is, and so is a watch's 410 Expired told inside its stream.
import { clientName, clockTime, ui } from "./words.js";
import { h } from "./dom.js";

const KEEP = 60;
const CREATES = new Set(["create", "patch", "update"]);

// Whether a request's answer is a "not found" to a lookup of one object (not counted as an error).
export function notFoundLookup(record) {
  return record.code === 404 && record.verb === "get" && Boolean(record.name);
}

// Whether a request's answer is a 409 Conflict its client (a component) retries: not an error.
export function retriedConflict(record) {
  return record.code === 409 && record.retried === true;
}

// Whether a request failed for good (what the red dots and the error counts mean).
export function isError(record) {
  return record.code >= 400 && !notFoundLookup(record) && !retriedConflict(record);
}

// A lookup and the create that follows it meet on (client, resource, namespace, name); a POST to
// the collection carries no name (it is in the body), so it meets the client's latest lookup in
// that collection — kubectl's apply sends exactly GET name → 404 → POST collection.
function objectKey(record) {
  return `${record.who}|${record.resource}|${record.namespace || ""}|${record.name}`;
}

function collectionKey(record) {
  return `${record.who}|${record.resource}|${record.namespace || ""}`;
}

function clock(ts) {
  return ts ? clockTime(new Date(ts * 1000)) : "";
}

export class FailureList {
  constructor(list = document.getElementById("failure-list")) {
    this.list = list;
    this.items = []; // newest first
    this.lookups = new Map(); // object key -> entries of not-found lookups not yet followed by a create
    this.dirty = true;
  }

  add(records) {
    for (const record of records) {
      if (record.type !== "request") continue;
      if (record.code >= 400 && !retriedConflict(record)) this.failed(record);
      else if (record.code < 300 && CREATES.has(record.verb)) this.created(record);
    }
  }

  failed(record) {
    const entry = { record, label: null };
    if (notFoundLookup(record)) {
      entry.label = "lookup";
      const key = objectKey(record);
      if (!this.lookups.has(key)) this.lookups.set(key, []);
      this.lookups.get(key).push(entry);
    }
    this.items.unshift(entry);
    if (this.items.length > KEEP) {
      for (const gone of this.items.splice(KEEP)) this.forget(gone);
    }
    this.dirty = true;
  }

  forget(entry) {
    if (entry.label !== "lookup") return;
    const key = objectKey(entry.record);
    const waiting = (this.lookups.get(key) || []).filter((other) => other !== entry);
    if (waiting.length) this.lookups.set(key, waiting);
    else this.lookups.delete(key);
  }

  created(record) {
    let key = record.name ? objectKey(record) : null;
    if (!key && record.verb === "create") {
      const collection = `${collectionKey(record)}|`;
      key = [...this.lookups.keys()].reverse().find((candidate) => candidate.startsWith(collection)) || null;
    }
    const waiting = key && this.lookups.get(key);
    if (!waiting) return;
    for (const entry of waiting) entry.label = "before-create";
    this.lookups.delete(key);
    this.dirty = true;
  }

  clear() {
    this.items = [];
    this.lookups.clear();
    this.dirty = true;
  }

  row({ record, label }) {
    const li = h("li", `failure${label ? " expected" : ""}`);
    li.dataset.code = String(record.code);
    if (label) li.dataset.label = label;
    const path = record.path || [record.namespace, record.resource, record.name].filter(Boolean).join("/");
    li.append(
      h("span", "when", clock(record.ts)),
      h("span", "code", String(record.code)),
      h("span", "reason", record.reason || ""),
      h("span", "verb", record.verb || ""),
      h("span", "path", path),
      h("span", "who", clientName(record.who || "unknown")),
    );
    const notes = [];
    if (record.dryRun) notes.push(ui("dry-run"));
    if (label === "before-create") notes.push(ui("expected-before-create"));
    else if (label === "lookup") notes.push(ui("not-found-lookup"));
    if (notes.length) li.append(h("span", "note", notes.join(" · ")));
    li.title = [record.message, path].filter(Boolean).join("\n");
    return li;
  }

  render() {
    if (!this.dirty) return;
    this.dirty = false;
    if (!this.items.length) {
      this.list.replaceChildren(h("li", "none", ui("no-failures")));
      return;
    }
    this.list.replaceChildren(...this.items.map((entry) => this.row(entry)));
  }
}

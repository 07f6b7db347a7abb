// The Events panel: core/v1 Events as `kubectl get events` lists them — when last seen, type
// (Warning in red), reason, the object concerned, message and count — newest first, at most SHOWN
// of them. Each one is also set next to the object it concerns: a pod chip or a Job row gets the
// reason of its newest Warning (a title names the message), so the cause is read where the effect is.
import { clockTime, ui } from "./words.js";
import { forgetRows, h, keyedRows } from "./dom.js";

const SHOWN = 40;

function clock(stamp) {
  return stamp ? clockTime(new Date(stamp)) : "";
}

// The newest events first (by the resourceVersion of their last change).
export function newestEvents(model, count = SHOWN) {
  return [...model.objects.events.values()].sort((a, b) => b.rv - a.rv).slice(0, count);
}

// The newest Warning of each object, keyed "<Kind>|<namespace>/<name>".
export function warningsByObject(model) {
  const warnings = new Map();
  for (const vm of model.objects.events.values()) {
    if (vm.type !== "Warning") continue;
    const key = `${vm.object.kind}|${vm.object.ns}/${vm.object.name}`;
    const held = warnings.get(key);
    if (!held || held.rv < vm.rv) warnings.set(key, vm);
  }
  return warnings;
}

export class EventsPanel {
  constructor(model) {
    this.model = model;
    this.list = document.getElementById("event-list");
  }

  renderAll() {
    this.model.take("events");
    forgetRows(this.list); // a new snapshot, or another language: every row made again
    this.draw();
  }

  render() {
    if (this.model.take("events").size) this.draw();
  }

  row(vm) {
    const li = h("li", `event type-${vm.type.toLowerCase()}`);
    li.dataset.key = vm.key;
    if (vm.ns) li.dataset.ns = vm.ns; // for the namespace filter (namespaces.js); a node's events have none
    const object = `${vm.object.kind.toLowerCase()}/${vm.object.name}`;
    li.append(
      h("span", "when", clock(vm.last)),
      h("span", "type", vm.type),
      h("span", "reason", vm.reason),
      h("span", "object", object),
      h("span", "message", vm.message),
      h("span", "count", vm.count > 1 ? `×${vm.count}` : ""),
    );
    li.title = `${vm.object.ns ? `${vm.object.ns}/` : ""}${object} · ${vm.source}\n${vm.message}`;
    return li;
  }

  draw() {
    const shown = newestEvents(this.model);
    if (!shown.length) this.list.replaceChildren(h("li", "none", ui("no-events")));
    else keyedRows(this.list, shown.map((vm) => ({ key: vm.key, sig: vm, make: () => this.row(vm) })));
  }
}

// The Events panel: core/v1 Events as `kubectl get events` lists them — when last seen, type
// (Warning in red), reason, the object concerned, message and count — newest first, at most SHOWN
// of them. Each one is also set next to the object it concerns: a pod chip or a Job row gets the
// reason of its newest Warning (a title names the message), so the cause is read where the effect is.
import { clockTime, ui } from "./words.js";

const SHOWN = 40;

function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

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
    else this.list.replaceChildren(...shown.map((vm) => this.row(vm)));
  }
}

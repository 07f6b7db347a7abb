// Namespaces on the page: the filter (all, or one namespace present) and each owner's colour.
// The filter hides, never removes: every namespaced element the panels draw carries data-ns, and
// one style rule hides those of other namespaces, so choosing "all" again shows everything at once
// and the renderers keep drawing as before. The choices are the namespaces of the objects the page
// holds (the snapshot holds no Namespace objects), plus the chosen one while it is chosen.
import { ui } from "./words.js";

const NAMESPACED = ["pods", "deployments", "replicasets", "services", "jobs", "cronjobs", "events", "daemonsets",
  "statefulsets", "persistentvolumeclaims", "poddisruptionbudgets", "replicationcontrollers"];
const REFRESH_MS = 500; // looking through every object for its namespace: at most twice a second

// A stable colour for an owner (the same on its row and on each of its pods' chips).
export function ownerColour(ns, name) {
  let hash = 0;
  for (const char of `${ns}/${name}`) hash = (hash * 31 + char.codePointAt(0)) >>> 0;
  return `hsl(${hash % 360} 70% 82%)`;
}

// The namespaces of the objects the model holds, sorted, "default" first.
export function namespacesIn(objects) {
  const found = new Set();
  for (const resource of NAMESPACED) {
    for (const vm of (objects[resource] || new Map()).values()) if (vm.ns) found.add(vm.ns);
  }
  return [...found].sort((a, b) => (a === "default" ? -1 : b === "default" ? 1 : a.localeCompare(b)));
}

export class NamespaceFilter {
  constructor(model, select, style) {
    this.model = model;
    this.select = select;
    this.style = style;
    this.shown = "";
    this.checked = -Infinity;
    this.options = null;
    this.later = null;
    select.addEventListener("change", () => this.choose(select.value));
  }

  choose(ns) {
    this.shown = ns;
    document.body.dataset.ns = ns;
    // Namespace names are DNS labels (no quotes or backslashes); escaped all the same.
    this.style.textContent = ns ? `[data-ns]:not([data-ns="${CSS.escape(ns)}"]) { display: none !important; }` : "";
    this.render(true);
  }

  // Called every frame; rebuilds the choices when the namespaces present changed. A frame inside
  // REFRESH_MS of the last look leaves one look for later, so the last change is never missed.
  render(force = false) {
    const now = performance.now();
    if (!force && now - this.checked < REFRESH_MS) {
      if (!this.later) {
        this.later = setTimeout(() => {
          this.later = null;
          this.render();
        }, REFRESH_MS - (now - this.checked));
      }
      return;
    }
    this.checked = now;
    const present = namespacesIn(this.model.objects);
    if (this.shown && !present.includes(this.shown)) present.push(this.shown);
    const key = present.join(",");
    if (!force && key === this.options) return;
    this.options = key;
    const all = new Option(ui("all-namespaces"), "");
    this.select.replaceChildren(all, ...present.map((ns) => new Option(ns, ns)));
    this.select.value = this.shown;
  }
}

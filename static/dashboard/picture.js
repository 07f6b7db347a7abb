// The hub-and-spoke picture: the API server in the centre, the store above it, and one spoke per
// client, added the first time the hub's traffic names it. Every dot is one real record: a request
// travels from its client to the hub (coloured by verb, red when the hub answered 4xx/5xx, except a
// "not found" to a lookup of one object, which is an answer and not counted as an error), a
// watch delivery travels from the hub to the client that watches, a committed change from the hub
// into the store. Counters are exact; when more dots arrive in one frame than can be animated, the
// oldest waiting dots are skipped (the counters still count them).
import { isError } from "./failures.js";
import { clientName, onModeChange, term, ui } from "./words.js";

const SVG = "http://www.w3.org/2000/svg";
const RADIUS = 275;
const HUB_EDGE = 105;
const NODE_R = 46;
const STORE_AT = { x: 0, y: -300 };
const HUB_ITSELF = "kube-apiserver"; // the hub's own writes (bootstrap): the centre, not a spoke
const HALF_WIDTH = 630; // the viewBox reaches ±640: labels must end before that
const MAX_ACTIVE = 260;
const MAX_WAITING = 600;
const STARTS_PER_FRAME = 60;
const TRAVEL_MS = 850;
const STORE_GAP = (34 * Math.PI) / 180; // the store's label lives above the hub, right of its line
const CROWDED = 9; // more spokes than this: the controller-manager's list of controllers is left out
const RANK = ["kube-controller-manager", "kube-scheduler", "kubelet/", "kube-proxy/", "line-cook", "garnish-cook",
  "supervisor", "kubectl",
  "python-client", "dashboard", "dashboard/wire"];
// The supervisor's ConfigMap names spokes by component; the hub's traffic names them by client.
const CONTROLLED = { "kube-controller-manager": "controller-manager", "kube-scheduler": "scheduler" };

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function rank(who) {
  const index = RANK.findIndex((prefix) => (prefix.endsWith("/") ? who.startsWith(prefix) : who === prefix));
  return index < 0 ? RANK.length : index;
}

// The letter in a spoke's circle: a kubelet's node number, "P" and the node number for a kube-proxy.
function initial(who) {
  if (who.startsWith("kubelet/")) return who.split("-").pop();
  if (who.startsWith("kube-proxy/")) return `P${who.split("-").pop()}`;
  return who[0].toUpperCase();
}

export function verbClass(record) {
  if (isError(record)) return "verb-error";
  const verb = record.verb;
  if (verb === "get" || verb === "list") return "verb-get";
  if (verb === "watch") return "verb-watch";
  if (verb === "create") return "verb-create";
  if (verb === "update" || verb === "patch") return "verb-update";
  if (verb === "delete" || verb === "deletecollection") return "verb-delete";
  return "verb-other";
}

export class Picture {
  constructor(svg) {
    this.svg = svg;
    this.lines = svg.querySelector("#spoke-lines");
    this.layer = svg.querySelector("#spokes");
    this.dotLayer = svg.querySelector("#dots");
    this.revisionText = svg.querySelector("#store-revision");
    this.spokes = new Map();
    this.order = [];
    this.waiting = [];
    this.active = 0;
    this.pool = [];
    this.dirtyCounters = new Set();
    this.layoutNeeded = false;
    this.states = {};
    onModeChange(() => this.relabel());
  }

  desiredState(who) {
    const key = CONTROLLED[who] || who;
    return key in this.states ? this.states[key] || "running" : null;
  }

  spoke(who) {
    let spoke = this.spokes.get(who);
    if (spoke) return spoke;
    const line = el("line", { class: "spoke-line" }, this.lines);
    const group = el("g", { class: "spoke", "data-who": who }, this.layer);
    el("circle", { r: NODE_R, class: "spoke-node" }, group);
    const initial = el("text", { class: "spoke-initial", y: 11 }, group);
    const label = el("g", { class: "spoke-label" }, group);
    const name = el("text", { class: "spoke-name" }, label);
    const counts = el("text", { class: "spoke-count", y: 34 }, label);
    // The controller-manager is one process running many controllers: name them under it.
    const controllers = who === "kube-controller-manager" ? el("text", { class: "spoke-sub", y: 64 }, label) : null;
    spoke = { who, line, group, initial, label, name, counts, controllers, x: 0, y: 0, requests: 0, watches: 0, errors: 0 };
    this.spokes.set(who, spoke);
    this.order.push(who);
    this.order.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    this.layoutNeeded = true;
    this.dirtyCounters.add(spoke);
    this.label(spoke);
    return spoke;
  }

  label(spoke) {
    spoke.name.textContent = clientName(spoke.who);
    if (spoke.controllers) {
      const names = term("controllers").split(" · ");
      spoke.controllers.replaceChildren();
      for (let i = 0; i < names.length; i += 2) {
        el("tspan", { x: 0, dy: i ? 26 : 0 }, spoke.controllers).textContent = names.slice(i, i + 2).join(" · ");
      }
    }
    spoke.initial.textContent = initial(spoke.who);
    const state = this.desiredState(spoke.who);
    spoke.group.classList.toggle("stopped", state === "stopped");
    spoke.line.classList.toggle("stopped", state === "stopped");
  }

  relabel() {
    for (const spoke of this.spokes.values()) {
      this.label(spoke);
      this.dirtyCounters.add(spoke);
    }
    this.layoutNeeded = true;
  }

  setSpokeStates(states) {
    this.states = states || {};
    // Every spoke the supervisor keeps is a client of the hub, even before it is heard from.
    const byKey = Object.fromEntries(Object.entries(CONTROLLED).map(([who, key]) => [key, who]));
    this.know(Object.keys(this.states).map((key) => byKey[key] || key));
    for (const spoke of this.spokes.values()) {
      this.label(spoke);
      this.dirtyCounters.add(spoke); // "stopped" is part of the counters line
    }
  }

  layout() {
    const count = this.order.length;
    // Evenly round the hub, leaving the top to the store: the first and the last spoke stay at
    // least STORE_GAP from it, so their labels never write over the store's (with many spokes,
    // or with longer words, as in Korean).
    const first = Math.max((2 * Math.PI) / (count + 1), STORE_GAP);
    const step = count > 1 ? (2 * Math.PI - 2 * first) / (count - 1) : 0;
    this.order.forEach((who, index) => {
      const spoke = this.spokes.get(who);
      const angle = -Math.PI / 2 + first + step * index;
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      spoke.x = RADIUS * cos;
      spoke.y = RADIUS * sin;
      spoke.group.setAttribute("transform", `translate(${spoke.x.toFixed(1)},${spoke.y.toFixed(1)})`);
      spoke.line.setAttribute("x1", (HUB_EDGE * cos).toFixed(1));
      spoke.line.setAttribute("y1", (HUB_EDGE * sin).toFixed(1));
      spoke.line.setAttribute("x2", (spoke.x - NODE_R * cos).toFixed(1));
      spoke.line.setAttribute("y2", (spoke.y - NODE_R * sin).toFixed(1));
      // Only a spoke straight above or below the hub is labelled centred: with many spokes, two
      // near the bottom would otherwise write over each other.
      const anchor = cos > 0.12 ? "start" : cos < -0.12 ? "end" : "middle";
      const out = NODE_R + 14;
      let lx = out * cos;
      let ly = out * sin + 8;
      if (anchor === "middle") ly = sin > 0 ? NODE_R + 36 : -NODE_R - 46;
      spoke.label.setAttribute("transform", `translate(${lx.toFixed(1)},${ly.toFixed(1)})`);
      spoke.name.setAttribute("text-anchor", anchor);
      spoke.counts.setAttribute("text-anchor", anchor);
      if (spoke.controllers) {
        spoke.controllers.setAttribute("text-anchor", anchor);
        // With many spokes the next label starts where the controllers' names would run.
        spoke.controllers.style.display = count > CROWDED ? "none" : "";
      }
      this.fit(spoke, anchor, spoke.x + lx, lx, ly);
    });
  }

  // Shrink a label that would run off the picture (long names, other languages), never grow it.
  fit(spoke, anchor, at, lx, ly) {
    const width = Math.max(spoke.name.getComputedTextLength(), spoke.counts.getComputedTextLength(),
      spoke.controllers ? spoke.controllers.getComputedTextLength() / Math.max(1, spoke.controllers.childElementCount) : 0);
    let room = 2 * (HALF_WIDTH - Math.abs(at));
    if (anchor === "start") room = HALF_WIDTH - at;
    if (anchor === "end") room = at + HALF_WIDTH;
    const scale = width > room && width > 0 ? room / width : 1;
    spoke.label.setAttribute("transform", `translate(${lx.toFixed(1)},${ly.toFixed(1)}) scale(${scale.toFixed(3)})`);
  }

  // Clients the version log names as the cause of a change are clients of the hub: give each its
  // spoke at once (counters start at zero; only records arriving from now on move or count).
  know(actors) {
    for (const who of actors) if (who && who !== HUB_ITSELF) this.spoke(who);
  }

  // Where a spoke's circle is on the screen (for dots that leave the picture), or null.
  spokeCentre(who) {
    const spoke = this.spokes.get(who);
    if (!spoke) return null;
    const rect = spoke.group.querySelector(".spoke-node").getBoundingClientRect();
    return rect.width ? { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 } : null;
  }

  // Traffic records from the hub: count them, and queue one dot for each.
  traffic(records) {
    for (const record of records) {
      if (record.type !== "request" && record.type !== "watch") continue;
      const spoke = this.spoke(record.who || "unknown");
      if (record.type === "request") {
        spoke.requests += 1;
        if (isError(record)) spoke.errors += 1; // a "not found" to a lookup is an answer, not an error
        this.queue({ spoke, inbound: true, cls: verbClass(record), size: 9 });
      } else if (record.type === "watch") {
        spoke.watches += record.count;
        this.queue({ spoke, inbound: false, cls: "verb-event", size: Math.min(16, 6 + 3 * Math.log2(record.count + 1)) });
      }
      this.dirtyCounters.add(spoke);
    }
  }

  // Committed changes: each one is a write the hub made into the store.
  storeWrites(count) {
    for (let i = 0; i < Math.min(count, 20); i += 1) this.queue({ spoke: null, inbound: false, cls: "verb-store", size: 8 });
  }

  setRevision(revision) {
    this.revisionText.textContent = revision === null ? "rv —" : `${term("revision")} ${revision}`;
  }

  queue(dot) {
    this.waiting.push(dot);
    if (this.waiting.length > MAX_WAITING) this.waiting.splice(0, this.waiting.length - MAX_WAITING);
  }

  render() {
    for (const spoke of this.dirtyCounters) this.drawCounts(spoke);
    this.dirtyCounters.clear();
    if (this.layoutNeeded) {
      this.layout();
      this.layoutNeeded = false;
    }
    let starts = 0;
    while (this.waiting.length && this.active < MAX_ACTIVE && starts < STARTS_PER_FRAME) {
      this.launch(this.waiting.shift());
      starts += 1;
    }
  }

  // Three numbers, coloured as in the legend under the picture: requests · watch events · errors.
  drawCounts(spoke) {
    const parts = [["count-req", spoke.requests], ["count-ev", spoke.watches]];
    if (spoke.errors) parts.push(["count-err", spoke.errors]);
    spoke.counts.replaceChildren();
    parts.forEach(([cls, value], index) => {
      if (index) el("tspan", { class: "count-sep" }, spoke.counts).textContent = " · ";
      el("tspan", { class: cls }, spoke.counts).textContent = String(value);
    });
    if (this.desiredState(spoke.who) === "stopped") {
      el("tspan", { class: "count-stopped" }, spoke.counts).textContent = ` · ${ui("stopped")}`;
    }
    const length = spoke.counts.textContent.length;
    if (length !== spoke.countsLength) {
      spoke.countsLength = length;
      this.layoutNeeded = true; // a longer line may need shrinking to fit
    }
  }

  pending() {
    return this.waiting.length > 0;
  }

  launch(dot) {
    const circle = this.pool.pop() || el("circle", {}, this.dotLayer);
    circle.setAttribute("r", dot.size.toFixed(1));
    circle.setAttribute("class", `dot ${dot.cls}`);
    // Dots run between the hub's rim and the spoke's node, so the hub's name stays readable.
    let from;
    let to;
    if (dot.spoke === null) {
      from = { x: 0, y: -HUB_EDGE };
      to = { x: STORE_AT.x, y: STORE_AT.y };
    } else {
      const length = Math.hypot(dot.spoke.x, dot.spoke.y) || 1;
      const rim = { x: (dot.spoke.x / length) * HUB_EDGE, y: (dot.spoke.y / length) * HUB_EDGE };
      from = dot.inbound ? dot.spoke : rim;
      to = dot.inbound ? rim : dot.spoke;
    }
    this.active += 1;
    circle.style.display = "";
    const animation = circle.animate(
      [{ transform: `translate(${from.x}px, ${from.y}px)` }, { transform: `translate(${to.x}px, ${to.y}px)` }],
      { duration: TRAVEL_MS, easing: "ease-in-out" },
    );
    animation.onfinish = () => {
      circle.style.display = "none";
      this.active -= 1;
      this.pool.push(circle);
    };
  }

  counters(who) {
    const spoke = this.spokes.get(who);
    return spoke ? { requests: spoke.requests, watches: spoke.watches, errors: spoke.errors } : null;
  }
}

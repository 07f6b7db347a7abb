// The hub-and-spoke picture: the API server in the centre, the store above it, and one spoke per
// client, added the first time the hub's traffic names it. A node's agents (its kubelet and its
// kube-proxy) share one spoke, "node/<name>", whose counters add theirs up: ten nodes are ten
// spokes, not twenty. Every dot is one real record: a request
// travels from its client to the hub (coloured by verb, red when the hub answered 4xx/5xx, except a
// "not found" to a lookup of one object, which is an answer and not counted as an error), a
// watch delivery travels from the hub to the client that watches, a committed change from the hub
// into the store. Counters are exact; when more dots arrive in one frame than can be animated, the
// oldest waiting dots are skipped (the counters still count them).
// Labels never overlap: each label is a box pushed out from its spoke's circle until nothing is
// under it (labels.js), the ring is an ellipse as wide as the picture allows, and a crowded ring
// has smaller circles and labels. Labels stay legible from the back of a room: never smaller on
// screen than 14 px for a name and 12 px for the counts (placing.js), whatever the picture's size
// (measured again when it changes); a name that finds no free place at that size is shortened
// (its full name stays in the spoke's tooltip).
import { isError, retriedConflict } from "./failures.js";
import { box } from "./labels.js";
import { placeLabel } from "./placing.js";
import { onNextFrame } from "./frame.js";
import { overlayBoxes, storeBox, whenResized } from "./fit.js";
import { clientName, onModeChange, term, ui } from "./words.js";

const SVG = "http://www.w3.org/2000/svg";
const RING = { x: 300, y: 262 }; // the ring's half-axes with few spokes
const CROWDED_RING = { x: 340, y: 225 }; // and with many: narrower, leaving room beside it for their labels
const HUB_EDGE = 105;
const NODE_R = 46;
const CROWDED_NODE_R = 23;
// A crowded ring spaces its spokes closer on the sides, where labels stack by their height, and
// wider at the bottom, where they sit side by side by their width.
const CROWDED_WARP = 0.15;
const CROWDED_NUMBER = 0.85; // a node's number in a crowded ring's small circle: as large as it fits
const CROWDED_LABEL = 0.7; // a crowded ring's labels, against the store's and the hub's
const STORE_AT = { x: 0, y: -300 };
const HUB_ITSELF = "kube-apiserver"; // the hub's own writes (bootstrap): the centre, not a spoke
const MAX_ACTIVE = 260;
const MAX_WAITING = 600;
const STARTS_PER_FRAME = 60;
const TRAVEL_MS = 850;
const STORE_MARGIN = 10; // a label touching the store's words reads as one of them
// Failures a lesson is about (403 Forbidden, 409 Conflict, 410 Expired): their spoke is marked for
// about two seconds (scene.css's .alarm animation), longer than a dot's flight, so it is seen at ×1.
const MARKED_CODES = new Set([403, 409, 410]);
const STORE_GAP = (34 * Math.PI) / 180; // the store's label lives above the hub, right of its line
const CROWDED_STORE_GAP = (44 * Math.PI) / 180; // a crowded ring's first label needs to pass the store's
const CROWDED = 9; // more spokes than this: smaller circles, no list of controllers under their manager
const RANK = ["kube-controller-manager", "kube-scheduler", "node/", "line-cook", "garnish-cook",
  "ingress-controller", "gateway-controller", "supervisor", "kubectl",
  "python-client", "dashboard", "dashboard/wire", "dashboard/second-writer", "dashboard/"];
const AGENTS = ["kubelet/", "kube-proxy/"]; // a node's agents, drawn on the node's one spoke
// The supervisor's ConfigMap names spokes by component; the hub's traffic names them by client.
const CONTROLLED = { "kube-controller-manager": "controller-manager", "kube-scheduler": "scheduler" };

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// A count as a spoke shows it: exact up to 9,999, then 12k, then 1.2M.
export function compact(value) {
  if (value < 10_000) return String(value);
  if (value < 1_000_000) return `${Math.round(value / 1000)}k`;
  return `${(value / 1_000_000).toFixed(1)}M`;
}

// An angle from the top of the ring, moved by `amount` away from the sides towards the top and
// the bottom (0: unchanged; the top, the sides and the bottom stay where they are).
function warp(angle, amount) {
  return angle + (amount / 2) * Math.sin(2 * angle);
}

function rank(who) {
  const index = RANK.findIndex((prefix) => (prefix.endsWith("/") ? who.startsWith(prefix) : who === prefix));
  return index < 0 ? RANK.length : index;
}

// The spoke a client is drawn on: a node's agents share their node's ("kubelet/node-3" -> "node/node-3").
export function spokeOf(who) {
  for (const prefix of AGENTS) if (who.startsWith(prefix)) return `node/${who.slice(prefix.length)}`;
  return who;
}

// The letter in a spoke's circle: a node's number (its name's last part), else the first letter.
function initial(who) {
  if (who.startsWith("node/")) {
    const last = who.split("-").pop();
    return /^[0-9]{1,3}$/.test(last) ? last : who.slice(5, 6).toUpperCase();
  }
  return who[0].toUpperCase();
}

export function verbClass(record) {
  if (retriedConflict(record)) return "verb-conflict";
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
    // The picture's size on screen and the page's font set the labels' sizes: placed again when either changes.
    whenResized(svg, () => {
      this.layoutNeeded = true;
      onNextFrame(() => this.render());
    });
  }

  desiredState(who) {
    // A node's spoke is stopped when its kubelet is (the supervisor stops kubelets, not nodes).
    const key = who.startsWith("node/") ? `kubelet/${who.slice(5)}` : CONTROLLED[who] || who;
    return key in this.states ? this.states[key] || "running" : null;
  }

  spoke(client) {
    const who = spokeOf(client);
    let spoke = this.spokes.get(who);
    if (spoke) {
      if (who !== client && !spoke.agents.has(client)) {
        spoke.agents.add(client);
        this.label(spoke);
      }
      return spoke;
    }
    const line = el("line", { class: "spoke-line" }, this.lines);
    const group = el("g", { class: "spoke", "data-who": who }, this.layer);
    el("circle", { r: NODE_R, class: "spoke-node" }, group);
    const initial = el("text", { class: "spoke-initial", y: 11 }, group);
    const label = el("g", { class: "spoke-label" }, group);
    const name = el("text", { class: "spoke-name" }, label);
    const counts = el("text", { class: "spoke-count", y: 34 }, label);
    // The controller-manager is one process running many controllers: name them under it.
    const controllers = who === "kube-controller-manager" ? el("text", { class: "spoke-sub", y: 64 }, label) : null;
    const agents = new Set(who === client ? [] : [client]);
    const hint = el("title", {}, group); // hovering a spoke names the clients it draws
    group.addEventListener("animationend", () => group.classList.remove("alarm"));
    spoke = { who, line, group, initial, label, name, counts, controllers, agents, hint, x: 0, y: 0,
      requests: 0, watches: 0, errors: 0 };
    this.spokes.set(who, spoke);
    this.order.push(who);
    this.order.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b, "en", { numeric: true })); // node-2 before node-10
    this.layoutNeeded = true;
    this.dirtyCounters.add(spoke);
    this.label(spoke);
    return spoke;
  }

  label(spoke) {
    spoke.name.textContent = clientName(spoke.who);
    this.layoutNeeded = true; // its name is placed (and perhaps shortened) for its new words
    spoke.hint.textContent = this.hintName(spoke);
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

  // The clients a spoke draws: "kubelet node-3 + kube-proxy node-3" for a node's.
  hintName(spoke) {
    return spoke.agents.size ? [...spoke.agents].sort().map(clientName).join(" + ") : clientName(spoke.who);
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
    const crowded = count > CROWDED;
    const ring = crowded ? CROWDED_RING : RING;
    const radius = crowded ? CROWDED_NODE_R : NODE_R;
    // Evenly round the hub, leaving the top to the store: the first and the last spoke stay at
    // least STORE_GAP from it.
    const first = Math.max((2 * Math.PI) / (count + 1), crowded ? CROWDED_STORE_GAP : STORE_GAP);
    const step = count > 1 ? (2 * Math.PI - 2 * first) / (count - 1) : 0;
    const spokes = this.order.map((who, index) => {
      const spoke = this.spokes.get(who);
      const angle = -Math.PI / 2 + warp(first + step * index, crowded ? CROWDED_WARP : 0);
      spoke.cos = Math.cos(angle);
      spoke.sin = Math.sin(angle);
      spoke.x = ring.x * spoke.cos;
      spoke.y = ring.y * spoke.sin;
      spoke.radius = radius;
      this.drawSpoke(spoke);
      if (spoke.controllers) spoke.controllers.style.display = crowded ? "none" : "";
      return spoke;
    });
    // Labels go where nothing is: not on the hub, the store, any circle or a label placed before.
    const taken = [storeBox(this.svg, STORE_MARGIN), box(0, 0, 2 * HUB_EDGE, 2 * HUB_EDGE),
      ...overlayBoxes(this.svg, STORE_MARGIN),
      ...spokes.map((spoke) => box(spoke.x, spoke.y, 2 * radius, 2 * radius))];
    for (const spoke of spokes) {
      // Its full name first (placing.js may shorten it); on a crowded ring a node's number in its
      // circle names it, and its label is its counts alone (the full name is the circle's tooltip).
      const numbered = crowded && spoke.who.startsWith("node/") && /^[0-9]+$/.test(initial(spoke.who));
      spoke.name.textContent = numbered ? "" : clientName(spoke.who);
      spoke.oneLine = false; // the name over its counts (placing.js may put them on one line)
      spoke.initial.setAttribute("transform", `scale(${((numbered ? CROWDED_NUMBER : radius / NODE_R)).toFixed(3)})`);
      taken.push(placeLabel(this.svg, spoke, crowded ? CROWDED_LABEL : 1, taken));
    }
  }

  drawSpoke(spoke) {
    const { x, y, radius } = spoke;
    spoke.group.setAttribute("transform", `translate(${x.toFixed(1)},${y.toFixed(1)})`);
    spoke.group.querySelector(".spoke-node").setAttribute("r", radius);
    // The line runs from the hub's rim towards the spoke's centre, and stops at its circle.
    const length = Math.hypot(x, y) || 1;
    const ux = x / length;
    const uy = y / length;
    spoke.line.setAttribute("x1", (HUB_EDGE * ux).toFixed(1));
    spoke.line.setAttribute("y1", (HUB_EDGE * uy).toFixed(1));
    spoke.line.setAttribute("x2", (x - radius * ux).toFixed(1));
    spoke.line.setAttribute("y2", (y - radius * uy).toFixed(1));
  }

  // Clients the version log names as the cause of a change are clients of the hub: give each its
  // spoke at once (counters start at zero; only records arriving from now on move or count).
  know(actors) {
    for (const who of actors) if (who && who !== HUB_ITSELF) this.spoke(who);
  }

  // Where a client's spoke's circle is on the screen (for dots that leave the picture), or null.
  spokeCentre(who) {
    const spoke = this.spokes.get(spokeOf(who));
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
        if (!record.inStream) spoke.requests += 1; // a watch's 410 inside its stream is the same request
        if (isError(record)) spoke.errors += 1; // a "not found" to a lookup is an answer, not an error
        if (isError(record) && MARKED_CODES.has(record.code)) this.alarm(spoke);
        this.queue({ spoke, inbound: true, cls: verbClass(record), size: 9 });
      } else if (record.type === "watch") {
        spoke.watches += record.count;
        this.queue({ spoke, inbound: false, cls: "verb-event", size: Math.min(16, 6 + 3 * Math.log2(record.count + 1)) });
      }
      this.dirtyCounters.add(spoke);
    }
  }

  // One event the hub sent to a client outside the traffic records (the ERROR 410 of the page's own
  // watch): a dot from the hub to that client's spoke, counted as a watch event (and an error).
  signal(who, cls) {
    const spoke = this.spoke(who);
    spoke.watches += 1;
    if (cls === "verb-error") spoke.errors += 1;
    this.dirtyCounters.add(spoke);
    this.queue({ spoke, inbound: false, cls, size: 16 });
  }

  // Mark a spoke whose request failed in a way a lesson is about (restarted if marked already).
  alarm(spoke) {
    spoke.group.classList.remove("alarm");
    spoke.group.getBoundingClientRect(); // a new animation, not the one running
    spoke.group.classList.add("alarm");
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
      if (index) el("tspan", { class: "count-sep" }, spoke.counts).textContent = "\u2009·\u2009"; // thin spaces: narrower
      el("tspan", { class: cls }, spoke.counts).textContent = compact(value);
    });
    // The exact numbers, on hovering the spoke (the label shows 12k for 12,345 to stay short).
    spoke.hint.textContent = `${this.hintName(spoke)}: ${parts.map(([, value]) => value).join(" · ")}`;
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

  // A spoke's counters (a node's agents share their node's).
  counters(who) {
    const spoke = this.spokes.get(spokeOf(who));
    return spoke ? { requests: spoke.requests, watches: spoke.watches, errors: spoke.errors } : null;
  }
}

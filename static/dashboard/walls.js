// NetworkPolicy's decisions, drawn over the page: a connection a policy dropped is a red dashed
// curve from its source (the pod's chip, or the sending node) toward its destination that stops at
// a wall, labelled "blocked by ns/name"; a connection an isolated pod was allowed is a green curve
// with an arrow to the pod that answered, labelled "allowed by ns/name". The wall stands where the
// policy acts: near the destination for ingress, near the source for egress. Curves bow out of the
// chips' column (pods stand one above the other in a node's card), so that they are seen.
//
// Guarantees:
// - `verdict(record, podByIp)` is pure: a traffic record's decision ({blocked, policies, direction, from, to,
//   port, protocol}) from the line kube-proxy answered (`dropped` for a dropped connection,
//   `allowedBy` for an allowed one of an isolated pod), or null when no policy decided.
// - One drawn line per (source, destination): the newest decision, counting the connections
//   decided so in a row (a changed decision replaces the line); each stays LINGER_MS after its
//   newest connection, then goes (on the injected clock); at most MAX_LINES, the newest. Per policy, the connections it blocked and allowed since the page opened
//   (`tally`, which the Services panel shows).
// - A line whose ends are not on screen (a pod filtered out, its panel off screen) is not drawn
//   but still counted; a chip scrolled out of its panel is pointed at on the panel's edge; labels
//   are kept inside the window and never drawn on top of each other.
import { h, keyedRows } from "./dom.js";
import { currentMode, term, ui } from "./words.js";

export const LINGER_MS = 8000;
export const MAX_LINES = 8;
export const WALL_AT = { ingress: 0.78, egress: 0.3 }; // how far along the line the wall stands
const LABEL_STEP = 56; // px between two stacked labels (a label is two lines, about 48 px)
const LABEL_ABOVE = 20; // px between a label's bottom and the wall (or the line's middle)
const BOW_MIN = 170; // px the curve's control point stands out at least (two chips one above the other), and at most:
const BOW_MAX = 300;
const GAP = 28; // px between a mark (the wall, the curve's middle) and its label
const SVG = "http://www.w3.org/2000/svg";

const names = (value) => (Array.isArray(value) ? value.map(String).filter(Boolean) : []);

// Where a connection starts or ends, as the page can find it: a pod ("ns/name", or an address the
// page knows as a pod's IP), a Service block, a node (its kube-proxy), or only an address.
function end(text, fallback, podByIp) {
  const value = String(text || "");
  const pod = value.includes("/") ? value : (value && podByIp(value)) || "";
  if (pod) return { pod, text: pod.split("/")[1] };
  return { ...fallback, text: value || fallback.text || "?" };
}

// podByIp(ip) -> "ns/name" of the pod with that IP, or null (the page's model knows every pod's IP).
export function verdict(record, podByIp = () => null) {
  const namespace = record.service ? String(record.service).split("/")[0] : (record.podNamespace || "");
  const node = { node: record.from || "", text: record.from || "" };
  const dropped = record.dropped;
  if (dropped && typeof dropped === "object") {
    return { blocked: true, policies: names(dropped.policies), direction: dropped.direction === "egress" ? "egress" : "ingress",
      from: end(dropped.from, node, podByIp),
      to: end(dropped.to, record.service ? { service: record.service, text: record.service } : {}, podByIp),
      port: dropped.port ?? "", protocol: dropped.protocol || "TCP" };
  }
  const allowed = names(record.allowedBy);
  if (!allowed.length || !record.pod) return null;
  return { blocked: false, policies: allowed, direction: "ingress", from: end(record.source, node, podByIp),
    to: { pod: `${namespace}/${record.pod}`, text: record.pod }, port: "", protocol: "" };
}

// The words of a decision: "blocked by default/a, default/b" (or "allowed by ...").
export function decisionText(decision) {
  const policies = decision.policies.join(", ") || "NetworkPolicy";
  // a term: the restaurant view says "turned away at the staff-only door ..."
  return term(decision.blocked ? "np-blocked-by" : "np-allowed-by").replace("{policies}", policies);
}

// The smaller line under it: who to whom, and for a drop its direction and port.
export function routeText(decision) {
  const route = `${decision.from.text} → ${decision.to.text}`;
  if (!decision.blocked) return route;
  const port = decision.port !== "" ? ` ${decision.port}/${decision.protocol}` : "";
  return `${route} · ${ui(`np-${decision.direction}`)}${port}`;
}

const realTime = { setTimer: (fn, ms) => setTimeout(fn, ms), clearTimer: (id) => clearTimeout(id) };

export class WallView {
  // layer: the element the lines are drawn in (a fixed overlay); locate(end) -> {x, y} or null;
  // changed(): asks for a frame (a line went).
  constructor({ layer, locate, changed = () => {}, time = realTime, viewport = () => ({ width: 1280, height: 720 }),
    podByIp = () => null }) {
    this.layer = layer;
    this.podByIp = podByIp;
    this.locate = locate;
    this.changed = changed;
    this.time = time;
    this.viewport = viewport;
    this.lines = new Map(); // key -> {key, decision, count, timer, order}
    this.tally = new Map(); // policy "ns/name" -> {blocked, allowed}
    this.order = 0;
    this.box = null;
  }

  // Traffic records; returns true when one carried a decision.
  add(records) {
    let any = false;
    for (const record of records) {
      const decision = verdict(record, this.podByIp);
      if (!decision) continue;
      any = true;
      for (const policy of decision.policies) {
        const counts = this.tally.get(policy) || { blocked: 0, allowed: 0 };
        this.tally.set(policy, { ...counts, [decision.blocked ? "blocked" : "allowed"]: counts[decision.blocked ? "blocked" : "allowed"] + 1 });
      }
      const key = `${decision.from.pod || decision.from.node || decision.from.text}|${decision.to.pod || decision.to.service || decision.to.text}`;
      const held = this.lines.get(key);
      if (held) this.time.clearTimer(held.timer);
      const same = held && held.decision.blocked === decision.blocked; // a changed verdict starts its count again
      const line = { key: `${key}|${decision.blocked ? "x" : "v"}`, pair: key, decision, count: (same ? held.count : 0) + 1,
        order: (this.order += 1) };
      line.timer = this.time.setTimer(() => this.expire(key, line), LINGER_MS);
      this.lines.set(key, line);
    }
    if (this.lines.size > MAX_LINES) {
      for (const line of [...this.lines.values()].sort((a, b) => a.order - b.order).slice(0, this.lines.size - MAX_LINES)) {
        this.time.clearTimer(line.timer);
        this.lines.delete(line.pair);
      }
    }
    return any;
  }

  expire(key, line) {
    if (this.lines.get(key) !== line) return;
    this.lines.delete(key);
    this.changed();
  }

  reset() {
    for (const line of this.lines.values()) this.time.clearTimer(line.timer);
    this.lines.clear();
    this.tally.clear();
  }

  // The lines drawn now, newest first (what render draws; tests read it).
  current() {
    return [...this.lines.values()].sort((a, b) => b.order - a.order);
  }

  render() {
    if (!this.layer) return;
    if (!this.box) {
      this.box = document.createElementNS(SVG, "svg");
      this.box.setAttribute("class", "np-lines");
      this.labels = h("div", "np-labels");
      this.layer.append(this.box, this.labels);
    }
    const placed = [];
    const rows = [];
    const labels = [];
    for (const line of this.current()) {
      const from = this.locate(line.decision.from);
      const to = this.locate(line.decision.to);
      if (!from || !to) continue;
      const g = this.geometry(line.decision, from, to, placed);
      const sig = [line.count, currentMode(), ...Object.values(g).map((n) => Math.round(n))]; // the words follow the mode
      rows.push({ key: line.key, sig, make: () => this.draw(line, g) });
      labels.push({ key: line.key, sig, make: () => this.label(line, g) });
    }
    keyedRows(this.box, rows);
    keyedRows(this.labels, labels);
  }

  // Where a line's parts go: a curve from the source to the destination that bows out of the
  // chips' column (to the left, else up), the wall on it (or the arrow at its end), and the label
  // beside the wall (or the curve's middle), stacked below any label placed before it.
  geometry(decision, from, to, placed) {
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const length = Math.hypot(dx, dy) || 1;
    let nx = -dy / length;
    let ny = dx / length;
    if (nx > 0.2 || (Math.abs(nx) <= 0.2 && ny > 0)) { nx = -nx; ny = -ny; } // leftwards, else upwards
    const bow = Math.min(Math.max(length * 0.45, BOW_MIN), BOW_MAX);
    const control = { x: (from.x + to.x) / 2 + nx * bow, y: (from.y + to.y) / 2 + ny * bow };
    const at = decision.blocked ? WALL_AT[decision.direction] : 0.5;
    const mark = bezier(from, control, to, at);
    const tangent = bezierTangent(from, control, to, decision.blocked ? at : 1);
    const view = this.viewport();
    const width = 28 + 9 * Math.max(decisionText(decision).length, routeText(decision).length + 3); // about
    // Beside the mark, on the side the curve bows to: left of it (its right edge GAP away, a short
    // connector between), else above it; stacked below any label placed before it.
    const left = nx < -0.2;
    let labelX = left ? mark.x - GAP - width : mark.x - width / 2;
    let labelY = left ? mark.y - LABEL_STEP / 2 : mark.y - GAP - LABEL_STEP;
    labelX = Math.min(Math.max(8, labelX), Math.max(8, view.width - width - 8));
    labelY = Math.min(Math.max(8, labelY), Math.max(8, view.height - LABEL_STEP - 8));
    while (placed.some((p) => Math.abs(p.y - labelY) < LABEL_STEP && labelX < p.x + p.width && p.x < labelX + width)) {
      labelY += LABEL_STEP;
    }
    placed.push({ x: labelX, y: labelY, width });
    const anchored = left && labelX + width <= mark.x - GAP + 0.5; // its right edge by the mark (no clamp moved it)
    return { x1: from.x, y1: from.y, cx: control.x, cy: control.y, x2: to.x, y2: to.y, markX: mark.x, markY: mark.y,
      angle: Math.atan2(tangent.y, tangent.x), labelX, labelY, right: anchored ? view.width - (mark.x - GAP) : -1,
      tieX: anchored ? mark.x - GAP : labelX + width / 2, tieY: anchored ? labelY + LABEL_STEP / 2 - 4 : labelY + LABEL_STEP - 8 };
  }

  draw(line, g) {
    const { decision } = line;
    const group = svg("g", { class: `np-group ${decision.blocked ? "blocked" : "allowed"} ${decision.direction}` });
    group.dataset.key = line.key;
    const from = { x: g.x1, y: g.y1 };
    const control = { x: g.cx, y: g.cy };
    const to = { x: g.x2, y: g.y2 };
    const degrees = (g.angle * 180) / Math.PI;
    const place = `translate(${g.markX.toFixed(1)} ${g.markY.toFixed(1)}) rotate(${degrees.toFixed(1)})`;
    if (decision.blocked) {
      const [before, after] = split(from, control, to, WALL_AT[decision.direction]);
      group.append(svg("path", { class: "np-ghost", d: curve(...after) }), svg("path", { class: "np-seg", d: curve(...before) }),
        svg("rect", { class: "np-wall", x: -7, y: -29, width: 14, height: 58, rx: 2, transform: place }));
    } else {
      const end = `translate(${g.x2.toFixed(1)} ${g.y2.toFixed(1)}) rotate(${degrees.toFixed(1)})`;
      group.append(svg("path", { class: "np-seg", d: curve(from, control, to) }),
        svg("path", { class: "np-head", d: "M 4 0 L -16 -10 L -16 10 Z", transform: end }));
    }
    group.append(svg("circle", { class: "np-from", cx: g.x1.toFixed(1), cy: g.y1.toFixed(1), r: 6 }),
      svg("line", { class: "np-tie", x1: g.tieX.toFixed(1), y1: g.tieY.toFixed(1), x2: g.markX.toFixed(1), y2: g.markY.toFixed(1) }));
    return group;
  }

  label(line, g) {
    const { decision } = line;
    const label = h("span", `np-label ${decision.blocked ? "blocked" : "allowed"}`);
    label.dataset.key = line.key;
    // anchored by its right edge when it stands left of its mark: then the connector meets it whatever its width
    Object.assign(label.style, g.right >= 0 ? { right: `${g.right}px`, top: `${g.labelY}px` }
      : { left: `${g.labelX}px`, top: `${g.labelY}px` });
    label.append(h("b", "np-decision", `${decision.blocked ? "✕" : "✓"} ${decisionText(decision)}`),
      h("span", "np-route", `${routeText(decision)}${line.count > 1 ? ` ×${line.count}` : ""}`));
    return label;
  }
}

// A quadratic Bézier curve's point and direction at t, its halves at t, and its SVG path.
export function bezier(p0, p1, p2, t) {
  const u = 1 - t;
  return { x: u * u * p0.x + 2 * u * t * p1.x + t * t * p2.x, y: u * u * p0.y + 2 * u * t * p1.y + t * t * p2.y };
}

function bezierTangent(p0, p1, p2, t) {
  return { x: 2 * (1 - t) * (p1.x - p0.x) + 2 * t * (p2.x - p1.x), y: 2 * (1 - t) * (p1.y - p0.y) + 2 * t * (p2.y - p1.y) };
}

export function split(p0, p1, p2, t) {
  const a = { x: p0.x + (p1.x - p0.x) * t, y: p0.y + (p1.y - p0.y) * t };
  const b = { x: p1.x + (p2.x - p1.x) * t, y: p1.y + (p2.y - p1.y) * t };
  const m = bezier(p0, p1, p2, t);
  return [[p0, a, m], [m, b, p2]];
}

const f = (n) => n.toFixed(1);
function curve(p0, p1, p2) {
  return `M ${f(p0.x)} ${f(p0.y)} Q ${f(p1.x)} ${f(p1.y)} ${f(p2.x)} ${f(p2.y)}`;
}

function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

// Where an end of a line is on this page: a pod's chip, a Service's block, a node's kube-proxy
// spoke (else its card's name); null when it is not drawn. A chip scrolled out of its panel is
// pointed at on the panel's edge, where it would be (the line still shows which way it went).
export function clampTo(point, box, inset = 6) {
  return { x: Math.min(Math.max(point.x, box.left + inset), box.right - inset),
    y: Math.min(Math.max(point.y, box.top + inset), box.bottom - inset) };
}

export function domLocator(picture) {
  const centre = (element) => {
    if (!element) return null;
    const rect = element.getBoundingClientRect();
    if (!rect.width && !rect.height) return null;
    const point = { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
    const panel = element.closest(".panel");
    const window_ = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
    const box = panel ? panel.getBoundingClientRect() : window_;
    const seen = { left: Math.max(box.left, 0), top: Math.max(box.top, 0), right: Math.min(box.right, window_.right),
      bottom: Math.min(box.bottom, window_.bottom) };
    if (seen.right - seen.left < 12 || seen.bottom - seen.top < 12) return null; // its panel is off screen
    return clampTo(point, seen);
  };
  return (where) => {
    if (where.pod) { // a chip's left edge: the curve bows left, and leaves the chip's words readable
      const point = centre(document.querySelector(`.pod[data-key="${CSS.escape(where.pod)}"]`));
      const chip = document.querySelector(`.pod[data-key="${CSS.escape(where.pod)}"]`);
      return point && { x: Math.max(point.x - chip.getBoundingClientRect().width / 2 + 10, point.x - 400), y: point.y };
    }
    if (where.service) return centre(document.querySelector(`.service[data-key="${CSS.escape(where.service)}"] h3`));
    if (where.node) {
      return picture.spokeCentre(`kube-proxy/${where.node}`)
        || centre(document.querySelector(`.node-card[data-node="${CSS.escape(where.node)}"] .node-name`));
    }
    return null;
  };
}

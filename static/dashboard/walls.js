// NetworkPolicy's decisions, drawn over the page: a connection a policy dropped is a red dashed
// line from its source (the pod's chip, or the sending node) toward its destination that stops at
// a wall, labelled "blocked by ns/name"; a connection an isolated pod was allowed is a green line
// to the pod that answered, labelled "allowed by ns/name". The wall stands where the policy acts:
// near the destination for ingress, near the source for egress.
//
// Guarantees:
// - `verdict(record, podByIp)` is pure: a traffic record's decision ({blocked, policies, direction, from, to,
//   port, protocol}) from the line kube-proxy answered (`dropped` for a dropped connection,
//   `allowedBy` for an allowed one of an isolated pod), or null when no policy decided.
// - One drawn line per (decision, source, destination), counting its connections; each stays
//   LINGER_MS after its newest connection, then goes (on the injected clock); at most MAX_LINES,
//   the newest. Per policy, the connections it blocked and allowed since the page opened
//   (`tally`, which the Services panel shows).
// - A line whose ends are not on screen (a pod filtered out, a panel scrolled away) is not drawn
//   but still counted; labels are kept inside the window and never drawn on top of each other.
import { h, keyedRows } from "./dom.js";
import { ui, uiFill } from "./words.js";

export const LINGER_MS = 8000;
export const MAX_LINES = 8;
export const WALL_AT = { ingress: 0.78, egress: 0.3 }; // how far along the line the wall stands
const LABEL_STEP = 56; // px between two stacked labels (a label is two lines, about 48 px)
const LABEL_ABOVE = 20; // px between a label's bottom and the wall (or the line's middle)

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
  return uiFill(decision.blocked ? "np-blocked-by" : "np-allowed-by", { policies });
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
      const key = `${decision.blocked ? "x" : "v"}|${decision.from.pod || decision.from.node || decision.from.text}|${decision.to.pod || decision.to.service || decision.to.text}`;
      const held = this.lines.get(key);
      if (held) this.time.clearTimer(held.timer);
      const line = { key, decision, count: (held ? held.count : 0) + 1, order: (this.order += 1) };
      line.timer = this.time.setTimer(() => this.expire(key, line), LINGER_MS);
      this.lines.set(key, line);
    }
    if (this.lines.size > MAX_LINES) {
      for (const line of [...this.lines.values()].sort((a, b) => a.order - b.order).slice(0, this.lines.size - MAX_LINES)) {
        this.time.clearTimer(line.timer);
        this.lines.delete(line.key);
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
      this.box = h("div", "np-lines");
      this.layer.append(this.box);
    }
    const placed = [];
    const rows = [];
    for (const line of this.current()) {
      const from = this.locate(line.decision.from);
      const to = this.locate(line.decision.to);
      if (!from || !to) continue;
      const geometry = this.geometry(line.decision, from, to, placed);
      const sig = [line.count, ...Object.values(geometry).map((n) => Math.round(n))];
      rows.push({ key: line.key, sig, make: () => this.draw(line, geometry) });
    }
    keyedRows(this.box, rows);
  }

  // Where a line's parts go: its start, length and angle, the wall (or the arrow's end) and the label.
  geometry(decision, from, to, placed) {
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const length = Math.hypot(dx, dy);
    const at = decision.blocked ? WALL_AT[decision.direction] : 1;
    const stop = { x: from.x + dx * at, y: from.y + dy * at };
    const view = this.viewport();
    const width = 24 + 8.5 * Math.max(decisionText(decision).length, routeText(decision).length);
    let labelX = Math.min(Math.max(8, (decision.blocked ? stop.x : from.x + dx / 2) - width / 2), Math.max(8, view.width - width - 8));
    let labelY = Math.max(8, (decision.blocked ? stop.y : from.y + dy / 2) - LABEL_ABOVE - LABEL_STEP);
    while (placed.some((p) => Math.abs(p.y - labelY) < LABEL_STEP && labelX < p.x + p.width && p.x < labelX + width)) {
      labelY += LABEL_STEP;
    }
    labelY = Math.min(labelY, Math.max(8, view.height - LABEL_STEP - 8));
    labelX = Math.max(8, labelX);
    placed.push({ x: labelX, y: labelY, width });
    return { x: from.x, y: from.y, length, angle: Math.atan2(dy, dx), stopX: stop.x, stopY: stop.y, labelX, labelY };
  }

  draw(line, g) {
    const { decision } = line;
    const group = h("div", `np-group ${decision.blocked ? "blocked" : "allowed"} ${decision.direction}`);
    group.dataset.key = line.key;
    const angle = `rotate(${g.angle.toFixed(4)}rad)`;
    const segment = (className, x, y, length) => {
      const part = h("i", className);
      Object.assign(part.style, { left: `${x}px`, top: `${y}px`, width: `${Math.max(0, length)}px`, transform: angle });
      return part;
    };
    const drawn = decision.blocked ? WALL_AT[decision.direction] : 1;
    group.append(segment("np-seg", g.x, g.y, g.length * drawn));
    if (decision.blocked) group.append(segment("np-ghost", g.stopX, g.stopY, g.length * (1 - drawn)));
    const mark = h("i", decision.blocked ? "np-wall" : "np-head");
    Object.assign(mark.style, { left: `${g.stopX}px`, top: `${g.stopY}px`, transform: `translate(-50%, -50%) ${angle}` });
    group.append(mark);
    const label = h("span", "np-label");
    Object.assign(label.style, { left: `${g.labelX}px`, top: `${g.labelY}px` });
    label.append(h("b", "np-decision", `${decision.blocked ? "⛔" : "✓"} ${decisionText(decision)}`),
      h("span", "np-route", `${routeText(decision)}${line.count > 1 ? ` ×${line.count}` : ""}`));
    group.append(label);
    return group;
  }
}

// Where an end of a line is on this page: a pod's chip, a Service's block, a node's kube-proxy
// spoke (else its card's name); null when it is not on screen.
export function domLocator(picture) {
  const centre = (element) => {
    if (!element) return null;
    const rect = element.getBoundingClientRect();
    if (!rect.width && !rect.height) return null;
    if (rect.bottom < 0 || rect.top > window.innerHeight || rect.right < 0 || rect.left > window.innerWidth) return null;
    return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
  };
  return (where) => {
    if (where.pod) return centre(document.querySelector(`.pod[data-key="${CSS.escape(where.pod)}"] .pod-name`));
    if (where.service) return centre(document.querySelector(`.service[data-key="${CSS.escape(where.service)}"] h3`));
    if (where.node) {
      return picture.spokeCentre(`kube-proxy/${where.node}`)
        || centre(document.querySelector(`.node-card[data-node="${CSS.escape(where.node)}"] .node-name`));
    }
    return null;
  };
}

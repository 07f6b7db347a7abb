// NetworkPolicy's decisions on the page (static/dashboard/walls.js, policies.js and the traffic
// view's lines): synthetic traffic records of the agreed shape, a fake document (fakedom.mjs) and a
// fake clock (faketime.mjs); run with `node --test` (tests/dashboard/test_narration_js.py runs
// every file here in the pytest suite).
import assert from "node:assert/strict";
import { test } from "node:test";
import { installDocument } from "./fakedom.mjs";
import { FakeTime } from "./faketime.mjs";
import { pageModule } from "./page.mjs";

const UI = { "np-blocked": "blocked",
  "np-ingress": "ingress (in)", "np-egress": "egress (out)", "np-applies": "applies to", "np-pods": "pods {selector}",
  "np-namespaces": "namespaces {selector}", "np-all": "(all)", "np-except": "except", "np-anyone": "anyone",
  "np-deny-all": "nothing (deny all)", "np-blocked-n": "blocked {n}", "np-allowed-n": "allowed {n}", failed: "failed" };
const TERMS = { networkpolicy: { k8s: "NetworkPolicy", kitchen: "Staff-only door" },
  "np-blocked-by": { k8s: "blocked by {policies}", kitchen: "turned away at the staff-only door {policies}" },
  "np-allowed-by": { k8s: "allowed by {policies}", kitchen: "let in by the staff-only door {policies}" } };
const document = installDocument({ terms: TERMS, ui: UI, status: {} });
document.body.dataset.snapshotKinds = JSON.stringify(["pods", "services", "events", "horizontalpodautoscalers", "networkpolicies"]);
const { WallView, verdict, LINGER_MS, MAX_LINES, WALL_AT, bezier, split } = await pageModule("walls.js");
const { PoliciesPanel, ruleLines } = await pageModule("policies.js");
const { recentLine } = await pageModule("traffic.js");
const { Model } = await pageModule("model.js");

// The lines kube-proxy answers (the hub adds type, node, ts...): a connection the kitchen's policy
// dropped, one the waiter was allowed, and one to a pod nobody isolates.
const usual = { type: "service.request", from: "node-1", target: "kitchen", service: "default/kitchen", endpoint: "10.244.1.5:80" };
const dropped = (from = "default/guest", extra = {}) => ({ ...usual, seq: 1, code: 0, pod: "", podNode: "",
  error: "connection timed out (dropped by NetworkPolicy)",
  dropped: { direction: "ingress", policies: ["default/kitchen-staff-only"], from, to: "default/kitchen-7f9c4-abcde",
    port: 80, protocol: "TCP", ...extra } });
const allowed = (source = "default/waiter") => ({ ...usual, seq: 2, code: 200, pod: "kitchen-7f9c4-abcde", podNode: "node-2",
  source, allowedBy: ["default/kitchen-staff-only", "default/waiters-may-order"] });
const open = { ...usual, seq: 3, code: 200, pod: "kitchen-7f9c4-abcde", podNode: "node-2" };

// Chips at known places: the guest at the left, the kitchen at the right, the waiter above.
const PLACES = { "default/guest": { x: 100, y: 400 }, "default/waiter": { x: 100, y: 200 },
  "default/kitchen-7f9c4-abcde": { x: 600, y: 400 }, "node:node-1": { x: 300, y: 100 } };
const locate = (where) => PLACES[where.pod] || PLACES[`node:${where.node}`] || null;

function view(places = locate) {
  const time = new FakeTime();
  const layer = document.createElement("div");
  let asked = 0;
  const walls = new WallView({ layer, locate: places, time, changed: () => { asked += 1; } });
  return { walls, layer, time, asked: () => asked };
}

const text = (node) => node.textContent;
const groups = (layer) => layer.children[0].children; // the svg's curves
const labelsOf = (layer) => layer.children[1].children; // the labels beside them
const classes = (node) => ((node.getAttribute && node.getAttribute("class")) || node.className || "").split(/\s+/);
const find = (node, cls) => {
  if (classes(node).includes(cls)) return node;
  for (const child of node.children || []) {
    const found = find(child, cls);
    if (found) return found;
  }
  return null;
};

test("a dropped connection's decision: blocked, by which policy, in which direction, between whom", () => {
  const decision = verdict(dropped());
  assert.equal(decision.blocked, true);
  assert.deepEqual(decision.policies, ["default/kitchen-staff-only"]);
  assert.equal(decision.direction, "ingress");
  assert.deepEqual([decision.from.pod, decision.to.pod, decision.port, decision.protocol],
    ["default/guest", "default/kitchen-7f9c4-abcde", 80, "TCP"]);
  // from a node (the traffic form): an address, drawn from that node's kube-proxy
  const fromNode = verdict(dropped("10.0.0.11"));
  assert.deepEqual([fromNode.from.node, fromNode.from.text], ["node-1", "10.0.0.11"]);
  assert.equal(verdict(allowed()).blocked, false);
  assert.deepEqual(verdict(allowed()).to.pod, "default/kitchen-7f9c4-abcde");
  assert.equal(verdict(open), null); // no policy decided: nothing to draw
  assert.equal(verdict({ ...usual, code: 503, error: "no ready endpoints" }), null);
});

// The numbers of an SVG path "M x y Q cx cy x2 y2" and of a transform "translate(x y) rotate(a)".
const path = (node) => node.getAttribute("d").match(/-?[\d.]+/g).map(Number);
const at = (node) => node.getAttribute("transform").match(/-?[\d.]+/g).map(Number);
const distance = (a, b) => Math.hypot(a[0] - b.x, a[1] - b.y);
const GUEST = PLACES["default/guest"];
const KITCHEN = PLACES["default/kitchen-7f9c4-abcde"];

test("blocked: a dashed curve from the guest that stops at a wall near the kitchen, labelled with the policy", () => {
  const { walls, layer } = view();
  assert.equal(walls.add([dropped()]), true);
  walls.render();
  const [group] = groups(layer);
  assert.ok(classes(group).includes("blocked"));
  const drawn = path(find(group, "np-seg"));
  const wall = at(find(group, "np-wall"));
  assert.deepEqual(drawn.slice(0, 2), [GUEST.x, GUEST.y]); // from the guest's chip
  assert.ok(Math.abs(drawn[4] - wall[0]) < 0.2 && Math.abs(drawn[5] - wall[1]) < 0.2, "the red line ends at the wall");
  assert.ok(distance(wall, KITCHEN) < distance(wall, GUEST), "ingress: the wall stands by the kitchen");
  assert.ok(wall[0] < Math.min(GUEST.x, KITCHEN.x) || wall[1] < GUEST.y, "the curve bows out of the chips' line");
  const ghost = path(find(group, "np-ghost"));
  assert.deepEqual(ghost.slice(-2), [KITCHEN.x, KITCHEN.y]); // where it was heading, faint, past the wall
  const [label] = labelsOf(layer);
  assert.equal(text(find(label, "np-decision")), "✕ blocked by default/kitchen-staff-only");
  assert.equal(text(find(label, "np-route")), "guest → kitchen-7f9c4-abcde · ingress (in) 80/TCP");
  // an egress drop stands its wall by the source
  const other = view();
  other.walls.add([dropped("default/guest", { direction: "egress" })]);
  other.walls.render();
  const egressWall = at(find(groups(other.layer)[0], "np-wall"));
  assert.ok(distance(egressWall, GUEST) < distance(egressWall, KITCHEN));
});

test("the curve's halves meet at the wall", () => {
  const [p0, p1, p2] = [{ x: 0, y: 0 }, { x: 50, y: -100 }, { x: 100, y: 0 }];
  const [before, after] = split(p0, p1, p2, 0.78);
  assert.deepEqual(before[2], bezier(p0, p1, p2, 0.78));
  assert.deepEqual(after[0], before[2]);
  assert.deepEqual(bezier(before[0], before[1], before[2], 0.5), bezier(p0, p1, p2, 0.39));
});

test("allowed: a green curve with an arrow to the pod that answered, naming every policy that allowed it", () => {
  const { walls, layer } = view();
  walls.add([allowed(), open]);
  walls.render();
  assert.equal(groups(layer).length, 1); // the open pod's answer draws no policy line
  const [group] = groups(layer);
  assert.ok(classes(group).includes("allowed"));
  assert.ok(find(group, "np-head") && !find(group, "np-wall"));
  const drawn = path(find(group, "np-seg"));
  assert.deepEqual([drawn[0], drawn[1], drawn[4], drawn[5]], [100, 200, KITCHEN.x, KITCHEN.y]); // waiter to kitchen
  assert.deepEqual(at(find(group, "np-head")).slice(0, 2), [KITCHEN.x, KITCHEN.y]);
  assert.equal(text(find(labelsOf(layer)[0], "np-decision")),
    "✓ allowed by default/kitchen-staff-only, default/waiters-may-order");
});

test("repeats count on one line; a line lingers after its newest connection, then goes and asks for a frame", () => {
  const { walls, layer, time, asked } = view();
  walls.add([dropped()]);
  time.advance(LINGER_MS - 1000);
  walls.add([dropped(), dropped()]);
  walls.render();
  assert.equal(groups(layer).length, 1);
  assert.match(text(find(labelsOf(layer)[0], "np-route")), /×3$/);
  time.advance(LINGER_MS - 1);
  assert.equal(walls.current().length, 1);
  time.advance(1);
  assert.equal(walls.current().length, 0);
  assert.equal(asked(), 1);
  walls.render();
  assert.equal(groups(layer).length, 0);
  assert.equal(labelsOf(layer).length, 0);
  assert.deepEqual(walls.tally.get("default/kitchen-staff-only"), { blocked: 3, allowed: 0 }); // counts stay
});

test("at most MAX_LINES, the newest; labels never stack on one another and stay in the window", () => {
  const many = {};
  const records = [];
  for (let i = 0; i < MAX_LINES + 3; i += 1) {
    many[`default/guest-${i}`] = { x: 100, y: 400 };
    records.push(dropped(`default/guest-${i}`));
  }
  const { walls, layer } = view((where) => many[where.pod] || PLACES[where.pod] || null);
  walls.add(records);
  assert.equal(walls.current().length, MAX_LINES);
  assert.equal(walls.current()[0].decision.from.pod, `default/guest-${MAX_LINES + 2}`);
  walls.render();
  const labels = [...labelsOf(layer)];
  const tops = labels.map((l) => parseFloat(l.style.top));
  for (let i = 0; i < tops.length; i += 1) {
    for (let j = 0; j < i; j += 1) assert.ok(Math.abs(tops[i] - tops[j]) >= 56 || tops[i] >= 720 - 56 - 8 - 0.5, `${tops}`);
  }
  assert.ok(labels.every((l) => parseFloat(l.style.left) >= 8));
});

test("a line whose ends are not on screen is counted but not drawn; a redraw keeps unchanged lines' elements", () => {
  const { walls, layer } = view((where) => (where.pod === "default/guest" ? null : locate(where)));
  walls.add([dropped(), allowed()]);
  walls.render();
  assert.equal(groups(layer).length, 1);
  const kept = groups(layer)[0];
  walls.render();
  assert.equal(groups(layer)[0], kept);
  assert.equal(walls.tally.get("default/kitchen-staff-only").blocked, 1);
});

test("the traffic panel's lines: a drop names its policy, an allowed answer the policies that let it in", () => {
  const line = recentLine(dropped());
  assert.ok(line.classList.contains("blocked"));
  assert.equal(text(line), "guest ✕→ kitchen-7f9c4-abcde blocked by default/kitchen-staff-only");
  assert.match(text(recentLine(allowed())), /kitchen-7f9c4-abcde .*✓ allowed by default\/kitchen-staff-only, default\/waiters-may-order$/);
  assert.equal(text(recentLine(open)), "node-1 → kitchen-7f9c4-abcde 10.244.1.5:80 · node-2");
});

const POLICY = { key: "default/kitchen-staff-only", ns: "default", name: "kitchen-staff-only", podSelector: "app=kitchen",
  types: ["Ingress"], ingress: [], egress: [] };
const WAITERS = { key: "default/waiters-may-order", ns: "default", name: "waiters-may-order", podSelector: "app=kitchen",
  types: ["Ingress", "Egress"],
  ingress: [{ peers: [{ pods: "role=waiter", namespaces: null }, { cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] }], ports: ["80/TCP"] }],
  egress: [{ peers: [], ports: [] }] };

test("each policy's rules in words: deny all, peers, ports, anyone", () => {
  assert.deepEqual(ruleLines(POLICY).map((l) => [l.deny, l.text]), [[true, "Ingress ← nothing (deny all)"]]);
  assert.deepEqual(ruleLines(WAITERS).map((l) => l.text),
    ["Ingress ← pods role=waiter | 10.0.0.0/8 except 10.1.0.0/16 · 80/TCP", "Egress → anyone"]);
  assert.equal(ruleLines({ ...POLICY, ingress: [{ peers: [{ pods: "", namespaces: "team=ops" }], ports: [] }] })[0].text,
    "Ingress ← pods (all) · namespaces team=ops");
});

test("the Services panel lists the policies with their counts, hidden while there are none", () => {
  const model = new Model();
  model.loadSnapshot({ revision: 1, objects: { pods: [], services: [], networkpolicies: [] } });
  const box = document.createElement("div");
  const list = document.createElement("ul");
  const tally = new Map();
  const panel = new PoliciesPanel(model, box, list, tally);
  panel.renderAll();
  assert.ok(box.classList.contains("none"));
  model.applyChanges({ revision: 3, items: [
    { rv: 2, type: "ADDED", resource: "networkpolicies", ns: "default", name: POLICY.name, vm: POLICY },
    { rv: 3, type: "ADDED", resource: "networkpolicies", ns: "default", name: WAITERS.name, vm: WAITERS }] });
  panel.render();
  assert.ok(!box.classList.contains("none"));
  assert.deepEqual(list.children.map((row) => row.dataset.key), [POLICY.key, WAITERS.key]);
  const [deny, waiters] = list.children;
  assert.match(text(deny), /^kitchen-staff-onlyIngressapplies to: pods app=kitchenIngress ← nothing \(deny all\)$/);
  tally.set(POLICY.key, { blocked: 4, allowed: 2 });
  panel.render();
  assert.notEqual(list.children[0], deny); // its counts changed: drawn again
  assert.equal(list.children[1], waiters); // unchanged: kept
  assert.match(text(list.children[0]), /blocked 4allowed 2/);
});

test("a hub without NetworkPolicies: the panel draws nothing and never throws", () => {
  const model = new Model();
  delete model.objects.networkpolicies;
  const box = document.createElement("div");
  const panel = new PoliciesPanel(model, box, document.createElement("ul"));
  panel.renderAll();
  assert.ok(box.classList.contains("none"));
});

test("a source known by its IP is drawn from its pod's chip when the page knows the pod", () => {
  const byIp = (ip) => ({ "10.244.1.9": "default/waiter" })[ip] || null;
  const decision = verdict(allowed("10.244.1.9"), byIp);
  assert.deepEqual([decision.from.pod, decision.from.text], ["default/waiter", "waiter"]);
  const unknown = verdict(allowed("10.0.0.11"), byIp); // the node itself: drawn from its kube-proxy
  assert.deepEqual([unknown.from.node, unknown.from.text], ["node-1", "10.0.0.11"]);
  const time = new FakeTime();
  const layer = document.createElement("div");
  const walls = new WallView({ layer, locate, time, podByIp: byIp });
  walls.add([allowed("10.244.1.9")]);
  walls.render();
  assert.deepEqual(path(find(groups(layer)[0], "np-seg")).slice(0, 2), [100, 200]); // from the waiter's chip
  assert.match(text(recentLine(allowed("10.244.1.9"), byIp)), /^waiter → kitchen-7f9c4-abcde/);
});

test("a chip scrolled out of its panel is pointed at on the panel's edge", async () => {
  const { clampTo } = await pageModule("walls.js");
  const panel = { left: 600, top: 230, right: 950, bottom: 710 };
  assert.deepEqual(clampTo({ x: 780, y: 1200 }, panel), { x: 780, y: 704 });
  assert.deepEqual(clampTo({ x: 700, y: 400 }, panel), { x: 700, y: 400 });
});

test("chips one above the other: the curve bows left, its label stands left of the wall, tied to it", () => {
  const column = { "default/guest": { x: 700, y: 380 }, "default/kitchen-7f9c4-abcde": { x: 700, y: 480 } };
  const { walls, layer } = view((where) => column[where.pod] || null);
  walls.add([dropped()]);
  walls.render();
  const group = groups(layer)[0];
  const wall = at(find(group, "np-wall"));
  assert.ok(wall[0] < 700 - 40, `the wall stands out of the column: ${wall}`);
  const label = labelsOf(layer)[0];
  assert.ok(Math.abs(parseFloat(label.style.right) - (1280 - (wall[0] - 28))) < 0.1); // its right edge 28 px left of the wall
  const tie = find(group, "np-tie");
  assert.equal(Number(tie.getAttribute("x1")), Number((wall[0] - 28).toFixed(1)));
  assert.deepEqual([Number(tie.getAttribute("x2")), Number(tie.getAttribute("y2"))], wall.slice(0, 2));
});

test("a changed decision between the same two pods replaces its line and starts its count again", () => {
  const { walls, layer } = view();
  walls.add([dropped("default/waiter"), dropped("default/waiter")]);
  walls.add([allowed("default/waiter")]);
  assert.equal(walls.current().length, 1);
  const [line] = walls.current();
  assert.deepEqual([line.decision.blocked, line.count], [false, 1]);
  walls.render();
  assert.equal(groups(layer).length, 1);
  assert.ok(classes(groups(layer)[0]).includes("allowed"));
  assert.deepEqual(walls.tally.get("default/kitchen-staff-only"), { blocked: 2, allowed: 1 });
});

test("a pod's own request names the pod, not its node, even when no policy decided", () => {
  const byIp = (ip) => ({ "10.244.2.4": "default/guest" })[ip] || null;
  assert.match(text(recentLine({ ...open, source: "10.244.2.4" }, byIp)), /^guest → kitchen-7f9c4-abcde/);
});

test("the restaurant view tells it in its own words, and a switch redraws the labels", async () => {
  const { setMode } = await pageModule("words.js");
  const { walls, layer } = view();
  walls.add([dropped()]);
  walls.render();
  assert.match(text(labelsOf(layer)[0]), /^✕ blocked by default\/kitchen-staff-only/);
  setMode("kitchen");
  try {
    walls.render();
    assert.match(text(labelsOf(layer)[0]), /^✕ turned away at the staff-only door default\/kitchen-staff-only/);
  } finally {
    setMode("k8s");
  }
});

// The narration (static/dashboard/narration.js), run with `node --test` (tests/dashboard/test_narration_js.py
// runs this file in the pytest suite). The module is pure: it is loaded as it is served.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const source = readFileSync(new URL("../../../static/dashboard/narration.js", import.meta.url), "utf8");
const { Narrator, nothingDeployed, rootOf, MAX_STEPS } = await import(
  `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

// The page's English templates (dashboard/words.py), and the picture's names for clients.
const EN = {
  "n-it": "it", "n-on": "{what} to {node}", "n-more": "{n} more", "n-skipped": "… {n} more …",
  "n-created": "{actor} created {what}", "n-created-on": "{actor} created {what} on {node}",
  "n-bound": "{actor} bound {what} to {node}", "n-bound-many": "{actor} bound {what}",
  "n-started": "{actor} started {what}", "n-ready": "{actor} marked {what} ready",
  "n-deleting": "{actor} deleted {what}", "n-removed": "{actor} removed {what}", "n-deleted": "{actor} deleted {what}",
  "n-changed": "{actor} changed {what}",
  "n-restarted": "{actor} restarted {what} (restart {n})", "n-status": "{what} is {status}",
  "n-scaled": "{actor} scaled {what} to {n}", "n-node-ready": "{actor} marked {what} Ready",
  "n-node-not-ready": "{actor} marked {what} NotReady", "n-cordoned": "{actor} cordoned {what}",
  "n-uncordoned": "{actor} uncordoned {what}", "n-job-outcome": "{what} is {status}",
  "n-had": "{what} had {current} of {desired}", "n-warning": "⚠ {reason}{count} on {what}",
};
const fill = (table) => (key, values) => {
  assert.ok(key in table, `no template ${key}`);
  return table[key].replace(/\{(\w+)\}/g, (_, k) => String(values[k] ?? ""));
};
const NAMES = { "kube-controller-manager": "controller-manager", "kube-scheduler": "scheduler" };
const name = (who) => NAMES[who] || (who.startsWith("kubelet/") ? `kubelet ${who.slice(8)}` : who);

// The page's model, as far as the narrator reads it: view models by resource and key.
class State {
  constructor() {
    this.revision = 0;
    this.objects = {};
  }

  get(resource, key) {
    return this.objects[resource]?.get(key);
  }

  each(resource) {
    return this.objects[resource]?.values() || [];
  }

  apply(items) {
    for (const item of items) {
      if (item.rv <= this.revision) continue;
      this.revision = item.rv;
      const map = (this.objects[item.resource] ||= new Map());
      const key = item.ns ? `${item.ns}/${item.name}` : item.name;
      if (item.type === "DELETED") map.delete(key);
      else map.set(key, item.vm);
    }
  }
}

let rv = 100;
const pod = (name, vm = {}) => ({ owner: "pasta-6d4", ownerKind: "rs", node: "", phase: "Pending", status: "Pending",
  ready: false, restarts: 0, terminating: false, ...vm, name, ns: "default" });
const change = (type, resource, kind, name, actor, vm) => ({ rv: (rv += 1), type, resource, kind, ns: "default", name,
  actor, vm: type === "DELETED" ? null : vm });

function narrator(table = EN) {
  return new Narrator({ say: fill(table), name });
}

// Tell `batches` (each a list of changes) as the page does: narrate, then apply.
function tell(n, state, batches, options) {
  for (const items of batches) {
    n.changes(items, state, options);
    state.apply(items);
  }
  return n.lines(2);
}

// A Deployment "pasta" of 3 and its ReplicaSet, whose status counts `current` pods, with `pods`
// running pods of its own.
function withPastaReplicaSet(current, pods = current) {
  const state = new State();
  state.apply([
    change("ADDED", "deployments", "Deployment", "pasta", "kubectl", { name: "pasta", desired: 3 }),
    change("ADDED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
      { name: "pasta-6d4", owner: "pasta", desired: 3, current }),
  ]);
  for (let i = 1; i <= pods; i += 1) {
    state.apply([change("ADDED", "pods", "Pod", `pasta-6d4-r${i}`, "kube-controller-manager",
      pod(`pasta-6d4-r${i}`, { node: "node-1", phase: "Running", status: "Running", ready: true }))]);
  }
  return state;
}

test("a pod replaced: the issue's story, from the changes and their actors", () => {
  const state = withPastaReplicaSet(2);
  const [line] = tell(narrator(), state, [
    [change("ADDED", "pods", "Pod", "pasta-6d4-x7k", "kube-controller-manager", pod("pasta-6d4-x7k"))],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-x7k", "kube-scheduler", pod("pasta-6d4-x7k", { node: "node-2" }))],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-x7k", "kubelet/node-2",
      pod("pasta-6d4-x7k", { node: "node-2", phase: "Running", status: "Running", ready: true }))],
  ]);
  assert.equal(line.text(), "ReplicaSet pasta-6d4 had 2 of 3 → controller-manager created pasta-6d4-x7k"
    + " → scheduler bound it to node-2 → kubelet node-2 started it");
  assert.equal(line.root, "Deployment|default/pasta");
  assert.equal(line.replay, false);
});

test("siblings created and bound by one client merge into one step each", () => {
  const state = withPastaReplicaSet(0);
  const names = ["pasta-6d4-a", "pasta-6d4-b", "pasta-6d4-c"];
  const [line] = tell(narrator(), state, [
    names.map((p) => change("ADDED", "pods", "Pod", p, "kube-controller-manager", pod(p))),
    names.map((p, i) => change("MODIFIED", "pods", "Pod", p, "kube-scheduler", pod(p, { node: `node-${i + 1}` }))),
  ]);
  assert.equal(line.text(), "ReplicaSet pasta-6d4 had 0 of 3 → controller-manager created pasta-6d4-a, -b, -c"
    + " → scheduler bound pasta-6d4-a to node-1, -b to node-2, -c to node-3");
});

test("a delete: Terminating, then removed, told with who did it", () => {
  const state = withPastaReplicaSet(3, 2);
  state.apply([change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager",
    pod("pasta-6d4-a", { node: "node-1", phase: "Running", status: "Running", ready: true }))]);
  const running = state.get("pods", "default/pasta-6d4-a");
  const [line] = tell(narrator(), state, [
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kubectl", { ...running, terminating: true, status: "Terminating" })],
    [change("DELETED", "pods", "Pod", "pasta-6d4-a", "kubelet/node-1")],
  ]);
  assert.equal(line.text(), "kubectl deleted pasta-6d4-a → kubelet node-1 removed it");
  assert.equal(line.root, "Deployment|default/pasta"); // the deleted pod's owner, from its state before
});

test("a change at or below the revision held is never told (as the model skips it)", () => {
  const state = withPastaReplicaSet(0);
  const n = narrator();
  const item = change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager", pod("pasta-6d4-a"));
  tell(n, state, [[item]]);
  assert.equal(n.changes([item], state), 0);
  assert.equal(n.lines(1)[0].text(), "ReplicaSet pasta-6d4 had 0 of 3 → controller-manager created pasta-6d4-a");
});

test("later items of one batch see the earlier ones", () => {
  const state = withPastaReplicaSet(0);
  const n = narrator();
  const told = n.changes([
    change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager", pod("pasta-6d4-a")),
    change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kube-scheduler", pod("pasta-6d4-a", { node: "node-1" })),
  ], state);
  assert.equal(told, 2);
  assert.match(n.lines(1)[0].text(), /scheduler bound it to node-1$/);
});

test("heartbeats, endpoints, status-only updates and Normal events tell nothing", () => {
  const state = withPastaReplicaSet(0);
  const n = narrator();
  const told = n.changes([
    change("MODIFIED", "leases", "Lease", "node-1", "kubelet/node-1", null),
    change("MODIFIED", "endpoints", "Endpoints", "pasta", "kube-controller-manager", { addresses: [] }),
    change("MODIFIED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
      { name: "pasta-6d4", owner: "pasta", desired: 3, current: 1 }),
    change("ADDED", "events", "Event", "e1", "kube-scheduler", { type: "Normal", reason: "Scheduled", count: 1,
      object: { kind: "Pod", ns: "default", name: "pasta-6d4-a" }, source: "default-scheduler" }),
  ], state);
  assert.equal(told, 0);
  assert.deepEqual(n.lines(), []);
});

test("a Warning joins the story of the object it concerns, its count growing in place", () => {
  const state = withPastaReplicaSet(1, 0);
  const running = pod("pasta-6d4-a", { node: "node-1", phase: "Running", status: "Running", ready: true });
  state.apply([change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager", running)]);
  const warning = (count) => ({ type: "Warning", reason: "BackOff", count, source: "kubelet",
    object: { kind: "Pod", ns: "default", name: "pasta-6d4-a" } });
  const [line] = tell(narrator(), state, [
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kubelet/node-1",
      { ...running, restarts: 1, ready: false, status: "CrashLoopBackOff" })],
    [change("ADDED", "events", "Event", "e1", "kubelet/node-1", warning(1))],
    [change("MODIFIED", "events", "Event", "e1", "kubelet/node-1", warning(3))],
    [change("MODIFIED", "events", "Event", "e1", "kubelet/node-1", warning(3))], // the same count: nothing new
  ]);
  assert.equal(line.root, "Deployment|default/pasta");
  assert.equal(line.text(), "kubelet node-1 restarted pasta-6d4-a (restart 1) → it is CrashLoopBackOff"
    + " → ⚠ BackOff ×3 on it");
});

test("a long story keeps its cause and its newest steps; the middle is counted", () => {
  const state = new State();
  const n = narrator();
  tell(n, state, [[change("ADDED", "deployments", "Deployment", "pasta", "kubectl", { name: "pasta", desired: 3 })]]);
  for (let i = 1; i <= MAX_STEPS + 1; i += 1) { // the ReplicaSet (not the root) scaled again and again
    const type = i === 1 ? "ADDED" : "MODIFIED";
    tell(n, state, [[change(type, "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
      { name: "pasta-6d4", owner: "pasta", desired: i, current: 0 })]]);
  }
  const [line] = n.lines(1);
  assert.equal(line.steps, MAX_STEPS);
  const scaled = (from, to) => Array.from({ length: to - from + 1 }, (_, k) => from + k)
    .map((i) => `controller-manager scaled ReplicaSet pasta-6d4 to ${i}`);
  // The create and the first scale made room: the cause (the Deployment's create) stays first.
  assert.equal(line.text(), ["kubectl created Deployment pasta", "… 2 more …", ...scaled(3, MAX_STEPS + 1)].join(" → "));
  // Told shorter: the steps after the cause go first, oldest first, into one count.
  assert.equal(line.text(3), ["kubectl created Deployment pasta", "… 5 more …", ...scaled(6, MAX_STEPS + 1)].join(" → "));
  assert.equal(line.text(MAX_STEPS - 2), ["kubectl created Deployment pasta", `… ${MAX_STEPS} more …`,
    ...scaled(MAX_STEPS + 1, MAX_STEPS + 1)].join(" → "));
  // Only when the cause and the newest step are too long does the cause go too; never the newest.
  assert.equal(line.text(MAX_STEPS - 1), [`… ${MAX_STEPS + 1} more …`, ...scaled(MAX_STEPS + 1, MAX_STEPS + 1)].join(" → "));
  assert.equal(line.text(MAX_STEPS + 5), line.text(MAX_STEPS - 1));
});

test("a Deployment's own create, scale or delete is the cause of what follows it", () => {
  const state = withPastaReplicaSet(3, 0);
  const n = narrator();
  tell(n, state, [[change("MODIFIED", "deployments", "Deployment", "pasta", "kubectl", { name: "pasta", desired: 5 })],
    [change("MODIFIED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
      { name: "pasta-6d4", owner: "pasta", desired: 5, current: 3 })],
    [change("DELETED", "deployments", "Deployment", "pasta", "kubectl")],
    [change("DELETED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager")]]);
  const [line] = n.lines(1);
  assert.equal(line.text(), "kubectl scaled Deployment pasta to 5 → controller-manager scaled ReplicaSet pasta-6d4 to 5"
    + " → kubectl deleted Deployment pasta → controller-manager deleted ReplicaSet pasta-6d4");
  // Shorter: the earlier chapter goes before anything after the delete, untold: the line begins with its cause.
  assert.equal(line.text(2), "kubectl deleted Deployment pasta → controller-manager deleted ReplicaSet pasta-6d4");
  assert.equal(line.text(3), "… 3 more … → controller-manager deleted ReplicaSet pasta-6d4");
});

test("past MAX_STEPS the earlier chapter goes first; the delete, the cause, stays", () => {
  const state = withPastaReplicaSet(3, 0);
  const n = narrator();
  const rs = (desired) => change("MODIFIED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
    { name: "pasta-6d4", owner: "pasta", desired, current: 3 });
  tell(n, state, [[rs(4)], [rs(5)], [change("DELETED", "deployments", "Deployment", "pasta", "kubectl")]]);
  tell(n, state, Array.from({ length: MAX_STEPS }, (_, i) => [rs(10 + i)]));
  const [line] = n.lines(1);
  assert.equal(line.steps, MAX_STEPS);
  // The two scales before the delete went first (an earlier chapter: not told), then the oldest after it.
  const scaled = Array.from({ length: 11 }, (_, i) => `controller-manager scaled ReplicaSet pasta-6d4 to ${11 + i}`);
  assert.equal(line.text(), ["kubectl deleted Deployment pasta", "… 1 more …", ...scaled].join(" → "));
});

test("a short story told shorter: the count stands between the cause and the newest steps", () => {
  const state = withPastaReplicaSet(2);
  const [line] = tell(narrator(), state, [
    [change("ADDED", "pods", "Pod", "pasta-6d4-x7k", "kube-controller-manager", pod("pasta-6d4-x7k"))],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-x7k", "kube-scheduler", pod("pasta-6d4-x7k", { node: "node-2" }))],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-x7k", "kubelet/node-2",
      pod("pasta-6d4-x7k", { node: "node-2", phase: "Running", status: "Running", ready: true }))],
  ]);
  assert.equal(line.text(0), "ReplicaSet pasta-6d4 had 2 of 3 → controller-manager created pasta-6d4-x7k"
    + " → scheduler bound it to node-2 → kubelet node-2 started it");
  // After the gap the pod is named again: "it" would point at a step no longer shown.
  assert.equal(line.text(1), "ReplicaSet pasta-6d4 had 2 of 3 → … 1 more … → scheduler bound pasta-6d4-x7k to node-2"
    + " → kubelet node-2 started it");
  assert.equal(line.text(2), "ReplicaSet pasta-6d4 had 2 of 3 → … 2 more … → kubelet node-2 started pasta-6d4-x7k");
  assert.equal(line.text(3), "… 3 more … → kubelet node-2 started pasta-6d4-x7k");
});

// kubectl deletes the Deployment (background propagation): the garbage collector deletes its
// ReplicaSet, then the pods, each node's kubelet removes its own, the node's turns interleaved.
function deploymentDelete(n, state, pods) {
  const batches = [[change("DELETED", "deployments", "Deployment", "pasta", "kubectl")],
    [change("DELETED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager")]];
  batches.push(pods.map((p) => change("MODIFIED", "pods", "Pod", p, "kube-controller-manager",
    { ...state.get("pods", `default/${p}`), terminating: true, status: "Terminating" })));
  for (const [i, p] of pods.entries()) {
    batches.push([change("DELETED", "pods", "Pod", p, `kubelet/node-${(i % 3) + 1}`)]);
  }
  return tell(n, state, batches);
}

test("a Deployment deleted: one story from kubectl's delete to the last pod removed", () => {
  const state = withPastaReplicaSet(6, 6);
  const pods = Array.from({ length: 6 }, (_, i) => `pasta-6d4-r${i + 1}`);
  const n = narrator();
  const [line] = deploymentDelete(n, state, pods);
  assert.equal(line.root, "Deployment|default/pasta");
  const full = line.text();
  assert.ok(full.startsWith("kubectl deleted Deployment pasta → controller-manager deleted ReplicaSet pasta-6d4"
    + " → controller-manager deleted pasta-6d4-r1, -r2, -r3, 3 more → kubelet node-1 removed pasta-6d4-r1"), full);
  assert.ok(full.endsWith("kubelet node-3 removed pasta-6d4-r6"), full);
  assert.equal(line.steps, 9);
  // As the page tells it on a narrow line: the cause, the count, the newest steps.
  assert.equal(line.text(6), "kubectl deleted Deployment pasta → … 6 more … → kubelet node-2 removed pasta-6d4-r5"
    + " → kubelet node-3 removed pasta-6d4-r6");
  assert.equal(n.lines(2).length, 1, "the pods' steps join the Deployment's story, even after their ReplicaSet is gone");
});

test("the count between cause and newest steps is told in the page's language", () => {
  const KO = { ...EN, "n-skipped": "… {n}단계 생략 …", "n-deleted": "{actor}: {what} 삭제", "n-removed": "{actor}: {what} 제거" };
  const state = withPastaReplicaSet(6, 6);
  const pods = Array.from({ length: 6 }, (_, i) => `pasta-6d4-r${i + 1}`);
  const [line] = deploymentDelete(narrator(KO), state, pods);
  assert.equal(line.text(7), "kubectl: Deployment pasta 삭제 → … 7단계 생략 … → kubelet node-3: pasta-6d4-r6 제거");
});

test("a replay never continues a live story; each story carries how it was played", () => {
  const state = withPastaReplicaSet(0);
  const n = narrator();
  tell(n, state, [[change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager", pod("pasta-6d4-a"))]]);
  tell(n, state, [[change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kube-scheduler", pod("pasta-6d4-a", { node: "node-1" }))]],
    { replay: true, label: "replay" });
  const [line] = n.lines(1);
  assert.equal(line.text(), "scheduler bound pasta-6d4-a to node-1");
  assert.equal(line.replay, true);
  assert.equal(line.label, "replay");
  tell(n, state, [[change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kubelet/node-1",
    pod("pasta-6d4-a", { node: "node-1", phase: "Running", status: "Running" }))]], { label: "slow motion ×1/4" });
  assert.equal(n.lines(1)[0].text(), "kubelet node-1 started pasta-6d4-a");
  assert.equal(n.lines(1)[0].label, "slow motion ×1/4");
  n.clear();
  assert.deepEqual(n.lines(), []);
});

test("two stories: the newest first, each under its own root owner", () => {
  const state = withPastaReplicaSet(0);
  state.apply([change("ADDED", "cronjobs", "CronJob", "tick", "kubectl", { name: "tick" })]);
  const n = narrator();
  tell(n, state, [[change("ADDED", "jobs", "Job", "tick-1", "kube-controller-manager", { name: "tick-1", owner: "tick", outcome: "Running" })]]);
  tell(n, state, [[change("ADDED", "pods", "Pod", "pasta-6d4-a", "kube-controller-manager", pod("pasta-6d4-a"))]]);
  tell(n, state, [[change("MODIFIED", "jobs", "Job", "tick-1", "kube-controller-manager", { name: "tick-1", owner: "tick", outcome: "Complete" })]]);
  const lines = n.lines(2);
  assert.deepEqual(lines.map((line) => line.root), ["CronJob|default/tick", "Deployment|default/pasta"]);
  assert.equal(lines[0].text(), "controller-manager created Job tick-1 → Job tick-1 is Complete");
});

test("nodes: NotReady, Ready again, cordoned; a pod of a Job of a CronJob has the CronJob as root", () => {
  const state = new State();
  state.apply([change("ADDED", "nodes", "Node", "node-2", "kubelet/node-2", { name: "node-2", ready: true, unschedulable: false })]);
  const n = narrator();
  const [line] = tell(n, state, [
    [change("MODIFIED", "nodes", "Node", "node-2", "kube-controller-manager", { name: "node-2", ready: false, unschedulable: false })],
    [change("MODIFIED", "nodes", "Node", "node-2", "kubelet/node-2", { name: "node-2", ready: true, unschedulable: false })],
    [change("MODIFIED", "nodes", "Node", "node-2", "kubectl", { name: "node-2", ready: true, unschedulable: true })],
  ]);
  assert.equal(line.text(), "controller-manager marked Node node-2 NotReady → kubelet node-2 marked Node node-2 Ready"
    + " → kubectl cordoned Node node-2");
  const get = (resource, key) => (resource === "jobs" && key === "ns/tick-1" ? { owner: "tick" } : undefined);
  assert.equal(rootOf("Pod", "ns", "tick-1-x", { owner: "tick-1", ownerKind: "job" }, get), "CronJob|ns/tick");
  assert.equal(rootOf("Pod", "ns", "lone", { owner: "", ownerKind: "" }, get), "Pod|ns/lone");
});

test("every word comes from the templates it is given (Korean here) and the mode's names", () => {
  const KO = Object.fromEntries(Object.keys(EN).map((key) => [key, `«${key}» ${EN[key].match(/\{\w+\}/g)?.join(" ") ?? ""}`]));
  KO["n-it"] = "그 파드";
  const state = withPastaReplicaSet(2);
  const n = new Narrator({ say: fill(KO), name: (who) => `<${who}>`, kindWord: (kind) => `[${kind}]` });
  const [line] = tell(n, state, [
    [change("ADDED", "pods", "Pod", "x", "kube-controller-manager", pod("x"))],
    [change("MODIFIED", "pods", "Pod", "x", "kube-scheduler", pod("x", { node: "node-2" }))],
  ]);
  assert.equal(line.text(), "«n-had» [ReplicaSet] pasta-6d4 2 3 → «n-created» <kube-controller-manager> x"
    + " → «n-bound» <kube-scheduler> 그 파드 node-2");
});

test("nothing deployed: no pod, Deployment, ReplicaSet, Job or CronJob outside kube-system", () => {
  const objects = { pods: new Map(), deployments: new Map(), services: new Map([["default/kubernetes", { ns: "default" }]]) };
  assert.equal(nothingDeployed(objects), true);
  objects.pods.set("kube-system/dns", { ns: "kube-system" });
  assert.equal(nothingDeployed(objects), true);
  objects.deployments.set("default/pasta", { ns: "default" });
  assert.equal(nothingDeployed(objects), false);
});

test("“had” counts the ReplicaSet's pods not being deleted (its status lags), not its status", () => {
  const state = withPastaReplicaSet(3, 0); // the status still says 3
  for (const p of ["pasta-6d4-a", "pasta-6d4-b", "pasta-6d4-c"]) {
    state.apply([change("ADDED", "pods", "Pod", p, "kube-controller-manager", pod(p, { node: "node-1", phase: "Running" }))]);
  }
  state.apply([change("ADDED", "pods", "Pod", "other-x", "kube-controller-manager", pod("other-x", { owner: "other" }))]);
  const n = narrator();
  const [line] = tell(n, state, [
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kubectl", pod("pasta-6d4-a", { node: "node-1", phase: "Running", terminating: true }))],
    [change("ADDED", "pods", "Pod", "pasta-6d4-d", "kube-controller-manager", pod("pasta-6d4-d"))],
  ]);
  assert.equal(line.text(), "kubectl deleted pasta-6d4-a → ReplicaSet pasta-6d4 had 2 of 3 → controller-manager created pasta-6d4-d");
  const noList = { revision: state.revision, get: (r, k) => state.get(r, k) }; // without each(): the status
  n.clear();
  n.changes([change("ADDED", "pods", "Pod", "pasta-6d4-e", "kube-controller-manager", pod("pasta-6d4-e"))], noList);
  assert.match(n.lines(1)[0].text(), /^ReplicaSet pasta-6d4 had 3 of 3 → /);
});

test("a scale to hundreds stays one bounded step: three names, then how many more", () => {
  const state = withPastaReplicaSet(0);
  const n = narrator();
  const names = Array.from({ length: 300 }, (_, i) => `pasta-6d4-p${i}`);
  tell(n, state, [names.map((p) => change("ADDED", "pods", "Pod", p, "kube-controller-manager", pod(p)))]);
  assert.equal(n.lines(1)[0].text(), "ReplicaSet pasta-6d4 had 0 of 3 → controller-manager created pasta-6d4-p0, -p1, -p2, 297 more");
});

test("a person's pod delete is the cause: told shorter, the delete and the newest step stay, the old chapter goes first", () => {
  const state = new State();
  const n = narrator();
  // The Deployment's first chapter: created, its ReplicaSet, three pods created, bound, started.
  tell(n, state, [[change("ADDED", "deployments", "Deployment", "pasta", "kubectl", { name: "pasta", desired: 3 })],
    [change("ADDED", "replicasets", "ReplicaSet", "pasta-6d4", "kube-controller-manager",
      { name: "pasta-6d4", owner: "pasta", desired: 3, current: 0 })]]);
  const names = ["pasta-6d4-a", "pasta-6d4-b", "pasta-6d4-c"];
  tell(n, state, [names.map((p) => change("ADDED", "pods", "Pod", p, "kube-controller-manager", pod(p)))]);
  for (const [i, p] of names.entries()) {
    tell(n, state, [[change("MODIFIED", "pods", "Pod", p, "kube-scheduler", pod(p, { node: `node-${i + 1}` }))],
      [change("MODIFIED", "pods", "Pod", p, `kubelet/node-${i + 1}`,
        pod(p, { node: `node-${i + 1}`, phase: "Running", status: "Running", ready: true }))]]);
  }
  // kubectl deletes a pod: the ReplicaSet replaces it.
  const a = state.get("pods", "default/pasta-6d4-a");
  tell(n, state, [[change("MODIFIED", "pods", "Pod", "pasta-6d4-a", "kubectl", { ...a, terminating: true, status: "Terminating" })],
    [change("ADDED", "pods", "Pod", "pasta-6d4-z", "kube-controller-manager", pod("pasta-6d4-z"))],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-z", "kube-scheduler", pod("pasta-6d4-z", { node: "node-2" }))],
    [change("DELETED", "pods", "Pod", "pasta-6d4-a", "kubelet/node-1")],
    [change("MODIFIED", "pods", "Pod", "pasta-6d4-z", "kubelet/node-2",
      pod("pasta-6d4-z", { node: "node-2", phase: "Running", status: "Running", ready: true }))]]);
  const [line] = n.lines(1);
  const newest = "kubelet node-2 started pasta-6d4-z";
  assert.ok(line.text().includes("kubectl deleted pasta-6d4-a → ReplicaSet pasta-6d4 had 2 of 3"), line.text());
  const parts = line.text().split(" → ");
  const earlier = parts.slice(0, parts.indexOf("kubectl deleted pasta-6d4-a")).filter((part) => !part.startsWith("…")).length;
  assert.ok(earlier > 0, "the earlier chapter is kept (the tooltip tells it)");
  for (let hide = 0; hide < line.steps - 1; hide += 1) {
    const told = line.text(hide);
    assert.ok(told.includes("kubectl deleted pasta-6d4-a"), `hide ${hide}: ${told}`);
    assert.ok(told.endsWith(newest) || told.endsWith("kubelet node-2 started it"), `hide ${hide}: ${told}`);
    // Told shorter, the earlier chapter goes first, and then the line begins with its cause.
    if (hide >= earlier) assert.ok(told.startsWith("kubectl deleted pasta-6d4-a"), `hide ${hide}: ${told}`);
  }
});

test("a rollout: kubectl's change of the Deployment is the cause, its 40 steps are the elided middle", () => {
  const state = withPastaReplicaSet(3, 3);
  const n = narrator();
  tell(n, state, [[change("MODIFIED", "deployments", "Deployment", "pasta", "kubectl", { name: "pasta", desired: 3 })]]);
  tell(n, state, [[change("ADDED", "replicasets", "ReplicaSet", "pasta-7f9", "kube-controller-manager",
    { name: "pasta-7f9", owner: "pasta", desired: 1, current: 0 })]]);
  for (let i = 1; i <= 20; i += 1) {
    const p = `pasta-7f9-n${i}`;
    tell(n, state, [[change("ADDED", "pods", "Pod", p, "kube-controller-manager", pod(p, { owner: "pasta-7f9" }))],
      [change("MODIFIED", "pods", "Pod", p, "kube-scheduler", pod(p, { owner: "pasta-7f9", node: "node-1" }))]]);
  }
  const [line] = n.lines(1);
  const told = line.text();
  assert.ok(told.startsWith("kubectl changed Deployment pasta → … "), told);
  assert.ok(told.endsWith("scheduler bound it to node-1"), told);
  assert.ok(line.text(line.steps - 2).startsWith("kubectl changed Deployment pasta → … "), "the cause stays when told short");
});

test("a component's status write tells nothing; only a person's change is 'changed'", () => {
  const state = withPastaReplicaSet(3, 3);
  const n = narrator();
  tell(n, state, [[change("MODIFIED", "deployments", "Deployment", "pasta", "kube-controller-manager", { name: "pasta", desired: 3 })]]);
  assert.equal(n.lines(1).length, 0);
});

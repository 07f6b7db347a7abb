// "What just happened": every change the page receives (kind, name, type, the client that wrote
// it, its owner, its node, phase and readiness), and every Warning event, told as a short step,
// and related steps chained into one story per root owner (Deployment → ReplicaSet → Pod, CronJob
// → Job → Pod), e.g. "ReplicaSet pasta-6d4 had 2 of 3 → controller-manager created pasta-6d4-x7k
// → scheduler bound it to node-2 → kubelet node-2 started it".
//
// Guarantees:
// - Pure: no DOM, no timer, no words of its own. Every sentence is made by the `say(key, values)`
//   it is given (the page's translated templates), names by `name(actor)`, `kindWord(kind)` and
//   `statusWord(status)`: a story is kept as data and told again in the current mode on `lines()`.
// - Every step comes from a change as it arrived, compared with the object's state before it
//   (`state.get(resource, key)`, the page's model before the batch is applied; later items of the
//   same batch see the earlier ones). A change at or below `state.revision` is skipped, exactly as
//   the model skips it, so a change is never told twice.
// - Steps of the same client doing the same thing to siblings merge ("created a, b and c"); a
//   pod named by the step before is "it" (never after a gap: a pod named only in a step left out
//   is named again).
// - A story's cause is its newest step that created, scaled or deleted the root object itself
//   ("kubectl deleted Deployment pasta") or that a person's client (kubectl, the dashboard's
//   buttons, any client that is not one of the cluster's components) took ("kubectl deleted
//   pasta-6d4-x7k", "kubectl changed Deployment pasta": a rollout), else its first step. A story keeps its cause and its
//   newest steps, MAX_STEPS in all; the steps left out are counted where they were. Told shorter
//   (`text(hide)`, for a line too narrow), the steps before the cause go first, then those after
//   it, oldest first, each run becoming one "… N more …"; the cause goes only when it and the
//   newest step alone are too long; the newest step always stays.
// - A pod deleted after its ReplicaSet (or Job) is still told in its Deployment's (CronJob's)
//   story: the owners deleted lately are remembered (KEEP_GONE of them).
// - Lease heartbeats, Endpoints, status-only updates and Normal events tell nothing new: skipped;
//   an object a person's client changed with nothing else to tell is "changed".
export const MAX_STEPS = 12;
const MAX_STORIES = 30;
const MAX_NAMES = 3;
const KEEP_NAMES = 50;
const KEEP_GONE = 200; // deleted objects remembered for their owners' sake
const CHAPTERS = new Set(["created", "scaled", "deleting", "deleted"]); // on the root: a cause
const MERGING = new Set(["created", "bound", "started", "ready", "deleting", "removed"]);
const QUIET = new Set(["leases", "endpoints", "endpointslices", "events", "configmaps"]);
const OWNER_KINDS = { rs: "ReplicaSet", job: "Job", sts: "StatefulSet", ds: "DaemonSet", rc: "ReplicationController" };
const PLURALS = { Pod: "pods", ReplicaSet: "replicasets", Deployment: "deployments", Job: "jobs", CronJob: "cronjobs",
  Node: "nodes", Service: "services" };
// A pod's status worth a step of its own (Running, Pending and the like are told as started/bound).
const QUIET_STATUS = new Set(["Running", "Pending", "ContainerCreating", "Terminating", "PodInitializing"]);

// The cluster's own clients; every other client acts for a person, and what it does is a cause.
const COMPONENTS = new Set(["", "kube-controller-manager", "kube-scheduler", "kube-apiserver"]);
const COMPONENT_PREFIXES = ["kubelet/", "kube-proxy/", "system:"];

export function isPerson(actor) {
  const who = actor ?? "";
  return !COMPONENTS.has(who) && !COMPONENT_PREFIXES.some((prefix) => who.startsWith(prefix)) && !who.endsWith("-cook");
}

function objectKey(ns, name) {
  return ns ? `${ns}/${name}` : name;
}

// The root owner of an object, as "<Kind>|<ns>/<name>": a pod's ReplicaSet's Deployment, a pod's
// Job's CronJob, else the nearest owner known, else the object itself.
export function rootOf(kind, ns, name, vm, get) {
  if (kind === "Pod" && vm?.owner) {
    const ownerKind = OWNER_KINDS[vm.ownerKind] || vm.ownerKind;
    return rootOf(ownerKind, ns, vm.owner, get(PLURALS[ownerKind], objectKey(ns, vm.owner)), get);
  }
  if (kind === "ReplicaSet" && vm?.owner) return `Deployment|${objectKey(ns, vm.owner)}`;
  if (kind === "Job" && vm?.owner) return `CronJob|${objectKey(ns, vm.owner)}`;
  return `${kind}|${objectKey(ns, name)}`;
}

// Nothing deployed: no pod, Deployment, ReplicaSet, Job or CronJob outside kube-system.
export function nothingDeployed(objects) {
  for (const resource of ["pods", "deployments", "replicasets", "jobs", "cronjobs"]) {
    for (const vm of objects[resource]?.values() || []) if (!vm.ns?.startsWith("kube-")) return false;
  }
  return true;
}

// The steps one change tells: [{verb, actor, subject: {kind, ns, name}, ...values}].
export function stepsOf(item, before) {
  const { vm, kind, actor } = item;
  const subject = { kind, ns: item.ns, name: item.name };
  const step = (verb, values = {}) => ({ verb, actor, subjects: [{ ...subject, ...values }], ...values });
  if (item.resource === "events") {
    if (!vm || vm.type !== "Warning" || item.type === "DELETED") return [];
    if (before && before.count >= vm.count) return [];
    return [{ verb: "warning", actor: vm.source || actor, reason: vm.reason, count: vm.count,
      subjects: [{ kind: vm.object.kind, ns: vm.object.ns, name: vm.object.name }] }];
  }
  if (QUIET.has(item.resource)) return [];
  if (item.type === "ADDED") return [step("created", kind === "Pod" && vm?.node ? { node: vm.node } : {})];
  if (item.type === "DELETED") return [step(kind === "Pod" ? "removed" : "deleted")];
  if (item.type !== "MODIFIED" || !vm || !before) return [];
  const steps = [];
  if (kind === "Pod") {
    if (!before.node && vm.node) steps.push(step("bound", { node: vm.node }));
    if (!before.terminating && vm.terminating) steps.push(step("deleting"));
    if (before.phase !== "Running" && vm.phase === "Running") steps.push(step("started"));
    else if (!before.ready && vm.ready) steps.push(step("ready"));
    if (vm.restarts > (before.restarts || 0)) steps.push(step("restarted", { n: vm.restarts }));
    if (vm.status !== before.status && !QUIET_STATUS.has(vm.status)) steps.push(step("status", { status: vm.status }));
  } else if (kind === "Deployment" || kind === "ReplicaSet") {
    if (vm.desired !== before.desired) steps.push(step("scaled", { n: vm.desired }));
  } else if (kind === "Node") {
    if (before.ready !== vm.ready && vm.ready !== null) steps.push(step(vm.ready ? "node-ready" : "node-not-ready"));
    if (before.unschedulable !== vm.unschedulable) steps.push(step(vm.unschedulable ? "cordoned" : "uncordoned"));
  } else if (kind === "Job") {
    if (before.outcome !== vm.outcome && vm.outcome !== "Running") steps.push(step("job-outcome", { status: vm.outcome }));
  }
  if (!steps.length && isPerson(actor)) steps.push(step("changed")); // e.g. a new image: a rollout begins
  return steps;
}

// Where a story's cause is among its steps: the newest that created, scaled or deleted the root
// object itself, else the first.
function causeOf(steps) {
  for (let i = steps.length - 1; i > 0; i -= 1) if (steps[i].cause) return i;
  return 0;
}

function sameSubject(a, b) {
  return a.kind === b.kind && a.ns === b.ns && a.name === b.name;
}

export class Narrator {
  constructor({ say, name = (who) => who, kindWord = (kind) => kind, statusWord = (status) => status }) {
    Object.assign(this, { say, name, kindWord, statusWord });
    this.stories = new Map(); // root -> {root, steps, replay, label}; the newest last
    // resource|key -> the view model of an object deleted lately: a Deployment's pods deleted after
    // their ReplicaSet (background propagation) still find their root through it.
    this.gone = new Map();
  }

  // Forget every story (a snapshot, or the page went from a replay back to live or the reverse).
  clear() {
    this.stories.clear();
    this.gone.clear();
  }

  // Tell a batch of changes. `state` is {revision, get(resource, key)} and optionally
  // {each(resource)}: the page's model before the batch, and its view models. A `replay` (the
  // past) never continues a live story nor the reverse; `label` (kept as given, e.g. the stage
  // bar's "slow motion ×1/4"; null when live) says how the steps were played. Returns the steps told.
  changes(items, state, { replay = false, label = null } = {}) {
    const seen = new Map(); // resource|key -> the view model after an earlier item of this batch
    const get = (resource, key) => {
      const id = `${resource}|${key}`;
      return (seen.has(id) ? seen.get(id) : state.get(resource, key)) ?? this.gone.get(id);
    };
    // The pods of a ReplicaSet not being deleted, as the page knows them now: what its controller
    // counted (the ReplicaSet's own status is written after it acted, so it lags).
    const activePods = (ns, owner) => {
      if (!state.each) return null;
      const pods = new Map([...state.each("pods")].map((vm) => [objectKey(vm.ns, vm.name), vm]));
      for (const [key, vm] of seen) if (key.startsWith("pods|")) pods.set(key.slice(5), vm);
      return [...pods.values()].filter((vm) => vm && vm.ns === ns && vm.ownerKind === "rs" && vm.owner === owner
        && !vm.terminating).length;
    };
    let revision = state.revision;
    let told = 0;
    for (const item of items) {
      if (revision !== null && revision !== undefined && item.rv <= revision) continue;
      revision = item.rv;
      const key = objectKey(item.ns, item.name);
      const before = get(item.resource, key);
      for (const step of stepsOf(item, before)) {
        const about = step.subjects[0];
        const vm = item.resource === "events" ? get(PLURALS[about.kind], objectKey(about.ns, about.name)) : item.vm || before;
        this.add(rootOf(about.kind, about.ns, about.name, vm, get), step, vm, { get, activePods }, replay, label);
        told += 1;
      }
      const id = `${item.resource}|${key}`;
      seen.set(id, item.type === "DELETED" ? undefined : item.vm);
      this.gone.delete(id);
      if (item.type === "DELETED" && before) {
        this.gone.set(id, before);
        if (this.gone.size > KEEP_GONE) this.gone.delete(this.gone.keys().next().value);
      }
    }
    return told;
  }

  add(root, step, vm, { get, activePods }, replay, label) {
    let story = this.stories.get(root);
    if (!story || story.replay !== replay) {
      story = { root, steps: [], replay };
      this.stories.set(root, story);
    }
    this.stories.delete(root); // re-inserted: the Map's order is the order stories last moved
    this.stories.set(root, story);
    story.label = label;
    const last = story.steps[story.steps.length - 1];
    const subject = step.subjects[0];
    if (last && last.verb === step.verb && last.actor === step.actor && MERGING.has(step.verb)
        && last.subjects[0].kind === subject.kind) {
      // Past KEEP_NAMES (a scale to hundreds) the others are only counted: a bounded step.
      if (last.subjects.length >= KEEP_NAMES) last.others = (last.others || 0) + 1;
      else if (!last.subjects.some((s) => sameSubject(s, subject))) last.subjects.push(subject);
      return;
    }
    if (last && step.verb === "warning" && last.verb === "warning" && last.reason === step.reason
        && sameSubject(last.subjects[0], subject)) {
      story.steps[story.steps.length - 1] = { ...step, before: last.before }; // the same Warning again: its count grows
      return;
    }
    // A pod created by its ReplicaSet: first how many the ReplicaSet had, the reason it acted.
    const owner = step.verb === "created" && subject.kind === "Pod" && vm?.ownerKind === "rs"
      ? get("replicasets", objectKey(subject.ns, vm.owner)) : null;
    if (owner) {
      const current = activePods(subject.ns, owner.name) ?? owner.current;
      story.steps.push({ verb: "had", actor: "", current, desired: owner.desired,
        subjects: [{ kind: "ReplicaSet", ns: subject.ns, name: owner.name }] });
    }
    if ((CHAPTERS.has(step.verb) && `${subject.kind}|${objectKey(subject.ns, subject.name)}` === root)
        || (step.verb !== "warning" && step.verb !== "had" && isPerson(step.actor))) step.cause = true;
    story.steps.push(step);
    while (story.steps.length > MAX_STEPS) {
      // The oldest step that is neither the cause nor the newest goes; the next one counts it.
      const cause = causeOf(story.steps);
      const index = cause === 0 ? 1 : 0;
      const [gone] = story.steps.splice(index, 1);
      story.steps[index].before = (story.steps[index].before || 0) + (gone.before || 0) + 1;
    }
    while (this.stories.size > MAX_STORIES) this.stories.delete(this.stories.keys().next().value);
  }

  // The newest `count` stories, newest first: [{root, replay, label, steps, text(hide)}]; `text()`
  // tells every step kept, `text(k)` k fewer (see `tell`), for a line too narrow for them all.
  lines(count = 2) {
    return [...this.stories.values()].slice(-count).reverse().map((story) => ({
      root: story.root, replay: story.replay, label: story.label, steps: story.steps.length,
      text: (hide = 0) => this.tell(story, hide),
    }));
  }

  // The story with `hide` of its kept steps left out: first those before the cause, then those
  // after it (oldest first), then the cause; never the newest. Each run of steps left out (or
  // dropped before) is one "… N more …", except the earlier chapter before a cause that is told:
  // the line begins with its cause.
  tell(story, hide = 0) {
    const { steps } = story;
    const cause = causeOf(steps);
    const order = [...steps.keys()].filter((i) => i < cause);
    for (let i = cause + 1; i < steps.length - 1; i += 1) order.push(i);
    if (cause < steps.length - 1) order.push(cause);
    const hidden = new Set(order.slice(0, hide));
    const parts = [];
    let previous = null;
    let gap = 0;
    steps.forEach((step, index) => {
      gap += step.before || 0;
      if (hidden.has(index)) {
        gap += 1;
        return;
      }
      if (index === cause && !parts.length) gap = 0; // the earlier chapter is not this story's
      if (gap) {
        parts.push(this.say("n-skipped", { n: gap }));
        previous = null; // a step after a gap names its pod again, never "it"
        gap = 0;
      }
      parts.push(this.sentence(step, previous));
      previous = step;
    });
    return parts.join(" → ");
  }

  // One object as a sentence names it: a pod by its name (or "it" right after a step about it
  // alone), any other kind as "<Kind> <name>".
  what(subject, previous) {
    if (subject.kind === "Pod") {
      const alone = previous && previous.subjects.length === 1 && sameSubject(previous.subjects[0], subject);
      return alone ? this.say("n-it", {}) : subject.name;
    }
    return `${this.kindWord(subject.kind)} ${subject.name}`;
  }

  // A sibling after the first of a list, without the name part they share: "pasta-6d4-a,
  // -b, -c" (pods of one ReplicaSet differ only after their owner's name).
  sibling(subject, first) {
    const full = this.what(subject, null);
    if (subject.kind !== "Pod") return full;
    const cut = first.name.lastIndexOf("-");
    return cut > 0 && subject.name.startsWith(first.name.slice(0, cut + 1)) ? subject.name.slice(cut) : full;
  }

  sentence(step, previous) {
    const subjects = step.subjects;
    let what;
    if (subjects.length === 1) {
      what = this.what(subjects[0], previous);
    } else {
      const shown = subjects.slice(0, MAX_NAMES).map((s, index) => {
        const named = index ? this.sibling(s, subjects[0]) : this.what(s, null);
        return s.node && step.verb === "bound" ? this.say("n-on", { what: named, node: s.node }) : named;
      });
      const more = subjects.length - MAX_NAMES + (step.others || 0);
      if (more > 0) shown.push(this.say("n-more", { n: more }));
      what = shown.join(", ");
    }
    const node = subjects.length === 1 ? subjects[0].node : "";
    const verb = step.verb === "created" && node ? "created-on" : step.verb === "bound" && subjects.length > 1 ? "bound-many" : step.verb;
    return this.say(`n-${verb}`, {
      actor: step.actor ? this.name(step.actor) : "", what, node: node || "", n: step.n ?? "",
      current: step.current ?? "", desired: step.desired ?? "", reason: step.reason ?? "",
      count: step.count > 1 ? ` ×${step.count}` : "", status: step.status ? this.statusWord(step.status) : "",
    });
  }
}

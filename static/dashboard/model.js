// The page's copy of the cluster, kept exactly as an informer keeps its cache: a snapshot at
// revision N, then every change after N in order. It remembers which keys changed since the last
// frame, so renderers touch only those; a change at or below the revision it holds is ignored
// (never applied twice). Custom kinds ("<group>/<plural>") get their map the first time they appear.
// Each HorizontalPodAutoscaler keeps a short history of its status (for its chart): one sample per
// change of its object, never on a timer.
// The built-in kinds the snapshot holds come from the server (control/protocol.py, as the page's
// data-snapshot-kinds): the page keeps no list of its own.
// Events are bounded: at most KEEP_EVENTS (the newest) are kept. The newest Warning about each
// object is kept apart (`warnings`), and the object is marked changed so its chip or row shows it.
export const RESOURCES = JSON.parse(document.body.dataset.snapshotKinds || "[]");
const HPA_SAMPLES = 240;
const KEEP_EVENTS = 200;

export function warningKey(kind, ns, name) {
  return `${kind}|${ns ? `${ns}/` : ""}${name}`;
}

// One point of an HPA's chart, from its view model; equal neighbours are one point.
function addSample(history, vm) {
  const point = { cpu: vm.currentCPU, replicas: vm.current, desired: vm.desired };
  const last = history[history.length - 1];
  if (last && last.cpu === point.cpu && last.replicas === point.replicas && last.desired === point.desired) return;
  history.push(point);
}

export class Model {
  constructor() {
    this.revision = null;
    this.objects = {};
    this.dirty = {};
    this.spokes = {};
    this.spokesDirty = false;
    this.reset = false;
    this.hpaHistory = new Map(); // HPA key -> points from the snapshot on
    this.hpaOlder = new Map(); // HPA key -> points from the history before the snapshot
    this.warnings = new Map(); // warningKey of an object -> the newest Warning event about it
    for (const resource of RESOURCES) this.track(resource);
  }

  track(resource) {
    if (!this.objects[resource]) {
      this.objects[resource] = new Map();
      this.dirty[resource] = new Set();
    }
    return this.objects[resource];
  }

  // The custom kinds present: their store keys ("<group>/<plural>").
  customResources() {
    return Object.keys(this.objects).filter((resource) => resource.includes("/"));
  }

  loadSnapshot(message) {
    for (const resource of Object.keys(this.objects)) if (resource.includes("/")) delete this.objects[resource];
    for (const resource of [...RESOURCES, ...Object.keys(message.objects)]) {
      const map = this.track(resource);
      map.clear();
      for (const vm of message.objects[resource] || []) map.set(vm.key, vm);
      this.dirty[resource].clear();
    }
    // The points start again from this snapshot; the history that follows it gives the older ones.
    this.hpaOlder.clear();
    this.hpaHistory.clear();
    for (const vm of this.objects.horizontalpodautoscalers.values()) this.sample(vm);
    this.warnings.clear();
    for (const vm of this.objects.events.values()) this.warn(vm);
    this.revision = message.revision;
    this.reset = true;
  }

  sample(vm) {
    let history = this.hpaHistory.get(vm.key);
    if (!history) this.hpaHistory.set(vm.key, (history = []));
    addSample(history, vm);
    if (history.length > HPA_SAMPLES) history.splice(0, history.length - HPA_SAMPLES);
  }

  // Changes from before the snapshot (the version log's history, in order, maybe in several
  // batches): older points, drawn before the ones the snapshot and the changes after it gave.
  sampleHistory(items) {
    for (const item of items) {
      if (item.resource !== "horizontalpodautoscalers" || !item.vm) continue;
      const key = item.vm.key;
      if (!this.hpaOlder.has(key)) this.hpaOlder.set(key, []);
      addSample(this.hpaOlder.get(key), item.vm);
      this.dirty.horizontalpodautoscalers.add(key);
    }
  }

  // The points of an HPA's chart, oldest first.
  hpaSamples(key) {
    return [...(this.hpaOlder.get(key) || []), ...(this.hpaHistory.get(key) || [])].slice(-HPA_SAMPLES);
  }

  // Apply a batch of changes; returns the ones applied (for the log and the store's spoke).
  applyChanges(message) {
    const applied = [];
    for (const item of message.items) {
      if (this.revision !== null && item.rv <= this.revision) continue;
      this.revision = item.rv;
      applied.push(item);
      // The supervisor's ConfigMap is the spokes' desired states (its view model has `states`).
      if (item.vm && item.resource === "configmaps" && item.vm.states) {
        this.spokes = item.type === "DELETED" ? {} : item.vm.states;
        this.spokesDirty = true;
        continue;
      }
      if (!item.vm && item.type !== "DELETED") continue;
      const map = item.resource.includes("/") ? this.track(item.resource) : this.objects[item.resource];
      if (!map) continue;
      const key = item.ns ? `${item.ns}/${item.name}` : item.name;
      if (item.type === "DELETED") {
        if (item.resource === "events") this.unwarn(map.get(key));
        map.delete(key);
        if (item.resource === "horizontalpodautoscalers") {
          this.hpaHistory.delete(key);
          this.hpaOlder.delete(key);
        }
      } else {
        map.set(key, item.vm);
        if (item.resource === "horizontalpodautoscalers") this.sample(item.vm);
        if (item.resource === "events") this.warn(item.vm);
      }
      this.dirty[item.resource].add(key);
    }
    this.trimEvents();
    if (message.revision && (this.revision === null || message.revision > this.revision)) {
      this.revision = message.revision;
    }
    return applied;
  }

  // Remember a Warning as the newest about its object, and mark that object changed.
  warn(vm) {
    if (vm.type !== "Warning") return;
    const key = warningKey(vm.object.kind, vm.object.ns, vm.object.name);
    const held = this.warnings.get(key);
    if (held && held.rv > vm.rv) return;
    this.warnings.set(key, vm);
    // The drawn kinds' plurals are their kinds' names + "s" (Pod, Job, Deployment, ReplicaSet,
    // CronJob); any other kind is not marked, its Warning stays in the Events panel only.
    const resource = `${vm.object.kind.toLowerCase()}s`;
    if (this.dirty[resource]) {
      this.dirty[resource].add(vm.object.ns ? `${vm.object.ns}/${vm.object.name}` : vm.object.name);
    }
  }

  // An event gone (deleted, or trimmed): its object no longer shows it (the warnings stay bounded).
  unwarn(vm) {
    if (!vm || vm.type !== "Warning") return;
    const key = warningKey(vm.object.kind, vm.object.ns, vm.object.name);
    if (this.warnings.get(key)?.key !== vm.key) return;
    this.warnings.delete(key);
    const resource = `${vm.object.kind.toLowerCase()}s`;
    if (this.dirty[resource]) this.dirty[resource].add(vm.object.ns ? `${vm.object.ns}/${vm.object.name}` : vm.object.name);
  }

  // Keep only the newest KEEP_EVENTS events (a busy cluster makes thousands).
  trimEvents() {
    const events = this.objects.events;
    if (events.size <= KEEP_EVENTS) return;
    const oldest = [...events.values()].sort((a, b) => a.rv - b.rv).slice(0, events.size - KEEP_EVENTS);
    for (const vm of oldest) {
      events.delete(vm.key);
      this.dirty.events.add(vm.key);
      this.unwarn(vm);
    }
  }

  // A copy of everything the page draws from, to put back with `restore` (the timeline shows a
  // past state meanwhile). View models are never changed in place, so copying the maps suffices.
  save() {
    const copyPoints = (map) => new Map([...map].map(([key, points]) => [key, [...points]]));
    return {
      revision: this.revision,
      objects: Object.fromEntries(Object.entries(this.objects).map(([resource, map]) => [resource, new Map(map)])),
      spokes: { ...this.spokes },
      hpaHistory: copyPoints(this.hpaHistory),
      hpaOlder: copyPoints(this.hpaOlder),
      warnings: new Map(this.warnings),
    };
  }

  restore(saved) {
    this.objects = {};
    this.dirty = {};
    for (const [resource, map] of Object.entries(saved.objects)) {
      this.objects[resource] = new Map(map);
      this.dirty[resource] = new Set();
    }
    this.hpaHistory = saved.hpaHistory;
    this.hpaOlder = saved.hpaOlder;
    this.warnings = saved.warnings;
    this.revision = saved.revision;
    this.setSpokes(saved.spokes);
    this.reset = true;
  }

  setSpokes(states) {
    this.spokes = states || {};
    this.spokesDirty = true;
  }

  // Hand the changed keys of one resource to a renderer, and forget them.
  take(resource) {
    const keys = this.dirty[resource];
    this.dirty[resource] = new Set();
    return keys;
  }
}

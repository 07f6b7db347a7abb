// The page's copy of the cluster, kept exactly as an informer keeps its cache: a snapshot at
// revision N, then every change after N in order. It remembers which keys changed since the last
// frame, so renderers touch only those; a change at or below the revision it holds is ignored
// (never applied twice). Custom kinds ("<group>/<plural>") get their map the first time they appear.
// Each HorizontalPodAutoscaler keeps a short history of its status (for its chart): one sample per
// change of its object, never on a timer.
// The built-in kinds the snapshot holds come from the server (control/protocol.py, as the page's
// data-snapshot-kinds): the page keeps no list of its own.
export const RESOURCES = JSON.parse(document.body.dataset.snapshotKinds || "[]");
const HPA_SAMPLES = 240;

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
      if (item.vm && item.resource === "configmaps") {
        this.spokes = item.type === "DELETED" ? {} : item.vm.states;
        this.spokesDirty = true;
        continue;
      }
      if (!item.vm && item.type !== "DELETED") continue;
      const map = item.resource.includes("/") ? this.track(item.resource) : this.objects[item.resource];
      if (!map) continue;
      const key = item.ns ? `${item.ns}/${item.name}` : item.name;
      if (item.type === "DELETED") {
        map.delete(key);
        if (item.resource === "horizontalpodautoscalers") {
          this.hpaHistory.delete(key);
          this.hpaOlder.delete(key);
        }
      } else {
        map.set(key, item.vm);
        if (item.resource === "horizontalpodautoscalers") this.sample(item.vm);
      }
      this.dirty[item.resource].add(key);
    }
    if (message.revision && (this.revision === null || message.revision > this.revision)) {
      this.revision = message.revision;
    }
    return applied;
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

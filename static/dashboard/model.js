// The page's copy of the cluster, kept exactly as an informer keeps its cache: a snapshot at
// revision N, then every change after N in order. It remembers which keys changed since the last
// frame, so renderers touch only those; a change at or below the revision it holds is ignored
// (never applied twice).
export const RESOURCES = ["pods", "nodes", "deployments", "replicasets", "services", "endpoints"];

export class Model {
  constructor() {
    this.revision = null;
    this.objects = {};
    this.dirty = {};
    this.spokes = {};
    this.spokesDirty = false;
    this.reset = false;
    for (const resource of RESOURCES) {
      this.objects[resource] = new Map();
      this.dirty[resource] = new Set();
    }
  }

  loadSnapshot(message) {
    for (const resource of RESOURCES) {
      const map = new Map();
      for (const vm of message.objects[resource] || []) map.set(vm.key, vm);
      this.objects[resource] = map;
      this.dirty[resource].clear();
    }
    this.revision = message.revision;
    this.reset = true;
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
      const map = this.objects[item.resource];
      if (!map) continue;
      const key = item.ns ? `${item.ns}/${item.name}` : item.name;
      if (item.type === "DELETED") map.delete(key);
      else map.set(key, item.vm);
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

// The DaemonSets, StatefulSets and budgets panel, compact:
// - each DaemonSet with desired/current/ready and one slot per node (filled when its pod there is
//   ready, outlined while it starts, empty when the node has none), in the nodes' order;
// - each StatefulSet with ready/replicas and its ordinals in order (0, 1, 2…), each pod with its
//   claims as small disks under it. A claim is drawn from the claims the page holds, not from the
//   pods, so when a pod goes its disk stays (the ordinal shows an empty slot over a kept disk);
//   a disk is green when Bound (its PV's name in the title), amber while Pending;
// - the claims no StatefulSet owns, each with its volume (claim → PV, or Pending);
// - each PodDisruptionBudget: minAvailable or maxUnavailable, disruptions allowed (red at 0: an
//   eviction would be refused), current/desired healthy.
// It redraws itself whole when one of its kinds changed, or a pod of a DaemonSet or StatefulSet,
// or a node while a DaemonSet is shown; it peeks at the pods' and nodes' changes without taking
// them (the node panels take them), so it must render before them.
import { term, ui } from "./words.js";
import { h } from "./dom.js";

const MAX_ORDINALS = 24;
const OWN_KINDS = ["daemonsets", "statefulsets", "persistentvolumeclaims", "persistentvolumes", "poddisruptionbudgets"];

function slotState(pod) {
  if (!pod) return "todo";
  if (pod.terminating) return "leaving";
  return pod.ready ? "done" : "active";
}

// The ordinal of a StatefulSet's pod or claim name ("web-2" of set "web" → 2), or null.
export function ordinalOf(name, prefix) {
  if (!name.startsWith(`${prefix}-`)) return null;
  const rest = name.slice(prefix.length + 1);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : null;
}

// The ordinals a StatefulSet shows: 0..replicas-1, and any higher one that still has a pod or a claim.
export function ordinals(vm, podNames, claimNames) {
  let top = vm.replicas - 1;
  for (const name of podNames) top = Math.max(top, ordinalOf(name, vm.name) ?? -1);
  for (const template of vm.claims) {
    for (const name of claimNames) top = Math.max(top, ordinalOf(name, `${template}-${vm.name}`) ?? -1);
  }
  return [...Array(Math.min(top + 1, MAX_ORDINALS)).keys()];
}

export class SetsPanel {
  constructor(model) {
    this.model = model;
    this.root = document.getElementById("sets");
    this.list = document.getElementById("sets-list");
    this.drawnPods = new Set();
  }

  renderAll() {
    for (const kind of OWN_KINDS) this.model.take(kind);
    this.draw();
  }

  render() {
    let changed = false;
    for (const kind of OWN_KINDS) if (this.model.take(kind).size) changed = true;
    if (!changed) changed = this.podsChanged() || (this.model.objects.daemonsets.size > 0 && this.model.dirty.nodes.size > 0);
    if (changed) this.draw();
  }

  podsChanged() {
    for (const key of this.model.dirty.pods) {
      const vm = this.model.objects.pods.get(key);
      if (this.drawnPods.has(key) || (vm && (vm.ownerKind === "ds" || vm.ownerKind === "sts"))) return true;
    }
    return false;
  }

  draw() {
    const { objects } = this.model;
    this.drawnPods.clear();
    const podsOf = new Map(); // "ds|ns/name" or "sts|ns/name" -> pods
    for (const pod of objects.pods.values()) {
      if (pod.ownerKind !== "ds" && pod.ownerKind !== "sts") continue;
      const key = `${pod.ownerKind}|${pod.ns}/${pod.owner}`;
      if (!podsOf.has(key)) podsOf.set(key, []);
      podsOf.get(key).push(pod);
    }
    const rows = [];
    for (const vm of objects.daemonsets.values()) rows.push(this.daemonset(vm, podsOf.get(`ds|${vm.key}`) || []));
    const owned = new Set();
    for (const vm of objects.statefulsets.values()) rows.push(this.statefulset(vm, podsOf.get(`sts|${vm.key}`) || [], owned));
    const loose = [...objects.persistentvolumeclaims.values()].filter((claim) => !owned.has(claim.key));
    for (const claim of loose) rows.push(this.claimRow(claim));
    for (const vm of objects.poddisruptionbudgets.values()) rows.push(this.budget(vm));
    if (!rows.length) rows.push(h("li", "none", ui("no-sets")));
    this.list.replaceChildren(...rows);
    this.root.classList.toggle("none", rows.length === 1 && rows[0].classList.contains("none"));
  }

  head(kind, vm, counts) {
    const name = h("span", "job-name", vm.name);
    name.title = `${term(kind)} ${vm.ns}/${vm.name}`;
    const tag = h("span", "set-kind", term(kind));
    return [tag, name, h("span", "completions", counts)];
  }

  daemonset(vm, pods) {
    const row = h("li", "set daemonset");
    row.dataset.ns = vm.ns;
    row.dataset.key = vm.key;
    const byNode = new Map(pods.map((pod) => [pod.node, pod]));
    const marks = h("span", "slots");
    for (const node of this.model.objects.nodes.values()) {
      const pod = byNode.get(node.name);
      if (pod) this.drawnPods.add(pod.key);
      const slot = h("i", `slot ${slotState(pod)}`);
      slot.title = `${node.name}: ${pod ? `${pod.name} (${pod.status})` : ui("no-pod-here")}`;
      slot.dataset.node = node.name;
      marks.append(slot);
    }
    row.append(...this.head("daemonset", vm, `${term("ready")} ${vm.ready}/${vm.desired}`), marks,
      h("span", "duration", `${term("current")} ${vm.current}`));
    return row;
  }

  statefulset(vm, pods, owned) {
    const row = h("li", "set statefulset");
    row.dataset.ns = vm.ns;
    row.dataset.key = vm.key;
    const podByName = new Map(pods.map((pod) => [pod.name, pod]));
    const claims = this.model.objects.persistentvolumeclaims;
    const claimNames = [...claims.values()].filter((c) => c.ns === vm.ns).map((c) => c.name);
    const strip = h("span", "ordinals");
    for (const ordinal of ordinals(vm, podByName.keys(), claimNames)) {
      const pod = podByName.get(`${vm.name}-${ordinal}`);
      if (pod) this.drawnPods.add(pod.key);
      const cell = h("span", "ordinal");
      cell.dataset.ordinal = String(ordinal);
      const slot = h("i", `slot ${slotState(pod)}`, String(ordinal));
      slot.title = pod ? `${pod.name} (${pod.status}${pod.node ? ` · ${pod.node}` : ""})` : `${vm.name}-${ordinal}: ${ui("no-pod")}`;
      cell.append(slot);
      for (const template of vm.claims) {
        const claim = claims.get(`${vm.ns}/${template}-${vm.name}-${ordinal}`);
        if (!claim) continue;
        owned.add(claim.key);
        cell.append(this.disk(claim));
      }
      strip.append(cell);
    }
    row.append(...this.head("statefulset", vm, `${term("ready")} ${vm.ready}/${vm.replicas}`), strip);
    return row;
  }

  disk(claim) {
    const disk = h("i", `disk ${claim.phase.toLowerCase()}`);
    disk.dataset.claim = claim.name;
    disk.title = `${term("pvc")} ${claim.name}: ${claim.phase}${claim.volume ? ` → ${claim.volume}` : ""} ${claim.capacity}`;
    return disk;
  }

  claimRow(claim) {
    const row = h("li", "set claim");
    row.dataset.ns = claim.ns;
    row.dataset.key = claim.key;
    const volume = claim.volume ? this.model.objects.persistentvolumes.get(claim.volume) : null;
    row.append(h("span", "set-kind", term("pvc")), this.disk(claim), h("span", "job-name", claim.name),
      h("span", `outcome ${claim.phase === "Bound" ? "complete" : "suspended"}`, claim.phase),
      h("span", "duration", claim.volume ? `→ ${term("pv")} ${claim.volume}${volume ? ` (${volume.capacity})` : ""}` : claim.capacity));
    return row;
  }

  budget(vm) {
    const row = h("li", "set budget");
    row.dataset.ns = vm.ns;
    row.dataset.key = vm.key;
    const bound = vm.minAvailable !== "N/A" ? `minAvailable ${vm.minAvailable}` : `maxUnavailable ${vm.maxUnavailable}`;
    const allowed = h("span", `outcome ${vm.allowed > 0 ? "complete" : "failed"}`, `${ui("disruptions-allowed")} ${vm.allowed}`);
    allowed.title = vm.selector;
    row.append(...this.head("pdb", vm, `${ui("healthy")} ${vm.currentHealthy}/${vm.desiredHealthy}`),
      h("code", "schedule", bound), allowed);
    return row;
  }
}

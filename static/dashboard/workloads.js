// The workloads table: each Deployment with its ReplicaSets under it (old and new told apart by
// revision and colour), each ReplicaSet without a Deployment on its own, and each
// ReplicationController drawn like a ReplicaSet with the −/+ of a Deployment (kubectl scale rc), as
// nothing above it scales it. One row per object, found by key; a frame redraws only the rows whose
// object changed. Every row carries data-ns (the namespace filter hides the others); the swatch of a
// ReplicaSet's or ReplicationController's row has the colour of its pods' owner tags.
import { button, h, nsTag } from "./dom.js";
import { ownerColour } from "./namespaces.js";
import { term, ui } from "./words.js";

// The namespace tag, then the name, with a line-break opportunity between them: the tag and the
// name are one unbreakable run otherwise, which the narrow name column splits inside the name.
function tagged(vm) {
  const tag = nsTag(vm.ns);
  return tag ? [tag, h("wbr"), vm.name] : [vm.name];
}

export class WorkloadRows {
  constructor(model, tbody) {
    this.model = model;
    this.workloadRows = tbody;
    this.deployments = new Map();
    this.replicasets = new Map();
    this.rcs = new Map();
  }

  clear() {
    for (const map of [this.deployments, this.replicasets, this.rcs]) map.clear();
  }

  // Every row again (the caller has emptied the table and taken the model's changes).
  renderAll() {
    const { objects } = this.model;
    for (const key of objects.deployments.keys()) this.deployment(key);
    for (const key of objects.replicasets.keys()) this.replicaset(key);
    for (const key of objects.replicationcontrollers.keys()) this.replicationcontroller(key);
  }

  render() {
    for (const key of this.model.take("deployments")) this.deployment(key);
    for (const key of this.model.take("replicasets")) this.replicaset(key);
    for (const key of this.model.take("replicationcontrollers")) this.replicationcontroller(key);
  }

  deployment(key) {
    const vm = this.model.objects.deployments.get(key);
    let row = this.deployments.get(key);
    if (!vm) {
      if (row) row.remove();
      this.deployments.delete(key);
      return;
    }
    if (!row) {
      row = h("tr", "deployment");
      row.dataset.key = key;
      this.deployments.set(key, row);
      this.workloadRows.append(row);
      for (const rs of this.replicasets.values()) if (rs.dataset.owner === key) row.after(rs);
    }
    // The −/+ buttons follow the name in its cell (on the next line when the name is long), so
    // at any width the row fits its panel and the buttons stay whole.
    const name = h("th", "");
    const buttons = h("span", "buttons");
    buttons.append(
      button("scale", "−", { namespace: vm.ns, name: vm.name, delta: "-1" }),
      button("scale", "+", { namespace: vm.ns, name: vm.name, delta: "1" }),
    );
    buttons.firstChild.title = term("scale-down");
    buttons.lastChild.title = term("scale-up");
    buttons.append(button("stale-write", "409", { namespace: vm.ns, name: vm.name }, "stale-write"));
    buttons.lastChild.title = ui("stale-write");
    row.dataset.ns = vm.ns;
    name.append(h("span", "kind", term("deployment")), ...tagged(vm), buttons);
    row.replaceChildren(name, h("td", "num", String(vm.desired)), h("td", "num", String(vm.current)),
      h("td", `num ${vm.ready < vm.desired ? "short" : ""}`, String(vm.ready)));
  }

  replicaset(key) {
    const vm = this.model.objects.replicasets.get(key);
    let row = this.replicasets.get(key);
    if (!vm) {
      if (row) row.remove();
      this.replicasets.delete(key);
      return;
    }
    const owner = vm.owner ? `${vm.ns}/${vm.owner}` : "";
    if (!row) {
      row = h("tr", "replicaset");
      row.dataset.key = key;
      row.dataset.owner = owner;
      this.replicasets.set(key, row);
      const parent = this.deployments.get(owner);
      if (parent) parent.after(row);
      else this.workloadRows.append(row);
    }
    row.classList.toggle("idle", vm.desired === 0 && vm.current === 0);
    const label = h("th", "");
    row.dataset.ns = vm.ns;
    // The same colour as its pods' owner tags.
    const swatch = h("i", "owner-swatch");
    swatch.style.setProperty("--owner", ownerColour(vm.ns, vm.name));
    label.append(swatch, h("span", "kind", `${term("replicaset")}${vm.revision ? ` #${vm.revision}` : ""}`), vm.name);
    row.replaceChildren(label, h("td", "num", String(vm.desired)), h("td", "num", String(vm.current)),
      h("td", `num ${vm.ready < vm.desired ? "short" : ""}`, String(vm.ready)));
  }

  // A ReplicationController: a ReplicaSet's row with a Deployment's −/+ (kubectl scale rc).
  replicationcontroller(key) {
    const vm = this.model.objects.replicationcontrollers.get(key);
    let row = this.rcs.get(key);
    if (!vm) {
      if (row) row.remove();
      this.rcs.delete(key);
      return;
    }
    if (!row) {
      row = h("tr", "replicationcontroller");
      row.dataset.key = key;
      this.rcs.set(key, row);
      this.workloadRows.append(row);
    }
    row.classList.toggle("idle", vm.desired === 0 && vm.current === 0);
    row.dataset.ns = vm.ns;
    const swatch = h("i", "owner-swatch");
    swatch.style.setProperty("--owner", ownerColour(vm.ns, vm.name));
    const data = { namespace: vm.ns, name: vm.name, kind: "replicationcontrollers" };
    const buttons = h("span", "buttons");
    buttons.append(button("scale", "−", { ...data, delta: "-1" }), button("scale", "+", { ...data, delta: "1" }));
    buttons.firstChild.title = term("scale-down");
    buttons.lastChild.title = term("scale-up");
    const label = h("th", "");
    label.append(swatch, h("span", "kind", term("replicationcontroller")), ...tagged(vm), buttons);
    row.replaceChildren(label, h("td", "num", String(vm.desired)), h("td", "num", String(vm.current)),
      h("td", `num ${vm.ready < vm.desired ? "short" : ""}`, String(vm.ready)));
  }
}

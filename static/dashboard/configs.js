// The ConfigMaps and Secrets panel: each with its key names (a Secret's values never reach the
// page: the server sends its key names only, see dashboard/configs.py) and the pods that use it —
// through a volume, a projected volume, an env valueFrom, envFrom or imagePullSecrets (each pod's
// view model lists what it uses). Rows carry data-ns for the namespace filter. Redrawn when a
// ConfigMap or Secret changes, and when which pods use them changes (looked at at most twice a
// second: 1,000 pods are not walked every frame). At most SHOWN_USERS pods are named per object.
import { term, ui } from "./words.js";
import { forgetRows, h, keyedRows } from "./dom.js";

const SHOWN_USERS = 6;
const SHOWN_OBJECTS = 80;
const USERS_EVERY_MS = 500;

// "ConfigMap|ns/name" -> [{pod, via: [...]}], from the pods' view models.
export function usersOf(pods) {
  const users = new Map();
  for (const vm of pods.values()) {
    for (const use of vm.uses || []) {
      const key = `${use.kind}|${vm.ns}/${use.name}`;
      if (!users.has(key)) users.set(key, new Map());
      const byPod = users.get(key);
      if (!byPod.has(vm.key)) byPod.set(vm.key, { pod: vm.name, key: vm.key, via: [] });
      byPod.get(vm.key).via.push(use.via);
    }
  }
  return new Map([...users].map(([key, byPod]) => [key, [...byPod.values()]]));
}

function userSignature(list) {
  return list.map((u) => `${u.key}=${u.via.join("+")}`).join(",");
}

function signature(users) {
  return [...users].map(([key, list]) => `${key}:${userSignature(list)}`)
    .sort().join(";");
}

export class ConfigsPanel {
  constructor(model, list) {
    this.model = model;
    this.list = list;
    this.users = new Map();
    this.signature = "";
    this.lookedAt = 0;
  }

  renderAll() {
    this.lookedAt = 0;
    forgetRows(this.list); // a new snapshot, or another language: every row made again
    this.model.take("configmaps");
    this.model.take("secrets");
    this.refreshUsers();
    this.draw();
  }

  render() {
    const changed = this.model.take("configmaps").size + this.model.take("secrets").size > 0;
    const now = performance.now();
    let usersChanged = false;
    if (now - this.lookedAt >= USERS_EVERY_MS) usersChanged = this.refreshUsers();
    if (changed || usersChanged) this.draw();
  }

  refreshUsers() {
    this.lookedAt = performance.now();
    const users = usersOf(this.model.objects.pods);
    const next = signature(users);
    const changed = next !== this.signature;
    this.users = users;
    this.signature = next;
    return changed;
  }

  objects() {
    const rows = [];
    for (const vm of this.model.objects.configmaps.values()) if (!vm.states) rows.push(["ConfigMap", vm]);
    for (const vm of this.model.objects.secrets.values()) rows.push(["Secret", vm]);
    return rows.sort((a, b) => a[1].key.localeCompare(b[1].key) || a[0].localeCompare(b[0]));
  }

  draw() {
    const rows = this.objects();
    // a row is made again when its object changed or the pods that use it did
    const items = rows.slice(0, SHOWN_OBJECTS).map(([kind, vm]) => {
      const key = `${kind}|${vm.key}`;
      const users = this.users.get(key);
      return { key, sig: [vm, users && userSignature(users)], make: () => this.row(kind, vm) };
    });
    if (rows.length > SHOWN_OBJECTS) {
      items.push({ key: "+more", sig: rows.length, make: () => h("li", "none", `+${rows.length - SHOWN_OBJECTS}`) });
    }
    if (!rows.length) items.push({ key: "none", sig: "none", make: () => h("li", "none", ui("no-configs")) });
    keyedRows(this.list, items);
  }

  row(kind, vm) {
    const item = h("li", `config ${kind === "Secret" ? "secret" : "configmap"}`);
    item.dataset.ns = vm.ns;
    item.dataset.key = `${kind}|${vm.key}`;
    const head = h("p", "config-head");
    head.append(h("span", "kind", kind === "Secret" ? term("secret") : term("configmap")));
    if (vm.ns !== "default") head.append(h("span", "ns-tag", vm.ns));
    head.append(h("b", "mono", vm.name));
    if (kind === "Secret" && vm.type !== "Opaque") head.append(h("span", "config-type", vm.type));
    if (vm.immutable) head.append(h("span", "config-type", "immutable"));
    const keys = h("p", "config-keys");
    const names = [...vm.keys, ...(vm.binaryKeys || [])];
    for (const name of names) keys.append(h("code", "config-key", name));
    if (kind === "Secret" && names.length) keys.append(h("span", "hidden-values", ui("values-hidden")));
    if (!names.length) keys.append(h("span", "none", ui("no-keys")));
    const users = this.users.get(`${kind}|${vm.key}`) || [];
    const used = h("p", "config-users");
    used.append(h("span", "label", `${ui("used-by")} `));
    for (const user of users.slice(0, SHOWN_USERS)) {
      const chip = h("span", "config-user mono", user.pod);
      chip.dataset.podKey = user.key;
      chip.title = user.via.join(", ");
      chip.append(h("small", "", ` ${user.via.join("+")}`));
      used.append(chip);
    }
    if (users.length > SHOWN_USERS) used.append(h("span", "more", `+${users.length - SHOWN_USERS}`));
    if (!users.length) used.append(h("span", "none", ui("no-users")));
    item.append(head, keys, used);
    return item;
  }
}

// The live panels: nodes with their pods, the workloads table (workloads.js), Services with their
// endpoints. Each object has one element, found by key; a frame updates only the objects that
// changed since the last frame (a full redraw happens only after a snapshot or a change of labels).
// Buttons carry data-action and are sent with htmx by app.js. Each node card has a switch that
// shows its kube-proxy's table (ProxyRules fills it); each pod chip shows how many Service requests
// it answered (the counts live in `answered`, kept by the traffic view), and the reason of the
// newest Warning event about it (the Events panel lists them all), its owner (kind and name, in
// the owner's own colour, the same on the owner's row: old and new ReplicaSets' pods told apart
// during a rollout) and its image. Node cards stand in natural order of their names (node-2 before
// node-10). Every namespaced element carries data-ns (the namespace
// filter hides the others) and names its namespace when it is not "default".
import { button, h, nsTag } from "./dom.js";
import { may } from "./may.js";
import { ownerColour } from "./namespaces.js";
import { warningKey } from "./model.js";
import { statusWord, term, ui } from "./words.js";
import { WorkloadRows } from "./workloads.js";

const DENSE_AT = 48;
const NATURAL = new Intl.Collator("en", { numeric: true });

// Node names in natural order: node-2 before node-10.
export function byNodeName(a, b) {
  return NATURAL.compare(a, b);
}

function shortName(vm) {
  if (vm.owner && vm.name.startsWith(`${vm.owner}-`)) return vm.name.slice(vm.owner.length + 1);
  return vm.name;
}

// STATUS words (kubectl's, computed by the hub's table converter) that mean a container is stuck
// or broken: the chip is red whatever the phase; so is any "Init:<reason>" but "Init:N/M".
const BROKEN = new Set(["CrashLoopBackOff", "Error", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
  "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "OOMKilled", "ContainerCannotRun"]);

export function brokenStatus(status) {
  return BROKEN.has(status) || (status.startsWith("Init:") && !/^Init:\d+\/\d+$/.test(status));
}

function podClass(vm) {
  let phase = vm.phase.toLowerCase();
  if (brokenStatus(vm.status)) phase = "failed";
  if (vm.phase === "Running" && vm.ready) phase = "ready";
  return `pod phase-${phase}${vm.terminating ? " terminating" : ""}`;
}

// How many Service requests a pod answered: a number and a short bar (its share of its Service's).
export function answeredBadge({ count, share }) {
  const badge = h("span", "answered", `⇢${count}`);
  const bar = h("i", "share");
  bar.style.width = `${Math.max(0.15, share * 3).toFixed(2)}rem`;
  badge.append(bar);
  return badge;
}

// Opens a shell in the pod (shell.js): its first container, as kubectl exec does without -c.
function shellButton(vm) {
  const node = h("button", "act pod-shell", ">_");
  node.type = "button";
  node.title = ui("shell");
  node.setAttribute("aria-label", `${ui("shell")}: ${vm.name}`);
  Object.assign(node.dataset, { shellNamespace: vm.ns, shellName: vm.name,
    shellContainer: (vm.containers || [])[0] || "" });
  return node;
}

function podStatus(vm) {
  if (vm.status === "Running" && vm.ready) return "Ready";
  return vm.status;
}

export class Panels {
  constructor(model, answered = new Map()) {
    this.model = model;
    this.answered = answered;
    this.nodeList = document.getElementById("node-list");
    this.workloadRows = document.getElementById("workload-rows");
    this.serviceList = document.getElementById("service-list");
    this.controlPlane = document.getElementById("control-plane");
    this.cards = new Map();
    this.pods = new Map();
    this.workloads = new WorkloadRows(model, this.workloadRows);
    this.services = new Map();
  }

  clear() {
    this.nodeList.replaceChildren();
    this.workloadRows.replaceChildren();
    this.serviceList.replaceChildren();
    this.workloads.clear();
    for (const map of [this.cards, this.pods, this.services]) map.clear();
  }

  // Everything again (after a snapshot or when the labels change).
  renderAll() {
    this.clear();
    const objects = this.model.objects;
    for (const resource of Object.keys(objects)) this.model.take(resource);
    for (const key of objects.nodes.keys()) this.node(key);
    for (const key of objects.pods.keys()) this.pod(key);
    this.workloads.renderAll();
    for (const key of objects.services.keys()) this.service(key);
    this.spokes();
  }

  render() {
    for (const key of this.model.take("nodes")) this.node(key);
    for (const key of this.model.take("pods")) this.pod(key);
    this.workloads.render();
    const services = this.model.take("services");
    for (const key of this.model.take("endpoints")) services.add(key);
    for (const key of services) this.service(key);
    if (this.model.spokesDirty) this.spokes();
  }

  // --- nodes and pods ----------------------------------------------------------------------

  card(name) {
    let card = this.cards.get(name);
    if (card) return card;
    const root = h("article", "node-card");
    root.dataset.node = name;
    const head = h("header", "node-head");
    const title = h("h3", "node-name", name || term("unscheduled"));
    const badges = h("span", "badges");
    const buttons = h("span", "node-buttons");
    const count = h("span", "count", "0");
    head.append(title, badges, count, buttons);
    const pods = h("div", "pods");
    root.append(head, pods);
    if (name) {
      const rules = h("details", "proxy-rules");
      rules.dataset.node = name;
      const summary = h("summary", "", term("proxy-rules"));
      summary.dataset.term = "proxy-rules";
      rules.append(summary, h("div", "rules-box"));
      root.append(rules);
    }
    card = { root, title, badges, buttons, count, pods, size: 0 };
    this.cards.set(name, card);
    if (name) this.nodeList.insertBefore(root, this.cardAfter(name));
    else this.nodeList.prepend(root);
    return card;
  }

  // The card a new node's card goes before: nodes in natural order (node-2 before node-10), the
  // unscheduled pods' card first.
  cardAfter(name) {
    for (const card of this.nodeList.children) {
      const other = card.dataset.node;
      if (other && byNodeName(name, other) < 0) return card;
    }
    return null;
  }

  node(name) {
    const vm = this.model.objects.nodes.get(name);
    const card = this.card(name);
    if (!vm && card.size === 0) {
      card.root.remove();
      this.cards.delete(name);
      return;
    }
    this.decorateNode(card, name, vm);
  }

  decorateNode(card, name, vm) {
    const state = this.model.spokes[`kubelet/${name}`] || "running";
    const badges = [];
    if (!vm) badges.push(h("span", "badge bad", "gone"));
    else if (vm.ready === false || vm.ready === null) badges.push(h("span", "badge bad", ui("not-ready")));
    if (vm && vm.unschedulable) badges.push(h("span", "badge warn", ui("cordoned")));
    if (state === "stopped") badges.push(h("span", "badge bad", `kubelet ${ui("stopped")}`));
    card.badges.replaceChildren(...badges);
    card.root.classList.toggle("not-ready", Boolean(vm) && vm.ready !== true);
    card.root.classList.toggle("cordoned", Boolean(vm && vm.unschedulable));
    if (!vm) {
      card.buttons.replaceChildren();
      return;
    }
    // only the controls the user may use (may.js): an attendee's page has none of these
    card.buttons.replaceChildren(...[
      may("cordon") && (vm.unschedulable ? button("uncordon", term("uncordon"), { name }) : button("cordon", term("cordon"), { name })),
      may("drain") && button("drain", term("drain"), { name }, "danger"),
      may("spokes") && (state === "stopped"
        ? button("spoke", term("start-kubelet"), { spoke: `kubelet/${name}`, state: "running" })
        : button("spoke", term("stop-kubelet"), { spoke: `kubelet/${name}`, state: "stopped" }, "danger")),
    ].filter(Boolean));
  }

  resize(card, delta) {
    card.size += delta;
    card.count.textContent = String(card.size);
    card.root.classList.toggle("dense", card.size > DENSE_AT);
    if (card.size === 0 && !this.model.objects.nodes.has(card.root.dataset.node)) {
      card.root.remove();
      this.cards.delete(card.root.dataset.node);
    }
  }

  pod(key) {
    const vm = this.model.objects.pods.get(key);
    let entry = this.pods.get(key);
    if (!vm) {
      if (entry) {
        entry.el.remove();
        this.pods.delete(key);
        this.resize(this.card(entry.node), -1);
      }
      return;
    }
    if (!entry) {
      const el = h("div", "");
      el.dataset.key = key;
      el.dataset.name = vm.name;
      entry = { el, node: null };
      this.pods.set(key, entry);
    }
    if (entry.node !== vm.node) {
      if (entry.node !== null) this.resize(this.card(entry.node), -1);
      const card = this.card(vm.node);
      card.pods.append(entry.el);
      entry.node = vm.node;
      this.resize(card, 1);
    }
    this.drawPod(entry.el, vm);
  }

  drawPod(el, vm) {
    el.className = podClass(vm);
    el.dataset.status = podStatus(vm);
    el.dataset.ns = vm.ns;
    const owned = vm.owner ? `${vm.ownerKind}/${vm.owner}` : "";
    el.title = [`${vm.ns}/${vm.name}`, vm.status, vm.ip, owned, vm.image].filter(Boolean).join(" · ");
    const name = h("span", "pod-name", shortName(vm));
    const status = h("span", "pod-status", statusWord(podStatus(vm)));
    const parts = [nsTag(vm.ns), name, status].filter(Boolean);
    if (vm.owner) {
      const owner = h("span", "pod-owner", this.ownerTag(vm));
      owner.style.setProperty("--owner", ownerColour(vm.ns, vm.owner));
      parts.push(owner);
    }
    if (vm.image) parts.push(h("span", "pod-image", vm.image));
    const answered = this.answered.get(vm.key);
    if (answered) parts.push(answeredBadge(answered));
    if (vm.restarts) parts.push(h("span", "restarts", `↻${vm.restarts}`));
    const warning = this.model.warnings.get(warningKey("Pod", vm.ns, vm.name));
    // a Warning from before the pod last became Ready is its history (Events panel), not its state
    const past = warning && vm.ready && vm.readySince && warning.last && warning.last <= vm.readySince;
    if (warning && !past) {
      const mark = h("span", "warning", `⚠ ${warning.reason}`);
      mark.title = warning.message;
      parts.push(mark);
    }
    if (vm.phase === "Running" && !vm.terminating) parts.push(shellButton(vm));
    if (!vm.terminating) {
      const data = { namespace: vm.ns, name: vm.name };
      parts.push(button("delete-pod", "✕", data, "pod-delete"), button("crash", "↯", data, "pod-crash"));
      parts[parts.length - 2].title = term("delete-pod");
      parts[parts.length - 1].title = term("crash");
    }
    el.replaceChildren(...parts);
  }

  // A pod's owner, short: a Deployment's ReplicaSet by its Deployment and revision, as its row
  // names it ("pasta #2", the same colour as the row), any other owner as kind/name ("job/bake").
  ownerTag(vm) {
    const rs = vm.ownerKind === "rs" ? this.model.objects.replicasets.get(`${vm.ns}/${vm.owner}`) : null;
    return rs && rs.owner && rs.revision ? `${rs.owner} #${rs.revision}` : `${vm.ownerKind}/${vm.owner}`;
  }

  // --- services and endpoints --------------------------------------------------------------

  service(key) {
    const vm = this.model.objects.services.get(key);
    const endpoints = this.model.objects.endpoints.get(key);
    let block = this.services.get(key);
    if (!vm) {
      if (block) block.remove();
      this.services.delete(key);
      return;
    }
    if (!block) {
      block = h("article", "service");
      block.dataset.key = key;
      this.services.set(key, block);
      this.serviceList.append(block);
    }
    block.dataset.ns = vm.ns;
    const head = h("h3", "", `${term("service")} ${vm.name}`);
    const tag = nsTag(vm.ns);
    if (tag) head.append(tag);
    head.append(h("span", `svc-type type-${vm.type.toLowerCase()}`, vm.type));
    const facts = h("dl", "service-meta");
    const fact = (label, value, cls = "") => {
      if (!value) return;
      facts.append(h("dt", "", label), h("dd", cls, value));
    };
    fact("ClusterIP", vm.clusterIP, "mono");
    fact(ui("external"), vm.externalIPs.join(", ") || (vm.type === "LoadBalancer" ? "<pending>" : ""), "mono external");
    fact("ExternalName", vm.externalName, "mono");
    fact(ui("ports"), vm.ports.join(", "), "mono ports");
    fact(ui("selector"), vm.selector, "mono");
    const list = h("ul", "addresses");
    const addresses = endpoints ? endpoints.addresses : [];
    for (const address of addresses) {
      const item = h("li", address.ready ? "ready" : "not-ready", `${address.ip} → ${address.pod}`);
      if (!address.ready) item.append(h("span", "why", ` (${ui("not-ready-endpoint")})`));
      list.append(item);
    }
    if (!addresses.length && vm.type !== "ExternalName") list.append(h("li", "none", ui("no-endpoints")));
    block.replaceChildren(head, facts, list);
  }

  // --- spokes the supervisor controls --------------------------------------------------------

  spokes() {
    const buttons = [];
    for (const [component, key] of [["controller-manager", "kube-controller-manager"], ["scheduler", "kube-scheduler"]]) {
      const state = this.model.spokes[component] || "running";
      const wrap = h("span", `spoke-control ${state}`);
      // Running is what its Stop button says; only a stopped component names its state.
      wrap.append(h("span", "", state === "stopped" ? `${term(key)}: ${ui(state)}` : term(key)));
      if (may("spokes")) {
        wrap.append(state === "stopped"
          ? button("spoke", term("start"), { spoke: component, state: "running" })
          : button("spoke", term("stop"), { spoke: component, state: "stopped" }, "danger"));
      }
      buttons.push(wrap);
    }
    this.controlPlane.replaceChildren(...buttons);
    for (const [name, card] of this.cards) {
      if (name) this.decorateNode(card, name, this.model.objects.nodes.get(name));
    }
  }
}

// The NetworkPolicies, listed in the Services panel under its Services: each policy's name, the
// pods it applies to, its policy types, what each rule lets in (or out), and how many connections
// it blocked and allowed since the page opened (the traffic view's `tally`, from the records).
//
// Guarantees: one row per policy by key (dom.js keyedRows): a row is made again only when its view
// model or its counts changed; the list hides itself while there is no policy; a page whose hub
// does not serve NetworkPolicies (no "networkpolicies" in the model) draws nothing and never throws.
import { forgetRows, h, keyedRows, nsTag } from "./dom.js";
import { term, ui, uiFill } from "./words.js";

function selector(text) {
  return text || ui("np-all");
}

// One `from`/`to` entry in words: "pods role=waiter", "pods x=y · namespaces team=ops",
// "10.0.0.0/8 except 10.1.0.0/16".
export function peerText(peer) {
  if (peer.cidr !== undefined) {
    return peer.except && peer.except.length ? `${peer.cidr} ${ui("np-except")} ${peer.except.join(", ")}` : peer.cidr;
  }
  const parts = [];
  if (peer.pods !== null && peer.pods !== undefined) parts.push(uiFill("np-pods", { selector: selector(peer.pods) }));
  if (peer.namespaces !== null && peer.namespaces !== undefined) {
    parts.push(uiFill("np-namespaces", { selector: selector(peer.namespaces) }));
  }
  return parts.join(" · ");
}

// The policy's rules, one line each: "Ingress ← pods role=waiter · 80/TCP"; a type without rules
// lets nothing through.
export function ruleLines(vm) {
  const lines = [];
  for (const type of vm.types) {
    const rules = type === "Egress" ? vm.egress : vm.ingress;
    const arrow = type === "Egress" ? "→" : "←";
    if (!rules.length) lines.push({ type, deny: true, text: `${type} ${arrow} ${ui("np-deny-all")}` });
    for (const rule of rules) {
      const peers = rule.peers.map(peerText).join(" | ") || ui("np-anyone");
      const ports = rule.ports.length ? ` · ${rule.ports.join(", ")}` : "";
      lines.push({ type, deny: false, text: `${type} ${arrow} ${peers}${ports}` });
    }
  }
  return lines;
}

export class PoliciesPanel {
  // box: the block that holds the list (hidden while empty); list: the <ul>; tally: policy key -> counts.
  constructor(model, box, list, tally = new Map()) {
    this.model = model;
    this.box = box;
    this.list = list;
    this.tally = tally;
    this.counts = "";
  }

  renderAll() {
    forgetRows(this.list);
    this.counts = null;
    this.render();
  }

  render() {
    const objects = this.model.objects.networkpolicies;
    const changed = objects ? this.model.take("networkpolicies").size > 0 : false;
    const counts = [...this.tally].map(([key, c]) => `${key}:${c.blocked}:${c.allowed}`).join(",");
    if (!changed && counts === this.counts) return;
    this.counts = counts;
    const policies = objects ? [...objects.values()].sort((a, b) => a.key.localeCompare(b.key)) : [];
    this.box.classList.toggle("none", policies.length === 0);
    keyedRows(this.list, policies.map((vm) => {
      const tally = this.tally.get(vm.key) || { blocked: 0, allowed: 0 };
      return { key: vm.key, sig: [vm, tally.blocked, tally.allowed], make: () => this.row(vm, tally) };
    }));
  }

  row(vm, tally) {
    const row = h("li", "policy");
    row.dataset.key = vm.key;
    row.dataset.ns = vm.ns;
    const title = h("div", "policy-title");
    const icon = h("span", "policy-icon"); // a small brick wall, drawn by CSS
    icon.setAttribute("aria-hidden", "true");
    title.append(icon, h("b", "policy-name", vm.name));
    const tag = nsTag(vm.ns);
    if (tag) title.append(tag);
    for (const type of vm.types) title.append(h("span", `policy-type ${type.toLowerCase()}`, type));
    if (tally.blocked) title.append(h("span", "policy-count blocked", uiFill("np-blocked-n", { n: tally.blocked })));
    if (tally.allowed) title.append(h("span", "policy-count allowed", uiFill("np-allowed-n", { n: tally.allowed })));
    const applies = h("div", "policy-applies");
    applies.append(h("span", "", `${ui("np-applies")}: `), h("span", "mono", uiFill("np-pods", { selector: selector(vm.podSelector) })));
    const rules = h("ul", "policy-rules");
    for (const line of ruleLines(vm)) rules.append(h("li", line.deny ? "deny mono" : "mono", line.text));
    row.title = `${term("networkpolicy")} ${vm.key}`;
    row.append(title, applies, rules);
    return row;
  }
}

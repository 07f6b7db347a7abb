// Service traffic, live: every answered request the hub publishes (records of type
// RECORD.serviceRequest, one per request sent through a node's kube-proxy) moves one dot from that node's kube-proxy spoke to
// the pod that answered (red, to the Service, when it failed), counts on the pod's chip, and shows
// as a line in the traffic panel. Counts are exact; dots beyond what can be animated are skipped.
// A connection a NetworkPolicy dropped sends no dot (walls.js draws it, stopped at its wall): its
// line names the policy, and its Service's tally counts it as blocked; an allowed connection of an
// isolated pod names the policy that allowed it.
// The traffic form's node and service choices follow the model (nodes and Services present).
import { term, ui } from "./words.js";
import { h } from "./dom.js";
import { decisionText, verdict } from "./walls.js";

// The traffic records' types come from the server (control/protocol.py, as the body's
// data-record-types): the page keeps no copy of them.
export const RECORD = JSON.parse(document.body.dataset.recordTypes || "{}");
const MAX_ACTIVE = 120;
const TRAVEL_MS = 700;
const RECENT = 14;

function centre(element) {
  if (!element) return null;
  const rect = element.getBoundingClientRect();
  if (!rect.width && !rect.height) return null;
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

// One line of the recent requests: who sent it and who answered (or why nobody did); a dropped
// connection names the policy that blocked it, an allowed one of an isolated pod the policy that
// allowed it.
export function recentLine(record, podByIp = () => null) {
  const ok = record.code === 200 && record.pod;
  const decision = verdict(record, podByIp);
  if (decision && decision.blocked) {
    const line = h("li", "failed blocked");
    line.append(h("b", "", decision.from.text), h("span", "", " ✕→ "), h("span", "pod-name", decision.to.text),
      h("span", "why", ` ${decisionText(decision)}`));
    return line;
  }
  const line = h("li", ok ? "ok" : "failed");
  const sender = record.source ? podByIp(record.source) : null; // a pod's own request: named, not its node
  line.append(h("b", "", sender ? sender.split("/")[1] : record.from || "?"), h("span", "", " → "),
    h("span", "pod-name", ok ? record.pod : `${record.code || "—"} ${record.error || ""}`.trim()));
  if (ok) line.append(h("span", "where", ` ${record.endpoint || ""} · ${record.podNode || ""}`));
  if (ok && decision) line.append(h("span", "allowed", ` ✓ ${decisionText(decision)}`));
  return line;
}

// The pod that holds an IP now ("ns/name"), from the model: who sent a connection known by its address.
export function podByIp(model, ip) {
  for (const vm of model.objects.pods.values()) if (vm.ip === ip) return vm.key;
  return null;
}

export class TrafficView {
  constructor(model, picture) {
    this.model = model;
    this.picture = picture;
    this.answered = new Map(); // pod key -> {count, share}
    this.perService = new Map(); // service key -> {total, failed, pods: Map(pod key -> count)}
    this.recent = [];
    this.active = 0;
    this.layer = document.getElementById("traffic-dots");
    this.list = document.getElementById("traffic-recent");
    this.tally = document.getElementById("traffic-tally");
    this.nodeSelect = document.getElementById("traffic-node");
    this.services = document.getElementById("traffic-services");
    // Until someone types a name, the form proposes a Service that exists.
    this.target = this.nodeSelect.form.elements.target;
    this.targetTyped = false;
    this.target.addEventListener("input", () => { this.targetTyped = true; });
    this.dirty = false;
    this.podByIp = (ip) => podByIp(model, ip);
  }

  // Records from the hub; returns true when something changed that a frame must draw.
  add(records) {
    for (const record of records) {
      // A name that resolved to no Service has no "ns/name": its requests are counted under the name asked for.
      const service = record.service || record.target || "?";
      // A request to a pod IP has no Service: the kubelet named the pod's namespace.
      const namespace = record.service ? record.service.split("/")[0] : (record.podNamespace || "");
      const stats = this.stats(service);
      stats.total += 1;
      const ok = record.code === 200 && record.pod;
      const blocked = Boolean(verdict(record)?.blocked);
      if (ok) {
        const podKey = `${namespace}/${record.pod}`;
        stats.pods.set(podKey, (stats.pods.get(podKey) || 0) + 1);
        this.share(stats);
        this.model.dirty.pods.add(podKey);
      } else {
        stats.failed += 1;
        if (blocked) stats.blocked += 1;
      }
      this.recent.unshift(record);
      if (!blocked) this.launch(record, ok, namespace);
    }
    if (this.recent.length > RECENT) this.recent.length = RECENT;
    this.dirty = true;
  }

  stats(service) {
    let stats = this.perService.get(service);
    if (!stats) this.perService.set(service, (stats = { total: 0, failed: 0, blocked: 0, pods: new Map() }));
    return stats;
  }

  share(stats) {
    const answered = stats.total - stats.failed || 1;
    for (const [podKey, count] of stats.pods) this.answered.set(podKey, { count, share: count / answered });
  }

  reset() {
    for (const podKey of this.answered.keys()) this.model.dirty.pods.add(podKey);
    this.answered.clear();
    this.perService.clear();
    this.recent = [];
    this.dirty = true;
  }

  // A dot from the sending node's kube-proxy (its spoke in the picture, else its node card) to
  // the pod chip that answered, or to the Service's block when the request failed.
  launch(record, ok, namespace) {
    if (this.active >= MAX_ACTIVE || !this.layer) return;
    const from = this.picture.spokeCentre(`kube-proxy/${record.from}`)
      || centre(document.querySelector(`.node-card[data-node="${CSS.escape(record.from || "")}"] .node-name`));
    const target = ok
      ? document.querySelector(`.pod[data-key="${CSS.escape(`${namespace}/${record.pod}`)}"]`)
      : document.querySelector(`.service[data-key="${CSS.escape(record.service || "")}"]`)
        || document.getElementById("traffic-tally");
    const to = centre(target);
    if (!from || !to) return;
    const dot = h("i", `traffic-dot${ok ? "" : " failed"}`);
    this.layer.append(dot);
    this.active += 1;
    const animation = dot.animate(
      [{ transform: `translate(${from.x}px, ${from.y}px)` }, { transform: `translate(${to.x}px, ${to.y}px)` }],
      { duration: TRAVEL_MS, easing: "ease-in-out" },
    );
    animation.onfinish = () => {
      dot.remove();
      this.active -= 1;
      if (target) {
        target.classList.remove("hit", "miss");
        void target.offsetWidth; // restart the flash
        target.classList.add(ok ? "hit" : "miss");
      }
    };
  }

  render() {
    this.renderChoices();
    if (!this.dirty) return;
    this.dirty = false;
    this.list.replaceChildren(...this.recent.map((record) => recentLine(record, this.podByIp)));
    const rows = [];
    for (const [service, stats] of this.perService) {
      const row = h("div", "tally-row");
      row.dataset.service = service;
      row.append(h("b", "", `${term("service")} ${service}`),
        h("span", "totals", `${stats.total} · ${ui("failed")} ${stats.failed}`));
      const bars = h("div", "bars");
      for (const [podKey, count] of [...stats.pods].sort()) {
        const bar = h("div", "bar");
        bar.dataset.pod = podKey;
        bar.append(h("span", "pod-name", podKey.split("/")[1]), h("span", "count", String(count)));
        const fill = h("i", "fill");
        fill.style.width = `${(100 * count) / Math.max(1, stats.total - stats.failed)}%`;
        bar.append(fill);
        bars.append(bar);
      }
      if (stats.failed - stats.blocked) {
        const bar = h("div", "bar failed");
        bar.append(h("span", "pod-name", ui("failed")), h("span", "count", String(stats.failed - stats.blocked)));
        bars.append(bar);
      }
      if (stats.blocked) {
        const bar = h("div", "bar failed blocked");
        bar.append(h("span", "pod-name", `✕ ${ui("np-blocked")}`), h("span", "count", String(stats.blocked)));
        bars.append(bar);
      }
      row.append(bars);
      rows.push(row);
    }
    this.tally.replaceChildren(...rows);
  }

  // The form offers the nodes and Services the model holds (kept in step, not rebuilt every frame).
  renderChoices() {
    const nodes = [...this.model.objects.nodes.keys()].sort();
    const key = nodes.join(",");
    if (key !== this.nodeKey) {
      this.nodeKey = key;
      const chosen = this.nodeSelect.value;
      this.nodeSelect.replaceChildren(...nodes.map((name) => h("option", "", name)));
      if (nodes.includes(chosen)) this.nodeSelect.value = chosen;
    }
    const names = [...this.model.objects.services.values()].map((vm) => (vm.ns === "default" ? vm.name : `${vm.name}.${vm.ns}`));
    const serviceKey = names.sort().join(",");
    if (serviceKey !== this.serviceKey) {
      this.serviceKey = serviceKey;
      this.services.replaceChildren(...names.map((name) => { const o = h("option"); o.value = name; return o; }));
      // The hub's own Service (default/kubernetes) has no pod behind it: not the one to propose.
      const proposable = names.filter((name) => name !== "kubernetes");
      if (!this.targetTyped && proposable.length && !proposable.includes(this.target.value)) this.target.value = proposable[0];
    }
  }
}

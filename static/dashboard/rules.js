// A node's kube-proxy table, "like iptables rules", under its node card. It is fetched (through
// the dashboard, from the hub) when opened, and again whenever that node's kube-proxy is handed
// a Service or Endpoints change — the watch deliveries the hub reports — so the table on the
// screen follows the one in kube-proxy without polling. One fetch per node at a time; a change
// arriving meanwhile fetches once more afterwards. kube-proxy applies a change a moment after
// it is delivered, so each change-triggered fetch is followed by one more, FOLLOW_UP_MS later.
const FOLLOW_UP_MS = 300;
const WATCHED = new Set(["services", "endpoints"]);

export class ProxyRules {
  constructor(urlFor) {
    this.urlFor = urlFor; // node -> URL of the partial
    this.open = new Set();
    this.busy = new Set();
    this.again = new Set();
    this.html = new Map();
    this.fetches = 0;
    document.addEventListener("toggle", (event) => {
      const details = event.target;
      if (!(details instanceof HTMLDetailsElement) || !details.classList.contains("proxy-rules")) return;
      const node = details.dataset.node;
      if (details.open) {
        this.open.add(node);
        this.fill(node);
        this.fetch(node);
      } else {
        this.open.delete(node);
      }
    }, true);
  }

  // Hub traffic records: a watch delivery of Services/Endpoints to kube-proxy/<node>.
  notice(records) {
    for (const record of records) {
      if (record.type !== "watch" || !WATCHED.has(record.resource) || !record.who) continue;
      if (!record.who.startsWith("kube-proxy/")) continue;
      const node = record.who.slice("kube-proxy/".length);
      if (!this.open.has(node)) continue;
      this.fetch(node);
      setTimeout(() => this.fetch(node), FOLLOW_UP_MS);
    }
  }

  box(node) {
    return document.querySelector(`details.proxy-rules[data-node="${CSS.escape(node)}"] .rules-box`);
  }

  fill(node) {
    const box = this.box(node);
    if (box && this.html.has(node)) box.innerHTML = this.html.get(node);
  }

  // After the node cards were drawn again: open what was open, with the last table fetched.
  restore() {
    for (const node of this.open) {
      const details = document.querySelector(`details.proxy-rules[data-node="${CSS.escape(node)}"]`);
      if (details && !details.open) details.open = true;
      this.fill(node);
    }
  }

  async fetch(node) {
    if (this.busy.has(node)) {
      this.again.add(node);
      return;
    }
    this.busy.add(node);
    try {
      const response = await fetch(this.urlFor(node), { headers: { "HX-Request": "true" } });
      this.html.set(node, await response.text());
      this.fetches += 1;
      this.fill(node);
    } catch (error) {
      console.warn("kube-proxy rules", node, error);
    } finally {
      this.busy.delete(node);
      if (this.again.delete(node)) this.fetch(node);
    }
  }
}

// The version log: the latest committed changes, newest first, each with its resourceVersion,
// type, kind/name and the client that caused it. Entries live in a ring buffer (bounded memory);
// the list shows the newest ROWS of them. Paused, the list stands still for reading and scrolling
// while the ring keeps filling; resumed, it shows the newest again.
import { Ring } from "./ring.js";
import { clientName, ui } from "./words.js";

const KEEP = 5000;
const ROWS = 250;
const QUIET = new Set(["leases"]);

export class VersionLog {
  constructor() {
    this.ring = new Ring(KEEP);
    this.fresh = [];
    this.paused = false;
    this.quiet = false;
    this.unseen = 0;
    this.list = document.getElementById("log-list");
    this.waiting = document.getElementById("log-waiting");
    this.pauseButton = document.getElementById("log-pause");
    this.quietBox = document.getElementById("log-quiet");
    this.rebuild = false;
    this.quiet = this.quietBox.checked;
  }

  add(items) {
    for (const item of items) {
      this.ring.push(item);
      if (this.paused) this.unseen += 1;
      else this.fresh.push(item);
    }
    if (this.fresh.length > ROWS) this.fresh.splice(0, this.fresh.length - ROWS);
  }

  setPaused(paused) {
    this.paused = paused;
    this.pauseButton.setAttribute("aria-pressed", String(paused));
    this.fresh = [];
    if (!paused) {
      this.unseen = 0;
      this.rebuild = true;
    }
  }

  setQuiet(quiet) {
    this.quiet = quiet;
    this.rebuild = true;
  }

  shown(item) {
    return !(this.quiet && QUIET.has(item.resource));
  }

  row(item) {
    const li = document.createElement("li");
    li.className = `entry ${item.type.toLowerCase()}`;
    li.dataset.rv = String(item.rv);
    const cells = [
      ["rv", String(item.rv)],
      ["type", item.type],
      ["what", `${item.kind}/${item.name}${item.ns && item.ns !== "default" ? ` · ${item.ns}` : ""}`],
      ["who", clientName(item.actor || "unknown")],
    ];
    for (const [cls, text] of cells) {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = text;
      li.append(span);
    }
    return li;
  }

  render() {
    if (this.rebuild) {
      this.rebuild = false;
      this.fresh = [];
      const rows = this.ring.newest(KEEP).filter((item) => this.shown(item)).slice(0, ROWS);
      this.list.replaceChildren(...rows.map((item) => this.row(item)));
    } else if (this.fresh.length && !this.paused) {
      const fragment = document.createDocumentFragment();
      for (let i = this.fresh.length - 1; i >= 0; i -= 1) {
        if (this.shown(this.fresh[i])) fragment.append(this.row(this.fresh[i]));
      }
      this.fresh = [];
      this.list.prepend(fragment);
      while (this.list.childElementCount > ROWS) this.list.lastElementChild.remove();
    }
    this.waiting.textContent = this.paused ? `${ui("paused")} · +${this.unseen}` : "";
  }

  clear() {
    this.ring.clear();
    this.fresh = [];
    this.rebuild = true;
  }
}

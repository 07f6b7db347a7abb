// A small stand-in for the browser's document, enough for the page's panels under `node --test`:
// elements with classes, text, data-*, attributes, children (append, insertBefore, replaceChildren,
// removeChild), listeners, and `document.getElementById` that makes an element the first time an id
// is asked for. `installDocument(words)` puts it (and requestAnimationFrame, Option) on globalThis;
// `frames.run()` runs the animation frames asked for so far.
class Node {
  constructor() {
    this.parentNode = null;
    this.children = [];
  }

  get firstChild() {
    return this.children[0] || null;
  }

  get nextSibling() {
    if (!this.parentNode) return null;
    const siblings = this.parentNode.children;
    return siblings[siblings.indexOf(this) + 1] || null;
  }

  get textContent() {
    return this.children.map((child) => child.textContent).join("");
  }

  set textContent(text) {
    this.replaceChildren(String(text));
  }

  adopt(node) {
    const child = typeof node === "string" ? new Text(node) : node;
    if (child.parentNode) child.parentNode.removeChild(child);
    child.parentNode = this;
    return child;
  }

  append(...nodes) {
    for (const node of nodes) if (node !== null && node !== undefined) this.children.push(this.adopt(node));
  }

  appendChild(node) {
    this.append(node);
    return node;
  }

  insertBefore(node, reference) {
    if (reference === null) return this.appendChild(node);
    const child = this.adopt(node);
    this.children.splice(this.children.indexOf(reference), 0, child);
    return node;
  }

  removeChild(node) {
    const index = this.children.indexOf(node);
    if (index < 0) throw new Error("not a child");
    this.children.splice(index, 1);
    node.parentNode = null;
    return node;
  }

  replaceChildren(...nodes) {
    for (const child of [...this.children]) this.removeChild(child);
    this.append(...nodes);
  }
}

class Text extends Node {
  constructor(text) {
    super();
    this.text = text;
  }

  get textContent() {
    return this.text;
  }

  set textContent(text) {
    this.text = String(text);
  }
}

export class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.className = "";
    this.dataset = {};
    this.attributes = {};
    this.listeners = {};
    this.style = {};
    this.title = "";
    this.disabled = false;
    this.value = "";
  }

  get classList() {
    const names = () => new Set(this.className.split(/\s+/).filter(Boolean));
    const write = (set) => { this.className = [...set].join(" "); };
    return {
      contains: (name) => names().has(name),
      add: (name) => { const set = names(); set.add(name); write(set); },
      remove: (name) => { const set = names(); set.delete(name); write(set); },
      toggle: (name, force) => {
        const set = names();
        const on = force === undefined ? !set.has(name) : Boolean(force);
        if (on) set.add(name); else set.delete(name);
        write(set);
        return on;
      },
    };
  }

  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }

  getAttribute(name) {
    return this.attributes[name] ?? null;
  }

  addEventListener(type, listener) {
    (this.listeners[type] ||= []).push(listener);
  }

  dispatch(type, event = {}) {
    for (const listener of this.listeners[type] || []) listener({ target: this, ...event });
  }

  click() {
    this.dispatch("click");
  }

  closest() {
    return null;
  }

  querySelectorAll() {
    return [];
  }
}

export const frames = {
  pending: [],
  run() {
    const due = this.pending.splice(0);
    for (const callback of due) callback(0);
    return due.length;
  },
};

// Put a fresh document on globalThis; `words` is what the page's <script id="kk-words"> holds.
export function installDocument(words = { terms: {}, ui: {} }) {
  const byId = new Map();
  const document = {
    body: new Element("body"),
    activeElement: null,
    createElement: (tag) => new Element(tag),
    createElementNS: (namespace, tag) => new Element(tag),
    getElementById(id) {
      if (!byId.has(id)) byId.set(id, new Element("div"));
      return byId.get(id);
    },
    querySelectorAll: () => [],
  };
  document.getElementById("kk-words").textContent = JSON.stringify(words);
  globalThis.document = document;
  globalThis.requestAnimationFrame = (callback) => frames.pending.push(callback);
  globalThis.Option = class extends Element {
    constructor(text, value) {
      super("option");
      this.textContent = text;
      this.value = value;
    }
  };
  return document;
}

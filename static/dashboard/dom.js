// Small DOM builders the panels share — the page's one `h()` — and one keyed-row renderer.
//
// Guarantees:
// - `h(tag, className, text)` makes an element with a class and text; `button(...)` an action
//   button (its data-* sent by app.js with htmx); `nsTag(ns)` the namespace tag shown where a
//   namespace is not "default".
// - `keyedRows(list, rows)` draws a list of rows by key: a row whose key and signature are the same
//   as when it was last drawn keeps its element (not rebuilt, not moved when already in place, so a
//   hover, a focus or an animation on it survives a redraw); a new row, or one whose signature
//   changed, is made again by its `make()`; rows whose key went are removed, and so is anything
//   else in the list that is not a keyed row (a "none" line); the order is the order of `rows`.
//   A signature is compared with `===`, element by element when it is an array (view models are
//   never changed in place, so a view model is its own signature). `forgetRows(list)` makes every
//   row again at the next draw (after a language or story-mode change, or a new snapshot).
export function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(action, label, data, className = "") {
  const node = h("button", `act ${className}`.trim(), label);
  node.type = "button";
  node.dataset.action = action;
  for (const [key, value] of Object.entries(data)) node.dataset[key] = value;
  return node;
}

// The namespace, as a small tag, where it is not "default" (the one a beginner assumes).
export function nsTag(ns) {
  return ns && ns !== "default" ? h("span", "ns-tag", ns) : null;
}

const drawnRows = new WeakMap(); // list element -> Map(key -> {sig, node})

function sameSignature(a, b) {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((value, index) => value === b[index]);
}

// Draw `rows` ([{key, sig, make}]) into `list`; returns how many rows were made (not kept).
export function keyedRows(list, rows) {
  const before = drawnRows.get(list) || new Map();
  const after = new Map();
  const nodes = [];
  let made = 0;
  for (const { key, sig, make } of rows) {
    if (after.has(key)) continue; // a key is drawn once
    const held = before.get(key);
    let node = held && sameSignature(held.sig, sig) ? held.node : null;
    if (!node) {
      node = make();
      made += 1;
    }
    after.set(key, { sig, node });
    nodes.push(node);
  }
  let cursor = list.firstChild;
  for (const node of nodes) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    list.insertBefore(node, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    list.removeChild(cursor);
    cursor = next;
  }
  drawnRows.set(list, after);
  return made;
}

export function forgetRows(list) {
  drawnRows.delete(list);
}

// Small DOM builders the panels share: an element with a class and text, an action button (its
// data-* sent by app.js with htmx), and the namespace tag shown where a namespace is not "default".
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

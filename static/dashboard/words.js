// The page's words, rendered by Django into <script id="kk-words"> in the active language: each
// term as Kubernetes names it ("k8s") and as the restaurant story tells it ("kitchen").
const words = JSON.parse(document.getElementById("kk-words").textContent);
let mode = "k8s";
const listeners = [];

export function currentMode() {
  return mode;
}

export function setMode(next) {
  mode = next === "kitchen" ? "kitchen" : "k8s";
  document.body.classList.toggle("mode-kitchen", mode === "kitchen");
  document.body.classList.toggle("mode-k8s", mode === "k8s");
  for (const el of document.querySelectorAll("[data-term]")) {
    el.textContent = term(el.dataset.term);
  }
  for (const listener of listeners) listener(mode);
}

export function onModeChange(listener) {
  listeners.push(listener);
}

export function term(key) {
  const pair = words.terms[key];
  return pair ? pair[mode] : key;
}

export function statusWord(status) {
  const pair = words.status[status];
  return pair ? pair[mode] : status;
}

export function ui(key) {
  return words.ui[key] || key;
}

// A page word with its {placeholders} filled in ("blocked by {policies}").
export function uiFill(key, values) {
  return ui(key).replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

// A client as the picture names it: "kubelet/node-2" -> "kubelet node-2" or "Cook at stove node-2".
export function clientName(who) {
  if (who === "kube-apiserver") return term("hub");
  if (who.startsWith("kubelet/")) return `${term("kubelet")} ${who.slice(8)}`;
  if (who.startsWith("kube-proxy/")) return `${term("kube-proxy")} ${who.slice(11)}`;
  // A node's spoke (its kubelet and kube-proxy together) is called by the node's name.
  if (who.startsWith("node/")) return mode === "kitchen" ? `${term("node")} ${who.slice(5)}` : who.slice(5);
  return words.terms[who] ? term(who) : who;
}

// A time of day as HH:MM:SS (24 h, digits only: the same width in every language, so it fits
// the narrow time columns); "" for a time that cannot be read.
export function clockTime(date) {
  if (Number.isNaN(date.getTime())) return "";
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

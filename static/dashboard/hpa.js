// The HorizontalPodAutoscalers: for each, its target, current/target CPU utilisation, min/max and
// current/desired replicas, and a small chart of its history (utilisation as a line against the
// dashed target, replicas as steps), one point per change of its status — drawn again only when
// that HPA changed.
import { term, ui } from "./words.js";
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 300;
const HEIGHT = 70;

function s(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  parent.appendChild(node);
  return node;
}

const percent = (value) => (value === null || value === undefined ? "—" : `${value}%`);

// The chart: one step along x per status change (the newest at the right), utilisation scaled
// from 0 to twice the target (or the highest seen), replicas from 0 to max. The newest value
// runs on to the right edge, so a single sample is a flat line across.
export function chart(history, vm) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "hpa-chart");
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const points = history.length ? history : [];
  const x = (i) => (points.length > 1 ? (i / (points.length - 1)) * (WIDTH - 4) + 2 : 2);
  // 15 % headroom: a line at the top of its scale stays inside the frame.
  const cpuTop = 1.15 * Math.max(100, (vm.targetCPU || 50) * 2, ...points.map((p) => p.cpu || 0));
  const replicaTop = 1.15 * Math.max(1, vm.max || 1, ...points.map((p) => p.replicas || 0));
  const yCpu = (value) => HEIGHT - 3 - ((value || 0) / cpuTop) * (HEIGHT - 6);
  const yRep = (value) => HEIGHT - 3 - ((value || 0) / replicaTop) * (HEIGHT - 6);
  if (vm.targetCPU !== null && vm.targetCPU !== undefined) {
    s("line", { class: "target", x1: 0, x2: WIDTH, y1: yCpu(vm.targetCPU), y2: yCpu(vm.targetCPU) }, svg);
  }
  if (points.length) {
    let steps = `M ${x(0).toFixed(1)} ${yRep(points[0].replicas).toFixed(1)}`;
    for (let i = 1; i < points.length; i += 1) {
      steps += ` H ${x(i).toFixed(1)} V ${yRep(points[i].replicas).toFixed(1)}`;
    }
    s("path", { class: "replicas", d: `${steps} H ${WIDTH - 2}` }, svg);
    const known = points.map((p, i) => [i, p.cpu]).filter(([, cpu]) => cpu !== null && cpu !== undefined);
    if (known.length) {
      const line = known.map(([i, cpu], n) => `${n ? "L" : "M"} ${x(i).toFixed(1)} ${yCpu(cpu).toFixed(1)}`).join(" ");
      s("path", { class: "cpu", d: known.length === 1 ? `${line} H ${WIDTH - 2}` : line }, svg);
    }
  }
  return svg;
}

export class HpaPanel {
  constructor(model) {
    this.model = model;
    this.list = document.getElementById("hpa-list");
    this.section = document.getElementById("hpa");
    this.blocks = new Map();
  }

  renderAll() {
    this.list.replaceChildren();
    this.blocks.clear();
    this.model.take("horizontalpodautoscalers");
    for (const key of this.model.objects.horizontalpodautoscalers.keys()) this.hpa(key);
    this.empty();
  }

  render() {
    for (const key of this.model.take("horizontalpodautoscalers")) this.hpa(key);
    this.empty();
  }

  empty() {
    this.section.classList.toggle("none", this.model.objects.horizontalpodautoscalers.size === 0);
  }

  hpa(key) {
    const vm = this.model.objects.horizontalpodautoscalers.get(key);
    let block = this.blocks.get(key);
    if (!vm) {
      if (block) block.remove();
      this.blocks.delete(key);
      return;
    }
    if (!block) {
      block = h("article", "hpa");
      block.dataset.key = key;
      this.blocks.set(key, block);
      this.list.append(block);
    }
    const head = h("h3", "", `${vm.name} → ${vm.target}`);
    const cpu = h("p", "hpa-cpu");
    const over = vm.currentCPU !== null && vm.targetCPU !== null && vm.currentCPU > vm.targetCPU;
    cpu.append(h("span", "label", ui("cpu")), h("b", `now${over ? " over" : ""}`, percent(vm.currentCPU)),
      h("span", "slash", " / "), h("span", "goal", percent(vm.targetCPU)));
    const replicas = h("p", "hpa-replicas");
    replicas.append(h("span", "label", term("replicas")), h("b", "current", String(vm.current)),
      h("span", "arrow", " → "), h("b", `desired${vm.desired !== vm.current ? " moving" : ""}`, String(vm.desired)),
      h("span", "bounds", ` (${ui("min")} ${vm.min} · ${ui("max")} ${vm.max})`));
    const limited = vm.conditions.find((c) => c.status === "False" && c.type !== "ScalingLimited")
      || vm.conditions.find((c) => c.type === "ScalingLimited" && c.status === "True");
    const parts = [head, cpu, replicas, chart(this.model.hpaSamples(key), vm)];
    if (limited) parts.push(h("p", "hpa-condition", `${limited.type}: ${limited.reason}`));
    const legend = h("p", "hpa-legend");
    legend.append(h("i", "key cpu"), h("span", "", ui("cpu")), h("i", "key target"), h("span", "", ui("target")),
      h("i", "key replicas"), h("span", "", term("replicas")));
    parts.push(legend);
    block.replaceChildren(...parts);
  }
}

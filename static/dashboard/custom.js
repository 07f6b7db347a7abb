// Custom resources. In every view: one table per custom kind (from its CustomResourceDefinition),
// with the printer columns whose JSONPath is a plain field path. In the restaurant view the
// kitchen's own kinds (kitchen.kubekitchen.dev Order and Dish) are drawn as the story tells them:
// each order slip with its menu, count and progress, its dishes (label
// kitchen.kubekitchen.dev/order) each with a button that drops it on the floor, and the cooks
// (the line-cook and garnish-cook spokes). A kind is drawn again only when one of its objects (or
// its definition) changed.
import { currentMode, term, ui } from "./words.js";
import { h } from "./dom.js";

// The kitchen's API group and the Dish → Order label, as the server names them (control/protocol.py).
export const KITCHEN_GROUP = document.body.dataset.kitchenGroup;
export const ORDER_LABEL = document.body.dataset.orderLabel;
const COOKS = ["line-cook", "garnish-cook"];

function actionButton(action, label, data, className = "") {
  const node = h("button", `act ${className}`.trim(), label);
  node.type = "button";
  node.dataset.action = action;
  for (const [key, value] of Object.entries(data)) node.dataset[key] = value;
  return node;
}

// The value at a plain JSONPath (".spec.menu") of a custom object's view model.
export function valueAt(vm, path) {
  let value = vm;
  for (const part of path.split(".").slice(1)) {
    if (value === null || typeof value !== "object") return "";
    value = value[part];
  }
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

export class CustomPanel {
  constructor(model, picture) {
    this.model = model;
    this.picture = picture;
    this.section = document.getElementById("custom");
    this.list = document.getElementById("custom-list");
    this.board = document.getElementById("kitchen-board");
    this.orderForm = document.getElementById("order-form");
    this.cooksSeen = "";
  }

  definitions() {
    return [...this.model.objects.customresourcedefinitions.values()].sort((a, b) => a.kind.localeCompare(b.kind));
  }

  kitchenKind(kind) {
    return this.definitions().find((crd) => crd.group === KITCHEN_GROUP && crd.kind === kind);
  }

  renderAll() {
    this.model.take("customresourcedefinitions");
    for (const resource of this.model.customResources()) this.model.take(resource);
    this.draw();
  }

  render() {
    let changed = this.model.take("customresourcedefinitions").size > 0;
    for (const resource of this.model.customResources()) if (this.model.take(resource).size) changed = true;
    const cooks = COOKS.map((who) => (this.picture.counters(who) ? who : "")).join(",");
    if (cooks !== this.cooksSeen) changed = true;
    if (changed) this.draw();
  }

  draw() {
    const kitchen = currentMode() === "kitchen";
    const orders = this.kitchenKind("Order");
    const dishes = this.kitchenKind("Dish");
    const definitions = this.definitions();
    this.section.classList.toggle("none", definitions.length === 0);
    const showBoard = kitchen && Boolean(orders);
    this.board.hidden = !showBoard;
    if (showBoard) this.drawBoard(orders, dishes);
    this.drawOrderForm(orders);
    const tables = definitions.filter((crd) => !(showBoard && crd.group === KITCHEN_GROUP && (crd === orders || crd === dishes)));
    this.list.replaceChildren(...tables.map((crd) => this.table(crd)));
  }

  table(crd) {
    const block = h("article", "custom-kind");
    block.dataset.resource = crd.resource;
    const head = h("h3", "", crd.kind);
    head.append(h("span", "group", ` ${crd.group}/${crd.version}`));
    const table = h("table", "custom-table");
    const header = h("tr");
    header.append(h("th", "", "NAME"), ...crd.columns.map((column) => h("th", "", column.name.toUpperCase())));
    table.append(header);
    const objects = [...(this.model.objects[crd.resource] || new Map()).values()].sort((a, b) => a.key.localeCompare(b.key));
    for (const vm of objects) {
      const row = h("tr", vm.terminating ? "terminating" : "");
      row.dataset.key = vm.key;
      row.append(h("td", "name", vm.ns && vm.ns !== "default" ? vm.key : vm.name),
        ...crd.columns.map((column) => h("td", "", valueAt(vm, column.path))));
      table.append(row);
    }
    block.append(head, objects.length ? table : h("p", "none", ui("no-objects")));
    return block;
  }

  // --- the restaurant view -------------------------------------------------------------------

  drawBoard(orders, dishes) {
    const cooks = h("div", "cooks");
    cooks.append(h("span", "label", ui("cooks")));
    this.cooksSeen = COOKS.map((who) => (this.picture.counters(who) ? who : "")).join(",");
    for (const who of COOKS) {
      const seen = this.picture.counters(who);
      const chip = h("span", `cook${seen ? " working" : ""}`, term(who));
      chip.dataset.who = who;
      if (!seen) chip.append(h("small", "", ` (${ui("not-seen")})`));
      cooks.append(chip);
    }
    const slips = [...(this.model.objects[orders.resource] || new Map()).values()].sort((a, b) => a.key.localeCompare(b.key));
    const allDishes = dishes ? [...(this.model.objects[dishes.resource] || new Map()).values()] : [];
    const cards = slips.map((order) => this.orderCard(order, allDishes.filter(
      (dish) => dish.ns === order.ns && dish.labels[ORDER_LABEL] === order.name), dishes));
    this.board.replaceChildren(cooks, ...(cards.length ? cards : [h("p", "none", ui("no-orders"))]));
  }

  orderCard(order, dishes, dishKind) {
    const spec = order.spec || {};
    const status = order.status || {};
    const card = h("article", `order-slip phase-${String(status.phase || "new").toLowerCase()}`);
    card.dataset.key = order.key;
    const head = h("h3", "");
    head.append(h("span", "slip", ui("order")), h("span", "", ` ${order.name}`));
    const what = h("p", "order-what");
    what.append(h("b", "menu", spec.menu || "?"), h("span", "", ` × ${spec.count ?? "?"}`));
    const progress = h("p", "order-progress");
    progress.append(h("span", "cooked", `${ui("cooked")} ${status.cooked ?? 0}/${spec.count ?? "?"}`),
      h("span", "garnished", `${ui("garnished")} ${status.garnished ?? 0}/${spec.count ?? "?"}`));
    if (status.phase) progress.append(h("span", "phase", status.phase));
    const plates = h("div", "dishes");
    for (const dish of dishes.sort((a, b) => a.name.localeCompare(b.name))) plates.append(this.dishChip(dish, dishKind));
    card.append(head, what, progress, plates);
    return card;
  }

  dishChip(dish, dishKind) {
    const garnished = Boolean(dish.status && dish.status.garnished);
    const state = dish.terminating ? "dropped" : garnished ? "garnished" : "cooked";
    const chip = h("div", `dish ${state}`);
    chip.dataset.name = dish.name;
    chip.append(h("span", "dish-name", dish.name), h("span", "dish-state", ui(state)));
    if (!dish.terminating && dishKind) {
      const drop = actionButton("delete-custom", "✕", {
        apiVersion: dish.apiVersion || `${dishKind.group}/${dishKind.version}`, plural: dishKind.plural,
        namespace: dish.ns, name: dish.name,
      }, "drop-dish");
      drop.title = ui("drop-dish");
      drop.setAttribute("aria-label", `${ui("drop-dish")}: ${dish.name}`);
      chip.append(drop);
    }
    return chip;
  }

  drawOrderForm(orders) {
    this.orderForm.hidden = !orders;
    if (!orders) return;
    this.orderForm.querySelector("[name=apiVersion]").value = `${orders.group}/${orders.version}`;
    this.orderForm.querySelector("[name=plural]").value = orders.plural;
    const menu = this.orderForm.querySelector("[name=menu]");
    const choices = (orders.choices && orders.choices.menu) || [];
    if (choices.join(",") !== [...menu.options].map((o) => o.value).join(",")) {
      menu.replaceChildren(...choices.map((value) => h("option", "", value)));
    }
  }
}

// The page's DOM builders (static/dashboard/dom.js) on a fake document (fakedom.mjs), run with
// `node --test` (tests/dashboard/test_narration_js.py runs every file here in the pytest suite).
import assert from "node:assert/strict";
import { test } from "node:test";
import { installDocument } from "./fakedom.mjs";
import { pageModule } from "./page.mjs";

installDocument();
const { button, forgetRows, h, keyedRows, nsTag } = await pageModule("dom.js");

const texts = (list) => list.children.map((child) => child.textContent);
const rowsOf = (vms, made) => vms.map((vm) => ({ key: vm.key, sig: vm, make: () => { made.push(vm.key); return h("li", "", vm.text); } }));

test("h makes an element with its class and text; button carries its action and data", () => {
  const node = h("span", "kind", "Pod");
  assert.equal(node.tagName, "SPAN");
  assert.equal(node.className, "kind");
  assert.equal(node.textContent, "Pod");
  const act = button("delete", "Delete", { name: "web-1" }, "danger");
  assert.equal(act.className, "act danger");
  assert.deepEqual(act.dataset, { action: "delete", name: "web-1" });
  assert.equal(nsTag("default"), null);
  assert.equal(nsTag("team-a").textContent, "team-a");
});

test("a row whose signature is the same keeps its element; a changed one is made again", () => {
  const list = h("ul");
  const a = { key: "a", text: "A" };
  const b = { key: "b", text: "B" };
  const made = [];
  assert.equal(keyedRows(list, rowsOf([a, b], made)), 2);
  const [first, second] = list.children;
  const b2 = { key: "b", text: "B2" }; // a new view model: b changed
  assert.equal(keyedRows(list, rowsOf([a, b2], made)), 1);
  assert.equal(list.children[0], first);
  assert.notEqual(list.children[1], second);
  assert.deepEqual(texts(list), ["A", "B2"]);
  assert.deepEqual(made, ["a", "b", "b"]);
});

test("rows follow the new order, gone keys and other children are removed", () => {
  const list = h("ul");
  list.append(h("li", "none", "nothing yet"));
  const vms = ["a", "b", "c"].map((key) => ({ key, text: key.toUpperCase() }));
  keyedRows(list, rowsOf(vms, []));
  assert.deepEqual(texts(list), ["A", "B", "C"]);
  const [rowA, , rowC] = list.children;
  assert.equal(keyedRows(list, rowsOf([vms[2], vms[0]], [])), 0);
  assert.deepEqual(texts(list), ["C", "A"]);
  assert.equal(list.children[0], rowC);
  assert.equal(list.children[1], rowA);
});

test("array signatures compare element by element; a repeated key is drawn once", () => {
  const list = h("ul");
  const vm = { key: "x" };
  let made = 0;
  const draw = (users) => keyedRows(list, [{ key: "x", sig: [vm, users], make: () => { made += 1; return h("li"); } },
    { key: "x", sig: [vm, users], make: () => { made += 1; return h("li"); } }]);
  draw("p1");
  draw("p1");
  assert.equal(made, 1);
  assert.equal(list.children.length, 1);
  draw("p1,p2");
  assert.equal(made, 2);
});

test("forgetRows makes every row again at the next draw", () => {
  const list = h("ul");
  const vms = [{ key: "a", text: "A" }];
  const made = [];
  keyedRows(list, rowsOf(vms, made));
  forgetRows(list);
  keyedRows(list, rowsOf(vms, made));
  assert.deepEqual(made, ["a", "a"]);
  assert.equal(list.children.length, 1);
});

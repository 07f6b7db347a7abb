// Where a spoke's label goes (static/dashboard/labels.js), run with `node --test`
// (tests/dashboard/test_narration_js.py runs every *.test.mjs here in the pytest suite).
import assert from "node:assert/strict";
import { test } from "node:test";

const { box, labelSpot, overlaps, shorterNames, HALF_WIDTH } = await import(
  new URL("../../../static/dashboard/labels.js", import.meta.url));

const right = { x: 300, y: 0, radius: 46, cos: 1, sin: 0 }; // a spoke at three o'clock

test("a label with room keeps the size asked for, clear of what is taken", () => {
  const taken = [box(420, 0, 60, 60)]; // something right beside the circle
  const { spot, scale, free } = labelSpot(right, { width: 120, height: 60 }, 1, taken, 0.5);
  assert.equal(free, true);
  assert.equal(scale, 1);
  assert.ok(!taken.some((other) => overlaps(spot, other)));
  assert.ok(spot.r <= HALF_WIDTH);
});

test("never smaller than the floor: too wide for the edge at that size, it says it is not free", () => {
  const own = { width: 600, height: 60 }; // would need shrinking to 0.4 to fit beside the spoke
  const shrunk = labelSpot(right, own, 1, [], 0.1);
  assert.ok(shrunk.scale < 0.6 && shrunk.free, "with a low floor it shrinks to fit");
  const floored = labelSpot(right, own, 1, [], 0.9);
  assert.ok(floored.scale >= 0.9, `scale ${floored.scale}`);
  assert.equal(floored.free, false, "no place at a legible size: the caller shortens it");
});

test("a floor above the size asked for raises the label to the floor", () => {
  const { scale } = labelSpot(right, { width: 100, height: 40 }, 0.7, [], 1.05);
  assert.ok(scale >= 1.05, `scale ${scale}`);
});

test("shorter forms of a name, longest first, each shorter than the one before", () => {
  assert.deepEqual(shorterNames("dashboard/kubernetes-admin"), ["kubernetes-admin", "kubernetes…", "kuberne…"]);
  assert.deepEqual(shorterNames("garnish-cook (controller)"), ["garnish-cook", "garnish-co…", "garnish…"]);
  assert.deepEqual(shorterNames("dashboard: wire"), ["wire"]);
  assert.deepEqual(shorterNames("node-10"), []);
  assert.deepEqual(shorterNames("요리사: 개수를 맞춤"), ["개수를 맞춤"]);
});
